// Disk-constrained convex QP by a primal-dual interior-point method: the compliant T-step's
// program (docs/methods/compliant.md §7.5: a QP over disks of fixed radius mu y_i) when ADMM
// (numerics/cone_qp.h) does not settle.
//
//   minimize   1/2 x^T H x + g^T x          H (n x n) symmetric positive semidefinite
//   subject to ||(x_r, x_s)||_2 <= rad       for each disk (r, s);  s = -1: |x_r| <= rad
//
// Why a second method: with the feet off the symmetric rest pose (a box tilted by 0.01 rad on the
// incline) H = I / wmax^2 + Qs^T Qs has eigenvalues 1e-12 below its largest along the tangential
// directions the body cannot move in. ADMM's rate follows that conditioning: it ran its 20000
// iterations on 10 T-steps per step and took the step 30x longer (bench/experiments/notes/compliant.md "Tilted boxes").
// An interior-point method's Newton steps do not depend on the conditioning in that way, and the
// problem is tiny (n = 2 per contact), so a dense Cholesky per iteration is cheap.
//
// Method (Nocedal & Wright, Numerical Optimization, 2nd ed., §19.1-19.3, with slacks as in IPOPT):
// each disk is c_i(x) = rad_i^2 - ||x_i||^2 = s_i, s_i >= 0, with multiplier lambda_i >= 0. KKT with
// the complementarity relaxed to lambda_i s_i = mu_t:
//   r_d = H x + g + sum_i 2 lambda_i x_i = 0,   r_p,i = c_i(x) - s_i = 0,   r_c,i = lambda_i s_i - mu_t = 0.
// Linearising (dc_i = -2 x_i^T dx_i), ds_i = r_p,i - 2 x_i^T dx_i and dlambda_i = (-r_c,i - lambda_i ds_i) / s_i
// leave one symmetric positive definite system in dx:
//   (H + sum_i [2 lambda_i I_i + (4 lambda_i / s_i) x_i x_i^T]) dx = -r_d + sum_i 2 x_i (r_c,i + lambda_i r_p,i) / s_i
// (every variable of a disk with lambda_i > 0 gets 2 lambda_i; a variable outside every disk needs H
// positive on it). Primal (x, s) and dual (lambda) steps each stop 0.99 of the way to s = 0 and
// lambda = 0. Why slacks: without them (x kept strictly inside its circle) the step
// was cut by the circle every iteration and the method stalled on the boundary with r_d ~ 0.2.
// A disk of radius 0 pins its variables at 0 (they leave the system). Start: x = 0, s_i = rad_i^2,
// lambda_i = max(1, ||g||_inf) / rad_i, so that 2 lambda_i x_i is of the size of g.
// The barrier parameter mu_t starts at max(1, ||g||_inf) rad_max and falls 10x whenever the relaxed
// system's error is below 10 mu_t (N&W Algorithm 19.1), down to eps times its start. Stop when
// ||r_d||_inf <= eps (max(1, ||g||_inf) + ||H x||_inf), |r_p,i| <= eps_p rad_max^2 and every
// lambda_i s_i <= 2 eps max(1, ||g||_inf) rad_max; then x_i is put back on its circle if r_p left it
// outside by that much.
//
// Multipliers in cone_qp.h's convention (H x + g + y = 0 on a disk's rows): y_i = 2 lambda_i x_i.
// Kernel form as cone_qp.h: BIGSTEP_HD, templated, allocation-free on caller scratch
// (disk_qp_ipm_scalars / disk_qp_ipm_ints), no exceptions, fixed order (deterministic).
#pragma once
#include <cmath>

#include "core/hd.h"
#include "numerics/cone_qp.h"

