// The compliant solver's frictionless QP (docs/methods/compliant.md §6) in 2n unknowns
// (solvers/compliant/compliant_reduced_qp.h) against the dense dual active-set QP (numerics/qp_dense.h) on
// random instances with more rows than DOFs, some rows lifting off: the same y to 1e-9, and the
// KKT conditions of the original ny-row QP recomputed densely from the reduced solver's regions.
// Phase 2 (the dual active set that makes the solver finite) on every random instance, and on the
// B4 step whose block pivoting cycles (900 elements, E = 1e10, 50 N; regenerated from the scene).
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

#include "control/point_load.h"
#include "io/scene.h"
#include "solvers/compliant/compliant_reduced_qp.h"
#include "solvers/compliant/compliant_step.h"
#include "numerics/qp_dense.h"
#include "tests/support/malloc_guard.h"

using namespace bigstep;

namespace {

struct Instance {
  MatX Mt, G;  // (n x n) SPD, (ny x n)
  VecX W, r;   // (ny)
  MatX A() const { return G * Mt.ldlt().solve(G.transpose()); }
};

// the dense QP exactly as the solver's N-step poses it: rows scaled by 1/max(1, W_i)
VecX dense_qp(const Instance& in) {
  const int ny = int(in.G.rows());
  const MatX A = in.A();
  DenseQp p;
  p.Q = MatX::Identity(ny, ny);
  p.c = VecX::Zero(ny);
  p.E.resize(0, ny);
  p.e.resize(0);
  p.A.resize(ny, ny);
  p.b.resize(ny);
  for (int i = 0; i < ny; ++i) {
    const double s = 1 / std::max(1.0, in.W[i]);
    for (int j = 0; j < ny; ++j) p.A(i, j) = -s * ((i == j ? 1.0 : 0.0) + in.W[i] * A(i, j));
    p.b[i] = -s * in.r[i];
  }
  p.lb = VecX::Zero(ny);
  QpWorkspace ws(ny, 2 * ny);
  QpResult res;
  REQUIRE(ws.solve(p, res) == QpStatus::Solved);
  CHECK(qp_kkt_residual(p, res) < 1e-10);
  return res.x;
}

// A box-like body: rows are normals at points of a plate (B4) plus random directions; M~ random SPD
Instance random_instance(std::mt19937& rng, int n, int ny, double w_max) {
  std::uniform_real_distribution<double> U(-1, 1), P(0, 1);
  Instance in;
  MatX L = MatX::Random(n, n);  // Eigen's own generator: seeded below for determinism
  in.Mt = L * L.transpose() + n * MatX::Identity(n, n);
  in.G.resize(ny, n);
  in.W.resize(ny);
  in.r.resize(ny);
  for (int i = 0; i < ny; ++i) {
    if (i % 3 && n == 6) {
      // normal (0, 0, 1) at plate point c: G = [n^T, (c x n)^T]
      const double cx = U(rng), cy = U(rng);  // drawn in order (a constructor's arguments are not)
      const Vec3 c(cx, cy, -0.5), nz(0, 0, 1);
      in.G.row(i) << nz.transpose(), c.cross(nz).transpose();
    } else {
      for (int k = 0; k < n; ++k) in.G(i, k) = U(rng);
    }
    // W from 0 (a row with K = B = 0) to w_max, log-uniform
    in.W[i] = i % 17 == 5 ? 0.0 : std::pow(10.0, std::log10(w_max) * P(rng) - 2);
    // r: pushing rows and rows lifting off (negative: separating faster than the spring pushes)
    in.r[i] = U(rng) + 0.3;
  }
  return in;
}

// a cold solve of `in` by the reduced QP, phase 1 limited to max_iter pieces
struct Cold {
  ReducedQpWorkspace ws;
  std::vector<int> warm;
  VecX y;
  ReducedQpResult res;
  Cold(const Instance& in, int max_iter) : ws(int(in.G.cols()), int(in.G.rows())), y(in.G.rows()) {
    const int ny = int(in.G.rows());
    warm.reserve(size_t(2 * ny));
    res = reduced_unilateral_qp(in.Mt, in.G, ny, in.W.data(), in.r.data(), warm, max_iter, ws, y.data());
  }
};

// KKT of min 1/2 y^T y s.t. M y >= r, y >= 0 (M = I + W A), recomputed densely from the reduced
// solver's regions: multipliers u (rows; ws.u) and nu (bounds: -a_i on Z, -a_i - u_i on D)
void check_kkt(const Instance& in, const ReducedQpWorkspace& ws, const VecX& y, int& F, int& Z, int& D) {
  const int ny = int(in.G.rows());
  const MatX A = in.A();
  const MatX M = MatX::Identity(ny, ny) + in.W.asDiagonal() * A;
  const VecX u = ws.u.head(ny);
  VecX nu = VecX::Zero(ny);
  F = Z = D = 0;
  for (int i = 0; i < ny; ++i) {
    if (ws.region[i] == ReducedQpWorkspace::Z) nu[i] = -ws.a[i], ++Z;
    if (ws.region[i] == ReducedQpWorkspace::D) nu[i] = -ws.a[i] - u[i], ++D;
    F += ws.region[i] == ReducedQpWorkspace::F && y[i] > 1e-6;
  }
  const VecX slack = M * y - in.r;
  const double ymax = 1 + y.cwiseAbs().maxCoeff();
  const double scale = 1 + in.r.cwiseAbs().maxCoeff() + (in.W.asDiagonal() * A).cwiseAbs().maxCoeff() * ymax;
  CHECK((y - M.transpose() * u - nu).cwiseAbs().maxCoeff() <= 1e-9 * scale);  // stationarity
  CHECK(slack.minCoeff() >= -1e-9 * scale);                                    // primal
  CHECK(y.minCoeff() >= 0);
  CHECK(u.minCoeff() >= -1e-9 * scale);                                        // dual
  CHECK(nu.minCoeff() >= -1e-9 * scale);
  CHECK(u.cwiseProduct(slack).cwiseAbs().maxCoeff() <= 1e-9 * scale * scale);  // complementarity
  CHECK(nu.cwiseProduct(y).cwiseAbs().maxCoeff() <= 1e-9 * scale * scale);
}

}  // namespace

