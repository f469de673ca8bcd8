// Inverse dynamics with rigid contact (solvers/inverse_dynamics*.h) against the test oracles of
// docs/methods/inverse_dynamics.md §10: right inverse by a forward solve (1), dynamics residual and
// model constraints (2), static stance carries the weight (3), solvability on Baraff-form instances
// and a flagged repair of an incompatible plan (5, I14), warm-start continuity (6), Stage II (7),
// bounded pivoting support with many contacts (9's reduction), no-slip beyond mu = 0.1 (10),
// copositivity (13). The robot is the spider quadruped (configs/quadruped_spider.yaml, 42 kg,
// floating base + 12 joints, one point contact per foot). Forward oracles are written in the full
// generalized coordinates (M^-1, J_c, a dense QP / Lemke), independent of the solvers' block
// elimination.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "io/scene.h"
#include "control/inverse_dynamics/id_problem.h"
#include "control/inverse_dynamics/id_convex.h"
#include "control/inverse_dynamics/id_coulomb.h"
#include "control/inverse_dynamics/id_nslip.h"
#include "tests/support/malloc_guard.h"
#include "tests/support/tol.h"

using namespace bigstep;

namespace {

constexpr double kDt = 1e-3;
constexpr IdKind kKinds[] = {IdKind::LcpInf, IdKind::LcpMu, IdKind::QpMu, IdKind::QpInf};

const Scene& spider() {
  static const Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/quadruped_spider.yaml");
  return sc;
}

// the problem of the spider at (theta, v) with every foot within 5 cm as a contact
struct Setup {
  const Model& m = spider().model;
  IdTerms terms{m};
  std::vector<int> act = id_actuated_dofs(m);
  IdWorkspace ws{m.n_q, act, m.max_contacts};
  IdResult res;
  VecX theta, v, qdot;
  explicit Setup(double mu = 0.7) : theta(spider().theta0), v(VecX::Zero(m.n_q)), qdot(VecX::Zero(12)) {
    ws.init_result(res);
    update(mu);
  }
  void update(double mu) { terms.update(m, theta, v, kDt, mu, 0.05); }
  IdProblem problem() const { return terms.problem(qdot, kDt); }
  // qdot_des = P v + dt qdd_des
  void set_qdd(const VecX& qdd) {
    for (int j = 0; j < 12; ++j) qdot[j] = v[act[size_t(j)]] + kDt * qdd[j];
  }
};

// J_c^T z of a result: N^T f_N + S^T f_S + T^T f_T
VecX contact_impulse(const IdProblem& p, const IdResult& r) {
  const int n = r.n;
  return p.N.transpose() * r.f_n.head(n) + p.S.transpose() * r.f_s.head(n) + p.T.transpose() * r.f_t.head(n);
}

// P^T tau
VecX actuation(const Setup& s, const VecX& tau) {
  VecX g = VecX::Zero(s.m.n_q);
  for (size_t j = 0; j < s.act.size(); ++j) g[s.act[j]] = tau[Eigen::Index(j)];
  return g;
}

// oracle 2: |M v+ - kappa - J_c^T z - dt P^T tau| relative to |kappa| + |J_c^T z|, P v+ = qdot_des
void check_dynamics(const Setup& s, const IdProblem& p, const IdResult& r) {
  const VecX g = contact_impulse(p, r);
  const VecX res = p.M * r.v_plus - p.kappa - g - kDt * actuation(s, r.tau);
  const double scale = 1 + p.kappa.norm() + g.norm();
  CHECK(res.norm() <= test::tol(1e-10) * scale);
  for (size_t j = 0; j < s.act.size(); ++j)
    CHECK(r.v_plus[s.act[j]] == Approx(p.qdot_des[Eigen::Index(j)]).margin(1e-12));
}

// model constraints: f_N >= 0, non-penetration, complementarity (A, B), pyramid (B, QP,mu)
void check_constraints(IdKind k, const IdProblem& p, const IdResult& r) {
  const double fscale = 1e-9 * (1 + r.f_n.head(r.n).cwiseAbs().maxCoeff());
  for (int i = 0; i < r.n; ++i) {
    const double wn = p.N.row(i).dot(r.v_plus) + p.phi[i] / kDt;
    CHECK(r.f_n[i] >= -fscale);
    CHECK(wn >= -1e-8);
    if (k == IdKind::LcpInf || k == IdKind::LcpMu) CHECK(std::abs(r.f_n[i] * wn) <= 1e-8 * (1 + r.f_n[i]));
    if (k == IdKind::LcpMu || k == IdKind::QpMu)
      CHECK(std::abs(r.f_s[i]) + std::abs(r.f_t[i]) <= p.mu[i] * r.f_n[i] + fscale);
    if (k == IdKind::LcpInf) {  // no slip
      CHECK(std::abs(p.S.row(i).dot(r.v_plus)) <= 1e-8);
      CHECK(std::abs(p.T.row(i).dot(r.v_plus)) <= 1e-8);
    }
  }
}

// per-leg joint velocities that keep every foot fixed while the base moves with vb (6): for each
// foot J_q x = -J_b vb on the 3 joints of its leg (rows N, S, T of its contact)
VecX feet_fixed_joint_velocity(const Setup& s, const VecX& vb) {
  VecX qd = VecX::Zero(12);
  for (int i = 0; i < 4; ++i) {
    MatX J(3, s.m.n_q);
    J << s.terms.N.row(i), s.terms.S.row(i), s.terms.T.row(i);
    std::vector<int> cols;
    for (int j = 0; j < 12; ++j)
      if (J.col(s.act[size_t(j)]).norm() > 1e-12) cols.push_back(j);
    REQUIRE(cols.size() == 3);
    Mat3 Jq;
    for (int c = 0; c < 3; ++c) Jq.col(c) = J.col(s.act[size_t(cols[size_t(c)])]);
    const Vec3 x = Jq.lu().solve(-(J.leftCols(6) * vb));
    for (int c = 0; c < 3; ++c) qd[cols[size_t(c)]] = x[c];
  }
  return qd;
}

// a moving instance of a planned motion: perturbed joints (feet touching: phi := 0), random state
// velocity, and a plan qdot_des that moves the base with a random velocity (scale vplan) while the
// feet stay put (compatible with no-slip, so all four models have an exact answer)
void randomize(Setup& s, std::mt19937& rng, double vscale, double vplan) {
  std::uniform_real_distribution<double> u(-1, 1);
  s.theta = spider().theta0;
  for (int k = 6; k < s.m.n_q; ++k) s.theta[k] += 0.05 * u(rng);
  for (int k = 0; k < s.m.n_q; ++k) s.v[k] = vscale * u(rng);
  s.update(0.7);
  s.terms.phi.setZero();
  VecX vb(6);
  for (int k = 0; k < 6; ++k) vb[k] = vplan * u(rng);
  s.qdot = feet_fixed_joint_velocity(s, vb);
}

}  // namespace

