// NMDP integrator (docs/methods/nmdp.md §3, §7.4-§7.5, §9; paper Alg. 2): NE-NMDP (Eq. 6) or PBD-NMDP
// (Eq. 12) solved by FOPGM / ZOPGM (Alg. 1, solvers/nmdp/nmdp_pgm.h), with adaptive binary
// subdivision of the frame run as the explicit stack of §7.5.
#pragma once
#include <functional>

#include "solvers/integrator.h"
#include "solvers/nmdp/nmdp_pgm.h"

namespace bigstep {

struct NmdpSettings {
  NeSettings contact;          ///< dt (the frame), mu, friction_directions, k_c, d_ref, zeta, active_distance,
                               ///< mdp_effective_metric (K in the servo metric with a PD servo, see
                               ///< NmdpProblem::set_servo_metric; scene key contact.mdp_metric)
  NmdpForm form = NmdpForm::Ne;
  PgmSettings pgm;             ///< Alg. 1 (mode fo | zo, tolerances, gamma rules)
  AccelDenominator accel = AccelDenominator::Recommended;  ///< §3 (B2)
  int depth_exponent = 3;      ///< s(d) = d^p + zeta_s (§4, B6)
  double h_min = 1e-5;         ///< smallest substep [s] (§7.4)
  int depth_max = 16;          ///< deepest subdivision (§7.4); substep = dt / 2^depth
  bool carry_gamma = false;    ///< start each PGM call with the previous call's final gamma (§7.6)
  /// First projection starts at the predictor theta_- + h theta_dot_- [choice] (false: at
  /// theta_-, as Alg. 1 line 1 is printed; both converge to the same root of G(., 0)).
  bool start_at_predictor = true;
};

/// Throws InvalidArgument naming the key.
void validate_nmdp_settings(const NmdpSettings& s);

/// One PGM call of Alg. 2 (for observers / tests). Times are in ticks of dt / 2^depth_max
/// from the frame start, so substeps tile the frame exactly.
struct NmdpSubstep {
  int64_t t_begin = 0, t_end = 0;  ///< ticks
  int depth = 0;                   ///< subdivision depth of the entry
  double h = 0;                    ///< substep length [s]
  double dt_last = 0;              ///< previous (sub)step length [s]
  bool ok = false;                 ///< PGM converged (the substep was accepted)
  PgmOutcome outcome = PgmOutcome::Converged;
  ProjectOutcome project = ProjectOutcome::Ok;
  int iterations = 0;
};

/// Steps rollouts one frame at a time. What a rollout carries between frames (theta_-, theta_--,
/// dt_last, gamma: Data::nmdp) and its scratch (problem, PGM and QP workspaces, whose QP warm
/// start also stays with the rollout) live in its Data.
class NmdpIntegrator final : public Integrator {
 public:
  NmdpIntegrator(const Model& m, const NmdpSettings& s);
  RolloutParams default_params() const override;

  /// Observers (tests, diagnostics): every outer PGM iterate, and every PGM call of Alg. 2.
  void set_iterate_observer(PgmObserver f) { on_iterate_ = std::move(f); }
  void set_substep_observer(std::function<void(const NmdpSubstep&)> f) { on_substep_ = std::move(f); }
  /// Test hook: when it returns true for (h, depth), that PGM call is treated as failed.
  void set_fail_hook(std::function<bool(double h, int depth)> f) { fail_hook_ = std::move(f); }

  const NmdpSettings& settings() const { return s_; }
  const MdpPolytope& polytope() const { return poly_; }
  /// Of a rollout after its last frame: dt_last, theta_-- (start of its last substep) and the
  /// weights of its last accepted substep.
  static double dt_last(const Data& d) { return d.nmdp.dt_last; }
  static const VecX& theta_mm(const Data& d) { return d.nmdp.theta_mm; }
  static const VecX& w_last(const Data& d);
  /// The same for the lone-rollout convenience path (step_controlled).
  double dt_last() const { return dt_last(*lone_data()); }
  const VecX& theta_mm() const { return theta_mm(*lone_data()); }
  const VecX& w_last() const { return w_last(*lone_data()); }

 protected:
  /// One frame of length contact.dt, friction p.contact.mu. The state of §3 is (theta_-, theta_--,
  /// dt_last): when (theta_n, theta_nm1) are the (theta_next, theta_n) of the frame this rollout
  /// stepped last, its carried theta_-- and dt_last of that frame's last substep are used (exact
  /// after a subdivided frame, ND7); otherwise theta_-- = theta_nm1 and dt_last = dt, which is the
  /// same thing for a frame without halving. DIVERGED (Alg. 2 ran out of subdivisions) sets
  /// STATUS_NOT_CONVERGED and holds theta_next = theta_n.
  StepStats advance(const VecX& theta_n, const VecX& theta_nm1, const StepControl& u, const RolloutParams& p,
                    Data& d, VecX& theta_next) const override;
  std::unique_ptr<Workspace> make_workspace() const override;

 private:
  NmdpSettings s_;
  MdpPolytope poly_;
  PgmObserver on_iterate_;
  std::function<void(const NmdpSubstep&)> on_substep_;
  std::function<bool(double, int)> fail_hook_;
};

}  // namespace bigstep
