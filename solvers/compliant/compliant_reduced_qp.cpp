// The §6 QP of the compliant solver in 2n unknowns (docs/methods/compliant.md §6; the
// derivation is in compliant_reduced_qp.h). cpu-only: the compliant solver has no CUDA mirror yet.
#include "solvers/compliant/compliant_reduced_qp.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace bigstep {

ReducedQpWorkspace::ReducedQpWorkspace(int n, int ny_max)
    : J(MatX::Zero(2 * n, 2 * n)),
      P(MatX::Zero(n, n)),
      C(MatX::Zero(n, n)),
      E(MatX::Zero(n, n)),
      lu(2 * n),
      b(VecX::Zero(2 * n)),
      s(VecX::Zero(2 * n)),
      bd(VecX::Zero(2 * n)),
      X(MatX::Zero(2 * n, n + 1)),
      Qd(MatX::Zero(std::max(1, n), std::max(1, n))),
      Sd(MatX::Identity(n + 1, n + 1)),
      slu(n + 1),
      ud(VecX::Zero(n + 1)),
      rd(VecX::Zero(n + 1)),
      dset(size_t(n + 1), 0),
      a(VecX::Zero(std::max(1, ny_max))),
      t(VecX::Zero(std::max(1, ny_max))),
      u(VecX::Zero(std::max(1, ny_max))),
      region(size_t(std::max(1, ny_max)), Z),
      swung(size_t(std::max(1, ny_max)), 0),
      best_region(size_t(std::max(1, ny_max)), Z),
      nu(VecX::Zero(std::max(1, ny_max))),
      u1(VecX::Zero(std::max(1, ny_max))),
      nu1(VecX::Zero(std::max(1, ny_max))),
      sc(VecX::Zero(2 * n)),
      ds(VecX::Zero(2 * n)),
      dud(VecX::Zero(n + 1)),
      mtf(n) {}

