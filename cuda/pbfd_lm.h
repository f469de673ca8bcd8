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
  PbfdTeamBatchCuda(const Model& m, const PbdSettings& s, int K, int n_steps, bool lockstep,
                    DenseAlgebra algebra = DenseAlgebra::Fused);
  ~PbfdTeamBatchCuda();
  /// Initial states of all K trajectories (rows of theta0 / theta_m1, each n_q), uploaded at once.
  /// contact: per-trajectory C_perp, C_par (K entries), or empty = the settings' values.
  void init(const std::vector<VecX>& theta0, const std::vector<VecX>& theta_m1,
            const std::vector<ContactParams>& contact = {});
  /// One kernel launch of `iterations` LM iterations per running trajectory (1 = spec §6; more
  /// amortise launch overhead at small K); returns how many trajectories are RUNNING afterwards.
  int launch(int iterations = 1);
  /// How many trajectories are in state st (TrajStatus): a Thrust reduction on the device.
  int count(int st) const;
  /// WAITING -> RUNNING for every trajectory, on the device.
  void release_waiting();
  /// Downloads results and statuses (after the run, or whenever status/theta are read).
  void download();
  /// Status of trajectory k as of the last download().
  int status(int k) const;
  VecX theta(int k, int n) const;
  int iterations(int k, int n) const;
  unsigned step_status(int k, int n) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace bigstep