namespace bigstep {

template <class S>
struct DiskQpIpmSettings {
  S eps = S(1e-12);     ///< relative tolerance of stationarity and complementarity (above)
  /// relative tolerance of |r_p,i| / rad_max^2. Looser: along the directions where H is flat to
  /// 1e-12 the Newton matrix is as ill-conditioned, and at the final mu_t the slack equality of an
  /// inactive disk wanders by up to 6e-9 from one Newton step to the next (the tilted-box T-steps);
  /// the objective does not see it, and x is put back on its circle at the end.
  S eps_p = S(1e-8);
  int max_iter = 200;
  S to_boundary = S(0.99);
};

struct DiskQpIpmResult {
  ConeQpStatus status = ConeQpStatus::InvalidInput;  ///< Solved, MaxIterations or InvalidInput
  int iterations = 0;
  double dual_res = 0;   ///< ||r_d||_inf at return
  double comp = 0;       ///< max_i lambda_i c_i at return
};

/// Scratch of a problem with n variables and n_disk disks.
BIGSTEP_HD constexpr long disk_qp_ipm_scalars(int n, int n_disk) { return long(n) * n + 6L * n + 3L * n_disk; }
BIGSTEP_HD constexpr long disk_qp_ipm_ints(int n) { return n; }

/// Solves p (only n, H (lower triangle read), g, n_disk, disk, rad are used; m, n_cone and bounds
/// must be absent). x (n) receives the solution; y (2 n_disk, may be null) the disks' multipliers
/// in cone_qp.h's order. InvalidInput for a problem of another kind, a negative radius, or a system
/// that is not positive definite (a variable outside every disk where H is singular).
template <class S>
BIGSTEP_HD DiskQpIpmResult disk_qp_ipm_solve(const ConeQpProblem<S>& p, const DiskQpIpmSettings<S>& st, S* x, S* y,
                                             S* work, int* owner) {
  DiskQpIpmResult res;
  const int n = p.n, nd = p.n_disk;
  if (n < 1 || p.m != 0 || p.n_cone != 0 || p.lb || p.ub || !p.H || !p.g || (nd > 0 && (!p.disk || !p.rad)))
    return res;
  S* K = work;                 // (n x n) Newton matrix, then its Cholesky factor (lower)
  S* rd = K + long(n) * n;     // (n) dual residual
  S* dx = rd + n;              // (n) Newton step
  S* hx = dx + n;              // (n) H x
  S* lam = hx + n;             // (nd) multipliers
  S* sl = lam + nd;            // (nd) slacks s_i
  S* rp = sl + nd;             // (nd) primal residuals rad^2 - ||x_i||^2 - s_i
  S* kd = rp + nd;             // (n) K's diagonal (K itself stays in the upper triangle)
  S* rhs = kd + n;             // (n) right-hand side
  S* ex = rhs + n;             // (n) refinement residual, then its correction
  // which disk owns each variable (-1: none; -2: a pinned disk, rad 0)
  for (int i = 0; i < n; ++i) owner[i] = -1;
  S gmax = S(1), rmax = S(0);
  for (int i = 0; i < n; ++i) gmax = fmax(gmax, fabs(p.g[i]));
  for (int d = 0; d < nd; ++d) {
    const int r = p.disk[2 * d], s = p.disk[2 * d + 1];
    if (!(p.rad[d] >= S(0)) || r < 0 || r >= n || s >= n) return res;
    owner[r] = p.rad[d] > S(0) ? d : -2;
    if (s >= 0) owner[s] = owner[r];
    rmax = fmax(rmax, p.rad[d]);
  }
  auto xs = [&](int d, int k) -> S { const int j = p.disk[2 * d + k]; return j >= 0 ? x[j] : S(0); };
  auto dxs = [&](int d, int k) -> S { const int j = p.disk[2 * d + k]; return j >= 0 ? dx[j] : S(0); };
  // start: x = 0, s_i = rad_i^2, lambda_i s_i = gmax rad_i
  for (int i = 0; i < n; ++i) x[i] = S(0);
  for (int d = 0; d < nd; ++d) {
    lam[d] = p.rad[d] > S(0) ? gmax / p.rad[d] : S(0);
    sl[d] = p.rad[d] * p.rad[d];
  }
  // barrier parameter mu_t (N&W Algorithm 19.1): Newton steps on the KKT system relaxed to
  // lambda_i s_i = mu_t until its error is below kappa mu_t, then mu_t <- mu_t / 10
  S mu_t = gmax * fmax(rmax, S(1e-300));
  const S mu_scale = mu_t, mu_floor = st.eps * mu_scale;
  for (int it = 0;; ++it) {
    // residuals: r_d = H x + g + 2 lambda_i x_i, r_p,i, complementarity (0 and mu_t targets)
    S hmax = S(0), rdmax = S(0), rpmax = S(0), comp = S(0), dev = S(0);
    for (int i = 0; i < n; ++i) {
      S h = S(0);
      for (int j = 0; j < n; ++j) h += (j <= i ? p.H[long(i) * n + j] : p.H[long(j) * n + i]) * x[j];
      hx[i] = h;
      hmax = fmax(hmax, fabs(h));
      rd[i] = h + p.g[i] + (owner[i] >= 0 ? S(2) * lam[owner[i]] * x[i] : S(0));
      if (owner[i] != -2) rdmax = fmax(rdmax, fabs(rd[i]));
    }
    for (int d = 0; d < nd; ++d) {
      if (!(p.rad[d] > S(0))) continue;
      const S x0 = xs(d, 0), x1 = xs(d, 1);
      rp[d] = p.rad[d] * p.rad[d] - (x0 * x0 + x1 * x1) - sl[d];
      rpmax = fmax(rpmax, fabs(rp[d]));
      comp = fmax(comp, lam[d] * sl[d]);
      dev = fmax(dev, fabs(lam[d] * sl[d] - mu_t));
    }
    const S e_d = rdmax / (gmax + hmax), e_p = rpmax / fmax(rmax * rmax, S(1e-300));
    res.iterations = it;
    res.dual_res = double(rdmax);
    res.comp = double(comp);
    if (e_d <= st.eps && e_p <= st.eps_p && comp <= S(2) * mu_floor) {
      res.status = ConeQpStatus::Solved;
      break;
    }
    if (it >= st.max_iter) {
      res.status = ConeQpStatus::MaxIterations;
      break;
    }
    // the relaxed system is solved well enough for this mu_t: lower it (kappa = 10)
    if (fmax(e_d, e_p) <= S(10) * mu_t / mu_scale && dev <= S(10) * mu_t) mu_t = fmax(S(0.1) * mu_t, mu_floor);
    // Newton system: K = H + 2 lambda_i I_i + (4 lambda_i / s_i) x_i x_i^T,
    // rhs = -r_d + 2 x_i (r_c,i + lambda_i r_p,i) / s_i
    const S target = mu_t;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j <= i; ++j) {
        S k = p.H[long(i) * n + j];
        if (owner[i] == -2 || owner[j] == -2) k = i == j ? S(1) : S(0);
        else if (owner[i] >= 0 && owner[i] == owner[j]) {
          const int d = owner[i];
          k += S(4) * lam[d] / sl[d] * x[i] * x[j] + (i == j ? S(2) * lam[d] : S(0));
        }
        K[long(i) * n + j] = k;
        if (j < i) K[long(j) * n + i] = k;
        else kd[i] = k;
      }
    for (int i = 0; i < n; ++i) {
      const int d = owner[i];
      rhs[i] = d == -2 ? S(0)
                       : -rd[i] + (d >= 0 ? S(2) * x[i] * (lam[d] * sl[d] - target + lam[d] * rp[d]) / sl[d] : S(0));
    }
    // Cholesky K = L L^T in the lower triangle (K stays in the upper one and kd)
    for (int j = 0; j < n; ++j) {
      S djj = K[long(j) * n + j];
      for (int k = 0; k < j; ++k) djj -= K[long(j) * n + k] * K[long(j) * n + k];
      if (!(djj > S(0))) return res;  // not positive definite: InvalidInput
      const S ljj = sqrt(djj);
      K[long(j) * n + j] = ljj;
      for (int i = j + 1; i < n; ++i) {
        S v = K[long(i) * n + j];
        for (int k = 0; k < j; ++k) v -= K[long(i) * n + k] * K[long(j) * n + k];
        K[long(i) * n + j] = v / ljj;
      }
    }
    // L L^T v = b in place
    auto solve = [&](S* v) {
      for (int i = 0; i < n; ++i) {
        S a = v[i];
        for (int k = 0; k < i; ++k) a -= K[long(i) * n + k] * v[k];
        v[i] = a / K[long(i) * n + i];
      }
      for (int i = n - 1; i >= 0; --i) {
        S a = v[i];
        for (int k = i + 1; k < n; ++k) a -= K[long(k) * n + i] * v[k];
        v[i] = a / K[long(i) * n + i];
      }
    };
    // dx, then two steps of iterative refinement: K's condition reaches 1e13 along H's flat
    // directions, where one solve leaves errors of 1e-3 relative in dx; each refinement shrinks them by
    // about cond * 1e-16 (the sweeps of the staggered loop settle only when x is reproducible there)
    for (int i = 0; i < n; ++i) dx[i] = rhs[i];
    solve(dx);
    for (int pass = 0; pass < 2; ++pass) {
      for (int i = 0; i < n; ++i) {
        S a = rhs[i] - kd[i] * dx[i];
        for (int j = 0; j < n; ++j)
          if (j != i) a -= K[long(i < j ? i : j) * n + (i < j ? j : i)] * dx[j];
        ex[i] = a;
      }
      solve(ex);
      for (int i = 0; i < n; ++i) dx[i] += ex[i];
    }
    // ds_i = r_p,i - 2 x_i . dx_i, dlambda_i = (-r_c,i - lambda_i ds_i) / s_i; primal (x, s) and dual
    // (lambda) step lengths each stop 0.99 of the way to their bound (IPOPT's fraction to the boundary)
    S ap = S(1), ad = S(1);
    for (int d = 0; d < nd; ++d) {
      if (!(p.rad[d] > S(0))) continue;
      const S ds = rp[d] - S(2) * (xs(d, 0) * dxs(d, 0) + xs(d, 1) * dxs(d, 1));
      const S dl = (-(lam[d] * sl[d] - target) - lam[d] * ds) / sl[d];
      if (ds < S(0)) ap = fmin(ap, -st.to_boundary * sl[d] / ds);
      if (dl < S(0)) ad = fmin(ad, -st.to_boundary * lam[d] / dl);
      rp[d] = ds;  // r_p is not needed any more this iteration: it keeps ds for the update
    }
    for (int d = 0; d < nd; ++d) {
      if (!(p.rad[d] > S(0))) continue;
      const S ds = rp[d];
      const S dl = (-(lam[d] * sl[d] - target) - lam[d] * ds) / sl[d];
      sl[d] += ap * ds;
      lam[d] += ad * dl;
    }
    for (int i = 0; i < n; ++i) x[i] += ap * dx[i];
  }
  // the slack's equality holds to eps rad^2: x_i may lie outside its circle by that much; put it on it
  for (int d = 0; d < nd; ++d) {
    const S x0 = xs(d, 0), x1 = xs(d, 1), nx = sqrt(x0 * x0 + x1 * x1);
    if (nx > p.rad[d])
      for (int k = 0; k < 2; ++k)
        if (p.disk[2 * d + k] >= 0) x[p.disk[2 * d + k]] *= nx > S(0) ? p.rad[d] / nx : S(0);
  }
  // y_i = 2 lambda_i x_i; a pinned disk's y is whatever holds its variables at 0: -(H x + g)
  if (y)
    for (int d = 0; d < nd; ++d)
      for (int k = 0; k < 2; ++k) {
        const int j = p.disk[2 * d + k];
        y[2 * d + k] = j < 0 ? S(0) : p.rad[d] > S(0) ? S(2) * lam[d] * x[j] : -(hx[j] + p.g[j]);
      }
  return res;
}

}  // namespace bigstep