namespace {

using Rg = ReducedQpWorkspace;
constexpr signed char kY = 1, kU = 2;  // region bits: y_i basic, u_i basic (Rg::Region)

enum class Piece { Solved, Demoted, Singular, Failed };

// The linear piece of the regions in ws.region (the .h): ws.s = [p; xi / w_s], ws.ud / ws.dset the
// D rows' u_i (nd of them). Phase 1 (exact = false) demotes D rows whose piece has no solution to Z
// (Demoted: the regions changed, solve again). Phase 2 (exact = true) keeps the regions and reports
// a singular bordered system as Singular with its null direction (ws.ds, ws.dud): then ||y|| is
// constant along it (the homogeneous piece equations are those of the dual's zero curvature).
Piece solve_piece(const MatX& Mt, const MatX& G, int ny, const double* W, const double* r, double w_s, bool exact,
                  ReducedQpWorkspace& ws, int& nd) {
  const int n = int(Mt.rows());
  signed char* reg = ws.region.data();
  ws.P = Mt;
  ws.C.setZero();
  ws.E.setZero();
  ws.b.setZero();
  nd = 0;
  for (int i = 0; i < ny; ++i) {
    const auto g = G.row(i);
    if (reg[i] == Rg::T) {
      ws.P.noalias() += W[i] * g.transpose() * g;
      ws.E.noalias() += (W[i] * W[i]) * g.transpose() * g;
      ws.b.head(n).noalias() += r[i] * g.transpose();
      ws.b.tail(n).noalias() += (W[i] * r[i] / w_s) * g.transpose();
    } else if (reg[i] == Rg::F) {
      ws.C.noalias() += g.transpose() * g;
    } else if (reg[i] == Rg::D) {
      if (exact) {
        // why no demotion here: phase 2 must keep its working set; a dependent D row shows up as
        // a singular border below (its null direction is the step). n + 1 D rows always are.
        if (nd == n + 1) return Piece::Failed;
        ws.dset[size_t(nd++)] = i;
        continue;
      }
      // why a D row whose G_i depends on the earlier D rows becomes Z: its t_i = 0 is then implied
      // by theirs (or contradicts them), so its u_i is not determined (the bordered system would
      // be singular); u_i = 0, i.e. Z, is one valid choice of the multipliers (B4: collinear
      // element points). Gram-Schmidt on the D rows' G_i, twice for round-off.
      ws.bd.head(n) = g.transpose();
      const double g2 = ws.bd.head(n).norm();
      for (int pass = 0; pass < 2; ++pass)
        for (int k = 0; k < nd; ++k) ws.bd.head(n) -= ws.Qd.col(k).dot(ws.bd.head(n)) * ws.Qd.col(k);
      const double res2 = ws.bd.head(n).norm();
      if (nd == n || !(res2 > 1e-8 * g2)) {
        reg[i] = Rg::Z;
        continue;
      }
      ws.Qd.col(nd) = ws.bd.head(n) / res2;
      ws.dset[size_t(nd++)] = i;
    }
  }
  ws.J.topLeftCorner(n, n) = ws.P;
  ws.J.topRightCorner(n, n) = -w_s * ws.C;
  ws.J.bottomLeftCorner(n, n) = ws.E / w_s;
  ws.J.bottomRightCorner(n, n) = ws.P;
  ws.lu.compute(ws.J);
  ws.s.noalias() = ws.lu.solve(ws.b);
  // ---- the border of the D rows: s = J^-1 b - X u_D, (C X) u_D = C J^-1 b - r_D (row i of C:
  //      W_i G_i on p) ----
  if (nd > 0) {
    const auto p = ws.s.head(n);
    ws.Sd.setIdentity();
    ws.rd.setZero();
    for (int k = 0; k < nd; ++k) {
      const int i = ws.dset[size_t(k)];
      ws.bd.setZero();
      ws.bd.tail(n) = (-W[i] / w_s) * G.row(i).transpose();
      ws.X.col(k).noalias() = ws.lu.solve(ws.bd);
    }
    for (int k = 0; k < nd; ++k) {
      const int i = ws.dset[size_t(k)];
      const auto g = G.row(i);
      for (int l = 0; l < nd; ++l) ws.Sd(k, l) = W[i] * g.dot(ws.X.col(l).head(n));
      ws.rd[k] = W[i] * g.dot(p) - r[i];
    }
    ws.slu.compute(ws.Sd);
    if (exact) {
      // singular border (pivots of the D block below 1e-11 of its largest entry): its null vector
      // by two steps of inverse iteration on Sd + sigma I (sigma 1e-10 of that entry; 1 when Sd = 0:
      // D rows without F rows, every direction is null)
      double pmin = INFINITY;
      const double smax = ws.Sd.topLeftCorner(nd, nd).cwiseAbs().maxCoeff();
      for (int k = 0; k < nd; ++k) pmin = std::min(pmin, std::abs(ws.slu.matrixLU()(k, k)));
      if (!(pmin > 1e-11 * smax)) {
        const double sigma = smax > 0 ? 1e-10 * smax : 1.0;
        for (int k = 0; k < nd; ++k) ws.Sd(k, k) += sigma;
        ws.slu.compute(ws.Sd);
        ws.rd.setZero();
        ws.rd.head(nd).setOnes();
        for (int pass = 0; pass < 2; ++pass) {
          ws.dud.noalias() = ws.slu.solve(ws.rd);
          ws.rd = ws.dud / ws.dud.head(nd).norm();
        }
        ws.dud = ws.rd;
        if (!ws.dud.allFinite()) return Piece::Failed;
        ws.ds.noalias() = -ws.X.leftCols(nd) * ws.dud.head(nd);
        return Piece::Singular;
      }
    }
    ws.ud.noalias() = ws.slu.solve(ws.rd);
    if (!ws.ud.head(nd).allFinite()) {
      if (exact) return Piece::Failed;
      // why: u_D reaches p only through the F rows (y_F = G_F xi), so D rows without F rows that
      // can carry their load have no solution in this piece; they go back to Z (and may return)
      for (int k = 0; k < nd; ++k) reg[ws.dset[size_t(k)]] = Rg::Z;
      return Piece::Demoted;
    }
    ws.s.noalias() -= ws.X.leftCols(nd) * ws.ud.head(nd);
  }
  return ws.s.allFinite() ? Piece::Solved : Piece::Failed;
}

// per-row tolerance of the sign tests: why per row and tight: a row's multiplier u_i ~ y_i / (W A)
// is tiny beside r_i ~ W A y_i (stiff rows), so a tolerance on the scale of r would accept wrong
// signs of u; 1e-13 of the row's own terms is ~500 eps (a sign lost to round-off costs a piece,
// not accuracy)
double row_tol(double r, double a, double t, double u) {
  return 1e-13 * (std::abs(r) + std::abs(r - t) + std::abs(a) + std::abs(u)) + 1e-300;
}

// a_i = G_i xi, t_i = r_i - W_i G_i p and u_i of every row, from the piece just solved
void row_values(const MatX& G, int ny, const double* W, const double* r, double w_s, int nd, ReducedQpWorkspace& ws) {
  const int n = int(G.cols());
  const auto p = ws.s.head(n), xi = ws.s.tail(n);  // xi scaled by 1 / w_s
  for (int i = 0; i < ny; ++i) {
    const auto g = G.row(i);
    ws.a[i] = w_s * g.dot(xi);
    ws.t[i] = r[i] - W[i] * g.dot(p);
    ws.u[i] = ws.region[size_t(i)] == Rg::T ? ws.t[i] - ws.a[i] : 0.0;
  }
  for (int k = 0; k < nd; ++k) ws.u[ws.dset[size_t(k)]] = ws.ud[k];
}

// the basic variables of row i's two pairs in region g (both >= 0 <=> the region holds)
void basic_pair(signed char g, double a, double t, double u, double& by, double& bu) {
  switch (g) {
    case Rg::T: by = t, bu = u; break;      // y = t, u = t - a
    case Rg::F: by = a, bu = a - t; break;  // y = a, s = y - t
    case Rg::Z: by = -a, bu = -t; break;    // nu = -a, s = -t
    default: by = -a - u, bu = u; break;    // D: nu = -a - u, u
  }
}

// y, and the active set in the dense QP's canonical order, of solved regions
void finish(int ny, const ReducedQpWorkspace& ws, std::vector<int>& warm, double* y) {
  const signed char* reg = ws.region.data();
  for (int i = 0; i < ny; ++i)
    y[i] = reg[i] == Rg::T ? std::max(0.0, ws.t[i]) : reg[i] == Rg::F ? std::max(0.0, ws.a[i]) : 0.0;
  warm.clear();
  for (int i = 0; i < ny; ++i)
    if (reg[i] & kU) warm.push_back(i);
  for (int i = 0; i < ny; ++i)
    if (!(reg[i] & kY)) warm.push_back(ny + i);
}

// p and xi (scaled by 1 / w_s) of the dual point (max(0, u), max(0, nu)) into s2 = [p; xi / w_s]:
// xi = M~^-1 G^T W u, y = u + nu + G xi, p = M~^-1 G^T y (ws.mtf: M~ factored). Returns the dual
// objective D = r^T u - 1/2 ||y||^2 there.
double dual_point(const MatX& G, int ny, const double* W, const double* r, double w_s, const double* u, const double* nu,
                  ReducedQpWorkspace& ws, VecX& s2) {
  const int n = int(G.cols());
  auto p = s2.head(n), xi = s2.tail(n);
  xi.setZero();
  for (int i = 0; i < ny; ++i)
    if (u[i] > 0) xi.noalias() += (W[i] * u[i] / w_s) * G.row(i).transpose();
  ws.mtf.solveInPlace(xi);
  p.setZero();
  double value = 0;
  for (int i = 0; i < ny; ++i) {
    const double ui = std::max(0.0, u[i]);
    const double yi = ui + std::max(0.0, nu[i]) + w_s * G.row(i).dot(xi);
    value += r[i] * ui - 0.5 * yi * yi;
    if (yi != 0) p.noalias() += yi * G.row(i).transpose();
  }
  ws.mtf.solveInPlace(p);
  return value;
}

// Phase 2 (the .h): the primal active-set method on the dual, from the last phase-1 piece (its
// regions and ws.a, ws.t, ws.u), projected onto u, nu >= 0.
bool dual_active_set(const MatX& Mt, const MatX& G, int ny, const double* W, const double* r, double w_s,
                     ReducedQpWorkspace& ws, ReducedQpResult& res) {
  const int n = int(Mt.rows());
  signed char* reg = ws.region.data();
  // ---- start point: (u, nu) of the piece in ws.region (ws.a, ws.t, ws.u), negative parts dropped;
  //      free = positive ----
  for (int i = 0; i < ny; ++i) {
    const double nu = reg[i] == Rg::Z ? -ws.a[i] : reg[i] == Rg::D ? -ws.a[i] - ws.u[i] : 0.0;
    ws.u[i] = (reg[i] & kU) ? std::max(0.0, ws.u[i]) : 0.0;
    ws.nu[i] = std::max(0.0, nu);
    reg[i] = static_cast<signed char>((ws.u[i] > 0 ? kU : 0) | (ws.nu[i] > 0 ? 0 : kY));
  }
  dual_point(G, ny, W, r, w_s, ws.u.data(), ws.nu.data(), ws, ws.sc);
  bool bland = false;  // after a degenerate step: free one variable at a time, least index first
  double d_last = -INFINITY;  // D at the last maximiser
  constexpr int kProjections = 20;
  int projections = 0;
  const int cap = 4 * ny + 100;
  for (int it = 0; it < cap; ++it) {
    ++res.iterations;
    ++res.active_set_pieces;
    int nd = 0;
    const Piece pc = solve_piece(Mt, G, ny, W, r, w_s, true, ws, nd);
    if (pc == Piece::Failed) return false;
    // ---- the step: to the piece's maximiser (u1, nu1), or along its null direction ----
    const bool ray = pc == Piece::Singular;
    const VecX& s1 = ray ? ws.ds : ws.s;
    const auto p1 = s1.head(n), xi1 = s1.tail(n);
    double slope = 0;  // ray: dD = r^T du (||y|| is constant along it)
    for (int i = 0; i < ny; ++i) {
      const auto g = G.row(i);
      const double a1 = w_s * g.dot(xi1), t1 = (ray ? 0.0 : r[i]) - W[i] * g.dot(p1);
      if (!ray) ws.a[i] = a1, ws.t[i] = t1;
      ws.u1[i] = reg[i] == Rg::T ? t1 - a1 : 0.0;
      ws.nu1[i] = reg[i] == Rg::Z ? -a1 : 0.0;
    }
    for (int k = 0; k < nd; ++k) {
      const int i = ws.dset[size_t(k)];
      const double a1 = w_s * G.row(i).dot(xi1);
      ws.u1[i] = ray ? ws.dud[k] : ws.ud[k];
      ws.nu1[i] = -a1 - ws.u1[i];
    }
    // ratio test: the first free variable to reach 0 (least index on ties); a ray runs until one
    // does, uphill (slope >= 0); why the other way when none blocks: then the slope is round-off (a
    // positive one would make D unbounded, i.e. the QP infeasible, which it is not)
    auto flip = [&] {
      ws.u1.head(ny) *= -1.0;
      ws.nu1.head(ny) *= -1.0;
      ws.ds *= -1.0;
    };
    if (ray) {
      for (int i = 0; i < ny; ++i) slope += r[i] * ws.u1[i];
      if (slope < 0) flip();
    }
    double alpha = 1;
    int blk = -1;
    bool blk_u = false;
    for (int pass = 0; pass < 2; ++pass) {
      alpha = ray ? INFINITY : 1.0;
      for (int i = 0; i < ny; ++i) {
        // ray: the direction d = (u1, nu1); else d = (u1, nu1) - (u, nu)
        const double du = ray ? ws.u1[i] : ws.u1[i] - ws.u[i];
        const double dn = ray ? ws.nu1[i] : ws.nu1[i] - ws.nu[i];
        if ((reg[i] & kU) && du < 0 && (ray || ws.u1[i] < 0) && ws.u[i] / -du < alpha) {
          alpha = ws.u[i] / -du, blk = i, blk_u = true;
        }
        if (!(reg[i] & kY) && dn < 0 && (ray || ws.nu1[i] < 0) && ws.nu[i] / -dn < alpha) {
          alpha = ws.nu[i] / -dn, blk = i, blk_u = false;
        }
      }
      if (!ray || blk >= 0) break;
      flip();
    }
    if (ray && blk < 0) return false;
    if (blk >= 0 && !ray && projections < kProjections) {
      // ---- projected step: the maximiser with its negative parts dropped, taken when D rises ----
      // why: from phase 1's point many u_i must fall to 0 and the ratio test drops one per piece
      // (B4, 818 rows: ~400 pieces); the projection drops them together. Only kProjections of them,
      // each raising D, so the finite argument above still holds for what follows.
      ++projections;
      double d0 = 0;
      for (int i = 0; i < ny; ++i) {
        const double yi = ws.u[i] + ws.nu[i] + w_s * G.row(i).dot(ws.sc.tail(n));
        d0 += r[i] * ws.u[i] - 0.5 * yi * yi;
      }
      const double d1 = dual_point(G, ny, W, r, w_s, ws.u1.data(), ws.nu1.data(), ws, ws.bd);
      if (d1 > d0) {
        for (int i = 0; i < ny; ++i) {
          ws.u[i] = std::max(0.0, ws.u1[i]);
          ws.nu[i] = std::max(0.0, ws.nu1[i]);
          reg[i] = static_cast<signed char>((ws.u[i] > 0 ? kU : 0) | (ws.nu[i] > 0 ? 0 : kY));
        }
        ws.sc = ws.bd;
        continue;
      }
    }
    if (blk >= 0) {
      // ---- partial step: move, fix the blocking variable at 0 ----
      alpha = std::max(0.0, alpha);
      for (int i = 0; i < ny; ++i) {
        ws.u[i] += alpha * (ray ? ws.u1[i] : ws.u1[i] - ws.u[i]);
        ws.nu[i] += alpha * (ray ? ws.nu1[i] : ws.nu1[i] - ws.nu[i]);
      }
      if (ray)
        ws.sc.noalias() += alpha * ws.ds;
      else
        ws.sc += alpha * (ws.s - ws.sc);
      if (blk_u) {
        ws.u[blk] = 0;
        reg[blk] = static_cast<signed char>(reg[blk] & ~kU);
      } else {
        ws.nu[blk] = 0;
        reg[blk] = static_cast<signed char>(reg[blk] | kY);
      }
      continue;
    }
    // ---- at the maximiser of the working set: free the variables whose gradient is positive ----
    ws.u.head(ny) = ws.u1.head(ny);
    ws.nu.head(ny) = ws.nu1.head(ny);
    ws.sc = ws.s;
    // why Bland only then: a step of length 0 (a freed variable blocked at once) is common and
    // harmless; cycling needs a return to a maximiser without a rise of D, so that is the trigger
    double d_now = 0;
    for (int i = 0; i < ny; ++i) {
      const double yi = ws.u[i] + ws.nu[i] + ws.a[i];
      d_now += r[i] * ws.u[i] - 0.5 * yi * yi;
    }
    if (!(d_now > d_last)) bland = true;
    d_last = d_now;
    int freed = 0;
    for (int i = 0; i < ny && !(bland && freed); ++i) {
      const double a = ws.a[i], t = ws.t[i], u = ws.u[i];
      const double yi = u + ws.nu[i] + a;  // dD/du_i = t_i - y_i, dD/dnu_i = -y_i
      const double tol = row_tol(r[i], a, t, u);
      const bool free_u = !(reg[i] & kU) && t - yi > tol;
      const bool free_nu = (reg[i] & kY) && -yi > tol && !(bland && free_u);
      if (!free_u && !free_nu) continue;
      const auto next = static_cast<signed char>((reg[i] | (free_u ? kU : 0)) & ~(free_nu ? kY : 0));
      // why at most n + 1 D rows: more are always dependent (the piece's border holds n + 1); a
      // row skipped here is freed later (at a maximiser |D| <= n, so the first free always happens)
      if (next == Rg::D && nd == n + 1) continue;
      reg[i] = next;
      freed += int(free_u) + int(free_nu);
      nd += next == Rg::D;
    }
    if (freed == 0) return true;  // KKT: ws.u holds the multipliers (T: t - a, D: u_D, else 0)
  }
  return false;
}

}  // namespace