TEST_CASE("inverse dynamics: static stance carries the weight with every model (oracle 3)", "[id]") {
  for (IdKind k : kKinds) {
    Setup s;
    REQUIRE(s.terms.n == 4);
    // theta0 leaves the feet within 20 um of the floor; touching (phi = 0) is the static stance
    // (with phi > 0 the LCP models let the robot drop up to phi / dt in the step, as they should)
    CHECK(s.terms.phi.head(4).cwiseAbs().maxCoeff() <= 1e-4);
    s.terms.phi.setZero();
    const IdProblem p = s.problem();
    id_solve(k, p, s.ws, s.res);
    INFO(id_kind_name(k) << " status " << s.res.status);
    CHECK((s.res.status & (ID_INFEASIBLE | ID_FAILED | ID_NONFINITE)) == 0);
    // the feet sit on the ground (phi ~ 0) and the normals are vertical: sum f_N / dt = m g
    CHECK(id_normal_force(s.res, kDt) == Approx(s.m.weight()).epsilon(0.01));
    check_dynamics(s, p, s.res);
    check_constraints(k, p, s.res);
  }
}

TEST_CASE("inverse dynamics: dynamics residual and model constraints on moving instances (oracle 2)", "[id]") {
  std::mt19937 rng(16);
  for (int trial = 0; trial < 10; ++trial) {
    for (IdKind k : kKinds) {
      Setup s;
      randomize(s, rng, 0.05, 0.05);
      const IdProblem p = s.problem();
      id_solve(k, p, s.ws, s.res);
      INFO(id_kind_name(k) << " trial " << trial << " status " << s.res.status);
      REQUIRE((s.res.status & (ID_FAILED | ID_NONFINITE)) == 0);
      check_dynamics(s, p, s.res);
      if (!(s.res.status & ID_INFEASIBLE)) check_constraints(k, p, s.res);
    }
  }
}

