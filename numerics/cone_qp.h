// Small dense cone-constrained convex QP (docs/architecture.md §8).
// Doc: docs/methods/compliant.md §7.2 (the joint program: bounds, linear rows, Coulomb
// second-order cones), §7.5 (the T-step: a QP over disks of fixed radius), §12 item 3 (a header-only
// templated kernel with closed-form projections, warm-started from the previous step).
//
//   minimize   1/2 x^T H x + g^T x          H (n x n) symmetric positive definite
//   subject to A x >= b                      (m general rows)
//              lb <= x <= ub                 (per variable; +-inf or a null pointer = unbounded)
//              ||(x_r, x_s)||_2 <= mu x_n    for each cone (n, r, s); s = -1: |x_r| <= mu x_n (2-D)
//              ||(x_r, x_s)||_2 <= rad       for each disk (r, s);    s = -1: |x_r| <= rad
//
// Method: ADMM in the operator-splitting form of OSQP (Stellato et al., Math. Prog. Comp. 2020),
// docs/methods/compliant.md §12's recommendation for item 3. All constraints are written as one set membership
// z = C x in K, C stacking [A; I (bounded variables); cone selectors; disk selectors] and K the
// product of half-lines [b_j, inf), intervals [lb_i, ub_i], second-order cones K_mu and disks, each
// with a closed-form Euclidean projection Pi_K. With a step size rho, a proximal weight sigma and
// over-relaxation alpha, one iteration is
//   xt = (H + sigma I + rho C^T C)^-1 (sigma x - g + C^T (rho z - y))     (one Cholesky, per solve)
//   zt = C xt,   x <- alpha xt + (1 - alpha) x
//   v  = alpha zt + (1 - alpha) z + y / rho,   z <- Pi_K(v),   y <- rho (v - z)
// so z is always in K and y is always in the normal cone N_K(z): complementarity and dual-cone
// membership hold exactly at every iterate; only the primal residual C x - z and the
// stationarity residual H x + g + C^T y shrink. Multipliers follow that sign: H x + g + C^T y = 0,
// y in N_K(C x) (per block below, ConeQpIterate::y).
//
// Convergence test (OSQP's, in the caller's units, every iteration):
//   ||N (C x - z)||_inf       <= eps_abs + eps_rel max(||N C x||_inf, ||N z||_inf)
//   ||H x + g + C^T y||_inf   <= eps_abs + eps_rel max(||H x||_inf, ||C^T y||_inf, ||g||_inf)
// N divides each A row by its length ||A_j||_2, so every primal residual is a distance in the units
// of x and a stiff row (docs/methods/compliant.md §6: (I + W A) with W up to 1e4) is held to the same accuracy as a soft
// one; the other blocks of C are selectors and already in those units.
// Primal infeasibility (Banjac et al. 2019): dy = y_k - y_{k-1} tends to a certificate; it is
// reported when ||C^T dy||_inf <= eps_inf ||dy||_inf and the support function of K at dy is
// < -eps_inf ||dy||_inf (for a cone block that needs dy in the polar cone). H is positive definite,
// so the problem is never unbounded.
//
// Scaling (why: the paper's programs mix weights 1/h with (10^6/h)^2): variables are scaled by the
// Jacobi factors d_i = H_ii^-1/2 (the tangential pair of a cone or disk shares one factor, so the
// scaled set is again a cone / disk, with mu d_n / d_t and rad / d_t) and every A row is normalised
// to unit length. rho is adapted every adapt_interval iterations from the ratio of the relative
// residuals (OSQP's rule) and the matrix is refactorized only when rho changes by more than 5x.
//
// Cost: O(n^2 + n m) per iteration, O(n^2 (n + m)) per factorization. Measured in
// tests/numerics/cone_qp_test.cpp (eps 1e-10, double; BIGSTEP_CONE_QP_STATS=1 prints them): mean
// 55-160 iterations on random instances up to n = 24 with a tail of a few thousand on nearly
// degenerate ones; spec-shaped N-step ~190, T-step ~80, literal joint program (§7.2) ~830. A warm
// start from the previous solution roughly halves the count. On a GPU cap max_iter and read status.
//
// Kernel form: cone_qp_solve() is BIGSTEP_HD, templated on the scalar, allocation-free, throws
// nothing and runs in a fixed order (deterministic); all scratch comes from the caller
// (cone_qp_scalars() / cone_qp_ints() entries, sized from the maximum n, m, cones, disks).
// A variable may belong to at most one cone or disk (the shared tangential scale needs it).
// ConeQp<S> is the host convenience wrapper: it owns a workspace sized at construction and turns an
// invalid input into InvalidArgument naming the field, element and value.
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/hd.h"

