// `bigstep-bench gpu-speedup`'s work model (solvers/pbd/pbd_work_model.h): the team
// LM iteration counted per phase on the CPU (Counted<S> on a CountingTeam), and the predicted H100
// time per env step of the floating chain (D = 15) at K = 65536 for the current mapping (one block
// per trajectory, cuda/pbd_step.cu) and for one warp (and half a warp) per trajectory (item 2).
#include <cstdio>
#include <random>

#include "bench/harness/bench_command.h"
#include "io/scene.h"
#include "solvers/pbd/pbd_step_persistent.h"
#include "solvers/pbd/pbd_work_model.h"

namespace bigstep {

namespace {

// The mappings the model compares; every constant is printed with the results.
std::vector<GpuMapping> mappings(const Model& model, bool fp64) {
  const ModelArrays<double> arrays(model);
  const ModelView<double> mv = arrays.view();
  const double D = model.n_q, bytes = fp64 ? 8 : 4, scratch = pbfd_scratch_size(mv);
  GpuMapping block;  // cuda/pbd_step.cu today: a block of ceil(D/32) warps, J_r and L in shared memory
  block.name = "block_per_traj";
  block.lanes = (model.n_q + 31) / 32 * 32;
  block.regs = 232;  // FP64 fused kernel, -Xptxas -v; taken for FP32 too (no bound either)
  block.smem_per_traj = (scratch + 2 * D * D) * bytes;
  block.bar_clk = 40;  // __syncthreads + the L1 round trip of the scalars lane 0 published in global memory
  block.blocks_per_traj = true;
  block.host_us_per_launch = 30;  // launch + Thrust copy_if (cudaMalloc/cudaFree) + host sync + D2H count
  block.launch_per_iteration = true;  // lockstep: a launch per iteration of the slowest trajectory
  GpuMapping warp;  // item 2: a warp per trajectory, everything per trajectory in shared memory
  warp.name = "warp_per_traj";
  warp.lanes = 32;
  // lm_warp_kernel<S, 16, true> by bench/ptxas_plan.sh (sm_90, results/ptxas_plan.csv): FP32 at its
  // __launch_bounds__(128, 5) cap (no spills), FP64 what ptxas needs
  warp.regs = fp64 ? 178 : 96;
  // the kernel's dynamic shared memory per trajectory (cuda/pbd_step.cu WarpSmem): workspace, ints,
  // the local and global views (LmTraj: pointers) and the residual's step constants
  warp.smem_per_traj = lm_local_size(mv) * bytes + kLmInts * 4 + 2.0 * sizeof(LmTraj<double>) +
                       double(fp64 ? sizeof(PbfdStepConst<double>) : sizeof(PbfdStepConst<float>));
  warp.max_teams_per_block = 128 / 32;  // kWarpBlockMax threads per block
  warp.bar_clk = 8;  // __syncwarp + a shared-memory read
  warp.host_us_per_launch = 10;  // persistent kernel, one graph launch per env step, pinned async copies
  GpuMapping half = warp;  // two trajectories per warp (D <= 16)
  half.name = "half_warp_per_traj";
  half.lanes = 16;
  half.max_teams_per_block = 128 / 16;
  return {block, warp, half};
}

// The counts (one run per precision and team width) and their rows.
struct Run {
  const char* precision;
  bool fp64;
  int lanes;
  LmWorkCount c;
};

template <class T>
LmWorkCount count(const Scene& sc, int K, int steps, int lanes) {
  PbdSettings s = sc.settings;
  if (sizeof(T) == 4) {  // as bench gpu-speedup runs FP32
    s.eps_r = 1e-4;
    s.eps_x = 1e-6;
  }
  std::mt19937 rng(1);
  std::normal_distribution<double> N(0, 0.01);
  std::vector<VecX> th0(static_cast<size_t>(K)), thm1(static_cast<size_t>(K));
  for (int k = 0; k < K; ++k) {
    th0[size_t(k)] = sc.theta0;
    for (int i = 0; i < sc.model.n_q; ++i) th0[size_t(k)][i] += N(rng);
    thm1[size_t(k)] = th0[size_t(k)] - s.dt * sc.theta_dot0;
  }
  return count_lm_work<T>(sc.model, s, th0, thm1, steps, lanes);
}

}  // namespace

int bench_work_model(const std::string& out, int steps, bool quick) {
  const Scene sc = load_scene("configs/chain_floating_ground.yaml");
  const int K_count = quick ? 8 : 64, K = 65536;
  GpuSpec g;
  // instructions per counted operation: 1 (floating point only: a bound), and 3 (an assumption for
  // the loads, stores, index arithmetic and branches around each; the CPU team step runs 7.4 x86
  // instructions per counted operation, bench/results/step_cost.csv vs this count)
  const double instr_per_op[] = {1, 3};
  std::vector<Run> runs;
  for (int lanes : {32, 16}) {
    runs.push_back({"fp64", true, lanes, count<double>(sc, K_count, steps, lanes)});
    runs.push_back({"fp32", false, lanes, count<float>(sc, K_count, steps, lanes)});
  }
  const double D = sc.model.n_q, dense = 2 * D * D * D + D * D * D / 3 + 4 * D * D;
  char constants[512];
  std::snprintf(constants, sizeof constants,
                "device %s: n_sm=%d clock_ghz=%.3f issue_warp_instr_per_clk_sm fp32=%.0f fp64=%.0f dep_clk fp32=%.0f "
                "fp64=%.0f special_instr fp32=%.0f fp64=%.0f regs_per_sm=%d max_warps_sm=%d max_blocks_sm=%d "
                "smem_per_sm=%.0f smem_reserved_per_block=%.0f reg_alloc_unit=%d",
                g.name.c_str(), g.n_sm, g.clock_ghz, g.issue_fp32, g.issue_fp64, g.dep_fp32, g.dep_fp64, g.special_fp32,
                g.special_fp64, g.regs_per_sm, g.max_warps_per_sm, g.max_blocks_per_sm, g.smem_per_sm,
                g.smem_reserved_per_block, g.reg_alloc_unit);
  std::printf("work model (solvers/pbd/pbd_work_model.h): floating chain D = %d, %d rollouts x %d steps counted\n"
              "  (Counted<S> on a CountingTeam: ops = + - * / compare sqrt pow sin cos, one each; path = sum over\n"
              "  barrier intervals of the busiest lane; lane efficiency = ops / (lanes x path); dense-only count\n"
              "  2D^3 + D^3/3 + 4D^2 = %.0f)\n  %s\n",
              sc.model.n_q, K_count, steps, dense, constants);
  std::filesystem::path path;
  std::string date;
  std::ofstream f = bench_result_file(out, "gpu_work_model.csv", path, date);
  f << "# bigstep-bench gpu-speedup --work-model" << (quick ? " --quick" : "") << " --steps " << steps
    << "; floating chain D=" << sc.model.n_q << ", " << K_count << " rollouts counted; predicted at K=" << K << "; "
    << date << "\n# " << constants << "\n";
  f << "mapping,precision,lanes,phase,ops_per_iteration,path_per_iteration,barriers_per_iteration,"
       "special_per_iteration,lane_efficiency,instr_per_op,passes_per_step,max_passes_per_step,regs,"
       "smem_per_traj_bytes,bar_clk,host_us,resident_per_sm,path_instr_per_step,t_throughput_us,t_latency_us,"
       "t_host_us,t_step_us,env_steps_per_s,bound,traj_per_block\n";
  for (const bool fp64 : {false, true}) {
    for (const GpuMapping& mp : mappings(sc.model, fp64)) {
      const Run* run = nullptr;
      for (const Run& r : runs)
        if (r.fp64 == fp64 && r.lanes == mp.lanes) run = &r;
      if (!run) continue;
      const LmWorkCount& c = run->c;
      std::printf("\n%s %s (lanes %d, regs %d, %.0f B shared/traj, barrier %.0f clk, host %.0f us per %s): "
                  "%.2f passes/step (slowest of %d: %.2f)\n  %-10s %10s %10s %8s %8s %6s\n",
                  mp.name.c_str(), run->precision, mp.lanes, mp.regs, mp.smem_per_traj, mp.bar_clk,
                  mp.host_us_per_launch, mp.launch_per_iteration ? "iteration" : "env step", c.iterations_per_step(),
                  c.K, c.max_iterations_step, "phase", "ops/iter", "path/iter", "barriers", "special", "eff");
      // per phase, per pass of the iteration (the init phase runs once per episode: left out)
      const double per_it = 1.0 / c.iterations;
      auto row = [&](const char* name, const TeamWork& w) {
        std::printf("  %-10s %10.0f %10.0f %8.1f %8.1f %5.1f%%\n", name, w.work * per_it, w.path * per_it,
                    w.barriers * per_it, w.special * per_it, 100 * w.efficiency(mp.lanes));
        f << mp.name << "," << run->precision << "," << mp.lanes << "," << name << "," << w.work * per_it << ","
          << w.path * per_it << "," << w.barriers * per_it << "," << w.special * per_it << ","
          << w.efficiency(mp.lanes);
      };
      for (int ph = 0; ph < LMW_INIT; ++ph) {
        row(lm_work_phase_name(ph), c.phase[size_t(ph)]);
        f << ",,,,,,,,,,,,,,,,\n";
      }
      for (const double ipo : instr_per_op) {
        g.instr_per_op = ipo;
        const GpuPrediction p = predict_gpu(c, g, mp, K, fp64);
        if (ipo == instr_per_op[0]) row("total", c.iteration_total());
        else {
          f << mp.name << "," << run->precision << "," << mp.lanes << ",total,,,,,";  // same counts as above
        }
        f << "," << ipo << "," << c.iterations_per_step() << "," << c.max_iterations_step << "," << mp.regs << ","
          << mp.smem_per_traj << "," << mp.bar_clk << "," << mp.host_us_per_launch << "," << p.resident << ","
          << p.path_instr << "," << p.t_thr_us << "," << p.t_lat_us << "," << p.t_host_us << "," << p.t_step_us << ","
          << p.env_steps_per_s << "," << p.bound << "," << p.teams_per_block << "\n";
        std::printf("  instr/op %.0f: %.0f instr on the path per env step (special x%.0f), %.0f barriers, %d "
                    "trajectories/SM (blocks of %d); K = %d: throughput %.0f us, latency %.0f us (%s-bound), host %.0f us -> "
                    "%.0f us per env step = %.3g env-steps/s\n",
                    ipo, p.path_instr, fp64 ? g.special_fp64 : g.special_fp32, p.barriers, p.resident, p.teams_per_block, K, p.t_thr_us,
                    p.t_lat_us, p.bound, p.t_host_us, p.t_step_us, p.env_steps_per_s);
      }
    }
  }
  std::printf("wrote %s\n", path.c_str());
  return 0;
}

}  // namespace bigstep
