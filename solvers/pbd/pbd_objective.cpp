// PBD objective, Eq. 6 (docs/methods/pbfd.md §4.5; gradients §4.2-§4.3; JTJ matrix §5 / A4; implicit PD §4.1).
//
// Evaluated at the cost of its maths, like the PBFD residual: inertia (§3), gravity and
// every contact force go into one subtree moment per link, each contact's 3 x 3 stiffness dF/dx
// into one 6 x 6 moment (core/composite_moments.h), read out per DOF in O(L + D^2); no link
// derivatives, no 3 x n_q Jacobian for a contact against the world. The energy value keeps its
// direct sums; kinematics and the contact set are found once per iterate (value() at a candidate,
// then its derivatives once accepted, reuse them: ws.theta_cs).
#include "solvers/pbd/pbd_objective.h"

#include <cmath>

#include "solvers/terms/joint_terms.h"

namespace bigstep {

double pd_potential(const PbdStepInput& in, const VecX& theta) {
  if (!in.has_pd()) return 0;
  // expressions only: no temporaries
  const auto e = (theta - in.theta_bar).array();
  const auto d = (theta - in.theta_v).array();
  return 0.5 * (e * in.kp.array() * e).sum() + 0.5 / in.dt_v * (d * in.kd.array() * d).sum() -
         (in.kd.array() * in.theta_dot_bar.array() * theta.array()).sum();
}

void add_pd_terms(const PbdStepInput& in, const VecX& theta, VecX& grad, MatX* Hess) {
  if (!in.has_pd()) return;
  // -tau_pd = K_p (theta - theta_bar) + K_d ((theta - theta_v)/dt_v - theta_dot_bar)
  grad.array() += in.kp.array() * (theta - in.theta_bar).array() +
                  in.kd.array() * ((theta - in.theta_v).array() / in.dt_v - in.theta_dot_bar.array());
  if (Hess) Hess->diagonal() += in.kp + in.kd / in.dt_v;
}

double pbd_energy(const Model& m, const PbdStepInput& in, const VecX& theta, PbdWorkspace& ws) {
  // ws.kin and ws.cs are at ws.theta_cs (pbd_context.h): reuse them at the same iterate
  if (!(ws.theta_cs == theta)) {
    forward_kinematics(m, theta, ws.kin);
    update_contacts(m, theta, ws);
  }
  double E = inertia_value(m, ws.kin, in.anchor, in.dt_a, in.mass_scale) + gravity_value(m, ws.kin, in.mass_scale) - theta.dot(in.tau) +
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
  E += joint_passive_value(m, theta, in.theta_v, in.dt_v, in.theta_pred, in.dt_a);
  E += joint_limit_value(m, ws.cs.lim.data(), ws.cs.n_lim, cp);
  return E;
}

void pbd_energy_derivatives(const Model& m, const PbdStepInput& in, const VecX& theta,
                            PbdWorkspace& ws, double& E, VecX& grad, MatX* B, HessianKind kind) {
  E = pbd_energy(m, in, theta, ws);  // leaves ws.kin and ws.cs at theta
  const bool exact = kind == HessianKind::Exact;
  MatX* Bp = kind == HessianKind::None ? nullptr : B;
  // grad I, grad V: the first-order subtree moments (core/composite_moments.h); the exact Hessian
  // adds their second-order part (mass matrix / dt^2 from P, f . d^2x through G), the
  // Gauss-Newton matrix only the mass-matrix part (§5, A4: grad^2 V and the inertia's d^2X are out)
  CompositeMoments& cm = ws.cm;
  begin_moments(m, ws.kin, in.anchor, in.dt_a, in.mass_scale, Bp != nullptr, cm);
  grad.setZero(m.n_q);
  grad -= in.tau;
  if (Bp) Bp->setZero(m.n_q, m.n_q);
  add_pd_terms(in, theta, grad, Bp);  // exact and PSD: both model matrices take it
  // armature, damping, limits: diagonal PSD Hessians, both model matrices take them
  add_joint_passive_terms(m, theta, in.theta_v, in.dt_v, in.theta_pred, in.dt_a, grad, Bp);
  add_joint_limit_terms(m, ws.cs.lim.data(), ws.cs.n_lim, in.cp, grad, Bp);
  const ContactParams& cp = in.cp;
  for (int i = 0; i < ws.cs.n_con; ++i) {
    const Contact& c = ws.cs.con[size_t(i)];
    const double d = c.depth;
    if (!(d > 0)) continue;
    const Vec3 xa = contact_core_a(ws.kin, c), xb = contact_core_b(ws.kin, c);
    // normal (§4.2): grad P_perp = J^T F with F = -C_perp d^alpha n at core a (-F at core b),
    // J = Ja - Jb; dF/dx = C_perp alpha d^(alpha-1) n n^T (PSD part, both matrices)
    //                      - C_perp d^alpha kappa P_t (the turning normal of hess depth, exact only)
    const double da = powr(d, cp.alpha);
    Vec3 F = -cp.c_perp * da * c.n;
    Mat3 K;
    if (Bp) {
      K = cp.c_perp * cp.alpha * powr(d, cp.alpha - 1) * c.n * c.n.transpose();
      if (exact && c.kappa != 0) K -= cp.c_perp * da * c.kappa * (Mat3::Identity() - c.n * c.n.transpose());
    }
    if (cp.c_par != 0) {
      // tangential (§4.3): e(u, d) of the cores' relative position x = c_a - c_b (contact_terms.h),
      // grad += C_par J^T grad_x e; dF/dx = C_par hess_x e (exact) or C_par [hess_x e]_+ (JTJ)
      const Vec3 y = contact_core_displacement(ws.kin_n, c, xa, xb);
      const double eta = c.n.dot(y);
      const Vec3 u = y - c.n * eta;
      TangentialEnergy te = tangential_energy(u, d, c.n, cp);
      if (c.kappa != 0) add_normal_turning(te, u, d, c.n, c.kappa, eta, cp);
      F += cp.c_par * te.grad;
      if (Bp && exact) {
        K += cp.c_par * te.hess;
      } else if (Bp) {
        // [grad_x^2 e]_+ : clamp the 3x3 eigenvalues at zero so B stays PSD
        Eigen::SelfAdjointEigenSolver<Mat3> es(te.hess);
        K += cp.c_par * (es.eigenvectors() * es.eigenvalues().cwiseMax(0).asDiagonal() *
                         es.eigenvectors().transpose());
      }
    }
    add_contact_force(c, xa, xb, F, cm);
    if (Bp) add_contact_stiffness(m, c, xa, xb, K, ws, *Bp);
  }
  // read out per DOF; without force_curvature (Gauss-Newton) the f . d^2x terms stay out
  finish_moments(m, ws.kin, cm, grad, Bp, exact);
}

}  // namespace bigstep
