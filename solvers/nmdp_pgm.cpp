// FOPGM / ZOPGM (spec nmdp.md §7.1-§7.3 and §7.6; paper Alg. 1, Eq. 7-11).
//   S  = A^-1 grad_w G = -A^-1 B                      (A-bar in ZO mode)
//   P  = S^T Q_K S + (2 sigma / gamma) I,  q = -S^T g_K   (sigma = max diag(S^T Q_K S) or 1)
//   dw = argmin 1/2 dw^T P dw + q^T dw  s.t.  w + dw >= 0,  per contact 1^T (w_x + dw_x) <= 1
//   (theta', ok) = Project(theta, w + dw);  accept iff K(theta') <= K(theta)   (gamma rules of B1)
// cpu-only: the batched state machine of §7.5 will mirror this file.
#include "solvers/nmdp_pgm.h"

#include <cmath>

#include "core/error.h"

namespace bigstep {

const char* project_outcome_name(ProjectOutcome o) {
  switch (o) {
    case ProjectOutcome::Ok: return "ok";
    case ProjectOutcome::NonDecrease: return "non_decrease";
    case ProjectOutcome::Singular: return "singular";
    case ProjectOutcome::NonFinite: return "non_finite";
    case ProjectOutcome::MaxIterations: return "max_iterations";
    case ProjectOutcome::LineSearch: return "line_search";
  }
  return "?";
}

const char* pgm_outcome_name(PgmOutcome o) {
  switch (o) {
    case PgmOutcome::Converged: return "converged";
    case PgmOutcome::ProjectionFailed: return "projection_failed";
    case PgmOutcome::QpFailed: return "qp_failed";
    case PgmOutcome::GammaMin: return "gamma_min";
    case PgmOutcome::MaxIterations: return "max_iterations";
  }
  return "?";
}

void validate_pgm_settings(const PgmSettings& s) {
  BIGSTEP_CHECK_ARG(std::isfinite(s.eps) && s.eps > 0, "integrator.pgm_eps", s.eps, "must be finite and > 0");
  BIGSTEP_CHECK_ARG(std::isfinite(s.eta) && s.eta > 1, "integrator.pgm_eta", s.eta, "must be finite and > 1");
  BIGSTEP_CHECK_ARG(std::isfinite(s.gamma0) && s.gamma0 > 0, "integrator.pgm_gamma0", s.gamma0,
                    "must be finite and > 0");
  BIGSTEP_CHECK_ARG(s.gamma_min > 0 && s.gamma_min <= s.gamma0 && s.gamma0 <= s.gamma_max && std::isfinite(s.gamma_max),
                    "integrator.pgm_gamma_min/gamma0/gamma_max",
                    detail::concat(s.gamma_min, "/", s.gamma0, "/", s.gamma_max), "need 0 < min <= gamma0 <= max < inf");
  BIGSTEP_CHECK_ARG(s.k_max > 0, "integrator.pgm_k_max", s.k_max, "must be > 0");
  BIGSTEP_CHECK_ARG(s.n_proj > 0, "integrator.pgm_n_proj", s.n_proj, "must be > 0");
  BIGSTEP_CHECK_ARG(std::isfinite(s.tol_G) && s.tol_G >= 0, "integrator.pgm_tol_G", s.tol_G,
                    "must be finite and >= 0 (0 = 1e-9 max(1, W))");
  BIGSTEP_CHECK_ARG(s.rcond_min >= 0 && s.rcond_min < 1, "integrator.pgm_rcond_min", s.rcond_min, "must be in [0, 1)");
}

double pgm_tol_G(const Model& m, const PgmSettings& s, const double* mass_scale) {
  return s.tol_G > 0 ? s.tol_G : 1e-9 * std::max(1.0, weight(m, mass_scale));
}

Pgm::Pgm(const NmdpProblem& P) : qp_(std::max(1, P.n_w()), std::max(1, P.n_w() + P.n_contacts())) {}

ProjectOutcome Pgm::project(NmdpProblem& P, VecX& theta, const VecX& w, PgmMode mode, bool line_search,
                            double tol_G, double rcond_min, int n_proj, int& newton, double& G_norm) {
  P.G(theta, w, G_);
  G_norm = G_.norm();
  for (int i = 0; i < n_proj; ++i) {
    if (!std::isfinite(G_norm)) return ProjectOutcome::NonFinite;
    if (G_norm <= tol_G) return ProjectOutcome::Ok;
    // LU of A with pivoting; near-singular A means A5.2 is violated (e.g. gimbal lock)
    P.A(theta, w, mode, A_);
    if (!A_.allFinite()) return ProjectOutcome::NonFinite;
    Eigen::PartialPivLU<MatX>& lu = lu_;
    lu.compute(A_);
    if (!(lu.rcond() >= rcond_min)) return ProjectOutcome::Singular;
    dth_ = lu.solve(G_);
    dth_ = -dth_;
    ++newton;
    VecX& theta_new = theta_new_;
    theta_new = theta + dth_;
    P.G(theta_new, w, Gn_);
    double n_new = Gn_.norm();
    if (!(n_new < G_norm)) {
      if (!line_search) return ProjectOutcome::NonDecrease;  // Alg. 2 retries with a smaller h
      // first projection (w = 0): backtracking (Armijo) on its energy (PBD) or 1/2|G|^2 (NE).
      // Slope of the merit along dth: PBD grad E = G(theta, 0), so G^T dth; NE G^T A dth = -|G|^2.
      const double phi0 = P.merit0(theta);
      const double slope = P.form() == NmdpForm::Pbd ? G_.dot(dth_) : -G_.squaredNorm();
      if (!(slope < 0)) return ProjectOutcome::LineSearch;  // A not positive definite: no descent
      double t = 1;
      for (;;) {
        t *= 0.5;
        if (t < 1e-10) return ProjectOutcome::LineSearch;
        theta_new = theta + t * dth_;
        if (P.merit0(theta_new) <= phi0 + 1e-4 * t * slope) break;
      }
      P.G(theta_new, w, Gn_);
      n_new = Gn_.norm();
    }
    theta = theta_new;
    G_.swap(Gn_);
    G_norm = n_new;
  }
  if (std::isfinite(G_norm) && G_norm <= tol_G) return ProjectOutcome::Ok;
  return ProjectOutcome::MaxIterations;
}

PgmResult Pgm::solve(NmdpProblem& P, const PgmSettings& s, double gamma0, VecX& theta, VecX& w,
                     const PgmObserver& obs) {
  const Model& m = P.model();
  const int n = m.n_q, n_w = P.n_w(), V = P.polytope().n_dirs;
  const double tol_G = pgm_tol_G(m, s, P.mass_scale());
  PgmResult r;
  // lines 1-3: the contact-free step (w = 0)
  w.setZero(n_w);
  r.project = project(P, theta, w, s.mode, s.line_search_first, tol_G, s.rcond_min, s.n_proj, r.newton, r.G_norm);
  if (r.project != ProjectOutcome::Ok) {
    r.outcome = PgmOutcome::ProjectionFailed;
    return r;
  }
  double K_cur = P.K(theta);
  double gamma = gamma0;
  r.K = K_cur;
  r.gamma = gamma;
  std::vector<int>& cols = cols_;  // active weights: candidates with a non-zero polytope, or w_x != 0
  cols.reserve(size_t(n_w));
  VecX& theta_c = theta_c_;
  VecX& w_c = w_c_;
  VecX y;
  for (int k = 1; k <= s.k_max; ++k) {
    r.iterations = k;
    // line 5: search direction QP at (theta, w)
    const std::vector<NmdpContact>& cs = P.contacts(theta);
    cols.clear();
    for (int x = 0; x < P.n_contacts(); ++x) {
      if (cs[x].s > 0 || (w.segment(x * V, V).array() != 0).any())
        for (int i = 0; i < V; ++i) cols.push_back(x * V + i);
    }
    const int na = int(cols.size());
    w_c = w;
    if (na > 0) {
      P.B(theta, B_);
      MatX Ba(n, na);
      for (int c = 0; c < na; ++c) Ba.col(c) = B_.col(cols[c]);
      P.A(theta, w, s.mode, A_);
      if (!A_.allFinite()) {
        r.outcome = PgmOutcome::ProjectionFailed;
        r.project = ProjectOutcome::NonFinite;
        return r;
      }
      Eigen::PartialPivLU<MatX>& lu = lu_;
      lu.compute(A_);
      if (!(lu.rcond() >= s.rcond_min)) {
        r.outcome = PgmOutcome::ProjectionFailed;
        r.project = ProjectOutcome::Singular;
        return r;
      }
      S_ = -lu.solve(Ba);  // S = A^-1 grad_w G, grad_w G = -B
      P.K_derivatives(theta, g_K_, Q_K_);
      P_.noalias() = S_.transpose() * Q_K_ * S_;
      P_ = 0.5 * (P_ + P_.transpose());
      double sigma = s.gamma_scaling == GammaScaling::Diag ? P_.diagonal().maxCoeff() : 1.0;
      if (!(sigma > 0)) sigma = 1.0;  // S^T Q S = 0: nothing couples w to K, dw = 0 below
      P_.diagonal().array() += 2 * sigma / gamma;
      // QP in y = w_a + dw (qp_dense's simplex rows are sum y <= 1):
      // 1/2 dw^T P dw + q^T dw = 1/2 y^T P y + (q - P w_a)^T y + const, q = -S^T g_K
      VecX wa(na);
      for (int c = 0; c < na; ++c) wa[c] = w[cols[c]];
      qp_data_.Q = P_;
      qp_data_.c = -S_.transpose() * g_K_ - P_ * wa;
      qp_data_.lb = VecX::Zero(na);
      qp_data_.ub.resize(0);
      qp_data_.simplex.clear();
      for (int c = 0; c < na; c += V) qp_data_.simplex.push_back({c, V});
      const bool same_cols = cols == warm_cols_;
      const QpStatus qs = qp_.solve(qp_data_, qp_res_, same_cols && !warm_.empty() ? &warm_ : nullptr);
      if (qs != QpStatus::Solved) {
        warm_.clear();
        r.outcome = PgmOutcome::QpFailed;
        return r;
      }
      warm_ = qp_res_.active;
      warm_cols_ = cols;
      y = qp_res_.x.cwiseMax(0.0);  // exact-zero bounds; the QP meets them to rounding
      for (int c = 0; c < na; ++c) w_c[cols[c]] = y[c];
    }
    // lines 6-8: project back onto G = 0, warm start at theta
    theta_c = theta;
    double G_norm = 0;
    r.project = project(P, theta_c, w_c, s.mode, false, tol_G, s.rcond_min, s.n_proj, r.newton, G_norm);
    if (r.project != ProjectOutcome::Ok) {
      r.outcome = PgmOutcome::ProjectionFailed;
      return r;
    }
    const double K_new = P.K(theta_c);
    PgmIterate it;
    it.k = k;
    it.gamma = gamma;
    it.K = K_new;
    it.K_prev = K_cur;
    it.G_norm = G_norm;
    it.theta = &theta_c;
    it.w = &w_c;
    it.qp = na > 0 ? &qp_data_ : nullptr;
    it.qp_result = na > 0 ? &qp_res_ : nullptr;
    // lines 9-10: reject, shrink the step (gamma divides the proximal weight, B1)
    if (K_new > K_cur) {
      if (obs) obs(it);
      gamma /= s.eta;
      if (gamma < s.gamma_min) {
        r.outcome = PgmOutcome::GammaMin;
        return r;
      }
      continue;
    }
    // lines 11-14: accept, grow the step
    it.accepted = true;
    if (obs) obs(it);
    const double step = (theta_c - theta).lpNorm<Eigen::Infinity>();
    theta.swap(theta_c);
    w.swap(w_c);
    K_cur = K_new;
    r.K = K_cur;
    r.G_norm = G_norm;
    r.gamma = gamma = std::min(s.eta * gamma, s.gamma_max);
    if (step < s.eps) {
      r.outcome = PgmOutcome::Converged;
      return r;
    }
  }
  r.outcome = PgmOutcome::MaxIterations;
  return r;
}

}  // namespace bigstep
