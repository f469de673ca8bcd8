// CUDA batched PBFD JTJ-LM vs the CPU emulation of the same team code (docs/methods/pbfd.md §9 D8): FP64 gives
// the same iteration counts and theta within 1e-9 after 100 steps, for K = 64 rollouts that all
// differ (state, C_perp, C_par, mass scale; one poisoned rollout fails alone), through fused
// launches over the compacted running set, CUDA graph replay and the library path, and with the
// stable-PD servo, and through the warp kernel (a 16- or 32-lane team per trajectory, iterations to
// convergence in one launch, the lockstep env step as a CUDA graph); FP32 (eps_r = 1e-4, eps_x = 1e-6 as the FP32 defaults of docs/methods/pbfd.md §5.1) stays within 1e-3 m of the
// FP64 box trajectory. Exits 77 (ctest: Skipped) with the reason when no CUDA device is present.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "core/backend.h"
#include "cuda/pbd_step.h"
#include "io/chain_model.h"
#include "io/scene.h"
#include "solvers/pbd/pbd_batch_team.h"

using namespace bigstep;

#include "tests/support/cuda_main.h"

namespace {

void initial_states(const Scene& sc, int K, std::vector<VecX>& th0, std::vector<VecX>& thm1) {
  std::mt19937 rng(3);
  std::normal_distribution<double> N(0, 1);
  for (int k = 0; k < K; ++k) {
    VecX q = sc.theta0, v = sc.theta_dot0;
    for (int i = 0; i < q.size(); ++i) q[i] += 0.01 * N(rng);
    for (int i = 0; i < q.size(); ++i) v[i] += 0.05 * N(rng);
    th0.push_back(q);
    thm1.push_back(q - sc.settings.dt * v);
  }
}

template <class Batch>
void run_to_end(Batch& b, int K) {
  for (int guard = 0; guard < 1000000; ++guard) {
    if (b.launch() > 0) continue;
    if (b.count(TRAJ_WAITING) == 0) return;
    b.release_waiting();
  }
}

// The CPU emulation and the CUDA batch in lockstep mode from the same initial states.
struct LockstepPair {
  PbfdTeamBatch<double> cpu;
  PbfdTeamBatchCuda<double> gpu;
  bool warp = false;  // the GPU side through launch_persistent() (one launch per step)
  LockstepPair(const Scene& sc, int K, int steps, const std::vector<VecX>& th0, const std::vector<VecX>& thm1)
      : cpu(sc.model, sc.settings, K, steps, true, 0), gpu(sc.model, sc.settings, K, steps, true) {
    for (int k = 0; k < K; ++k) cpu.init(k, th0[k], thm1[k]);
    gpu.init(th0, thm1);
  }
  // one lockstep step of both: release the waiting ones (after step 0), launch to the end
  void round(int n) {
    if (n > 0) {
      cpu.release_waiting();
      gpu.release_waiting();
    }
    while (cpu.launch() > 0) {
    }
    if (warp) CHECK(gpu.launch_persistent() == 0);
    while (!warp && gpu.launch() > 0) {
    }
  }
};

// Trajectory k's first `steps` committed steps: same iterations, theta within 1e-9.
void expect_same_steps(const PbfdTeamBatchCuda<double>& gpu, PbfdTeamBatch<double>& cpu, int k, int steps) {
  for (int n = 0; n < steps; ++n) {
    INFO("rollout " << k << " step " << n);
    CHECK(gpu.iterations(k, n) == cpu.iterations(k, n));
    CHECK((gpu.theta(k, n) - cpu.theta(k, n)).lpNorm<Eigen::Infinity>() <= 1e-9);
  }
}

// The servo's targets at t_{n+1} for every rollout: into the CPU batch and into u (K x 3 n_q rows
// [tau = 0 | theta_bar | theta_dot_bar], as PbfdTeamBatchCuda::set_controls / step_graph take them).
void pd_controls(const Scene& sc, int n, PbfdTeamBatch<double>& cpu, std::vector<double>& u) {
  const int D = sc.model.n_q, K = int(u.size() / (3 * size_t(D)));
  VecX tb(D), tdb(D);
  sc.pd.reference(n * sc.settings.dt + sc.settings.dt, tb, tdb);
  for (int k = 0; k < K; ++k) {
    cpu.set_controls(k, VecX(), tb, tdb);
    for (int i = 0; i < D; ++i) {
      u[size_t(k) * 3 * D + i] = 0;
      u[size_t(k) * 3 * D + D + i] = tb[i];
      u[size_t(k) * 3 * D + 2 * D + i] = tdb[i];
    }
  }
}

}  // namespace

