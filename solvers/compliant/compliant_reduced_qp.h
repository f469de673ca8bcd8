// The frictionless QP of the compliant solver (docs/methods/compliant.md §6, paper
// (83)-(85); the N-step of §7.5) where the rows outnumber the DOFs (B4: 900 foundation elements
// under a 6-DOF box), solved in 2n unknowns instead of ny:
//
//   y = argmin 1/2 y^T y   s.t.  (I + W A) y >= r,  y >= 0,     A = G M~^-1 G^T  (ny x ny, rank <= n)
//
// KKT (M = I + W A, so M^T = I + A W): y = u + A W u + nu, u >= 0 ⊥ (M y - r), nu >= 0 ⊥ y.
// With p = M~^-1 G^T y and xi = M~^-1 G^T W u (n each), row i sees only
//   a_i = G_i xi   and   t_i = r_i - W_i G_i p   ((M y)_i >= r_i  <=>  y_i >= t_i),
// and its KKT conditions (y_i = u_i + a_i + nu_i, both complementarities) hold in one of four
// regions [derived] (a complementary pair each of (y_i, nu_i) and (u_i, s_i = (M y)_i - r_i)):
//   T (tight)  y_i = t_i,  u_i = t_i - a_i            valid while t_i >= 0, u_i >= 0
//   F (free)   y_i = a_i,  u_i = 0                    valid while a_i >= 0, a_i >= t_i
//   Z (zero)   y_i = 0,    u_i = 0,  nu_i = -a_i      valid while a_i <= 0, t_i <= 0
//   D (both)   y_i = 0,    t_i = 0,  nu_i = -a_i - u_i, u_i an unknown: valid while u_i, nu_i >= 0
// (D, a row held by the others' forces exactly at its bound, is generic for this QP: the least norm
// often loads the neighbours just enough.) So the QP is a piecewise-linear system in (p, xi, u_D)
//   M~ p = G^T y,   M~ xi = G^T W u,   W_i G_i p = r_i (i in D).
// Phase 1, block principal pivoting on the pairs: fix every row's region, solve the linear piece
//   [ M~ + G_T^T W_T G_T     -G_F^T G_F         ] [p ]   [ 0         ]   [ G_T^T r_T     ]
//   [ G_T^T W_T^2 G_T         M~ + G_T^T W_T G_T ] [xi] - [ G_D^T W_D u_D ] = [ G_T^T W_T r_T ],
// bordered by the D rows (Schur complement, |D| <= n), recompute (a, t, u_D) and move every row
// whose region does not hold (rules in the .cpp); stop when none moves: then every row's KKT conditions hold (to
// round-off) and y is the QP's unique solution. The 2n x 2n matrix is never singular: with
// P = M~ + G_T^T W_T G_T (SPD), C, E the PSD blocks, a null vector needs (I + P^-1 C P^-1 E) p = 0,
// and P^-1 C P^-1 E has real eigenvalues >= 0. Cost O(ny n^2 + n^3) per iteration.
//
// Phase 2 (finite), when phase 1 stalls (its count of rows in the wrong region makes no new minimum
// for kStall pieces, or max_iter pieces): a primal active-set method on the dual
//   max_{u >= 0, nu >= 0}  D(u, nu) = r^T u - 1/2 ||y||^2,   y = M^T u + nu = u + nu + A W u,
// a concave QP with bounds only, whose maximiser is the KKT point above. Its working set (variables
// held at 0) is again a region per row (T: u free; Z: nu free; D: both; F: neither) and the
// maximiser of D over the free variables is the same linear piece. Each iteration moves from the
// current (u, nu) >= 0 towards the piece's maximiser until a free variable reaches 0 (ratio test;
// that variable is fixed), or, at the maximiser, frees the fixed variables whose gradient
// (dD/du_i = t_i - y_i, dD/dnu_i = -y_i) is positive, or stops (KKT). D never decreases and rises
// strictly on every step of positive length, so no working set repeats at a maximiser unless steps
// of length 0 (degenerate) lead back to it; once a maximiser is reached without a rise of D, one
// variable at a time is freed from then on, the least index first (Bland), so the method terminates [Nocedal & Wright, Numerical Optimization, 2nd ed., §16.5, the primal
// active-set method, applied to the dual; Bland's rule against degenerate cycling]. A piece with a
// null direction (D rows no F row can hold, or dependent G_i of D rows) is a direction along which
// ||y|| is constant: D is linear there and the step follows it (uphill) until a free variable
// reaches 0. Still 2n (+ |D| <= n + 1) unknowns per piece. It starts from phase 1's piece with
// the largest D (its (u, nu) with the negative parts dropped), and its first kProjections steps
// may instead drop every negative part of the maximiser at once when that raises D (many u_i fall
// to 0 together); the finite rule then runs unchanged from that point.
//
// Why not the primal in v alone, min 1/2 v^T M~ v - ... + sum_i h^2/(2 W_i) max(0, s_i(v))^2: its
// minimiser is the LCP y = max(0, r - W A y) (every row exactly its spring-damper law), which is the
// QP's solution only while region F is empty. The QP gives rows that are compressed but separating
// a force when rows are coupled positively (A_ij > 0), e.g. A = [[1, .9], [.9, 1]], W = 1,
// r = (1, -.1): the LCP gives y = (.5, 0), the QP y = (2, .9) / 4.81 (norm^2 .208 < .25). The
// F rows are what made the previous guess (T and Z only) fail on B4 with 50 N.
#pragma once
#include <vector>

