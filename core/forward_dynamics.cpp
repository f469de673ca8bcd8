#include "core/forward_dynamics.h"

#include <unsupported/Eigen/AutoDiff>

#include "core/crba.h"
#include "core/rnea.h"

namespace bigstep {

VecX forward_dynamics(const Model& m, const VecX& q, const VecX& qd, const VecX& tau, const double* mass_scale) {
  MatX H;
  crba(m, q, H, mass_scale);
  VecX f = tau - nonlinear_effects(m, q, qd, mass_scale);
  if (m.has_damping_armature) {
    for (int k = 0; k < m.n_q; ++k) H(k, k) += m.dof_armature[k];
    f -= Eigen::Map<const VecX>(m.dof_damping.data(), m.n_q).cwiseProduct(qd);
  }
  // joint springs: MuJoCo's qfrc_spring = -k (q - qpos_spring)
  if (m.has_stiffness)
    for (int k = 0; k < m.n_q; ++k)
      if (m.dof_stiffness[k] != 0) f[k] -= m.dof_stiffness[k] * (q[k] - m.dof_springref[k]);
  return H.ldlt().solve(f);
}

void rnea_derivatives(const Model& m, const VecX& q, const VecX& qd, const VecX& qdd, MatX& dtau_dq,
                      MatX& dtau_dqd, const double* mass_scale) {
  using AD = Eigen::AutoDiffScalar<VecX>;
  const int n = m.n_q;
  // seed 2n directions: the first n for q, the next n for qd
  VecXT<AD> qa(n), qda(n), qdda(n), tau;
  for (int k = 0; k < n; ++k) {
    qa[k] = AD(q[k], 2 * n, k);
    qda[k] = AD(qd[k], 2 * n, n + k);
    qdda[k] = AD(qdd[k], VecX::Zero(2 * n));
  }
  rnea<AD>(m, qa, qda, qdda, tau, mass_scale);
  dtau_dq.resize(n, n);
  dtau_dqd.resize(n, n);
  for (int i = 0; i < n; ++i) {
    const VecX& d = tau[i].derivatives();
    if (d.size() == 0) {  // tau_i independent of every seed
      dtau_dq.row(i).setZero();
      dtau_dqd.row(i).setZero();
      continue;
    }
    dtau_dq.row(i) = d.head(n).transpose();
    dtau_dqd.row(i) = d.tail(n).transpose();
  }
}

}  // namespace bigstep