TEST_CASE("inverse dynamics: a forward step with the returned torques reproduces the plan (oracle 1)", "[id]") {
  // Model A: the forward no-slip model with tau given is the strictly convex QP
  //   min 1/2 v^T M v - (kappa + dt P^T tau)^T v  s.t.  S v = T v = 0, N v >= -phi/dt,
  // whose v+ is unique; solved in full coordinates by the dense QP, P v+ must equal qdot_des.
  // Model B: the forward Stewart-Trinkle LCP with tau given (full-coordinate Delassus M^-1),
  // evaluated at the inverse solution (plug-in), must be complementary and feasible.
  std::mt19937 rng(7);
  for (int trial = 0; trial < 5; ++trial) {
    Setup s;
    randomize(s, rng, 0.05, 0.05);
    const IdProblem p = s.problem();
    const int n = s.terms.n, D = s.m.n_q;
    {
      id_solve(IdKind::LcpInf, p, s.ws, s.res);
      REQUIRE((s.res.status & (ID_INFEASIBLE | ID_FAILED | ID_SLIP)) == 0);
      DenseQp qp;
      qp.Q = p.M;
      qp.c = -(p.kappa + kDt * actuation(s, s.res.tau));
      qp.E.resize(2 * n, D);
      qp.E << p.S, p.T;
      qp.e = VecX::Zero(2 * n);
      qp.A = -p.N;
      qp.b = p.phi / kDt;
      QpWorkspace ws(D, 3 * n);
      QpResult out;
      REQUIRE(ws.solve(qp, out) == QpStatus::Solved);
      for (size_t j = 0; j < s.act.size(); ++j)
        CHECK(out.x[s.act[j]] == Approx(p.qdot_des[Eigen::Index(j)]).margin(1e-9));
      CHECK((out.x - s.res.v_plus).norm() <= 1e-9 * (1 + s.res.v_plus.norm()));
    }
    {
      id_solve(IdKind::LcpMu, p, s.ws, s.res);
      REQUIRE((s.res.status & (ID_INFEASIBLE | ID_FAILED)) == 0);
      // forward: v+ = M^-1 (kappa + dt P^T tau + J_c^T z), z_B = [f_N; f_F; lambda] from the solve
      MatX Jc(5 * n, D);
      Jc << p.N, p.S, -p.S, p.T, -p.T;
      const VecX zB = s.ws.z.head(6 * n);
      const VecX vplus = p.M.ldlt().solve(p.kappa + kDt * actuation(s, s.res.tau) + Jc.transpose() * zB.head(5 * n));
      CHECK((vplus - s.res.v_plus).norm() <= 1e-9 * (1 + vplus.norm()));
      VecX w(6 * n);
      w.head(5 * n) = Jc * vplus;
      w.head(n) += p.phi / kDt;
      for (int i = 0; i < n; ++i) {
        for (int d = 1; d <= 4; ++d) w[d * n + i] += zB[5 * n + i];
        w[5 * n + i] = p.mu[i] * zB[i] - (zB[n + i] + zB[2 * n + i] + zB[3 * n + i] + zB[4 * n + i]);
      }
      const double zs = 1 + zB.cwiseAbs().maxCoeff();
      CHECK(zB.minCoeff() >= -1e-9 * zs);
      CHECK(w.minCoeff() >= -1e-7);
      CHECK(std::abs(zB.dot(w)) <= 1e-7 * zs);
      for (size_t j = 0; j < s.act.size(); ++j) CHECK(vplus[s.act[j]] == Approx(p.qdot_des[Eigen::Index(j)]).margin(1e-9));
    }
  }
}

