// PBD objective, Eq. 6 (spec pbfd.md §4.5; gradients §4.2-§4.3; JTJ matrix §5 / A4; implicit PD §4.1).
#include "solvers/pbd_objective.h"

#include <cmath>

#include "solvers/joint_terms.h"

namespace bigstep {

void add_normal_contact(const Model& m, const Contact& c, const ContactParams& cp, PbdWorkspace& ws, VecX& grad,
                        MatX* Hess, bool exact) {
  const double d = c.depth, da = std::pow(d, cp.alpha);
  ws.Jt_n.noalias() = ws.J.transpose() * c.n;
  grad.noalias() -= cp.c_perp * da * ws.Jt_n;
  if (!Hess) return;
  Hess->noalias() += cp.c_perp * cp.alpha * std::pow(d, cp.alpha - 1) * ws.Jt_n * ws.Jt_n.transpose();
  if (!exact) return;
  // C_perp d^alpha hess depth = -C_perp d^alpha n . d^2(c_a - c_b) - C_perp d^alpha kappa J^T P_t J
  add_contact_point_hessian(m, ws.kin, c, ws.Ja, ws.Jb, c.n, -cp.c_perp * da, *Hess);
  add_contact_curvature(c, ws.J, cp.c_perp * da, *Hess, ws.JtP);
}

double pd_potential(const PbdStepInput& in, const VecX& theta) {
  if (!in.has_pd()) return 0;
  // expressions only: no temporaries
  const auto e = (theta - in.theta_bar).array();
  const auto d = (theta - in.theta_n).array();
  return 0.5 * (e * in.kp.array() * e).sum() + 0.5 / in.dt * (d * in.kd.array() * d).sum() -
         (in.kd.array() * in.theta_dot_bar.array() * theta.array()).sum();
}

void add_pd_terms(const PbdStepInput& in, const VecX& theta, VecX& grad, MatX* Hess) {
  if (!in.has_pd()) return;
  // -tau_pd = K_p (theta - theta_bar) + K_d ((theta - theta_n)/dt - theta_dot_bar)
  grad.array() += in.kp.array() * (theta - in.theta_bar).array() +
                  in.kd.array() * ((theta - in.theta_n).array() / in.dt - in.theta_dot_bar.array());
  if (Hess) Hess->diagonal() += in.kp + in.kd / in.dt;
}

double pbd_energy(const Model& m, const PbdStepInput& in, const VecX& theta, PbdWorkspace& ws) {
  forward_kinematics(m, theta, ws.kin);
  update_contacts(m, theta, ws);
  double E = inertia_value(m, ws.kin, in.anchor, in.dt, in.mass_scale) + gravity_value(m, ws.kin, in.mass_scale) - theta.dot(in.tau) +
             pd_potential(in, theta);
  const ContactParams& cp = in.cp;
  for (int i = 0; i < ws.cs.n_con; ++i) {
    const Contact& c = ws.cs.con[size_t(i)];
    const double d = c.depth;
    if (!(d > 0)) continue;
    E += cp.c_perp / (cp.alpha + 1) * std::pow(d, cp.alpha + 1);
    if (cp.c_par != 0) {
      const Vec3 u = contact_slip(ws.kin, ws.kin_n, c);
      E += cp.c_par * std::pow(u.norm(), cp.beta + 1) * std::pow(d, cp.gamma + 1);
    }
  }
  E += joint_passive_value(m, theta, in.theta_n, in.theta_pred, in.dt);
  E += joint_limit_value(m, ws.cs.lim.data(), ws.cs.n_lim, cp);
  return E;
}

void pbd_energy_derivatives(const Model& m, const PbdStepInput& in, const VecX& theta,
                            PbdWorkspace& ws, double& E, VecX& grad, MatX* B, HessianKind kind) {
  E = pbd_energy(m, in, theta, ws);  // leaves ws.kin and ws.cs at theta
  link_derivatives(m, ws.kin);
  grad.setZero(m.n_q);
  grad -= in.tau;
  add_inertia_gradient(m, ws.kin, in.anchor, in.dt, grad, in.mass_scale);
  const bool exact = kind == HessianKind::Exact;
  MatX* Bp = kind == HessianKind::None ? nullptr : B;
  if (Bp) {
    if (exact) {
      B->setZero(m.n_q, m.n_q);
      add_inertia_hessian(m, ws.kin, in.anchor, in.dt, *B, in.mass_scale);
    } else {
      mass_matrix(m, ws.kin, *B, in.mass_scale);  // Gauss-Newton part of I: H / dt^2
      *B /= in.dt * in.dt;
    }
  }
  add_gravity_derivatives(m, ws.kin, grad, exact ? B : nullptr, in.mass_scale);  // grad^2 V needs d^2X: exact only
  add_pd_terms(in, theta, grad, Bp);  // exact and PSD: both model matrices take it
  // armature, damping, limits: diagonal PSD Hessians, both model matrices take them
  add_joint_passive_terms(m, theta, in.theta_n, in.theta_pred, in.dt, grad, Bp);
  add_joint_limit_terms(m, ws.cs.lim.data(), ws.cs.n_lim, in.cp, grad, Bp);
  const ContactParams& cp = in.cp;
  for_each_active_contact(m, ws, [&](const Contact& c, const Vec3& u) {
    add_normal_contact(m, c, cp, ws, grad, Bp, exact);
    if (cp.c_par == 0) return;
    // e(u, d) with u, d of the cores' relative position x = c_a - c_b (contact_terms.h); the
    // force acts on both links through J = Ja - Jb
    TangentialEnergy te = tangential_energy(u, c.depth, c.n, cp);
    if (c.kappa != 0) add_normal_turning(te, u, c.depth, c.n, c.kappa, contact_normal_slip(ws.kin, ws.kin_n, c), cp);
    grad.noalias() += cp.c_par * ws.J.transpose() * te.grad;
    if (!Bp) return;
    if (exact) {
      ws.JtH.noalias() = ws.J.transpose() * te.hess;
      B->noalias() += cp.c_par * ws.JtH * ws.J;
      add_contact_point_hessian(m, ws.kin, c, ws.Ja, ws.Jb, te.grad, cp.c_par, *B);
    } else {
      // [grad_x^2 e]_+ : clamp the 3x3 eigenvalues at zero so B stays PSD
      Eigen::SelfAdjointEigenSolver<Mat3> es(te.hess);
      const Mat3 Hp = es.eigenvectors() * es.eigenvalues().cwiseMax(0).asDiagonal() *
                      es.eigenvectors().transpose();
      ws.JtH.noalias() = ws.J.transpose() * Hp;
      B->noalias() += cp.c_par * ws.JtH * ws.J;
    }
  });
}

}  // namespace bigstep
