// The compliant solver's test oracles 8, 15 and 17 (docs/methods/compliant.md §11):
//  8  strict convexity / feasibility: the joint program's H of §7.2 (from the formula of docs/methods/compliant.md §7.2) is
//     positive definite for every assembled problem, and lambda_t = 0 with large enough normal /
//     unilateral forces is feasible;
//  15 sparsity: in a chain of N spheres each contact meets only the contacts of its two spheres, a
//     3 x 3 (n, r, s) block each, at most 18 N non-zeros in a triangle of the problem matrix A*;
//  17 B4 accuracy: the box on the elastic foundation with the rotating load against a reference ODE
//     of the penalty model lambda = max(0, -K phi - B phi_dot) (RK4 at 1e-5 s, written here).
#include <catch2/catch.hpp>

#include <array>
#include <cmath>

#include "batch/rollout.h"
#include "io/scene.h"
#include "solvers/compliant/compliant_step.h"
#include "numerics/lcp_lemke.h"
#include "tests/support/sphere_stack.h"

using namespace bigstep;

namespace {

Scene scene(const char* cfg, std::vector<std::string> ov = {}) {
  return load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/" + cfg, ov);
}

// ---------------------------------------------------------------------------------------------
// Oracle 17: B4 reference ODE. A rigid cube (s = 1 m, 8 kg, I = m s^2 / 6 about every axis) on a
// 10 x 10 grid of Winkler elements at its bottom-face points c_i (cell centres), each pushing up
// with lambda_i = max(0, -K z_i - B z_dot_i) while z_i < 0 (z_i = the element's height above the
// undeformed top z = 0); gravity g = 9.81; the load F straight down at body point
// (s/2)(cos 10t, sin 10t, 1). State y = (p, quaternion q (w, x, y, z), v, omega world).
struct B4Ode {
  double K, B, F;
  static constexpr double m = 8, I = 8.0 / 6.0, g = 9.81;
  std::vector<Vec3> c;  // element points, body frame
  explicit B4Ode(double K_, double B_, double F_) : K(K_), B(B_), F(F_) {
    for (int i = 0; i < 10; ++i)
      for (int j = 0; j < 10; ++j) c.emplace_back(-0.45 + 0.1 * i, -0.45 + 0.1 * j, -0.5);
  }
  using Y = Eigen::Matrix<double, 13, 1>;
  Y f(double t, const Y& y) const {
    const Vec3 p = y.segment<3>(0), v = y.segment<3>(7), w = y.segment<3>(10);
    const Eigen::Quaterniond q(y[3], y[4], y[5], y[6]);
    const Mat3 R = q.normalized().toRotationMatrix();
    Vec3 force(0, 0, -m * g), torque = Vec3::Zero();
    for (const Vec3& ci : c) {
      const Vec3 r = R * ci, x = p + r;
      if (x.z() >= 0) continue;  // not touching: no element force
      const double zd = (v + w.cross(r)).z();
      const double lam = std::max(0.0, -K * x.z() - B * zd);
      force.z() += lam;
      torque += r.cross(Vec3(0, 0, lam));
    }
    const Vec3 rl = R * Vec3(0.5 * std::cos(10 * t), 0.5 * std::sin(10 * t), 0.5);
    force.z() -= F;
    torque += rl.cross(Vec3(0, 0, -F));
    Y d;
    d.segment<3>(0) = v;
    // q_dot = 1/2 (0, omega) q (omega in the world frame)
    const Eigen::Quaterniond wq(0, w.x(), w.y(), w.z());
    const Eigen::Quaterniond qd = wq * q;
    d[3] = 0.5 * qd.w();
    d[4] = 0.5 * qd.x();
    d[5] = 0.5 * qd.y();
    d[6] = 0.5 * qd.z();
    d.segment<3>(7) = force / m;
    d.segment<3>(10) = torque / I;  // isotropic inertia: omega x (I omega) = 0
    return d;
  }
  // (p, q) after T seconds from rest, touching, undeformed
  void run(double T, double dt, Vec3& p, Eigen::Quaterniond& q) const {
    Y y = Y::Zero();
    y[2] = 0.5;
    y[3] = 1;
    const int n = int(std::lround(T / dt));
    for (int k = 0; k < n; ++k) {
      const double t = k * dt;
      const Y k1 = f(t, y), k2 = f(t + dt / 2, y + dt / 2 * k1), k3 = f(t + dt / 2, y + dt / 2 * k2),
              k4 = f(t + dt, y + dt * k3);
      y += dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
      y.segment<4>(3).normalize();
    }
    p = y.segment<3>(0);
    q = Eigen::Quaterniond(y[3], y[4], y[5], y[6]);
  }
};

}  // namespace

