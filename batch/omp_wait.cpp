#include "batch/omp_wait.h"

#include <cstdlib>
#include <unistd.h>

namespace bigstep {

void prefer_passive_omp_wait(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr) return;
  if (setenv("OMP_WAIT_POLICY", "passive", 1) != 0) return;
  // the variable is now set, so the re-executed program does not come back here
  execv("/proc/self/exe", argv);
}

}  // namespace bigstep
