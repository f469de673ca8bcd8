// bigstep-bench: the benchmark harness (gpu-speedup, vs-mujoco, accuracy, id-runtime), built apart from the
// user CLI `bigstep`; bench/README.md lists the figures and the commands that produce them.
#include <string>
#include <vector>

#include "batch/omp_wait.h"
#include "bench/harness/bench_command.h"
#include "io/exit_status.h"

int main(int argc, char** argv) {
  bigstep::prefer_passive_omp_wait(argv);  // may re-execute this program once (see omp_wait.h)
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    return bigstep::bench_command(args);
  } catch (...) {
    return bigstep::exit_status_of_current_exception("bigstep-bench");
  }
}
