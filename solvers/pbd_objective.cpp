// PBD objective, Eq. 6 (spec pbfd.md §4.5; gradients §4.2-§4.3; JTJ matrix §5 / A4; implicit PD §4.1).
#include "solvers/pbd_objective.h"

#include <cmath>

namespace bigstep {

void add_normal_contact(const Model& m, const Kinematics& kin, int link, const MatX& J, double d,
                        const Vec3& n, const ContactParams& cp, VecX& grad, MatX* Hess, bool exact, VecX& Jt_n) {
  const double da = std::pow(d, cp.alpha);
  Jt_n.noalias() = J.transpose() * n;
  grad.noalias() -= cp.c_perp * da * Jt_n;
  if (!Hess) return;
  Hess->noalias() += cp.c_perp * cp.alpha * std::pow(d, cp.alpha - 1) * Jt_n * Jt_n.transpose();
  if (exact) add_point_hessian(m, kin, link, J, n, -cp.c_perp * da, *Hess);
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
  double E = inertia_value(m, ws.kin, in.anchor, in.dt, in.mass_scale) + gravity_value(m, ws.kin, in.mass_scale) - theta.dot(in.tau) +
             pd_potential(in, theta);
  const ContactParams& cp = in.cp;
  for (size_t s = 0; s < m.spheres.size(); ++s) {
    const ContactSphere& sp = m.spheres[s];
    const Vec3 c = point_position(ws.kin, sp.link, sp.centre);
    for (const Plane& pl : m.planes) {
      const double d = -sphere_plane_phi(c, sp.radius, pl.normal, pl.offset);
      if (!(d > 0)) continue;
      const Vec3 dc = c - in.centre_n[s];
      const Vec3 u = dc - pl.normal * pl.normal.dot(dc);
      E += cp.c_perp / (cp.alpha + 1) * std::pow(d, cp.alpha + 1);
      if (cp.c_par != 0) E += cp.c_par * std::pow(u.norm(), cp.beta + 1) * std::pow(d, cp.gamma + 1);
    }
  }
  return E;
}

void pbd_energy_derivatives(const Model& m, const PbdStepInput& in, const VecX& theta,
                            PbdWorkspace& ws, double& E, VecX& grad, MatX* B, HessianKind kind) {
  E = pbd_energy(m, in, theta, ws);  // leaves ws.kin at theta
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
  const ContactParams& cp = in.cp;
  for_each_active_contact(m, in, ws, [&](int link, const Vec3&, double d, const Vec3& n, const Vec3& u) {
    add_normal_contact(m, ws.kin, link, ws.J, d, n, cp, grad, Bp, exact, ws.Jt_n);
    if (cp.c_par == 0) return;
    const TangentialEnergy te = tangential_energy(u, d, n, cp);
    grad.noalias() += cp.c_par * ws.J.transpose() * te.grad;
    if (!Bp) return;
    if (exact) {
      ws.JtH.noalias() = ws.J.transpose() * te.hess;
      B->noalias() += cp.c_par * ws.JtH * ws.J;
      add_point_hessian(m, ws.kin, link, ws.J, te.grad, cp.c_par, *B);
    } else {
      // [grad_p^2 e]_+ : clamp the 3x3 eigenvalues at zero so B stays PSD
      Eigen::SelfAdjointEigenSolver<Mat3> es(te.hess);
      const Mat3 Hp = es.eigenvectors() * es.eigenvalues().cwiseMax(0).asDiagonal() *
                      es.eigenvectors().transpose();
      ws.JtH.noalias() = ws.J.transpose() * Hp;
      B->noalias() += cp.c_par * ws.JtH * ws.J;
    }
  });
}

}  // namespace bigstep