namespace bigstep {

enum class ConeQpStatus : int { Solved, MaxIterations, PrimalInfeasible, InvalidInput };

/// Problem data, all caller-owned; matrices dense row-major. Only the lower triangle of H is read.
template <class S>
struct ConeQpProblem {
  int n = 0;               ///< variables
  int m = 0;               ///< general rows A x >= b
  int n_cone = 0;          ///< second-order cones
  int n_disk = 0;          ///< disks of fixed radius
  const S* H = nullptr;    ///< (n x n) symmetric positive definite
  const S* g = nullptr;    ///< (n)
  const S* A = nullptr;    ///< (m x n)
  const S* b = nullptr;    ///< (m)
  const S* lb = nullptr;   ///< (n) lower bounds, -inf allowed; null = none
  const S* ub = nullptr;   ///< (n) upper bounds, +inf allowed; null = none
  const int* cone = nullptr;  ///< (3 n_cone) index triples (n_i, r_i, s_i), s_i = -1 for a 2-D cone
  const S* mu = nullptr;      ///< (n_cone) >= 0
  const int* disk = nullptr;  ///< (2 n_disk) index pairs (r_i, s_i), s_i = -1 for an interval
  const S* rad = nullptr;     ///< (n_disk) >= 0
};

template <class S>
struct ConeQpSettings {
  S eps_abs = S(1e-9);        ///< absolute residual tolerance (caller's units)
  S eps_rel = S(1e-9);        ///< relative residual tolerance
  S eps_infeasible = S(1e-7); ///< infeasibility certificate tolerance
  int max_iter = 10000;
  S rho = S(0.1);             ///< initial step size on a cold start
  S sigma = S(1e-6);          ///< proximal weight on x
  S alpha = S(1.6);           ///< over-relaxation in (0, 2)
  int adapt_interval = 10;    ///< iterations between rho updates; 0 = fixed rho
  bool scaling = true;        ///< Jacobi variable scaling and unit A rows
};

/// Caller-owned iterate: the warm start on entry (when warm), the solution on return.
/// y has cone_qp_rows() entries: [m rows A][n bounds][3 per cone][2 per disk] with
///   A rows  y_j <= 0, y_j (A_j x - b_j) = 0;
///   bounds  y_i <= 0 where x_i = lb_i, >= 0 where x_i = ub_i, else 0 (0 for unbounded i);
///   cone    (y_n, y_r, y_s) = -w with w in the dual cone (mu ||w_t|| <= w_n), w . (x_n, x_r, x_s) = 0;
///   disk    (y_r, y_s) = c (x_r, x_s), c >= 0, c = 0 unless ||(x_r, x_s)|| = rad;
/// slots of a missing s (2-D cone, interval) stay 0.
template <class S>
struct ConeQpIterate {
  S* x = nullptr;     ///< (n)
  S* y = nullptr;     ///< (cone_qp_rows())
  S rho = S(0);       ///< step size to start from when warm (returned: the final one)
  bool warm = false;  ///< start from x, y, rho instead of 0, 0, settings.rho
};

/// What was wrong with an input (InvalidInput): the field, the element and its value.
enum class ConeQpField : int {
  None, Sizes, Workspace, Iterate, Settings, H, g, A, b, lb, ub, Bounds, Cone, Mu, Disk, Rad, HNotPositiveDefinite
};

struct ConeQpResult {
  ConeQpStatus status = ConeQpStatus::InvalidInput;
  int iterations = 0;
  int factorizations = 0;
  double prim_res = 0;   ///< ||N (C x - z)||_inf at return (A rows per unit length)
  double dual_res = 0;   ///< ||H x + g + C^T y||_inf at return
  ConeQpField bad_field = ConeQpField::None;
  int bad_index = -1;
  double bad_value = 0;
};

/// Rows of y (and of C): m + n + 3 n_cone + 2 n_disk.
BIGSTEP_HD constexpr int cone_qp_rows(int n, int m, int n_cone, int n_disk) { return m + n + 3 * n_cone + 2 * n_disk; }
/// Scalars of scratch a problem of these (maximum) sizes needs.
BIGSTEP_HD constexpr long cone_qp_scalars(int n, int m, int n_cone, int n_disk) {
  return long(n) * n + 5L * n + long(m) + 6L * cone_qp_rows(n, m, n_cone, n_disk);
}
/// Ints of scratch.
BIGSTEP_HD constexpr long cone_qp_ints(int n) { return n; }

template <class S>
struct ConeQpWorkspace {
  S* s = nullptr;
  long n_s = 0;  ///< capacity of s (>= cone_qp_scalars)
  int* i = nullptr;
  long n_i = 0;  ///< capacity of i (>= cone_qp_ints)
};

namespace cone_qp_detail {

template <class S> BIGSTEP_HD bool finite(S v) { return v - v == S(0); }
template <class S> BIGSTEP_HD S max2(S a, S b) { return a > b ? a : b; }
template <class S> BIGSTEP_HD S min2(S a, S b) { return a < b ? a : b; }
template <class S> BIGSTEP_HD S abs1(S a) { return a < 0 ? -a : a; }
template <class S> BIGSTEP_HD S hyp(S a, S b) { using std::sqrt; return sqrt(a * a + b * b); }

/// In-place Cholesky of the row-major n x n lower triangle; false on a pivot <= 0 or not finite.
template <class S>
BIGSTEP_HD bool cholesky(S* L, int n) {
  using std::sqrt;
  for (int j = 0; j < n; ++j) {
    S d = L[j * n + j];
    for (int k = 0; k < j; ++k) d -= L[j * n + k] * L[j * n + k];
    if (!(d > 0) || !finite(d)) return false;
    d = sqrt(d);
    L[j * n + j] = d;
    for (int i = j + 1; i < n; ++i) {
      S s = L[i * n + j];
      for (int k = 0; k < j; ++k) s -= L[i * n + k] * L[j * n + k];
      L[i * n + j] = s / d;
    }
  }
  return true;
}

/// b := (L L^T)^-1 b.
template <class S>
BIGSTEP_HD void cholesky_solve(const S* L, int n, S* b) {
  for (int i = 0; i < n; ++i) {
    S s = b[i];
    for (int k = 0; k < i; ++k) s -= L[i * n + k] * b[k];
    b[i] = s / L[i * n + i];
  }
  for (int i = n - 1; i >= 0; --i) {
    S s = b[i];
    for (int k = i + 1; k < n; ++k) s -= L[k * n + i] * b[k];
    b[i] = s / L[i * n + i];
  }
}

/// Euclidean projection of (a, t) onto {||t|| <= mu a}; t has 1 or 2 entries (t1 unused if !two).
template <class S>
BIGSTEP_HD void project_soc(S& a, S& t0, S& t1, S mu, bool two) {
  if (!two) t1 = S(0);
  const S s = two ? hyp(t0, t1) : abs1(t0);
  if (s <= mu * a) return;                          // inside K
  if (mu * s <= -a) {                               // inside the polar cone: the apex
    a = t0 = t1 = S(0);
    return;
  }
  const S an = (a + mu * s) / (S(1) + mu * mu);     // onto the boundary ray through (1, mu t / s)
  const S f = mu * an / s;
  a = an;
  t0 *= f;
  t1 = two ? t1 * f : S(0);
}

/// Projection of t onto {||t|| <= rad}.
template <class S>
BIGSTEP_HD void project_disk(S& t0, S& t1, S rad, bool two) {
  if (!two) t1 = S(0);
  const S s = two ? hyp(t0, t1) : abs1(t0);
  if (s > rad) {
    const S f = rad / s;
    t0 *= f;
    t1 = two ? t1 * f : S(0);
  }
}

template <class S>
struct Solver {
  const ConeQpProblem<S>& p;
  const ConeQpSettings<S>& st;
  int n, m, R, rB, rC, rD;  // sizes and row offsets of the bound, cone and disk blocks
  S *L = nullptr, *d = nullptr, *xh = nullptr, *rhs = nullptr, *t1 = nullptr, *t2 = nullptr;
  S *an = nullptr, *rs = nullptr, *z = nullptr, *zt = nullptr, *y = nullptr, *yp = nullptr, *tR = nullptr;
  int* grp = nullptr;  // cone / disk a variable belongs to (-1: none)

