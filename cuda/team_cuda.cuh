// CUDA instantiation of the team interface (solvers/team.h): one block = one rollout,
// lanes = threads of the block, sync = __syncthreads(). The CPU emulation is CpuTeam.
#pragma once

namespace bigstep {

struct CudaTeam {
  template <class F>
  __device__ void for_each_lane(int n, F&& f) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) f(i);
  }
  template <class F>
  __device__ void single(F&& f) {
    if (threadIdx.x == 0) f();
  }
  __device__ void sync() { __syncthreads(); }
};

}  // namespace bigstep
