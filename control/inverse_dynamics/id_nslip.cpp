// Model A: no-slip inverse dynamics (docs/methods/inverse_dynamics.md §4.1-§4.6).
//
// Everything lives in the unactuated ("b") coordinates of the block elimination (id_problem.h):
// with y = L^T v+_b, the tangent rows' b-columns become the columns G_S, G_T of G = L^-1 J_{c,b}^T,
// and the P block of Algorithm 1's Cholesky of X^T M^-1 X drops out (its Schur complement is
// A 𝒫 A^T = G_A^T G_A [derived]). So:
//   row selection (§4.2): Gram-Schmidt on the tangent columns of G, in the order S_1, T_1, S_2, ...,
//     keeping a column when its pivot |g - U U^T g|^2 > 1e-8 max |g|^2 (U: orthonormal, G_sel = U R);
//   𝒫_J (§4.3) in y: the projector I - U U^T, so Q = N 𝒫_J N^T = H^T H with H = (I - U U^T) G_N;
//   v*_J (§4.3): y* = (I - U U^T) y0 + U R^-T e, e = -A_{sel,q} qdot_des (the selected rows'
//     equality A v+ = 0 with v+_q = qdot_des);
//   r = N v*_J + phi/dt = N_q qdot_des + G_N^T y* + phi/dt;
//   retrieval: y = y* + H f_N, tangential impulses f_sel = R^-1 (R^-T e - U^T y0 - U^T G_N f_N)
//     (G_sel f_sel = y - y0 - G_N f_N), then §3's v+ and tau (IdWorkspace::finish).
// Dropped tangent rows get zero impulse (App. E); the §4.3 consistency check then verifies every
// tangent row and the non-penetration rows and sets ID_SLIP when the plan is not no-slip compatible.
#include "control/inverse_dynamics/id_nslip.h"

#include <algorithm>
#include <cmath>

#include "numerics/dense_small.h"
#include "control/inverse_dynamics/id_convex.h"