TEST_CASE("inverse dynamics: Stage I is the maximal-dissipation velocity of the full-coordinate QP", "[id]") {
  // Model C oracle (§10.1: test Stage I's optimality): the full-coordinate problem
  //   min 1/2 v^T M v  s.t. M v = kappa + J_c^T z + P^T tau_hat, P v = qdot_des, N v >= -phi/dt,
  //   z >= 0, mu f_N - sum f_F >= 0
  // over (v, tau_hat, z) has a unique v+; the reduced Stage I must find it.
  std::mt19937 rng(3);
  for (int trial = 0; trial < 3; ++trial) {
    Setup s;
    randomize(s, rng, 0.05, 0.05);
    const IdProblem p = s.problem();
    const int n = s.terms.n, D = s.m.n_q, nq = 12, nx = D + nq + 5 * n;
    id_convex(p, s.ws, s.res, true, false);
    REQUIRE((s.res.status & (ID_INFEASIBLE | ID_FAILED)) == 0);
    MatX Jc(5 * n, D);
    Jc << p.N, p.S, -p.S, p.T, -p.T;
    DenseQp qp;
    qp.Q = MatX::Zero(nx, nx);
    qp.Q.topLeftCorner(D, D) = p.M;
    qp.c = VecX::Zero(nx);
    qp.E = MatX::Zero(D + nq, nx);
    qp.e = VecX::Zero(D + nq);
    qp.E.topLeftCorner(D, D) = p.M;
    for (int j = 0; j < nq; ++j) qp.E(s.act[size_t(j)], D + j) = -1;
    qp.E.block(0, D + nq, D, 5 * n) = -Jc.transpose();
    qp.e.head(D) = p.kappa;
    for (int j = 0; j < nq; ++j) qp.E(D + j, s.act[size_t(j)]) = 1;
    qp.e.tail(nq) = p.qdot_des;
    qp.A = MatX::Zero(2 * n, nx);
    qp.b = VecX::Zero(2 * n);
    qp.A.topLeftCorner(n, D) = -p.N;
    qp.b.head(n) = p.phi / kDt;
    for (int i = 0; i < n; ++i) {
      qp.A(n + i, D + nq + i) = -p.mu[i];
      for (int d = 1; d <= 4; ++d) qp.A(n + i, D + nq + d * n + i) = 1;
    }
    qp.lb = VecX::Constant(nx, -INFINITY);
    qp.ub = VecX::Constant(nx, INFINITY);
    qp.lb.tail(5 * n).setZero();
    QpWorkspace ws(nx, D + nq + 2 * n + 5 * n);
    QpResult out;
    REQUIRE(ws.solve(qp, out, nullptr, 20000) == QpStatus::Solved);
    CHECK((out.x.head(D) - s.res.v_plus).norm() <= 1e-6 * (1 + s.res.v_plus.norm()));
  }
}

TEST_CASE("inverse dynamics: model C with the rest target is a right inverse of forward model C (oracle 1)", "[id]") {
  // Departure from docs/methods/inverse_dynamics.md §6.1 / §10.1 (id_convex.cpp): forward model C with
  // tau given, in full coordinates,
  //   min 1/2 v^T M v  s.t.  M v = kappa + dt P^T tau + J_c^T z,  z >= 0,  pyramid,  N v >= -phi/dt,
  // has a unique v+ (maximal dissipation: an interior friction impulse means a sticking contact).
  // On moving instances whose plan keeps the feet in place, ID_{QP,mu} (IdStage1::Rest, id_solve)
  // returns torques with which the forward model reproduces its v+, hence P v+ = qdot_des: the
  // planned accelerations (oracle 1, which the doc holds for models A and B only). The paper's
  // Stage I (IdStage1::Momentum) is not: its stance feet slip and the forward model's v+ differs.
  std::mt19937 rng(7);
  double momentum_gap = 0;
  int compared = 0;
  for (int trial = 0; trial < 12; ++trial) {
    Setup s;
    randomize(s, rng, 0.05, 0.05);
    const IdProblem p = s.problem();
    const int n = s.terms.n, D = s.m.n_q, nx = D + 5 * n;
    MatX Jc(5 * n, D);
    Jc << p.N, p.S, -p.S, p.T, -p.T;
    auto forward_v = [&](const VecX& tau) {
      DenseQp qp;
      qp.Q = MatX::Zero(nx, nx);
      qp.Q.topLeftCorner(D, D) = p.M;
      qp.c = VecX::Zero(nx);
      qp.E = MatX::Zero(D, nx);
      qp.E.leftCols(D) = p.M;
      qp.E.rightCols(5 * n) = -Jc.transpose();
      qp.e = p.kappa + kDt * actuation(s, tau);
      qp.A = MatX::Zero(2 * n, nx);
      qp.b = VecX::Zero(2 * n);
      qp.A.topLeftCorner(n, D) = -p.N;
      qp.b.head(n) = p.phi / kDt;
      for (int i = 0; i < n; ++i) {
        qp.A(n + i, D + i) = -p.mu[i];
        for (int d = 1; d <= 4; ++d) qp.A(n + i, D + d * n + i) = 1;
      }
      qp.lb = VecX::Constant(nx, -INFINITY);
      qp.ub = VecX::Constant(nx, INFINITY);
      qp.lb.tail(5 * n).setZero();
      QpWorkspace ws(nx, D + 2 * n + 5 * n);
      QpResult out;
      REQUIRE(ws.solve(qp, out, nullptr, 20000) == QpStatus::Solved);
      return VecX(out.x.head(D));
    };
    id_solve(IdKind::QpMu, p, s.ws, s.res);
    INFO("trial " << trial << " status " << s.res.status);
    REQUIRE((s.res.status & (ID_INFEASIBLE | ID_FAILED)) == 0);
    check_dynamics(s, p, s.res);
    check_constraints(IdKind::QpMu, p, s.res);
    // a contact the plan lifts off (J_i v* normal > 0) carries no impulse in ID_{QP,mu}; the forward
    // model C may still load it where it slides (its mu |v_t| separation artifact): compared on the
    // instances without one (and every contact of those is loadable)
    bool lifted = false;
    for (int i = 0; i < n; ++i) lifted |= s.ws.flag[size_t(i)] != 1;
    if (!lifted) {
      ++compared;
      const VecX v = forward_v(s.res.tau);
      CHECK((v - s.res.v_plus).norm() <= 1e-6 * (1 + s.res.v_plus.norm()));
      for (size_t j = 0; j < s.act.size(); ++j) CHECK(v[s.act[j]] == Approx(p.qdot_des[Eigen::Index(j)]).margin(1e-6));
    }
    // the paper's Stage I: its v+ is not what the forward model makes of its torques
    id_convex(p, s.ws, s.res, true, true, IdStage1::Momentum);
    REQUIRE((s.res.status & (ID_INFEASIBLE | ID_FAILED)) == 0);
    momentum_gap = std::max(momentum_gap, (forward_v(s.res.tau) - s.res.v_plus).norm());
  }
  CHECK(compared >= 5);
  CHECK(momentum_gap > 1e-3);
}