  BIGSTEP_HD bool has_lb(int i) const { return p.lb && finite(p.lb[i]); }
  BIGSTEP_HD bool has_ub(int i) const { return p.ub && finite(p.ub[i]); }
  BIGSTEP_HD bool bounded(int i) const { return has_lb(i) || has_ub(i); }
  BIGSTEP_HD S Hij(int i, int j) const { return i >= j ? p.H[i * n + j] : p.H[j * n + i]; }

  // out (R) = C x in the caller's units; unused rows are 0.
  BIGSTEP_HD void C_mul(const S* x, S* out) const {
    for (int j = 0; j < m; ++j) {
      S s = 0;
      for (int i = 0; i < n; ++i) s += p.A[j * n + i] * x[i];
      out[j] = s;
    }
    for (int i = 0; i < n; ++i) out[rB + i] = bounded(i) ? x[i] : S(0);
    for (int c = 0; c < p.n_cone; ++c) {
      const int* k = p.cone + 3 * c;
      out[rC + 3 * c] = x[k[0]];
      out[rC + 3 * c + 1] = x[k[1]];
      out[rC + 3 * c + 2] = k[2] >= 0 ? x[k[2]] : S(0);
    }
    for (int c = 0; c < p.n_disk; ++c) {
      const int* k = p.disk + 2 * c;
      out[rD + 2 * c] = x[k[0]];
      out[rD + 2 * c + 1] = k[1] >= 0 ? x[k[1]] : S(0);
    }
  }

