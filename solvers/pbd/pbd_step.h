// One PBD / PBFD timestep: predictor, optimizer, restart rule, status (docs/methods/pbfd.md §5, §5.3).
#pragma once
#include <string>

#include "solvers/integrator.h"
#include "numerics/lbfgs.h"
#include "numerics/lm.h"
#include "solvers/pbd/pbd_context.h"

namespace bigstep {

enum class Formulation { Pbd, Pbfd };       ///< Eq. 6 (energy) or Eq. 13 (force residual)
enum class Optimizer { Lm, JtjLm, Lbfgs };  ///< Table I optimizers

const char* formulation_name(Formulation f);
const char* optimizer_name(Optimizer o);

struct PbdSettings {
  Formulation formulation = Formulation::Pbfd;
  Optimizer optimizer = Optimizer::JtjLm;
  double dt = 0.01;
  /// time discretisation (docs/methods/pbfd.md §3.1): 1 the papers' Eq. 6 / 13 (backward Euler in
  /// the accelerations), 2 the four-point backward difference (second order, L-stable-like damping
  /// of stiff modes, theta_{n-2} carried in Data::history)
  int order = 1;
  ContactParams contact;
  double eps_r = 1e-8;
  double eps_x = 1e-12;
  int it_max = 500;         ///< LM iterations per attempt
  int lbfgs_it_max = 10000;
  bool restart = true;      ///< retry once from theta_n when the predictor start fails (§5.1)
  bool warm_lambda = true;  ///< LM starts from the last converged step's lambda (lm.h LmSettings::lambda0)
  /// PBFD JTJ-LM: softened-friction stages K of the friction continuation that runs only when the
  /// predictor and the restart both fail: C_par 3^(-K/K), 3^(-(K-1)/K), ..., 3^(-1/K), then C_par,
  /// from theta_n (pbd_step.cpp). 0: off (the step is flagged NOT_CONVERGED as before).
  int friction_continuation = 4;
};

/// Validates settings against the model (throws InvalidArgument naming the field).
void validate_pbd_settings(const PbdSettings& s);

/// Steps rollouts; every per-rollout quantity is in their Data (PbdWorkspace scratch).
class PbdIntegrator final : public Integrator {
 public:
  PbdIntegrator(const Model& m, const PbdSettings& s);

  RolloutParams default_params() const override { return {s_.contact}; }
  const PbdSettings& settings() const { return s_; }

 protected:
  /// theta_{n+1} from (theta_n, theta_{n-1}), controls u and the rollout's contact coefficients
  /// p.contact. On failure theta_next holds the best iterate (NOT_CONVERGED) and the status says
  /// so; it never throws for bad state (Integrator::step checks inputs and outputs). The
  /// backward-Euler stable PD servo u.pd (targets at u.t + dt) enters Eq. 6 as the potential U_pd
  /// and Eq. 13 as the force tau_pd(theta_{n+1}) (pbd_objective.h add_pd_terms).
  StepStats advance(const VecX& theta_n, const VecX& theta_nm1, const StepControl& u, const RolloutParams& p,
                    Data& d, VecX& theta_next) const override;
  /// sum_p C_perp d_p^alpha at the accepted theta_{n+1} (StepStats::normal_force)
  void accepted(const VecX& theta_next, Data& d, StepStats& st) const override;
  std::unique_ptr<Workspace> make_workspace() const override { return std::make_unique<PbdWorkspace>(m_); }

 private:
  // one optimizer attempt from theta (in/out); returns converged
  bool solve(const PbdStepInput& in, PbdWorkspace& ws, VecX& theta, StepStats& st, bool warm) const;
  // the friction continuation after a failed restart (pbd_step.cpp): whether it runs, and its stages
  // from theta_n with C_par softened in in.cp (restored before it returns)
  bool continuation_applies(const PbdStepInput& in, const StepStats& st) const;
  bool solve_continued(PbdStepInput& in, PbdWorkspace& ws, const VecX& theta_n, VecX& theta, StepStats& st) const;

  PbdSettings s_;
};

}  // namespace bigstep
