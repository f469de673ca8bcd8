// Integrator base: Data construction, the in-place step and the lone-rollout convenience path.
#include "solvers/integrator.h"

#include "core/error.h"

namespace bigstep {

Data Integrator::make_data() const {
  Data d(m_);
  d.ws = make_workspace();
  return d;
}

StepStats Integrator::step(Data& d, const StepControl& u, const RolloutParams& p) const {
  BIGSTEP_CHECK_ARG(d.theta.size() == m_.n_q && d.theta_prev.size() == m_.n_q && d.theta_next.size() == m_.n_q &&
                        d.ws != nullptr,
                    "Data", detail::concat(d.theta.size(), "/", d.theta_prev.size()),
                    detail::concat("expected a Data from make_data() of a model with n_q = ", m_.n_q));
  const StepStats st = advance(d.theta, d.theta_prev, u, p, d, d.theta_next);
  // theta_prev <- theta_n, theta <- theta_{n+1}: pointer swaps, no copies or allocation
  d.theta_prev.swap(d.theta);
  d.theta.swap(d.theta_next);
  return st;
}

StepStats Integrator::step_controlled(const VecX& theta_n, const VecX& theta_nm1, const StepControl& u,
                                      VecX& theta_next) {
  if (!lone_) lone_ = std::make_unique<Data>(make_data());
  Data& d = *lone_;
  // wrong sizes go to advance() as given, which names them
  if (theta_n.size() != m_.n_q || theta_nm1.size() != m_.n_q) {
    const StepStats st = advance(theta_n, theta_nm1, u, default_params(), d, d.theta_next);
    theta_next = d.theta_next;
    return st;
  }
  // what the method carries is checked by the method itself against (theta_n, theta_nm1): NMDP
  // uses its carry only when this call continues the frame that produced it
  d.theta = theta_n;
  d.theta_prev = theta_nm1;
  const StepStats st = step(d, u, default_params());
  theta_next = d.theta;
  return st;
}

}  // namespace bigstep
