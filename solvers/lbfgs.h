// LBFGS (spec pbfd.md §5.2): memory 10, strong-Wolfe line search (bracketing + zoom),
// via the LBFGSpp library; the spec's convergence test is applied on top.
#pragma once
#include <functional>

#include "core/types.h"

namespace bigstep {

struct LbfgsSettings {
  double eps_r = 1e-8;
  double scale = 1;
  int it_max = 10000;
  int memory = 10;
};

struct LbfgsResult {
  bool converged = false;
  int iterations = 0;
  double residual = 0;
};

/// fg(x, g) returns F(x) and writes g; res(x) returns the convergence measure at x.
LbfgsResult lbfgs_minimize(const std::function<double(const VecX&, VecX&)>& fg,
                           const std::function<double(const VecX&)>& res, VecX& x,
                           const LbfgsSettings& s);

}  // namespace bigstep
