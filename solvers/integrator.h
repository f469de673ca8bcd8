// One interface for every time integrator (design.md "Integrators"). State is (theta_n,
// theta_{n-1}) for all of them: position-based methods use it directly, velocity-level
// (Newton-Euler) methods read theta_dot_n = (theta_n - theta_{n-1}) / dt, which is exact for
// semi-implicit Euler since theta_{n+1} = theta_n + dt theta_dot_{n+1}.
#pragma once
#include "core/types.h"
#include "solvers/contact_terms.h"
#include "solvers/stable_pd.h"

namespace bigstep {

/// Per-step statistics (pbfd.md §5.3).
struct StepStats {
  int iterations = 0;     ///< optimizer iterations / LCP pivots / QP iterations of the step
  double residual = 0;    ///< final convergence measure of the method
  uint32_t status = STATUS_OK;
  int substeps = 1;       ///< accepted substeps of the frame (NMDP Alg. 2; halvings = substeps - 1)
  double min_substep = 0; ///< smallest accepted substep [s] (NMDP; 0 = not reported)
  bool converged() const { return !status_failed(status); }
};

class Integrator {
 public:
  virtual ~Integrator() = default;
  /// theta_{n+1} from (theta_n, theta_{n-1}) and controls u: constant torques plus an optional
  /// stable-PD servo (stable_pd.h) whose targets are taken at the end of the step (u.t + dt).
  /// Bad state is reported in the status, never thrown; wrong sizes throw InvalidArgument.
  virtual StepStats step_controlled(const VecX& theta_n, const VecX& theta_nm1, const StepControl& u,
                                    VecX& theta_next) = 0;
  /// Same with constant torques tau only (n_q, or empty = 0).
  StepStats step(const VecX& theta_n, const VecX& theta_nm1, const VecX& tau, VecX& theta_next) {
    StepControl u;
    u.tau = tau;
    return step_controlled(theta_n, theta_nm1, u, theta_next);
  }
  /// Contact parameters for the following steps (per-rollout randomisation in a batch; values are
  /// validated by the caller). PBD/PBFD use c_perp, c_par; Newton-Euler baselines use mu.
  virtual void set_contact(const ContactParams& cp) = 0;
};

}  // namespace bigstep
