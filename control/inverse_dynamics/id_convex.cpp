// Model C: two-stage convex inverse dynamics (docs/methods/inverse_dynamics.md §6.1, §6.2).
// Stage I (reduced form, §6.1 [derived]), z = [f_N; f_F] >= 0 (5n):
//   minimize 1/2 z^T G^T G z + c^T z
//     c = G^T a        the rest target (IdStage1::Rest, ID_{QP,mu} / ID_{QP,inf}; derived below)
//     c = G^T yk       the paper's c_C = J_c 𝒫 kappa (IdStage1::Momentum: models A, B's fallbacks)
//     c = G^T (y0 - L^T vb_des)   with a planned unactuated velocity IdProblem::vb_des
//                      (= 1/2 (v+ - v_d)^T M (v+ - v_d) + const [ours])
//   s.t.     -(G_N^T G) z <= N v* + phi/dt                  (non-penetration, no complementarity)
//            -mu_i f_N,i + sum_d f_F,(d,i) <= 0             (pyramid, finite mu_i; QP,inf: none, or mu = kIdQpMuInf)
//            z_i = 0 for the contacts the plan lifts off (Rest only, below)
// Stage II (§6.2): W = orthonormal basis of null(G) (= null(Q_C)) over the loadable contacts; along W
// v+ and the Stage I objective do not change (c lies in range(G^T)) and
// dt tau(z0 + W w) = dt tau(z0) - J_{c,q}^T W w, so with K = J_{c,q}^T W / dt
//   minimize 1/2 |tau0 - K w|^2 + eps/2 |z0 + W w|^2,  eps = 1e-8 (1 + max diag K^T K)   (I8)
//   s.t.     z0 + W w >= 0, pyramid rows of z0 + W w
// w = 0 is feasible, so Stage II never fails for a solved Stage I (on a QP failure Stage I is kept).
//
// What model C must predict for a stance foot when the joints move (departs from §6.1)
// [derived]. Model C is the complementarity-free impact model: in the forward problem (tau given)
// the impulses dissipate maximally, min_z 1/2 v+^T M v+ with v+ = M^-1 (kappa + dt P^T tau + J_c^T
// z), whose gradient in z is J_c v+: an interior friction impulse means a sticking contact
// (S_i v+ = T_i v+ = 0), f_N,i > 0 means N_i v+ = 0 unless the contact slides on the cone. The paper's
// reduced Stage I minimizes the same 1/2 v+^T M v+ but with tau eliminated (v+ = v* + 𝒫 J_c^T z,
// P v+ = qdot_des): its gradient is J_c 𝒫 M v+ = J_{c,b} (v+_b + M_bb^-1 M_bq qdot_des), the contact
// velocity of the base's momentum coordinate, not J_c v+. The actuators are enlisted in the
// dissipation, and whenever the joints move the stance feet are predicted to slip at
// (S_{i,q} - S_{i,b} M_bb^-1 M_bq) qdot_des (oracle 1's gradient difference J_c M^-1 P^T Y^-1
// qdot_des): the torques assume sliding feet and the trotting spider trod in place (|distance| <=
// 0.11 m of 0.95 m at every friction and gain, bench/experiments/notes/inverse_dynamics.md "Oracle 12, per terrain"). The
// impulses the ID must predict are those the forward model produces with the returned tau: z
// maximally dissipative for that tau (a fixed point, not a joint minimization over z and tau).
// Taking jv = J_c v* as the linear term gives exactly that gradient (G^T G z + jv = J_c v+), but
// jv = G^T y0 + J_{c,q} qdot_des has a part outside range(G^T) wherever the plan moves contacts
// against each other (the joint-space trot; PID noise on any plan): the power of an internal
// force on the planned joint motion, which costs no kinetic energy, so the QP buys it at the cone's
// edge (mu = 100: 1e4-1e5 N of squeeze between stance feet, and the mu |v_t| separation of sliding
// contacts lifts the robot). Tried in closed loop: every QP run fell. Hence the rest target: fit the
// base velocity at which the contacts C are at rest,
//   a = argmin_a sum_{i in C} |G_i^T a - J_i v*|^2 + eps |a|^2   (N, S, T rows; normal equations),
// i.e. v_c = L^-T (y0 - a) minimizes the contacts' velocities |J_C [v_c; qdot_des]|, and take c =
// G^T a, the part of jv that base motion can produce: Stage I becomes the kinetic energy of the base
// relative to v_c, 1/2 (v+_b - v_c)^T M_bb (v+_b - v_c) (the vb_des form with v_c as the plan). For a
// plan that keeps C at rest (J_C [v_c; qdot_des] = 0) this is jv on C, so Stage I's KKT conditions
// are the forward model C's at the returned tau (the non-penetration rows, N 𝒫 J_c^T here and
// N M^-1 J_c^T there, are redundant for phi >= 0: stationarity in f_N,i gives N_i v+ >= 0): model C
// is then a right inverse of its forward model (oracle 1, tests/control/inverse_dynamics/id_problem_test.cpp),
// stance feet stick where the cone allows and slide on its edge where it does not (mu = 0.1). Where
// the plan is incompatible, the incompatible part is dropped (least-squares rest) instead of being
// paid for with squeezes. Directions no contact of C constrains (the roll about a two-foot
// diagonal) keep a = 0 there: the contact-free base velocity. C: the contacts that touch (phi <=
// kIdTouching) and approach without impulse (J_i v* + phi_i/dt <= 0 in the normal row); a contact
// the plan lifts off by itself carries no impulse (the forward model C may load a separating contact
// that slides, its mu |v_t| separation artifact; complementarity, and the paper's planner, do not);
// one approaching but not yet touching is loadable but not fitted (a swing foot 0.7 mm up at 0.7 m/s
// pulled the fitted target and threw the robot). With the joints at rest (qdot_des = 0: the static
// stance of oracles 3, 5) every form gives the same v+ up to the target.
#include "control/inverse_dynamics/id_convex.h"