TEST_CASE("compliant reduced QP: two coupled rows give the QP's (not the LCP's) forces", "[compliant]") {
  // A = G M~^-1 G^T = [[1, .9], [.9, 1]] (M~ = I, n = 2), W = 1, r = (1, -.1): the QP gives the
  // separating row 2 a force (region F); the spring-damper LCP max(0, r - W A y) would give (.5, 0)
  Instance in;
  in.Mt = MatX::Identity(2, 2);
  in.G.resize(3, 2);
  const double c = 0.9, s = std::sqrt(1 - c * c);
  in.G << 1, 0, c, s, 0, 0;  // a third row, G = 0, r = -1: never pushes (region Z)
  in.W = VecX::Ones(3);
  in.r = Eigen::Vector3d(1, -0.1, -1);
  ReducedQpWorkspace ws(2, 3);
  std::vector<int> warm;
  warm.reserve(6);
  VecX y(3);
  const ReducedQpResult res = reduced_unilateral_qp(in.Mt, in.G, 3, in.W.data(), in.r.data(), warm, 50, ws, y.data());
  REQUIRE(res.solved);
  CHECK(y[0] == Approx(2 / 4.81).epsilon(1e-12));
  CHECK(y[1] == Approx(0.9 / 4.81).epsilon(1e-12));
  CHECK(y[2] == 0);
  CHECK(ws.region[1] == ReducedQpWorkspace::F);
  CHECK((y - dense_qp(in)).cwiseAbs().maxCoeff() < 1e-12);
  // warm: row 0 tight, row 2 at its bound (dense QP's canonical order)
  CHECK(warm == std::vector<int>{0, 5});
}

TEST_CASE("compliant reduced QP: random instances with rows >> DOFs equal the dense QP and satisfy KKT",
          "[compliant]") {
  std::mt19937 rng(7);
  std::srand(7);
  int n_solved = 0, n_total = 0, n_phase2 = 0, with_F = 0, with_Z = 0, with_D = 0, iters_max = 0;
  for (int n : {3, 6})
    for (int ny : {n + 1, 20, 60, 150})
      for (double w_max : {1e0, 1e3, 1e5})
        for (int rep = 0; rep < 4; ++rep) {
          INFO("n " << n << ", ny " << ny << ", W max " << w_max << ", rep " << rep);
          const Instance in = random_instance(rng, n, ny, w_max);
          const Cold c(in, 100);
          const ReducedQpWorkspace& ws = c.ws;
          const VecX& y = c.y;
          const ReducedQpResult& res = c.res;
          ++n_total;
          if (!res.solved) continue;
          ++n_solved;
          n_phase2 += res.active_set_pieces > 0;
          iters_max = std::max(iters_max, res.iterations);
          const VecX y_ref = dense_qp(in);
          const double ymax = 1 + y_ref.cwiseAbs().maxCoeff();
          CHECK((y - y_ref).cwiseAbs().maxCoeff() <= 1e-9 * ymax);
          int F = 0, Z = 0, D = 0;
          check_kkt(in, ws, y, F, Z, D);
          with_F += F > 0;
          with_Z += Z > 0;
          with_D += D > 0;
        }
  INFO("solved " << n_solved << " of " << n_total << " (" << n_phase2 << " in phase 2), max iterations "
                  << iters_max << "; with F " << with_F << ", Z " << with_Z << ", D " << with_D);
  // block pivoting need not terminate (~8 % of these wander past 100 pieces): phase 2 finishes
  // them, so every instance is solved, exactly (above). The instances exercise the four regions:
  // rows pushing (T), free rows the QP loads beyond their law (F), rows lifting off (Z), rows held
  // exactly at their bound by the others (D)
  CHECK(n_solved == n_total);
  CHECK(n_phase2 >= 2);
  CHECK(with_F >= n_total / 2);
  CHECK(with_Z >= n_total / 2);
  CHECK(with_D >= 2);
}

