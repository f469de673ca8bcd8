// Shared dense solvers: QP results satisfy KKT on random problems (degenerate and infeasible ones
// included); Lemke solves random P-matrix LCPs and known instances.
#include <catch2/catch.hpp>

#include <random>

#include "numerics/lcp_lemke.h"
#include "numerics/qp_dense.h"
#include "tests/support/tol.h"

using namespace bigstep;
using bigstep::test::tol;

namespace {

MatX rand_mat(std::mt19937& rng, int r, int c) {
  std::normal_distribution<double> N(0, 1);
  MatX M(r, c);
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < c; ++j) M(i, j) = N(rng);
  return M;
}

// Random feasible problem: constraints built around a known feasible point x_f.
DenseQp random_qp(std::mt19937& rng, int n, int m_a, int m_e, bool psd_singular, bool bounds, int groups) {
  DenseQp p;
  const MatX G = rand_mat(rng, psd_singular ? n / 2 : n, n);
  p.Q = G.transpose() * G + (psd_singular ? 0.0 : 0.1) * MatX::Identity(n, n);
  p.c = rand_mat(rng, n, 1);
  std::uniform_real_distribution<double> U(0.01, 0.2);
  VecX xf(n);
  for (int i = 0; i < n; ++i) xf[i] = U(rng);  // inside bounds [0, 1] and the simplex rows
  p.A = rand_mat(rng, m_a, n);
  p.b = p.A * xf + VecX::Constant(m_a, 0.1);
  p.E = rand_mat(rng, m_e, n);
  p.e = p.E * xf;
  if (bounds) {
    p.lb = VecX::Zero(n);
    p.ub = VecX::Constant(n, 1.0);
    p.ub[0] = std::numeric_limits<double>::infinity();
  }
  for (int g = 0; g < groups; ++g) p.simplex.push_back({g * 2, 2});
  return p;
}

}  // namespace

TEST_CASE("qp: random feasible problems satisfy KKT", "[qp]") {
  std::mt19937 rng(1);
  QpWorkspace ws(20, 80);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 2 + trial % 12;
    // a singular PSD Q comes with bounds so the problem stays bounded below
    const bool psd = trial % 4 == 1;
    const DenseQp p = random_qp(rng, n, trial % 7, (trial % 3 == 0) ? 1 : 0, psd, psd || trial % 2 == 0, (n >= 6 && trial % 5 == 0) ? 2 : 0);
    QpResult r;
    INFO("trial " << trial << " n " << n << " m_a " << p.A.rows() << " m_e " << p.E.rows() << " psd " << psd);
    REQUIRE(ws.solve(p, r) == QpStatus::Solved);
    // PSD-singular Q is solved as Q + 1e-12 I: the KKT residual carries ~1e-12 |x|
    INFO("trial " << trial << " n " << n << " kkt " << qp_kkt_residual(p, r));
    CHECK(qp_kkt_residual(p, r) <= tol(1e-8));
  }
}

TEST_CASE("qp: degenerate constraints (duplicates, redundant equalities)", "[qp]") {
  std::mt19937 rng(2);
  QpWorkspace ws(10, 60);
  DenseQp p = random_qp(rng, 6, 4, 1, false, true, 1);
  // duplicate every inequality row and add a redundant (implied) equality
  MatX A2(8, 6);
  A2 << p.A, p.A;
  VecX b2(8);
  b2 << p.b, p.b;
  p.A = A2;
  p.b = b2;
  MatX E2(2, 6);
  E2 << p.E, 2 * p.E;
  VecX e2(2);
  e2 << p.e, 2 * p.e;
  p.E = E2;
  p.e = e2;
  p.c *= 50;  // push the unconstrained minimum far away so many constraints become active
  QpResult r;
  REQUIRE(ws.solve(p, r) == QpStatus::Solved);
  CHECK(qp_kkt_residual(p, r) <= tol(1e-8));
}

