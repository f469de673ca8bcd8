// The "team" a cooperative per-rollout algorithm is written against (docs/architecture.md §3
// "Mirror stems"): for_each_lane(n, f) runs f(i) for i in [0, n) spread over the team's lanes,
// sync() is a barrier. CUDA: one block per rollout, lanes = threads, __syncthreads
// (cuda/team_cuda.cuh). CPU emulation here: lanes run one after another in a changing order
// (reversed, then strided permutations) so that a missing sync() or two lanes writing one slot
// changes results in CI instead of only on the GPU. Two more teams: ThreadTeam (solvers/team/team_thread.h,
// one OS thread per lane and a real barrier, so a missing sync() races) and CountingTeam below (counts
// each lane's operations between barriers for the GPU work model, solvers/pbd/pbd_work_model.h).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/hd.h"
#include "solvers/team/counted.h"

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


/// Work of the team code per barrier interval, for the GPU work model
/// (solvers/pbd/pbd_work_model.h). A barrier interval is the code between two sync()s; in it lane l
/// runs ops[l] counted operations (Counted<S>, solvers/team/counted.h) and every lane runs `all` more
/// (code outside for_each_lane / single, which each GPU lane executes itself). Per interval
///   work = sum_l ops[l] + all       (each operation once: the useful work)
///   path = max_l ops[l] + all       (the slowest lane: what the interval costs a SIMT team)
/// summed per phase; lane efficiency = work / (lanes * path), 1 for a perfectly balanced interval.
struct TeamWork {
  double work = 0, path = 0, barriers = 0, special = 0;
  TeamWork& operator+=(const TeamWork& o) {
    work += o.work;
    path += o.path;
    barriers += o.barriers;
    special += o.special;
    return *this;
  }
  double efficiency(int lanes) const { return path > 0 ? work / (double(lanes) * path) : 1.0; }
};

/// The per-lane counters of the current interval and the per-phase sums (phases: caller's indices).
struct WorkTally {
  int lanes;
  std::vector<uint64_t> ops;  // (lanes) operations of each lane in the current interval
  uint64_t all = 0, special = 0;
  std::vector<TeamWork> phase;
  int current = 0;

  WorkTally(int lanes_, int n_phase) : lanes(lanes_ < 1 ? 1 : lanes_), ops(size_t(lanes), 0), phase(size_t(n_phase)) {}
  /// Ends the current interval (barrier: a sync(); else a phase change inside an interval).
  void close(bool barrier) {
    uint64_t sum = 0, mx = 0;
    for (uint64_t& o : ops) {
      sum += o;
      mx = std::max(mx, o);
      o = 0;
    }
    TeamWork& w = phase[size_t(current)];
    w.work += double(sum + all);
    w.path += double(mx + all);
    w.special += double(special);
    w.barriers += barrier ? 1 : 0;
    all = special = 0;
  }
  void set_phase(int p) {
    close(false);
    current = p;
  }
  TeamWork total() const {
    TeamWork t;
    for (const TeamWork& w : phase) t += w;
    return t;
  }
};

/// The team that counts (S = Counted<T>): lanes as CUDA maps them (index i on lane i % lanes,
/// single() on lane 0), run one after another; operations outside them count for every lane.
/// Makes its tally's counters current on this thread while it lives.
struct CountingTeam {
  WorkTally* tally;
  explicit CountingTeam(WorkTally& t) : tally(&t) { counted_detail::ops = &t.all, counted_detail::special = &t.special; }
  ~CountingTeam() { counted_detail::ops = counted_detail::special = nullptr; }
  CountingTeam(const CountingTeam&) = delete;
  CountingTeam& operator=(const CountingTeam&) = delete;

  template <class F>
  void for_each_lane(int n, F&& f) {
    for (int i = 0; i < n; ++i) {
      counted_detail::ops = &tally->ops[size_t(i % tally->lanes)];
      f(i);
    }
    counted_detail::ops = &tally->all;
  }
  template <class F>
  void single(F&& f) {
    counted_detail::ops = &tally->ops[0];
    f();
    counted_detail::ops = &tally->all;
  }
  void sync() { tally->close(true); }
};

/// A level of team_reduce's tree on the counting team: a dependent step, not a barrier (the warp
/// team's reduction is shuffles in registers, cuda/team_cuda.cuh).
inline void team_reduce_level(CountingTeam& team) { team.tally->close(false); }

}  // namespace bigstep