#include "core/types.h"

namespace bigstep {

/// Scratch of reduced_unilateral_qp, sized at construction (solve() does not allocate).
struct ReducedQpWorkspace {
  ReducedQpWorkspace(int n, int ny_max);
  /// bit 1: y_i basic (else nu_i), bit 2: u_i basic (else the slack s_i)
  enum Region : signed char { Z = 0, F = 1, D = 2, T = 3 };
  MatX J;                            ///< (2n x 2n) the linear piece, xi scaled by 1/w_s
  MatX P, C, E;                      ///< (n x n) M~ + G_T^T W_T G_T, G_F^T G_F, G_T^T W_T^2 G_T
  Eigen::PartialPivLU<MatX> lu;      ///< factor of J
  VecX b, s, bd;                     ///< (2n) right side, solution [p; xi / w_s], a border column
  MatX X;                            ///< (2n x n+1) J^-1 times the border columns of the D rows
  MatX Qd;                           ///< (n x n) orthonormal basis of the D rows' G_i
  MatX Sd;                           ///< (n+1 x n+1) their Schur complement, identity-padded
  Eigen::PartialPivLU<MatX> slu;     ///< factor of Sd
  VecX ud, rd;                       ///< (n+1) u of the D rows, Schur right side
  std::vector<int> dset;             ///< (n+1) the D rows
  VecX a, t, u;                      ///< (ny_max) G_i xi, r_i - W_i G_i p, the row multipliers u_i
  std::vector<signed char> region;   ///< (ny_max) Region of each row
  std::vector<signed char> swung;    ///< (ny_max) 1 once the row moved between T and Z
  std::vector<signed char> best_region;  ///< (ny_max) phase 1's regions with the fewest rows wrong
  // phase 2 (dual active set)
  VecX nu;                           ///< (ny_max) bound multipliers nu_i of the current point
  VecX u1, nu1;                      ///< (ny_max) the piece's maximiser (or a null direction)
  VecX sc, ds;                       ///< (2n) [p; xi / w_s] of the current point, null direction
  VecX dud;                          ///< (n+1) u_D part of the null direction
  Eigen::LLT<MatX> mtf;              ///< factor of M~ (the start point's p, xi)
};

struct ReducedQpResult {
  bool solved = false;  ///< KKT hold: y is the QP's solution
  int iterations = 0;   ///< linear pieces solved (both phases)
  int active_set_pieces = 0;  ///< of which in phase 2 (0: block pivoting settled)
};

/// Solves the QP above for the first ny rows of G (n columns), weights W (ny, > 0 not required)
/// and right side r (ny); Mt = M~ (n x n SPD). warm: the previous active set in the dense QP's
/// canonical order (i < ny: row i tight; ny + i: y_i = 0 bound; both: D; neither: F), empty =
/// start from T where r_i > 0, else Z; on success rewritten in the same order (capacity 2 ny
/// reserved by the caller: no allocation). max_iter: pieces of phase 1 before phase 2 takes over;
/// phase 2 terminates finitely (a safety cap of 4 ny + 100 pieces returns unsolved, never reached
/// in the tests; the caller then runs the dense QP). y (ny) is written only on success;
/// ws.region, ws.a, ws.t, ws.u then hold every row's region and KKT quantities.
ReducedQpResult reduced_unilateral_qp(const MatX& Mt, const MatX& G, int ny, const double* W, const double* r,
                                      std::vector<int>& warm, int max_iter, ReducedQpWorkspace& ws, double* y);

}  // namespace bigstep
