// PBD / PBFD step driver (docs/methods/pbfd.md §5.3: predictor, restart rule, outputs).
// Reported normal force (StepStats::normal_force): sum_p C_perp d_p^alpha at theta_{n+1} (§4.2).
// cpu-only: the CUDA mirror of the per-iteration body is the batched backend's job.
#include "solvers/pbd/pbd_step.h"

#include <cmath>

#include "core/chart.h"
#include "core/error.h"
#include "solvers/pbd/pbd_objective.h"
#include "solvers/pbd/pbd_residual.h"

namespace bigstep {

const char* formulation_name(Formulation f) { return f == Formulation::Pbd ? "pbd" : "pbfd"; }
const char* optimizer_name(Optimizer o) {
  switch (o) {
    case Optimizer::Lm: return "lm";
    case Optimizer::JtjLm: return "jtj_lm";
    case Optimizer::Lbfgs: return "lbfgs";
  }
  return "?";
}

void validate_pbd_settings(const PbdSettings& s) {
  BIGSTEP_CHECK_ARG(std::isfinite(s.dt) && s.dt > 0, "integrator.dt", s.dt, "must be finite and > 0");
  BIGSTEP_CHECK_ARG(s.order == 1 || s.order == 2, "integrator.order", s.order, "must be 1 or 2");
  BIGSTEP_CHECK_ARG(!(s.formulation == Formulation::Pbfd && s.optimizer == Optimizer::Lm),
                    "integrator.optimizer", "lm",
                    "LM with the exact Hessian of Eq. 13 needs third derivatives (excluded by the "
                    "paper); use jtj_lm or lbfgs with integrator.type = pbfd");
  const ContactParams& c = s.contact;
  BIGSTEP_CHECK_ARG(std::isfinite(c.c_perp) && c.c_perp >= 0, "contact.c_perp", c.c_perp, "must be finite and >= 0");
  BIGSTEP_CHECK_ARG(std::isfinite(c.c_par) && c.c_par >= 0, "contact.c_par", c.c_par, "must be finite and >= 0");
  BIGSTEP_CHECK_ARG(std::isfinite(c.alpha) && c.alpha > 1, "contact.alpha", c.alpha,
                    "must be > 1 (the normal energy must be C^2, Lemma 4.2)");
  BIGSTEP_CHECK_ARG(std::isfinite(c.beta) && c.beta >= 1, "contact.beta", c.beta,
                    "must be >= 1 (the friction force is not differentiable at zero slip below 1)");
  BIGSTEP_CHECK_ARG(std::isfinite(c.gamma) && c.gamma >= 1, "contact.gamma", c.gamma, "must be >= 1");
  BIGSTEP_CHECK_ARG(std::isfinite(c.mu) && c.mu >= 0, "contact.mu", c.mu, "must be finite and >= 0");
  BIGSTEP_CHECK_ARG(std::isfinite(c.damping) && c.damping >= 0, "contact.damping", c.damping, "must be finite and >= 0");
  // why: Eq. 6 minimises an energy, and a damping force has none
  BIGSTEP_CHECK_ARG(c.damping == 0 || s.formulation == Formulation::Pbfd, "contact.damping", c.damping,
                    "the damped normal force has no energy: use integrator.type = pbfd (Eq. 13)");
  BIGSTEP_CHECK_ARG(std::isfinite(c.stiction_velocity) && c.stiction_velocity > 0, "contact.stiction_velocity",
                    c.stiction_velocity, "must be finite and > 0");
  // the Coulomb law is a force without an energy: Eq. 6 (PBD) cannot take it
  BIGSTEP_CHECK_ARG(!(s.formulation == Formulation::Pbd && c.friction == FrictionLaw::Coulomb), "contact.friction",
                    "coulomb", "has no energy for PBD's Eq. 6 (integrator.type = pbd); use integrator.type = pbfd "
                    "or contact.friction = power");
  BIGSTEP_CHECK_ARG(s.eps_r > 0, "integrator.eps_r", s.eps_r, "must be > 0");
  BIGSTEP_CHECK_ARG(s.eps_x > 0, "integrator.eps_x", s.eps_x, "must be > 0");
  BIGSTEP_CHECK_ARG(s.it_max > 0, "integrator.it_max", s.it_max, "must be > 0");
  BIGSTEP_CHECK_ARG(s.friction_continuation >= 0 && s.friction_continuation <= 8, "integrator.friction_continuation",
                    s.friction_continuation, "must be 0 to 8 (softened-friction stages)");
}

namespace {

// Eq. 6 for LM (exact B) and JTJ-LM (Gauss-Newton B): F = E, g = grad E, res = ||grad E||_inf.
struct Eq6Objective final : LmObjective {
  const Model& m; const PbdStepInput& in; PbdWorkspace& ws; HessianKind kind;
  Eq6Objective(const Model& m, const PbdStepInput& in, PbdWorkspace& ws, HessianKind k)
      : m(m), in(in), ws(ws), kind(k) {}
  double value(const VecX& x) override { return pbd_energy(m, in, x, ws); }
  bool admissible(const VecX& x) const override { return chart_admissible(m, x); }
  void evaluate(const VecX& x, double& F, VecX& g, MatX& B, double& res) override {
    pbd_energy_derivatives(m, in, x, ws, F, g, &B, kind);
    res = g.lpNorm<Eigen::Infinity>();
  }
};

// Eq. 13 for JTJ-LM: F = 1/2 ||r||^2, g = J_r^T r, B = J_r^T J_r, res = ||r||_inf.
struct Eq13Objective final : LmObjective {
  const Model& m; const PbdStepInput& in; PbdWorkspace& ws; VecX& r; MatX& Jr; double scale;
  Eq13Objective(const Model& m, const PbdStepInput& in, PbdWorkspace& ws)
      : m(m), in(in), ws(ws), r(ws.r), Jr(ws.Jr), scale(std::max(1.0, weight(m, in.mass_scale))) {}
  // Departure from docs/methods/pbfd.md §5.1: F = 1/2|r|^2 tends to 0, so its rounding is not
  // 64 eps max(1, F) but ~ eps |r| s (r sums forces of size s = max(1, W)). With the plain
  // threshold every late step looked like noise, rho was pinned at 0.5, lambda never fell and the
  // floating chain at rest took 100-170 iterations per step (tests/solvers/pbd/pbd_step_test.cpp).
  double rounding(double F) const override {
    return 64 * 2.220446049250313e-16 * std::max(std::abs(F), std::sqrt(2 * std::abs(F)) * scale);
  }
  double value(const VecX& x) override {
    pbfd_residual(m, in, x, ws, r, nullptr);
    return 0.5 * r.squaredNorm();
  }
  // r and J_r share FK, the contact set and the moments: J_r costs ~1.4x r alone, so evaluating
  // both at every candidate wins as soon as most candidates are accepted (warm-started lambda)
  bool full_at_candidate() const override { return true; }
  bool admissible(const VecX& x) const override { return chart_admissible(m, x); }
  void evaluate(const VecX& x, double& F, VecX& g, MatX& B, double& res) override {
    pbfd_residual(m, in, x, ws, r, &Jr);
    F = 0.5 * r.squaredNorm();
    g.noalias() = Jr.transpose() * r;
    // B = J_r^T J_r: the lower triangle by column dot products (n_q small: no GEMM packing), then
    // mirrored; half the work of the full product
    const int n = int(Jr.cols());
    for (int j = 0; j < n; ++j)
      for (int i = j; i < n; ++i) B(i, j) = Jr.col(i).dot(Jr.col(j));
    B.triangularView<Eigen::StrictlyUpper>() = B.transpose();
    res = r.lpNorm<Eigen::Infinity>();
  }
};

bool finite(const VecX& v) { return v.allFinite(); }

}  // namespace

PbdIntegrator::PbdIntegrator(const Model& m, const PbdSettings& s) : Integrator(m), s_(s) {
  validate_pbd_settings(s_);
}

bool PbdIntegrator::solve(const PbdStepInput& in, PbdWorkspace& ws, VecX& theta, StepStats& st, bool warm) const {
  const double scale = std::max(1.0, weight(m_, in.mass_scale));  // the rollout's scaled weight
  if (s_.optimizer == Optimizer::Lbfgs) {
    LbfgsSettings ls{s_.eps_r, scale, s_.lbfgs_it_max, 10};
    LbfgsResult r;
    if (s_.formulation == Formulation::Pbd) {
      // F = E, g = grad E, measure ||grad E||_inf
      r = lbfgs_minimize(
          [&](const VecX& x, VecX& g) {
            double E;
            pbd_energy_derivatives(m_, in, x, ws, E, g, nullptr, HessianKind::None);
            return E;
          },
          [&](const VecX&, const VecX& g) { return g.lpNorm<Eigen::Infinity>(); }, theta, ls);
    } else {
      // F = 1/2 |r|^2, g = J_r^T r, measure ||r||_inf (kept from the last evaluation)
      Eq13Objective f(m_, in, ws);
      MatX& B = ws.lm.B;  // the model matrix is not used by LBFGS: scratch
      r = lbfgs_minimize(
          [&](const VecX& x, VecX& g) {
            double F, res;
            f.evaluate(x, F, g, B, res);
            return F;
          },
          [&](const VecX& x, const VecX&) {
            f.value(x);
            return f.r.lpNorm<Eigen::Infinity>();
          },
          theta, ls);
    }
    st.iterations += r.iterations;
    st.residual = r.residual;
    return r.converged;
  }
  LmSettings ls{s_.eps_r, s_.eps_x, s_.it_max, scale, warm ? ws.lambda_last : 0};
  LmResult r;
  if (s_.formulation == Formulation::Pbfd) {
    Eq13Objective f(m_, in, ws);
    r = levenberg_marquardt(f, theta, ls, ws.lm);
  } else {
    Eq6Objective f(m_, in, ws, s_.optimizer == Optimizer::Lm ? HessianKind::Exact : HessianKind::GaussNewton);
    r = levenberg_marquardt(f, theta, ls, ws.lm);
  }
  st.iterations += r.iterations;
  st.residual = r.residual;
  ws.lambda_last = r.converged() ? r.lambda : 0;  // a failed step's lambda is no guide: cold next time
  if (r.outcome == LmOutcome::SmallStep) st.status |= STATUS_SMALL_STEP;
  if (r.outcome == LmOutcome::FactorFailed) st.status |= STATUS_FACTOR_FAILED;
  if (r.outcome == LmOutcome::NonFinite) st.status |= STATUS_NONFINITE;
  return r.converged();
}

// Friction continuation, after the §5.3 restart rule has failed too: a departure (from
// docs/methods/pbfd.md §5.3) that only runs on that path, so every step that converged before is untouched.
// Why the attempts fail: JTJ-LM minimises GE = 1/2 |r|^2 (§4.6) and stops where grad GE = J_r^T r = 0,
// which is r = 0 only where J_r is nonsingular. Without friction J_r = grad^2 E is symmetric and at a
// 50 ms step dominated by M / dt^2 > 0; PBFD's friction adds -C_par J_p^T (df_par/dp) J_p (§4.4),
// which is not symmetric and at C_par ~ 1/dt^beta can cancel M / dt^2 along some direction: the ant at
// 50 ms ends at points with J_r^T r ~ 0, r != 0 (docs/benchmarks.md, vec_env_failures). The homotopy
// r(theta; s C_par), s = 3^(-k/K) for k = K, ..., 1, 0 (geometric from 1/3 to 1; each stage from the
// last one's end, the first from theta_n, where the slip and so the friction force are 0) starts
// where friction is weak and J_r close to grad^2 E, and follows the solution branch to the true
// C_par; a stage ends like any attempt (it_max iterations, cold lambda) and takes ~10 iterations
// when the steps are small. s = 1/3 is contact.slip_speed x 3, which converged on 99 % of the
// failing steps (docs/benchmarks.md). Of 60 failing ant steps replayed cold, K = 1, 4, 8 leave 23, 8, 6
// failing (bench/experiments/lm_stall_fixture.py); those stall in the last stage at the same r whatever K, as
// where the branch folds (J_r singular on it) before C_par is reached, and are flagged NOT_CONVERGED.
bool PbdIntegrator::continuation_applies(const PbdStepInput& in, const StepStats& st) const {
  return s_.friction_continuation > 0 && s_.formulation == Formulation::Pbfd && s_.optimizer == Optimizer::JtjLm &&
         friction_active(in.cp) && !(st.status & (STATUS_NONFINITE | STATUS_FACTOR_FAILED));
}

bool PbdIntegrator::solve_continued(PbdStepInput& in, PbdWorkspace& ws, const VecX& theta_n, VecX& theta,
                                    StepStats& st) const {
  // the law's strength: C_par (power law) or mu (Coulomb, §4.9)
  double& coef = in.cp.friction == FrictionLaw::Coulomb ? in.cp.mu : in.cp.c_par;
  const double c_full = coef;
  theta = theta_n;
  bool ok = false;
  const int K = s_.friction_continuation;
  for (int k = K; k >= 0; --k) {
    coef = k == 0 ? c_full : c_full * std::pow(3.0, -double(k) / K);
    st.status &= ~uint32_t(STATUS_SMALL_STEP);  // the last stage's outcome is the step's
    ok = solve(in, ws, theta, st, false);
    if (!finite(theta) || (st.status & (STATUS_NONFINITE | STATUS_FACTOR_FAILED))) break;
  }
  coef = c_full;
  return ok;
}

StepStats PbdIntegrator::advance(const VecX& theta_n, const VecX& theta_nm1, const StepControl& u,
                                 const RolloutParams& p, Data& d, VecX& theta_next) const {
  PbdWorkspace& ws = static_cast<PbdWorkspace&>(*d.ws);
  const VecX& tau = u.tau;
  StepStats st;
  PbdStepInput& in = ws.in;
  // second order: the step's kind and theta_{n-2} from the rollout's history (Data::history): the
  // four-point step, its fresh start, or the first-order step across a contact event
  using Hist = Data::StepHistory;
  const Hist::Kind kind = s_.order == 2 ? d.history.find(theta_n, theta_nm1) : Hist::Event;
  const int order = s_.order == 2 && kind != Hist::Event ? 2 : 1;
  make_step_input(m_, theta_n, theta_nm1, s_.dt, tau, p.contact, ws, in, order,
                  kind == Hist::History ? &d.history.nm2 : nullptr);
  in.mass_scale = p.link_mass_scale;
  if (u.pd) set_step_pd(m_, *u.pd, theta_n, u.t + s_.dt, in);
  // predictor theta0 = 2 theta_n - theta_{n-1}; one restart from theta_n (§5.1)
  theta_next = 2 * theta_n - theta_nm1;
  bool ok = solve(in, ws, theta_next, st, s_.warm_lambda);
  if (!ok && s_.restart) {
    st.status = STATUS_RESTARTED;
    theta_next = theta_n;
    ok = solve(in, ws, theta_next, st, false);  // the restart starts cold (§5.1)
  }
  if (!ok && continuation_applies(in, st)) ok = solve_continued(in, ws, theta_n, theta_next, st);
  if (!ok) st.status |= STATUS_NOT_CONVERGED;
  if (s_.order == 2) d.history.record(theta_n, theta_nm1, theta_next, kind, pbd_active_contacts(m_, theta_next, ws));
  return st;
}

void PbdIntegrator::accepted(const VecX& theta_next, Data& d, StepStats& st) const {
  // the normal penalty force at the accepted theta_{n+1} (the best iterate when not converged)
  PbdWorkspace& ws = static_cast<PbdWorkspace&>(*d.ws);
  st.normal_force = pbd_normal_force(m_, theta_next, ws.in.cp, ws);
}

}  // namespace bigstep