TEST_CASE("inverse dynamics: Stage II keeps v+ and the constraints and does not increase |tau| (oracle 7)", "[id]") {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 8; ++trial) {
    for (bool bounded : {true, false}) {
      Setup s;
      randomize(s, rng, 0.05, 0.05);
      const IdProblem p = s.problem();
      IdResult r1;
      s.ws.init_result(r1);
      const IdStage1 target = trial % 2 ? IdStage1::Rest : IdStage1::Momentum;
      id_convex(p, s.ws, r1, bounded, false, target);
      id_convex(p, s.ws, s.res, bounded, true, target);
      REQUIRE((s.res.status & (ID_INFEASIBLE | ID_FAILED)) == 0);
      CHECK((s.res.v_plus - r1.v_plus).norm() <= 1e-10 * (1 + r1.v_plus.norm()));
      CHECK(s.res.tau.norm() <= r1.tau.norm() * (1 + 1e-9) + 1e-9);
      check_dynamics(s, p, s.res);
      check_constraints(bounded ? IdKind::QpMu : IdKind::QpInf, p, s.res);
    }
  }
}

TEST_CASE("inverse dynamics: model B's minimum-torque choice keeps v+ and complementarity at mu = 100", "[id]") {
  // Why (id_lcp_mu at mu = 100): with four feet down the Coulomb LCP is indeterminate and
  // Lemke's vertex may load the feet with internal friction of up to mu f_N. The choice among the
  // LCP's solutions keeps v+ (so the plan) and every constraint of model B, and does not increase
  // |tau|; on moving instances it lowers |tau| (here by 2-50 %).
  std::mt19937 rng(5);
  double lowered = 0;
  int bounded = 0;
  for (int trial = 0; trial < 8; ++trial) {
    Setup s;
    randomize(s, rng, 0.05, 0.05);
    s.terms.mu.setConstant(100);
    const IdProblem p = s.problem();
    IdResult r0;
    s.ws.init_result(r0);
    id_coulomb(p, s.ws, r0, false);
    id_coulomb(p, s.ws, s.res, true);
    REQUIRE((s.res.status & (ID_INFEASIBLE | ID_FAILED)) == 0);
    // beyond the physical impulse bound (ID_IMPULSE_BOUND) both were solved as model C instead
    if ((r0.status | s.res.status) & ID_IMPULSE_BOUND) {
      ++bounded;
      continue;
    }
    CHECK((s.res.v_plus - r0.v_plus).norm() <= 1e-10 * (1 + r0.v_plus.norm()));
    CHECK(s.res.tau.norm() <= r0.tau.norm() * (1 + 1e-9) + 1e-9);
    lowered = std::max(lowered, 1 - s.res.tau.norm() / r0.tau.norm());
    check_dynamics(s, p, s.res);
    check_constraints(IdKind::LcpMu, p, s.res);
  }
  CHECK(bounded <= 4);
  CHECK(lowered > 0.2);
}

