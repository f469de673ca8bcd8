// The §6 QP of the compliant solver in 2n unknowns (spec drumwright-constraint-solver.md §6; the
// derivation is in compliant_reduced_qp.h). cpu-only: the compliant solver has no CUDA mirror yet.
#include "solvers/compliant_reduced_qp.h"

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
      X(MatX::Zero(2 * n, std::max(1, n))),
      Qd(MatX::Zero(std::max(1, n), std::max(1, n))),
      Sd(MatX::Identity(std::max(1, n), std::max(1, n))),
      slu(std::max(1, n)),
      ud(VecX::Zero(std::max(1, n))),
      rd(VecX::Zero(std::max(1, n))),
      dset(size_t(std::max(1, n)), 0),
      a(VecX::Zero(std::max(1, ny_max))),
      t(VecX::Zero(std::max(1, ny_max))),
      u(VecX::Zero(std::max(1, ny_max))),
      region(size_t(std::max(1, ny_max)), Z),
      swung(size_t(std::max(1, ny_max)), 0) {}

ReducedQpResult reduced_unilateral_qp(const MatX& Mt, const MatX& G, int ny, const double* W, const double* r,
                                      std::vector<int>& warm, int max_iter, ReducedQpWorkspace& ws, double* y) {
  using Rg = ReducedQpWorkspace;
  constexpr signed char kY = 1, kU = 2;  // region bits: y_i basic, u_i basic
  ReducedQpResult res;
  const int n = int(Mt.rows());
  signed char* reg = ws.region.data();
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
  auto p = ws.s.head(n);
  auto xi = ws.s.tail(n);  // scaled: xi = w_s * this
  std::fill(ws.swung.begin(), ws.swung.begin() + ny, 0);
  for (int it = 1; it <= max_iter; ++it) {
    res.iterations = it;
    // ---- the linear piece of the current regions ----
    ws.P = Mt;
    ws.C.setZero();
    ws.E.setZero();
    ws.b.setZero();
    int nd = 0;
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
      ws.ud.noalias() = ws.slu.solve(ws.rd);
      if (!ws.ud.head(nd).allFinite()) {
        // why: u_D reaches p only through the F rows (y_F = G_F xi), so D rows without F rows that
        // can carry their load have no solution in this piece; they go back to Z (and may return)
        for (int k = 0; k < nd; ++k) reg[ws.dset[size_t(k)]] = Rg::Z;
        continue;
      }
      ws.s.noalias() -= ws.X.leftCols(nd) * ws.ud.head(nd);
    }
    if (!ws.s.allFinite()) return res;
    // ---- a_i = G_i xi, t_i = r_i - W_i G_i p, u_i ----
    for (int i = 0; i < ny; ++i) {
      const auto g = G.row(i);
      ws.a[i] = w_s * g.dot(xi);
      ws.t[i] = r[i] - W[i] * g.dot(p);
      ws.u[i] = reg[i] == Rg::T ? ws.t[i] - ws.a[i] : 0.0;
    }
    for (int k = 0; k < nd; ++k) ws.u[ws.dset[size_t(k)]] = ws.ud[k];
    // ---- rows whose region does not hold (a basic variable negative, to round-off) move ----
    // A T, F or Z row moves to the region its (a, t) point at (T if t > max(0, a), F if a > max(0, t),
    // else Z); a row that already swung between T and Z once goes to D instead (its KKT point is
    // y = 0 = t with 0 < u < -a, which neither side holds: left alone the two would alternate). A D
    // row flips the pair that turned negative (nu < 0: to T; u < 0: to Z; both: F).
    // Every such row moves at once (block pivoting). It is not guaranteed to terminate: on random
    // rows (general directions, W up to 1e3) ~8 % of instances wander past 100 pieces, hence the
    // caller's fallback; B4-like rows (normals under a rigid body) settle in <= 25. (Murty's one-row
    // rule after stalls, tried, solved fewer.)
    // why the tolerance is per row and tight: a row's multiplier u_i ~ y_i / (W A) is tiny beside
    // r_i ~ W A y_i (stiff rows), so a tolerance on the scale of r would accept wrong signs of u;
    // 1e-13 of the row's own terms is ~500 eps (a sign lost to round-off costs a piece, not accuracy)
    int infeasible = 0, nd_next = nd;
    for (int i = 0; i < ny; ++i) {
      const double a = ws.a[i], t = ws.t[i], u = ws.u[i];
      const double tol = 1e-13 * (std::abs(r[i]) + std::abs(r[i] - t) + std::abs(a) + std::abs(u)) + 1e-300;
      double by = 0, bu = 0;  // the basic variables of the two pairs
      switch (reg[i]) {
        case Rg::T: by = t, bu = u; break;           // y = t, u = t - a
        case Rg::F: by = a, bu = a - t; break;       // y = a, s = y - t
        case Rg::Z: by = -a, bu = -t; break;         // nu = -a, s = -t
        default: by = -a - u, bu = u; break;         // D: nu = -a - u, u
      }
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
      ++infeasible;
    }
    if (infeasible) continue;
    // ---- KKT hold: y, and the active set in the dense QP's canonical order ----
    for (int i = 0; i < ny; ++i)
      y[i] = reg[i] == Rg::T ? std::max(0.0, ws.t[i]) : reg[i] == Rg::F ? std::max(0.0, ws.a[i]) : 0.0;
    warm.clear();
    for (int i = 0; i < ny; ++i)
      if (reg[i] & kU) warm.push_back(i);
    for (int i = 0; i < ny; ++i)
      if (!(reg[i] & kY)) warm.push_back(ny + i);
    res.solved = true;
    return res;
  }
  return res;
}

}  // namespace bigstep
