#include "batch/rollout.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/inertia.h"
#include "batch/batch.h"
#include "batch/step_stages.h"

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
  // theta_0 = theta(0), theta_{-1} = theta(0) - dt theta_dot(0)   (docs/methods/pbfd.md §5.3)
  VecX th_n = sc.theta0, th_nm1 = sc.theta0 - dt * sc.theta_dot0, th_next(m.n_q);
  r.theta.push_back(th_n);
  // the rotation charts of the state (core/chart.h): identity at the start, re-anchored by the steps
  Data data = integ->make_data();
  std::vector<Mat3> chart_n = sc.chart0.empty() ? data.chart : sc.chart0;
  if (m.n_chart > 0) r.chart.push_back(chart_n);
  kin.chart = chart_n.data();
  auto link_x = [&](const VecX& th) {
    forward_kinematics(m, th, kin);
    return kin.t[sc.metric_link].x();
  };
  const int rest_steps = int(std::ceil(sc.rest_time / dt - 1e-9));
  int rest_count = 0;
  double x_prev = link_x(th_n);
  // batch.contact_mu_*: per-contact friction drawn once for this lone rollout
  const std::vector<double> geom_mu = scene_geom_mu(sc);
  RolloutParams rp = integ->default_params();
  rp.geom_mu = geom_mu.empty() ? nullptr : geom_mu.data();
  std::unique_ptr<IdControllerState> id;
  if (sc.controller.inverse_dynamics()) id = std::make_unique<IdControllerState>(m, sc.controller);
  // the step's stages (batch/step_stages.h), one lane; this run flags penetration
  StepStages stages(sc, 1);
  stages.check_penetration(true);
  const auto t_start = std::chrono::steady_clock::now();
  for (int n = 0; n < total; ++n) {
    const auto t0 = std::chrono::steady_clock::now();
    // 1. controls at (t_n, theta_n); the stable-PD servo (when configured) reads its targets at the end of the step
    const StepControl& u =
        stages.controls(0, n * dt, th_n, th_nm1, nullptr, nullptr, nullptr, id.get(), sc.controller.mu, rp.geom_mu,
                        chart_n.data());
    if (id) {
      r.tau.push_back(id->tau_full);
      r.force_pred.push_back(id->force_pred);
      r.id_status.push_back(id->status);
      if (id->status & ID_DIVERGED) {  // the run stops here, the step held (theta_{n+1} = theta_n)
        StepStats held;
        held.status = STATUS_CONTROL_DIVERGED;
        r.step_wall_s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        r.stats.push_back(held);
        r.theta.push_back(th_n);
        if (m.n_chart > 0) r.chart.push_back(chart_n);
        r.steps_run = n + 1;
        r.aborted = true;
        r.diverged_dof = id->diverged_dof;
        r.diverged_tau = id->diverged_tau;
        r.diverged_bound = id->tau_bound[id->diverged_dof];
        break;
      }
    }
    // each attempt (the PD limit re-steps) from the step's start state, charts included
    auto step = [&](const StepControl& uu) {
      data.theta = th_n;
      data.theta_prev = th_nm1;
      std::copy(chart_n.begin(), chart_n.end(), data.chart.begin());
      const StepStats s = integ->step(data, uu, rp);
      th_next = data.theta;
      return s;
    };
    // 2. advance and 3. the servo within its actuator limits (controller.type = pd, control/pd_limit.h)
    StepStats st = stages.advance_limited(0, u, th_n, th_next, step);
    if (const PdLimit* pl = stages.pd_limit(0); pl && !id) {
      r.tau.push_back(pl->tau());
      r.id_status.push_back(pl->clamped() ? ID_TORQUE_CLAMPED : 0u);
    }
    r.step_wall_s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    // 4. check outputs (not in the step's wall time: a check of the run, not of the method)
    st.status |= stages.check_outputs(0, th_next, data.chart.data());
    r.stats.push_back(st);
    th_nm1 = data.theta_prev;  // theta_n, in the charts of theta_{n+1} (a step may re-anchor them)
    th_n = th_next;
    std::copy(data.chart.begin(), data.chart.end(), chart_n.begin());
    r.theta.push_back(th_n);
    if (m.n_chart > 0) r.chart.push_back(chart_n);
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

namespace {

// tracking (control.reference) and ID controller metrics of Metrics
void id_metrics(const Scene& sc, const Rollout& r, Metrics& out) {
  if (!sc.pd.active() || r.theta.size() < 2) return;
  const Model& m = sc.model;
  const double dt = sc.settings.dt;
  const std::vector<int> act = id_actuated_dofs(m);
  VecX tb(m.n_q), tdb(m.n_q);
  double ep = 0, ev = 0;
  for (size_t n = 1; n < r.theta.size(); ++n) {
    sc.pd.reference(double(n) * dt, tb, tdb);
    for (int k : act) {
      ep += std::abs(r.theta[n][k] - tb[k]);
      ev += std::abs((r.theta[n][k] - r.theta[n - 1][k]) / dt - tdb[k]);
    }
  }
  const double cnt = double(r.theta.size() - 1) * double(act.size());
  out.track_pos_rad = ep / cnt;
  out.track_vel_rad_s = ev / cnt;
  out.track_state_pos_rad = out.track_pos_rad;
  if (sc.controller.inverse_dynamics() && sc.controller.reference_state) {
    // the targets id_control had at step n: reference_state(t_n, t_n, theta_n, v_n, memory), v_n =
    // (theta_n - theta_{n-1}) / dt, the memory updated along the run as there (no leg swings at n = 0)
    VecX mem = VecX::Zero(sc.controller.reference_memory), v(m.n_q);
    double es = 0;
    for (size_t n = 1; n < r.theta.size(); ++n) {
      v = (r.theta[n] - r.theta[n - 1]) / dt;
      sc.controller.reference_state(double(n) * dt, double(n) * dt, r.theta[n], v, mem.size() ? mem.data() : nullptr, tb,
                                    tdb);
      for (int k : act) es += std::abs(r.theta[n][k] - tb[k]);
    }
    out.track_state_pos_rad = es / cnt;
  }
  for (uint32_t s : r.id_status) {
    out.steps_clamped += (s & ID_TORQUE_CLAMPED) != 0;
    out.steps_impulse_bound += (s & ID_IMPULSE_BOUND) != 0;
  }
  if (r.tau.size() < 2) return;
  double dsum = 0, tsum = 0;
  for (size_t n = 0; n < r.tau.size(); ++n)
    for (int k : act) {
      tsum += std::abs(r.tau[n][k]);
      if (n > 0) dsum += std::abs(r.tau[n][k] - r.tau[n - 1][k]) / dt;
    }
  out.tau_mean = tsum / (double(r.tau.size()) * double(act.size()));
  out.dtau_mean = dsum / (double(r.tau.size() - 1) * double(act.size()));
  const ControllerType t = sc.controller.type;
  if (t == ControllerType::IdPrev1 || t == ControllerType::IdPrev2) return;
  double err = 0, fsum = 0;
  const size_t ns = std::min(r.force_pred.size(), r.stats.size());
  size_t counted = 0;
  for (size_t n = 0; n < ns; ++n) {
    // a step whose torques were clamped (controller.tau_max) did not apply the ID's solution: its
    // predicted forces are not a prediction of that step
    if (n < r.id_status.size() && (r.id_status[n] & ID_TORQUE_CLAMPED)) continue;
    ++counted;
    err += std::abs(r.force_pred[n] - r.stats[n].normal_force);
    fsum += r.stats[n].normal_force;
  }
  out.force_err_n = counted > 0 ? err / double(counted) : 0;
  out.force_err_rel = fsum > 0 ? err / fsum : 0;
}

}  // namespace

Metrics compute_metrics(const Scene& sc, const Rollout& r) {
  const Model& m = sc.model;
  Kinematics k0(m), k(m);
  k0.chart = r.chart_of(0);
  forward_kinematics(m, r.theta.front(), k0);
  Metrics out;
  out.com_initial = centre_of_mass(m, k0);
  const Mat3 R0 = k0.R[sc.metric_link];
  for (size_t i = 0; i < r.theta.size(); ++i) {
    k.chart = r.chart_of(i);
    forward_kinematics(m, r.theta[i], k);
    const Eigen::AngleAxisd aa(R0.transpose() * k.R[sc.metric_link]);
    out.max_tilt_rad = std::max(out.max_tilt_rad, std::abs(aa.angle()));
  }
  // k holds the last configuration
  out.com_final = centre_of_mass(m, k);
  out.sliding_distance_m = k.t[sc.metric_link].x() - k0.t[sc.metric_link].x();
  out.tipped = out.max_tilt_rad > M_PI / 6;
  if (sc.metric == MetricKind::Quadruped) {
    const QuadrupedSeries q = quadruped_series(sc, r);
    out.tilt_final_rad = q.tilt_rad.back();
    out.tilt_max_rad = *std::max_element(q.tilt_rad.begin(), q.tilt_rad.end());
    out.distance_final_m = q.distance_m.back();
    double sum = 0;
    for (double h : q.height_m) sum += h;
    out.height_mean_m = sum / double(q.height_m.size());
    out.height_min_m = *std::min_element(q.height_m.begin(), q.height_m.end());
    out.height_max_m = *std::max_element(q.height_m.begin(), q.height_m.end());
  }
  id_metrics(sc, r, out);
  if (sc.hold_link >= 0) {
    const int h = sc.hold_link, o = sc.metric_link;
    Vec3 p0 = Vec3::Zero();
    for (size_t n = 0; n < r.theta.size(); ++n) {
      k.chart = r.chart_of(n);
      forward_kinematics(m, r.theta[n], k);
      const Vec3 p = k.R[h].transpose() * (k.t[o] - k.t[h]);  // object origin in the hand frame
      if (n == 0) p0 = p;
      out.hold_slip_final_m = (p - p0).norm();
      out.hold_slip_max_m = std::max(out.hold_slip_max_m, out.hold_slip_final_m);
    }
  }
  return out;
}

QuadrupedSeries quadruped_series(const Scene& sc, const Rollout& r) {
  const Model& m = sc.model;
  const int j = sc.metric_link;
  Kinematics k(m);
  QuadrupedSeries q;
  Vec3 c0 = Vec3::Zero();
  for (size_t i = 0; i < r.theta.size(); ++i) {
    k.chart = r.chart_of(i);
    forward_kinematics(m, r.theta[i], k);
    const Vec3 c = point_position(k, j, m.link_com[j]);  // torso COM
    if (i == 0) c0 = c;
    q.t.push_back(double(i) * sc.settings.dt);
    // tilt: angle between the torso up-axis R e_z and world z (acos of R_zz, via atan2 for accuracy)
    const Vec3 up = k.R[j].col(2);
    q.tilt_rad.push_back(std::atan2(Vec3(up.x(), up.y(), 0).norm(), up.z()));
    q.height_m.push_back(c.z());
    q.distance_m.push_back((c - c0).dot(sc.heading));
  }
  return q;
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