// Per-rollout randomisation in both: C_perp, C_par and mass scale differ in every rollout.
struct Randomised {
  std::vector<ContactParams> contact;
  std::vector<double> mass_scale;  // (K x n_link) link mass scales
  Randomised(const Scene& sc, int K) {
    std::mt19937 rng(17);
    std::uniform_real_distribution<double> U(-0.4, 0.4);
    for (int k = 0; k < K; ++k) {
      ContactParams cp = sc.settings.contact;
      cp.c_perp *= std::exp(U(rng));
      cp.c_par *= std::exp(U(rng));
      contact.push_back(cp);
      for (int j = 0; j < sc.model.n_link; ++j) mass_scale.push_back(std::exp(U(rng)));
    }
  }
};

enum class Launch { Fused, Graph, Library, Warp, WarpCapped };

void fp64_matches_cpu(Launch how, int iters_per_launch = 1, const std::vector<std::string>& ov = {}) {
  const Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/chain_floating_ground.yaml", ov);
  const int K = 64, steps = 100;  // docs/methods/pbfd.md §9 D8: 100 steps
  std::vector<VecX> th0, thm1;
  initial_states(sc, K, th0, thm1);
  th0[5][2] = std::nan("");  // a poisoned rollout fails alone
  const Randomised rnd(sc, K);
  PbfdTeamBatch<double> cpu(sc.model, sc.settings, K, steps, false, 0);
  for (int k = 0; k < K; ++k) {
    cpu.init(k, th0[k], thm1[k]);
    cpu.set_params(k, rnd.contact[k], rnd.mass_scale.data() + size_t(k) * sc.model.n_link);
  }
  run_to_end(cpu, K);
  PbfdTeamBatchCuda<double> gpu(sc.model, sc.settings, K, steps, false,
                                how == Launch::Library ? DenseAlgebra::Library : DenseAlgebra::Fused);
  gpu.use_graph(how == Launch::Graph);
  gpu.init(th0, thm1, rnd.contact, rnd.mass_scale);
  if (how == Launch::Warp) {
    CHECK(gpu.launch_persistent() == 0);  // the whole horizon in one launch
  } else if (how == Launch::WarpCapped) {  // the device-side running count, read back per launch
    int launches = 0;
    while (gpu.launch_persistent(iters_per_launch) > 0) REQUIRE(++launches < 100000);
    CHECK(launches > 1);
    CHECK(gpu.count(TRAJ_RUNNING) == 0);
  } else {
    for (int guard = 0; guard < 1000000 && gpu.launch(iters_per_launch) > 0; ++guard) {
    }
  }
  gpu.download();
  CHECK(gpu.status(5) == TRAJ_FAILED);
  double rmax = 0;
  for (int k = 0; k < K; ++k) {
    if (k == 5) continue;
    INFO("rollout " << k);
    REQUIRE(gpu.status(k) == TRAJ_DONE);
    rmax = std::max(rmax, gpu.residual(k));
    expect_same_steps(gpu, cpu, k, steps);
  }
  CHECK(gpu.max_residual() >= rmax);  // the failed rollout may hold a larger one
}

TEST_CASE("cuda lm: FP64 fused kernel (compacted running set) matches the CPU emulation iteration for iteration",
          "[cuda]") {
  fp64_matches_cpu(Launch::Fused);
  fp64_matches_cpu(Launch::Fused, 4);
}

