// The engines that step a batch (`bigstep run --rollouts K`; docs/architecture.md §1.3):
//   reference : CpuBatchStepper (batch/batch.h), every integrator type, threads over rollouts;
//   team      : the cooperative PBFD JTJ-LM iteration of solvers/pbd/pbd_step_team.h, CPU emulation
//               (PbfdTeamBatch, OpenMP) or the CUDA mirror (PbfdTeamBatchCuda), in lockstep:
//               each step() launches until every live rollout committed its next timestep.
// Engine choice: --backend cuda (or auto with a device) -> team on CUDA; batch.engine: team ->
// team on the CPU emulation (the CUDA algorithm, checkable without a GPU); else reference.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/backend.h"
#include "batch/batch.h"

namespace bigstep {

class BatchEngine {
 public:
  virtual ~BatchEngine() = default;
  /// One timestep of every live rollout; updates theta, theta_prev, status, iterations, residual
  /// and steps of b. tau: this step's joint torques (K x n_q, row k = rollout k; an RL policy's
  /// actions), or nullptr = the scene's control.tau; the control.pd servo acts on top. A rollout
  /// whose status carries a hard failure (non-finite torques or state, ...) is held; it never
  /// disturbs the others.
  /// theta_bar (K x n_q; nullptr = the servo's own reference): each rollout's stable-PD targets of
  /// this step (an RL policy's position actions, MuJoCo <position> actuators), held at the step's
  /// end time with theta_dot_bar (K x n_q; nullptr = 0); the gains are control.pd's kp / kd, so the
  /// scene must have that servo.
  virtual void step(StateBatch& b, const RolloutParamTable& p, const double* tau = nullptr,
                    const double* theta_bar = nullptr, const double* theta_dot_bar = nullptr) = 0;
  /// After reset_rollouts(sc, opt, b, ks): the listed rollouts start a new episode from b's rows
  /// (their engine state is re-initialised; the others are untouched). Lockstep engines only.
  /// A state written into b from outside takes effect through reset(): the team engines keep each
  /// trajectory (theta_n, theta_{n-1} and, at integrator.order 2, theta_{n-2}) between step() calls,
  /// and a reset starts it fresh, as the reference engine's Data::history does (docs/methods/pbfd.md §3.1).
  virtual void reset(const StateBatch& b, const std::vector<int>& ks) = 0;
  /// After redraw_params: the listed rollouts take their new row of p (friction, stiffness, mass
  /// scales). Engines that read p every step need nothing; an engine that cannot change them
  /// throws InvalidArgument naming itself.
  virtual void set_params(const RolloutParamTable& p, const std::vector<int>& ks) = 0;
  virtual std::string name() const = 0;  ///< cpu_batched | cpu_team_emulation | cuda_team_fp64
  virtual int threads() const = 0;       ///< CPU threads (0 for CUDA)
  /// Whether each step flags STATUS_PENETRATED (batch/step_stages.h stage 4); default off.
  virtual void check_penetration(bool on) = 0;
};

/// The engine for scene sc (batch.engine, integrator) on backend bk, started from b's initial
/// states. Throws InvalidArgument naming the key when the combination is not supported (the team
/// engines implement PBFD JTJ-LM: per-rollout C_perp / C_par / link mass scales, control.tau,
/// control.load (lockstep) and the control.pd servo, whose torque they do not hold at actuator
/// limits (batch/step_stages.h stage 3); not the inverse-dynamics controllers).
std::unique_ptr<BatchEngine> make_batch_engine(const Scene& sc, const BackendChoice& bk, const StateBatch& b,
                                               const RolloutParamTable& p);

}  // namespace bigstep
