// The stages of one rollout's step, shared by every engine that steps a scene (the lone run
// batch/rollout.h, the reference engine batch/batch.h, the team and CUDA engines'
// host side batch/batch_engines.cpp), so that each steps the same stages in the same order:
//   1. controls: the torques (the caller's row, else control.tau) plus control.load's point force
//      at (t_n, theta_n); the servo (control.pd, or the caller's per-rollout targets); or, for
//      controller.type = id_*, the inverse-dynamics torques in the servo's place;
//   2. advance: the engine's step of the method (Integrator::step checks its inputs and outputs);
//   3. PD limit: the servo within its actuator limits (control/pd_limit.h), re-stepped;
//   4. check outputs: STATUS_PENETRATED when a contact went through a body (batch/penetration.h),
//      when asked for (the run commands; the RL loop leaves it off).
// An engine that cannot run a stage refuses the scene when it is built (make_batch_engine).
#pragma once
#include <memory>
#include <vector>

#include "batch/penetration.h"
#include "control/inverse_dynamics/id_controller.h"
#include "control/pd_limit.h"
#include "io/scene.h"

namespace bigstep {

class StepStages {
 public:
  /// lanes: how many rollouts step at once (threads); each lane has its own scratch, sized here.
  StepStages(const Scene& sc, int lanes);

  /// Whether stage 4 flags penetration (default off).
  void check_penetration(bool on) { penetration_ = on; }
  /// Whether the torques depend on the state (control.load), so a batched engine sets them per rollout.
  bool state_torques() const { return sc_.load.active(); }
  /// Whether stage 3 re-steps (the servo has actuator limits).
  bool pd_limited() const { return !lanes_.empty() && lanes_[0].pd_limit != nullptr; }

  /// 1. torques of a rollout at time t and state theta_n: tau_k (n_q; nullptr = control.tau) plus
  /// control.load. The lane's buffer, valid until its next call.
  const VecX& torques(int lane, double t, const VecX& theta_n, const double* tau_k, const Mat3* chart = nullptr);
  /// 1. all controls of a rollout: torques() and the servo (bar_k / dot_bar_k: its targets, n_q,
  /// nullptr = control.pd's reference / 0), or, with id (the rollout's ID controller state) and no
  /// tau_k, the ID torques for friction mu / geom_mu in the servo's place. chart: the rollout's
  /// rotation charts (core/chart.h, nullptr = identity): the load's kinematics read them; the ID
  /// controller is given the state in the identity chart (its model's coordinates).
  const StepControl& controls(int lane, double t, const VecX& theta_n, const VecX& theta_nm1, const double* tau_k,
                              const double* bar_k, const double* dot_bar_k, IdControllerState* id, double mu,
                              const double* geom_mu, const Mat3* chart = nullptr);

  /// 2. and 3.: advance(u) (StepStats from const StepControl&, leaving theta_{n+1} in theta_next),
  /// then, when the servo is limited, the re-steps with the saturated DOFs at their limits.
  template <class Advance>
  StepStats advance_limited(int lane, const StepControl& u, Eigen::Ref<const VecX> theta_n, const VecX& theta_next,
                            Advance&& advance) {
    StepStats st = advance(u);
    PdLimit* pl = lanes_[size_t(lane)].pd_limit.get();
    if (pl && u.pd) {
      pl->begin(u);
      while (pl->saturate(theta_n, theta_next, sc_.settings.dt)) st = advance(pl->control());
    }
    return st;
  }
  /// The lane's PD limit (its last step's torque and clamping), nullptr when the servo has none.
  const PdLimit* pd_limit(int lane) const { return lanes_[size_t(lane)].pd_limit.get(); }

  /// 4. the status bits of the accepted theta_{n+1}.
  uint32_t check_outputs(int lane, const VecX& theta_next, const Mat3* chart = nullptr);

 private:
  // the servo whose targets are the current rollout's row of the caller's targets
  struct TargetServo {
    PdServo pd;
    const double* theta_bar = nullptr;      // (n_q) the row being stepped
    const double* theta_dot_bar = nullptr;  // (n_q) or nullptr = 0
  };
  struct Lane {
    explicit Lane(const Model& m) : load(m), th_id(m.n_q), th_id_prev(m.n_q) {}
    StepControl u;
    PointLoadScratch load;
    VecX th_id, th_id_prev;                    // the state in the identity chart for the ID controller
    std::unique_ptr<TargetServo> target;       // heap: its reference lambda holds its address
    std::unique_ptr<PdLimit> pd_limit;         // null without actuator limits
    std::unique_ptr<PenetrationCheck> pen;     // null without geom pairs
  };
  const Scene& sc_;
  std::vector<Lane> lanes_;
  bool penetration_ = false;
};

}  // namespace bigstep
