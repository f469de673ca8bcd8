// Team-wide reductions for the team code (solvers/team/team.h interface; host and device): partial
// values per index, then a fixed tree over the indices (so that the convergence tests, norms and
// dot products of the LM iteration spread over the lanes instead of one lane's loop over D).
#pragma once
#include <cmath>

#include "core/hd.h"

namespace bigstep {

/// The result of team_reduce: N values, the same on every lane (a copy each lane holds).
template <class T, int N>
struct TeamReduced {
  T v[N];
  BIGSTEP_HD const T& operator[](int c) const { return v[c]; }
};

/// The barrier after a level of team_reduce's shared-memory tree (and after the partials).
/// CountingTeam overloads it (solvers/team/team.h): the work model counts the reduction as the warp
/// team runs it, in registers with shuffles and no barrier.
template <class Team>
BIGSTEP_HD void team_reduce_level(Team& team) {
  team.sync();
}

/// Lane-parallel reduction over i in [0, n), in an order fixed by the indices (so every team --
/// CpuTeam, ThreadTeam, CountingTeam, a warp -- gives the same bits): f(i, v) writes element i's N
/// values into v; then a tree, level h = P/2, ..., 1 (P = n rounded up to a power of two) combines
/// entry i + h into entry i by op(a, b) (a <- a (+) b), one lane per pair and a sync per level, the
/// order of a warp's shuffle-down tree (team_tree_registers below; the warp team's overload,
/// cuda/team_cuda.cuh, runs it in registers with shuffles). red: N n team-shared values; returns
/// the result on every lane (the caller syncs before red is written again). Counted by
/// CountingTeam as the warp runs it: each level is one operation per pair on its lane, a
/// dependent step (an interval of its own), and no barrier.
template <int N, class Team, class T, class F, class Op>
BIGSTEP_HD TeamReduced<T, N> team_reduce(Team& team, int n, T* red, F&& f, Op&& op) {
  team.for_each_lane(n, [&](int i) { f(i, red + N * i); });
  team_reduce_level(team);
  int P = 1;
  while (P < n) P *= 2;
  for (int h = P / 2; h >= 1; h /= 2) {
    team.for_each_lane(h, [&](int i) {
      if (i + h < n) op(red + N * i, red + N * (i + h));
    });
    team_reduce_level(team);
  }
  TeamReduced<T, N> out;
  for (int c = 0; c < N; ++c) out.v[c] = red[c];
  return out;
}

/// The same tree held in registers, one element per lane (n <= the team's lanes): lane `lane`
/// holds v = element lane's values (lanes >= n: anything), down(x, h) returns lane + h's x (a
/// warp's __shfl_down_sync; every lane calls it, as a shuffle needs). Level h combines lane + h
/// into lane for lane < h, lane + h < n: the pairs, operands and order of team_reduce's levels, so
/// lane 0 ends with the same bits.
template <int N, class T, class Down, class Op>
BIGSTEP_HD void team_tree_registers(int lane, int n, T (&v)[N], Down&& down, Op&& op) {
  int P = 1;
  while (P < n) P *= 2;
  for (int h = P / 2; h >= 1; h /= 2) {
    T o[N];
    for (int c = 0; c < N; ++c) o[c] = down(v[c], h);
    if (lane < h && lane + h < n) op(v, o);
  }
}

/// Entry q of a lower triangle stored row by row, (0,0), (1,0), (1,1), (2,0), ...: its row a and
/// column b <= a (lanes over the n (n + 1) / 2 entries of a triangle, balanced).
BIGSTEP_HD void tri_index(int q, int& a, int& b) {
  using std::sqrt;
  int r = int((sqrt(8.0f * float(q) + 1.0f) - 1.0f) * 0.5f);  // then exact in integers
  while (r * (r + 1) / 2 > q) --r;
  while ((r + 1) * (r + 2) / 2 <= q) ++r;
  a = r;
  b = q - r * (r + 1) / 2;
}

}  // namespace bigstep