TEST_CASE("compliant oracle 17: B4 (100 elements, E = 1e7, rotating load) against a reference ODE", "[compliant]") {
  // [ours] error after 1 s, norm of [p; quaternion]: 1.4e-7 (5 N), 1.9e-6 (50 N); bound 1e-5
  for (double F : {5.0, 50.0}) {
    INFO("load " << F << " N");
    const Scene sc = scene("box_foundation.yaml", {"control.load.force=[0, 0, " + std::to_string(-F) + "]"});
    REQUIRE(sc.load.active());
    const Rollout r = simulate(sc);
    REQUIRE(r.steps_run == 100);
    for (const StepStats& st : r.stats) REQUIRE(st.converged());
    Kinematics kin(sc.model);
    forward_kinematics(sc.model, r.theta.back(), kin);
    const Vec3 p_c = kin.t[0];
    Eigen::Quaterniond q_c(kin.R[0]);
    Vec3 p_ref;
    Eigen::Quaterniond q_ref;
    B4Ode(1e5, 1.0, F).run(1.0, 1e-5, p_ref, q_ref);
    if (q_c.coeffs().dot(q_ref.coeffs()) < 0) q_c.coeffs() *= -1;
    Eigen::Matrix<double, 7, 1> e;
    e << p_c - p_ref, q_c.w() - q_ref.w(), q_c.vec() - q_ref.vec();
    INFO("reference p " << p_ref.transpose() << ", q " << q_ref.coeffs().transpose());
    INFO("compliant p " << p_c.transpose() << ", q " << q_c.coeffs().transpose());
    INFO("error " << e.norm());
    // the load matters at this scale: the box sinks by (m g + F) / (100 K) and tilts
    CHECK(0.5 - p_ref.z() == Approx((8 * 9.81 + F) / 1e7).epsilon(0.05));
    CHECK(q_ref.vec().norm() > 1e-7 * F);
    CHECK(e.norm() < 1e-5);
  }
}

