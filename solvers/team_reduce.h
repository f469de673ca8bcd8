// Team-wide reductions for the team code (solvers/team.h interface; host and device): partial
// values per index, then a fixed tree over the indices (issue 13: the convergence tests, norms and
// dot products of the LM iteration spread over the lanes instead of one lane's loop over D).
#pragma once
#include <cmath>

#include "core/hd.h"

namespace bigstep {

/// Lane-parallel reduction over i in [0, n), in an order fixed by the indices (so every team --
/// CpuTeam, ThreadTeam, CountingTeam, a warp -- gives the same bits): f(i, v) writes element i's N
/// values into v; then a tree, level h = P/2, ..., 1 (P = n rounded up to a power of two) combines
/// entry i + h into entry i by op(a, b) (a <- a (+) b), one lane per pair and a sync per level, the
/// order of a warp's shuffle-down tree. red: N n team-shared values; on return red[0..N) holds the
/// result, readable by every lane (the caller syncs before red is written again). Counted honestly
/// by CountingTeam: each level is one operation per pair on its lane, and a barrier.
template <int N, class Team, class T, class F, class Op>
BIGSTEP_HD void team_reduce(Team& team, int n, T* red, F&& f, Op&& op) {
  team.for_each_lane(n, [&](int i) { f(i, red + N * i); });
  team.sync();
  int P = 1;
  while (P < n) P *= 2;
  for (int h = P / 2; h >= 1; h /= 2) {
    team.for_each_lane(h, [&](int i) {
      if (i + h < n) op(red + N * i, red + N * (i + h));
    });
    team.sync();
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