  // out (n) = C^T w in the caller's units.
  BIGSTEP_HD void Ct_mul(const S* w, S* out) const {
    for (int i = 0; i < n; ++i) out[i] = bounded(i) ? w[rB + i] : S(0);
    for (int j = 0; j < m; ++j)
      for (int i = 0; i < n; ++i) out[i] += p.A[j * n + i] * w[j];
    for (int c = 0; c < p.n_cone; ++c) {
      const int* k = p.cone + 3 * c;
      out[k[0]] += w[rC + 3 * c];
      out[k[1]] += w[rC + 3 * c + 1];
      if (k[2] >= 0) out[k[2]] += w[rC + 3 * c + 2];
    }
    for (int c = 0; c < p.n_disk; ++c) {
      const int* k = p.disk + 2 * c;
      out[k[0]] += w[rD + 2 * c];
      if (k[1] >= 0) out[k[1]] += w[rD + 2 * c + 1];
    }
  }

  // v := Pi_K(v) in scaled rows (scaled set: b / rs, lb / rs, mu rs_n / rs_t, rad / rs_t).
  BIGSTEP_HD void project(S* v) const {
    for (int j = 0; j < m; ++j) v[j] = max2(v[j], p.b[j] / rs[j]);
    for (int i = 0; i < n; ++i) {
      S& w = v[rB + i];
      if (!bounded(i)) w = 0;
      if (has_lb(i)) w = max2(w, p.lb[i] / rs[rB + i]);
      if (has_ub(i)) w = min2(w, p.ub[i] / rs[rB + i]);
    }
    for (int c = 0; c < p.n_cone; ++c) {
      S* w = v + rC + 3 * c;
      project_soc(w[0], w[1], w[2], p.mu[c] * rs[rC + 3 * c] / rs[rC + 3 * c + 1], p.cone[3 * c + 2] >= 0);
    }
    for (int c = 0; c < p.n_disk; ++c) {
      S* w = v + rD + 2 * c;
      project_disk(w[0], w[1], p.rad[c] / rs[rD + 2 * c], p.disk[2 * c + 1] >= 0);
    }
  }

  // Slots of unbounded variables, of a 2-D cone's s and of an interval's s := 0.
  BIGSTEP_HD void zero_unused(S* v) const {
    for (int i = 0; i < n; ++i)
      if (!bounded(i)) v[rB + i] = 0;
    for (int c = 0; c < p.n_cone; ++c)
      if (p.cone[3 * c + 2] < 0) v[rC + 3 * c + 2] = 0;
    for (int c = 0; c < p.n_disk; ++c)
      if (p.disk[2 * c + 1] < 0) v[rD + 2 * c + 1] = 0;
  }

  // L := chol(D H D + sigma I + rho D C^T Rs^-2 C D).
  BIGSTEP_HD bool factor(S rho) {
    for (int i = 0; i < n; ++i)
      for (int k = 0; k <= i; ++k) {
        S a = 0;
        for (int j = 0; j < m; ++j) a += p.A[j * n + i] * p.A[j * n + k] / (rs[j] * rs[j]);
        S v = d[i] * d[k] * (Hij(i, k) + rho * a);
        if (i == k) v += st.sigma + rho * S(int(bounded(i)) + int(grp[i] >= 0));
        L[i * n + k] = v;
      }
    return cholesky(L, n);
  }

  // Residuals of the current (xh, z, y) in the caller's units; true when converged.
  // Uses t1, t2, tR.
  BIGSTEP_HD bool residuals(S& prim, S& dual, S& prim_sc, S& dual_sc) {
    for (int i = 0; i < n; ++i) t1[i] = d[i] * xh[i];  // x
    C_mul(t1, tR);
    prim = prim_sc = 0;
    for (int j = 0; j < R; ++j) {
      const S zj = rs[j] * z[j], u = j < m ? an[j] : S(1);  // A rows per unit length: units of x
      prim = max2(prim, abs1(tR[j] - zj) / u);
      prim_sc = max2(prim_sc, max2(abs1(tR[j]), abs1(zj)) / u);
    }
    for (int j = 0; j < R; ++j) tR[j] = y[j] / rs[j];  // y
    Ct_mul(tR, t2);
    dual = 0;
    S hx = 0, cty = 0, gg = 0;
    for (int i = 0; i < n; ++i) {
      S s = 0;
      for (int k = 0; k < n; ++k) s += Hij(i, k) * t1[k];
      hx = max2(hx, abs1(s));
      cty = max2(cty, abs1(t2[i]));
      gg = max2(gg, abs1(p.g[i]));
      dual = max2(dual, abs1(s + p.g[i] + t2[i]));
    }
    dual_sc = max2(hx, max2(cty, gg));
    return prim <= st.eps_abs + st.eps_rel * prim_sc && dual <= st.eps_abs + st.eps_rel * dual_sc;
  }

