// Small dense convex QP (docs/architecture.md §8): Goldfarb-Idnani dual active-set
// method. Exact (finite) termination, exact infeasibility detection, warm start from a previous
// active set, deterministic (fixed constraint order, lowest index wins ties). All scratch lives in
// a QpWorkspace sized once for n_max variables and m_max constraints: solve() does not allocate.
//
//   minimize 1/2 x^T Q x + c^T x
//   s.t.     E x = e              (m_e rows)
//            A x <= b             (m_a rows, general inequalities)
//            lb <= x <= ub        (entries may be +-inf)
//            sum_{i in g} x_i <= 1 for each simplex group g (per-contact convex weights)
//
// Q must be symmetric PSD. A positive definite Q is factorized as is; a singular PSD Q is solved by
// proximal-point iterations on Q + rho I, rho = 1e-6 (1 + max|Q_ii|), each warm-started, until the
// iterate is a fixed point (= KKT point of the original problem). An unbounded problem ends in
// MaxIterations (proximal steps keep moving) or Infeasible.
#pragma once
#include <span>
#include <vector>

#include "core/types.h"

namespace bigstep {

struct DenseQp {
  MatX Q;  ///< (n x n) symmetric PSD
  VecX c;  ///< (n)
  MatX E;  ///< (m_e x n) equalities, may have 0 rows
  VecX e;  ///< (m_e)
  MatX A;  ///< (m_a x n) inequalities A x <= b, may have 0 rows
  VecX b;  ///< (m_a)
  VecX lb, ub;  ///< (n) or empty = unbounded
  struct Group { int start, size; };
  std::vector<Group> simplex;  ///< sum x[start .. start+size) <= 1
};

/// The same problem over caller-owned storage, e.g. leading blocks of max-size buffers, so that a
/// step whose problem size varies resizes nothing (no heap allocation inside a step).
struct DenseQpRef {
  Eigen::Ref<const MatX> Q;
  Eigen::Ref<const VecX> c;
  Eigen::Ref<const MatX> E;
  Eigen::Ref<const VecX> e;
  Eigen::Ref<const MatX> A;
  Eigen::Ref<const VecX> b;
  Eigen::Ref<const VecX> lb, ub;
  std::span<const DenseQp::Group> simplex;
};

enum class QpStatus { Solved, Infeasible, MaxIterations, NotConvex, InvalidInput };
const char* qp_status_name(QpStatus s);

/// Canonical inequality order (indices of `active`, `u`): A rows, then finite lb entries, then
/// finite ub entries, then simplex groups. Each is written n_i^T x >= beta_i internally.
struct QpResult {
  QpStatus status = QpStatus::InvalidInput;
  VecX x;                    ///< (n) solution
  VecX u;                    ///< (m) inequality multipliers >= 0, canonical order
  VecX nu;                   ///< (m_e) equality multipliers (Q x + c + E^T nu + sum u_i grad g_i = 0)
  std::vector<int> active;   ///< active inequalities, canonical order (pass back as warm start)
  int iterations = 0;
};

class QpWorkspace {
 public:
  QpWorkspace(int n_max, int m_max);
  /// Solves p. `warm` (optional): active set of a previous, similar problem.
  QpStatus solve(const DenseQp& p, QpResult& out, const std::vector<int>* warm = nullptr, int max_iter = 0);
  /// Same without allocating: out.x, out.u, out.nu must already hold at least n, m, m_e entries
  /// (only the leading ones are written; canonical order as above) and out.active capacity m.
  QpStatus solve(const DenseQpRef& p, QpResult& out, const std::vector<int>* warm = nullptr, int max_iter = 0);

 private:
  // canonical constraints n_i^T x >= beta_i; equalities are rows [0, m_e)
  void build(const DenseQp& p);
  bool add_to_basis(int idx);          // orthonormal basis of L^-1 N_W grows by N column idx
  void rebuild_basis();                // after a drop
  void directions(int p, Eigen::Ref<VecX> z, Eigen::Ref<VecX> r);  // primal z, dual r for adding p
  void solve_active(Eigen::Ref<VecX> x, Eigen::Ref<VecX> uW);       // x, u for W as equalities
  QpStatus dual_active_set(QpResult& out, const std::vector<int>* warm, int max_iter);  // with c = ck_

  int n_max_, m_max_;
  int n_ = 0, m_e_ = 0, m_ = 0;        // sizes of the current problem (m = inequalities)
  MatX N_;                             // (n_max x m_max + n_max) constraint normals, eqs first
  VecX beta_;                          // (m_max + n_max)
  MatX L_;                             // Cholesky factor of Q + eps I
  Eigen::LLT<MatX> llt_;
  VecX x0_;                            // unconstrained minimizer
  std::vector<int> W_;                 // active set: equality ids then inequality ids (offset m_e)
  std::vector<int> W_copy_;            // scratch for rebuild_basis
  MatX U_;                             // orthonormal basis of L^-1 N_W (n x |W|)
  MatX Rr_;                            // (|W| x |W|) upper triangular, L^-1 N_W = U Rr
  VecX y_, tmp_, s_, uW_, z_, r_, xs_;
  VecX ck_, xprev_;                    // proximal linear term and centre
  double rho_ = 0;
  std::vector<int> active_tmp_;
};

/// KKT residuals of a result (for tests and diagnostics): max of stationarity, primal
/// infeasibility, dual infeasibility and complementarity, each scaled by (1 + data norms).
double qp_kkt_residual(const DenseQp& p, const QpResult& r);

}  // namespace bigstep
