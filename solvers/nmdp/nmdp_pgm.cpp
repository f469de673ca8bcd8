// FOPGM / ZOPGM (docs/methods/nmdp.md §7.1-§7.3 and §7.6; paper Alg. 1, Eq. 7-11).
//   S  = A^-1 grad_w G = -A^-1 B                      (A-bar in ZO mode)
//   P  = S^T Q_K S + (2 sigma / gamma) I,  q = -S^T g_K   (sigma = max diag(S^T Q_K S) or 1)
//   dw = argmin 1/2 dw^T P dw + q^T dw  s.t.  w + dw >= 0,  per contact 1^T (w_x + dw_x) <= 1
//   (theta', ok) = Project(theta, w + dw);  accept iff K(theta') <= K(theta)   (gamma rules of B1)
// cpu-only: the batched state machine of §7.5 will mirror this file.
#include "solvers/nmdp/nmdp_pgm.h"

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

Pgm::Pgm(const NmdpProblem& P) : qp_(std::max(1, P.n_w()), std::max(1, P.n_w() + P.n_contacts())) {
  // every buffer at its largest size (all weights active), so that a step allocates nothing
  const int n = P.model().n_q, nw = std::max(1, P.n_w()), m_max = std::max(1, P.n_w() + P.n_contacts());
  G_.setZero(n);
  Gn_.setZero(n);
  dth_.setZero(n);
  g_K_.setZero(n);
  theta_new_.setZero(n);
  theta_c_.setZero(n);
  w_c_.setZero(nw);
  y_.setZero(nw);
  A_.setZero(n, n);
  Q_K_.setZero(n, n);
  B_.setZero(n, P.n_w());
  Ba_.setZero(n, nw);
  S_.setZero(n, nw);
  QS_.setZero(n, nw);
  P_.setZero(nw, nw);
  P0_.setZero(nw, nw);
  c_.setZero(nw);
  q0_.setZero(nw);
  wa_.setZero(nw);
  lb_.setZero(nw);
  lu_.compute(MatX::Identity(n, n));
  rc_v_.setZero(n);
  rc_s_.setZero(n);
  rc_old_.setZero(n);
  rc_t_.setZero(n);
  qp_res_.x.setZero(nw);
  qp_res_.u.setZero(m_max);
  qp_res_.active.reserve(size_t(m_max));
  warm_.reserve(size_t(m_max));
  cols_.reserve(size_t(nw));
  warm_cols_.reserve(size_t(nw));
  groups_.reserve(size_t(P.n_contacts()));
}

