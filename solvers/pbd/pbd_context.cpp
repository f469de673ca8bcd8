#include "solvers/pbd/pbd_context.h"

#include <cmath>
#include <limits>

#include "core/error.h"

namespace bigstep {

PbdStepInput make_step_input(const Model& m, const VecX& theta_n, const VecX& theta_nm1,
                             double dt, const VecX& tau, const ContactParams& cp, PbdWorkspace& ws) {
  PbdStepInput in;
  make_step_input(m, theta_n, theta_nm1, dt, tau, cp, ws, in);
  return in;
}

void make_step_input(const Model& m, const VecX& theta_n, const VecX& theta_nm1, double dt, const VecX& tau,
                     const ContactParams& cp, PbdWorkspace& ws, PbdStepInput& in, int order, const VecX* theta_nm2) {
  BIGSTEP_CHECK_ARG(tau.size() == 0 || tau.size() == m.n_q, "tau.size()", tau.size(),
                    detail::concat("expected n_q = ", m.n_q));
  in.dt = dt;
  in.dt_a = dt;
  in.dt_v = dt;
  if (tau.size() == 0) in.tau.setZero(m.n_q);
  else in.tau = tau;
  in.cp = cp;
  // anchor = 2 T(theta_n) - T(theta_{n-1}); ws.kin_n keeps theta_n for the slip (contact_slip)
  forward_kinematics(m, theta_nm1, ws.kin_a);
  forward_kinematics(m, theta_n, ws.kin_n);
  make_inertia_anchor(ws.kin_n, ws.kin_a, 1.0, in.anchor);
  in.centre_n.resize(m.n_point);
  for (int s = 0; s < m.n_point; ++s) in.centre_n[s] = point_position(ws.kin_n, m.point_link[s], m.point_pos[s]);
  in.theta_n = theta_n;
  in.theta_pred = 2 * theta_n - theta_nm1;
  in.theta_v = theta_n;
  if (order == 2 && theta_nm2) {
    // second order (docs/methods/pbfd.md §3.1): (2 T_{n+1} - 5 T_n + 4 T_{n-1} - T_{n-2}) / dt^2 is
    // T's second derivative at t_{n+1} to O(dt^2); written as the first-order inertia term it pulls
    // towards (5 T_n - 4 T_{n-1} + T_{n-2}) / 2 = (2 T_n - T_{n-1}) + (T_n - 2 T_{n-1} + T_{n-2}) / 2
    // with weight 2 / dt^2, i.e. dt_a = dt / sqrt(2). ws.kin holds T(theta_{n-2}) for the sum.
    forward_kinematics(m, *theta_nm2, ws.kin);
    ws.theta_cs.setConstant(std::numeric_limits<double>::quiet_NaN());
    add_inertia_anchor(ws.kin_n, 0.5, in.anchor);
    add_inertia_anchor(ws.kin_a, -1.0, in.anchor);
    add_inertia_anchor(ws.kin, 0.5, in.anchor);
    in.dt_a = dt / std::sqrt(2.0);
    in.theta_pred += 0.5 * (theta_n - 2 * theta_nm1 + *theta_nm2);
    // BDF2 velocity at t_{n+1}: (3 theta - 4 theta_n + theta_{n-1}) / (2 dt) = (theta - theta_v) / dt_v
    in.theta_v = (4 * theta_n - theta_nm1) / 3;
    in.dt_v = 2 * dt / 3;
  } else if (order == 2) {
    // fresh start: v_n = (theta_n - theta_{n-1}) / dt is the velocity AT t_n, and the quadratic
    // theta_n + v_n t + a t^2 / 2 through it gives 2 (theta - theta_n - dt v_n) / dt^2 = a (anchor
    // 2 T_n - T_{n-1}, weight 2 / dt^2) and theta_dot(t_{n+1}) = (2 theta - 3 theta_n + theta_{n-1}) / dt:
    // exact for constant acceleration, so no O(dt) start error
    in.dt_a = dt / std::sqrt(2.0);
    in.theta_v = (3 * theta_n - theta_nm1) / 2;
    in.dt_v = dt / 2;
  }
  in.pd = false;  // no servo unless set_step_pd adds one (gain buffers keep their size)
}

double pbd_normal_force(const Model& m, const VecX& theta, const ContactParams& cp, PbdWorkspace& ws) {
  if (!(ws.theta_cs == theta)) {  // a rejected trial point (or another start) was evaluated last
    forward_kinematics(m, theta, ws.kin);
    update_contacts(m, theta, ws);
  }
  double f = 0;
  for (int i = 0; i < ws.cs.n_con; ++i) {
    const double d = ws.cs.con[size_t(i)].depth;
    if (d > 0) f += cp.c_perp * std::pow(d, cp.alpha);
  }
  return f;
}

void add_contact_stiffness_dense(const Model& m, const Contact& c, const Mat3& K, PbdWorkspace& ws, MatX& Jr) {
  // two moving links: J = Ja - Jb couples both paths, dense
  contact_core_jacobians(m, ws.kin, c, ws.Ja, ws.Jb, ws.J);
  ws.JtH.noalias() = ws.J.transpose() * K;
  Jr.noalias() += ws.JtH * ws.J;
}

void set_step_pd(const Model& m, const PdServo& pd, const VecX& theta_n, double t_end, PbdStepInput& in) {
  in.pd = pd.active();
  if (!in.pd) return;
  validate_pd_servo(pd, m.n_q, "control.pd");
  in.kp = pd.kp;
  in.kd = pd.kd;
  in.theta_n = theta_n;
  in.theta_bar.resize(m.n_q);
  in.theta_dot_bar.resize(m.n_q);
  pd.reference(t_end, in.theta_bar, in.theta_dot_bar);
  BIGSTEP_CHECK_ARG(in.theta_bar.size() == m.n_q && in.theta_dot_bar.size() == m.n_q, "control.reference size",
                    detail::concat(in.theta_bar.size(), "/", in.theta_dot_bar.size()),
                    detail::concat("expected n_q = ", m.n_q));
}

}  // namespace bigstep
