// Model C: two-stage convex inverse dynamics (spec inverse-dynamics-contact.md §6.1, §6.2).
// Stage I (reduced form, §6.1 [derived]), z = [f_N; f_F] >= 0 (5n):
//   minimize 1/2 z^T G^T G z + (G^T yk)^T z                (= 1/2 v+^T M v+ + const; c_C = J_c 𝒫 kappa)
//   (with a planned unactuated velocity IdProblem::vb_des: G^T (y0 - L^T vb_des) instead of G^T yk,
//    = 1/2 (v+ - v_d)^T M (v+ - v_d) + const [ours])
//   s.t.     -(G_N^T G) z <= N v* + phi/dt                  (non-penetration, no complementarity)
//            -mu_i f_N,i + sum_d f_F,(d,i) <= 0             (pyramid, finite mu_i; QP,inf: none, or mu = kIdQpMuInf)
// Stage II (§6.2): W = orthonormal basis of null(G) (= null(Q_C)); along W v+ and the Stage I
// objective do not change and dt tau(z0 + W w) = dt tau(z0) - J_{c,q}^T W w, so with K = J_{c,q}^T W / dt
//   minimize 1/2 |tau0 - K w|^2 + eps/2 |z0 + W w|^2,  eps = 1e-8 (1 + max diag K^T K)   (I8)
//   s.t.     z0 + W w >= 0, pyramid rows of z0 + W w
// w = 0 is feasible, so Stage II never fails for a solved Stage I (on a QP failure Stage I is kept).
#include "solvers/inverse_dynamics_convex.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace bigstep {

int id_nullspace(IdWorkspace& ws) {
  ws.QR.topLeftCorner(ws.rows, ws.nb()) = ws.G.leftCols(ws.rows).transpose();
  return id_nullspace_of(ws, ws.rows);
}

int id_nullspace_of(IdWorkspace& ws, int rows) {
  const int nb = ws.nb();
  auto A = ws.QR.topLeftCorner(rows, nb);
  double norm0 = 0;
  for (int j = 0; j < nb; ++j) norm0 = std::max(norm0, A.col(j).norm());
  // Householder QR with column pivoting; reflector k stored in A(k:, k) (unit vector)
  int rank = 0;
  const int kmax = std::min(rows, nb);
  for (int k = 0; k < kmax; ++k) {
    int jp = k;
    double best = -1;
    for (int j = k; j < nb; ++j) {
      const double s = A.col(j).tail(rows - k).norm();
      if (s > best) {
        best = s;
        jp = j;
      }
    }
    if (!(best > 1e-9 * norm0)) break;
    if (jp != k) A.col(k).swap(A.col(jp));
    auto x = A.col(k).tail(rows - k);
    const double alpha = x[0] >= 0 ? -best : best;
    x[0] -= alpha;  // v = x - alpha e1
    const double vn = x.norm();
    x /= vn;
    for (int j = k + 1; j < nb; ++j) {
      auto y = A.col(j).tail(rows - k);
      y -= 2 * x.dot(y) * x;
    }
    rank = k + 1;
  }
  // W = H_0 ... H_{r-1} [0; I]: the last rows - rank columns of the orthogonal factor
  const int d = rows - rank;
  auto W = ws.Wn.topLeftCorner(rows, d);
  W.setZero();
  for (int j = 0; j < d; ++j) W(rank + j, j) = 1;
  for (int k = rank - 1; k >= 0; --k) {
    auto v = A.col(k).tail(rows - k);
    for (int j = 0; j < d; ++j) {
      auto y = W.col(j).tail(rows - k);
      y -= 2 * v.dot(y) * v;
    }
  }
  return d;
}

namespace {

DenseQpRef qp_view(IdWorkspace& ws, int nx, int ni) {
  return DenseQpRef{ws.Hq.topLeftCorner(nx, nx), ws.cq.head(nx), ws.Eq.topLeftCorner(0, nx), ws.eq.head(0),
                    ws.Aq.topLeftCorner(ni, nx), ws.bq.head(ni), ws.lbq.head(nx), ws.ubq.head(nx), {}};
}

}  // namespace

