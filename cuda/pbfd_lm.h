// Host side of the CUDA batched PBFD JTJ-LM (cuda/pbfd_lm.cu): same API as the CPU emulation
// solvers/pbfd_batch_team.h; each launch() is ONE kernel launch = one LM iteration of every
// running trajectory (one block per trajectory, n_q lanes rounded up to a warp).
#pragma once
#include <memory>
#include <vector>

#include "solvers/pbd_step.h"
#include "solvers/pbfd_lm_team.h"  // DenseAlgebra, TrajStatus

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
  /// spec §6 kept. Off by default: fused launches over the compacted running set.
  void use_graph(bool on);
  /// One launch of `iterations` LM iterations per running trajectory (1 = spec §6; more
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

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace bigstep
