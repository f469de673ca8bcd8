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

namespace bigstep {

/// A warp (W = 32) or half a warp (W = 16, two trajectories per warp when n_q <= 16) as one team:
/// lane = thread index within the W-lane group, sync = __syncwarp over the group's mask (legal
/// when the two halves of a warp take different branches: independent thread scheduling, sm_70+).
template <int W>
struct WarpTeam {
  static_assert(W == 16 || W == 32, "a warp team spans a whole or half warp");
  int lane;
  unsigned mask;
  __device__ WarpTeam() {
    const int l = int(threadIdx.x & 31u);
    lane = l % W;
    mask = W == 32 ? 0xffffffffu : (0xffffu << (l - lane));
  }
  template <class F>
  __device__ void for_each_lane(int n, F&& f) {
    for (int i = lane; i < n; i += W) f(i);
  }
  template <class F>
  __device__ void single(F&& f) {
    if (lane == 0) f();
  }
  __device__ void sync() { __syncwarp(mask); }
};

}  // namespace bigstep