TEST_CASE("compliant reduced QP: B4-like rows (normals under a rigid box, rocking) always settle", "[compliant]") {
  // M~ of the 8 kg, 1 m cube (I = m s^2 / 6), rows = foundation normals at bottom-face points, W of
  // E = 1e7 .. 1e11 with 100 or 900 elements (h^2 K + h B), r of a tilted, rocking box: the rows on
  // one side push, the others lift off
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> U(-1, 1);
  int worst = 0;
  for (int side : {10, 30})
    for (double E : {1e7, 1e9, 1e11})
      for (int rep = 0; rep < 3; ++rep) {
        INFO("side " << side << ", E " << E << ", rep " << rep);
        const int ny = side * side;
        Instance in;
        in.Mt = MatX::Zero(6, 6);
        in.Mt.diagonal() << 8, 8, 8, 8.0 / 6, 8.0 / 6, 8.0 / 6;
        in.G.resize(ny, 6);
        in.W.resize(ny);
        in.r.resize(ny);
        const double h = 0.01, K = E / ny, W = h * h * K + h * 1.0;
        // r_i = -K phi_i - (h K + B)(G_i v0 + ...) is affine in the element point for a rigid body
        const double tx = U(rng), ty = U(rng);
        const Vec3 tilt(tx, ty, 0);
        for (int i = 0; i < ny; ++i) {
          const Vec3 c(-0.5 + (i / side + 0.5) / side, -0.5 + (i % side + 0.5) / side, -0.5), nz(0, 0, 1);
          in.G.row(i) << nz.transpose(), c.cross(nz).transpose();
          in.W[i] = W;
          in.r[i] = W * 0.02 * (1 + 5 * tilt.dot(c));
        }
        ReducedQpWorkspace ws(6, ny);
        std::vector<int> warm;
        warm.reserve(size_t(2 * ny));
        VecX y(ny);
        const ReducedQpResult res = reduced_unilateral_qp(in.Mt, in.G, ny, in.W.data(), in.r.data(), warm, 50, ws,
                                                          y.data());
        REQUIRE(res.solved);
        worst = std::max(worst, res.iterations);
        int F = 0, Z = 0, D = 0;
        check_kkt(in, ws, y, F, Z, D);
        int lifted = 0;
        for (int i = 0; i < ny; ++i) lifted += y[i] == 0;
        CHECK(lifted > 0);  // some rows lift off
        CHECK(lifted < ny);
        if (side == 10) {
          const VecX y_ref = dense_qp(in);
          // why the tolerance grows with W A: with stiff rows (W A up to 5e4 at E = 1e11) y = r - W G p
          // is a difference of terms ~W A y, so either solver pins y only to ~eps W A cond; the
          // objectives agree to 1e-13 W A and the y to 1e-9 W A
          const VecX wa_i = in.W.cwiseProduct(in.A().diagonal());
          const double wa = wa_i.maxCoeff();
          INFO("objectives " << y.squaredNorm() / 2 << " vs " << y_ref.squaredNorm() / 2 << ", rel " << std::abs(y.squaredNorm() / y_ref.squaredNorm() - 1));
          CHECK(std::abs(y.squaredNorm() - y_ref.squaredNorm()) <= 1e-13 * std::max(1.0, wa) * y_ref.squaredNorm());
          CHECK((y - y_ref).cwiseAbs().maxCoeff() <= 1e-9 * std::max(1.0, wa) * (1 + y_ref.cwiseAbs().maxCoeff()));
        }
      }
  INFO("most pieces " << worst);
  CHECK(worst <= 20);
}

