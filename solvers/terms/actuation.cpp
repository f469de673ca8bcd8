// Actuators -> step controls (actuation.h).
#include "solvers/terms/actuation.h"

#include <algorithm>
#include <limits>
#include <vector>

namespace bigstep {

double clamp_ctrl(const Model& m, int i, double u) {
  if (!m.actuator_ctrllimited[i]) return u;
  // std::clamp keeps a NaN (both comparisons false): the step then flags the rollout
  return std::clamp(u, m.actuator_ctrlrange[2 * i], m.actuator_ctrlrange[2 * i + 1]);
}

void dof_torque_range(const Model& m, double tau_max, VecX& lo, VecX& hi) {
  const double lim = tau_max > 0 ? tau_max : std::numeric_limits<double>::infinity();
  lo.setConstant(m.n_q, -lim);
  hi.setConstant(m.n_q, lim);
  // DOFs with motors only, every one limited: the motors' summed range
  std::vector<int> motors(size_t(m.n_q), 0), other(size_t(m.n_q), 0);
  for (int i = 0; i < m.n_u; ++i) {
    const bool limited_motor = m.actuator_type[i] == ActuatorType::Motor && m.actuator_ctrllimited[i];
    ++(limited_motor ? motors : other)[size_t(m.actuator_dof[i])];
  }
  for (int k = 0; k < m.n_q; ++k)
    if (motors[size_t(k)] > 0 && other[size_t(k)] == 0) lo[k] = hi[k] = 0;
  for (int i = 0; i < m.n_u; ++i) {
    const int k = m.actuator_dof[i];
    if (!(motors[size_t(k)] > 0 && other[size_t(k)] == 0)) continue;
    const double g = m.actuator_gear[i], a = g * m.actuator_ctrlrange[2 * size_t(i)],
                 b = g * m.actuator_ctrlrange[2 * size_t(i) + 1];
    lo[k] += std::min(a, b);
    hi[k] += std::max(a, b);
  }
}

ActuatorControls::ActuatorControls(const Model& m) : target_(std::make_unique<VecX>(VecX::Zero(m.n_q))) {
  control_.tau = VecX::Zero(m.n_q);
  // gains are constant: K_p = sum kp gear^2, K_d = sum kv gear^2 per DOF
  bool any_position = false;
  VecX kp = VecX::Zero(m.n_q), kd = VecX::Zero(m.n_q);
  for (int i = 0; i < m.n_u; ++i) {
    if (m.actuator_type[i] != ActuatorType::Position) continue;
    const double g = m.actuator_gear[i];
    kp[m.actuator_dof[i]] += m.actuator_kp[i] * g * g;
    kd[m.actuator_dof[i]] += m.actuator_kv[i] * g * g;
    any_position = true;
  }
  if (any_position) {
    pd_.kp = kp;
    pd_.kd = kd;
    const VecX* target = target_.get();
    pd_.reference = [target](double, VecX& th_bar, VecX& th_dot_bar) {
      th_bar = *target;
      th_dot_bar.setZero(target->size());  // (sizes an empty vector)
    };
    control_.pd = &pd_;
  }
}

const StepControl& ActuatorControls::set(const Model& m, const double* ctrl, double t) {
  control_.t = t;
  control_.tau.setZero();
  VecX& th_bar = *target_;
  th_bar.setZero();
  for (int i = 0; i < m.n_u; ++i) {
    const double u = clamp_ctrl(m, i, ctrl[i]), g = m.actuator_gear[i];
    const int k = m.actuator_dof[i];
    if (m.actuator_type[i] == ActuatorType::Motor) control_.tau[k] += g * u;
    else th_bar[k] += m.actuator_kp[i] * g * u;  // divided by K_p below
  }
  if (control_.pd)
    for (int k = 0; k < m.n_q; ++k)
      if (pd_.kp[k] > 0) th_bar[k] /= pd_.kp[k];
  // the servo lives in this object: re-point after a move
  control_.pd = control_.pd ? &pd_ : nullptr;
  return control_;
}

}  // namespace bigstep