TEST_CASE("inverse dynamics: at a static stance model B's choice is model C's Stage II torque", "[id]") {
  // Standing still (v = 0, qdd_des = 0, phi = 0) every foot sticks, so the LCP's solutions with
  // v+ = 0 are exactly Stage I's optimal set of model C: both then minimize the same |tau|^2 +
  // eps |z|^2 over it (an independent path: Lemke + choice vs Stage I QP + Stage II).
  for (double mu : {100.0, 1.0}) {
    Setup s;
    s.terms.phi.setZero();
    s.terms.mu.setConstant(mu);
    const IdProblem p = s.problem();
    IdResult rb, r0;
    s.ws.init_result(rb);
    s.ws.init_result(r0);
    id_coulomb(p, s.ws, r0, false);
    id_coulomb(p, s.ws, rb, true);
    id_convex(p, s.ws, s.res, true, true);
    INFO("mu " << mu << ": |tau| Lemke's vertex " << r0.tau.norm() << ", chosen " << rb.tau.norm() << ", model C "
                << s.res.tau.norm());
    CHECK((rb.tau - s.res.tau).norm() <= 1e-6 * (1 + s.res.tau.norm()));
    CHECK(id_normal_force(rb, kDt) == Approx(s.m.weight()).epsilon(1e-6));
    CHECK(rb.tau.norm() <= r0.tau.norm() * (1 + 1e-9));
  }
}

TEST_CASE("inverse dynamics: Stage II nullspace is orthonormal and annihilated by G", "[id]") {
  Setup s;
  const IdProblem p = s.problem();
  id_convex(p, s.ws, s.res, true, false);
  const int d = id_nullspace(s.ws), rows = s.ws.rows;
  CHECK(d == rows - 6);  // 4 contacts: 20 - rank 6 = 14 (docs/methods/inverse_dynamics.md §11 I8)
  const MatX W = s.ws.Wn.topLeftCorner(rows, d);
  CHECK((W.transpose() * W - MatX::Identity(d, d)).norm() <= 1e-12);
  CHECK((s.ws.G.leftCols(rows) * W).norm() <= 1e-10 * s.ws.G.leftCols(rows).norm());
}

TEST_CASE("inverse dynamics: PPM solves random Baraff-form LCPs (oracle 5)", "[id]") {
  // w = H^T H z + H^T wbar: the KKT system of min 1/2 |H z + wbar|^2 over z >= 0, always solvable.
  // A third of the instances duplicate contact columns (dependent rows, §4.6).
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  std::uniform_int_distribution<int> um(3, 9), un(1, 24);
  const std::vector<int> act9 = {9, 10};
  IdWorkspace ws(11, act9, 24);  // nb = 9
  int ppm_ok = 0, total = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const int nb = um(rng), n = un(rng);
    MatX Hm(nb, n);
    for (int i = 0; i < n; ++i) {
      if (trial % 3 == 0 && i > 0 && u(rng) > 0) Hm.col(i) = Hm.col(std::uniform_int_distribution<int>(0, i - 1)(rng));
      else for (int r = 0; r < nb; ++r) Hm(r, i) = u(rng);
    }
    VecX wbar(nb);
    for (int r = 0; r < nb; ++r) wbar[r] = u(rng);
    const VecX r0 = Hm.transpose() * wbar;
    VecX z(n);
    int its = 0;
    const PpmStatus st = id_ppm(Hm, r0, {}, ws, z, its);
    ++total;
    if (st != PpmStatus::Solved) continue;
    ++ppm_ok;
    const VecX w = Hm.transpose() * (Hm * z) + r0;
    CHECK(z.minCoeff() >= 0);
    CHECK(w.minCoeff() >= -1e-8);
    CHECK(std::abs(z.dot(w)) <= 1e-8 * (1 + z.norm()));
    CHECK(int(ws.S_set.size()) <= nb);  // at most rank <= nb positive impulses (§4.5)
  }
  CHECK(ppm_ok >= 0.98 * total);
}

TEST_CASE("inverse dynamics: Baraff-form stances are solvable by A and C (oracle 5)", "[id]") {
  // arbitrary joint configurations at rest, qdd_des = 0, every foot a contact with phi := 0
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int trial = 0; trial < 20; ++trial) {
    Setup s;
    for (int k = 3; k < s.m.n_q; ++k) s.theta[k] += 0.3 * u(rng);
    s.update(0.7);
    s.terms.phi.setZero();
    const IdProblem p = s.problem();
    for (IdKind k : {IdKind::LcpInf, IdKind::QpMu, IdKind::QpInf}) {
      id_solve(k, p, s.ws, s.res);
      INFO(id_kind_name(k) << " trial " << trial << " status " << s.res.status);
      CHECK((s.res.status & (ID_INFEASIBLE | ID_FAILED | ID_REGULARIZED)) == 0);
      check_dynamics(s, p, s.res);
    }
  }
}

