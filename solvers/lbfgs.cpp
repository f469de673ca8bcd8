// LBFGS through LBFGSpp (pbfd.md §5.2 [choice]); CPU only (cpu-only: the paper's slowest option).
#include "solvers/lbfgs.h"

#include <LBFGS.h>

#include <cmath>
#include <stdexcept>

namespace bigstep {

LbfgsResult lbfgs_minimize(const std::function<double(const VecX&, VecX&)>& fg,
                           const std::function<double(const VecX&)>& res, VecX& x,
                           const LbfgsSettings& s) {
  LBFGSpp::LBFGSParam<double> p;
  p.m = s.memory;
  // LBFGSpp stops on ||g||_2 <= epsilon; ||g||_inf <= ||g||_2 so this implies the spec's test
  p.epsilon = s.eps_r * s.scale;
  p.epsilon_rel = 0;
  p.max_iterations = s.it_max;
  p.max_linesearch = 60;
  p.ftol = 1e-4;
  p.wolfe = 0.9;
  LBFGSpp::LBFGSSolver<double, LBFGSpp::LineSearchNocedalWright> solver(p);
  LbfgsResult out;
  const VecX x0 = x;
  double fx = 0;
  int n_eval = 0;
  bool search_failed = false;
  try {
    auto f = [&](const VecX& xx, VecX& g) {
      ++n_eval;
      return fg(xx, g);
    };
    out.iterations = solver.minimize(f, x, fx);
  } catch (const std::exception&) {
    // the line search found no decrease: F is at its rounding floor (or the problem is bad);
    // iterations are then reported as gradient evaluations
    search_failed = true;
    out.iterations = n_eval;
  }
  if (!x.allFinite()) x = x0;
  out.residual = res(x);
  // same test as LM; a stalled search is accepted like LM's small step (<= 100 eps_r s)
  const double tol = (search_failed ? 100 : 1) * s.eps_r * s.scale;
  out.converged = std::isfinite(out.residual) && out.residual <= tol;
  return out;
}

}  // namespace bigstep
