// Levenberg-Marquardt with the Nielsen lambda schedule (docs/methods/pbfd.md §5.1). The model matrix B
// is whatever the objective supplies: exact Hessian (LM) or a PSD Gauss-Newton matrix (JTJ-LM).
#pragma once
#include <algorithm>
#include <cmath>

#include <Eigen/Cholesky>

#include "core/types.h"

namespace bigstep {

/// An objective F with gradient g, model matrix B and a convergence measure.
class LmObjective {
 public:
  virtual ~LmObjective() = default;
  /// F(x) only (may return a non-finite value: the step is then rejected).
  virtual double value(const VecX& x) = 0;
  /// F, g, B at x and the convergence measure res (PBFD ||r||_inf, PBD ||grad E||_inf).
  virtual void evaluate(const VecX& x, double& F, VecX& g, MatX& B, double& res) = 0;
  /// Size of F's rounding error near F: changes below it make rho noise (docs/methods/pbfd.md §5.1 uses
  /// 64 eps max(1, |F|), right for an energy; a sum of squares overrides it, see pbd_step.cpp).
  virtual double rounding(double F) const { return 64 * 2.220446049250313e-16 * std::max(1.0, std::abs(F)); }
  /// true: LM evaluates F, g, B together at each candidate (evaluate() instead of value()), so an
  /// accepted candidate is not evaluated twice. Worth it when value() costs nearly what evaluate()
  /// does and most candidates are accepted (PBFD: r and J_r share FK, contacts and moments).
  virtual bool full_at_candidate() const { return false; }
  /// false: a candidate the objective cannot judge (a rotation chart near its singularity, where
  /// the residual loses a direction and a wrong point can look converged): rejected unevaluated,
  /// like a non-finite F. The starting point is not asked.
  virtual bool admissible(const VecX& /*x*/) const { return true; }
};

/// Lowest warm-started lambda relative to max(1, max_i B_ii): keeps cond(B + lambda I) <= 1e10 so
/// that two Cholesky orders (the team form, the reference) take the same accept / reject decisions.
/// At 1e-12 they parted on a 2.6x-mass floating chain at impact (13 vs 21 iterations,
/// tests/solvers/pbd/pbd_step_team_test.cpp); 1e-10 keeps the warm start's gain (pbd_integrator_test).
constexpr double kLambdaFloor = 1e-10;

struct LmSettings {
  double eps_r = 1e-8;   ///< converged when res <= eps_r * scale
  double eps_x = 1e-12;  ///< small-step test ||delta||_inf <= eps_x (eps_x + ||x||_inf)
  int it_max = 500;      ///< iterations (candidate evaluations) per attempt
  double scale = 1;      ///< s = max(1, W), W the total weight [N]
  /// > 0: the starting damping (a warm start: the last step's final lambda);
  /// <= 0: the cold start 1e-3 max_i B_ii (docs/methods/pbfd.md §5.1). Either way at least 1e-12 max(1, max_i B_ii).
  double lambda0 = 0;
};

enum class LmOutcome { Converged, SmallStep, NotConverged, FactorFailed, NonFinite };

struct LmResult {
  LmOutcome outcome = LmOutcome::NotConverged;
  int iterations = 0;   ///< LM iterations (= candidates evaluated)
  double residual = 0;  ///< convergence measure at the returned x
  double lambda = 0;    ///< damping of the last model solved (the next step's warm start)
  bool converged() const {
    return outcome == LmOutcome::Converged || outcome == LmOutcome::SmallStep;
  }
};

/// LM's iterates and matrices for problems of size n, sized once (a step must not allocate).
struct LmWorkspace {
  explicit LmWorkspace(int n)
      : g(n), gc(n), delta(n), xc(n), B(n, n), Bc(n, n), A(n, n) {}
  VecX g, gc, delta, xc;  ///< (n) gradient, candidate gradient, step, candidate
  MatX B, Bc, A;          ///< (n x n) model matrix, candidate's, B + lambda I (then its Cholesky factor)
};

/// Minimizes from x (in/out). SmallStep is returned only when res <= 100 eps_r scale;
/// otherwise a small step reports NotConverged. w must be sized for x.size().
LmResult levenberg_marquardt(LmObjective& f, VecX& x, const LmSettings& s, LmWorkspace& w);
/// Same with a workspace of its own (allocates).
inline LmResult levenberg_marquardt(LmObjective& f, VecX& x, const LmSettings& s) {
  LmWorkspace w(int(x.size()));
  return levenberg_marquardt(f, x, s, w);
}

}  // namespace bigstep