namespace {

// one rollout of the compliant integrator from rest at theta0
struct Stepper {
  std::unique_ptr<CompliantIntegrator> integ;
  Data d;
  RolloutParams p;
  Stepper(const Model& m, const CompliantSettings& s, const VecX& th0)
      : integ(std::make_unique<CompliantIntegrator>(m, s)), d(integ->make_data()), p(integ->default_params()) {
    d.theta = th0;
    d.theta_prev = th0;
  }
  StepStats step() { return integ->step(d, StepControl{}, p); }
  const CompliantWorkspace& ws() const { return static_cast<const CompliantWorkspace&>(*d.ws); }
};

using MatL = Eigen::Matrix<long double, Eigen::Dynamic, Eigen::Dynamic>;

// Oracle 8 on the problem the last step assembled: H of (180) from the step's A*, W, zeta (in long
// double, so that lambda_min = min(zeta, 1) is resolved next to |H| ~ (h B_t |A|)^2), and a feasible
// start point lambda_t = 0, y = t z with z >= 0, (I + W A_yy) z >= 1 (Lemke on the P-matrix LCP).
// Returns lambda_min(H) / min(zeta, 1).
double check_oracle8(const CompliantWorkspace& ws, double h, double zeta, bool joint_mode) {
  const CompliantRows& R = ws.rows;
  const int n = R.R, ny = R.ny, nx = R.nx;
  MatL H = MatL::Zero(n, n), Qt = MatL::Zero(nx, n);
  for (int i = 0; i < nx; ++i)
    for (int j = 0; j < n; ++j) {
      const long double W = h * h * R.K[ny + i] + h * R.B[ny + i];
      Qt(i, j) = (j == ny + i ? 1.0L : 0.0L) + W * (long double)ws.A(ny + i, j);
    }
  H = Qt.transpose() * Qt;
  for (int i = 0; i < n; ++i) H(i, i) += i < ny ? zeta : 1.0L;
  if (joint_mode && nx > 0) {
    // the solver's own H (row-major in ws.H) is (180)
    long double hmax = H.cwiseAbs().maxCoeff();
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) REQUIRE(std::abs(ws.H[size_t(a) * n + b] - H(a, b)) <= 1e-12L * hmax);
  }
  Eigen::SelfAdjointEigenSolver<MatL> es(H, Eigen::EigenvaluesOnly);
  const double ratio = double(es.eigenvalues().minCoeff() / std::min<long double>(zeta, 1.0L));
  // feasibility of the start point: rows scaled by 1/max(1, W) as in the solver
  MatX Ms(ny, ny);
  VecX qs(ny), one = VecX::Ones(ny), z(ny), w(ny);
  for (int i = 0; i < ny; ++i) {
    const double W = h * h * R.K[i] + h * R.B[i], s = 1 / std::max(1.0, W);
    for (int j = 0; j < ny; ++j) Ms(i, j) = s * ((i == j ? 1.0 : 0.0) + W * ws.A(i, j));
    qs[i] = s * ws.qd[i];
  }
  if (ny > 0) {
    LcpWorkspace lcp(ny);
    int pivots = 0;
    double err = 0;
    REQUIRE(lcp.solve(Ms, -one, z, w, pivots, err) == LcpStatus::Solved);  // M z - 1 >= 0, z >= 0
    const double t = std::max(0.0, qs.maxCoeff()) + 1;
    const VecX slack = Ms * (t * z) - qs;
    CHECK(z.minCoeff() >= 0);
    CHECK(slack.minCoeff() >= -1e-9 * (1 + qs.cwiseAbs().maxCoeff()));
  }
  return ratio;
}

// N spheres r = 0.1, 1 kg, each 2 mm along x and 1.5 mm along y to the side of the one below and
// touching it (a leaning chain): sphere-sphere normals off every axis
Model leaning_chain(int N, VecX& th0) {
  const Model m = test::sphere_stack_model(N, 0, 0);
  th0 = VecX::Zero(m.n_q);
  const double dx = 0.002, dy = 0.0015, dz = std::sqrt(0.2 * 0.2 - dx * dx - dy * dy) - 1e-5;  // 10 um overlap
  for (int i = 0; i < N; ++i) {
    th0[6 * i] = dx * i;
    th0[6 * i + 1] = dy * i;
    th0[6 * i + 2] = 0.1 - 1e-5 + dz * i;
  }
  return m;
}

}  // namespace