TEST_CASE("inverse dynamics: an incompatible plan is flagged and repaired, never a crash (I14)", "[id]") {
  // every DOF actuated (no unactuated block, 𝒫 = 0) and the base commanded down into the ground:
  // Q = 0, r < 0. Each model flags ID_INFEASIBLE and returns the repair QP's solution, which stops
  // the feet at the ground instead of the commanded sink.
  const Model& m = spider().model;
  IdTerms terms(m);
  const VecX v = VecX::Zero(m.n_q);
  terms.update(m, spider().theta0, v, kDt, 0.7, 0.05);
  std::vector<int> all(size_t(m.n_q));
  for (int k = 0; k < m.n_q; ++k) all[size_t(k)] = k;
  IdWorkspace ws(m.n_q, all, m.max_contacts);
  IdResult r;
  ws.init_result(r);
  VecX qdot = VecX::Zero(m.n_q);
  qdot[2] = -0.5;  // base z velocity [m/s]
  const IdProblem p = terms.problem(qdot, kDt);
  for (IdKind k : kKinds) {
    id_solve(k, p, ws, r);
    INFO(id_kind_name(k) << " status " << r.status);
    CHECK((r.status & ID_INFEASIBLE) != 0);
    CHECK((r.status & ID_FAILED) == 0);
    CHECK(r.tau.allFinite());
    // stopped at the ground (slack penalty 1e6): the feet approach at most at phi / dt
    for (int i = 0; i < terms.n; ++i) CHECK(p.N.row(i).dot(r.v_plus) + p.phi[i] / kDt >= -1e-4);
    CHECK(r.v_plus[2] > -0.1);
  }
}

TEST_CASE("inverse dynamics: warm start keeps the support on an indeterminate stance (oracle 6)", "[id]") {
  // 4 coplanar feet, no-slip: rank(N 𝒫_J) = 3 (vertical translation, roll and pitch about
  // ground-level axes), so a support of <= 3 feet suffices and the LCP solution is not unique.
  // Slowly varying plans (a 1 Hz joint acceleration) with the previous support as warm start keep
  // the same support and give torques that change by O(dt).
  Setup s;
  VecX qdd(12);
  std::vector<int> first;
  double max_dtau = 0;
  for (int step = 0; step < 100; ++step) {
    const double t = step * kDt;
    for (int j = 0; j < 12; ++j) qdd[j] = 0.5 * std::sin(2 * 3.14159265358979 * t + j);
    s.set_qdd(qdd);
    const VecX tau_prev = s.res.tau;
    id_no_slip(s.problem(), s.ws, s.res);
    REQUIRE((s.res.status & (ID_INFEASIBLE | ID_FAILED)) == 0);
    std::vector<int> sup(s.res.support.begin(), s.res.support.begin() + s.res.n_support);
    std::sort(sup.begin(), sup.end());
    CHECK(sup.size() <= 3);
    if (step == 0) first = sup;
    else {
      CHECK(sup == first);
      max_dtau = std::max(max_dtau, (s.res.tau - tau_prev).cwiseAbs().maxCoeff());
    }
  }
  // |d tau| per step: the plan's own change (0.5 rad/s^2 x 2 pi x dt through the inertia) is
  // ~1e-3 N m; a support switch moves tens of N m
  CHECK(max_dtau <= 0.05);
}

TEST_CASE("inverse dynamics: contact-space pivoting stays within rank with 40 contacts (oracle 9)", "[id]") {
  // each foot's contact repeated 10 times (Fig. 19's multiplied contacts): the pivoting support
  // never exceeds nb = 6 and a few pivots suffice, while the answer matches the 4-contact one.
  Setup s;
  const IdProblem p4 = s.problem();
  id_no_slip(p4, s.ws, s.res);
  const double f4 = id_normal_force(s.res, kDt);
  const VecX tau4 = s.res.tau;
  const int reps = 10, n = 4 * reps, D = s.m.n_q;
  MatX N(n, D), S(n, D), T(n, D);
  VecX phi(n), mu(n);
  for (int i = 0; i < n; ++i) {
    N.row(i) = p4.N.row(i % 4);
    S.row(i) = p4.S.row(i % 4);
    T.row(i) = p4.T.row(i % 4);
    phi[i] = p4.phi[i % 4];
    mu[i] = 0.7;
  }
  IdWorkspace ws(D, s.act, n);
  IdResult r;
  ws.init_result(r);
  const IdProblem p{p4.M, p4.kappa, p4.qdot_des, N, S, T, phi, mu, kDt};
  id_no_slip(p, ws, r);
  CHECK((r.status & (ID_INFEASIBLE | ID_FAILED | ID_LEMKE_FALLBACK)) == 0);
  CHECK(r.n_support <= 6);
  CHECK(r.iterations <= 12);
  CHECK(id_normal_force(r, kDt) == Approx(f4).epsilon(1e-9));
  CHECK((r.tau - tau4).norm() <= 1e-6 * (1 + tau4.norm()));
}