namespace bigstep {

const char* ppm_status_name(PpmStatus s) {
  switch (s) {
    case PpmStatus::Solved: return "solved";
    case PpmStatus::Cycle: return "cycle";
    case PpmStatus::Infeasible: return "infeasible";
    case PpmStatus::MaxIterations: return "max_iterations";
  }
  return "?";
}

namespace {

// FNV-1a hash of the sorted index set (cycle detection; equal sets hash equally)
uint64_t set_hash(const std::vector<int>& S, std::vector<int>& scratch) {
  scratch.assign(S.begin(), S.end());
  std::sort(scratch.begin(), scratch.end());
  uint64_t h = 1469598103934665603ull;
  for (int i : scratch) {
    h ^= uint64_t(i) + 0x9e3779b97f4a7c15ull;
    h *= 1099511628211ull;
  }
  return h ^ uint64_t(scratch.size());
}

}  // namespace

PpmStatus id_ppm(Eigen::Ref<const MatX> H, Eigen::Ref<const VecX> r0, std::span<const int> warm, IdWorkspace& ws,
                 Eigen::Ref<VecX> z, int& iterations) {
  const int n = int(r0.size()), nb = int(H.rows());
  iterations = 0;
  z.head(n).setZero();
  std::vector<int>& S = ws.S_set;
  S.clear();
  if (n == 0) return PpmStatus::Solved;
  const double tol_w = 1e-10 * (1 + r0.cwiseAbs().maxCoeff());
  if (r0.minCoeff() >= -tol_w) return PpmStatus::Solved;
  double hmax = 0;
  for (int i = 0; i < n; ++i) hmax = std::max(hmax, H.col(i).squaredNorm());
  const double eps_piv = 1e-8 * std::max(hmax, 1e-300);
  MatX& K = ws.K;
  auto zs = ws.zs.head(nb), gam = ws.gam.head(nb), a = ws.a.head(nb);
  // Cholesky of H_S^T H_S (|S| <= nb); false when not positive definite to eps_piv
  auto factor = [&]() -> bool {
    const int k = int(S.size());
    if (k > nb) return false;
    for (int i = 0; i < k; ++i)
      for (int j = 0; j <= i; ++j) K(i, j) = H.col(S[size_t(i)]).dot(H.col(S[size_t(j)]));
    if (!cholesky_inplace(K, k)) return false;
    for (int i = 0; i < k; ++i)
      if (K(i, i) * K(i, i) <= eps_piv) return false;
    return true;
  };
  // pivot^2 of appending column i to the factored S: |h_i|^2 - |K^-1 H_S^T h_i|^2
  auto append_pivot = [&](int i) -> double {
    const int k = int(S.size());
    if (k >= nb) return 0;
    for (int j = 0; j < k; ++j) gam[j] = H.col(S[size_t(j)]).dot(H.col(i));
    forward_subst(K, gam, k);
    return H.col(i).squaredNorm() - gam.head(k).squaredNorm();
  };
  // warm start (§4.4): previous support, keeping what stays well-conditioned
  for (int i : warm) {
    if (i < 0 || i >= n || std::find(S.begin(), S.end(), i) != S.end()) continue;
    S.push_back(i);
    if (!factor()) S.pop_back();
  }
  if (S.empty()) {
    int imin = 0;
    for (int i = 1; i < n; ++i)
      if (r0[i] < r0[imin]) imin = i;
    S.push_back(imin);
  }
  ws.seen.clear();
  const int it_max = 4 * n + 20;
  for (int it = 0; it < it_max; ++it) {
    iterations = it + 1;
    const uint64_t hs = set_hash(S, ws.S_tmp);
    if (std::find(ws.seen.begin(), ws.seen.end(), hs) != ws.seen.end()) return PpmStatus::Cycle;
    if (ws.seen.size() < ws.seen.capacity()) ws.seen.push_back(hs);
    const int k = int(S.size());
    if (!factor()) {
      // a dependent set (only reachable through a swap): drop the newest member and go on
      S.pop_back();
      if (S.empty()) return PpmStatus::Infeasible;
      continue;
    }
    // z_S = -(H_S^T H_S)^-1 r0_S, w = r0 + H^T (H_S z_S)   (w_S = 0)
    for (int j = 0; j < k; ++j) zs[j] = -r0[S[size_t(j)]];
    forward_subst(K, zs, k);
    backward_subst_transposed(K, zs, k);
    a.setZero();
    for (int j = 0; j < k; ++j) a += zs[j] * H.col(S[size_t(j)]);
    // (S may be empty after a removal: then w = r0 and the most negative entry enters next)
    const double zmax = k > 0 ? zs.head(k).cwiseAbs().maxCoeff() : 0.0;
    const double tol_z = 1e-12 * (1 + zmax);
    int jmin = 0;
    for (int j = 1; j < k; ++j)
      if (zs[j] < zs[jmin]) jmin = j;
    if (k > 0 && zs[jmin] < -tol_z) {
      S.erase(S.begin() + jmin);
      continue;
    }
    // candidates: w_i < -tol off S, by increasing w_i
    std::fill(ws.flag.begin(), ws.flag.begin() + n, uint8_t(0));
    for (int j = 0; j < k; ++j) ws.flag[size_t(S[size_t(j)])] = 1;
    int first = -1;
    bool added = false;
    for (;;) {
      int imin = -1;
      double wmin = -tol_w;
      for (int i = 0; i < n; ++i) {
        if (ws.flag[size_t(i)]) continue;
        const double wi = r0[i] + H.col(i).dot(a);
        if (wi < wmin) {
          wmin = wi;
          imin = i;
        }
      }
      if (imin < 0) break;
      if (first < 0) first = imin;
      ws.flag[size_t(imin)] = 1;
      if (append_pivot(imin) > eps_piv) {
        S.push_back(imin);
        added = true;
        break;
      }
    }
    if (first < 0) {  // complementary and feasible
      for (int j = 0; j < k; ++j) z[S[size_t(j)]] = zs[j];
      return PpmStatus::Solved;
    }
    if (added) continue;
    // every candidate is dependent on S: swap the most negative one in for the blocking member
    const int i = first;
    for (int j = 0; j < k; ++j) gam[j] = H.col(S[size_t(j)]).dot(H.col(i));
    forward_subst(K, gam, k);
    backward_subst_transposed(K, gam, k);
    int jout = -1;
    double ratio = 0;
    const double gmax = k > 0 ? gam.head(k).cwiseAbs().maxCoeff() : 0.0;
    for (int j = 0; j < k; ++j) {
      if (gam[j] <= 1e-12 * (1 + gmax)) continue;
      const double rj = zs[j] / gam[j];
      if (jout < 0 || rj < ratio) {
        ratio = rj;
        jout = j;
      }
    }
    if (jout < 0) return PpmStatus::Infeasible;
    S[size_t(jout)] = i;
  }
  return PpmStatus::MaxIterations;
}

namespace {

// One solve of Model A with the tangent rows of the contacts in ws.tmask (warm start ws.warm):
// row selection, the LCP in f_N, the retrieval of the tangential impulses into ws.z (3n: f_N, f_S,
// f_T; dropped rows 0). False when no LCP solver succeeded.
bool no_slip_pass(const IdProblem& p, IdWorkspace& ws, IdResult& r) {
  const int nb = ws.nb(), n = ws.n;
  // ---- row selection (Algorithm 1 corrected, §4.2): Gram-Schmidt on the tangent columns of G ----
  double gmax = 0;
  for (int c = n; c < 3 * n; ++c) gmax = std::max(gmax, ws.G.col(c).head(nb).squaredNorm());
  ws.sel.clear();
  int k = 0;
  for (int i = 0; i < n && k < nb; ++i) {
    if (!ws.tmask[size_t(i)]) continue;
    for (int c : {n + i, 2 * n + i}) {
      if (k >= nb) break;
      auto res = ws.a.head(nb);
      res = ws.G.col(c).head(nb);
      auto rc = ws.R.col(k).head(nb);
      rc.setZero();
      for (int pass = 0; pass < 2; ++pass) {  // re-orthogonalized Gram-Schmidt
        for (int j = 0; j < k; ++j) {
          const double d = ws.U.col(j).head(nb).dot(res);
          rc[j] += d;
          res -= d * ws.U.col(j).head(nb);
        }
      }
      const double piv = res.squaredNorm();
      if (piv > kIdRowSelectEps * gmax && gmax > 0) {
        const double s = std::sqrt(piv);
        ws.U.col(k).head(nb) = res / s;
        ws.R(k, k) = s;
        ws.sel.push_back(c);
        ++k;
      }
    }
  }
  auto U = ws.U.topLeftCorner(nb, k);
  auto R = ws.R.topLeftCorner(k, k);
  // ---- y* = (I - U U^T) y0 + U R^-T e,  e = -A_{sel,q} qdot_des ----
  auto e = ws.ev.head(k);
  for (int j = 0; j < k; ++j) {
    const int c = ws.sel[size_t(j)];
    e[j] = -(ws.jv[c] - ws.G.col(c).head(nb).dot(ws.y0));
  }
  forward_subst_upper_transposed(R, e, k);
  auto ys = ws.ystar.head(nb);
  ys = ws.y0;
  auto ut = ws.uy.head(k);
  ut.noalias() = U.transpose() * ws.y0;
  ys.noalias() -= U * ut;
  ys.noalias() += U * e;
  // ---- H = (I - U U^T) G_N, r0 = N_q qdot_des + G_N^T y* + phi / dt ----
  auto Hm = ws.H.topLeftCorner(nb, n);
  Hm = ws.G.topLeftCorner(nb, n);
  for (int j = 0; j < k; ++j) {
    for (int i = 0; i < n; ++i) Hm.col(i) -= U.col(j).dot(Hm.col(i)) * U.col(j);
  }
  auto r0 = ws.r.head(n);
  for (int i = 0; i < n; ++i) r0[i] = ws.jv[i] - ws.G.col(i).head(nb).dot(ws.y0) + ws.G.col(i).head(nb).dot(ys) + p.phi[i] / p.dt;
  // ---- LCP(r0, H^T H): pivoting, then Lemke, then Tikhonov, then the repair QP ----
  auto fN = ws.w.head(n);  // solution buffer
  int its = 0;
  const PpmStatus ps = id_ppm(Hm, r0, ws.warm, ws, fN, its);
  r.iterations += its;
  bool ok = ps == PpmStatus::Solved;
  if (!ok) {
    r.status |= ID_LEMKE_FALLBACK;
    auto Q = ws.Q.topLeftCorner(n, n);
    Q.noalias() = Hm.transpose() * Hm;
    const double qmax = std::max(1.0, Q.diagonal().maxCoeff());
    auto wl = ws.z.head(n);
    int piv = 0;
    double err = 0;
    ok = ws.lcp.solve(Q, r0, fN, wl, piv, err) == LcpStatus::Solved;
    r.iterations += piv;
    double added = 0;
    for (double eps : {1e-10, 1e-8, 1e-6}) {
      if (ok) break;
      r.status |= ID_REGULARIZED;
      Q.diagonal().array() += (eps - added) * qmax;
      added = eps;
      ok = ws.lcp.solve(Q, r0, fN, wl, piv, err) == LcpStatus::Solved;
      r.iterations += piv;
      // accept a regularized solution only if it solves the original LCP to tolerance (an
      // infeasible LCP, e.g. Q = 0 with r < 0, has a regularized "solution" z = -r / eps)
      if (ok) {
        Q.diagonal().array() -= added * qmax;
        ok = lcp_violation(Q, r0, fN, wl) <= 1e-6 * (1 + r0.cwiseAbs().maxCoeff());
        Q.diagonal().array() += added * qmax;
      }
    }
    if (ok) {  // support of the Lemke solution
      ws.S_set.clear();
      for (int i = 0; i < n; ++i)
        if (fN[i] > 0) ws.S_set.push_back(i);
    }
  }
  auto zz = ws.z.head(3 * n);
  if (ok) {
    // retrieval: f_sel = R^-1 (R^-T e - U^T y0 - U^T G_N f_N)
    auto ft = ws.zs.head(k);
    auto gn = ws.a.head(nb);
    gn.noalias() = ws.G.topLeftCorner(nb, n) * fN;
    ft = e - ut;                         // R^-T e - U^T y0
    ft.noalias() -= U.transpose() * gn;  // - U^T G_N f_N
    backward_subst_upper(R, ft, k);
    zz.setZero();
    zz.head(n) = fN;
    for (int j = 0; j < k; ++j) zz[ws.sel[size_t(j)]] = ft[j];
  }
  return ok;
}

}  // namespace

void id_no_slip(const IdProblem& p, IdWorkspace& ws, IdResult& r) {
  if (!ws.begin(p, r)) return;
  ws.contact_rows(p, false);
  const int n = ws.n;
  // warm start: current indices of the previous support's ids (read before r is overwritten)
  ws.warm.clear();
  for (int i = 0; i < n; ++i) {
    const int id = p.ids.empty() ? i : p.ids[size_t(i)];
    for (int s = 0; s < r.n_support; ++s)
      if (r.support[size_t(s)] == id) ws.warm.push_back(i);
  }
  // ---- p.friction_needs_load: no-slip rows only where the normal impulse is positive ----
  // The MLCP (42)-(43) keeps S v+ = T v+ = 0 at every contact of the set, so a contact carrying no
  // normal impulse (a lifting foot, or a foot the indeterminate LCP leaves unloaded) may still get
  // tangential impulse: the mu -> inf limit of mu f_N >= |f_t| forbids that, and no simulator with
  // a finite mu delivers it. Closed loop on the spider this was what made id_lcp_inf fall: the
  // torques relied on tangential impulse at an unloaded foot (f_S = 271 N, f_N = 0), the simulator
  // gave none, the foot lifted and the next solves kept pinning it (up to 1e10 N through a nearly
  // dependent row once it was 0.3 mm up). Deviation from §4.1 (opt-in): pass 1 is the paper's (every
  // contact's rows); while a selected tangent row belongs to a contact with f_N = 0, re-solve with
  // the tangent rows of the supporting contacts only (at most kPasses passes).
  for (int i = 0; i < n; ++i) ws.tmask[size_t(i)] = 1;
  const int kPasses = p.friction_needs_load ? 4 : 1;
  bool ok = false;
  for (int pass = 0; pass < kPasses; ++pass) {
    ok = no_slip_pass(p, ws, r);
    if (!ok) break;
    auto fN = ws.w.head(n);
    bool consistent = true;
    for (int c : ws.sel)
      if (!(fN[(c - n) % n] > 0)) consistent = false;
    if (consistent || pass + 1 == kPasses) break;
    for (int i = 0; i < n; ++i) ws.tmask[size_t(i)] = fN[i] > 0 ? 1 : 0;
    ws.warm.assign(ws.S_set.begin(), ws.S_set.end());
  }
  // (the paper's rows, friction_needs_load = false, are unbounded friction by definition: the §10
  // oracles' moving instances carry 200-3500 N s of friction at f_N < 4 N s, and are left as stated)
  const double bound = ok && p.friction_needs_load ? id_impulse_bound(p, ws) : 0;
  if (bound > 0 && id_exceeds_impulse_bound(ws, ws.z.head(3 * n), bound, bound)) {
    // ---- impulses beyond the physical bound (id_impulse_bound): model C at mu = inf instead ----
    // Why: where the plan asks the feet for more than sticking can give (mu = 0.1, a landing),
    // the no-slip LCP answers with impulses no contact delivers (closed loop at mu = 0.1: 1e15 N m
    // and more before the run aborted). Model C's Stage I with the cone at mu = inf
    // (IdProblem::friction_needs_load: mu_inf) is the same no-slip limit without complementarity,
    // minimises the kinetic energy (impulses that do no positive work) and bounds its own impulses.
    const uint32_t st = r.status | ID_IMPULSE_BOUND;
    const int it = r.iterations;
    id_convex(p, ws, r, false);
    r.status |= st;
    r.iterations += it;
  } else if (ok) {
    ws.vq = p.qdot_des;
    ws.finish(p, ws.z.head(3 * n), ws.vq, r);
  } else {
    r.status |= ID_INFEASIBLE;
    ws.S_set.clear();
    if (n == 0 || !ws.repair(p, false, false, r)) {
      ws.fail(p, r);
    } else {
      for (int i = 0; i < n; ++i)
        if (r.f_n[i] > 0) ws.S_set.push_back(i);
    }
  }
  // support ids for the next call's warm start
  r.n_support = 0;
  for (int i : ws.S_set) r.support[size_t(r.n_support++)] = p.ids.empty() ? i : p.ids[size_t(i)];
  // ---- consistency check (§4.3): every tangent row and the non-penetration rows ----
  const double tol = 1e-6 * (1 + r.v_plus.cwiseAbs().maxCoeff());
  for (int i = 0; i < n; ++i) {
    const double vs = p.S.row(i).dot(r.v_plus), vt = p.T.row(i).dot(r.v_plus);
    const double vn = p.N.row(i).dot(r.v_plus) + p.phi[i] / p.dt;
    if (std::abs(vs) > tol || std::abs(vt) > tol || vn < -tol) r.status |= ID_SLIP;
  }
}

}  // namespace bigstep
