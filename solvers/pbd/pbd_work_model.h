// The GPU work model: what the team-form PBFD LM iteration (solvers/pbd/pbd_step_team.h,
// docs/methods/pbfd.md §6) costs a SIMT device, measured on the CPU by running the kernel's own code with
// S = Counted<T> (solvers/team/counted.h) on a CountingTeam (solvers/team/team.h), and a throughput /
// latency model of one device that turns the counts into a predicted time per env step.
//
// Counting (per LM iteration, per phase of lm_team_iteration): work = operations, each once;
// path = the sum over barrier intervals of the slowest lane's operations (what a SIMT team of
// `lanes` lanes spends); lane efficiency = work / (lanes * path); barriers = sync() calls.
//
// Device model (every constant is a field of GpuSpec / GpuMapping and printed with the result):
//   per SM, ceil(K / n_sm) trajectories per env step, R of them resident at once (occupancy from
//   registers, shared memory, warp and block limits); `warps` per trajectory (1/2 when two share one);
//   throughput bound  T_thr = ceil(K / n_sm) * warps * C / issue      [cycles]
//   latency bound     T_lat = ceil(K / (n_sm R)) * (C * dep + B * bar)
//   device time       max(T_thr, T_lat) / clock + host time per env step
// with C the critical path in instructions per env step (path, a special function weighing
// `special_instr` instructions), B the barriers per env step, `issue` warp instructions per clock
// and SM, `dep` the clocks between dependent instructions of one warp, `bar` the clocks of one
// barrier plus the round trip of the shared scalars it publishes. Not modelled: memory bandwidth
// (the per-trajectory state is a few KB, touched once per phase) and FMA contraction (each + and *
// counts one: an upper bound on the instructions).
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/model_view.h"
#include "solvers/team/counted.h"
#include "solvers/pbd/pbd_step.h"
#include "solvers/pbd/pbd_step_team.h"
#include "solvers/team/team.h"

namespace bigstep {

/// A ModelView<Counted<T>> over ModelArrays<T>: the real fields converted (same values), the
/// integer fields shared. Owns the converted arrays.
template <class T>
class CountedModel {
 public:
  using C = Counted<T>;
  explicit CountedModel(const Model& m) : src_(m) {
    const ModelView<T> s = src_.view();
    static_cast<ModelSizes&>(view_) = s;
#define BIGSTEP_COUNTED_FIELD(kind, name, rows, cols) view_.name = field(src_.name);
    BIGSTEP_MODEL_FIELDS(BIGSTEP_COUNTED_FIELD)
#undef BIGSTEP_COUNTED_FIELD
    for (int a = 0; a < 3; ++a) view_.gravity[a] = C(s.gravity[a]);
    view_.weight = C(s.weight);
  }
  CountedModel(const CountedModel&) = delete;
  CountedModel& operator=(const CountedModel&) = delete;
  const ModelView<C>& view() const { return view_; }

