// LBFGS (docs/methods/pbfd.md §5.2 [choice]): memory 10, two-loop recursion, H0 = (s^T y / y^T y) I,
// strong-Wolfe line search (c1 = 1e-4, c2 = 0.9, bracketing + zoom, Nocedal & Wright Alg. 3.5/3.6),
// a pair is skipped when s^T y <= 1e-10 |s| |y|, the LM convergence test (docs/methods/pbfd.md §5.1), it_max = 10000.
// Written here rather than taken from LBFGSpp: Debian's LBFGSpp 0.1.0 evaluated NaN trial points
// and carried them on (no non-finite guard), which the oracle tests caught.
#pragma once
#include <functional>

#include "core/types.h"

namespace bigstep {

struct LbfgsSettings {
  double eps_r = 1e-8;   ///< converged when res(x) <= eps_r * scale
  double scale = 1;
  int it_max = 10000;
  int memory = 10;
};

struct LbfgsResult {
  bool converged = false;
  int iterations = 0;
  int evaluations = 0;
  double residual = 0;
};

/// fg(x, g) returns F(x) and writes g (may return a non-finite F: the trial is rejected);
/// res(x, g) returns the convergence measure given x and its gradient.
LbfgsResult lbfgs_minimize(const std::function<double(const VecX&, VecX&)>& fg,
                           const std::function<double(const VecX&, const VecX&)>& res, VecX& x,
                           const LbfgsSettings& s);

}  // namespace bigstep
