// The "team" a cooperative per-rollout algorithm is written against (design.md "CPU reference vs
// CUDA mirror"): for_each_lane(n, f) runs f(i) for i in [0, n) spread over the team's lanes,
// sync() is a barrier. CUDA: one block per rollout, lanes = threads, __syncthreads
// (cuda/team_cuda.cuh). CPU emulation here: lanes run one after another in a changing order
// (reversed, then strided permutations) so that a missing sync() or two lanes writing one slot
// changes results in CI instead of only on the GPU.
#pragma once
#include <cstdint>

#include "core/hd.h"

namespace bigstep {

struct CpuTeam {
  bool shuffle = true;
  uint32_t phase = 0;

  template <class F>
  void for_each_lane(int n, F&& f) {
    ++phase;
    if (!shuffle || n <= 1) {
      for (int i = 0; i < n; ++i) f(i);
      return;
    }
    if (phase & 1) {
      for (int i = n - 1; i >= 0; --i) f(i);
      return;
    }
    // strided permutation (c * step + offset) mod n with gcd(step, n) = 1
    static constexpr int steps[] = {7, 11, 13, 17, 19, 23, 29, 31};
    int step = 1;
    for (int s : steps)
      if (n % s != 0) {
        step = s;
        break;
      }
    const int offset = int(phase % uint32_t(n));
    for (int c = 0; c < n; ++c) f(int((int64_t(c) * step + offset) % n));
  }
  /// Runs f on one lane (lane 0 on the GPU).
  template <class F>
  void single(F&& f) {
    f();
  }
  void sync() {}
};

}  // namespace bigstep
