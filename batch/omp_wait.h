// OpenMP wait policy of the bigstep executable: worker threads sleep at barriers by default.
#pragma once

namespace bigstep {

/// When neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT is set, sets OMP_WAIT_POLICY=passive and re-executes
/// this program with the same arguments (returns only if that fails; the run then goes on with the
/// runtime's default). Either variable set by the user is kept as it is.
///
/// Why: a spinning worker burns its core between parallel regions (the serial CSV writing, the ID
/// controllers, the policy in an RL loop). On a shared or loaded machine that doubled wall times
/// (bench/omp_wait_policy.py). libgomp reads the variable once, when it is loaded before main, so
/// setting it in-process is too late: a re-exec is the only portable way.
void prefer_passive_omp_wait(char** argv);

}  // namespace bigstep