TEST_CASE("compliant reduced QP: a warm start from the solution settles in one piece", "[compliant]") {
  std::mt19937 rng(11);
  std::srand(11);
  const Instance in = random_instance(rng, 6, 100, 1e3);
  ReducedQpWorkspace ws(6, 100);
  std::vector<int> warm;
  warm.reserve(200);
  VecX y(100), y2(100);
  REQUIRE(reduced_unilateral_qp(in.Mt, in.G, 100, in.W.data(), in.r.data(), warm, 50, ws, y.data()).solved);
  const ReducedQpResult again = reduced_unilateral_qp(in.Mt, in.G, 100, in.W.data(), in.r.data(), warm, 50, ws, y2.data());
  REQUIRE(again.solved);
  CHECK(again.iterations == 1);
  CHECK((y2 - y).cwiseAbs().maxCoeff() <= 1e-12 * (1 + y.cwiseAbs().maxCoeff()));
  // a budget too small for a cold start returns unsolved and leaves y and warm alone
  warm.clear();
  VecX y3 = VecX::Constant(100, -7);
  const ReducedQpResult cut = reduced_unilateral_qp(in.Mt, in.G, 100, in.W.data(), in.r.data(), warm, 1, ws, y3.data());
  if (!cut.solved) {
    CHECK(warm.empty());
    CHECK(y3.maxCoeff() == -7);
  }
}

TEST_CASE("compliant reduced QP: phase 2 alone (after one piece) reaches the dense QP's solution", "[compliant]") {
  // every instance handed to the dual active set after a single block-pivoting piece, from a poor
  // start: rows coupled positively (A_ij > 0, the F rows of the .h) and the random rows above
  std::mt19937 rng(21);
  std::srand(21);
  std::uniform_real_distribution<double> U(-1, 1), P(0, 1);
  int n_total = 0, n_phase2 = 0, worst = 0;
  for (int kind = 0; kind < 2; ++kind)
    for (int n : {2, 6})
      for (int ny : {n + 1, 30, 120})
        for (double w_max : {1e0, 1e3, 1e5})
          for (int rep = 0; rep < 3; ++rep) {
            INFO("kind " << kind << ", n " << n << ", ny " << ny << ", W max " << w_max << ", rep " << rep);
            Instance in = random_instance(rng, n, ny, w_max);
            if (kind == 0) {
              // positive rows and M~ = I: A = G G^T > 0 elementwise; r mixed in sign
              in.Mt = MatX::Identity(n, n);
              for (int i = 0; i < ny; ++i)
                for (int k = 0; k < n; ++k) in.G(i, k) = P(rng) + 0.1;
            }
            const Cold c(in, 1);
            const ReducedQpWorkspace& ws = c.ws;
            const VecX& y = c.y;
            const ReducedQpResult& res = c.res;
            ++n_total;
            REQUIRE(res.solved);
            n_phase2 += res.active_set_pieces > 0;
            worst = std::max(worst, res.active_set_pieces);
            const VecX y_ref = dense_qp(in);
            CHECK((y - y_ref).cwiseAbs().maxCoeff() <= 1e-9 * (1 + y_ref.cwiseAbs().maxCoeff()));
            int F = 0, Z = 0, D = 0;
            check_kkt(in, ws, y, F, Z, D);
          }
  INFO(n_phase2 << " of " << n_total << " went to phase 2, at most " << worst << " pieces there");
  CHECK(n_phase2 >= n_total / 2);
}

namespace {

// B4 with side x side elements (bench/paper/compliant_figs.py foundation_yaml: the same element points,
// K = E * A_el / 1 m), load F straight down, rotating
Scene b4_scene(int side, double E, double F) {
  std::ifstream f(std::string(BIGSTEP_SOURCE_DIR) + "/configs/box_foundation.yaml");
  std::stringstream buf;
  buf << f.rdbuf();
  std::string text = buf.str();
  const size_t start = text.find("      points: [");
  const size_t end = text.find("]]", start) + 2;
  std::string pts = "      points: [";
  char c[96];
  for (int i = 0; i < side; ++i)
    for (int j = 0; j < side; ++j) {
      std::snprintf(c, sizeof c, "%s[%.6f, %.6f, -0.5]", i + j ? ", " : "", -0.5 + (i + 0.5) / side,
                    -0.5 + (j + 0.5) / side);
      pts += c;
    }
  text = text.substr(0, start) + pts + "]" + text.substr(end);
  auto num = [&](double x) {
    std::snprintf(c, sizeof c, "%.17g", x);
    return std::string(c);
  };
  return load_scene_text(text, "b4_" + std::to_string(side),
                         {"compliant.normal_stiffness=" + num(E * (1.0 / (side * side)) / 1.0),
                          "control.load.force=[0, 0, " + num(-F) + "]",
                          "compliant.max_contacts=" + std::to_string(side * side)});
}

}  // namespace