TEST_CASE("cuda lm: FP64 CUDA graph replay matches the CPU emulation", "[cuda]") {
  fp64_matches_cpu(Launch::Graph);
  fp64_matches_cpu(Launch::Graph, 3);
}

TEST_CASE("cuda lm: FP64 warp kernel (half-warp teams at D = 15, one launch per horizon) matches the CPU emulation",
          "[cuda][warp]") {
  fp64_matches_cpu(Launch::Warp);
  fp64_matches_cpu(Launch::WarpCapped, 7);  // resumes mid-step from the carried state
}

TEST_CASE("cuda lm: FP64 library path (cuBLAS + cuSOLVER) matches the CPU emulation", "[cuda]") {
  fp64_matches_cpu(Launch::Library);
}

TEST_CASE("cuda lm: the second-order step (integrator.order 2) matches the CPU emulation on every launch path",
          "[cuda][order2]") {
  // theta_{n-2}, theta~, theta_v and the fresh flag per trajectory (docs/methods/pbfd.md §3.1); the
  // warp kernel passes from the fresh first step to the next inside one launch
  const std::vector<std::string> o2{"integrator.order=2"};
  for (Launch how : {Launch::Fused, Launch::Graph, Launch::Warp, Launch::Library}) fp64_matches_cpu(how, 1, o2);
  fp64_matches_cpu(Launch::WarpCapped, 7, o2);
}

TEST_CASE("cuda lm: stable-PD servo with targets uploaded between lockstep steps matches the CPU emulation",
          "[cuda][pd]") {
  const Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/quadruped_spider.yaml",
                              {"integrator.type=pbfd", "integrator.dt=0.02"});
  const int K = 16, steps = 20, D = sc.model.n_q;
  std::vector<VecX> th0, thm1;
  initial_states(sc, K, th0, thm1);
  LockstepPair pair(sc, K, steps, th0, thm1);
  PbfdTeamBatch<double>& cpu = pair.cpu;
  PbfdTeamBatchCuda<double>& gpu = pair.gpu;
  cpu.set_gains(sc.pd.kp, sc.pd.kd);
  gpu.set_gains(sc.pd.kp, sc.pd.kd);
  std::vector<double> u(size_t(K) * 3 * D);
  for (int n = 0; n < steps; ++n) {
    pd_controls(sc, n, cpu, u);
    gpu.set_controls(u);
    pair.round(n);
  }
  gpu.download();
  for (int k = 0; k < K; ++k) expect_same_steps(gpu, cpu, k, steps);
}

TEST_CASE("cuda lm: the lockstep env step as a CUDA graph (warp kernel, 32-lane teams at D = 18) matches the CPU emulation",
          "[cuda][warp][pd]") {
  // step_graph = controls upload + release + persistent warp kernel + outputs into pinned memory,
  // captured once and replayed every step; the spider's PD targets change every step
  const Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/quadruped_spider.yaml",
                              {"integrator.type=pbfd", "integrator.dt=0.02"});
  const int K = 40, steps = 20, D = sc.model.n_q;
  std::vector<VecX> th0, thm1;
  initial_states(sc, K, th0, thm1);
  PbfdTeamBatch<double> cpu(sc.model, sc.settings, K, steps, true, 0);
  for (int k = 0; k < K; ++k) cpu.init(k, th0[k], thm1[k]);
  PbfdTeamBatchCuda<double> gpu(sc.model, sc.settings, K, steps, true, DenseAlgebra::Fused, 1);
  gpu.init(th0, thm1);
  cpu.set_gains(sc.pd.kp, sc.pd.kd);
  gpu.set_gains(sc.pd.kp, sc.pd.kd);
  const PbfdTeamBatchCuda<double>::WarpPlan plan = gpu.warp_plan();
  CHECK(plan.lanes == 32);
  CHECK(plan.traj_per_block >= 1);
  VecX th(D);
  std::vector<double> u(size_t(K) * 3 * D, 0.0);
  for (int n = 0; n < steps; ++n) {
    pd_controls(sc, n, cpu, u);
    if (n > 0) cpu.release_waiting();
    while (cpu.launch() > 0) {
    }
    gpu.step_graph(u);  // one output slot: read every step, as the RL engine does
    for (int k = 0; k < K; ++k) {
      INFO("rollout " << k << " step " << n);
      CHECK(gpu.status(k) == cpu.status(k));
      CHECK(gpu.iterations(k, 0) == cpu.iterations(k, n));
      gpu.theta_into(k, 0, th.data());
      CHECK((th - cpu.theta(k, n)).lpNorm<Eigen::Infinity>() <= 1e-9);
    }
  }
}