TEST_CASE("compliant oracle 8: H of (180) is positive definite and lambda_t = 0, large y is feasible", "[compliant]") {
  int checked = 0;
  // B5 incline (4 feet, sliding / sticking), staggered and the paper's joint program; B4; a stack
  for (const auto& [mu, solve] : {std::pair{0.125, "staggered"}, std::pair{0.375, "staggered"}, std::pair{0.125, "joint"}}) {
    INFO("incline mu " << mu << " " << solve);
    const Scene sc = scene("incline_box.yaml", {"contact.mu=" + std::to_string(mu), std::string("compliant.friction_solve=") + solve});
    Stepper r(sc.model, sc.compliant, sc.theta0);
    for (int i = 0; i < 8; ++i) {
      r.step();
      if (r.ws().rows.R == 0) continue;
      CHECK(check_oracle8(r.ws(), sc.compliant.dt, 1 / sc.compliant.dt, std::string(solve) == "joint") >= 0.99);
      ++checked;
    }
  }
  {
    const Scene sc = scene("box_foundation.yaml");
    Stepper r(sc.model, sc.compliant, sc.theta0);
    for (int i = 0; i < 3; ++i) {
      r.step();
      CHECK(check_oracle8(r.ws(), sc.compliant.dt, 1 / sc.compliant.dt, false) >= 0.99);
      ++checked;
    }
  }
  {
    VecX th0;
    const Model m = leaning_chain(6, th0);
    CompliantSettings s;
    s.mu = 0.5;
    Stepper r(m, s, th0);
    for (int i = 0; i < 3; ++i) {
      r.step();
      REQUIRE(r.ws().rows.nc == 6);
      CHECK(check_oracle8(r.ws(), s.dt, 1 / s.dt, false) >= 0.99);
      ++checked;
    }
  }
  CHECK(checked >= 25);
}

TEST_CASE("compliant oracle 15: a chain of N spheres gives dense 3 x 3 contact blocks, <= 18 N non-zeros", "[compliant]") {
  // Contacts k = 0 (ground - s0) and k = i (s_{i-1} - s_i). The problem matrix A* = G* M~^-1 G*^T
  // couples two contacts only through a shared sphere (M~ is block diagonal for free spheres), so
  // its (n, r, s) x (n, r, s) blocks are nonzero only for |k - l| <= 1: the diagonal blocks and
  // the blocks of neighbours, 3 x 3 each (dense at most: for spheres, whose inertia is isotropic,
  // a contact's own block is diagonal in (n, t1, t2)). One triangle of blocks then holds at most
  // 9 N + 9 (N - 1) <= 18 N entries (paper §6.5). (The joint program's H of (180) squares
  // A*'s tangential rows, which couples contacts two apart: its bandwidth is 2 blocks.)
  for (int N : {4, 10}) {
    INFO(N << " spheres");
    VecX th0;
    const Model m = leaning_chain(N, th0);
    CompliantSettings s;
    s.mu = 0.5;
    Stepper r(m, s, th0);
    r.step();
    const CompliantWorkspace& ws = r.ws();
    const CompliantRows& R = ws.rows;
    REQUIRE(R.nc == N);
    REQUIRE(R.tdim == 2);
    // the chain position of each contact row: 0 for the ground, i for s_{i-1} - s_i
    std::vector<int> pos(size_t(N), 0);
    for (int c = 0; c < N; ++c) {
      const Contact& con = R.set.con[R.con[c]];
      pos[size_t(c)] = con.link_b < 0 ? 0 : std::max(con.link_a, con.link_b);
    }
    auto rows_of = [&](int c) { return std::array<int, 3>{c, R.ny + 2 * c, R.ny + 2 * c + 1}; };
    const double amax = ws.A.topLeftCorner(R.R, R.R).cwiseAbs().maxCoeff();
    int nnz_triangle = 0, nnz = 0;
    for (int c = 0; c < N; ++c)
      for (int d = 0; d < N; ++d) {
        const bool share = std::abs(pos[size_t(c)] - pos[size_t(d)]) <= 1;
        for (int a : rows_of(c))
          for (int b : rows_of(d)) {
            const double v = std::abs(ws.A(a, b));
            if (!share) CHECK(v <= 1e-14 * amax);  // no coupling without a shared sphere
            if (v > 1e-14 * amax) {
              ++nnz;
              if (pos[size_t(c)] <= pos[size_t(d)]) ++nnz_triangle;
            }
          }
        if (share) CHECK(std::abs(ws.A(c, d)) > 1e-6 * amax);  // neighbours' normal rows do couple
      }
    INFO("non-zeros: " << nnz << " in A*, " << nnz_triangle << " in one triangle of blocks");
    CHECK(nnz_triangle <= 18 * N);
    CHECK(nnz <= 27 * N - 18);
  }
}
