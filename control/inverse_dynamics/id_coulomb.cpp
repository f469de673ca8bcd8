// Model B: Coulomb inverse dynamics (docs/methods/inverse_dynamics.md §5.1-§5.3).
//   w = Q_B z_B + r_B,  z_B = [f_N (n); f_F (4n, direction-major); lambda (n)]
//        [ N𝒫N^T  N𝒫F^T  0 ]          [ N v* + phi/dt ]
//   Q_B = [ F𝒫N^T  F𝒫F^T  E ] ,   r_B = [ F v*          ]
//        [ mu     -E^T    0 ]          [ 0             ]
// with J_c 𝒫 J_c^T = G^T G and J_c v* = jv from the block elimination (id_problem.h).
// v+ and tau follow from §3 with g = J_c^T [f_N; f_F].
//
// Departs from §5.3 ("no chatter mitigation"): the LCP's solution is then moved to the one of least
// |tau| among those with the same v+ and the same complementarity pattern (coulomb_min_torque), with
// slips below the LCP's own tolerance counted as sticks (kIdSlipTol). Why (id_lcp_mu at
// mu = 100): with several feet down the Coulomb LCP is indeterminate and Lemke returns a vertex.
// Standing still at mu = 100 the vertices loaded the feet with internal friction of up to mu f_N
// (18.7 N s = 18.7 kN against f_N = 0.35 N s, |tau| 1.3e4 instead of 132) that flipped from step
// to step, decided by "slips" of 1e-7 m/s; the choice removes it (tests/solvers/inverse_dynamics_test
// .cpp). Lemke's solutions all passed its complementarity check (1e-6) and the simulator reproduced
// the predicted normal force to 1e-5 until a step where it chose another solution: conditioning,
// ray termination and the pivoting's tolerances were not the cause. On the trot the fall at mu = 100
// has a second cause this does not remove: the joint-space plan is not compatible with every
// stance foot sticking, so feet must really slide (mm/s) and pull with mu f_N (bench/experiments/notes/inverse_dynamics.md).
// Also departs (I14 for model B): a solution whose impulses exceed a physical bound of the problem
// (id_impulse_bound, id_problem.cpp) is ill-posed, not only a Lemke ray: it is replaced by model A's
// no-slip solution where that keeps every friction inside its pyramid, else by model C's convex solve,
// and flagged ID_IMPULSE_BOUND.
#include "control/inverse_dynamics/id_coulomb.h"

#include <algorithm>
#include <cmath>

#include "control/inverse_dynamics/id_convex.h"
#include "control/inverse_dynamics/id_nslip.h"