TEST_CASE("compliant reduced QP: the B4 step that cycled (900 elements, E = 1e10, 50 N) settles without the dense QP",
          "[compliant]") {
  // bench/paper/compliant_figs.py's B4 run: step 53's block pivoting cycles (it fell back to the dense
  // 900-row QP: 26 s of a 1.4 s run). The steps as simulate() runs them; the N-step's QP of step
  // 53 re-solved from the active set it started from.
  const Scene sc = b4_scene(30, 1e10, 50);
  const auto integ = make_integrator(sc);
  const Model& m = sc.model;
  RolloutParams rp = integ->default_params();
  Data d = integ->make_data();
  PointLoadScratch load_scratch(m);
  const double dt = sc.compliant.dt;
  VecX th_n = sc.theta0, th_nm1 = sc.theta0 - dt * sc.theta_dot0;
  std::vector<int> warm;
  warm.reserve(2 * 900);
  int fallbacks = 0;
  for (int k = 0; k < 53; ++k) {
    StepControl u{sc.tau, nullptr, k * dt};
    add_point_load(m, sc.load, th_n, k * dt, load_scratch, u.tau);
    warm = d.qp_active;
    d.theta = th_n;
    d.theta_prev = th_nm1;
    const StepStats st = integ->step(d, u, rp);
    REQUIRE(st.converged());
    fallbacks += st.fallbacks;
    th_nm1 = th_n;
    th_n = d.theta;
  }
  CHECK(fallbacks == 0);
  // the QP of step 53 (frictionless: the N-step once; W in lam_prev, r = q in qd)
  const auto& ws = static_cast<const CompliantWorkspace&>(*d.ws);
  const int ny = ws.rows.ny;
  REQUIRE(ny > 600);  // the elements in contact
  Instance in;
  in.Mt = ws.Mt;
  in.G = ws.rows.G.topRows(ny);
  in.W = ws.lam_prev.head(ny);
  in.r = ws.qd.head(ny);
  ReducedQpWorkspace rws(6, ny);
  VecX y(ny);
  const std::vector<int> warm53 = warm;
  const ReducedQpResult res = reduced_unilateral_qp(in.Mt, in.G, ny, in.W.data(), in.r.data(), warm, 100, rws, y.data());
  INFO("pieces " << res.iterations << ", of which phase 2 " << res.active_set_pieces);
  // both phases allocation-free (the step's workspace rule): the same solve again, counted
  long mallocs = -1;
  {
    warm.assign(warm53.begin(), warm53.end());  // capacity reserved above
    VecX y2(ny);
    test::MallocCounter count;
    reduced_unilateral_qp(in.Mt, in.G, ny, in.W.data(), in.r.data(), warm, 100, rws, y2.data());
    mallocs = count.count();
  }
  CHECK(mallocs == 0);
  REQUIRE(res.solved);
  CHECK(res.active_set_pieces > 0);  // block pivoting alone still cycles here: this is the instance
  CHECK((y - ws.lam.head(ny)).cwiseAbs().maxCoeff() == 0);  // what the step used
  int F = 0, Z = 0, D = 0;
  check_kkt(in, rws, y, F, Z, D);
  CHECK(Z > 0);
  // the dense QP (the former fallback), cold: the same objective, the same force on the box
  // (G^T y) to 1e-9 relative. why y itself only to 1e-9 of max |r|: the stiff rows (r up to 3e4
  // for y <= 0.4) are met by either solver to ~1e-10 of r (dense: -7e-6, this one: -2e-6), and
  // y moves by as much (e.g. a row with a = t, on the edge of F and T); observed 6e-6 apart,
  // objectives 2e-11 apart, G^T y 5e-10
  const VecX y_ref = dense_qp(in);
  CHECK(std::abs(y.squaredNorm() / y_ref.squaredNorm() - 1) <= 1e-10);
  CHECK((in.G.transpose() * (y - y_ref)).norm() <= 1e-9 * (in.G.transpose() * y_ref).norm());
  CHECK((y - y_ref).cwiseAbs().maxCoeff() <= 1e-9 * in.r.cwiseAbs().maxCoeff());
}
