// Lemke's algorithm (Cottle, Pang & Stone, "The Linear Complementarity Problem", §4.4) on the
// tableau [I | -M | -e | q]; variables 0..n-1 are w, n..2n-1 are z, 2n is z0.
#include "solvers/lcp_lemke.h"

#include <cmath>
#include <vector>

#include <Eigen/LU>

namespace bigstep {

const char* lcp_status_name(LcpStatus s) {
  switch (s) {
    case LcpStatus::Solved: return "solved";
    case LcpStatus::RayTermination: return "ray_termination";
    case LcpStatus::MaxPivots: return "max_pivots";
    case LcpStatus::InvalidInput: return "invalid_input";
    case LcpStatus::Inaccurate: return "inaccurate";
  }
  return "?";
}

LcpWorkspace::LcpWorkspace(int n_max) : n_max_(n_max), T_(n_max, 2 * n_max + 2), basis_(n_max) {}

namespace {

// Relative violation of z >= 0, w >= 0, z_i w_i = 0 for w = M z + q.
double lcp_error(const MatX& M, const VecX& q, const VecX& z, const VecX& w) {
  const double scale = 1 + q.cwiseAbs().maxCoeff() + (M.cwiseAbs() * z.cwiseAbs()).maxCoeff();
  double e = std::max(0.0, -z.minCoeff());
  e = std::max(e, -w.minCoeff() / scale);
  e = std::max(e, z.cwiseProduct(w).cwiseAbs().maxCoeff() / scale / (1 + z.cwiseAbs().maxCoeff()));
  return e;
}

}  // namespace

LcpStatus LcpWorkspace::solve(const MatX& M, const VecX& q, LcpResult& out, int max_pivots, double tol) {
  const int n = int(q.size());
  out.pivots = 0;
  out.error = 0;
  if (M.rows() != n || M.cols() != n || n > n_max_ || !M.allFinite() || !q.allFinite()) {
    out.status = LcpStatus::InvalidInput;
    return out.status;
  }
  out.z.setZero(n);
  out.w = q;
  if (n == 0 || q.minCoeff() >= 0) {  // trivial solution z = 0
    out.status = LcpStatus::Solved;
    return out.status;
  }
  const int z0 = 2 * n, rhs = 2 * n + 1;
  auto T = T_.topLeftCorner(n, 2 * n + 2);
  T.setZero();
  T.leftCols(n).setIdentity();
  T.middleCols(n, n) = -M;
  T.col(z0).setConstant(-1);
  T.col(rhs) = q;
  for (int i = 0; i < n; ++i) basis_[i] = i;
  auto pivot = [&](int r, int c) {
    // copy the pivot scalars first: Eigen evaluates row expressions lazily, element by element
    const double piv = T(r, c);
    T.row(r) /= piv;
    for (int i = 0; i < n; ++i) {
      const double f = T(i, c);
      if (i != r && f != 0) T.row(i) -= f * T.row(r);
    }
    basis_[r] = c;
    ++out.pivots;
  };
  // z0 enters; the most negative q leaves (lowest index on ties)
  int r = 0;
  for (int i = 1; i < n; ++i)
    if (q[i] < q[r]) r = i;
  int leaving = basis_[r];
  pivot(r, z0);
  if (max_pivots <= 0) max_pivots = 50 * n + 100;
  const double piv_tol = 1e-12 * (1 + M.cwiseAbs().maxCoeff());
  for (;;) {
    if (out.pivots >= max_pivots) {
      out.status = LcpStatus::MaxPivots;
      return out.status;
    }
    const int entering = leaving < n ? leaving + n : leaving - n;  // complement
    // lexicographic minimum ratio test over rows with a positive entering coefficient
    r = -1;
    for (int i = 0; i < n; ++i) {
      if (T(i, entering) <= piv_tol) continue;
      if (r < 0) {
        r = i;
        continue;
      }
      const double a = T(i, rhs) / T(i, entering), b = T(r, rhs) / T(r, entering);
      // ratios within 1e-9 (relative) are ties: round-off in the tableau must not pick the row
      constexpr double tie = 1e-9;
      if (a < b - tie * (1 + std::abs(b))) {
        r = i;
      } else if (std::abs(a - b) <= tie * (1 + std::abs(b))) {
        if (basis_[i] == z0) {  // prefer letting z0 leave: terminates
          r = i;
          continue;
        }
        if (basis_[r] == z0) continue;
        for (int j = 0; j < n; ++j) {  // compare rows of B^-1 (the w columns)
          const double ai = T(i, j) / T(i, entering), br = T(r, j) / T(r, entering);
          if (ai < br - 1e-14) { r = i; break; }
          if (ai > br + 1e-14) break;
        }
      }
    }
    if (r < 0) {
      out.status = LcpStatus::RayTermination;
      return out.status;
    }
    leaving = basis_[r];
    pivot(r, entering);
    if (leaving == z0) break;
  }
  for (int i = 0; i < n; ++i) {
    const int v = basis_[i];
    if (v >= n && v < 2 * n) out.z[v - n] = std::max(0.0, T(i, rhs));
  }
  out.w = M * out.z + q;
  out.error = lcp_error(M, q, out.z, out.w);
  if (out.error > tol) {
    // re-solve the final basis from the original data: w_B' = 0 for every basic z, i.e.
    // M[B, B] z_B = -q[B] (an LU; allocates, off the common path)
    std::vector<int> B;
    for (int i = 0; i < n; ++i)
      if (basis_[i] >= n && basis_[i] < 2 * n) B.push_back(basis_[i] - n);
    MatX MBB(B.size(), B.size());
    VecX qB(B.size());
    for (size_t a = 0; a < B.size(); ++a) {
      qB[a] = -q[B[a]];
      for (size_t b = 0; b < B.size(); ++b) MBB(a, b) = M(B[a], B[b]);
    }
    VecX z = VecX::Zero(n);
    if (!B.empty()) {
      const VecX zB = MBB.fullPivLu().solve(qB);
      for (size_t a = 0; a < B.size(); ++a) z[B[a]] = zB[a];
    }
    const VecX w = M * z + q;
    const double e = z.allFinite() ? lcp_error(M, q, z, w) : INFINITY;
    if (e < out.error) {
      out.z = z.cwiseMax(0.0);
      out.w = M * out.z + q;
      out.error = lcp_error(M, q, out.z, out.w);
    }
  }
  out.status = out.error <= tol ? LcpStatus::Solved : LcpStatus::Inaccurate;
  return out.status;
}

}  // namespace bigstep
