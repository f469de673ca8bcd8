// Work counters of the compliant solver summed over steps (and rollouts) for summary.json.
#pragma once

#include <algorithm>

#include <nlohmann/json.hpp>

#include "solvers/compliant/compliant_step.h"
#include "solvers/integrator.h"

namespace bigstep {

/// The compliant solver's work per step (docs/methods/compliant.md §6, §7.5; errata A2 asks
/// for iteration counts): staggered sweeps (1 without friction or in the joint program), N-step
/// active-set iterations (reduced QP pieces + dense QP), iterations of all its programs, N-steps
/// that fell back from the reduced QP to the dense one, T-steps taken unfinished (inexact), and
/// steps flagged not converged / failed. One run adds its steps; a batch adds every rollout's.
struct CompliantCounters {
  double steps = 0, sweeps = 0, nstep_iterations = 0, qp_iterations = 0;
  int sweeps_max = 0, nstep_max = 0, qp_max = 0, fallbacks = 0, steps_with_fallback = 0, inexact = 0, flagged = 0;

  void add(const StepStats& s) {
    steps += 1;
    sweeps += s.iterations;
    nstep_iterations += s.nstep_iterations;
    qp_iterations += s.qp_iterations;
    sweeps_max = std::max(sweeps_max, s.iterations);
    nstep_max = std::max(nstep_max, s.nstep_iterations);
    qp_max = std::max(qp_max, s.qp_iterations);
    fallbacks += s.fallbacks;
    steps_with_fallback += s.fallbacks > 0;
    inexact += s.inexact;
    flagged += !s.converged();
  }

  nlohmann::ordered_json json(FrictionSolve solve) const {
    const double n = std::max(1.0, steps);
    return {{"friction_solve", friction_solve_name(solve)},
            {"sweeps_mean", sweeps / n},
            {"sweeps_max", sweeps_max},
            {"nstep_iterations_mean", nstep_iterations / n},
            {"nstep_iterations_max", nstep_max},
            {"qp_iterations_mean", qp_iterations / n},
            {"qp_iterations_max", qp_max},
            {"fallbacks", fallbacks},
            {"steps_with_fallback", steps_with_fallback},
            {"inexact_t_steps", inexact},
            {"steps_flagged", flagged}};
  }
};

}  // namespace bigstep
