// Actuator limits of the stable-PD servo (control/pd_limit.h).
#include "control/pd_limit.h"

#include <algorithm>
#include <cmath>

#include "solvers/terms/actuation.h"

namespace bigstep {

PdLimit::PdLimit(const Model& m, double tau_max) {
  dof_torque_range(m, tau_max, lo_, hi_);
  for (int k = 0; k < m.n_q; ++k) active_ |= std::isfinite(lo_[k]) || std::isfinite(hi_[k]);
  tau_.setZero(m.n_q);
  tau0_.setZero(m.n_q);
  th_bar_.setZero(m.n_q);
  th_dot_bar_.setZero(m.n_q);
  sat_.assign(size_t(m.n_q), 0);
  pd_.kp.setZero(m.n_q);
  pd_.kd.setZero(m.n_q);
  u_.tau.setZero(m.n_q);
}

void PdLimit::begin(const StepControl& u) {
  servo_ = u.pd;
  clamped_ = false;
  std::fill(sat_.begin(), sat_.end(), uint8_t(0));
  // the re-step's servo: the caller's gains, its reference through servo_ (set once: this object
  // does not move, the owners hold it in place)
  if (servo_) {
    pd_.kp = servo_->kp;
    pd_.kd = servo_->kd;
    if (!pd_.reference) pd_.reference = [this](double t, VecX& tb, VecX& tdb) { servo_->reference(t, tb, tdb); };
  }
  if (u.tau.size() == 0) u_.tau.setZero();
  else u_.tau = u.tau;
  tau0_ = u_.tau;
  u_.pd = servo_;
  u_.t = u.t;
}

bool PdLimit::saturate(Eigen::Ref<const VecX> th_n, Eigen::Ref<const VecX> th_next, double dt) {
  if (!servo_) {
    tau_.setZero();
    return false;
  }
  // tau = -K_p (theta_{n+1} - theta_bar) - K_d ((theta_{n+1} - theta_n) / dt - theta_dot_bar) at t + dt
  servo_->reference(u_.t + dt, th_bar_, th_dot_bar_);
  bool grew = false;
  for (Eigen::Index k = 0; k < tau_.size(); ++k) {
    if (sat_[size_t(k)]) continue;  // tau_ holds its limit
    tau_[k] = -servo_->kp[k] * (th_next[k] - th_bar_[k]) - servo_->kd[k] * ((th_next[k] - th_n[k]) / dt - th_dot_bar_[k]);
    if (tau_[k] < lo_[k] || tau_[k] > hi_[k]) {
      tau_[k] = tau_[k] < lo_[k] ? lo_[k] : hi_[k];
      sat_[size_t(k)] = 1;
      pd_.kp[k] = pd_.kd[k] = 0;
      u_.tau[k] = tau0_[k] + tau_[k];
      grew = true;
    }
  }
  if (grew) {
    clamped_ = true;
    u_.pd = &pd_;
  }
  return grew;
}

}  // namespace bigstep
