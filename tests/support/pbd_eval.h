// grad E (Eq. 6) and r (Eq. 13) as plain functions of theta, for the central-difference tests.
#pragma once
#include <cmath>

#include "solvers/terms/joint_terms.h"
#include "solvers/pbd/pbd_objective.h"
#include "solvers/pbd/pbd_residual.h"

namespace bigstep::test {

inline VecX energy_grad(const Model& m, const PbdStepInput& in, const VecX& th, PbdWorkspace& ws) {
  double E;
  VecX g;
  pbd_energy_derivatives(m, in, th, ws, E, g, nullptr, HessianKind::None);
  return g;
}

inline VecX residual(const Model& m, const PbdStepInput& in, const VecX& th, PbdWorkspace& ws) {
  VecX r;
  pbfd_residual(m, in, th, ws, r, nullptr);
  return r;
}

/// Oracle for pbd_energy_derivatives on the subtree moments: grad E and the model matrix by the
/// per-link sums they replace (the implementation before the subtree moments: link derivatives,
/// add_inertia_*, add_gravity_derivatives, dense contact Jacobians J = Ja - Jb and their point
/// Hessians, docs/methods/pbfd.md §3, §4.2-§4.3, §5 / A4). kind Exact or GaussNewton.
inline void pbd_derivatives_per_link(const Model& m, const PbdStepInput& in, const VecX& theta, PbdWorkspace& ws,
                                     VecX& grad, MatX& B, HessianKind kind) {
  forward_kinematics(m, theta, ws.kin);
  update_contacts(m, theta, ws);
  link_derivatives(m, ws.kin);
  const bool exact = kind == HessianKind::Exact;
  grad.setZero(m.n_q);
  grad -= in.tau;
  add_inertia_gradient(m, ws.kin, in.anchor, in.dt_a, grad, in.mass_scale);
  if (exact) {
    B.setZero(m.n_q, m.n_q);
    add_inertia_hessian(m, ws.kin, in.anchor, in.dt_a, B, in.mass_scale);
  } else {
    mass_matrix(m, ws.kin, B, in.mass_scale);
    B /= in.dt_a * in.dt_a;
  }
  add_gravity_derivatives(m, ws.kin, grad, exact ? &B : nullptr, in.mass_scale);
  add_pd_terms(in, theta, grad, &B);
  add_joint_passive_terms(m, theta, in.theta_v, in.dt_v, in.theta_pred, in.dt_a, grad, &B);
  add_joint_limit_terms(m, ws.cs.lim.data(), ws.cs.n_lim, in.cp, grad, &B);
  const ContactParams& cp = in.cp;
  for_each_active_contact(m, ws, [&](const Contact& c, const Vec3& u) {
    // normal: -C_perp d^alpha J^T n; C_perp alpha d^(alpha-1) J^T n n^T J (+ C_perp d^alpha hess depth)
    const double d = c.depth, da = std::pow(d, cp.alpha);
    const VecX Jt_n = ws.J.transpose() * c.n;
    grad -= cp.c_perp * da * Jt_n;
    B += cp.c_perp * cp.alpha * std::pow(d, cp.alpha - 1) * Jt_n * Jt_n.transpose();
    if (exact) {
      add_contact_point_hessian(m, ws.kin, c, ws.Ja, ws.Jb, c.n, -cp.c_perp * da, B);
      add_contact_curvature(c, ws.J, cp.c_perp * da, B, ws.JtP);
    }
    if (cp.c_par == 0) return;
    TangentialEnergy te = tangential_energy(u, d, c.n, cp);
    if (c.kappa != 0) add_normal_turning(te, u, d, c.n, c.kappa, contact_normal_slip(ws.kin, ws.kin_n, c), cp);
    grad += cp.c_par * ws.J.transpose() * te.grad;
    if (exact) {
      B += cp.c_par * ws.J.transpose() * te.hess * ws.J;
      add_contact_point_hessian(m, ws.kin, c, ws.Ja, ws.Jb, te.grad, cp.c_par, B);
    } else {
      Eigen::SelfAdjointEigenSolver<Mat3> es(te.hess);
      const Mat3 Hp = es.eigenvectors() * es.eigenvalues().cwiseMax(0).asDiagonal() * es.eigenvectors().transpose();
      B += cp.c_par * ws.J.transpose() * Hp * ws.J;
    }
  });
}

}  // namespace bigstep::test
