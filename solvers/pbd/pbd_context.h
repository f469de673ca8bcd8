// What one PBD/PBFD timestep holds constant (theta_n, theta_{n-1}, tau, dt) and the
// per-rollout scratch the objectives reuse (docs/methods/pbfd.md §3, §4). Contacts come from the
// collision stage through the contact set (core/contact_set.h), run once per iterate with margin
// 0: every geom pair (contact points on planes, spheres, capsules, boxes, between two moving links
// or against the world) enters the terms through its sphere-swept cores, the joint limits as
// joint-space contacts (solvers/terms/joint_terms.h). On a radius-0 point against a plane the cores are
// the point and the plane, and the terms reduce to the point x plane formulas of docs/methods/pbfd.md §4.
#pragma once
#include <limits>
#include <vector>

#include "core/composite_moments.h"
#include "core/contact_set.h"
#include "core/data.h"
#include "core/inertia.h"
#include "numerics/lm.h"
#include "solvers/terms/contact_terms.h"
#include "solvers/terms/stable_pd.h"

namespace bigstep {

/// Constants of one step. Built by make_step_input() from theta_n, theta_{n-1} (and theta_{n-2} at
/// second order). The time discretisation enters only through the anchors and steps below
/// (docs/methods/pbfd.md §3.1): the inertia term pulls T(theta) towards `anchor` with step dt_a, and
/// every velocity-dependent term (damping, the servo's K_d) reads theta_dot = (theta - theta_v)/dt_v.
///   order 1 (the papers' Eq. 6 / 13): anchor 2 T_n - T_{n-1}, dt_a = dt; theta_v = theta_n, dt_v = dt
///   order 2 (four-point backward difference, velocity by BDF2):
///           anchor (5 T_n - 4 T_{n-1} + T_{n-2})/2, dt_a = dt/sqrt(2); theta_v = (4 theta_n - theta_{n-1})/3,
///           dt_v = 2 dt/3
///   order 2 without theta_{n-2} (a fresh start, (theta_n - theta_{n-1})/dt the velocity at t_n):
///           anchor 2 T_n - T_{n-1}, dt_a = dt/sqrt(2); theta_v = (3 theta_n - theta_{n-1})/2, dt_v = dt/2
struct PbdStepInput {
  double dt = 0.01;               ///< the step [s]
  double dt_a = 0.01;             ///< the inertia (and armature) term's step [s]
  double dt_v = 0.01;             ///< the velocity terms' step [s]
  VecX tau;                       ///< (n_q) joint torques, constant over the step
  ContactParams cp;
  const double* mass_scale = nullptr;  ///< (n_link) the rollout's link mass scales (core/inertia.h), null = 1
  InertiaAnchor anchor;           ///< per link: 2 T(theta_n) - T(theta_{n-1}) at first order (above)
  /// (n_point) the Model's point cores (point_*) at theta_n. The reference reads slip from the
  /// contact set (kin_n); this is the team form's step constant (PbfdStepConst, pbd_residual_team.h).
  std::vector<Vec3> centre_n;
  VecX theta_pred;                ///< (n_q) theta~, the anchor in joint space (armature term; 2 theta_n - theta_{n-1} at order 1)
  VecX theta_v;                   ///< (n_q) the velocity reference (theta_n at order 1)
  // implicit stable PD (docs/methods/newton_euler.md §4, docs/methods/pbfd.md §4.1): tau_pd(theta) = -K_p (theta - theta_bar)
  // - K_d ((theta - theta_v)/dt_v - theta_dot_bar), targets at t_{n+1}; pd = false: no servo
  VecX kp, kd;                    ///< (n_q) gains
  VecX theta_bar, theta_dot_bar;  ///< (n_q) targets at the end of the step
  VecX theta_n;                   ///< (n_q) configuration at the start of the step (always set)
  bool pd = false;                ///< the servo is active this step (set_step_pd)
  bool has_pd() const { return pd; }
};

/// Per-rollout scratch sized from the Model (lives in the rollout's Data): nothing in a step
/// allocates once it exists.
struct PbdWorkspace : Workspace {
  explicit PbdWorkspace(const Model& m)
      : kin(m), kin_a(m), kin_n(m), cs(m),
        theta_cs(VecX::Constant(m.n_q, std::numeric_limits<double>::quiet_NaN())), Ja(3, m.n_q), Jb(3, m.n_q), J(3, m.n_q), Jt_n(m.n_q),
        JtH(m.n_q, 3), JtP(m.n_q, 3), cm(m), r(m.n_q), Jr(m.n_q, m.n_q), lm(m.n_q) {
    in.anchor.R.resize(m.n_link);
    in.anchor.t.resize(m.n_link);
    in.centre_n.resize(m.n_point);
    in.tau.resize(m.n_q);
    in.theta_n.resize(m.n_q);
    in.theta_pred.resize(m.n_q);
    in.theta_v.resize(m.n_q);
  }
  Kinematics kin;    ///< at the current iterate
  Kinematics kin_a;  ///< scratch for theta_{n-1}
  Kinematics kin_n;  ///< at theta_n (make_step_input): the slip's reference placement
  ContactSet cs;     ///< contacts and joint limits at the current iterate (update_contacts)
  VecX theta_cs;     ///< (n_q) the iterate cs was found at (NaN before the first update)
  MatX Ja, Jb;       ///< (3 x n_q) core Jacobians of a contact's two links
  MatX J;            ///< (3 x n_q) J = Ja - Jb
  VecX Jt_n;         ///< (n_q) J^T n of a contact
  MatX JtH;          ///< (n_q x 3) J^T times a 3 x 3 contact matrix
  MatX JtP;          ///< (n_q x 3) scratch of add_contact_curvature
  CompositeMoments cm;  ///< subtree moments of pbfd_residual (core/composite_moments.h)
  VecX r;            ///< (n_q) PBFD residual (Eq. 13)
  MatX Jr;           ///< (n_q x n_q) its Jacobian
  LmWorkspace lm;    ///< LM's iterates and matrices
  double lambda_last = 0;  ///< LM's final lambda of the last converged step (0: none; a warm start)
  void reset_carry() override { lambda_last = 0; }
  void bind_chart(const Mat3* chart) override { kin.chart = kin_a.chart = kin_n.chart = chart; }
  void charts_moved() override { theta_cs.setConstant(std::numeric_limits<double>::quiet_NaN()); }
  PbdStepInput in;   ///< the current step's constants
};

PbdStepInput make_step_input(const Model& m, const VecX& theta_n, const VecX& theta_nm1,
                             double dt, const VecX& tau, const ContactParams& cp, PbdWorkspace& ws);
/// Same into in (ws.in in a step: no allocation once sized); tau may be empty (= 0). order 2: the
/// second-order step from theta_{n-2} (ws.kin is used as scratch then, and ws.theta_cs forgotten),
/// or, theta_nm2 = nullptr, its fresh start (docs/methods/pbfd.md §3.1).
void make_step_input(const Model& m, const VecX& theta_n, const VecX& theta_nm1, double dt, const VecX& tau,
                     const ContactParams& cp, PbdWorkspace& ws, PbdStepInput& in, int order = 1,
                     const VecX* theta_nm2 = nullptr);

/// Adds the stable-PD servo `pd` (validated against n_q, throws InvalidArgument) to a step input:
/// gains, theta_n and the targets at t_end (the step's end time); an inactive servo clears it.
void set_step_pd(const Model& m, const PdServo& pd, const VecX& theta_n, double t_end, PbdStepInput& in);

/// The contact set at the iterate theta (forward_kinematics in ws.kin done): collide() and the
/// joint limits with margin 0, once per iterate; only depth > 0 contributes to a term.
inline void update_contacts(const Model& m, const VecX& theta, PbdWorkspace& ws) {
  ws.cs.update(m, ws.kin, theta, 0.0);
  ws.theta_cs = theta;
}

/// The penalty's summed normal force sum_p C_perp d_p^alpha over the geom contacts at theta
/// (docs/methods/pbfd.md §4.2; joint-limit stops excluded) [N]: StepStats::normal_force of PBD / PBFD. Reuses
/// ws.cs when the optimizer's last evaluation was at theta (the usual case after convergence),
/// otherwise runs the kinematics and the contact set at theta once.
double pbd_normal_force(const Model& m, const VecX& theta, const ContactParams& cp, PbdWorkspace& ws);

/// Active contacts (geom contacts and joint-limit stops with depth > 0) at theta, reusing ws.cs
/// when the last evaluation was there (as pbd_normal_force): the second-order step's event test.
int pbd_active_contacts(const Model& m, const VecX& theta, PbdWorkspace& ws);

/// Calls f(c, u) for every geom contact of ws.cs in penetration (c.depth > 0), with ws.Ja, ws.Jb
/// and ws.J = Ja - Jb the core Jacobians (contact_set.h) and u the slip since theta_n
/// (contact_slip(kin, kin_n, c), docs/methods/pbfd.md §4.3). Needs update_contacts at the iterate in ws.kin.
template <class F>
void for_each_active_contact(const Model& m, PbdWorkspace& ws, F&& f) {
  for (int i = 0; i < ws.cs.n_con; ++i) {
    const Contact& c = ws.cs.con[size_t(i)];
    if (!(c.depth > 0)) continue;
    contact_core_jacobians(m, ws.kin, c, ws.Ja, ws.Jb, ws.J);
    f(c, contact_slip(ws.kin, ws.kin_n, c));
  }
}

/// y = (c_a - c_a(theta_n)) - (c_b - c_b(theta_n)) of contact c from its cores xa, xb at the iterate
/// (the slip is u = P_t y, docs/methods/pbfd.md §4.3; n . y feeds a turning normal, contact_terms.h).
inline Vec3 contact_core_displacement(const Kinematics& kin_n, const Contact& c, const Vec3& xa, const Vec3& xb) {
  // a world core does not move: its term xb - xb is exactly 0, and y - 0 = y (same bits, no FK point)
  if (c.link_b < 0) return xa - contact_core_a(kin_n, c);
  return (xa - contact_core_a(kin_n, c)) - (xb - contact_core_b(kin_n, c));
}

/// A contact's force F at core a and -F at core b (x = c_a - c_b) with its stiffness K = dF/dx, as the
/// subtree moments take them (core/composite_moments.h): G += the two point forces (r or grad += J^T F,
/// J = J_a - J_b); with Jr, J^T K J goes into the stiffness moment of the one moving link, or dense
/// into Jr when both links move (their paths couple). Shared by Eq. 6 and Eq. 13.
inline void add_contact_force(const Contact& c, const Vec3& xa, const Vec3& xb, const Vec3& F, CompositeMoments& cm) {
  add_point_force(cm, c.link_a, xa, F);
  add_point_force(cm, c.link_b, xb, -F);
}
/// The dense branch of add_contact_stiffness (both links move): Jr += J^T K J.
void add_contact_stiffness_dense(const Model& m, const Contact& c, const Mat3& K, PbdWorkspace& ws, MatX& Jr);
// inline: once per contact per iterate, nearly always against the world
inline void add_contact_stiffness(const Model& m, const Contact& c, const Vec3& xa, const Vec3& xb, const Mat3& K,
                                  PbdWorkspace& ws, MatX& Jr) {
  if (c.link_b < 0) add_point_stiffness(ws.cm, c.link_a, xa, K);       // J = Ja
  else if (c.link_a < 0) add_point_stiffness(ws.cm, c.link_b, xb, K);  // J = -Jb
  else add_contact_stiffness_dense(m, c, K, ws, Jr);
}

/// n . y for contact c, y = (c_a - c_a(theta_n)) - (c_b - c_b(theta_n)) (the slip's u = P_t y):
/// what a turning normal (kappa != 0) adds to the tangential terms (contact_terms.h).
inline double contact_normal_slip(const Kinematics& kin, const Kinematics& kin_n, const Contact& c) {
  const Vec3 y = (contact_core_a(kin, c) - contact_core_a(kin_n, c)) - (contact_core_b(kin, c) - contact_core_b(kin_n, c));
  return c.n.dot(y);
}

}  // namespace bigstep
