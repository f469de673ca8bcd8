// CRBA (world convention): composite inertias Ic_j = sum over the subtree of j of I_i (world,
// about the origin); H_kl = S_k^T Ic_{link(l)} S_l for k on the root->link(l) path, k <= l.
#include "core/crba.h"

#include "core/error.h"
#include "core/rnea.h"

namespace bigstep {

CrbaScratch::CrbaScratch(const Model& m) : kin(m), S(6, m.n_q), Ic(size_t(m.n_link)) {}

void crba(const Model& m, const VecX& q, MatX& H, const double* mass_scale) {
  CrbaScratch ws(m);
  crba(m, q, H, ws, mass_scale);
}

void crba(const Model& m, const VecX& q, MatX& H, CrbaScratch& ws, const double* mass_scale) {
  BIGSTEP_CHECK_ARG(int(ws.Ic.size()) == m.n_link && ws.S.cols() == m.n_q, "crba: scratch size", ws.Ic.size(),
                    "the CrbaScratch must be built from this model");
  forward_kinematics(m, q, ws.kin);
  motion_subspace(m, ws.kin, ws.S);
  const MatX& S = ws.S;
  std::vector<Eigen::Matrix<double, 6, 6>>& Ic = ws.Ic;
  for (int j = 0; j < m.n_link; ++j) Ic[j] = spatial_inertia_world(m, j, ws.kin.R[j], ws.kin.t[j], mass_scale);
  // backward pass: composite inertias
  for (int j = m.n_link - 1; j >= 0; --j)
    if (m.link_parent[j] >= 0) Ic[m.link_parent[j]] += Ic[j];
  H.setZero(m.n_q, m.n_q);
  for (int l = 0; l < m.n_q; ++l) {
    const int j = m.dof_link[l];
    const Vec6T<double> F = Ic[j] * S.col(l);
    for (int k = 0; k <= l; ++k) {
      if (!m.moves(k, j)) continue;
      H(k, l) = H(l, k) = S.col(k).dot(F);
    }
  }
}

}  // namespace bigstep