ReducedQpResult reduced_unilateral_qp(const MatX& Mt, const MatX& G, int ny, const double* W, const double* r,
                                      std::vector<int>& warm, int max_iter, ReducedQpWorkspace& ws, double* y) {
  ReducedQpResult res;
  const int n = int(Mt.rows());
  signed char* reg = ws.region.data();
  if (ny <= 0) {
    warm.clear();
    res.solved = true;
    return res;
  }
  // ---- start regions: the previous active set, or T where the row pushes with y = 0 ----
  if (warm.empty()) {
    for (int i = 0; i < ny; ++i) reg[i] = r[i] > 0 ? Rg::T : Rg::Z;
  } else {
    // tight row: u basic; bound y_i = 0: nu basic (y not); neither: F
    for (int i = 0; i < ny; ++i) reg[i] = Rg::F;
    for (int k : warm)
      if (k >= 0 && k < ny) reg[k] |= kU;
    for (int k : warm)
      if (k >= ny && k < 2 * ny) reg[k - ny] &= ~kY;
  }
  // why xi is scaled: xi ~ W p, so [p; xi / w_s] keeps the two blocks of J at comparable size
  double w_s = 1;
  for (int i = 0; i < ny; ++i) w_s = std::max(w_s, W[i]);
  std::fill(ws.swung.begin(), ws.swung.begin() + ny, 0);
  // why phase 1 gives way to phase 2 (the .h): block pivoting need not terminate (on random rows
  // ~8 % of instances wander past 100 pieces; B4 with 900 elements, E = 1e10, 50 N: one step cycles
  // through the same regions). Its count of rows in the wrong region is the merit (as in
  // Judice & Pires' block pivoting with a safeguard): no new minimum in kStall pieces -> phase 2.
  constexpr int kStall = 10;
  int best = ny + 1, since_best = 0;
  double best_d = -INFINITY;
  ws.mtf.compute(Mt);
  for (int it = 1; it <= max_iter; ++it) {
    res.iterations = it;
    int nd = 0;
    const Piece pc = solve_piece(Mt, G, ny, W, r, w_s, false, ws, nd);
    if (pc == Piece::Demoted) continue;
    if (pc != Piece::Solved) return res;
    row_values(G, ny, W, r, w_s, nd, ws);
    // ---- phase 2's start: the piece whose (u, nu), negative parts dropped, has the largest dual
    //      objective D (B4's cycling step: the last piece's D is -8e9, the best one's 13.07 of the
    //      optimum 13.39: 7 pieces of phase 2 instead of ~350) ----
    for (int i = 0; i < ny; ++i) {
      ws.u1[i] = (reg[i] & kU) ? ws.u[i] : 0.0;
      ws.nu1[i] = reg[i] == Rg::Z ? -ws.a[i] : reg[i] == Rg::D ? -ws.a[i] - ws.u[i] : 0.0;
    }
    const double d_piece = dual_point(G, ny, W, r, w_s, ws.u1.data(), ws.nu1.data(), ws, ws.bd);
    if (d_piece > best_d) {
      best_d = d_piece;
      std::copy(reg, reg + ny, ws.best_region.begin());
    }
    // ---- rows whose region does not hold (a basic variable negative, to round-off) ----
    int infeasible = 0;
    for (int i = 0; i < ny; ++i) {
      const double a = ws.a[i], t = ws.t[i], u = ws.u[i];
      const double tol = row_tol(r[i], a, t, u);
      double by = 0, bu = 0;
      basic_pair(reg[i], a, t, u, by, bu);
      infeasible += !(by >= -tol && bu >= -tol);
    }
    if (infeasible == 0) {
      finish(ny, ws, warm, y);
      res.solved = true;
      return res;
    }
    if (infeasible < best) {
      best = infeasible, since_best = 0;
    } else if (++since_best >= kStall) {
      break;
    }
    if (it == max_iter) break;
    // ---- move them ----
    // A T, F or Z row moves to the region its (a, t) point at (T if t > max(0, a), F if a > max(0, t),
    // else Z); a row that already swung between T and Z once goes to D instead (its KKT point is
    // y = 0 = t with 0 < u < -a, which neither side holds: left alone the two would alternate). A D
    // row flips the pair that turned negative (nu < 0: to T; u < 0: to Z; both: F).
    // Every such row moves at once (block pivoting); B4-like rows (normals under a rigid body)
    // settle in <= 25 pieces.
    int nd_next = nd;
    for (int i = 0; i < ny; ++i) {
      const double a = ws.a[i], t = ws.t[i], u = ws.u[i];
      const double tol = row_tol(r[i], a, t, u);
      double by = 0, bu = 0;
      basic_pair(reg[i], a, t, u, by, bu);
      if (by >= -tol && bu >= -tol) continue;
      const signed char old = reg[i];
      if (old == Rg::D) {
        reg[i] = static_cast<signed char>(old ^ ((by < -tol ? kY : 0) | (bu < -tol ? kU : 0)));
        --nd_next;
      } else {
        reg[i] = t > std::max(0.0, a) ? Rg::T : a > 0 ? Rg::F : Rg::Z;
        if ((old == Rg::T && reg[i] == Rg::Z) || (old == Rg::Z && reg[i] == Rg::T)) {
          if (ws.swung[size_t(i)] && nd_next < n) {
            reg[i] = Rg::D;
            ++nd_next;
          }
          ws.swung[size_t(i)] = 1;
        }
      }
    }
  }
  // ---- phase 2: finite, from phase 1's piece of the largest D ----
  if (res.iterations == 0) return res;
  if (best_d > -INFINITY) {
    std::copy(ws.best_region.begin(), ws.best_region.begin() + ny, reg);
    int nd = 0;
    if (solve_piece(Mt, G, ny, W, r, w_s, false, ws, nd) == Piece::Solved) row_values(G, ny, W, r, w_s, nd, ws);
  }
  if (!dual_active_set(Mt, G, ny, W, r, w_s, ws, res)) return res;
  finish(ny, ws, warm, y);
  res.solved = true;
  return res;
}

}  // namespace bigstep
