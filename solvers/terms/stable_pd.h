// Stable PD servo (Tan, Liu & Turk 2011) as used by every integrator (docs/methods/newton_euler.md §4).
// The servo tracks a reference (theta_bar(t), theta_dot_bar(t)) with per-DOF gains that are zero
// on unactuated DOFs (floating base). Backward (position-based / NMDP) integrators use the
// end-of-step form  tau(theta) = -K_p (theta - theta_bar) - K_d ((theta - theta_minus)/h - theta_dot_bar),
// whose Jacobian is -diag(K_p + K_d/h); Newton-Euler baselines use Tan's form with
// M~ = H + h K_d (docs/methods/newton_euler.md §4). Targets are always evaluated at the END time of the (sub)step.
#pragma once
#include <cmath>
#include <functional>
#include <string>

#include "core/error.h"
#include "core/types.h"

namespace bigstep {

struct PdServo {
  VecX kp, kd;  ///< (n_q) gains [N m/rad or N/m, N m s/rad or N s/m]; 0 = unactuated DOF
  /// Reference at time t: theta_bar (n_q) and theta_dot_bar (n_q). Must be set when kp/kd are.
  std::function<void(double t, VecX& theta_bar, VecX& theta_dot_bar)> reference;
  bool active() const { return kp.size() > 0; }
};

/// Controls of one step: constant joint torques plus an optional stable-PD servo.
struct StepControl {
  VecX tau;                     ///< (n_q) constant torques, or empty = 0
  const PdServo* pd = nullptr;  ///< servo, or null = none
  double t = 0;                 ///< simulation time at the START of the step [s]
};

/// Backward-Euler stable-PD torque at the end of a step of length h from theta_minus to theta,
/// with targets (theta_bar, theta_dot_bar) evaluated at the step's end time (docs/methods/newton_euler.md §4).
inline VecX stable_pd_torque(const PdServo& pd, const VecX& theta, const VecX& theta_minus, double h,
                             const VecX& theta_bar, const VecX& theta_dot_bar) {
  return -(pd.kp.array() * (theta - theta_bar).array() +
           pd.kd.array() * ((theta - theta_minus).array() / h - theta_dot_bar.array()))
              .matrix();
}

/// d tau / d theta of stable_pd_torque: -diag(K_p + K_d / h) (returned as the diagonal).
inline VecX stable_pd_torque_jacobian_diag(const PdServo& pd, double h) {
  return -(pd.kp.array() + pd.kd.array() / h).matrix();
}

/// Checks gains against n_q: sizes, finite, >= 0, reference set. Throws InvalidArgument naming `where`.
inline void validate_pd_servo(const PdServo& pd, int n_q, const char* where) {
  if (!pd.active()) return;
  BIGSTEP_CHECK_ARG(pd.kp.size() == n_q && pd.kd.size() == n_q, where, pd.kp.size(),
                    "kp and kd need n_q = " + std::to_string(n_q) + " entries");
  for (int i = 0; i < n_q; ++i) {
    BIGSTEP_CHECK_ARG(std::isfinite(pd.kp[i]) && pd.kp[i] >= 0, std::string(where) + ".kp[" + std::to_string(i) + "]",
                      pd.kp[i], "must be finite and >= 0");
    BIGSTEP_CHECK_ARG(std::isfinite(pd.kd[i]) && pd.kd[i] >= 0, std::string(where) + ".kd[" + std::to_string(i) + "]",
                      pd.kd[i], "must be finite and >= 0");
  }
  BIGSTEP_CHECK_ARG(bool(pd.reference), where, "servo", "a PD servo needs a reference motion");
}

}  // namespace bigstep
