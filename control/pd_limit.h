// Actuator limits of the stable-PD servo (controller.type = pd with controller.tau_max or limited
// motors; every controller obeys the actuator limits, control/inverse_dynamics/id_controller.h for the ID
// ones). The servo is implicit in every integrator (solvers/terms/stable_pd.h: the step solves for its
// torque with the motion), so its torque is known only after the step. Per step, as an active set:
//   1. step with the servo; tau = its torque over the step;
//   2. if tau_k leaves [lo_k, hi_k] on some DOFs, those DOFs saturate: re-step with their gains
//      set to 0 and the limit as a constant torque (the other DOFs keep the implicit servo);
//   3. repeat until no further DOF leaves its range (the set only grows: at most n_q re-steps).
// tau is the end-of-step form stable_pd_torque (targets at t + dt); the Newton-Euler integrators'
// Tan form takes the proportional term at theta_n + dt v_n instead of theta_{n+1}, a difference
// of K_p dt^2 |a| (8e-3 N m at the spider's K_p = 800 and |a| = 10 rad/s^2), below any limit here.
#pragma once
#include <cstdint>
#include <vector>

#include "core/model.h"
#include "solvers/terms/stable_pd.h"

namespace bigstep {

class PdLimit {
 public:
  PdLimit(const PdLimit&) = delete;  // its servo's reference points back at it
  PdLimit& operator=(const PdLimit&) = delete;
  /// lo, hi: dof_torque_range (solvers/terms/actuation.h) of tau_max. Sized here: no allocation later.
  PdLimit(const Model& m, double tau_max);
  /// Some DOF has a finite limit (else nothing to do).
  bool active() const { return active_; }
  /// Starts a step under u (u.pd = the servo): no DOF saturated.
  void begin(const StepControl& u);
  /// After a step th_n -> th_next (length dt) under control(): the servo's torque into tau(); true
  /// (and control() the re-step's controls) when a further DOF saturated.
  bool saturate(Eigen::Ref<const VecX> th_n, Eigen::Ref<const VecX> th_next, double dt);
  /// The controls of the (re-)step: u with the saturated DOFs at their limit.
  const StepControl& control() const { return u_; }
  /// The servo's torque of the last saturate() (n_q), limits included.
  const VecX& tau() const { return tau_; }
  /// Some DOF saturated in this step.
  bool clamped() const { return clamped_; }

 private:
  bool active_ = false, clamped_ = false;
  VecX lo_, hi_, tau_, tau0_, th_bar_, th_dot_bar_;
  std::vector<uint8_t> sat_;
  const PdServo* servo_ = nullptr;  // the caller's servo (gains, reference)
  PdServo pd_;                      // its copy with the saturated DOFs' gains 0
  StepControl u_;
};

}  // namespace bigstep
