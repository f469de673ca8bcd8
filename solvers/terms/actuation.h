// Actuators -> step controls (MuJoCo's motor and position actuators, core/model.h ActuatorSpec).
// A control vector ctrl (n_u) becomes the StepControl every integrator takes: motor forces as
// constant generalised forces, position actuators as the stable-PD servo (stable_pd.h, docs/methods/newton_euler.md §4)
// that each integrator already treats implicitly, so a stiff position actuator stays stable at
// bigstep's large steps.
//
// Per DOF k, with motors i and position actuators p on k (length gear * theta_k):
//   tau_k        = sum_i gear_i clamp(ctrl_i)
//   K_p,k        = sum_p kp_p gear_p^2,   K_d,k = sum_p kv_p gear_p^2
//   theta_bar_k  = sum_p kp_p gear_p clamp(ctrl_p) / K_p,k,   theta_dot_bar_k = 0
// so that -K_p (theta_k - theta_bar_k) - K_d theta_dot_k = sum_p gear_p [kp_p (ctrl_p - gear_p
// theta_k) - kv_p gear_p theta_dot_k], MuJoCo's position actuator force through its transmission.
#pragma once
#include <memory>

#include "core/model.h"
#include "solvers/terms/stable_pd.h"

namespace bigstep {

/// One rollout's actuator state. Sized at construction; set() does not allocate.
class ActuatorControls {
 public:
  explicit ActuatorControls(const Model& m);

  /// Controls of a step starting at time t from ctrl[0 .. n_u) (clamped to ctrlrange where
  /// limited; a non-finite value passes through, so the step flags the rollout non-finite).
  const StepControl& set(const Model& m, const double* ctrl, double t);

  const StepControl& control() const { return control_; }
  const PdServo& servo() const { return pd_; }
  /// theta_bar of the last set() (n_q; 0 on DOFs without a position actuator).
  const VecX& theta_bar() const { return *target_; }

 private:
  StepControl control_;
  PdServo pd_;
  std::unique_ptr<VecX> target_;  // heap, so the servo's reference stays valid when this moves
};

/// Clamp of ctrl to actuator i's range (identity when it is not limited).
double clamp_ctrl(const Model& m, int i, double ctrl);

/// Generalised-force range [lo, hi] (n_q each) the actuators allow a controller that sets joint
/// torques directly (controller.type, control/inverse_dynamics/id_controller.h): on a DOF driven by motors only, all
/// ctrllimited, the sum of gear_i * ctrlrange_i (ordered); on every other DOF [-tau_max, tau_max]
/// (tau_max = 0: unlimited, +-inf). Position actuators' ctrlrange bounds a target, not a force.
void dof_torque_range(const Model& m, double tau_max, VecX& lo, VecX& hi);

}  // namespace bigstep
