// Integrator base: Data construction, the staged step (check inputs -> advance -> check outputs)
// and the lone-rollout convenience path.
#include "solvers/integrator.h"

#include <algorithm>

#include "core/chart.h"
#include "core/error.h"
#include "core/kinematics.h"

namespace bigstep {

Data Integrator::make_data() const {
  Data d(m_);
  d.ws = make_workspace();
  d.ws->bind_chart(d.chart.data());
  return d;
}

void Integrator::check_sizes(const VecX& theta_n, const VecX& theta_nm1, const StepControl& u) const {
  const int n = m_.n_q;
  BIGSTEP_CHECK_ARG(theta_n.size() == n && theta_nm1.size() == n && (u.tau.size() == 0 || u.tau.size() == n),
                    "theta/theta_prev/tau size", detail::concat(theta_n.size(), "/", theta_nm1.size(), "/", u.tau.size()),
                    detail::concat("expected n_q = ", n, " (tau may be empty)"));
}

StepStats Integrator::step(Data& d, const StepControl& u, const RolloutParams& p) const {
  const int n = m_.n_q;
  // one test on the way through (no call): the slow path names what is wrong
  if (d.theta.size() != n || d.theta_prev.size() != n || d.theta_next.size() != n || d.ws == nullptr ||
      (u.tau.size() != 0 && u.tau.size() != n)) {
    BIGSTEP_CHECK_ARG(d.theta.size() == n && d.theta_prev.size() == n && d.theta_next.size() == n && d.ws != nullptr,
                      "Data", detail::concat(d.theta.size(), "/", d.theta_prev.size()),
                      detail::concat("expected a Data from make_data() of a model with n_q = ", n));
    check_sizes(d.theta, d.theta_prev, u);
  }
  const VecX& theta_n = d.theta;
  VecX& theta_next = d.theta_next;
  StepStats st;
  // 1. check inputs: a bad rollout is flagged and held, never stepped
  if (!theta_n.allFinite() || !d.theta_prev.allFinite() || !u.tau.allFinite()) {
    st.status |= STATUS_NONFINITE;
    theta_next = theta_n;
  } else {
    // a rotation chart whose middle angle got past 45 degrees is re-anchored at theta_n
    // (core/chart.h): no step starts near the Euler angles' singularity
    if (m_.n_chart > 0 && anchor_charts(m_, d, velocity_state()) > 0) d.ws->charts_moved();
    if (gimbal_locked(m_, theta_n)) {
      // a guard for 3-angle joints outside the charts (none today): a Newton-Euler step with H
      // singular to 1e-18 took a cube resting on a side face to 1e61 m in four steps
      st.status |= STATUS_GIMBAL_LOCK;
      theta_next = theta_n;
    } else {
      // 2. advance: the method
      st = advance(theta_n, d.theta_prev, u, p, d, theta_next);
      // 3. check outputs: a non-finite result is held (a middle angle near 90 degrees is not an
      // error: the next step re-anchors its chart first)
      if (!theta_next.allFinite()) {
        st.status |= STATUS_NONFINITE;
        theta_next = theta_n;
        st.normal_force = 0;
      } else {
        accepted(theta_next, d, st);
      }
    }
  }
  // 4. theta_prev <- theta_n, theta <- theta_{n+1}: pointer swaps, no copies or allocation
  d.theta_prev.swap(d.theta);
  d.theta.swap(d.theta_next);
  return st;
}

StepStats Integrator::step_controlled(const VecX& theta_n, const VecX& theta_nm1, const StepControl& u,
                                      VecX& theta_next) {
  check_sizes(theta_n, theta_nm1, u);
  if (!lone_) lone_ = std::make_unique<Data>(make_data());
  Data& d = *lone_;
  // what the method carries is checked by the method itself against (theta_n, theta_nm1): NMDP
  // uses its carry only when this call continues the frame that produced it. The path takes and
  // gives angles in the identity chart (core/chart.h): a step that re-anchors a chart hands its
  // result back re-expressed (a run that rests at a middle angle of +-90 degrees steps a Data).
  d.theta = theta_n;
  d.theta_prev = theta_nm1;
  std::fill(d.chart.begin(), d.chart.end(), Mat3::Identity());
  const StepStats st = step(d, u, default_params());
  theta_next = d.theta;
  to_identity_chart(m_, d.chart.data(), theta_next);
  return st;
}

}  // namespace bigstep
