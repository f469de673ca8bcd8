// Goldfarb-Idnani dual active-set QP (Goldfarb & Idnani 1983), in the "recompute the projection"
// form: the active normals are kept as an orthonormal basis U (with L^-1 N_W = U Rr, Gram-Schmidt
// with re-orthogonalization), so each iteration is O(n |W|) plus a basis rebuild after a drop.
#include "numerics/qp_dense.h"

#include <cmath>
#include <limits>
#include <algorithm>

#include "numerics/dense_small.h"

namespace bigstep {

const char* qp_status_name(QpStatus s) {
  switch (s) {
    case QpStatus::Solved: return "solved";
    case QpStatus::Infeasible: return "infeasible";
    case QpStatus::MaxIterations: return "max_iterations";
    case QpStatus::NotConvex: return "not_convex";
    case QpStatus::InvalidInput: return "invalid_input";
  }
  return "?";
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kMaxProximal = 60;

// Counts rows of the canonical form; returns false on inconsistent sizes.
template <class P>
bool count_rows(const P& p, int& n, int& m_e, int& m) {
  n = int(p.Q.rows());
  if (p.Q.cols() != n || p.c.size() != n) return false;
  if (p.E.rows() > 0 && (p.E.cols() != n || p.e.size() != p.E.rows())) return false;
  if (p.A.rows() > 0 && (p.A.cols() != n || p.b.size() != p.A.rows())) return false;
  if (p.lb.size() != 0 && p.lb.size() != n) return false;
  if (p.ub.size() != 0 && p.ub.size() != n) return false;
  m_e = int(p.E.rows());
  m = int(p.A.rows());
  for (int k = 0; k < p.lb.size(); ++k) m += std::isfinite(p.lb[k]);
  for (int k = 0; k < p.ub.size(); ++k) m += std::isfinite(p.ub[k]);
  for (const auto& g : p.simplex) {
    if (g.start < 0 || g.size <= 0 || g.start + g.size > n) return false;
    ++m;
  }
  return true;
}

// Writes the canonical normals (columns) and offsets: equalities n = E_j^T, beta = e_j, then
// inequalities n_i^T x >= beta_i in the canonical order of QpResult.
template <class P, class MatN, class VecB>
void fill_canonical(const P& p, int n, MatN& N, VecB& beta) {
  int col = 0;
  for (int j = 0; j < p.E.rows(); ++j, ++col) {
    N.col(col).head(n) = p.E.row(j).transpose();
    beta[col] = p.e[j];
  }
  for (int i = 0; i < p.A.rows(); ++i, ++col) {
    N.col(col).head(n) = -p.A.row(i).transpose();
    beta[col] = -p.b[i];
  }
  for (int k = 0; k < p.lb.size(); ++k)
    if (std::isfinite(p.lb[k])) {
      N.col(col).head(n).setZero();
      N(k, col) = 1;
      beta[col++] = p.lb[k];
    }
  for (int k = 0; k < p.ub.size(); ++k)
    if (std::isfinite(p.ub[k])) {
      N.col(col).head(n).setZero();
      N(k, col) = -1;
      beta[col++] = -p.ub[k];
    }
  for (const auto& g : p.simplex) {
    N.col(col).head(n).setZero();
    N.col(col).segment(g.start, g.size).setConstant(-1);
    beta[col++] = -1;
  }
}

}  // namespace

QpWorkspace::QpWorkspace(int n_max, int m_max)
    : n_max_(n_max), m_max_(m_max), N_(n_max, m_max), beta_(m_max), L_(n_max, n_max), x0_(n_max),
      U_(n_max, std::min(n_max, m_max)), Rr_(std::min(n_max, m_max), std::min(n_max, m_max)), y_(n_max),
      tmp_(n_max), s_(m_max), uW_(m_max), z_(n_max), r_(m_max), xs_(n_max), ck_(n_max), xprev_(n_max) {
  W_.reserve(m_max);
  W_copy_.reserve(m_max);
  active_tmp_.reserve(m_max);
}

bool QpWorkspace::add_to_basis(int idx) {
  const int k = int(W_.size());
  if (k >= U_.cols()) return false;  // more active constraints than variables: dependent
  auto v = tmp_.head(n_);
  v = N_.col(idx).head(n_);
  forward_subst(L_, v, n_);
  const double v0 = v.norm();
  Rr_.col(k).head(k).setZero();
  for (int pass = 0; pass < 2; ++pass)  // classical Gram-Schmidt, twice (re-orthogonalization)
    for (int j = 0; j < k; ++j) {
      const double h = U_.col(j).head(n_).dot(v);
      Rr_(j, k) += h;
      v -= h * U_.col(j).head(n_);
    }
  const double nv = v.norm();
  if (!(nv > 1e-10 * v0)) return false;
  U_.col(k).head(n_) = v / nv;
  Rr_(k, k) = nv;
  W_.push_back(idx);
  return true;
}

void QpWorkspace::rebuild_basis() {
  W_copy_.assign(W_.begin(), W_.end());  // reserved once: no allocation
  W_.clear();
  for (int idx : W_copy_) add_to_basis(idx);
}

void QpWorkspace::directions(int p, Eigen::Ref<VecX> z, Eigen::Ref<VecX> r) {
  const int k = int(W_.size());
  auto y = y_.head(n_);
  y = N_.col(p).head(n_);
  forward_subst(L_, y, n_);  // y = L^-1 n_p
  // r = Rr^-1 U^T y ; z = L^-T (y - U U^T y)
  for (int j = 0; j < k; ++j) r[j] = U_.col(j).head(n_).dot(y);
  z.head(n_) = y;
  for (int j = 0; j < k; ++j) z.head(n_) -= r[j] * U_.col(j).head(n_);
  backward_subst_upper(Rr_, r, k);
  backward_subst_transposed(L_, z, n_);
}

void QpWorkspace::solve_active(Eigen::Ref<VecX> x, Eigen::Ref<VecX> uW) {
  // u = (Rr^T Rr)^-1 (beta_W - N_W^T x0);  x = x0 + L^-T U Rr u
  const int k = int(W_.size());
  for (int j = 0; j < k; ++j) uW[j] = beta_[W_[j]] - N_.col(W_[j]).head(n_).dot(x0_.head(n_));
  forward_subst_upper_transposed(Rr_, uW, k);
  auto w = tmp_.head(n_);
  w.setZero();
  for (int j = 0; j < k; ++j) w += uW[j] * U_.col(j).head(n_);  // U (Rr u) with Rr u = uW here
  backward_subst_upper(Rr_, uW, k);
  backward_subst_transposed(L_, w, n_);
  x.head(n_) = x0_.head(n_) + w;
}

QpStatus QpWorkspace::dual_active_set(QpResult& out, const std::vector<int>* warm, int max_iter) {
  const int n = n_, m_e = m_e_, m = m_;
  auto x = out.x.head(n);
  x0_.head(n) = -ck_.head(n);
  forward_subst(L_, x0_.head(n), n);
  backward_subst_transposed(L_, x0_.head(n), n);
  // active set: equalities (never dropped), then the warm-start inequalities that are independent
  W_.clear();
  for (int j = 0; j < m_e; ++j)
    if (!add_to_basis(j)) {
      // dependent equality: consistent only if implied by the others (checked after solve_active)
    }
  if (warm)
    for (int i : *warm)
      if (i >= 0 && i < m) add_to_basis(m_e + i);
  // drop warm constraints with negative multipliers until the start is dual feasible
  for (;;) {
    solve_active(x, uW_);
    int worst = -1;
    for (int j = 0; j < int(W_.size()); ++j)
      if (W_[j] >= m_e && uW_[j] < 0 && (worst < 0 || uW_[j] < uW_[worst])) worst = j;
    if (worst < 0) break;
    W_.erase(W_.begin() + worst);
    rebuild_basis();
  }
  for (int j = 0; j < m_e; ++j) {  // a dependent equality that is violated: inconsistent system
    const double res = N_.col(j).head(n).dot(x) - beta_[j];
    if (std::abs(res) > 1e-9 * (1 + std::abs(beta_[j]) + N_.col(j).head(n).cwiseAbs().sum() * x.cwiseAbs().maxCoeff())) {
      out.status = QpStatus::Infeasible;
      return out.status;
    }
  }
  for (;;) {
    // most violated inequality (lowest index wins ties: deterministic)
    int pidx = -1;
    double smin = 0;
    for (int i = 0; i < m; ++i) {
      const int col = m_e + i;
      const double s = N_.col(col).head(n).dot(x) - beta_[col];
      const double tol = 1e-10 * (1 + std::abs(beta_[col]) + N_.col(col).head(n).cwiseAbs().sum() * x.cwiseAbs().maxCoeff());
      if (s < -tol && (pidx < 0 || s < smin)) {
        pidx = col;
        smin = s;
      }
    }
    if (pidx < 0) break;
    double up = 0;  // multiplier of the constraint being added
    for (;;) {
      if (++out.iterations > max_iter) {
        out.status = QpStatus::MaxIterations;
        return out.status;
      }
      const int k = int(W_.size());
      directions(pidx, z_, r_);
      // partial (dual) step: first active inequality whose multiplier reaches zero
      double t1 = kInf;
      int l = -1;
      for (int j = 0; j < k; ++j)
        if (W_[j] >= m_e && r_[j] > 1e-14 && uW_[j] / r_[j] < t1) {
          t1 = uW_[j] / r_[j];
          l = j;
        }
      // full (primal) step: makes constraint p active
      const double zn = z_.head(n).dot(N_.col(pidx).head(n));
      const double ynorm2 = y_.head(n).squaredNorm();
      const double s = N_.col(pidx).head(n).dot(x) - beta_[pidx];
      const double t2 = zn > 1e-18 * ynorm2 ? -s / zn : kInf;
      const double t = std::min(t1, t2);
      if (!std::isfinite(t)) {
        out.status = QpStatus::Infeasible;
        return out.status;
      }
      if (std::isfinite(t2)) x += t * z_.head(n);
      for (int j = 0; j < k; ++j) uW_[j] -= t * r_[j];
      up += t;
      if (t2 <= t1) {
        if (!add_to_basis(pidx)) {
          out.status = QpStatus::Infeasible;  // numerically dependent yet violated
          return out.status;
        }
        uW_[k] = up;
        break;
      }
      // drop constraint l and try again with the same p
      for (int j = l; j + 1 < k; ++j) uW_[j] = uW_[j + 1];
      W_.erase(W_.begin() + l);
      rebuild_basis();
    }
  }
  active_tmp_.clear();
  for (int j = 0; j < int(W_.size()); ++j)
    if (W_[j] >= m_e) active_tmp_.push_back(W_[j] - m_e);
  out.status = QpStatus::Solved;
  return out.status;
}

QpStatus QpWorkspace::solve(const DenseQp& p, QpResult& out, const std::vector<int>* warm, int max_iter) {
  int n, m_e, m;
  if (count_rows(p, n, m_e, m)) {
    out.x.resize(n);
    out.u.resize(m);
    out.nu.resize(m_e);
  }
  out.active.clear();
  return solve(DenseQpRef{p.Q, p.c, p.E, p.e, p.A, p.b, p.lb, p.ub, p.simplex}, out, warm, max_iter);
}

QpStatus QpWorkspace::solve(const DenseQpRef& p, QpResult& out, const std::vector<int>* warm, int max_iter) {
  out.iterations = 0;
  int n, m_e, m;
  if (!count_rows(p, n, m_e, m) || n > n_max_ || m_e + m > m_max_ || n == 0 || out.x.size() < n ||
      out.u.size() < m || out.nu.size() < m_e || !p.Q.allFinite() ||
      !p.c.allFinite() || !p.E.allFinite() || !p.e.allFinite() || !p.A.allFinite() || !p.b.allFinite()) {
    out.status = QpStatus::InvalidInput;
    return out.status;
  }
  n_ = n;
  m_e_ = m_e;
  m_ = m;
  fill_canonical(p, n, N_, beta_);
  out.u.head(m).setZero();
  out.nu.head(m_e).setZero();
  out.active.clear();
  // Factor Q. A PD Q is used as is; a singular PSD Q is solved by proximal-point iterations
  // x_{k+1} = argmin f(x) + rho/2 |x - x_k|^2 (each a well-conditioned strictly convex QP,
  // warm-started with the previous active set) until x_{k+1} = x_k, i.e. KKT of the original.
  const double qmax = 1 + p.Q.diagonal().cwiseAbs().maxCoeff();
  L_.topLeftCorner(n, n) = p.Q;
  bool pd = cholesky_inplace(L_, n);
  if (pd) {
    double pmin = kInf;
    for (int i = 0; i < n; ++i) pmin = std::min(pmin, L_(i, i) * L_(i, i));
    pd = pmin > 1e-8 * qmax;
  }
  rho_ = 0;
  if (!pd) {
    rho_ = 1e-6 * qmax;
    L_.topLeftCorner(n, n) = p.Q;
    L_.topLeftCorner(n, n).diagonal().array() += rho_;
    if (!cholesky_inplace(L_, n)) {
      out.status = QpStatus::NotConvex;
      return out.status;
    }
  }
  if (max_iter <= 0) max_iter = 10 * (m + n) + 50;
  ck_.head(n) = p.c;
  xprev_.head(n).setZero();
  const std::vector<int>* start = warm;
  double dx_prev = kInf;
  for (int outer = 0; outer < (pd ? 1 : kMaxProximal); ++outer) {
    if (!pd) ck_.head(n) = p.c - rho_ * xprev_.head(n);
    if (dual_active_set(out, start, max_iter) != QpStatus::Solved) return out.status;
    start = &active_tmp_;
    if (pd) break;
    const double dx = (out.x.head(n) - xprev_.head(n)).cwiseAbs().maxCoeff();
    xprev_.head(n) = out.x.head(n);
    // rho * dx is the stationarity error this proximal step leaves in the original problem
    const double scale = 1 + qmax * out.x.head(n).cwiseAbs().maxCoeff() + p.c.cwiseAbs().maxCoeff();
    if (rho_ * dx <= 1e-11 * scale) break;
    if (outer + 1 == kMaxProximal) {
      out.status = QpStatus::MaxIterations;  // typically an unbounded problem
      return out.status;
    }
    // slow drift along a low-curvature direction: weaken the proximal term (down to 1e-12 qmax)
    if (dx > 0.5 * dx_prev && rho_ > 1e-12 * qmax) {
      rho_ = std::max(rho_ * 1e-2, 1e-12 * qmax);
      L_.topLeftCorner(n, n) = p.Q;
      L_.topLeftCorner(n, n).diagonal().array() += rho_;
      if (!cholesky_inplace(L_, n)) {
        out.status = QpStatus::NotConvex;
        return out.status;
      }
    }
    dx_prev = dx;
  }
  for (int j = 0; j < int(W_.size()); ++j) {
    if (W_[j] < m_e) {
      out.nu[W_[j]] = -uW_[j];
    } else {
      out.u[W_[j] - m_e] = std::max(0.0, uW_[j]);
      out.active.push_back(W_[j] - m_e);
    }
  }
  std::sort(out.active.begin(), out.active.end());
  out.status = QpStatus::Solved;
  return out.status;
}

double qp_kkt_residual(const DenseQp& p, const QpResult& r) {
  int n, m_e, m;
  if (!count_rows(p, n, m_e, m) || r.x.size() != n) return kInf;
  MatX N(n, m_e + m);
  VecX beta(m_e + m);
  fill_canonical(p, n, N, beta);
  const VecX& x = r.x;
  const double scale = 1 + p.Q.cwiseAbs().maxCoeff() * x.cwiseAbs().maxCoeff() + p.c.cwiseAbs().maxCoeff();
  // stationarity: Q x + c = sum_eq (-nu) n + sum_ineq u n
  VecX g = p.Q * x + p.c;
  for (int j = 0; j < m_e; ++j) g += r.nu[j] * N.col(j);
  for (int i = 0; i < m; ++i) g -= r.u[i] * N.col(m_e + i);
  double res = g.cwiseAbs().maxCoeff() / scale;
  for (int j = 0; j < m_e + m; ++j) {
    const double s = N.col(j).dot(x) - beta[j];
    const double sc = 1 + std::abs(beta[j]) + N.col(j).cwiseAbs().sum() * x.cwiseAbs().maxCoeff();
    if (j < m_e) {
      res = std::max(res, std::abs(s) / sc);
    } else {
      res = std::max(res, std::max(0.0, -s) / sc);                          // primal
      res = std::max(res, std::max(0.0, -r.u[j - m_e]));                    // dual
      res = std::max(res, std::abs(r.u[j - m_e] * s) / (sc * (1 + std::abs(r.u[j - m_e]))));  // complementarity
    }
  }
  return res;
}

}  // namespace bigstep
