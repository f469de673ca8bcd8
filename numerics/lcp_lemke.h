// Lemke's complementary pivoting for the LCP (docs/architecture.md §8):
//   find z >= 0 with w = M z + q >= 0 and w^T z = 0.
// Covering vector e = 1, lexicographic ratio test (no cycling on degenerate problems),
// deterministic, scratch in an LcpWorkspace sized once (n_max): solve() does not allocate.
#pragma once
#include "core/types.h"

namespace bigstep {

/// Inaccurate: Lemke reached a complementary basis but, even after re-solving that basis from the
/// original data, z >= 0, w >= 0, z^T w = 0 do not hold to tolerance (round-off after many pivots).
enum class LcpStatus { Solved, RayTermination, MaxPivots, InvalidInput, Inaccurate };
const char* lcp_status_name(LcpStatus s);

struct LcpResult {
  LcpStatus status = LcpStatus::InvalidInput;
  VecX z;         ///< (n)
  VecX w;         ///< (n) = M z + q
  int pivots = 0;
  double error = 0;  ///< max(-min z, -min w, max |z_i w_i|) / scale of the accepted z (0 = exact)
};

class LcpWorkspace {
 public:
  explicit LcpWorkspace(int n_max);
  /// Solves the LCP (M, q). Ray termination means Lemke found no solution (possible unless M is
  /// e.g. a P-matrix or copositive-plus with a feasible problem). The final basis is re-solved
  /// from (M, q) with an LU (removing the tableau's accumulated round-off) and the solution is
  /// accepted only if it is complementary and feasible to `tol` relative to |q| + |M| |z| (1e-6:
  /// well above the 1e-9 ratio-test tie tolerance, far below a wrong basis).
  LcpStatus solve(const MatX& M, const VecX& q, LcpResult& out, int max_pivots = 0, double tol = 1e-6);
  /// Same into caller-sized z, w (n each; blocks of larger buffers are fine): M and q may be
  /// leading blocks of max-size buffers. Does not allocate unless the final basis must be re-solved.
  LcpStatus solve(Eigen::Ref<const MatX> M, Eigen::Ref<const VecX> q, Eigen::Ref<VecX> z, Eigen::Ref<VecX> w,
                  int& pivots, double& error, int max_pivots = 0, double tol = 1e-6);

 private:
  int n_max_;
  // (n_max x 2 n_max + 2): [w | z | z0 | rhs]; row-major because pivots are row operations
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> T_;
  Eigen::VectorXi basis_;  // (n_max) basic variable of each row
  VecX acc_;               // (n_max) scratch of the error scale
  // re-solve of the final basis: basic z indices, M[B, B] (n_max^2, used as a packed |B| x |B|
  // map so that the LU sees the memory layout of a |B| x |B| matrix), rhs / solution, z and w
  Eigen::VectorXi bidx_, rowt_, colt_, qidx_;
  VecX mbb_, cb_, zr_, wr_;
};

}  // namespace bigstep
