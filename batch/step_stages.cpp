// The stages of one rollout's step (batch/step_stages.h).
#include "batch/step_stages.h"

#include "core/chart.h"

namespace bigstep {

StepStages::StepStages(const Scene& sc, int lanes) : sc_(sc) {
  const Model& m = sc.model;
  const bool limited = sc.pd.active() && PdLimit(m, sc.controller.tau_max).active();
  lanes_.reserve(size_t(lanes));
  for (int l = 0; l < lanes; ++l) {
    Lane& ln = lanes_.emplace_back(m);
    ln.u.tau.resize(m.n_q);
    if (sc.pd.active()) {
      ln.target = std::make_unique<TargetServo>();
      ln.target->pd.kp = sc.pd.kp;
      ln.target->pd.kd = sc.pd.kd;
      const TargetServo* self = ln.target.get();
      const int n = m.n_q;
      // assigns into the integrator's sized vectors: no allocation per step
      ln.target->pd.reference = [self, n](double, VecX& th_bar, VecX& th_dot_bar) {
        th_bar = Eigen::Map<const VecX>(self->theta_bar, n);
        if (self->theta_dot_bar) th_dot_bar = Eigen::Map<const VecX>(self->theta_dot_bar, n);
        else th_dot_bar.setZero(n);
      };
    }
    if (limited) ln.pd_limit = std::make_unique<PdLimit>(m, sc.controller.tau_max);
    if (m.n_pair > 0) ln.pen = std::make_unique<PenetrationCheck>(m);
  }
}

const VecX& StepStages::torques(int lane, double t, const VecX& theta_n, const double* tau_k, const Mat3* chart) {
  Lane& ln = lanes_[size_t(lane)];
  if (tau_k) ln.u.tau = Eigen::Map<const VecX>(tau_k, sc_.model.n_q);
  else ln.u.tau = sc_.tau;
  add_point_load(sc_.model, sc_.load, theta_n, t, ln.load, ln.u.tau, chart);
  return ln.u.tau;
}

const StepControl& StepStages::controls(int lane, double t, const VecX& theta_n, const VecX& theta_nm1,
                                        const double* tau_k, const double* bar_k, const double* dot_bar_k,
                                        IdControllerState* id, double mu, const double* geom_mu, const Mat3* chart) {
  Lane& ln = lanes_[size_t(lane)];
  StepControl& u = ln.u;
  torques(lane, t, theta_n, tau_k, chart);
  u.t = t;
  u.pd = sc_.pd.active() ? &sc_.pd : nullptr;
  if (bar_k) {  // this rollout's targets: the lane's servo reads its row
    ln.target->theta_bar = bar_k;
    ln.target->theta_dot_bar = dot_bar_k;
    u.pd = &ln.target->pd;
  }
  if (id && !tau_k) {
    // inverse-dynamics controller (control/inverse_dynamics/id_controller.h) instead of the servo
    // its model's coordinates are the identity chart's (no copy while the charts are the identity)
    const VecX* th = &theta_n;
    const VecX* th_prev = &theta_nm1;
    if (chart && sc_.model.n_chart > 0) {
      ln.th_id = theta_n;
      ln.th_id_prev = theta_nm1;
      to_identity_chart(sc_.model, chart, ln.th_id);
      to_identity_chart(sc_.model, chart, ln.th_id_prev);
      th = &ln.th_id, th_prev = &ln.th_id_prev;
    }
    id_control(sc_.model, sc_.controller, sc_.pd.reference, t, *th, *th_prev, sc_.settings.dt, mu, *id, id->tau_full,
               geom_mu);
    u.tau += id->tau_full;
    u.pd = nullptr;
  }
  return u;
}

uint32_t StepStages::check_outputs(int lane, const VecX& theta_next, const Mat3* chart) {
  PenetrationCheck* pen = lanes_[size_t(lane)].pen.get();
  if (!penetration_ || !pen) return 0;
  return pen->find(sc_.model, theta_next, chart).found() ? uint32_t(STATUS_PENETRATED) : 0u;
}

}  // namespace bigstep
