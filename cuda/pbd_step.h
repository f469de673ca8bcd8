// Host side of the CUDA batched PBFD JTJ-LM (cuda/pbd_step.cu): same API as the CPU emulation
// solvers/pbd/pbd_batch_team.h. launch(): ONE kernel launch = one LM iteration of every running
// trajectory (one block per trajectory, n_q lanes rounded up to a warp). launch_persistent() /
// step_graph(): the warp mapping, a trajectory's iterations to convergence in one launch.
#pragma once
#include <memory>
#include <vector>

#include "solvers/pbd/pbd_step.h"
#include "solvers/pbd/pbd_step_team.h"  // DenseAlgebra, TrajStatus

namespace bigstep {

template <class S>
class PbfdTeamBatchCuda {
 public:
  /// algebra: Fused = the whole iteration in one kernel; Library = team phases as kernels with
  /// cuBLAS gemmStridedBatched (J^T J, J^T r) and cuSOLVER potrf/potrsBatched between them.
  /// out_slots: committed steps kept on the device (ring, step n in slot n % out_slots); 0 = n_steps.
  PbfdTeamBatchCuda(const Model& m, const PbdSettings& s, int K, int n_steps, bool lockstep,
                    DenseAlgebra algebra = DenseAlgebra::Fused, int out_slots = 0);
  ~PbfdTeamBatchCuda();
  /// Initial states of all K trajectories (rows of theta0 / theta_m1, each n_q), uploaded at once.
  /// contact: per-trajectory C_perp, C_par (K entries), or empty = the settings' values;
  /// link_mass_scale: per-trajectory factor on each link's mass and inertia (K x n_link, row-major,
  /// RolloutParamTable::link_mass_scale), or empty = 1.
  void init(const std::vector<VecX>& theta0, const std::vector<VecX>& theta_m1,
            const std::vector<ContactParams>& contact = {}, const std::vector<double>& link_mass_scale = {});
  /// New episode for trajectories ks (lockstep RL resets): state from theta0[i] / theta_m1[i]
  /// for trajectory ks[i], RUNNING at its next step; parameters, gains and controls stay.
  void reinit(const std::vector<int>& ks, const std::vector<VecX>& theta0, const std::vector<VecX>& theta_m1);
  /// Turns the stable-PD servo on with gains kp, kd (n_q each) for every trajectory.
  void set_gains(const VecX& kp, const VecX& kd);
  /// Controls of every trajectory's next step, one strided copy: u is (K x 3 n_q) row-major,
  /// row k = [tau | theta_bar | theta_dot_bar] (PD targets at the step's end time; zeros
  /// without a servo). In lockstep mode call it while the trajectories are WAITING.
  void set_controls(const std::vector<double>& u);
  /// Replays each launch(N) as a CUDA graph of N single-iteration kernels plus the running count
  /// (captured once per N): one host submission instead of N + 2, the per-launch semantics of
  /// docs/methods/pbfd.md §6 kept. Off by default: fused launches over the compacted running set.
  void use_graph(bool on);
  /// One launch of `iterations` LM iterations per running trajectory (1 = docs/methods/pbfd.md §6; more
  /// amortise launch overhead at small K); returns how many trajectories are RUNNING afterwards.
  /// Fused path: the grid covers only the RUNNING trajectories (Thrust copy_if compaction).
  int launch(int iterations = 1);
  /// How many trajectories are in state st (TrajStatus): a Thrust reduction on the device.
  int count(int st) const;
  /// Largest last-accepted residual |r|_inf over all trajectories: a Thrust reduction.
  double max_residual() const;
  /// WAITING -> RUNNING for every trajectory, on the device.
  void release_waiting();
  /// Downloads what the accessors below read: statuses, the output slots and the per-trajectory
  /// scalars (strided copies packed on the host), never the whole trajectory state.
  void download_outputs();
  void download();  ///< = download_outputs()
  /// Status of trajectory k as of the last download().
  int status(int k) const;
  /// Timesteps trajectory k has committed, as of the last download().
  int steps_done(int k) const;
  VecX theta(int k, int n) const;
  void theta_into(int k, int n, double* out) const;  ///< theta(k, n) into out (n_q), no allocation
  int iterations(int k, int n) const;
  unsigned step_status(int k, int n) const;
  /// Last accepted residual |r|_inf of trajectory k (its last committed step, in lockstep mode).
  double residual(int k) const;

  // ---- warp mapping, iterations to convergence in one launch ----
  /// One persistent launch of the warp kernel (a W-lane team per trajectory, W = 16 when n_q <=
  /// 16 else 32, several teams per block, per-trajectory state in shared memory): every RUNNING
  /// trajectory iterates until it leaves RUNNING (lockstep: one committed step; rollout: its whole
  /// horizon), or for it_cap iterations when it_cap > 0. Same results as the CPU emulation's
  /// PbfdTeamBatch::launch_persistent. Returns the running count: 0 without a read-back when
  /// it_cap <= 0 (every attempt ends within it_max iterations, a step within two attempts), else
  /// a device-side count read back once.
  int launch_persistent(int it_cap = 0);
  /// One lockstep env step as a CUDA graph (captured on the first call, replayed after): the
  /// controls u (K x 3 n_q, as set_controls) from pinned host memory, WAITING -> RUNNING, the
  /// persistent warp kernel, and the outputs (as download_outputs) into pinned host memory, all
  /// asynchronous on one stream; returns when the stream is done. = set_controls(u);
  /// release_waiting(); launch_persistent(); download_outputs(). In rollout mode the first call
  /// runs the whole horizon.
  void step_graph(const std::vector<double>& u);
  /// The warp kernel's launch plan, chosen on the host for occupancy (cudaOccupancy*).
  struct WarpPlan {
    int lanes = 0;             ///< lanes per trajectory (16 or 32)
    int bytes_per_traj = 0;    ///< shared memory per trajectory: its two views, workspace (unless global), ints
    int traj_per_block = 0;    ///< teams (trajectories) per block
    int blocks_per_sm = 0;     ///< resident blocks per SM (cudaOccupancyMaxActiveBlocksPerMultiprocessor)
    int regs_per_thread = 0;   ///< cudaFuncGetAttributes numRegs of the kernel
    int local_bytes = 0;       ///< per-thread local memory (spills) of the kernel
    int sm_count = 0;
  };
  WarpPlan warp_plan() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace bigstep