void id_convex(const IdProblem& p, IdWorkspace& ws, IdResult& r, bool bounded, bool stage2) {
  if (!ws.begin(p, r)) return;
  r.n_support = 0;
  ws.contact_rows(p, true);
  const int n = ws.n, nz = 5 * n, nq = ws.nq();
  auto z = ws.z.head(nz);
  z.setZero();
  ws.vq = p.qdot_des;
  if (n == 0) {
    ws.finish(p, z, ws.vq, r);
    return;
  }
  // ---- Stage I ----
  auto Gc = ws.G.leftCols(nz);
  // QP,inf: no pyramid rows (the paper), or rows at mu = kIdQpMuInf with p.friction_needs_load
  const double mu_unbounded = p.friction_needs_load ? (p.mu_inf > 0 ? p.mu_inf : kIdQpMuInf)
                                                   : std::numeric_limits<double>::infinity();
  auto mu_of = [&](int i) { return bounded ? p.mu[i] : mu_unbounded; };
  int n_pyr = 0;
  for (int i = 0; i < n; ++i) n_pyr += std::isfinite(mu_of(i)) ? 1 : 0;
  // id_impulse_bound's factor on the normal impulses: 1 / min(1, mu_min) (the squeeze friction needs)
  double mu_min = 1;
  for (int i = 0; i < n; ++i) mu_min = std::min(mu_min, mu_of(i));
  const double squeeze = 1 / std::max(mu_min, 1e-300);
  // Stage I QP; bound > 0 adds the rows sum f_N <= squeeze bound, sum f_F <= bound
  // (id_impulse_bound, ID_IMPULSE_BOUND)
  auto stage1 = [&](double bound) -> QpStatus {
    const int ni = n + n_pyr + (bound > 0 ? 2 : 0);
    auto Hh = ws.Hq.topLeftCorner(nz, nz);
    Hh.noalias() = Gc.transpose() * Gc;
    if (p.vb_des.empty()) {
      ws.cq.head(nz).noalias() = Gc.transpose() * ws.yk;
    } else {
      // target of the planned unactuated velocity (IdProblem::vb_des): G^T (y0 - L^T vb_des)
      const int nb = ws.nb();
      for (int i = 0; i < nb; ++i) {
        double s = 0;
        for (int j = i; j < nb; ++j) s += ws.L(j, i) * p.vb_des[size_t(j)];
        ws.yd[i] = ws.y0[i] - s;
      }
      ws.cq.head(nz).noalias() = Gc.transpose() * ws.yd;
    }
    auto A = ws.Aq.topLeftCorner(ni, nz);
    A.topRows(n).noalias() = ws.G.leftCols(n).transpose() * Gc;
    A.topRows(n) *= -1;  // (no temporary: a negated product would allocate one)
    for (int i = 0; i < n; ++i) ws.bq[i] = ws.jv[i] + p.phi[i] / p.dt;
    int row = n;
    for (int i = 0; i < n; ++i) {
      if (!std::isfinite(mu_of(i))) continue;
      A.row(row).setZero();
      A(row, i) = -mu_of(i);
      for (int d = 1; d <= 4; ++d) A(row, d * n + i) = 1;
      ws.bq[row++] = 0;
    }
    if (bound > 0) {
      A.row(row).setZero();
      A.row(row).head(n).setOnes();
      ws.bq[row++] = squeeze * bound;
      A.row(row).setZero();
      A.row(row).tail(4 * n).setOnes();
      ws.bq[row++] = bound;
    }
    ws.lbq.head(nz).setZero();
    ws.ubq.head(nz).setConstant(std::numeric_limits<double>::infinity());
    const QpStatus st = ws.qp.solve(qp_view(ws, nz, ni), ws.qres, nullptr, 5000);
    r.iterations += ws.qres.iterations;
    return st;
  };
  // ---- Stage I ----
  r.iterations = 0;
  QpStatus st = stage1(0);
  // Impulses beyond the physical bound (id_impulse_bound) [ours, I14]: Stage I's Hessian G^T G has
  // rank <= nb, so impulses along null(G) (squeezes, opposite feet pushing apart) cost nothing and
  // the QP may return them at any size; closed loop (the arm holding a free box at mu = 1, no plan
  // for the box) that fed 6e8 N m back into the simulator. Re-solve with the bound as rows;
  // if that is infeasible (the plan needs more), the slack repair below. With friction tied to load
  // only (IdProblem::friction_needs_load, the controllers): QP,inf without it is the paper's
  // unbounded friction, left as stated.
  const double bound = st == QpStatus::Solved && p.friction_needs_load ? id_impulse_bound(p, ws) : 0;
  if (bound > 0 && id_exceeds_impulse_bound(ws, ws.qres.x.head(nz), squeeze * bound, bound)) {
    r.status |= ID_IMPULSE_BOUND;
    st = stage1(bound);
  }
  if (st != QpStatus::Solved) {
    r.status |= ID_INFEASIBLE;
    if (!ws.repair(p, true, bounded, r)) {
      ws.fail(p, r);
    }
    return;
  }
  z = ws.qres.x.head(nz);
  ws.finish(p, z, ws.vq, r);
  if (!stage2) return;
  // ---- Stage II: minimum-norm torques along null(G) ----
  const int d = id_nullspace(ws);
  if (d == 0) return;
  auto W = ws.Wn.topLeftCorner(nz, d);
  auto Kt = ws.Kt.topLeftCorner(nq, d);
  for (int j = 0; j < nq; ++j) {
    const int col = ws.actuated()[size_t(j)];
    Kt.row(j).noalias() = ws.Jc.col(col).head(nz).transpose() * W;
  }
  Kt /= p.dt;
  auto Hh = ws.Hq.topLeftCorner(d, d);
  Hh.noalias() = Kt.transpose() * Kt;
  const double eps = 1e-8 * (1 + Hh.diagonal().maxCoeff());
  Hh.diagonal().array() += eps;
  auto c = ws.cq.head(d);
  c.noalias() = Kt.transpose() * r.tau;
  c *= -1;
  c.noalias() += eps * (W.transpose() * z);
  const int ni2 = nz + n_pyr;
  auto A = ws.Aq.topLeftCorner(ni2, d);
  A.topRows(nz) = -W;
  ws.bq.head(nz) = z;
  int row = nz;
  for (int i = 0; i < n; ++i) {
    if (!std::isfinite(mu_of(i))) continue;
    A.row(row) = -mu_of(i) * W.row(i);
    double b = mu_of(i) * z[i];
    for (int dd = 1; dd <= 4; ++dd) {
      A.row(row) += W.row(dd * n + i);
      b -= z[dd * n + i];
    }
    ws.bq[row++] = b;
  }
  ws.lbq.head(d).setConstant(-std::numeric_limits<double>::infinity());
  ws.ubq.head(d).setConstant(std::numeric_limits<double>::infinity());
  const QpStatus st2 = ws.qp.solve(qp_view(ws, d, ni2), ws.qres, nullptr, 5000);
  r.iterations += ws.qres.iterations;
  if (st2 != QpStatus::Solved) return;  // Stage I result stands
  auto zz = ws.hv.head(nz);
  zz = z;
  zz.noalias() += W * ws.qres.x.head(d);
  zz = zz.cwiseMax(0.0);  // round-off of the nullspace step
  // (v+ is Stage I's, but the squeeze along null(G) could exceed the bound: Stage I stands then)
  if (bound > 0 && id_exceeds_impulse_bound(ws, zz, squeeze * bound, bound)) {
    r.status |= ID_IMPULSE_BOUND;
    return;
  }
  z = zz;
  ws.finish(p, z, ws.vq, r);
}

}  // namespace bigstep
