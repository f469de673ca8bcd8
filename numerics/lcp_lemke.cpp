// Lemke's algorithm (Cottle, Pang & Stone, "The Linear Complementarity Problem", §4.4) on the
// tableau [I | -M | -e | q]; variables 0..n-1 are w, n..2n-1 are z, 2n is z0.
#include "numerics/lcp_lemke.h"

#include <cmath>

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

LcpWorkspace::LcpWorkspace(int n_max) : n_max_(n_max), T_(n_max, 2 * n_max + 2), basis_(n_max), acc_(n_max), bidx_(n_max), rowt_(n_max), colt_(n_max),
      qidx_(n_max), mbb_(VecX::Zero(Eigen::Index(n_max) * n_max)), cb_(n_max), zr_(n_max), wr_(n_max) {}

namespace {

// Relative violation of z >= 0, w >= 0, z_i w_i = 0 for w = M z + q. acc: scratch (>= n).
// |M| |z| is accumulated column by column, as Eigen's product of these expressions does.
double lcp_error(Eigen::Ref<const MatX> M, Eigen::Ref<const VecX> q, Eigen::Ref<const VecX> z,
                 Eigen::Ref<const VecX> w, VecX& acc) {
  const Eigen::Index n = z.size();
  auto a = acc.head(n);
  a.setZero();
  for (Eigen::Index k = 0; k < n; ++k) a += std::abs(z[k]) * M.col(k).cwiseAbs();
  const double scale = 1 + q.cwiseAbs().maxCoeff() + a.maxCoeff();
  double e = std::max(0.0, -z.minCoeff());
  e = std::max(e, -w.minCoeff() / scale);
  e = std::max(e, z.cwiseProduct(w).cwiseAbs().maxCoeff() / scale / (1 + z.cwiseAbs().maxCoeff()));
  return e;
}

// Solves A x = b in place (A overwritten, b becomes x) with full pivoting, the operations of
// Eigen::FullPivLU::compute + solve (Eigen 3.4) on caller storage, so that nothing is allocated:
// same pivots, rank threshold (eps * size relative to the largest pivot), components beyond the
// rank 0. A and c are overwritten; x (size) receives the solution; rowt, colt, qidx: scratch (>= size).
void full_piv_lu_solve(Eigen::Map<MatX> A, Eigen::Map<VecX> c, Eigen::Ref<VecX> x, Eigen::VectorXi& rowt,
                       Eigen::VectorXi& colt, Eigen::VectorXi& qidx) {
  const Eigen::Index size = A.rows();
  Eigen::Index nonzero = size;
  double maxpivot = 0;
  for (Eigen::Index k = 0; k < size; ++k) {
    Eigen::Index r, c;
    const double biggest = A.bottomRightCorner(size - k, size - k)
                               .unaryExpr(Eigen::internal::scalar_score_coeff_op<double>())
                               .maxCoeff(&r, &c);
    r += k;
    c += k;
    if (biggest == 0.0) {
      nonzero = k;
      for (Eigen::Index i = k; i < size; ++i) rowt[i] = colt[i] = int(i);
      break;
    }
    maxpivot = std::max(maxpivot, std::abs(A(r, c)));
    rowt[k] = int(r);
    colt[k] = int(c);
    if (k != r) A.row(k).swap(A.row(r));
    if (k != c) A.col(k).swap(A.col(c));
    if (k < size - 1) A.col(k).tail(size - k - 1) /= A.coeff(k, k);
    if (k < size - 1)
      A.block(k + 1, k + 1, size - k - 1, size - k - 1).noalias() -= A.col(k).tail(size - k - 1) * A.row(k).tail(size - k - 1);
  }
  // rank as FullPivLU::rank()
  const double thr = std::abs(maxpivot) * (Eigen::NumTraits<double>::epsilon() * double(size));
  Eigen::Index rank = 0;
  for (Eigen::Index i = 0; i < nonzero; ++i) rank += std::abs(A.coeff(i, i)) > thr;
  if (rank == 0) {
    x.setZero();
    return;
  }
  // c = P b: the row swaps in elimination order
  for (Eigen::Index k = 0; k < size; ++k)
    if (rowt[k] != k) std::swap(c[k], c[rowt[k]]);
  A.triangularView<Eigen::UnitLower>().solveInPlace(c);
  A.topLeftCorner(rank, rank).triangularView<Eigen::Upper>().solveInPlace(c.head(rank));
  // x = Q c (Q's indices accumulated as FullPivLU does), components beyond the rank 0
  for (Eigen::Index i = 0; i < size; ++i) qidx[i] = int(i);
  for (Eigen::Index k = 0; k < size; ++k) std::swap(qidx[k], qidx[colt[k]]);
  for (Eigen::Index i = 0; i < size; ++i) x[qidx[i]] = i < rank ? c[i] : 0.0;
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
  out.z.resize(n);
  out.w.resize(n);
  out.status = solve(M, q, out.z, out.w, out.pivots, out.error, max_pivots, tol);
  return out.status;
}

LcpStatus LcpWorkspace::solve(Eigen::Ref<const MatX> M, Eigen::Ref<const VecX> q, Eigen::Ref<VecX> z,
                              Eigen::Ref<VecX> w, int& pivots, double& error, int max_pivots, double tol) {
  const int n = int(q.size());
  pivots = 0;
  error = 0;
  if (M.rows() != n || M.cols() != n || z.size() != n || w.size() != n || n > n_max_ || !M.allFinite() ||
      !q.allFinite())
    return LcpStatus::InvalidInput;
  z.setZero();
  w = q;
  if (n == 0 || q.minCoeff() >= 0) return LcpStatus::Solved;  // trivial solution z = 0
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
    ++pivots;
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
    if (pivots >= max_pivots) {
      return LcpStatus::MaxPivots;
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
      return LcpStatus::RayTermination;
    }
    leaving = basis_[r];
    pivot(r, entering);
    if (leaving == z0) break;
  }
  for (int i = 0; i < n; ++i) {
    const int v = basis_[i];
    if (v >= n && v < 2 * n) z[v - n] = std::max(0.0, T(i, rhs));
  }
  w.noalias() = M * z;  // = M z + q, the product first as in an expression temporary
  w += q;
  error = lcp_error(M, q, z, w, acc_);
  if (error > tol) {
    // re-solve the final basis from the original data: w_B' = 0 for every basic z, i.e.
    // M[B, B] z_B = -q[B] (a full-pivoting LU in the workspace)
    int nb = 0;
    for (int i = 0; i < n; ++i)
      if (basis_[i] >= n && basis_[i] < 2 * n) bidx_[nb++] = basis_[i] - n;
    auto zr = zr_.head(n);
    auto wr = wr_.head(n);
    zr.setZero();
    if (nb > 0) {
      Eigen::Map<MatX> MBB(mbb_.data(), nb, nb);
      Eigen::Map<VecX> qB(cb_.data(), nb);
      for (int a = 0; a < nb; ++a) {
        qB[a] = -q[bidx_[a]];
        for (int b = 0; b < nb; ++b) MBB(a, b) = M(bidx_[a], bidx_[b]);
      }
      auto zB = acc_.head(nb);
      full_piv_lu_solve(MBB, qB, zB, rowt_, colt_, qidx_);
      for (int a = 0; a < nb; ++a) zr[bidx_[a]] = zB[a];
    }
    wr.noalias() = M * zr;
    wr += q;
    const double e = zr.allFinite() ? lcp_error(M, q, zr, wr, acc_) : INFINITY;
    if (e < error) {
      z = zr.cwiseMax(0.0);
      w.noalias() = M * z;
      w += q;
      error = lcp_error(M, q, z, w, acc_);
    }
  }
  return error <= tol ? LcpStatus::Solved : LcpStatus::Inaccurate;
}

}  // namespace bigstep