// Reciprocal condition number of A_ from its LU (lu_), as Eigen's PartialPivLU::rcond() computes
// it (Higham's 1-norm estimate of inv(A), Eigen/src/Core/ConditionEstimator.h, same iteration
// and exits) but over preallocated vectors: Eigen's version builds temporaries on every call.
double Pgm::lu_rcond() {
  const int n = int(A_.rows());
  if (n == 0) return INFINITY;
  double a_norm = 0;  // ||A||_1 = max column sum of |A|
  for (int j = 0; j < n; ++j) a_norm = std::max(a_norm, A_.col(j).cwiseAbs().sum());
  if (a_norm == 0) return 0;
  if (n == 1) return 1;
  const MatX& LU = lu_.matrixLU();
  VecX &v = rc_v_, &sg = rc_s_, &old = rc_old_, &t = rc_t_;
  auto solve = [&](VecX& x) {  // x <- A^-1 x
    t.noalias() = lu_.permutationP() * x;
    LU.triangularView<Eigen::UnitLower>().solveInPlace(t);
    LU.triangularView<Eigen::Upper>().solveInPlace(t);
    x = t;
  };
  auto solve_t = [&](VecX& x) {  // x <- A^-T x
    LU.triangularView<Eigen::Upper>().transpose().solveInPlace(x);
    LU.triangularView<Eigen::UnitLower>().transpose().solveInPlace(x);
    t.noalias() = lu_.permutationP().transpose() * x;
    x = t;
  };
  v.setConstant(1.0 / n);
  solve(v);
  double lower = v.lpNorm<1>();
  double old_lower = lower;
  Eigen::Index imax = -1, old_imax = -1;
  for (int k = 0; k < 4; ++k) {
    for (int i = 0; i < n; ++i) sg[i] = v[i] < 0 ? -1.0 : 1.0;
    if (k > 0 && sg == old) break;
    v = sg;
    solve_t(v);
    v.cwiseAbs().maxCoeff(&imax);
    if (imax == old_imax) break;
    v.setZero();
    v[imax] = 1;
    solve(v);
    lower = v.lpNorm<1>();
    if (lower <= old_lower) break;
    old = sg;
    old_imax = imax;
    old_lower = lower;
  }
  double alt = 1;
  for (int i = 0; i < n; ++i) {
    v[i] = alt * (1.0 + double(i) / double(n - 1));
    alt = -alt;
  }
  solve(v);
  const double inv_norm = std::max(lower, 2 * v.lpNorm<1>() / (3.0 * n));
  return inv_norm == 0 ? 0.0 : (1.0 / inv_norm) / a_norm;
}

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
    if (!(lu_rcond() >= rcond_min)) return ProjectOutcome::Singular;
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
  const int n = m.n_q, n_w = P.n_w();
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
  VecX& theta_c = theta_c_;
  VecX& w_c = w_c_;
  // after a rejected candidate (lines 9-10) theta, w and so the active set, S^T Q_K S and
  // -S^T g_K are unchanged: only gamma changed, so the next QP reuses them (P0_, q0_, sigma)
  bool rejected = false;
  int na = 0;
  double sigma = 1.0;
  for (int k = 1; k <= s.k_max; ++k) {
    r.iterations = k;
    if (!rejected) {
      // line 5: search direction QP at (theta, w); one simplex group per active candidate (V
      // weights for a geom contact, 1 for a joint-limit stop)
      const std::vector<NmdpContact>& cs = P.contacts(theta);
      cols.clear();
      groups_.clear();
      for (int x = 0; x < P.n_contacts(); ++x) {
        const NmdpContact& c = cs[x];
        if (c.s > 0 || (w.segment(c.off, c.nv).array() != 0).any()) {
          groups_.push_back({int(cols.size()), c.nv});
          for (int i = 0; i < c.nv; ++i) cols.push_back(c.off + i);
        }
      }
      na = int(cols.size());
    }
    w_c = w;
    if (na > 0) {
      // packed maps over the max-size buffers (the layout of freshly sized matrices): no allocation
      Eigen::Map<MatX> S(S_.data(), n, na), Pm(P_.data(), na, na), P0(P0_.data(), na, na);
      auto q0 = q0_.head(na);
      if (!rejected) {
        P.B(theta, B_);
        Eigen::Map<MatX> Ba(Ba_.data(), n, na), QS(QS_.data(), n, na);
        for (int c = 0; c < na; ++c) Ba.col(c) = B_.col(cols[c]);
        P.A(theta, w, s.mode, A_);
        if (!A_.allFinite()) {
          r.outcome = PgmOutcome::ProjectionFailed;
          r.project = ProjectOutcome::NonFinite;
          return r;
        }
        Eigen::PartialPivLU<MatX>& lu = lu_;
        lu.compute(A_);
        if (!(lu_rcond() >= s.rcond_min)) {
          r.outcome = PgmOutcome::ProjectionFailed;
          r.project = ProjectOutcome::Singular;
          return r;
        }
        S.noalias() = lu.solve(Ba);
        S = -S;  // S = A^-1 grad_w G, grad_w G = -B
        P.K_derivatives(theta, g_K_, Q_K_);
        QS.noalias() = Q_K_ * S;
        P0.noalias() = S.transpose() * QS;
        for (int i = 0; i < na; ++i)  // symmetrize in place: 0.5 (P + P^T)
          for (int j = i + 1; j < na; ++j) P0(i, j) = P0(j, i) = 0.5 * (P0(i, j) + P0(j, i));
        sigma = s.gamma_scaling == GammaScaling::Diag ? P0.diagonal().maxCoeff() : 1.0;
        if (!(sigma > 0)) sigma = 1.0;  // S^T Q S = 0: nothing couples w to K, dw = 0 below
        q0.noalias() = -S.transpose() * g_K_;
      }
      Pm = P0;
      Pm.diagonal().array() += 2 * sigma / gamma;
      // QP in y = w_a + dw (qp_dense's simplex rows are sum y <= 1):
      // 1/2 dw^T P dw + q^T dw = 1/2 y^T P y + (q - P w_a)^T y + const, q = -S^T g_K
      auto wa = wa_.head(na);
      for (int c = 0; c < na; ++c) wa[c] = w[cols[c]];
      auto cq = c_.head(na);
      cq = q0;
      cq.noalias() -= Pm * wa;
      auto lb = lb_.head(na);
      lb.setZero();
      const bool same_cols = cols == warm_cols_;
      const std::vector<int>* warm = same_cols && !warm_.empty() ? &warm_ : nullptr;
      QpStatus qs;
      QpResult& res = qp_res_;
      if (obs) {
        // observers get the QP as a DenseQp (tests of ND5 check its KKT residual)
        qp_data_.Q = Pm;
        qp_data_.c = cq;
        qp_data_.lb = lb;
        qp_data_.ub.resize(0);
        qp_data_.simplex.assign(groups_.begin(), groups_.end());
        qs = qp_.solve(qp_data_, obs_res_, warm);
        res.x.head(na) = obs_res_.x;
        res.active = obs_res_.active;
      } else {
        static const MatX kNoRows;
        static const VecX kEmpty;
        const DenseQpRef p{Pm, cq, kNoRows, kEmpty, kNoRows, kEmpty, lb, kEmpty,
                           std::span<const DenseQp::Group>(groups_.data(), groups_.size())};
        qs = qp_.solve(p, res, warm);
      }
      if (qs != QpStatus::Solved) {
        warm_.clear();
        r.outcome = PgmOutcome::QpFailed;
        return r;
      }
      warm_ = res.active;
      warm_cols_ = cols;
      auto y = y_.head(na);
      y = res.x.head(na).cwiseMax(0.0);  // exact-zero bounds; the QP meets them to rounding
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
    it.qp_result = na > 0 ? &obs_res_ : nullptr;
    // lines 9-10: reject, shrink the step (gamma divides the proximal weight, B1)
    if (K_new > K_cur) {
      if (obs) obs(it);
      rejected = true;
      gamma /= s.eta;
      if (gamma < s.gamma_min) {
        r.outcome = PgmOutcome::GammaMin;
        return r;
      }
      continue;
    }
    // lines 11-14: accept, grow the step
    rejected = false;
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
