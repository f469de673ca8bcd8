// One interface for every time integrator (docs/architecture.md §7). State is (theta_n,
// theta_{n-1}) for all of them: position-based methods use it directly, velocity-level
// (Newton-Euler) methods read theta_dot_n = (theta_n - theta_{n-1}) / dt, which is exact for
// semi-implicit Euler since theta_{n+1} = theta_n + dt theta_dot_{n+1}.
// Integrators are stateless over rollouts: a rollout's state, what its solver carries between
// steps (NMDP's theta_--, dt_last, gamma; NE-MDP's QP warm start) and its scratch live in its
// Data (core/data.h), and its parameters (contact coefficients) come with each step. One const
// integrator therefore serves any number of rollouts on any number of threads, bit-identically.
#pragma once
#include <memory>

#include "core/data.h"
#include "core/types.h"
#include "solvers/terms/contact_terms.h"
#include "solvers/terms/stable_pd.h"

namespace bigstep {

/// Per-step statistics (docs/methods/pbfd.md §5.3).
struct StepStats {
  int iterations = 0;     ///< optimizer iterations / LCP pivots / QP iterations of the step
  double residual = 0;    ///< final convergence measure of the method
  uint32_t status = STATUS_OK;
  int substeps = 1;       ///< accepted substeps of the frame (NMDP Alg. 2; halvings = substeps - 1)
  double min_substep = 0; ///< smallest accepted substep [s] (NMDP; 0 = not reported)
  /// Summed normal contact force of the step's geom contacts [N] (joint-limit stops excluded), in
  /// the method's own terms: PBD / PBFD sum_p C_perp d_p^alpha at the accepted theta_{n+1}
  /// (docs/methods/pbfd.md §4.2; PBD's spurious push f* of the tangential energy is not counted); NE-LCP the
  /// normal impulses lambda_p / dt; NE-MDP the normal part of B w (k_c s(d_x) sum_i w_x,i per
  /// contact, t^i ⊥ n); NMDP the same normal part of B(theta) w at each accepted substep, averaged
  /// over the frame with weights h / dt (ghost forces included). 0 without contact and for a held
  /// step (bad input, or a frame that ran out of subdivisions).
  double normal_force = 0;
  // compliant solver (docs/methods/compliant.md §6, §7.5; 0 for the other methods); its
  // staggered sweeps are `iterations`
  int nstep_iterations = 0;  ///< active-set iterations of the step's N-steps (reduced QP pieces + dense QP)
  int qp_iterations = 0;     ///< iterations of all the step's programs (N-steps, T-steps' cone QP, joint)
  int fallbacks = 0;         ///< N-steps whose reduced QP did not settle, so the dense QP ran
  int inexact = 0;           ///< T-steps taken at the cone QP's max_iter with residuals <= 1e-6 relative
  bool converged() const { return !status_failed(status); }
};

/// One rollout's model parameters (a row of the batch table, batch/batch.h RolloutParamTable).
/// PBD/PBFD read contact.c_perp / c_par (and alpha, beta, gamma); Newton-Euler baselines and NMDP
/// read contact.mu. Every integrator reads link_mass_scale: link j's mass and inertia are
/// multiplied by link_mass_scale[j] (COM unchanged), and weight-derived scales (convergence scale
/// max(1, W), NMDP tol_G, the MDP k_c) use the scaled weight, so the step equals a lone step on a
/// Model with those masses (core/inertia.h; no Model copy). The compliant solver reads contact.mu
/// and stiffness_scale (its contact-normal K has no c_perp). Values are validated by whoever builds them.
struct RolloutParams {
  ContactParams contact;
  const double* link_mass_scale = nullptr;  ///< (n_link) factor per link, nullptr = 1; not owned
  /// (n_geom) per-contact Coulomb mu, nullptr = contact.mu; not owned. Read by the NE-LCP baseline
  /// only: a contact (a, b) uses geom_mu[a] (batch/batch.h draw_geom_mu).
  const double* geom_mu = nullptr;
  /// factor on the contact-normal stiffness of methods whose stiffness is not contact.c_perp (the
  /// compliant solver's E* or k_n); batch.randomize_stiffness draws it together with c_perp's factor
  double stiffness_scale = 1;
};

class Integrator {
 public:
  explicit Integrator(const Model& m) : m_(m) {}
  virtual ~Integrator() = default;
  Integrator(const Integrator&) = delete;
  Integrator& operator=(const Integrator&) = delete;

