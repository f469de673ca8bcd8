// Armature, damping, spring and joint-limit terms of Eq. 6 / Eq. 13 (joint_terms.h has the formulas).
#include "solvers/terms/joint_terms.h"

#include <cmath>

namespace bigstep {

namespace {
// C of DOF k's stops: its own limit_stiffness (times the rollout's limit_scale), or the contact's C_perp when
// that is 0
double limit_coefficient(const Model& m, int k, const ContactParams& cp) {
  const double ck = m.dof_limit_k[size_t(k)];
  return ck > 0 ? ck * cp.limit_scale : cp.c_perp;
}
}  // namespace

double joint_passive_value(const Model& m, const VecX& theta, const VecX& theta_v, double dt_v,
                           const VecX& theta_pred, double dt_a) {
  double E = 0;
  if (m.has_damping_armature)
    for (int k = 0; k < m.n_q; ++k) {
      const double e_a = theta[k] - theta_pred[k], e_b = theta[k] - theta_v[k];
      E += 0.5 * m.dof_armature[size_t(k)] * e_a * e_a / (dt_a * dt_a) + 0.5 * m.dof_damping[size_t(k)] * e_b * e_b / dt_v;
    }
  if (m.has_stiffness)
    for (int k = 0; k < m.n_q; ++k) {
      const double e_k = theta[k] - m.dof_springref[size_t(k)];
      E += 0.5 * m.dof_stiffness[size_t(k)] * e_k * e_k;
    }
  return E;
}

void add_joint_passive_terms(const Model& m, const VecX& theta, const VecX& theta_v, double dt_v,
                             const VecX& theta_pred, double dt_a, VecX& grad, MatX* Hess) {
  if (m.has_damping_armature)
    for (int k = 0; k < m.n_q; ++k) {
      const double a = m.dof_armature[size_t(k)], b = m.dof_damping[size_t(k)];
      grad[k] += a * (theta[k] - theta_pred[k]) / (dt_a * dt_a) + b * (theta[k] - theta_v[k]) / dt_v;
      if (Hess) (*Hess)(k, k) += a / (dt_a * dt_a) + b / dt_v;
    }
  // spring at theta_{n+1} (implicit), only on DOFs with k_k != 0 (k = 0 leaves r bit-identical)
  if (m.has_stiffness)
    for (int k = 0; k < m.n_q; ++k) {
      const double ks = m.dof_stiffness[size_t(k)];
      if (ks == 0) continue;
      grad[k] += ks * (theta[k] - m.dof_springref[size_t(k)]);
      if (Hess) (*Hess)(k, k) += ks;
    }
}

double joint_limit_value(const Model& m, const LimitContact* lim, int n_lim, const ContactParams& cp) {
  double E = 0;
  for (int i = 0; i < n_lim; ++i) {
    const double d = lim[i].depth;
    if (!(d > 0)) continue;
    E += limit_coefficient(m, lim[i].dof, cp) / (cp.alpha + 1) * std::pow(d, cp.alpha + 1);
  }
  return E;
}

void add_joint_limit_terms(const Model& m, const LimitContact* lim, int n_lim, const ContactParams& cp,
                           VecX& grad, MatX* Hess) {
  for (int i = 0; i < n_lim; ++i) {
    const double d = lim[i].depth;
    if (!(d > 0)) continue;
    const int k = lim[i].dof;
    const double C = limit_coefficient(m, k, cp);
    grad[k] -= lim[i].s * C * std::pow(d, cp.alpha);
    if (Hess) (*Hess)(k, k) += C * cp.alpha * std::pow(d, cp.alpha - 1);
  }
}

}  // namespace bigstep
