#include "bench/harness/bench_command.h"


#include "bench/harness/bench_accuracy.h"
#include "bench/harness/bench_vs_mujoco.h"
#include "bench/harness/bench_id_runtime.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>
#include <random>
#include <thread>

#include "core/backend.h"
#include "core/error.h"
#include "io/chain_model.h"
#include "io/scene.h"
#include "solvers/pbd/pbd_batch_team.h"
#include "solvers/pbd/pbd_work_model.h"
#ifdef BIGSTEP_WITH_CUDA
#include "cuda/pbd_step.h"
#endif

namespace bigstep {

namespace {

// Comma-separated positive integers ("4,16"); empty on a bad list.
std::vector<int> int_list(const std::string& s) {
  std::vector<int> v;
  size_t i = 0;
  while (i <= s.size()) {
    const size_t j = std::min(s.find(',', i), s.size());
    const int x = std::atoi(s.substr(i, j - i).c_str());
    if (x <= 0) return {};
    if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
    i = j + 1;
  }
  return v;
}

template <class Batch>
int run_all(Batch& b, int iters_per_launch) {
  int launches = 0;
  for (;;) {
    ++launches;
    if (b.launch(iters_per_launch) > 0) continue;
    if (b.count(TRAJ_WAITING) == 0) return launches;
    b.release_waiting();
  }
}

struct Row {
  std::string sweep, backend, precision;
  int D, K, steps, threads, iters_per_launch;
  double wall_s, iters_total;
  double peak_gflops = 0;  ///< device peak for this precision (CUDA rows), 0 = not known
  double ops_per_pass = 0;  ///< every counted operation of one LM pass (work model), 0 = not counted
};

// The benchmarked problem: model, solver settings and the start state that rollouts perturb.
struct Problem {
  Model model;
  PbdSettings settings;
  VecX theta0, theta_dot0;
  double sigma = 0.1;  ///< std. dev. of the per-rollout perturbation of theta(0)
};

Problem fixed_problem(int L) {
  Problem p{fixed_chain_model(L), PbdSettings{}, VecX::Zero(L), VecX::Zero(L), 0.1};
  p.settings.dt = 0.01;
  return p;
}

// configs/chain_floating_ground.yaml (D = 15, 80 contact corners): the target scene of the GPU speedup.
Problem floating_problem() {
  const Scene sc = load_scene("configs/chain_floating_ground.yaml");
  return Problem{sc.model, sc.settings, sc.theta0, sc.theta_dot0, 0.01};
}

// The settings a run in precision S uses (FP32: eps_r = 1e-4, eps_x = 1e-6) and K starts: theta(0)
// perturbed by N(0, sigma) per entry (seed 1), theta_{-1} = theta(0) - dt theta_dot(0).
template <class S>
PbdSettings run_setup(const Problem& pr, int K, std::vector<VecX>& th0, std::vector<VecX>& thm1) {
  PbdSettings s = pr.settings;
  if (sizeof(S) == 4) {
    s.eps_r = 1e-4;
    s.eps_x = 1e-6;
  }
  std::mt19937 rng(1);
  std::normal_distribution<double> N(0, pr.sigma);
  th0.assign(K, VecX());
  thm1.assign(K, VecX());
  for (int k = 0; k < K; ++k) {
    th0[k] = pr.theta0;
    for (int i = 0; i < pr.model.n_q; ++i) th0[k][i] += N(rng);
    thm1[k] = th0[k] - s.dt * pr.theta_dot0;
  }
  return s;
}

template <class S, class MakeBatch>
Row measure(const std::string& sweep, const std::string& backend, const Problem& pr, int K, int steps, int threads,
            int ipl, MakeBatch make) {
  const Model& m = pr.model;
  std::vector<VecX> th0, thm1;
  const PbdSettings s = run_setup<S>(pr, K, th0, thm1);
  auto b = make(m, s, K, steps);
  const auto t0 = std::chrono::steady_clock::now();
  b->init_all(th0, thm1);
  run_all(*b, ipl);
  b->finish();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double iters = 0;
  for (int k = 0; k < K; ++k)
    for (int n = 0; n < steps; ++n) iters += b->iterations(k, n);
  return {sweep, backend, sizeof(S) == 8 ? "fp64" : "fp32", m.n_q, K, steps, threads, ipl, wall, iters};
}

// Every counted operation of one LM pass (one evaluation, the normal equations, the factorisation,
// the solves and the decisions: solvers/pbd/pbd_work_model.h, Counted<S> on the team code the kernels
// run) for problem pr in precision T, from 4 rollouts perturbed as measure() perturbs them, over
// the run's steps (10 for a contact-free chain, whose passes all cost the same).
template <class T>
double ops_per_pass(const Problem& pr, int steps) {
  const int K = 4, n = pr.model.n_point_pair > 0 ? steps : std::min(steps, 10);
  std::vector<VecX> th0, thm1;
  const PbdSettings s = run_setup<T>(pr, K, th0, thm1);
  const LmWorkCount c = count_lm_work<T>(pr.model, s, th0, thm1, n, 32);
  return c.iteration_total().work / c.iterations;
}

// Thin adapters so CPU and CUDA batches share measure().
template <class S>
struct CpuAdapter {
  PbfdTeamBatch<S> b;
  int K;
  CpuAdapter(const Model& m, const PbdSettings& s, int K_, int steps, int threads) : b(m, s, K_, steps, false, threads), K(K_) {}
  void init_all(const std::vector<VecX>& a, const std::vector<VecX>& c) {
    for (int k = 0; k < K; ++k) b.init(k, a[k], c[k]);
  }
  int launch(int n) { return b.launch(n); }
  void release_waiting() { b.release_waiting(); }
  int count(int st) const { return b.count(st); }
  void finish() {}
  int iterations(int k, int n) const { return b.iterations(k, n); }
};
#ifdef BIGSTEP_WITH_CUDA
template <class S>
struct CudaAdapter {
  PbfdTeamBatchCuda<S> b;
  CudaAdapter(const Model& m, const PbdSettings& s, int K, int steps, DenseAlgebra a, bool graph)
      : b(m, s, K, steps, false, a) {
    b.use_graph(graph);
  }
  void init_all(const std::vector<VecX>& a, const std::vector<VecX>& c) { b.init(a, c); }
  int launch(int n) { return b.launch(n); }
  void release_waiting() { b.release_waiting(); }
  int count(int st) const { return b.count(st); }
  void finish() { b.download(); }
  int iterations(int k, int n) const { return b.iterations(k, n); }
};
// The warp kernel in rollout mode: the whole horizon in ONE persistent launch (N does not apply).
template <class S>
struct CudaWarpAdapter {
  PbfdTeamBatchCuda<S> b;
  CudaWarpAdapter(const Model& m, const PbdSettings& s, int K, int steps) : b(m, s, K, steps, false) {}
  void init_all(const std::vector<VecX>& a, const std::vector<VecX>& c) { b.init(a, c); }
  int launch(int) { return b.launch_persistent(); }
  void release_waiting() { b.release_waiting(); }
  int count(int st) const { return b.count(st); }
  void finish() { b.download(); }
  int iterations(int k, int n) const { return b.iterations(k, n); }
};
// The warp kernel in lockstep, as an RL step(): one CUDA graph replay per env step (controls up,
// the persistent kernel, outputs down into pinned memory, one output slot); the per-step
// iteration counts are kept on the host for the report.
template <class S>
struct CudaStepAdapter {
  PbfdTeamBatchCuda<S> b;
  int K, n = 0;
  std::vector<double> u;
  std::vector<int> its;  // (steps x K)
  CudaStepAdapter(const Model& m, const PbdSettings& s, int K_, int steps)
      : b(m, s, K_, steps, true, DenseAlgebra::Fused, 1), K(K_), u(size_t(K_) * 3 * m.n_q, 0.0),
        its(size_t(K_) * steps, 0) {}
  void init_all(const std::vector<VecX>& a, const std::vector<VecX>& c) { b.init(a, c); }
  int launch(int) {
    b.step_graph(u);
    for (int k = 0; k < K; ++k) its[size_t(n) * K + k] = b.iterations(k, 0);
    ++n;
    return 0;
  }
  void release_waiting() {}  // inside the graph
  int count(int st) const {  // from the statuses the graph downloaded
    int c = 0;
    for (int k = 0; k < K; ++k) c += b.status(k) == st;
    return c;
  }
  void finish() {}
  int iterations(int k, int n_) const { return its[size_t(n_) * K + k]; }
};
// The warp kernel's launch plan for problem pr in precision S (shared memory per trajectory,
// trajectories per block, resident blocks per SM, registers and spills of the kernel).
template <class S>
void print_warp_plan(const Problem& pr, int K) {
  PbfdTeamBatchCuda<S> b(pr.model, pr.settings, K, 1, true, DenseAlgebra::Fused, 1);
  const auto w = b.warp_plan();
  const int per_sm = w.traj_per_block * w.blocks_per_sm;
  std::printf("warp plan %s D=%d: %d lanes/trajectory, %d B shared memory/trajectory, %d trajectories/block, "
              "%d blocks/SM = %d trajectories/SM (%d on %d SMs), %d registers/thread, %d B local (spill)/thread\n",
              sizeof(S) == 8 ? "fp64" : "fp32", pr.model.n_q, w.lanes, w.bytes_per_traj, w.traj_per_block,
              w.blocks_per_sm, per_sm, per_sm * w.sm_count, w.sm_count, w.regs_per_thread, w.local_bytes);
}
#endif

}  // namespace

std::ofstream bench_result_file(const std::string& out, const std::string& name, std::filesystem::path& path,
                                std::string& date) {
  std::filesystem::create_directories(out);
  path = std::filesystem::path(out) / name;
  const std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  date = buf;
  return std::ofstream(path);
}

int bench_command(const std::vector<std::string>& args) {
  static const std::string usage = std::string("usage: bigstep-bench <benchmark> [options]\n") +
      "(bigstep-bench <benchmark> --help for its options)\n"
      "  gpu-speedup [--quick] [--steps N] [--out DIR] [--threads T1,T2]   Fig. 8: batched PBFD, CPU vs CUDA\n"
      "  vs-mujoco [--quick] [--out DIR]                                  the same scenes in MuJoCo and bigstep\n"
      "  accuracy [--quick] [--scenes a,b] [--variants ...] [--out DIR]   cost vs error fronts, bigstep and MuJoCo\n"
      "  id-runtime [--out DIR] [--reps R] [--max-per-foot C]             inverse-dynamics solve time vs contacts\n";
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::fputs(usage.c_str(), stdout);
    return 0;
  }
  if (!args.empty() && (args[0] == "accuracy" || args[0] == "vs-mujoco")) {
#ifdef BIGSTEP_WITH_MUJOCO
    return (args[0] == "accuracy" ? bench_accuracy : bench_vs_mujoco)({args.begin() + 1, args.end()});
#else
    std::fprintf(stderr, "bigstep-bench %s: built without MuJoCo (pip install mujoco and reconfigure)\n", args[0].c_str());
    return 2;
#endif
  }
  if (!args.empty() && args[0] == "id-runtime") return bench_id_runtime({args.begin() + 1, args.end()});
  if (args.empty() || args[0] != "gpu-speedup") {
    std::fprintf(stderr, "bigstep-bench: %s\n%s",
                 args.empty() ? "which benchmark?" : ("unknown benchmark '" + args[0] + "'").c_str(), usage.c_str());
    return 2;
  }
  bool quick = false, work_model_only = false;
  double cpu_max_s = 120;
  int steps = 100;
  const int all = int(std::thread::hardware_concurrency());
  std::vector<int> thread_counts = all > 4 ? std::vector<int>{4, all} : std::vector<int>{all};  // docs/methods/pbfd.md §8.5
  std::vector<int> ipls{1, 4};
  std::string out = "bench/results";
  std::string sweeps = "vs_D,vs_K,vs_K_floating";  // which sweeps run (a GPU session may pick one)
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--quick") quick = true;
    else if (args[i] == "--steps" && i + 1 < args.size()) steps = std::atoi(args[++i].c_str());
    else if (args[i] == "--threads" && i + 1 < args.size()) thread_counts = int_list(args[++i]);
    else if (args[i] == "--out" && i + 1 < args.size()) out = args[++i];
    else if (args[i] == "--iters-per-launch" && i + 1 < args.size()) ipls = int_list(args[++i]);
    else if (args[i] == "--cpu-max-s" && i + 1 < args.size()) cpu_max_s = std::atof(args[++i].c_str());
    else if (args[i] == "--sweeps" && i + 1 < args.size()) sweeps = args[++i];
    else if (args[i] == "--work-model") work_model_only = true;
    else if (args[i] == "--help") {
      std::puts("usage: bigstep-bench gpu-speedup [--quick] [--steps N] [--out DIR] [--threads T1,T2]\n"
                "                                [--iters-per-launch N1,N2] [--cpu-max-s S] [--sweeps LIST]\n"
                "                                [--work-model]\n"
                "Fig. 8: time per timestep of K fixed-chain trajectories (PBFD JTJ-LM, dt = 0.01 s) vs D at\n"
                "K = 200 and vs K at D = 10, and of the floating 10-link chain on the ground (D = 15,\n"
                "configs/chain_floating_ground.yaml, run from the repository root) vs K; CPU batched team\n"
                "emulation on each --threads count (default 4 and all cores, docs/methods/pbfd.md §8.5) and, with a device, the\n"
                "CUDA fused kernel (over the compacted running set), the same kernel replayed as a CUDA\n"
                "graph (cuda_graph) and the library path (cuBLAS + cuSOLVER) in FP64 and FP32, for each N\n"
                "of --iters-per-launch (default 1,4; a graph holds N single-iteration kernels); and the warp\n"
                "kernel (a 16/32-lane team per trajectory, iterations to convergence in one launch, N = 0):\n"
                "cuda_warp = one launch per horizon, cuda_warp_step = lockstep, one CUDA graph per env step\n"
                "(controls up, outputs down into pinned memory), as an RL step(); its launch plan is printed.\n"
                "dense_gflops counts the LM linear algebra only (J^T J, J^T r, Cholesky, two solves:\n"
                "2D^3 + D^3/3 + 4D^2 per iteration), not the residual and Jacobian evaluation;\n"
                "dense_fraction_of_peak divides it by the device's FP32/FP64 peak (a lower bound).\n"
                "ops_per_pass: every operation of one LM pass counted by the work model (residual, J_r, normal\n"
                "equations, Cholesky, solves, decisions); all_gflops = ops_per_pass x (iterations + one evaluation\n"
                "per step) / wall time, all_fraction_of_peak = all_gflops / peak_gflops (the GPU work model).\n"
                "CPU rows whose estimated time exceeds S seconds (default 120) are skipped and say so.\n"
                "--sweeps: comma-separated subset of vs_D,vs_K,vs_K_floating (default all three).\n"
                "Writes OUT/gpu_speedup.csv (default bench/results); plot: bench/plot_gpu_speedup.py.\n"
                "First, the GPU work model (solvers/pbd/pbd_work_model.h): the team LM iteration of the floating\n"
                "chain counted per phase (operations, busiest-lane path, barriers, lane efficiency) and the\n"
                "predicted H100 time per env step at K = 65536, FP32 and FP64, one block vs one warp per\n"
                "trajectory; writes OUT/gpu_work_model.csv. --work-model: only that.");
      return 0;
    } else {
      std::fprintf(stderr, "bigstep-bench gpu-speedup: bad argument '%s'\n", args[i].c_str());
      return 2;
    }
  }
  for (size_t i = 0; i <= sweeps.size();) {  // every --sweeps name is a known sweep
    const size_t j = std::min(sweeps.find(',', i), sweeps.size());
    const std::string sw = sweeps.substr(i, j - i);
    if (sw != "vs_D" && sw != "vs_K" && sw != "vs_K_floating") {
      std::fprintf(stderr, "bigstep-bench gpu-speedup: --sweeps: unknown sweep '%s' (vs_D, vs_K, vs_K_floating)\n",
                   sw.c_str());
      return 2;
    }
    i = j + 1;
  }
  if (steps <= 0 || thread_counts.empty() || ipls.empty() || !(cpu_max_s > 0)) {
    std::fprintf(stderr, "bigstep-bench gpu-speedup: --steps, --cpu-max-s and the --threads / --iters-per-launch lists "
                 "(comma-separated) must be > 0\n");
    return 2;
  }
  std::unique_ptr<Problem> floating;  // loaded first: a missing config fails before any timing
  try {
    floating = std::make_unique<Problem>(floating_problem());
  } catch (const InvalidArgument& e) {
    std::fprintf(stderr, "bigstep-bench gpu-speedup: %s (run it from the repository root)\n", e.what());
    return 2;
  }
  bench_work_model(out, quick ? std::min(steps, 30) : steps, quick);
  if (work_model_only) return 0;
  std::string why;
  const bool gpu = cuda_device_count(&why) > 0;
  const std::string device = gpu ? cuda_device_name() : "none (" + why + ")";
  std::string threads_list;
  for (int t : thread_counts) {
    if (!threads_list.empty()) threads_list += ',';
    threads_list += std::to_string(t);
  }
  std::printf("device: %s; CPU threads: %s\n", device.c_str(), threads_list.c_str());
  const std::vector<int> Ds = quick ? std::vector<int>{5, 10} : std::vector<int>{5, 10, 20, 40, 80};
  // docs/methods/pbfd.md §8.5 K list from 1 (launch overhead dominates) up to 65536
  std::vector<int> Ks = quick ? std::vector<int>{16, 200}
                              : std::vector<int>{1, 10, 50, 200, 1000, 5000, 16384, 65536};
  std::vector<Row> rows;
  std::map<std::tuple<int, int, bool>, double> ops_cache;  // ops_per_pass by (n_q, contact pairs, fp64)
  auto run = [&](const std::string& sweep, const Problem& m, int K) {
    const int L = m.model.n_q;
    const size_t first_row = rows.size();
    // CPU: skip sizes that would take minutes on few cores (estimate from K * D^3)
    // ~12 LM iterations per step at ~2e-8 s * D^3 each (measured on the fixed chain, one core;
    // the floating chain on the ground measured 0.86 ms per env-step and thread at D = 15: x1.2)
    for (int threads : thread_counts) {
      const double est = double(K) * steps * 2.5e-7 * L * L * L / threads * (m.model.spheres.empty() ? 1 : 1.2);
      if (est >= cpu_max_s) {
        std::printf("%-6s cpu_batched  fp64 D=%3d K=%6d %2d threads: skipped (estimated %.0f s > --cpu-max-s %.0f)\n",
                    sweep.c_str(), L, K, threads, est, cpu_max_s);
        continue;
      }
      rows.push_back(measure<double>(sweep, "cpu_batched", m, K, steps, threads, 1,
                                     [&](const Model& mm, const PbdSettings& s, int k, int n) {
                                       return std::make_unique<CpuAdapter<double>>(mm, s, k, n, threads);
                                     }));
    }
#ifdef BIGSTEP_WITH_CUDA
    if (gpu) {
      // fused: one kernel per launch over the compacted running set; graph: each launch replayed
      // as a CUDA graph of N single-iteration kernels over all K; library: cuBLAS + cuSOLVER
      for (const char* name : {"cuda_fused", "cuda_graph", "cuda_library"})
        for (int ipl : ipls) {
          const std::string nm = name;
          const DenseAlgebra a = nm == "cuda_library" ? DenseAlgebra::Library : DenseAlgebra::Fused;
          const bool graph = nm == "cuda_graph";
          rows.push_back(measure<double>(sweep, nm, m, K, steps, 0, ipl, [&](const Model& mm, const PbdSettings& s, int k, int n) {
            return std::make_unique<CudaAdapter<double>>(mm, s, k, n, a, graph);
          }));
          rows.back().peak_gflops = cuda_peak_gflops(true);
          rows.push_back(measure<float>(sweep, nm, m, K, steps, 0, ipl, [&](const Model& mm, const PbdSettings& s, int k, int n) {
            return std::make_unique<CudaAdapter<float>>(mm, s, k, n, a, graph);
          }));
          rows.back().peak_gflops = cuda_peak_gflops(false);
        }
      // the warp mapping: rollout mode, one launch per horizon; lockstep, one CUDA
      // graph per env step. N = 0: iterations run to convergence inside the launch.
      if (sweep == "vs_K_floating" && K == Ks.front()) {
        print_warp_plan<double>(m, K);
        print_warp_plan<float>(m, K);
      }
      rows.push_back(measure<double>(sweep, "cuda_warp", m, K, steps, 0, 0, [&](const Model& mm, const PbdSettings& s, int k, int n) {
        return std::make_unique<CudaWarpAdapter<double>>(mm, s, k, n);
      }));
      rows.back().peak_gflops = cuda_peak_gflops(true);
      rows.push_back(measure<float>(sweep, "cuda_warp", m, K, steps, 0, 0, [&](const Model& mm, const PbdSettings& s, int k, int n) {
        return std::make_unique<CudaWarpAdapter<float>>(mm, s, k, n);
      }));
      rows.back().peak_gflops = cuda_peak_gflops(false);
      rows.push_back(measure<double>(sweep, "cuda_warp_step", m, K, steps, 0, 0, [&](const Model& mm, const PbdSettings& s, int k, int n) {
        return std::make_unique<CudaStepAdapter<double>>(mm, s, k, n);
      }));
      rows.back().peak_gflops = cuda_peak_gflops(true);
      rows.push_back(measure<float>(sweep, "cuda_warp_step", m, K, steps, 0, 0, [&](const Model& mm, const PbdSettings& s, int k, int n) {
        return std::make_unique<CudaStepAdapter<float>>(mm, s, k, n);
      }));
      rows.back().peak_gflops = cuda_peak_gflops(false);
    }
#endif
    for (size_t i = first_row; i < rows.size(); ++i) {  // all-operation counts of this problem
      const bool fp64 = rows[i].precision == "fp64";
      double& ops = ops_cache[{m.model.n_q, m.model.n_point_pair, fp64}];
      if (ops == 0) ops = fp64 ? ops_per_pass<double>(m, steps) : ops_per_pass<float>(m, steps);
      rows[i].ops_per_pass = ops;
    }
    for (size_t i = rows.size(); i-- > 0 && rows[i].D == L && rows[i].K == K && rows[i].sweep == sweep;) {
      const Row& r = rows[i];
      std::printf("%-6s %-12s %s D=%3d K=%6d threads=%2d N=%d: %.3f ms/timestep, %.3g LM it/s\n", r.sweep.c_str(),
                  r.backend.c_str(), r.precision.c_str(), r.D, r.K, r.threads, r.iters_per_launch, 1e3 * r.wall_s / r.steps,
                  r.iters_total / r.wall_s);
    }
  };
  auto wanted = [&](const std::string& sw) { return ("," + sweeps + ",").find("," + sw + ",") != std::string::npos; };
  if (wanted("vs_D"))
    for (int L : Ds) run("vs_D", fixed_problem(L), 200);
  if (wanted("vs_K"))
    for (int K : Ks) run("vs_K", fixed_problem(10), K);
  if (wanted("vs_K_floating"))
    for (int K : Ks) run("vs_K_floating", *floating, K);
  std::filesystem::path path;
  std::string date;
  std::ofstream f = bench_result_file(out, "gpu_speedup.csv", path, date);
  f << "# bigstep-bench gpu-speedup" << (quick ? " --quick" : "") << " --steps " << steps << "; device: " << device
    << "; cpu threads: " << threads_list << "; " << date << "\n";
  f << "sweep,backend,precision,D,K,steps,threads,iters_per_launch,wall_s,time_per_timestep_ms,lm_iterations_per_s,"
       "env_steps_per_s,iterations_per_step,dense_gflops,peak_gflops,dense_fraction_of_peak,ops_per_pass,all_gflops,"
       "all_fraction_of_peak\n";
  for (const Row& r : rows) {
    const double D = r.D, flops = 2 * D * D * D + D * D * D / 3 + 4 * D * D;
    // every counted operation: ops per pass x passes (the iterations plus each step's converging evaluation)
    const double all_gflops = 1e-9 * r.ops_per_pass * (r.iters_total + double(r.K) * r.steps) / r.wall_s;
    f << r.sweep << "," << r.backend << "," << r.precision << "," << r.D << "," << r.K << "," << r.steps << ","
      << r.threads << "," << r.iters_per_launch << "," << r.wall_s << "," << 1e3 * r.wall_s / r.steps << ","
      << r.iters_total / r.wall_s << "," << double(r.K) * r.steps / r.wall_s << ","
      << r.iters_total / (double(r.K) * r.steps) << "," << 1e-9 * flops * r.iters_total / r.wall_s << ",";
    if (r.peak_gflops > 0) f << r.peak_gflops << "," << 1e-9 * flops * r.iters_total / r.wall_s / r.peak_gflops;
    else f << ",";
    f << "," << r.ops_per_pass << "," << all_gflops << ",";
    if (r.peak_gflops > 0) f << all_gflops / r.peak_gflops;
    f << "\n";
  }
  std::printf("wrote %s\n", path.c_str());
  return 0;
}

}  // namespace bigstep