#include "numerics/dense_small.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace bigstep {

namespace {
// a contact farther than this [m] is approaching, not touching: not part of the rest target
constexpr double kIdTouching = 1e-5;
}  // namespace

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

void id_convex(const IdProblem& p, IdWorkspace& ws, IdResult& r, bool bounded, bool stage2, IdStage1 target) {
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
  const bool rest = target == IdStage1::Rest && p.vb_des.empty();
  // Stage I QP; bound > 0 adds the rows sum f_N <= squeeze bound, sum f_F <= bound
  // (id_impulse_bound, ID_IMPULSE_BOUND)
  auto stage1 = [&](double bound) -> QpStatus {
    const int ni = n + n_pyr + (bound > 0 ? 2 : 0);
    auto Hh = ws.Hq.topLeftCorner(nz, nz);
    Hh.noalias() = Gc.transpose() * Gc;
    if (rest) {
      // G^T a, a the rest target of the contacts at rest (ws.flag; see the head comment)
      ws.cq.head(nz).noalias() = Gc.transpose() * ws.a;
    } else if (p.vb_des.empty()) {
      ws.cq.head(nz).noalias() = Gc.transpose() * ws.yk;  // the paper's c_C = J_c 𝒫 kappa
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
    // a contact the plan lifts off (not at rest) carries no impulse
    for (int i = 0; i < n; ++i)
      if (!ws.flag[size_t(i)])
        for (int d = 0; d <= 4; ++d) ws.ubq[d * n + i] = 0;
    const QpStatus st = ws.qp.solve(qp_view(ws, nz, ni), ws.qres, nullptr, 5000);
    r.iterations += ws.qres.iterations;
    return st;
  };
  // rest target a = argmin_a sum_{i in C} |G_i^T a - J_i v*|^2 + eps |a|^2 over the N, S, T rows
  // of the contacts i in C (ws.flag): normal equations (G_C G_C^T + eps I) a = G_C jv_C
  const int nb = ws.nb();
  auto rest_target = [&]() {
    if (nb == 0) return;  // no unactuated block (I14's fully actuated robot): no target to fit
    auto Kc = ws.K.topLeftCorner(nb, nb);
    Kc.setZero();
    ws.a.setZero();
    for (int i = 0; i < n; ++i) {
      if (ws.flag[size_t(i)] != 1) continue;
      for (const int c : {i, n + i, 3 * n + i}) {
        for (int q = 0; q < nb; ++q) {
          ws.a[q] += ws.G(q, c) * ws.jv[c];
          for (int k = q; k < nb; ++k) Kc(k, q) += ws.G(k, c) * ws.G(q, c);
        }
      }
    }
    const double eps = 1e-9 * (1 + Kc.diagonal().maxCoeff());
    Kc.diagonal().array() += eps;
    cholesky_inplace(Kc, nb);  // SPD by eps
    forward_subst(Kc, ws.a, nb);
    backward_subst_transposed(Kc, ws.a, nb);
  };
  // ---- Stage I ----
  r.iterations = 0;
  // the contacts at rest C (flag 1): those that touch (phi <= kIdTouching) and would not separate
  // without impulse (J_i v* + phi_i/dt <= 0 in the normal row); flag 2: approaching, not yet
  // touching (constrained and loadable, not fitted); flag 0: the plan lifts them off by itself, they
  // carry no impulse. Without the rest target every contact is loadable (flag 1).
  for (int i = 0; i < n; ++i) {
    const bool lifts = ws.jv[i] + p.phi[i] / p.dt > 0;
    ws.flag[size_t(i)] = !rest ? 1 : lifts ? 0 : p.phi[i] > kIdTouching ? 2 : 1;
  }
  if (rest) rest_target();
  QpStatus st = stage1(0);
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
  // over the impulses of the contacts at rest only (the others stay at zero): the nullspace of G's
  // columns of C (rows in increasing order into ws.bvar), scattered back to all 5n rows
  int rc = 0;
  for (int row = 0; row < nz; ++row) {
    if (!ws.flag[size_t(row % n)]) continue;
    ws.QR.row(rc).head(ws.nb()) = ws.G.col(row).transpose();
    ws.bvar[size_t(rc++)] = row;
  }
  const int d = id_nullspace_of(ws, rc);
  if (d == 0) return;
  for (int k = rc - 1; k >= 0; --k) {  // bvar[k] >= k: in place from the last row
    const int row = ws.bvar[size_t(k)];
    if (row != k) ws.Wn.row(row).head(d) = ws.Wn.row(k).head(d);
  }
  for (int row = 0; row < nz; ++row)
    if (!ws.flag[size_t(row % n)]) ws.Wn.row(row).head(d).setZero();
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