TEST_CASE("cuda lm: FP32 box slide stays within 1e-3 m of FP64", "[cuda]") {
  Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/box_slide.yaml");
  sc.settings.eps_r = 1e-4;
  sc.settings.eps_x = 1e-6;
  const int K = 32, steps = 30;
  std::vector<VecX> th0, thm1;
  initial_states(sc, K, th0, thm1);
  PbfdTeamBatchCuda<float> f32(sc.model, sc.settings, K, steps, true);
  f32.init(th0, thm1);
  run_to_end(f32, K);
  f32.download();
  sc.settings.eps_r = 1e-8;
  sc.settings.eps_x = 1e-12;
  PbfdTeamBatch<double> f64(sc.model, sc.settings, K, steps, true, 0);
  for (int k = 0; k < K; ++k) f64.init(k, th0[k], thm1[k]);
  run_to_end(f64, K);
  for (int k = 0; k < K; ++k) CHECK((f32.theta(k, steps - 1) - f64.theta(k, steps - 1)).lpNorm<Eigen::Infinity>() <= 1e-3);
}

TEST_CASE("cuda lm: an 80-link chain (team scratch in global memory) matches the CPU emulation", "[cuda]") {
  // 12 L D scratch entries (614 KB in FP64) exceed shared memory: the kernels take a global slice
  // per block (cuda/pbd_step.cu ScratchPlan); the arithmetic must not change.
  Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/chain_fixed.yaml");
  sc.model = fixed_chain_model(80);
  sc.theta0 = sc.theta_dot0 = VecX::Zero(80);
  const int K = 8, steps = 4;
  std::vector<VecX> th0, thm1;
  initial_states(sc, K, th0, thm1);
  PbfdTeamBatch<double> cpu(sc.model, sc.settings, K, steps, false, 0);
  for (int k = 0; k < K; ++k) cpu.init(k, th0[k], thm1[k]);
  run_to_end(cpu, K);
  PbfdTeamBatchCuda<double> gpu(sc.model, sc.settings, K, steps, false);
  gpu.init(th0, thm1);
  run_to_end(gpu, K);
  gpu.download();
  for (int k = 0; k < K; ++k) expect_same_steps(gpu, cpu, k, steps);
}

TEST_CASE("cuda lm: same inputs give bit-identical results run to run (docs/methods/pbfd.md §9 D9)", "[cuda]") {
  // one block per trajectory, fixed-order sums, no atomics in the arithmetic: compaction order
  // and graph replay must not change a bit
  const Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/chain_floating_ground.yaml");
  const int K = 96, steps = 30;
  std::vector<VecX> th0, thm1;
  initial_states(sc, K, th0, thm1);
  std::vector<std::vector<VecX>> runs;
  for (int graph = 0; graph < 5; ++graph) {
    PbfdTeamBatchCuda<double> gpu(sc.model, sc.settings, K, steps, false);
    gpu.use_graph(graph == 2);
    gpu.init(th0, thm1);
    if (graph >= 3) gpu.launch_persistent();  // the warp kernel, twice
    else run_to_end(gpu, K);
    gpu.download();
    runs.emplace_back();
    for (int k = 0; k < K; ++k) runs.back().push_back(gpu.theta(k, steps - 1));
  }
  for (int k = 0; k < K; ++k) {
    CHECK(runs[1][k] == runs[0][k]);
    CHECK(runs[2][k] == runs[0][k]);
    CHECK(runs[4][k] == runs[3][k]);
    CHECK((runs[3][k] - runs[0][k]).lpNorm<Eigen::Infinity>() <= 1e-9);  // warp vs block: FMA contraction may differ
  }
}