namespace bigstep {

namespace {

// The Stage II of §6.2 applied to model B's solution z0 = [f_N; f_F; lambda] (w0 = Q_B z0 + r_B):
// snap lambda_i <= tol to 0 (stick), keep every f entry whose w > tol at 0, and move the others
// along null(G), which keeps v+ (so w) and with it complementarity (to tol): a sticking contact
// (lambda_i = 0) varies its five
// impulses inside the pyramid, a sliding one (lambda_i > 0) keeps its friction on the cone,
// mu_i f_N,i shared over its edges as now, and varies f_N,i >= 0 only. With T the map from these
// variables u to z and W an orthonormal basis of null(G T):
//   minimize 1/2 |tau0 - K w|^2 + eps/2 |z0 + T W w|^2,  K = J_{c,q}^T T W / dt  (as Stage II, I8)
//   s.t.     z0 + T W w >= 0 on the variables, pyramid rows of the sticking contacts
// w = 0 is feasible; on a QP failure z0 stands.
void coulomb_min_torque(const IdProblem& p, IdWorkspace& ws, IdResult& r) {
  const int n = ws.n, nr = 5 * n, nz = 6 * n, nq = ws.nq();
  auto z = ws.z.head(nz);
  const auto w0 = ws.w.head(nz);
  // velocities (w, lambda: m/s) below the LCP's acceptance tolerance (1e-6 relative, lcp_lemke.h)
  // cannot be told from 0: such a slip is a stick, and its friction is free inside the pyramid
  const double tol = kIdSlipTol * (1 + ws.r.head(nz).cwiseAbs().maxCoeff());
  auto mu_of = [&](int i) { return std::isfinite(p.mu[i]) ? p.mu[i] : kIdCoulombMuInf; };
  auto sliding = [&](int i) { return z[nr + i] > tol; };
  // w of an f entry with lambda_i snapped to 0 for a sticking contact: F_d v+ (or N v+ + phi/dt)
  auto w_stick = [&](int k) { return k < n || sliding(k % n) ? w0[k] : w0[k] - z[nr + k % n]; };
  // variables and the rows of (G T)^T into ws.QR
  int nv = 0;
  for (int k = 0; k < nr; ++k) {
    const int i = k % n;
    if (w_stick(k) > tol) continue;  // f_k = 0 stays (complementarity)
    if (sliding(i)) {
      if (k != i || !(z[i] > tol)) continue;  // a sliding contact: its loaded f_N only
      ws.QR.row(nv) = ws.G.col(i).transpose();
      for (int d = 1; d <= 4; ++d) ws.QR.row(nv) += (z[d * n + i] / z[i]) * ws.G.col(d * n + i).transpose();
    } else {
      ws.QR.row(nv) = ws.G.col(k).transpose();
    }
    ws.bvar[size_t(nv++)] = k;
  }
  if (nv == 0) return;
  const int dn = id_nullspace_of(ws, nv);
  if (dn == 0) return;
  // TW = T W (nr x dn) in ws.Q (the LCP matrix is no longer needed)
  const auto W = ws.Wn.topLeftCorner(nv, dn);
  auto TW = ws.Q.topLeftCorner(nr, dn);
  TW.setZero();
  for (int j = 0; j < nv; ++j) {
    const int k = ws.bvar[size_t(j)];
    TW.row(k) += W.row(j);
    if (sliding(k % n))
      for (int d = 1; d <= 4; ++d) TW.row(d * n + k) += (z[d * n + k] / z[k]) * W.row(j);
  }
  auto Kt = ws.Kt.topLeftCorner(nq, dn);
  for (int j = 0; j < nq; ++j) Kt.row(j).noalias() = ws.Jc.col(ws.actuated()[size_t(j)]).head(nr).transpose() * TW;
  Kt /= p.dt;
  auto H = ws.Hq.topLeftCorner(dn, dn);
  H.noalias() = Kt.transpose() * Kt;
  const double eps = 1e-8 * (1 + H.diagonal().maxCoeff());
  H.noalias() += eps * (TW.transpose() * TW);
  auto c = ws.cq.head(dn);
  c.noalias() = Kt.transpose() * r.tau;
  c *= -1;
  c.noalias() += eps * (TW.transpose() * z.head(nr));
  // rows A w <= b: -(T W w)_k <= z0_k on the variables, then the sticking contacts' pyramids
  int ni = 0;
  for (int j = 0; j < nv; ++j) {
    const int k = ws.bvar[size_t(j)];
    ws.Aq.row(ni).head(dn) = -TW.row(k);
    ws.bq[ni++] = z[k];
  }
  for (int i = 0; i < n; ++i) {
    if (sliding(i)) continue;
    const double mu = mu_of(i);
    ws.Aq.row(ni).head(dn) = -mu * TW.row(i);
    double b = mu * z[i];
    for (int d = 1; d <= 4; ++d) {
      ws.Aq.row(ni).head(dn) += TW.row(d * n + i);
      b -= z[d * n + i];
    }
    ws.bq[ni++] = std::max(b, 0.0);  // >= 0 to the LCP's tolerance: w = 0 must be feasible
  }
  ws.lbq.head(dn).setConstant(-INFINITY);
  ws.ubq.head(dn).setConstant(INFINITY);
  const DenseQpRef qp{H, c, ws.Eq.topLeftCorner(0, dn), ws.eq.head(0), ws.Aq.topLeftCorner(ni, dn), ws.bq.head(ni),
                      ws.lbq.head(dn), ws.ubq.head(dn), {}};
  if (ws.qp.solve(qp, ws.qres, nullptr, 5000) != QpStatus::Solved) return;
  auto zz = ws.hv.head(nr);
  zz = z.head(nr);
  zz.noalias() += TW * ws.qres.x.head(dn);
  z.head(nr) = zz.cwiseMax(0.0);  // round-off of the nullspace step
  for (int i = 0; i < n; ++i)
    if (!sliding(i)) z[nr + i] = 0;
  ws.finish(p, z, ws.vq, r);
}

// Whether model A's result r can stand for model B's: solved without repair (ID_SLIP, A's check of
// a row after its solve, may be set and stays in the status) and every contact's friction inside
// its pyramid, |f_s| + |f_t| <= mu f_N (to round-off).
bool coulomb_admits(const IdProblem& p, const IdResult& r) {
  if (r.status & (ID_INFEASIBLE | ID_FAILED | ID_NONFINITE | ID_IMPULSE_BOUND)) return false;
  for (int i = 0; i < r.n; ++i) {
    const double mu = std::isfinite(p.mu[i]) ? p.mu[i] : kIdCoulombMuInf;
    if (std::abs(r.f_s[i]) + std::abs(r.f_t[i]) > mu * r.f_n[i] * (1 + 1e-9) + 1e-12) return false;
  }
  return true;
}

}  // namespace

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

void id_coulomb(const IdProblem& p, IdWorkspace& ws, IdResult& r, bool min_torque) {
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
      if (ok) {  // must solve the original LCP (see id_nslip.cpp)
        Q.topLeftCorner(nr, nr).diagonal().array() -= added * qmax;
        ok = lcp_violation(Q, ws.r.head(nz), z, w) <= 1e-6 * (1 + ws.r.head(nz).cwiseAbs().maxCoeff());
        Q.topLeftCorner(nr, nr).diagonal().array() += added * qmax;
      }
    }
  }
  if (ok) {
    ws.vq = p.qdot_des;
    ws.finish(p, z, ws.vq, r);
    if (n > 0 && min_torque) coulomb_min_torque(p, ws, r);
    // an ill-posed LCP (impulses beyond the physical bound): model A's or C's solve instead
    const double bound = n > 0 ? id_impulse_bound(p, ws) : 0;
    if (n > 0 && id_exceeds_impulse_bound(ws, z.head(nr), kIdImpulseBound * bound, kIdFrictionBound * bound)) {
      const uint32_t st = r.status | ID_IMPULSE_BOUND;
      const int it = r.iterations;
      // The repair: first the no-slip model A, B's mu -> inf limit. Where its friction lies inside
      // every contact's pyramid its sticking solution (lambda = 0, the same normal complementarity)
      // is one of this LCP's, less Lemke's internal friction (with A's ID_SLIP, a repair as C's is): on the foot-space trot at mu = 100 the
      // vertices carried 6-11 N s of squeeze between two feet (50 f_N) on 2/3 of the steps, and
      // model C's Stage I, which lets stance feet slide whenever the joints move (bench/experiments/notes/inverse_dynamics.md
      // "Oracle 12"), threw the robot over. Otherwise model C, as before.
      id_no_slip(p, ws, r);
      if (coulomb_admits(p, r)) {
        r.status |= st;
        r.iterations += it;
        return;
      }
      id_convex(p, ws, r, true);
      r.status |= st;
      r.iterations += it;
    }
    return;
  }
  r.status |= ID_INFEASIBLE;
  if (!ws.repair(p, true, true, r)) {
    ws.fail(p, r);
  }
}

}  // namespace bigstep
