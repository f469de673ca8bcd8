// PBFD residual, Eq. 13 (docs/methods/pbfd.md §4.6; friction force §4.4 with the A1 exponent, or the
// regularised Coulomb law of §4.9).
//
// Evaluated at the cost of its maths: every per-link term (inertia §3, gravity, the
// contact forces at their cores and their second kinematic derivatives) goes into one subtree
// moment per link and is read out per DOF (core/composite_moments.h: O(L + D^2) instead of
// per link and DOF pair); a contact against the world adds its 3 x 3 stiffness there too, so no
// 3 x n_q Jacobian is formed for it. Kinematics and the contact set are found once per iterate:
// LM evaluates r at a trial point and then r, J_r at the same point once accepted.
#include "solvers/pbd/pbd_residual.h"

#include "solvers/terms/joint_terms.h"
#include "solvers/pbd/pbd_objective.h"

namespace bigstep {

void pbfd_residual(const Model& m, const PbdStepInput& in, const VecX& theta, PbdWorkspace& ws,
                   VecX& r, MatX* Jr) {
  // ws.kin and ws.cs are at ws.theta_cs (pbd_context.h): reuse them at the same iterate
  if (!(ws.theta_cs == theta)) {
    forward_kinematics(m, theta, ws.kin);
    update_contacts(m, theta, ws);
  }
  CompositeMoments& cm = ws.cm;
  begin_moments(m, ws.kin, in.anchor, in.dt_a, in.mass_scale, Jr != nullptr, cm);  // inertia, gravity
  r.setZero(m.n_q);
  r -= in.tau;
  if (Jr) Jr->setZero(m.n_q, m.n_q);
  add_pd_terms(in, theta, r, Jr);  // r -= tau_pd(theta), J_r += diag(K_p + K_d/dt) (docs/methods/pbfd.md §4.6)
  // armature, damping, limits: the gradients of their Eq. 6 energies (conservative / implicit)
  add_joint_passive_terms(m, theta, in.theta_v, in.dt_v, in.theta_pred, in.dt_a, r, Jr);
  add_joint_limit_terms(m, ws.cs.lim.data(), ws.cs.n_lim, in.cp, r, Jr);
  const ContactParams& cp = in.cp;
  // friction law (contact.friction): the paper's C_par f_par, or Coulomb mu f_n with delta = v_s dt
  const bool coulomb = cp.friction == FrictionLaw::Coulomb, friction = friction_active(cp);
  const double delta = cp.stiction_velocity * in.dt;
  for (int i = 0; i < ws.cs.n_con; ++i) {
    const Contact& c = ws.cs.con[size_t(i)];
    const double d = c.depth;
    if (!(d > 0)) continue;
    // F on core a, -F on core b: the normal force C_perp d^alpha n (§4.2) and C_par f_par (§4.4,
    // turning normal: contact_terms.h); r -= J^T (C_perp d^alpha n + C_par f_par)
    const Vec3 xa = contact_core_a(ws.kin, c), xb = contact_core_b(ws.kin, c);
    // slip u = P_t y, y = (c_a - c_a(theta_n)) - (c_b - c_b(theta_n)) (contact_slip, from the cores above)
    const bool need_y = friction || cp.damping != 0;
    const Vec3 y = need_y ? contact_core_displacement(ws.kin_n, c, xa, xb) : Vec3::Zero();
    const double eta = c.n.dot(y);
    const Vec3 u = y - c.n * eta;
    // normal force C_perp d^alpha, times the Hunt-Crossley factor sd when damped (§4.2)
    const double fs = cp.c_perp * powr(d, cp.alpha);
    const double sd = cp.damping != 0 ? contact_damping_factor(cp.damping, eta, in.dt) : 1.0;
    const double fn = cp.damping != 0 ? fs * sd : fs;
    Vec3 F = -fn * c.n;
    FrictionForce ff;
    // the friction law's coefficient on ff: C_par (power law, §4.4) or 1 (Coulomb, §4.9: mu f_n inside)
    const double cf = coulomb ? 1.0 : cp.c_par;
    if (friction) {
      if (coulomb) {
        ff = coulomb_friction(u, d, c.n, cp, delta, c.kappa, eta);
      } else {
        ff = pbfd_friction(u, d, c.n, cp);
        if (c.kappa != 0) add_normal_turning(ff, u, d, c.n, c.kappa, eta, cp);
      }
      F -= cf * ff.f;
    }
    add_contact_force(c, xa, xb, F, cm);
    if (!Jr) continue;
    // J^T K J with K = sd C_perp alpha d^(alpha-1) n n^T - f_n kappa P_t - cf df/dx, and with
    // damping (sd > 0) + C_perp d^alpha zeta/dt n (n + kappa u)^T (d eta/dx = n^T + kappa u^T)
    Mat3 K = sd * cp.c_perp * cp.alpha * powr(d, cp.alpha - 1) * c.n * c.n.transpose();
    if (cp.damping != 0 && sd > 0) K += fs * cp.damping / in.dt * c.n * (c.n + c.kappa * u).transpose();
    if (c.kappa != 0) K -= fn * c.kappa * (Mat3::Identity() - c.n * c.n.transpose());
    if (friction) K -= cf * ff.df_dp;
    add_contact_stiffness(m, c, xa, xb, K, ws, *Jr);
  }
  finish_moments(m, ws.kin, cm, r, Jr);
}

}  // namespace bigstep
