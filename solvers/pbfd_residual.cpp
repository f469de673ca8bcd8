// PBFD residual, Eq. 13 (spec pbfd.md §4.6; friction force §4.4 with the A1 exponent).
#include "solvers/pbfd_residual.h"

#include "solvers/joint_terms.h"
#include "solvers/pbd_objective.h"

namespace bigstep {

void pbfd_residual(const Model& m, const PbdStepInput& in, const VecX& theta, PbdWorkspace& ws,
                   VecX& r, MatX* Jr) {
  forward_kinematics(m, theta, ws.kin);
  link_derivatives(m, ws.kin);
  r.setZero(m.n_q);
  r -= in.tau;
  add_inertia_gradient(m, ws.kin, in.anchor, in.dt, r, in.mass_scale);
  if (Jr) {
    Jr->setZero(m.n_q, m.n_q);
    add_inertia_hessian(m, ws.kin, in.anchor, in.dt, *Jr, in.mass_scale);
  }
  add_gravity_derivatives(m, ws.kin, r, Jr, in.mass_scale);
  add_pd_terms(in, theta, r, Jr);  // r -= tau_pd(theta), J_r += diag(K_p + K_d/dt) (pbfd.md §4.6)
  // armature, damping, limits: the gradients of their Eq. 6 energies (conservative / implicit)
  add_joint_passive_terms(m, theta, in.theta_n, in.theta_pred, in.dt, r, Jr);
  update_contacts(m, theta, ws);
  add_joint_limit_terms(m, ws.cs.lim.data(), ws.cs.n_lim, in.cp, r, Jr);
  const ContactParams& cp = in.cp;
  for_each_active_contact(m, ws, [&](const Contact& c, const Vec3& u) {
    add_normal_contact(m, c, cp, ws, r, Jr, true);
    if (cp.c_par == 0) return;
    // f_par at the cores, +f on a and -f on b through J = Ja - Jb (turning normal: contact_terms.h)
    FrictionForce ff = pbfd_friction(u, c.depth, c.n, cp);
    if (c.kappa != 0) add_normal_turning(ff, u, c.depth, c.n, c.kappa, contact_normal_slip(ws.kin, ws.kin_n, c), cp);
    r.noalias() -= cp.c_par * ws.J.transpose() * ff.f;
    if (!Jr) return;
    ws.JtH.noalias() = ws.J.transpose() * ff.df_dp;
    Jr->noalias() -= cp.c_par * ws.JtH * ws.J;
    add_contact_point_hessian(m, ws.kin, c, ws.Ja, ws.Jb, ff.f, -cp.c_par, *Jr);
  });
}

}  // namespace bigstep
