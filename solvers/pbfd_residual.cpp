// PBFD residual, Eq. 13 (spec pbfd.md §4.6; friction force §4.4 with the A1 exponent).
#include "solvers/pbfd_residual.h"

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
  const ContactParams& cp = in.cp;
  for_each_active_contact(m, in, ws, [&](int link, const Vec3&, double d, const Vec3& n, const Vec3& u) {
    add_normal_contact(m, ws.kin, link, ws.J, d, n, cp, r, Jr, true, ws.Jt_n);
    if (cp.c_par == 0) return;
    const FrictionForce ff = pbfd_friction(u, d, n, cp);
    r.noalias() -= cp.c_par * ws.J.transpose() * ff.f;
    if (!Jr) return;
    ws.JtH.noalias() = ws.J.transpose() * ff.df_dp;
    Jr->noalias() -= cp.c_par * ws.JtH * ws.J;
    add_point_hessian(m, ws.kin, link, ws.J, ff.f, -cp.c_par, *Jr);
  });
}

}  // namespace bigstep