TEST_CASE("inverse dynamics: no-slip demands more than mu = 0.1 allows (oracle 10)", "[id]") {
  // plan: accelerate the torso forward at 3 m/s^2 with the feet fixed, qdd = -J_q^-1 J_b a_b per
  // leg. Horizontal force ~ 42 kg x 3 m/s^2 = 126 N > 0.1 x 412 N: the no-slip models predict
  // friction outside the cone; QP,mu keeps its forces in the pyramid.
  Setup s(0.1);
  VecX ab = VecX::Zero(6);
  ab[0] = 3.0;
  VecX qdd = VecX::Zero(12);
  qdd = feet_fixed_joint_velocity(s, ab);
  s.set_qdd(qdd);
  const IdProblem p = s.problem();
  for (IdKind k : {IdKind::LcpInf, IdKind::QpInf, IdKind::QpMu}) {
    id_solve(k, p, s.ws, s.res);
    INFO(id_kind_name(k) << " status " << s.res.status);
    double ft = 0, fn = 0;
    for (int i = 0; i < 4; ++i) {
      ft += std::hypot(s.res.f_s[i], s.res.f_t[i]);
      fn += s.res.f_n[i];
    }
    if (k == IdKind::QpMu) CHECK(ft <= 0.1 * fn * (1 + 1e-9) + 1e-12);
    else CHECK(ft > 0.1 * fn * 2);
  }
}

TEST_CASE("inverse dynamics: the Coulomb LCP matrix is copositive (oracle 13)", "[id]") {
  // z^T Q_B z = |G (f_N, f_F)|^2 + lambda^T mu f_N >= 0 for z >= 0 (§5.2)
  std::mt19937 rng(13);
  std::uniform_real_distribution<double> u(0, 1);
  Setup s;
  randomize(s, rng, 0.05, 0.05);
  const IdProblem p = s.problem();
  s.ws.check(p);
  REQUIRE(s.ws.factor(p));
  s.ws.contact_rows(p, true);
  id_coulomb_lcp(p, s.ws);
  const int n = s.ws.n, nz = 6 * n;
  const MatX Q = s.ws.Q.topLeftCorner(nz, nz);
  const MatX G = s.ws.G.leftCols(5 * n);
  for (int trial = 0; trial < 200; ++trial) {
    VecX z(nz);
    for (int i = 0; i < nz; ++i) z[i] = u(rng) < 0.3 ? 0 : u(rng);
    const double q = z.dot(Q * z);
    const double id = (G * z.head(5 * n)).squaredNorm() + z.tail(n).dot(p.mu.cwiseProduct(z.head(n)));
    CHECK(q >= -1e-12);
    CHECK(q == Approx(id).epsilon(1e-10).margin(1e-14));
  }
}

TEST_CASE("inverse dynamics: bad input names the field", "[id]") {
  Setup s;
  const VecX bad = VecX::Zero(5);
  const IdProblem p = s.terms.problem(bad, kDt);
  CHECK_THROWS_AS(id_solve(IdKind::QpMu, p, s.ws, s.res), InvalidArgument);
  const std::vector<int> unsorted = {3, 2};
  CHECK_THROWS_AS(IdWorkspace(18, unsorted, 4), InvalidArgument);
  // non-finite input: flagged, tau = 0
  s.terms.kappa[0] = NAN;
  id_solve(IdKind::LcpInf, s.problem(), s.ws, s.res);
  CHECK((s.res.status & ID_NONFINITE) != 0);
}

TEST_CASE("inverse dynamics: a solve allocates nothing once the workspace is sized", "[id][alloc]") {
  std::mt19937 rng(21);
  Setup s;
  randomize(s, rng, 0.05, 0.05);
  IdProblem p = s.problem();
  for (const bool tie : {false, true}) {
    for (IdKind k : kKinds) {
      p.friction_needs_load = tie;  // the controllers' variant re-solves model A: still no allocation
      for (int w = 0; w < 2; ++w) {  // warm-up (as tests/solvers/step_alloc_test.cpp)
        s.terms.update(s.m, s.theta, s.v, kDt, 0.7, 0.05);
        id_solve(k, p, s.ws, s.res);
      }
      test::MallocCounter mc;
      s.terms.update(s.m, s.theta, s.v, kDt, 0.7, 0.05);
      s.terms.phi.setZero();
      id_solve(k, p, s.ws, s.res);
      const long count = mc.count();  // before INFO, which allocates its message
      INFO(id_kind_name(k) << " status " << s.res.status << " friction_needs_load " << tie);
      CHECK(count == 0);
    }
  }
}