  const Model& model() const { return m_; }

  /// A rollout's Data for this integrator: state sized from the Model (zeros), nothing carried,
  /// and this integrator's workspace. Allocates (once per rollout), so a step does not have to.
  Data make_data() const;

  /// The parameters of a rollout that is not randomised: the integrator's own settings.
  virtual RolloutParams default_params() const = 0;

  /// One step of rollout d: theta_{n+1} from (d.theta, d.theta_prev), the rollout's parameters p
  /// and controls u (constant torques plus an optional stable-PD servo, stable_pd.h, whose targets
  /// are taken at the end of the step, u.t + dt). Afterwards d.theta_prev = theta_n and
  /// d.theta = theta_{n+1}. Every method steps the same stages:
  ///   1. check inputs: wrong sizes throw InvalidArgument; a non-finite theta_n, theta_{n-1} or tau
  ///      (STATUS_NONFINITE) is held, not stepped; a rotation chart whose middle angle is past 45
  ///      degrees is re-anchored (d.chart and every configuration in it, core/chart.h), so that
  ///      no free or ball joint reaches its Euler angles' singularity (STATUS_GIMBAL_LOCK stays as a
  ///      guard and cannot be reached by a step);
  ///   2. advance: the method (advance());
  ///   3. check outputs: a non-finite theta_{n+1} is held (STATUS_NONFINITE, theta_{n+1} = theta_n,
  ///      normal_force = 0); a gimbal-locked one is flagged (STATUS_GIMBAL_LOCK); else accepted().
  /// Bad state is reported in the status, never thrown. d must come from make_data() of an
  /// integrator of the same type and model.
  StepStats step(Data& d, const StepControl& u, const RolloutParams& p) const;

  /// Lone-rollout convenience (tests, single runs): steps an internal Data from
  /// (theta_n, theta_nm1) with default_params(). What the method carries between steps stays in
  /// that Data (NMDP uses its carry only when the call continues the frame that produced it).
  /// Not thread-safe; batches give each rollout its own Data and call step(Data&).
  StepStats step_controlled(const VecX& theta_n, const VecX& theta_nm1, const StepControl& u, VecX& theta_next);
  /// Same with constant torques tau only (n_q, or empty = 0).
  StepStats step(const VecX& theta_n, const VecX& theta_nm1, const VecX& tau, VecX& theta_next) {
    StepControl u;
    u.tau = tau;
    return step_controlled(theta_n, theta_nm1, u, theta_next);
  }
  /// The Data of the lone-rollout convenience path (diagnostics and tests), null before its first step.
  const Data* lone_data() const { return lone_.get(); }

 protected:
  /// The method: theta_next from (theta_n, theta_nm1) with the rollout's carried state and
  /// scratch in d (theta_n / theta_nm1 may alias d.theta / d.theta_prev; theta_next is d.theta_next).
  /// Called by step() on checked inputs (sizes right, finite, no gimbal lock); step() checks its
  /// output, so a method does not repeat either check.
  virtual StepStats advance(const VecX& theta_n, const VecX& theta_nm1, const StepControl& u,
                            const RolloutParams& p, Data& d, VecX& theta_next) const = 0;
  /// What the method reports at an accepted (finite) theta_next after advance(), e.g. a force
  /// that needs the state's collision; default none.
  virtual void accepted(const VecX& /*theta_next*/, Data& /*d*/, StepStats& /*st*/) const {}
  /// This integrator's per-rollout scratch.
  virtual std::unique_ptr<Workspace> make_workspace() const = 0;
  /// True for velocity-level methods (the state is (theta_n, theta_dot_n)): a chart re-anchor
  /// keeps the body angular velocity rather than the pose at t_{n-1} (core/chart.h).
  virtual bool velocity_state() const { return false; }

  const Model& m_;

 private:
  // step()'s size check (throws InvalidArgument naming the sizes)
  void check_sizes(const VecX& theta_n, const VecX& theta_nm1, const StepControl& u) const;

  std::unique_ptr<Data> lone_;
};

}  // namespace bigstep
