// LM iteration, docs/methods/pbfd.md §5.1 (Eq. 14 update with the Nielsen lambda schedule).
#include "numerics/lm.h"

#include "numerics/dense_small.h"

#include <cmath>
#include <limits>

namespace bigstep {

LmResult levenberg_marquardt(LmObjective& f, VecX& x, const LmSettings& s, LmWorkspace& w) {
  LmResult res;
  double F, Fc;
  VecX &g = w.g, &gc = w.gc, &delta = w.delta, &xc = w.xc;
  MatX &B = w.B, &Bc = w.Bc, &A = w.A;
  double r, rc;
  f.evaluate(x, F, g, B, r);
  res.residual = r;
  if (!std::isfinite(F) || !g.allFinite() || !B.allFinite()) {
    res.outcome = LmOutcome::NonFinite;
    return res;
  }
  const double tol = s.eps_r * s.scale;
  // Departure from docs/methods/pbfd.md §5.1 (a choice, A5): warm-started lambda. B = J_r^T J_r
  // squares J_r's condition (translations of the whole body against the last link's rotation:
  // cond(B) ~ 1e8 on the floating chain), so 1e-3 max_i B_ii damps the small directions for many
  // iterations while the Nielsen schedule lowers lambda by at most 3x per iteration: 13 LM
  // iterations per free-fall step where Newton needs 1-2. The previous step's final lambda is the
  // right size for the next (same scene a dt later); rejections raise it as usual. It stays above
  // kLambdaFloor max_i B_ii (lm.h) so that cond(B + lambda I) <= 1e10.
  const double bmax = B.diagonal().maxCoeff();
  double lambda = s.lambda0 > 0 ? std::max(s.lambda0, kLambdaFloor * std::max(1.0, bmax)) : std::max(1e-3 * bmax, 1e-12);
  double nu = 2;
  for (int it = 0;; ++it) {
    res.iterations = it;
    res.residual = r;
    res.lambda = lambda;
    if (r <= tol) {
      res.outcome = LmOutcome::Converged;
      return res;
    }
    if (it >= s.it_max || lambda > 1e16 * std::max(1.0, B.diagonal().maxCoeff())) {
      res.outcome = LmOutcome::NotConverged;
      return res;
    }
    // solve (B + lambda I) delta = -g; a failed factorization raises lambda (<= 30 times).
    // The small dense Cholesky of dense_small.h in place of Eigen's LLT: at n = 15 Eigen's
    // unblocked LLT spends most of its ~5 K instructions in GEMV calls per column
    const int n = int(B.rows());
    bool factored = false;
    for (int tries = 0; tries < 30 && !factored; ++tries) {
      A = B;
      A.diagonal().array() += lambda;
      if (cholesky_inplace(A, n)) {
        factored = true;
      } else {
        lambda *= nu;
        nu *= 2;
      }
    }
    if (!factored) {
      res.outcome = LmOutcome::FactorFailed;
      return res;
    }
    delta = -g;
    forward_subst(A, delta, n);
    backward_subst_transposed(A, delta, n);
    if (delta.lpNorm<Eigen::Infinity>() <= s.eps_x * (s.eps_x + x.lpNorm<Eigen::Infinity>())) {
      res.outcome = r <= 100 * tol ? LmOutcome::SmallStep : LmOutcome::NotConverged;
      return res;
    }
    xc = x + delta;
    // F at the candidate; with full_at_candidate also g, B there (same decisions, one evaluation
    // per accepted candidate instead of two); an inadmissible candidate is rejected as F = inf
    bool evaluated = f.full_at_candidate();
    if (!f.admissible(xc)) {
      Fc = std::numeric_limits<double>::infinity();
      evaluated = false;
    } else if (evaluated) {
      f.evaluate(xc, Fc, gc, Bc, rc);
    } else {
      Fc = f.value(xc);
    }
    const double pred = 0.5 * delta.dot(lambda * delta - g);
    double rho = (F - Fc) / pred;
    bool accept = false;
    if (std::isfinite(Fc)) {
      if (std::abs(F - Fc) <= f.rounding(F)) {
        // the change is below F's rounding: rho is noise, compare gradients instead
        if (!evaluated) f.evaluate(xc, Fc, gc, Bc, rc);
        evaluated = true;
        accept = gc.allFinite() && gc.lpNorm<Eigen::Infinity>() < g.lpNorm<Eigen::Infinity>();
        rho = 0.5;
      } else {
        accept = rho > 0;
      }
    }
    if (accept) {
      x = xc;
      if (evaluated) {
        F = Fc;
        g.swap(gc);
        B.swap(Bc);
        r = rc;
      } else {
        f.evaluate(x, F, g, B, r);
      }
      if (!std::isfinite(F) || !g.allFinite() || !B.allFinite()) {
        res.outcome = LmOutcome::NonFinite;
        res.iterations = it + 1;
        return res;
      }
      lambda *= std::max(1.0 / 3.0, 1 - std::pow(2 * rho - 1, 3));
      nu = 2;
    } else {
      lambda *= nu;
      nu *= 2;
    }
  }
}

}  // namespace bigstep