TEST_CASE("qp: infeasible problems are reported", "[qp]") {
  QpWorkspace ws(5, 20);
  DenseQp p;
  p.Q = MatX::Identity(3, 3);
  p.c = VecX::Zero(3);
  p.A = MatX(2, 3);
  p.A << 1, 1, 0, -1, -1, 0;  // x0 + x1 <= 0 and x0 + x1 >= 1
  p.b = VecX(2);
  p.b << 0, -1;
  QpResult r;
  CHECK(ws.solve(p, r) == QpStatus::Infeasible);
  // simplex row with lower bounds above 1/2 each
  DenseQp s;
  s.Q = MatX::Identity(2, 2);
  s.c = VecX::Zero(2);
  s.lb = VecX::Constant(2, 0.6);
  s.simplex.push_back({0, 2});
  CHECK(ws.solve(s, r) == QpStatus::Infeasible);
  // inconsistent equalities
  DenseQp e;
  e.Q = MatX::Identity(2, 2);
  e.c = VecX::Zero(2);
  e.E = MatX(2, 2);
  e.E << 1, 1, 2, 2;
  e.e = VecX(2);
  e.e << 1, 3;
  CHECK(ws.solve(e, r) == QpStatus::Infeasible);
}

TEST_CASE("qp: bad input and non-convex Q are reported, not thrown", "[qp]") {
  QpWorkspace ws(3, 6);
  DenseQp p;
  p.Q = MatX::Identity(4, 4);  // larger than the workspace
  p.c = VecX::Zero(4);
  QpResult r;
  CHECK(ws.solve(p, r) == QpStatus::InvalidInput);
  p.Q = -MatX::Identity(2, 2);
  p.c = VecX::Zero(2);
  CHECK(ws.solve(p, r) == QpStatus::NotConvex);
  p.Q = MatX::Identity(2, 2);
  p.c = VecX::Constant(2, std::nan(""));
  CHECK(ws.solve(p, r) == QpStatus::InvalidInput);
}

TEST_CASE("qp: known solution and warm start", "[qp]") {
  // min 1/2|x - (2, 2)|^2 s.t. x0 + x1 <= 1 (simplex), x >= 0  ->  x = (0.5, 0.5), u = 1.5
  DenseQp p;
  p.Q = MatX::Identity(2, 2);
  p.c = VecX::Constant(2, -2.0);
  p.lb = VecX::Zero(2);
  p.simplex.push_back({0, 2});
  QpWorkspace ws(4, 8);
  QpResult r;
  REQUIRE(ws.solve(p, r) == QpStatus::Solved);
  CHECK(r.x[0] == Approx(0.5));
  CHECK(r.x[1] == Approx(0.5));
  CHECK(r.active == std::vector<int>{2});  // canonical: lb0, lb1, simplex
  CHECK(r.u[2] == Approx(1.5));
  // warm start from the optimal active set: same answer, fewer iterations
  QpResult r2;
  REQUIRE(ws.solve(p, r2, &r.active) == QpStatus::Solved);
  CHECK((r2.x - r.x).norm() < 1e-12);
  CHECK(r2.iterations < r.iterations);
  // a wrong warm start (the lower bounds) is repaired
  const std::vector<int> bad{0, 1};
  REQUIRE(ws.solve(p, r2, &bad) == QpStatus::Solved);
  CHECK((r2.x - r.x).norm() < 1e-12);
}

TEST_CASE("qp: deterministic", "[qp]") {
  std::mt19937 rng(9);
  const DenseQp p = random_qp(rng, 10, 6, 1, true, true, 2);
  QpWorkspace a(12, 40), b(12, 40);
  QpResult ra, rb;
  a.solve(p, ra);
  b.solve(p, rb);
  CHECK(ra.x == rb.x);
  CHECK(ra.active == rb.active);
}

TEST_CASE("lcp: random P-matrix problems", "[lcp]") {
  std::mt19937 rng(4);
  LcpWorkspace ws(20);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 1 + trial % 15;
    const MatX G = rand_mat(rng, n, n);
    const MatX S = rand_mat(rng, n, n);
    // positive definite (not symmetric) => P-matrix => unique solution
    const MatX M = G * G.transpose() + 0.1 * MatX::Identity(n, n) + (S - S.transpose());
    const VecX q = rand_mat(rng, n, 1);
    LcpResult r;
    REQUIRE(ws.solve(M, q, r) == LcpStatus::Solved);
    const double sc = 1 + M.cwiseAbs().maxCoeff() * r.z.cwiseAbs().maxCoeff() + q.cwiseAbs().maxCoeff();
    CHECK(r.z.minCoeff() >= 0);
    CHECK(r.w.minCoeff() >= -tol(1e-10) * sc);
    CHECK(std::abs(r.z.dot(r.w)) <= tol(1e-10) * sc * (1 + r.z.norm()));
  }
}

