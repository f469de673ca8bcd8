// Model B: Coulomb inverse dynamics (spec inverse-dynamics-contact.md §5.1-§5.3).
//   w = Q_B z_B + r_B,  z_B = [f_N (n); f_F (4n, direction-major); lambda (n)]
//        [ N𝒫N^T  N𝒫F^T  0 ]          [ N v* + phi/dt ]
//   Q_B = [ F𝒫N^T  F𝒫F^T  E ] ,   r_B = [ F v*          ]
//        [ mu     -E^T    0 ]          [ 0             ]
// with J_c 𝒫 J_c^T = G^T G and J_c v* = jv from the block elimination (inverse_dynamics.h).
// v+ and tau follow from §3 with g = J_c^T [f_N; f_F].
#include "solvers/inverse_dynamics_coulomb.h"

#include <cmath>

namespace bigstep {

void id_coulomb_lcp(const IdProblem& p, IdWorkspace& ws) {
  const int n = ws.n, nr = 5 * n, nz = 6 * n;
  auto Q = ws.Q.topLeftCorner(nz, nz);
  auto r = ws.r.head(nz);
  Q.setZero();
  Q.topLeftCorner(nr, nr).noalias() = ws.G.leftCols(nr).transpose() * ws.G.leftCols(nr);
  for (int i = 0; i < n; ++i) {
    const double mu = std::isfinite(p.mu[i]) ? p.mu[i] : kIdCoulombMuInf;
    for (int d = 1; d <= 4; ++d) {
      Q(d * n + i, nr + i) = 1;   // F v+ + E lambda
      Q(nr + i, d * n + i) = -1;  // mu f_N - E^T f_F
    }
    Q(nr + i, i) = mu;
  }
  r.head(nr) = ws.jv.head(nr);
  for (int i = 0; i < n; ++i) r[i] += p.phi[i] / p.dt;
  r.tail(n).setZero();
}

void id_coulomb(const IdProblem& p, IdWorkspace& ws, IdResult& r) {
  if (!ws.begin(p, r)) return;
  r.n_support = 0;
  ws.contact_rows(p, true);
  const int n = ws.n, nr = 5 * n, nz = 6 * n;
  auto z = ws.z.head(nz);
  z.setZero();
  bool ok = n == 0;
  if (!ok) {
    id_coulomb_lcp(p, ws);
    auto Q = ws.Q.topLeftCorner(nz, nz);
    auto w = ws.w.head(nz);
    int piv = 0;
    double err = 0;
    ok = ws.lcp.solve(Q, ws.r.head(nz), z, w, piv, err) == LcpStatus::Solved;
    r.iterations = piv;
    // Tikhonov retries on the contact block (§4.6's fallback, also used for model B)
    const double qmax = std::max(1e-300, Q.topLeftCorner(nr, nr).diagonal().maxCoeff());
    double added = 0;
    for (double eps : {1e-10, 1e-8, 1e-6}) {
      if (ok) break;
      r.status |= ID_REGULARIZED;
      Q.topLeftCorner(nr, nr).diagonal().array() += (eps - added) * qmax;
      added = eps;
      ok = ws.lcp.solve(Q, ws.r.head(nz), z, w, piv, err) == LcpStatus::Solved;
      r.iterations += piv;
      if (ok) {  // must solve the original LCP (see inverse_dynamics_nslip.cpp)
        Q.topLeftCorner(nr, nr).diagonal().array() -= added * qmax;
        ok = lcp_violation(Q, ws.r.head(nz), z, w) <= 1e-6 * (1 + ws.r.head(nz).cwiseAbs().maxCoeff());
        Q.topLeftCorner(nr, nr).diagonal().array() += added * qmax;
      }
    }
  }
  if (ok) {
    ws.vq = p.qdot_des;
    ws.finish(p, z, ws.vq, r);
    return;
  }
  r.status |= ID_INFEASIBLE;
  if (!ws.repair(p, true, true, r)) {
    ws.fail(p, r);
  }
}

}  // namespace bigstep
