// CUDA instantiation of the team interface (solvers/team/team.h): one block = one rollout,
// lanes = threads of the block, sync = __syncthreads(). The CPU emulation is CpuTeam.
#pragma once
#include "solvers/team/team_reduce.h"

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

/// team_reduce on a warp team: the tree in registers with shuffles (team_tree_registers,
/// the same pairs and order as the shared-memory tree, so the same bits as every CPU team), then
/// lane 0's result broadcast by __shfl_sync: no shared-memory round trip and no barrier. For
/// n > W the levels h >= W come first in red (index i and i + h on the same lane: no barrier).
template <int N, int W, class T, class F, class Op>
__device__ TeamReduced<T, N> team_reduce(WarpTeam<W>& team, int n, T* red, F&& f, Op&& op) {
  T v[N] = {};
  if (n <= W) {
    if (team.lane < n) f(team.lane, v);
  } else {
    team.for_each_lane(n, [&](int i) { f(i, red + N * i); });
    int P = 1;
    while (P < n) P *= 2;
    for (int h = P / 2; h >= W; h /= 2)
      team.for_each_lane(h, [&](int i) {
        if (i + h < n) op(red + N * i, red + N * (i + h));
      });
    for (int c = 0; c < N; ++c) v[c] = red[N * team.lane + c];
    n = W;
  }
  const unsigned mask = team.mask;
  team_tree_registers<N>(team.lane, n, v, [mask](T x, int h) { return __shfl_down_sync(mask, x, h, W); }, op);
  TeamReduced<T, N> out;
  for (int c = 0; c < N; ++c) out.v[c] = __shfl_sync(mask, v[c], 0, W);
  return out;
}

}  // namespace bigstep
