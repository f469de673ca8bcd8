#include "envs/rollout.h"

#include <chrono>
#include <cmath>

#include "core/inertia.h"

namespace bigstep {

Rollout simulate(const Scene& sc, const std::function<void(int, int)>& progress) {
  const Model& m = sc.model;
  const double dt = sc.settings.dt;
  const std::unique_ptr<Integrator> integ = make_integrator(sc);
  Kinematics kin(m);
  Rollout r;
  const int total = sc.steps();
  r.theta.reserve(total + 1);
  r.stats.reserve(total);
  r.step_wall_s.reserve(total);
  // theta_0 = theta(0), theta_{-1} = theta(0) - dt theta_dot(0)   (pbfd.md §5.3)
  VecX th_n = sc.theta0, th_nm1 = sc.theta0 - dt * sc.theta_dot0, th_next(m.n_q);
  r.theta.push_back(th_n);
  auto link_x = [&](const VecX& th) {
    forward_kinematics(m, th, kin);
    return kin.t[sc.metric_link].x();
  };
  const int rest_steps = int(std::ceil(sc.rest_time / dt - 1e-9));
  int rest_count = 0;
  double x_prev = link_x(th_n);
  const auto t_start = std::chrono::steady_clock::now();
  for (int n = 0; n < total; ++n) {
    const auto t0 = std::chrono::steady_clock::now();
    const StepStats st = integ->step(th_n, th_nm1, sc.tau, th_next);
    r.step_wall_s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    r.stats.push_back(st);
    th_nm1 = th_n;
    th_n = th_next;
    r.theta.push_back(th_n);
    r.steps_run = n + 1;
    if (progress) progress(n + 1, total);
    if (st.status & (STATUS_NONFINITE | STATUS_GIMBAL_LOCK | STATUS_FACTOR_FAILED)) {
      r.aborted = true;
      break;
    }
    if (sc.stop_at_rest) {
      const double x = link_x(th_n);
      rest_count = std::abs((x - x_prev) / dt) < sc.rest_speed ? rest_count + 1 : 0;
      x_prev = x;
      if (rest_count >= rest_steps) {
        r.stopped_at_rest = true;
        break;
      }
    }
  }
  r.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  return r;
}

Metrics compute_metrics(const Scene& sc, const Rollout& r) {
  const Model& m = sc.model;
  Kinematics k0(m), k(m);
  forward_kinematics(m, r.theta.front(), k0);
  Metrics out;
  out.com_initial = centre_of_mass(m, k0);
  const Mat3 R0 = k0.R[sc.metric_link];
  for (const VecX& th : r.theta) {
    forward_kinematics(m, th, k);
    const Eigen::AngleAxisd aa(R0.transpose() * k.R[sc.metric_link]);
    out.max_tilt_rad = std::max(out.max_tilt_rad, std::abs(aa.angle()));
  }
  // k holds the last configuration
  out.com_final = centre_of_mass(m, k);
  out.sliding_distance_m = k.t[sc.metric_link].x() - k0.t[sc.metric_link].x();
  out.tipped = out.max_tilt_rad > M_PI / 6;
  return out;
}

double mechanical_energy(const Model& m, const VecX& theta_a, const VecX& theta_b, double dt) {
  Kinematics k(m);
  forward_kinematics(m, theta_b, k);
  link_derivatives(m, k);
  MatX H;
  mass_matrix(m, k, H);
  const VecX v = (theta_b - theta_a) / dt;
  return 0.5 * v.dot(H * v) + gravity_value(m, k);
}

}  // namespace bigstep
