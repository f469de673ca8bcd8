// The SPMD form of the team (solvers/team/team.h): the team function runs on N OS
// threads at once, one per lane, as CUDA runs it on the threads of a block. Lane l does
// for_each_lane(n, f) as for (i = l; i < n; i += N) f(i) (cuda/team_cuda.cuh), single(f) on lane 0
// only, and sync() is a real barrier (std::barrier). Locals of the team function are per lane, so
// a missing sync() is a data race: ThreadSanitizer reports it (BIGSTEP_TSAN, ctest label `tsan`)
// and the lanes usually compute a wrong result or take different branches. CpuTeam cannot do this:
// its lanes run one after another and its sync() is empty.
#pragma once
#include <barrier>
#include <type_traits>
#include <thread>
#include <vector>

namespace bigstep {

/// One lane of a ThreadTeamRunner (the team object the team function receives).
struct ThreadTeam {
  int lane = 0, lanes = 1;
  std::barrier<>* bar = nullptr;

  template <class F>
  void for_each_lane(int n, F&& f) {
    for (int i = lane; i < n; i += lanes) f(i);
  }
  /// Runs f on lane 0 (as CudaTeam::single).
  template <class F>
  void single(F&& f) {
    if (lane == 0) f();
  }
  void sync() { bar->arrive_and_wait(); }
};

/// N persistent OS threads (the caller is lane 0, N - 1 workers): run(f) calls f(ThreadTeam&) on
/// every lane at once and returns when all lanes have returned; the start and the end of run() are
/// barriers, so what the caller wrote before is seen by every lane and what the lanes wrote is
/// seen by the caller afterwards. Not reentrant; one run at a time.
class ThreadTeamRunner {
 public:
  explicit ThreadTeamRunner(int lanes) : lanes_(lanes < 1 ? 1 : lanes), start_(lanes_), end_(lanes_), sync_(lanes_) {
    for (int l = 1; l < lanes_; ++l)
      workers_.emplace_back([this, l] {
        ThreadTeam team{l, lanes_, &sync_};
        for (;;) {
          start_.arrive_and_wait();
          if (stop_) return;
          call_(ctx_, team);
          end_.arrive_and_wait();
        }
      });
  }
  ~ThreadTeamRunner() {
    stop_ = true;  // published to the workers by the start barrier
    start_.arrive_and_wait();
    for (std::thread& w : workers_) w.join();
  }
  ThreadTeamRunner(const ThreadTeamRunner&) = delete;
  ThreadTeamRunner& operator=(const ThreadTeamRunner&) = delete;

  int lanes() const { return lanes_; }

  /// f(ThreadTeam&) on every lane at once; returns after the last lane has finished.
  template <class F>
  void run(F&& f) {
    using Fn = std::remove_reference_t<F>;
    ctx_ = const_cast<void*>(static_cast<const void*>(&f));  // no std::function: no allocation per run
    call_ = [](void* c, ThreadTeam& t) { (*static_cast<Fn*>(c))(t); };
    ThreadTeam team{0, lanes_, &sync_};
    start_.arrive_and_wait();
    call_(ctx_, team);
    end_.arrive_and_wait();
  }

 private:
  int lanes_;
  std::barrier<> start_, end_, sync_;
  std::vector<std::thread> workers_;
  void* ctx_ = nullptr;  // the current run's f and its caller
  void (*call_)(void*, ThreadTeam&) = nullptr;
  bool stop_ = false;
};

}  // namespace bigstep