 private:
  const C* field(const std::vector<T>& v) {
    reals_.emplace_back(v.begin(), v.end());
    return reals_.back().data();
  }
  template <class U>
  const U* field(const std::vector<U>& v) {
    return v.data();
  }
  ModelArrays<T> src_;
  std::vector<std::vector<C>> reals_;
  ModelView<C> view_;
};

/// The phases of one LM iteration (lm_team_iteration), and the step start (lm_team_init).
enum LmWorkPhase { LMW_EVALUATE, LMW_NORMAL, LMW_UPDATE, LMW_FACTOR, LMW_SOLVE, LMW_CANDIDATE, LMW_INIT, LMW_N };
inline const char* lm_work_phase_name(int p) {
  static const char* names[] = {"evaluate", "normal_eq", "update", "factor", "solve", "candidate", "init"};
  return names[p];
}

/// Counts of one run: per phase the summed TeamWork over every LM iteration of every trajectory.
struct LmWorkCount {
  int lanes = 0, D = 0, K = 0, steps = 0;
  std::vector<TeamWork> phase;     // (LMW_N) sums over the run
  double iterations = 0;           // passes of lm_team_iteration on a RUNNING trajectory (one evaluation
                                   // each: a step's iteration count + 1, the converging evaluation)
  double max_iterations_step = 0;  // mean over steps of the most passes any trajectory took
  double failed_steps = 0;         // committed steps with a failure bit
  /// Sum of the iteration phases (init excluded: once per episode).
  TeamWork iteration_total() const {
    TeamWork t;
    for (int p = 0; p < LMW_INIT; ++p) t += phase[size_t(p)];
    return t;
  }
  double iterations_per_step() const { return iterations / (double(K) * steps); }
};

/// Runs `steps` PBFD steps (JTJ-LM, free-running) of the K trajectories th0 / thm1 through the team
/// iteration with S = Counted<T> on a CountingTeam of `lanes` lanes, phase by phase as
/// lm_team_iteration does, and returns the counts. FP32 callers pass the settings they run with.
template <class T>
LmWorkCount count_lm_work(const Model& model, const PbdSettings& s, const std::vector<VecX>& th0,
                          const std::vector<VecX>& thm1, int steps, int lanes) {
  using S = Counted<T>;
  const CountedModel<T> cm(model);
  const ModelView<S>& m = cm.view();
  const int K = int(th0.size()), D = m.n_q;
  LmTeamSettings<S> cfg;
  cfg.eps_r = S(s.eps_r);
  cfg.eps_x = S(s.eps_x);
  cfg.it_max = s.it_max;
  cfg.n_steps = steps;
  cfg.n_out = steps;
  cfg.restart = s.restart;
  cfg.warm_lambda = s.warm_lambda;
  cfg.order = s.order;
  const ContactParams& cp = s.contact;
  lm_set_friction(cfg, cp);
  const S dt = S(s.dt), alpha = S(cp.alpha), beta = S(cp.beta), gamma = S(cp.gamma);
  const size_t per = size_t(lm_traj_size(m, steps, cfg.order));
  std::vector<S> data(per * size_t(K), std::numeric_limits<S>::quiet_NaN()), scratch(size_t(pbfd_scratch_size(m)));
  std::vector<int> ints(size_t(kLmInts) * K, 0), iters(size_t(steps) * K, -1);
  std::vector<unsigned> status(size_t(steps) * K, 0);
  WorkTally tally(lanes, LMW_N);
  LmWorkCount out;
  out.lanes = tally.lanes;
  out.D = D;
  out.K = K;
  out.steps = steps;
  {
    CountingTeam team(tally);
    for (int k = 0; k < K; ++k) {
      LmTraj<S> t = lm_traj_at(m, steps, cfg.order, k, data.data(), ints.data(), iters.data(), status.data());
      for (int i = 0; i < D; ++i) {
        t.th_n[i] = S(th0[size_t(k)][i]);
        t.th_nm1[i] = S(thm1[size_t(k)][i]);
        t.tau[i] = t.theta_bar[i] = t.theta_dot_bar[i] = t.kp[i] = t.kd[i] = S(0);
      }
      lm_write_params<S>(model, t.params, cp, nullptr);
      tally.set_phase(LMW_INIT);
      lm_team_init(team, m, t, scratch.data());
      // every LM iteration of this trajectory (a persistent kernel runs it to its last step)
      while (t.status() == TRAJ_RUNNING) {
        out.iterations += 1;
        tally.set_phase(LMW_EVALUATE);
        lm_phase_evaluate(team, m, cfg, t, dt, alpha, beta, gamma, scratch.data());
        tally.set_phase(LMW_NORMAL);
        lm_phase_normal_fused(team, D, t);
        tally.set_phase(LMW_UPDATE);
        lm_phase_update(team, m, cfg, t, scratch.data());
        tally.set_phase(LMW_FACTOR);
        lm_phase_factor_fused(team, D, t);
        tally.set_phase(LMW_SOLVE);
        lm_phase_solve_fused(team, D, t);
        tally.set_phase(LMW_CANDIDATE);
        lm_phase_candidate(team, m, cfg, t, scratch.data());
      }
    }
    tally.close(false);
  }
  out.phase = tally.phase;
  for (int n = 0; n < steps; ++n) {
    int mx = 0;
    for (int k = 0; k < K; ++k) {
      mx = std::max(mx, iters[size_t(k) * steps + n]);
      out.failed_steps += (status[size_t(k) * steps + n] & team_detail::kFailBits) != 0;
    }
    out.max_iterations_step += double(mx + 1) / steps;  // passes: launches of a one-launch-per-iteration kernel
  }
  return out;
}

/// One device's constants (defaults: NVIDIA H100 SXM5, public datasheet figures).
struct GpuSpec {
  std::string name = "H100-SXM5";
  int n_sm = 132;
  double clock_ghz = 1.755;                 // sustained SM clock under load (boost 1.98)
  double issue_fp32 = 4, issue_fp64 = 2;    // warp instructions per clock and SM (128 FP32 / 64 FP64 lanes)
  double dep_fp32 = 4, dep_fp64 = 8;        // clocks between dependent instructions of one warp
  double special_fp32 = 16, special_fp64 = 40;  // instructions of one pow / sin / cos (CUDA libm)
  double instr_per_op = 1;  // instructions per counted operation: 1 = floating-point instructions only
                            // (a bound); loads, stores, index arithmetic and branches add to it
  int regs_per_sm = 65536, max_warps_per_sm = 64, max_blocks_per_sm = 32;
  double smem_per_sm = 228.0 * 1024;        // bytes (227 KB usable per block)
  double smem_reserved_per_block = 1024;    // bytes the runtime reserves per resident block
  int reg_alloc_unit = 256;                 // registers are allocated per warp in units of this
};

/// How trajectories map onto the device.
struct GpuMapping {
  std::string name;
  int lanes = 32;                 // threads per trajectory
  int regs = 128;                 // registers per thread
  double smem_per_traj = 0;       // bytes of shared memory per trajectory
  double bar_clk = 8;             // clocks per barrier (sync + reading what it publishes)
  bool blocks_per_traj = false;   // one block per trajectory (the block-count limit applies)
  double host_us_per_launch = 0;  // host time per launch
  bool launch_per_iteration = false;  // one launch per LM iteration of the slowest trajectory (else per env step)
  // > 0: blocks of 1..max_teams_per_block trajectories, the count that keeps the most resident per
  // SM (the warp kernel's host plan, cuda/pbd_step.cu plan_warp; per-block reservation and register
  // allocation by warp included); 0: trajectories packed without block granularity
  int max_teams_per_block = 0;
};

/// The model's prediction for K trajectories of one count (in its precision).
struct GpuPrediction {
  double path_instr = 0, work_instr = 0, barriers = 0;  // per env step and trajectory
  double lane_efficiency = 0;
  int resident = 0;                  // trajectories per SM at once
  int teams_per_block = 0;           // the block size chosen (max_teams_per_block > 0)
  double t_thr_us = 0, t_lat_us = 0, t_host_us = 0, t_step_us = 0;
  double env_steps_per_s = 0;
  const char* bound = "";
};

inline GpuPrediction predict_gpu(const LmWorkCount& c, const GpuSpec& g, const GpuMapping& mp, int K, bool fp64) {
  GpuPrediction p;
  const TeamWork it = c.iteration_total();
  const double per_step = 1.0 / (double(c.K) * c.steps);  // counts are sums over K x steps env steps
  const double special = fp64 ? g.special_fp64 : g.special_fp32;
  p.path_instr = g.instr_per_op * (it.path + (special - 1) * it.special) * per_step;
  p.work_instr = g.instr_per_op * (it.work + (special - 1) * it.special) * per_step;
  p.barriers = it.barriers * per_step;
  p.lane_efficiency = p.work_instr / (double(mp.lanes) * p.path_instr);
  // warps per trajectory: ceil(lanes / 32), or a fraction when several trajectories share a warp
  const double warps = mp.lanes >= 32 ? double((mp.lanes + 31) / 32) : double(mp.lanes) / 32;
  int R = int(g.max_warps_per_sm / warps);
  R = std::min(R, int(g.regs_per_sm / (mp.regs * 32 * warps)));
  if (mp.blocks_per_traj) R = std::min(R, g.max_blocks_per_sm);
  if (mp.smem_per_traj > 0) R = std::min(R, int(g.smem_per_sm / mp.smem_per_traj));
  if (mp.max_teams_per_block > 0) {  // the plan over block sizes (ties: the larger block, as plan_warp)
    const int unit = g.reg_alloc_unit, regs_warp = (mp.regs * 32 + unit - 1) / unit * unit;
    R = 0;
    for (int T = mp.max_teams_per_block; T >= 1; --T) {
      const int warps_b = (T * mp.lanes + 31) / 32;
      int nb = std::min(g.max_warps_per_sm / warps_b, g.max_blocks_per_sm);
      nb = std::min(nb, g.regs_per_sm / (warps_b * regs_warp));
      if (mp.smem_per_traj > 0)
        nb = std::min(nb, int(g.smem_per_sm / (T * mp.smem_per_traj + g.smem_reserved_per_block)));
      if (nb * T > R) {
        R = nb * T;
        p.teams_per_block = T;
      }
    }
  }
  p.resident = std::max(R, 1);
  const double per_sm = std::ceil(double(K) / g.n_sm);
  const double issue = fp64 ? g.issue_fp64 : g.issue_fp32, dep = fp64 ? g.dep_fp64 : g.dep_fp32;
  const double t_thr = per_sm * warps * p.path_instr / issue;
  const double t_lat = std::ceil(per_sm / p.resident) * (p.path_instr * dep + p.barriers * mp.bar_clk);
  p.t_thr_us = t_thr / (g.clock_ghz * 1e3);
  p.t_lat_us = t_lat / (g.clock_ghz * 1e3);
  p.bound = t_thr >= t_lat ? "throughput" : "latency";
  p.t_host_us = mp.host_us_per_launch * (mp.launch_per_iteration ? c.max_iterations_step : 1.0);
  p.t_step_us = std::max(p.t_thr_us, p.t_lat_us) + p.t_host_us;
  p.env_steps_per_s = double(K) / (p.t_step_us * 1e-6);
  return p;
}

}  // namespace bigstep
