// main() of the CUDA equivalence tests: exits 77 (ctest: Skipped) with the reason when no CUDA
// device is present, else runs the Catch2 session. Include once, after CATCH_CONFIG_RUNNER.
#pragma once
#include <cstdio>
#include <string>

#include "core/backend.h"

int main(int argc, char** argv) {
  std::string why;
  if (bigstep::cuda_device_count(&why) == 0) {
    std::printf("SKIPPED: no CUDA device: %s\n", why.c_str());
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