  // dy = (y - yp) / rs certifies infeasibility: C^T dy ~ 0 and sup_{z in K} dy^T z < 0.
  BIGSTEP_HD bool infeasible() {
    S dn = 0;
    for (int j = 0; j < R; ++j) {
      tR[j] = (y[j] - yp[j]) / rs[j];
      dn = max2(dn, abs1(tR[j]));
    }
    if (!(dn > 0)) return false;
    const S tol = st.eps_infeasible * dn;
    Ct_mul(tR, t2);
    for (int i = 0; i < n; ++i)
      if (abs1(t2[i]) > tol) return false;
    S sup = 0;  // support function of K at dy; components below tol count as 0
    for (int j = 0; j < m; ++j) {
      if (tR[j] > tol) return false;  // [b, inf) is unbounded above
      sup += p.b[j] * min2(tR[j], S(0));
    }
    for (int i = 0; i < n; ++i) {
      const S w = tR[rB + i];
      if (w > tol) {
        if (!has_ub(i)) return false;
        sup += p.ub[i] * w;
      } else if (w < -tol) {
        if (!has_lb(i)) return false;
        sup += p.lb[i] * w;
      }
    }
    for (int c = 0; c < p.n_cone; ++c) {  // a cone's support is 0 on its polar cone, else +inf
      const S* w = tR + rC + 3 * c;
      if (p.mu[c] * hyp(w[1], w[2]) > -w[0] + tol) return false;
    }
    for (int c = 0; c < p.n_disk; ++c) sup += p.rad[c] * hyp(tR[rD + 2 * c], tR[rD + 2 * c + 1]);
    return sup < -tol;
  }
};

/// Checks sizes, pointers, finiteness, index ranges and the one-group-per-variable rule; fills
/// grp (n ints) on success.
template <class S>
BIGSTEP_HD bool validate(const ConeQpProblem<S>& p, const ConeQpWorkspace<S>& w, ConeQpResult& r) {
  auto bad = [&r](ConeQpField f, int i, double v) {
    r.bad_field = f;
    r.bad_index = i;
    r.bad_value = v;
    return false;
  };
  const int n = p.n;
  if (n < 1 || p.m < 0 || p.n_cone < 0 || p.n_disk < 0) return bad(ConeQpField::Sizes, -1, n);
  if (w.n_s < cone_qp_scalars(n, p.m, p.n_cone, p.n_disk) || w.n_i < cone_qp_ints(n) || !w.s || !w.i)
    return bad(ConeQpField::Workspace, -1, double(w.n_s));
  if (!p.H) return bad(ConeQpField::H, -1, 0);
  if (!p.g) return bad(ConeQpField::g, -1, 0);
  if (p.m > 0 && !p.A) return bad(ConeQpField::A, -1, 0);
  if (p.m > 0 && !p.b) return bad(ConeQpField::b, -1, 0);
  if (p.n_cone > 0 && (!p.cone || !p.mu)) return bad(ConeQpField::Cone, -1, 0);
  if (p.n_disk > 0 && (!p.disk || !p.rad)) return bad(ConeQpField::Disk, -1, 0);
  for (int i = 0; i < n * n; ++i)
    if (!finite(p.H[i])) return bad(ConeQpField::H, i, double(p.H[i]));
  for (int i = 0; i < n; ++i) {
    if (!finite(p.g[i])) return bad(ConeQpField::g, i, double(p.g[i]));
    if (!(p.H[i * n + i] > 0)) return bad(ConeQpField::HNotPositiveDefinite, i, double(p.H[i * n + i]));
    const S lo = p.lb ? p.lb[i] : S(-1), hi = p.ub ? p.ub[i] : S(1);
    if (lo != lo || (!finite(lo) && lo > 0)) return bad(ConeQpField::lb, i, double(lo));  // NaN or +inf
    if (hi != hi || (!finite(hi) && hi < 0)) return bad(ConeQpField::ub, i, double(hi));  // NaN or -inf
    if (p.lb && p.ub && lo > hi) return bad(ConeQpField::Bounds, i, double(lo - hi));
  }
  for (int i = 0; i < p.m * n; ++i)
    if (!finite(p.A[i])) return bad(ConeQpField::A, i, double(p.A[i]));
  for (int j = 0; j < p.m; ++j)
    if (!finite(p.b[j])) return bad(ConeQpField::b, j, double(p.b[j]));
  int* grp = w.i;
  for (int i = 0; i < n; ++i) grp[i] = -1;
  // a variable joins one group only: cones are groups 0..n_cone-1, disks follow
  auto join = [&](const int* k, int size, int group, ConeQpField f, int elem) {
    for (int a = 0; a < size; ++a) {
      const bool optional = a == size - 1;  // s may be -1
      if (optional && k[a] == -1) continue;
      if (k[a] < 0 || k[a] >= n || grp[k[a]] >= 0) return bad(f, size * elem + a, k[a]);
      grp[k[a]] = group;
    }
    return true;
  };
  for (int c = 0; c < p.n_cone; ++c) {
    if (!join(p.cone + 3 * c, 3, c, ConeQpField::Cone, c)) return false;
    if (!finite(p.mu[c]) || p.mu[c] < 0) return bad(ConeQpField::Mu, c, double(p.mu[c]));
  }
  for (int c = 0; c < p.n_disk; ++c) {
    if (!join(p.disk + 2 * c, 2, p.n_cone + c, ConeQpField::Disk, c)) return false;
    if (!finite(p.rad[c]) || p.rad[c] < 0) return bad(ConeQpField::Rad, c, double(p.rad[c]));
  }
  return true;
}

}  // namespace cone_qp_detail

/// Solves p from it (warm or cold); writes it.x, it.y, it.rho. Allocation-free, no exceptions.
template <class S>
BIGSTEP_HD ConeQpResult cone_qp_solve(const ConeQpProblem<S>& p, const ConeQpSettings<S>& st, ConeQpIterate<S>& it,
                                      const ConeQpWorkspace<S>& ws) {
  using namespace cone_qp_detail;
  using std::sqrt;
  ConeQpResult res;
  if (!validate(p, ws, res)) return res;
  if (!it.x || !it.y) {
    res.bad_field = ConeQpField::Iterate;
    return res;
  }
  if (!(st.rho > 0 && st.sigma > 0 && st.alpha > 0 && st.alpha < 2 && st.eps_abs >= 0 && st.eps_rel >= 0 &&
        st.eps_infeasible >= 0 && st.max_iter >= 0 && st.adapt_interval >= 0)) {
    res.bad_field = ConeQpField::Settings;
    return res;
  }
  const int n = p.n, m = p.m, R = cone_qp_rows(n, m, p.n_cone, p.n_disk);
  // carve the workspace: L (n x n), then 5 vectors of n, one of m and 6 of R
  S* s = ws.s;
  Solver<S> q{p, st, n, m, R, m, m + n, m + n + 3 * p.n_cone};
  q.L = s, s += long(n) * n;
  q.d = s, s += n;
  q.xh = s, s += n;
  q.rhs = s, s += n;
  q.t1 = s, s += n;
  q.t2 = s, s += n;
  q.an = s, s += m;
  q.rs = s, s += R;
  q.z = s, s += R;
  q.zt = s, s += R;
  q.y = s, s += R;
  q.yp = s, s += R;
  q.tR = s;
  q.grp = ws.i;

  // scaling: d = H_ii^-1/2, one factor per tangential pair; rs = row scale (caller = rs * scaled)
  for (int i = 0; i < n; ++i) q.d[i] = st.scaling ? S(1) / sqrt(p.H[i * n + i]) : S(1);
  auto share = [&](int r, int t) {
    if (t < 0) return;
    q.d[r] = q.d[t] = sqrt(q.d[r] * q.d[t]);
  };
  for (int c = 0; c < p.n_cone; ++c) share(p.cone[3 * c + 1], p.cone[3 * c + 2]);
  for (int c = 0; c < p.n_disk; ++c) share(p.disk[2 * c], p.disk[2 * c + 1]);
  for (int j = 0; j < m; ++j) {
    S a = 0, u = 0;
    for (int i = 0; i < n; ++i) {
      a += (p.A[j * n + i] * q.d[i]) * (p.A[j * n + i] * q.d[i]);
      u += p.A[j * n + i] * p.A[j * n + i];
    }
    q.rs[j] = st.scaling && a > 0 ? sqrt(a) : S(1);
    q.an[j] = u > 0 ? sqrt(u) : S(1);
  }
  for (int i = 0; i < n; ++i) q.rs[q.rB + i] = q.d[i];
  for (int c = 0; c < p.n_cone; ++c)
    for (int a = 0; a < 3; ++a) q.rs[q.rC + 3 * c + a] = p.cone[3 * c + a] >= 0 ? q.d[p.cone[3 * c + a]] : S(1);
  for (int c = 0; c < p.n_disk; ++c)
    for (int a = 0; a < 2; ++a) q.rs[q.rD + 2 * c + a] = p.disk[2 * c + a] >= 0 ? q.d[p.disk[2 * c + a]] : S(1);

  // H positive definite? (D H D in L; the ADMM matrix alone would hide an indefinite H)
  S rho = it.warm && it.rho > 0 && finite(it.rho) ? it.rho : st.rho;
  for (int i = 0; i < n; ++i)
    for (int k = 0; k <= i; ++k) q.L[i * n + k] = q.d[i] * q.d[k] * q.Hij(i, k);
  if (!cholesky(q.L, n)) {
    res.bad_field = ConeQpField::HNotPositiveDefinite;
    return res;
  }
  if (!q.factor(rho)) {
    res.bad_field = ConeQpField::HNotPositiveDefinite;
    return res;
  }
  res.factorizations = 1;

  // start: x (scaled), v = C x + y / rho, z = Pi(v), y = rho (v - z), so that y in N_K(z)
  for (int i = 0; i < n; ++i) q.xh[i] = it.warm ? it.x[i] / q.d[i] : S(0);
  for (int i = 0; i < n; ++i) q.t1[i] = q.d[i] * q.xh[i];
  q.C_mul(q.t1, q.zt);
  for (int j = 0; j < R; ++j) {
    q.y[j] = it.warm ? it.y[j] * q.rs[j] : S(0);
    q.z[j] = q.zt[j] / q.rs[j] + q.y[j] / rho;
    q.zt[j] = q.z[j];
  }
  q.project(q.z);
  for (int j = 0; j < R; ++j) q.y[j] = rho * (q.zt[j] - q.z[j]);
  q.zero_unused(q.y);  // a warm y may carry values in slots no constraint uses

  S prim, dual, prim_sc, dual_sc;
  bool done = q.residuals(prim, dual, prim_sc, dual_sc);
  res.status = done ? ConeQpStatus::Solved : ConeQpStatus::MaxIterations;
  const S alpha = st.alpha;
  for (int k = 1; k <= st.max_iter && !done; ++k) {
    res.iterations = k;
    // x step: (D H D + sigma I + rho Ch^T Ch) xt = sigma xh - D g + Ch^T (rho z - y), Ch = Rs^-1 C D
    for (int j = 0; j < R; ++j) q.tR[j] = (rho * q.z[j] - q.y[j]) / q.rs[j];
    q.Ct_mul(q.tR, q.t2);
    for (int i = 0; i < n; ++i) q.rhs[i] = st.sigma * q.xh[i] + q.d[i] * (q.t2[i] - p.g[i]);
    cholesky_solve(q.L, n, q.rhs);
    // z step with over-relaxation; y is the scaled residual of the projection
    for (int i = 0; i < n; ++i) q.t1[i] = q.d[i] * q.rhs[i];
    q.C_mul(q.t1, q.zt);
    for (int i = 0; i < n; ++i) q.xh[i] = alpha * q.rhs[i] + (S(1) - alpha) * q.xh[i];
    for (int j = 0; j < R; ++j) {
      q.yp[j] = q.y[j];
      q.zt[j] = alpha * q.zt[j] / q.rs[j] + (S(1) - alpha) * q.z[j] + q.y[j] / rho;  // v
      q.z[j] = q.zt[j];
    }
    q.project(q.z);
    for (int j = 0; j < R; ++j) q.y[j] = rho * (q.zt[j] - q.z[j]);

    if (q.residuals(prim, dual, prim_sc, dual_sc)) {
      res.status = ConeQpStatus::Solved;
      break;
    }
    if (q.infeasible()) {
      res.status = ConeQpStatus::PrimalInfeasible;
      break;
    }
    // rho update (OSQP): balance the relative primal and dual residuals; refactor on a 5x change
    if (st.adapt_interval > 0 && k % st.adapt_interval == 0) {
      const S tiny = S(1e-30);
      const S rp = prim / max2(prim_sc, tiny), rd = dual / max2(dual_sc, tiny);
      S rn = rho * sqrt(rp / max2(rd, tiny));
      rn = min2(max2(rn, S(1e-6)), S(1e6));
      if (rn > S(5) * rho || rn < rho / S(5)) {
        rho = rn;
        q.factor(rho);  // D H D is positive definite (checked), so this succeeds
        ++res.factorizations;
      }
    }
  }
  // back to the caller's units
  for (int i = 0; i < n; ++i) it.x[i] = q.d[i] * q.xh[i];
  for (int j = 0; j < R; ++j) it.y[j] = q.y[j] / q.rs[j];
  it.rho = rho;
  res.prim_res = double(prim);
  res.dual_res = double(dual);
  return res;
}

inline const char* cone_qp_status_name(ConeQpStatus s) {
  switch (s) {
    case ConeQpStatus::Solved: return "solved";
    case ConeQpStatus::MaxIterations: return "max_iterations";
    case ConeQpStatus::PrimalInfeasible: return "primal_infeasible";
    case ConeQpStatus::InvalidInput: return "invalid_input";
  }
  return "?";
}

/// "cone_qp.<field>[index] = value: expectation" for an InvalidInput result.
inline std::string cone_qp_input_error(const ConeQpResult& r) {
  const char* field = "?";
  const char* expect = "";
  switch (r.bad_field) {
    case ConeQpField::None: field = "none"; break;
    case ConeQpField::Sizes: field = "n"; expect = "n >= 1 and m, n_cone, n_disk >= 0"; break;
    case ConeQpField::Workspace: field = "workspace"; expect = "cone_qp_scalars() scalars and cone_qp_ints() ints"; break;
    case ConeQpField::Iterate: field = "iterate"; expect = "x (n) and y (cone_qp_rows) buffers"; break;
    case ConeQpField::Settings: field = "settings"; expect = "rho, sigma > 0, alpha in (0, 2), tolerances and counts >= 0"; break;
    case ConeQpField::H: field = "H"; expect = "given and finite"; break;
    case ConeQpField::g: field = "g"; expect = "given and finite"; break;
    case ConeQpField::A: field = "A"; expect = "given (m > 0) and finite"; break;
    case ConeQpField::b: field = "b"; expect = "given (m > 0) and finite"; break;
    case ConeQpField::lb: field = "lb"; expect = "a number or -inf"; break;
    case ConeQpField::ub: field = "ub"; expect = "a number or +inf"; break;
    case ConeQpField::Bounds: field = "lb - ub"; expect = "lb <= ub"; break;
    case ConeQpField::Cone: field = "cone"; expect = "indices in [0, n) (s may be -1), each variable in one cone or disk only"; break;
    case ConeQpField::Mu: field = "mu"; expect = "finite and >= 0"; break;
    case ConeQpField::Disk: field = "disk"; expect = "indices in [0, n) (s may be -1), each variable in one cone or disk only"; break;
    case ConeQpField::Rad: field = "rad"; expect = "finite and >= 0"; break;
    case ConeQpField::HNotPositiveDefinite: field = "H"; expect = "symmetric positive definite (lower triangle read)"; break;
  }
  return detail::concat("cone_qp.", field, "[", r.bad_index, "] = ", r.bad_value, ": ", expect);
}

/// Host wrapper: a workspace sized once for the maximum sizes; solve() throws InvalidArgument
/// (naming field, element and value) on bad input and otherwise allocates nothing. An H that is
/// not positive definite is not thrown: it is a property of the problem a step assembled from its
/// state (not a caller's mistake), returned as InvalidInput with bad_field HNotPositiveDefinite so
/// that the step fails and flags its rollout instead of ending the run.
template <class S>
class ConeQp {
 public:
  ConeQp(int n_max, int m_max, int n_cone_max, int n_disk_max)
      : n_max_(n_max), m_max_(m_max), n_cone_max_(n_cone_max), n_disk_max_(n_disk_max),
        s_(size_t(cone_qp_scalars(n_max, m_max, n_cone_max, n_disk_max))), i_(size_t(cone_qp_ints(n_max))) {
    BIGSTEP_CHECK_ARG(n_max >= 1 && m_max >= 0 && n_cone_max >= 0 && n_disk_max >= 0, "cone_qp.sizes",
                      detail::concat(n_max, ",", m_max, ",", n_cone_max, ",", n_disk_max), "n_max >= 1, others >= 0");
  }
  ConeQpResult solve(const ConeQpProblem<S>& p, ConeQpIterate<S>& it, const ConeQpSettings<S>& st = {}) {
    BIGSTEP_CHECK_ARG(p.n <= n_max_ && p.m <= m_max_ && p.n_cone <= n_cone_max_ && p.n_disk <= n_disk_max_,
                      "cone_qp.sizes (n,m,n_cone,n_disk)", detail::concat(p.n, ",", p.m, ",", p.n_cone, ",", p.n_disk),
                      detail::concat("at most the workspace's ", n_max_, ",", m_max_, ",", n_cone_max_, ",", n_disk_max_));
    BIGSTEP_CHECK_ARG(it.x && it.y, "cone_qp.iterate", "null", "x (n) and y (cone_qp_rows) buffers");
    const ConeQpResult r = cone_qp_solve(p, st, it, workspace());
    if (r.status == ConeQpStatus::InvalidInput && r.bad_field != ConeQpField::HNotPositiveDefinite) throw_invalid(r);
    return r;
  }
  ConeQpWorkspace<S> workspace() { return {s_.data(), long(s_.size()), i_.data(), long(i_.size())}; }

 private:
  [[noreturn]] static void throw_invalid(const ConeQpResult& r);
  int n_max_, m_max_, n_cone_max_, n_disk_max_;
  std::vector<S> s_;
  std::vector<int> i_;
};

template <class S>
void ConeQp<S>::throw_invalid(const ConeQpResult& r) {
  throw InvalidArgument(cone_qp_input_error(r));
}

}  // namespace bigstep
