// `bigstep-bench accuracy`: accuracy against cost, the way a user comparing simulators asks. For
// every scene x simulator x integrator variant x dt: CPU seconds per simulated second (one core,
// one rollout), the COM error against a common reference (one fine trajectory per scene, or an
// analytic answer) and against the simulator's own fine reference, and stability. Writes
// DIR/accuracy.csv; bench/perf/accuracy_fronts.py draws the Pareto fronts and the equal-error
// speed-ups. Defined only in builds with MuJoCo (bench_command.cpp answers for the others).
#pragma once
#include <string>
#include <vector>

namespace bigstep {
/// args: what follows `bigstep-bench accuracy`. Returns the process exit code.
int bench_accuracy(const std::vector<std::string>& args);
}