TEST_CASE("lcp: known instances", "[lcp]") {
  LcpWorkspace ws(4);
  LcpResult r;
  // 1D: w = 2 z - 4 -> z = 2
  REQUIRE(ws.solve(MatX::Constant(1, 1, 2.0), VecX::Constant(1, -4.0), r) == LcpStatus::Solved);
  CHECK(r.z[0] == Approx(2.0));
  // q >= 0: z = 0
  REQUIRE(ws.solve(MatX::Identity(2, 2), VecX::Ones(2), r) == LcpStatus::Solved);
  CHECK(r.z.isZero());
  // Murty's example (M = [[1,2],[0,1]], q = (-1,-1)): z = (0, 1)? check w = Mz+q complementary
  MatX M(2, 2);
  M << 1, 2, 0, 1;
  REQUIRE(ws.solve(M, VecX::Constant(2, -1.0), r) == LcpStatus::Solved);
  CHECK(r.z.minCoeff() >= 0);
  CHECK(r.w.minCoeff() >= -1e-12);
  CHECK(std::abs(r.z.dot(r.w)) < 1e-12);
  // infeasible: w = -z - 1 can never be >= 0 with z >= 0 -> ray termination
  CHECK(ws.solve(MatX::Constant(1, 1, -1.0), VecX::Constant(1, -1.0), r) == LcpStatus::RayTermination);
  // degenerate: q with ties and a zero entry
  MatX D = MatX::Identity(3, 3) * 2;
  D(0, 1) = D(1, 0) = 1;
  VecX qd(3);
  qd << -1, -1, 0;
  REQUIRE(ws.solve(D, qd, r) == LcpStatus::Solved);
  CHECK(r.z[0] == Approx(1.0 / 3));
  CHECK(r.z[1] == Approx(1.0 / 3));
  CHECK(r.w.minCoeff() >= -1e-12);
}

TEST_CASE("lcp: a result is Solved only if it satisfies the LCP; the polish repairs a drifted basis", "[lcp]") {
  // Stewart-Trinkle-like degenerate problems: rank-deficient PSD block (coplanar contacts) plus the
  // friction-cone coupling; every status is allowed, but Solved must mean "satisfied to tol", and
  // the reported error must be the independently recomputed violation.
  std::mt19937 rng(17);
  LcpWorkspace ws(40);
  int solved = 0;
  for (int trial = 0; trial < 100; ++trial) {
    const int nc = 2 + trial % 6, nd = 2, N = nc * (2 + nd), r0 = 1 + trial % 3;
    const MatX A = rand_mat(rng, nc * (1 + nd), r0);  // rank r0 < size: degenerate
    MatX M = MatX::Zero(N, N);
    M.topLeftCorner(nc * (1 + nd), nc * (1 + nd)) = A * A.transpose();
    M.topLeftCorner(nc * (1 + nd), nc * (1 + nd)).diagonal().array() += 1e-6;
    for (int c = 0; c < nc; ++c) {
      const int g = nc * (1 + nd) + c;
      for (int i = 0; i < nd; ++i) {
        M(nc + c * nd + i, g) = 1;
        M(g, nc + c * nd + i) = -1;
      }
      M(g, c) = 0.5;
    }
    VecX q = VecX::Zero(N);
    q.head(nc * (1 + nd)) = rand_mat(rng, nc * (1 + nd), 1);
    LcpResult r;
    const LcpStatus s = ws.solve(M, q, r);
    if (s != LcpStatus::Solved) continue;
    ++solved;
    const VecX w = M * r.z + q;
    const double sc = 1 + q.cwiseAbs().maxCoeff() + (M.cwiseAbs() * r.z.cwiseAbs()).maxCoeff();
    CHECK(r.error <= 1e-6);
    CHECK(r.z.minCoeff() >= 0);
    CHECK(w.minCoeff() >= -1e-6 * sc);
    CHECK(r.z.cwiseProduct(w).cwiseAbs().maxCoeff() <= 1e-6 * sc * (1 + r.z.cwiseAbs().maxCoeff()));
  }
  CHECK(solved >= 50);  // the test exercises the Solved path, not only failures
  // a tolerance of 0 turns any round-off into Inaccurate, never into a silent Solved
  MatX M = MatX::Identity(3, 3) * 3;
  M(0, 1) = M(1, 0) = 1;
  VecX q(3);
  q << -1, -2, -0.3;
  LcpResult r;
  const LcpStatus s = ws.solve(M, q, r, 0, 0.0);
  CHECK((s == LcpStatus::Solved ? r.error == 0 : s == LcpStatus::Inaccurate));
}