TEST_CASE("cuda lm: lockstep reinit of some trajectories (RL reset) matches the CPU emulation", "[cuda]") {
  for (bool warp : {false, true}) {
  INFO("warp kernel " << warp);
  const Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/chain_floating_ground.yaml");
  const int K = 32, steps = 12;
  std::vector<VecX> th0, thm1;
  initial_states(sc, K, th0, thm1);
  LockstepPair pair(sc, K, steps, th0, thm1);
  pair.warp = warp;
  PbfdTeamBatch<double>& cpu = pair.cpu;
  PbfdTeamBatchCuda<double>& gpu = pair.gpu;
  const std::vector<int> ks{3, 17, 30};
  std::vector<VecX> r0, r1;
  for (int k : ks) {  // new episodes start from another rollout's state
    r0.push_back(th0[(k + 5) % K]);
    r1.push_back(thm1[(k + 5) % K]);
  }
  for (int n = 0; n < steps; ++n) {
    if (n == 6) {
      for (size_t i = 0; i < ks.size(); ++i) cpu.reinit(ks[i], r0[i], r1[i]);
      gpu.reinit(ks, r0, r1);
    }
    pair.round(n);
  }
  gpu.download_outputs();  // what the lockstep engine reads per step
  for (int k = 0; k < K; ++k) {
    // a reinitialised trajectory restarted its step count: its steps 0..5 are the new episode's
    const bool re = std::find(ks.begin(), ks.end(), k) != ks.end();
    CHECK(gpu.steps_done(k) == (re ? steps - 6 : steps));
    expect_same_steps(gpu, cpu, k, re ? steps - 6 : steps);
  }
  }
}

TEST_CASE("cuda lm: a small run of every kernel (the compute-sanitizer target)", "[cuda][sanitize]") {
  // Seconds under racecheck / synccheck / memcheck / initcheck (bench/perf/gpu_session.sh): the block
  // kernels (init, compacted iteration, graph, reinit), the warp kernel with half-warp teams
  // (D = 15, capped and uncapped) and whole-warp teams (D = 18, step_graph), each against the CPU
  // emulation.
  const Scene chain = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/chain_floating_ground.yaml");
  const int K = 6, steps = 4;
  std::vector<VecX> th0, thm1;
  initial_states(chain, K, th0, thm1);
  PbfdTeamBatch<double> cpu(chain.model, chain.settings, K, steps, false, 0);
  for (int k = 0; k < K; ++k) cpu.init(k, th0[k], thm1[k]);
  run_to_end(cpu, K);
  for (int how = 0; how < 4; ++how) {
    INFO("block / graph / warp / warp capped: " << how);
    PbfdTeamBatchCuda<double> gpu(chain.model, chain.settings, K, steps, false);
    gpu.use_graph(how == 1);
    gpu.init(th0, thm1);
    if (how == 2) gpu.launch_persistent();
    else if (how == 3) while (gpu.launch_persistent(5) > 0) {}
    else run_to_end(gpu, K);
    gpu.download();
    for (int k = 0; k < K; ++k) expect_same_steps(gpu, cpu, k, steps);
  }
  const Scene spider = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/quadruped_spider.yaml",
                                  {"integrator.type=pbfd", "integrator.dt=0.02"});
  std::vector<VecX> s0, s1;
  initial_states(spider, 3, s0, s1);
  PbfdTeamBatchCuda<float> f32(spider.model, spider.settings, 3, 3, true, DenseAlgebra::Fused, 1);
  f32.init(s0, s1);
  f32.set_gains(spider.pd.kp, spider.pd.kd);
  std::vector<double> u(size_t(3) * 3 * spider.model.n_q, 0.0);
  for (int n = 0; n < 3; ++n) {
    if (n == 1) f32.reinit({1}, {s0[2]}, {s1[2]});
    f32.step_graph(u);
    for (int k = 0; k < 3; ++k) CHECK(f32.status(k) != TRAJ_FAILED);
  }
}
