// The compliant solver against its test oracles (docs/methods/compliant.md §11):
// SMD stability regions (1), L-stability (2), reduction to implicit Euler (3), O(h^2) drift (4),
// O(h) energy error (5), dead impact / restitution vs h omega (6), redundancy (7), mu = 0 (9),
// stiction (10), incline distances (11), friction on the cone boundary (12), total normal force
// (13), sphere stacks (14), stiffness does not raise the cost (16); imported gymnasium models.
// Scenes are the configs/ files (B2-B5) or built here; every run is short (the 50-sphere stack
// starts at its rest depths).
#include <catch2/catch.hpp>

#include <cmath>
#include <complex>

#include "batch/batch.h"
#include "batch/rollout.h"
#include "io/scene.h"
#include "solvers/compliant/compliant_step.h"
#include "tests/support/sphere_stack.h"
#include "tests/support/tol.h"

using namespace bigstep;

namespace {

constexpr double kPi = 3.14159265358979323846;

// spectral radius of a 2 x 2 matrix
double rho2(double a, double b, double c, double d) {
  const std::complex<double> tr = a + d, det = a * d - b * c;
  const std::complex<double> s = std::sqrt(tr * tr - 4.0 * det);
  return std::max(std::abs((tr + s) / 2.0), std::abs((tr - s) / 2.0));
}

// one rollout of an integrator from (theta0, theta_dot0)
struct Run {
  std::unique_ptr<CompliantIntegrator> integ;
  Data d;
  RolloutParams p;
  Run(const Model& m, const CompliantSettings& s, const VecX& th0, const VecX& thd0)
      : integ(std::make_unique<CompliantIntegrator>(m, s)), d(integ->make_data()), p(integ->default_params()) {
    d.theta = th0;
    d.theta_prev = th0 - s.dt * thd0;
  }
  StepStats step() { return integ->step(d, StepControl{}, p); }
  VecX v() const { return (d.theta - d.theta_prev) / integ->settings().dt; }
  const CompliantWorkspace& ws() const { return static_cast<const CompliantWorkspace&>(*d.ws); }
};

// a 1 kg slider on a prismatic x joint, no gravity (B1), optionally limited to [0, 10]
Model slider(bool limited) {
  ModelSpec spec;
  LinkSpec l;
  l.name = "mass";
  l.joint = JointType::Prismatic;
  l.axis = Vec3::UnitX();
  l.mass = 1;
  l.inertia = Mat3::Identity();
  l.limited = limited;
  l.range[0] = 0;
  l.range[1] = 10;
  spec.links = {l};
  spec.gravity = Vec3::Zero();
  return Model::finalize(spec);
}

CompliantSettings smd_settings(double h, double k, double b) {
  CompliantSettings s;
  s.dt = h;
  s.rows.loops = {CompliantLoop{0, Vec3::Zero(), -1, Vec3::Zero(), k, b}};
  return s;
}

// implicit Euler of m x'' + b x' + k x = 0 (docs/methods/compliant.md §9 (13)-(14)): y1 = [[1, -h], [hk/m, 1 + hb/m]]^-1 y0
void implicit_euler(double h, double k, double b, double m, double& x, double& v) {
  const double a11 = 1, a12 = -h, a21 = h * k / m, a22 = 1 + h * b / m, det = a11 * a22 - a12 * a21;
  const double x1 = (a22 * x - a12 * v) / det, v1 = (-a21 * x + a11 * v) / det;
  x = x1;
  v = v1;
}

std::string num(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.17g", x);
  return b;
}

Scene scene(const char* cfg, std::vector<std::string> ov = {}) {
  return load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/" + cfg, ov);
}

// max |phi| of the B2 closure and the energy error after 1 s at step h
void pendulum_drift(double h, double& max_phi, double& energy_err) {
  const Scene sc = scene("pendulum_absolute.yaml", {"integrator.dt=" + num(h)});
  CompliantSettings s = sc.compliant;
  Run r(sc.model, s, sc.theta0, sc.theta_dot0);
  max_phi = 0;
  const int n = int(std::lround(1.0 / h));
  for (int i = 0; i < n; ++i) {
    REQUIRE(r.step().converged());
    // phi = p + R(theta) u with u = (-1, 0, 0): (x - cos th, z + sin th) for a y rotation
    const double x = r.d.theta[0], z = r.d.theta[1], th = r.d.theta[2];
    max_phi = std::max(max_phi, std::hypot(x - std::cos(th), z + std::sin(th)));
  }
  const VecX v = r.v();
  const double E = 0.5 * (v[0] * v[0] + v[1] * v[1]) + 0.5 * 0.01 * v[2] * v[2] + 9.81 * r.d.theta[1];
  energy_err = std::abs(E);  // starts at rest at z = 0: E(0) = 0
}

// B3 restitution: the pendulum reaches the stop (theta = 0) at speed sqrt(2 g L); coefficient of
// restitution = speed after / speed before, over the contact (gravity over the contact time is
// negligible: 1e-5 s x 9.81 rad/s^2)
double restitution(double h) {
  const Scene sc = scene("pendulum_limit.yaml", {"integrator.dt=" + num(h)});
  const double w0 = -std::sqrt(2 * 9.81);
  VecX th0(1), thd0(1);
  th0[0] = 0;
  thd0[0] = w0;
  Run r(sc.model, sc.compliant, th0, thd0);
  for (int i = 0; i < 1000000; ++i) {
    REQUIRE(r.step().converged());
    if (r.d.theta[0] > 0 && r.d.theta_prev[0] > 0 && r.v()[0] >= 0) return r.v()[0] / -w0;
    if (i * h > 1e-4) return r.v()[0] / -w0;  // stuck at the stop
  }
  return -1;
}

// B5 on the 15 deg incline for 1 s: distance along the slope; optional per-step check
template <class F>
double incline(double mu, std::vector<std::string> ov, F&& each_step, bool require_converged = true) {
  ov.push_back("contact.mu=" + num(mu));
  const Scene sc = scene("incline_box.yaml", ov);
  Run r(sc.model, sc.compliant, sc.theta0, sc.theta_dot0);
  for (int i = 0; i < sc.steps(); ++i) {
    const StepStats st = r.step();
    if (require_converged) REQUIRE(st.converged());
    each_step(i, r, st);
  }
  return r.d.theta[0] - sc.theta0[0];
}
double incline(double mu, std::vector<std::string> ov = {}) {
  return incline(mu, std::move(ov), [](int, const Run&, const StepStats&) {});
}

}  // namespace

TEST_CASE("compliant oracle 1: SMD stability regions of explicit, semi-implicit and implicit Euler", "[compliant]") {
  // explicit Euler A = [[1, h], [-hk/m, 1 - hb/m]], m = 1, h = 1e-5, k = 1e6 (paper Fig. 1; docs/methods/compliant.md §9)
  const double h = 1e-5, k = 1e6;
  auto expl = [&](double b) { return rho2(1, h, -h * k, 1 - h * b); };
  CHECK(expl(1) == Approx(1.0000450).epsilon(1e-7));
  CHECK(expl(10) == Approx(1.0).epsilon(1e-7));
  CHECK(expl(2e5) == Approx(0.99995).epsilon(1e-6));
  CHECK(expl(2.1e5) == Approx(1.09995).epsilon(1e-5));
  // its stability region hk < b < (4m + h^2 k) / (2h) (errata A7: conditionally stable)
  for (double b : {1.0, 10.0, 11.0, 1e3, 2e5, 2.0000049e5, 2.1e5})
    CHECK((expl(b) < 1 - 1e-12) == (h * k < b && b < (4 + h * h * k) / (2 * h)));
  // semi-implicit Euler (11)-(12): v1 = v0 + h (-k x0 - b v1) / m, x1 = x0 + h v1; m = 1, b = 1,
  // h = 1e-3 (Fig. 2); threshold h^2 k < 4m + 2hb
  auto semi = [](double hh, double kk, double b) {
    const double c = 1 / (1 + hh * b);
    return rho2(1 - hh * hh * kk * c, hh * c, -hh * kk * c, c);
  };
  CHECK(semi(1e-3, 1e6, 1) == Approx(0.99950).epsilon(1e-5));
  CHECK(semi(1e-3, 1e7, 1) == Approx(7.864).epsilon(1e-3));
  CHECK(semi(1e-3, 4.0e6, 1) < 1);
  CHECK(semi(1e-3, 4.004e6, 1) > 1);
  // implicit Euler: rho < 1 for every h, -> 0 as h -> inf (Fig. 3; m = 1, k = 1e6, b = 0)
  auto impl = [](double hh, double kk, double b) {
    const double a = 1, bb = -hh, c = hh * kk, d = 1 + hh * b, det = a * d - bb * c;
    return rho2(d / det, -bb / det, -c / det, a / det);
  };
  CHECK(impl(1e-5, 1e6, 0) == Approx(0.99995).epsilon(1e-6));
  CHECK(impl(1e-2, 1e6, 0) == Approx(0.0995).epsilon(1e-3));
  CHECK(impl(1e3, 1e6, 0) == Approx(1e-6).epsilon(1e-3));
  // the compliant step's own one-step matrix (columns from unit states) has the implicit radius
  for (double hh : {1e-5, 1e-2, 1e3}) {
    INFO("h = " << hh);
    const Model m = slider(false);
    double col[2][2];
    for (int c = 0; c < 2; ++c) {
      VecX th0(1), thd0(1);
      th0[0] = c == 0 ? 1 : 0;
      thd0[0] = c == 1 ? 1 : 0;
      Run r(m, smd_settings(hh, 1e6, 0), th0, thd0);
      r.step();
      col[0][c] = r.d.theta[0];
      col[1][c] = r.v()[0];
    }
    // (at h = 1e3 the columns are ~1e-6 and v = (x1 - x0) / h carries round-off of x0 / h)
    CHECK(rho2(col[0][0], col[0][1], col[1][0], col[1][1]) == Approx(impl(hh, 1e6, 0)).epsilon(1e-4));
  }
}

TEST_CASE("compliant oracle 3: a bilateral row reduces to implicit Euler; a unilateral row to max(0, .)",
          "[compliant]") {
  // bilateral phi = x (G = 1, G^dot = 0, M^ = m): (x1, v1) equal implicit Euler to round-off
  for (double h : {1e-4, 1e-2, 0.5})
    for (double k : {1.0, 1e6, 1e12})
      for (double b : {0.0, 3.0, 1e4}) {
        INFO("h " << h << " k " << k << " b " << b);
        const Model m = slider(false);
        VecX th0(1), thd0(1);
        th0[0] = 0.3;
        thd0[0] = -2;
        Run r(m, smd_settings(h, k, b), th0, thd0);
        double x = 0.3, v = -2;
        for (int i = 0; i < 5; ++i) {
          r.step();
          implicit_euler(h, k, b, 1, x, v);
          // v is recovered as (x1 - x0)/h from the position state: round-off of x / h
          CHECK(std::abs(r.d.theta[0] - x) <= 1e-12 * (1 + std::abs(x)));
          CHECK(std::abs(r.v()[0] - v) <= 1e-12 * (1 + std::abs(v)) + 4e-16 * (1 + std::abs(x)) / h);
        }
      }
  // unilateral stop at x >= 0 (phi = x): lambda = max(0, q / (1 + W A)); compressed and
  // approaching -> the implicit spring-damper force; fast separation -> no force (free flight)
  CompliantSettings s;
  s.dt = 1e-3;
  s.rows.k_lim = 1e6;
  s.rows.b_lim = 10;
  const Model m = slider(true);
  VecX th0(1), thd0(1);
  th0[0] = -1e-3;
  thd0[0] = -0.5;
  {
    Run r(m, s, th0, thd0);
    r.step();
    double x = -1e-3, v = -0.5;
    implicit_euler(s.dt, 1e6, 10, 1, x, v);
    CHECK(r.d.theta[0] == Approx(x).epsilon(1e-12));
    CHECK(r.ws().lam[0] > 0);
  }
  thd0[0] = 50;  // separating faster than the spring can push
  {
    Run r(m, s, th0, thd0);
    r.step();
    CHECK(r.ws().lam[0] == 0);
    CHECK(r.d.theta[0] == Approx(-1e-3 + s.dt * 50).epsilon(1e-14));
  }
}

TEST_CASE("compliant oracles 2, 4, 5: B2 pendulum bounded at any h with k = 1e15, O(h^2) drift, O(h) energy",
          "[compliant]") {
  double phi[3], energy[3];
  const double hs[3] = {1e-1, 1e-2, 1e-3};
  for (int i = 0; i < 3; ++i) {
    INFO("h = " << hs[i]);
    pendulum_drift(hs[i], phi[i], energy[i]);
    CHECK(std::isfinite(phi[i]));
    CHECK(phi[i] < 0.2);  // bounded (L-stable), even at h = 0.1 with k = 1e15
  }
  // [ours] max |phi| 1.48e-1 (0.1), 9.76e-4 (1e-2), 9.71e-6 (1e-3): second order
  CHECK(phi[0] == Approx(1.48e-1).epsilon(0.05));
  CHECK(phi[1] == Approx(9.76e-4).epsilon(0.05));
  CHECK(phi[2] == Approx(9.71e-6).epsilon(0.05));
  CHECK(phi[1] / phi[2] == Approx(100).epsilon(0.1));
  // energy error -> 0 linearly in h ([ours] 9.5e-2 at 1e-2, 8.9e-3 at 1e-3; paper's "exactly 0" is A10)
  CHECK(energy[1] / energy[2] == Approx(10).epsilon(0.2));
  CHECK(energy[2] < 2e-2);
}

TEST_CASE("compliant oracles 2, 6: B3 stop is bounded for h = 1e-5 .. 1e-8 (k = 1e12); restitution vs h omega",
          "[compliant]") {
  // omega = sqrt(k / I) = 1e6; implicit-Euler decay over the contact half-period for h omega <= 0.1
  auto formula = [](double hw) { return std::pow(1 + hw * hw, -kPi / (2 * hw)); };
  const double e5 = restitution(1e-5), e6 = restitution(1e-6), e7 = restitution(1e-7), e8 = restitution(1e-8);
  CHECK(e5 < 0.02);                           // dead impact ([ours] 0.0067)
  CHECK(e6 == Approx(0.25).margin(0.05));     // [ours] 0.25
  CHECK(e7 == Approx(formula(0.1)).epsilon(0.03));   // 0.855
  CHECK(e8 == Approx(formula(0.01)).epsilon(0.01));  // 0.984
  CHECK(e5 < e6);
  CHECK(e6 < e7);
  CHECK(e7 < e8);
  // whole B3 swing at h = 1e-5 .. 1e-4 stays bounded (no blow-up at 1e12)
  const Scene sc = scene("pendulum_limit.yaml", {"integrator.dt=1e-4"});
  Run r(sc.model, sc.compliant, sc.theta0, sc.theta_dot0);
  double th_min = 1;
  for (int i = 0; i < 10000; ++i) {
    REQUIRE(r.step().converged());
    th_min = std::min(th_min, r.d.theta[0]);
  }
  // the stop becomes a row at the first step that starts past it (onset resolved to O(h), A11):
  // at most one step of the impact speed sqrt(2 g L) beyond it
  CHECK(th_min > -1.1 * std::sqrt(2 * 9.81) * 1e-4);
  CHECK(r.d.theta.allFinite());
}

TEST_CASE("compliant oracle 7: a redundant bilateral row with K/2, B/2 each is harmless", "[compliant]") {
  const Scene sc = scene("pendulum_absolute.yaml", {"integrator.dt=0.01"});
  for (bool gdot : {false, true}) {
    INFO("gdot terms " << gdot);
    CompliantSettings one = sc.compliant, two = sc.compliant;
    one.rows.gdot = two.rows.gdot = gdot;
    one.rows.loops[0].k = two.rows.loops[0].k = 1e6;
    one.rows.loops[0].b = two.rows.loops[0].b = 10;
    two.rows.loops[0].k /= 2;
    two.rows.loops[0].b /= 2;
    two.rows.loops.push_back(two.rows.loops[0]);
    VecX thd0 = VecX::Zero(3);
    thd0 << 0.1, 0.3, -0.2;  // moving, so G^dot v != 0
    Run a(sc.model, one, sc.theta0, thd0), b(sc.model, two, sc.theta0, thd0);
    for (int i = 0; i < 5; ++i) {
      REQUIRE(a.step().converged());
      REQUIRE(b.step().converged());
    }
    CHECK((a.d.theta - b.d.theta).norm() <= 1e-12);
    // the forces: each redundant row carries half (exactly without G^dot terms, whose pseudo-inverse
    // share is a basic solution here, docs/methods/compliant.md §13 A1); their sum is the single row's
    for (int r = 0; r < 3; ++r) {
      CHECK(b.ws().lam_b[r] + b.ws().lam_b[3 + r] == Approx(a.ws().lam_b[r]).margin(1e-9));
      if (!gdot) CHECK(b.ws().lam_b[r] == Approx(0.5 * a.ws().lam_b[r]).margin(1e-9));
    }
  }
}

TEST_CASE("compliant oracles 9, 11, 12, 13: B5 incline: mu = 0 has no friction, distances within 2 %, "
          "friction on the cone while sliding, total normal force", "[compliant]") {
  const double g = 9.81, s15 = std::sin(kPi / 12), c15 = std::cos(kPi / 12);
  // [ours] 0.505 g (sin 15 - mu cos 15) (the discrete constant-acceleration value h^2 N (N+1) / 2 a)
  auto expected = [&](double mu) { return 0.505 * g * (s15 - mu * c15); };
  // mu = 0: no tangent rows at all, so no friction force
  const double d0 = incline(0, {}, [](int, const Run& r, const StepStats&) { CHECK(r.ws().rows.nx == 0); });
  CHECK(d0 == Approx(expected(0)).epsilon(0.02));
  // mu = 0.125: friction on the cone boundary, opposing the slip, at every step after touchdown
  double fn_sum = 0;
  int fn_count = 0;
  const double d1 = incline(0.125, {}, [&](int i, const Run& r, const StepStats& st) {
    const CompliantWorkspace& ws = r.ws();
    if (i < 10) return;
    fn_sum += st.normal_force;
    ++fn_count;
    for (int c = 0; c < ws.rows.nc; ++c) {
      const double fn = ws.lam[c], fr = ws.lam[ws.rows.ny + 2 * c], fs = ws.lam[ws.rows.ny + 2 * c + 1];
      CHECK(std::hypot(fr, fs) == Approx(0.125 * fn).epsilon(1e-6));
      // t1 = e_x on the ground: the box slides along +x, friction pushes along -x
      CHECK(fr < 0);
    }
  });
  CHECK(d1 == Approx(expected(0.125)).epsilon(0.02));
  // oracle 13: total normal force m g cos 15 = 9.476 N within 1 % (mean over the sliding steps)
  CHECK(fn_sum / fn_count == Approx(g * c15).epsilon(0.01));
  const double d2 = incline(0.25);
  CHECK(d2 == Approx(expected(0.25)).epsilon(0.02));
}

TEST_CASE("compliant oracle 10: stiction at mu = 0.375 on the 15 deg incline; cone options agree", "[compliant]") {
  CHECK(std::abs(incline(0.375)) < 1e-3);
  // the polyhedral cone (k = 8, inscribed) has a vertex on the slip direction: same distance
  CHECK(incline(0.125, {"compliant.friction_cone=polyhedral"}) == Approx(incline(0.125)).epsilon(0.02));
  // the 2-D form on a planar box (x, z, ry)
  CHECK(incline(0.125, {"model.links[0].joint=planar", "initial.theta=[0, 0.035, 0]", "compliant.friction_cone=cone2d"}) ==
        Approx(0.505 * 9.81 * (std::sin(kPi / 12) - 0.125 * std::cos(kPi / 12))).epsilon(0.02));
}

TEST_CASE("compliant: the paper's joint program satisfies its constraints and over-predicts normal forces (A2)",
          "[compliant]") {
  // docs/methods/compliant.md §7.5 / errata A2: in the single program only the zeta-weighted penalty bounds lambda_n,
  // and the beta terms (weight ~ B_t^2) gain from larger normal forces. Here, with the paper's
  // values, the touchdown normal force is several times m g cos 15 even at mu = 0.375 (our
  // prototype saw this while sliding); later steps throw the box off and fail, which is flagged.
  // What must hold at every solved step: lambda_n >= 0 and every friction force inside its cone.
  double fn_joint = 0, fn_staggered = 0;
  int solved = 0;
  incline(0.375, {"compliant.friction_solve=joint"}, [&](int i, const Run& r, const StepStats& st) {
    if (!st.converged()) return;
    ++solved;
    const CompliantWorkspace& ws = r.ws();
    for (int c = 0; c < ws.rows.nc; ++c) {
      const double fn = ws.lam[c], fr = ws.lam[ws.rows.ny + 2 * c], fs = ws.lam[ws.rows.ny + 2 * c + 1];
      CHECK(fn >= 0);
      CHECK(std::hypot(fr, fs) <= 0.375 * fn * (1 + 1e-6) + 1e-9);
    }
    if (i == 1) fn_joint = st.normal_force;  // touchdown
  }, false);
  double fn_rest = 0;
  incline(0.375, {}, [&](int i, const Run&, const StepStats& st) {
    if (i == 1) fn_staggered = st.normal_force;
    if (i == 2) fn_rest = st.normal_force;
  });
  CHECK(solved >= 5);
  CHECK(fn_rest == Approx(9.81 * std::cos(kPi / 12)).epsilon(0.01));  // staggered: at rest after touchdown
  CHECK(fn_joint > 1.5 * fn_staggered);  // [ours] 34.1 N vs 19.2 N; the box then hops off
}

TEST_CASE("compliant oracle 14: stacks of 2, 10, 50 spheres stay stacked, bottom force = N m g", "[compliant]") {
  // 2 and 10 spheres: B6 as specified (mid-air, 0.05 m gaps, 500 steps at h = 0.01, mu = 0.5);
  // 50 spheres (kept short: 500 steps of n_q = 300 take ~10 s): starting at the Hertz rest depths
  // d_i = (F_i / K_i)^(2/3), F_i = (N - i) m g, they must stay there, at rest, for 20 steps
  for (int N : {2, 10, 50}) {
    INFO(N << " spheres");
    const Model m = test::sphere_stack_model(N, 0.1, 0.2);  // touching, on the ground
    CompliantSettings s;  // docs/methods/compliant.md §10 B6: E = 1e11, B = 1, h = 0.01, mu = 0.5
    s.dt = 0.01;
    s.mu = 0.5;
    VecX th0 = VecX::Zero(m.n_q);
    int steps = 500;
    if (N <= 10) {
      for (int i = 0; i < N; ++i) th0[6 * i + 2] = 0.05 * (i + 1);  // gaps of 0.05 m, the bottom one too
    } else {
      steps = 20;
      double z = 0;  // centre height minus the touching stack's 0.1 + 0.2 i
      for (int i = 0; i < N; ++i) {
        const double K = s.rows.youngs * std::sqrt(i == 0 ? 0.1 : 0.05), F = (N - i) * 9.81;
        z -= std::pow(F / K, 2.0 / 3.0);
        th0[6 * i + 2] = z;
      }
    }
    Run r(m, s, th0, VecX::Zero(m.n_q));
    for (int i = 0; i < steps; ++i) REQUIRE(r.step().converged());
    const CompliantWorkspace& ws = r.ws();
    REQUIRE(ws.rows.nc == N);  // N - 1 sphere-sphere contacts and the ground
    // the ground contact: the pair of s0 with the plane
    double f_bottom = -1;
    for (int c = 0; c < ws.rows.nc; ++c) {
      const Contact& con = ws.rows.set.con[ws.rows.con[c]];
      if (con.link_b < 0 && con.link_a == 0) f_bottom = ws.lam[c];
    }
    CHECK(f_bottom == Approx(N * 9.81).epsilon(1e-3));
    CHECK(r.v().lpNorm<Eigen::Infinity>() < 4e-4);
    for (int i = 0; i < N; ++i) {  // no sideways motion: still a vertical stack
      CHECK(std::abs(r.d.theta[6 * i]) < 1e-9);
      CHECK(std::abs(r.d.theta[6 * i + 1]) < 1e-9);
    }
  }
}

TEST_CASE("compliant oracle 16: B4 stiffness does not raise the cost (E = 1e7 vs 1e11)", "[compliant]") {
  long iters[2];
  int i = 0;
  for (const char* k : {"compliant.normal_stiffness=1e5", "compliant.normal_stiffness=1e9"}) {
    const Scene sc = scene("box_foundation.yaml", {k});
    Run r(sc.model, sc.compliant, sc.theta0, sc.theta_dot0);
    iters[i] = 0;
    for (int s = 0; s < sc.steps(); ++s) {
      REQUIRE(r.step().converged());
      iters[i] += r.ws().qp_iterations;
    }
    CHECK(std::abs(r.d.theta[2] - 0.5) < 0.01);  // resting on the foundation
    ++i;
  }
  // the paper's claim: stiffness does not raise the cost (here the stiff foundation is cheaper: its
  // active set never changes, so the warm-started N-step QP has nothing to do)
  INFO("QP iterations over 1 s: E = 1e7 " << iters[0] << ", E = 1e11 " << iters[1]);
  CHECK(double(iters[1]) <= 2.0 * double(iters[0]));
}

TEST_CASE("compliant: bad settings name the key", "[compliant]") {
  const Model m = slider(false);
  CompliantSettings s;
  s.rows.point_radius = 0;
  CHECK_THROWS_WITH(CompliantIntegrator(m, s), Catch::Contains("compliant.point_radius"));
  s = CompliantSettings{};
  s.cone_edges = 2;
  CHECK_THROWS_WITH(CompliantIntegrator(m, s), Catch::Contains("compliant.cone_edges"));
  s = CompliantSettings{};
  s.rows.loops = {CompliantLoop{3, Vec3::Zero(), -1, Vec3::Zero(), 1, 0}};
  CHECK_THROWS_WITH(CompliantIntegrator(m, s), Catch::Contains("compliant.loops[0].link_a"));
  CHECK_THROWS_WITH(scene("pendulum_absolute.yaml", {"compliant.loops[0].link_a=nope"}),
                    Catch::Contains("compliant.loops[0].link_a"));
}

TEST_CASE("compliant: imported models (gymnasium hopper, ant) step with contacts and joint limits", "[compliant][mujoco]") {
  for (const char* model : {"gymnasium:hopper.xml", "gymnasium:ant.xml"}) {
    INFO(model);
    const Scene sc = load_scene(model, {"integrator.type=compliant", "integrator.dt=0.01"});
    Run r(sc.model, sc.compliant, sc.theta0, sc.theta_dot0);
    int touched = 0;
    for (int i = 0; i < 60; ++i) {
      REQUIRE(r.step().converged());
      touched += r.ws().rows.nc > 0;
    }
    CHECK(r.d.theta.allFinite());
    CHECK(touched > 0);
    // it lands and stays on the floor: small speeds after 0.6 s, no sinking through
    CHECK(r.v().head(3).norm() < 2.0);
    for (int c = 0; c < r.ws().rows.nc; ++c) CHECK(r.ws().rows.depth[c] < 0.01);
  }
}

// a 1 kg sphere (r = 0.1) touching the ground, linear normal rows k_n = 1e5
const char* const kSphereRest = R"(scene: sphere_rest
model:
  gravity: [0, 0, -9.81]
  links:
    - {name: s0, joint: floating, pos: [0, 0, 0.1], mass: 1.0, inertia: [0.004, 0.004, 0.004]}
  geoms:
    - {link: s0, type: sphere, size: [0.1]}
    - {type: plane}
integrator: {type: compliant, dt: 0.01, duration: 1.0}
contact: {mu: 0.5}
compliant: {normal_model: linear, normal_stiffness: 1.0e5, normal_damping: 1.0}
)";

TEST_CASE("compliant: batch.randomize_stiffness reaches K; each rollout rests at its own depth", "[compliant][batch]") {
  // a 1 kg sphere (r = 0.1) on the ground, linear normal rows k_n = 1e5: rollout k's contact
  // stiffness is k_n f_k with f_k the factor the batch drew (RolloutParamTable::stiffness_scale),
  // so it comes to rest at depth m g / (k_n f_k)
  const Scene sc = load_scene_text(kSphereRest, "sphere_rest");
  BatchOptions opt;
  opt.rollouts = 2;
  opt.seed = 3;
  opt.perturb_theta = opt.perturb_theta_dot = 0;
  opt.randomize_stiffness = 0.7;
  StateBatch b(opt.rollouts, sc.model.n_q);
  RolloutParamTable p;
  init_batch(sc, opt, b, p);
  REQUIRE(p.stiffness_scale.size() == 2);
  const double f0 = p.stiffness_scale[0], f1 = p.stiffness_scale[1];
  INFO("drawn stiffness factors " << f0 << ", " << f1);
  REQUIRE(std::abs(std::log(f0 / f1)) > 0.2);  // two clearly different stiffnesses
  // the same draw scaled PBD/PBFD's c_perp
  CHECK(p.contact[0].c_perp == sc.settings.contact.c_perp * f0);
  CpuBatchStepper stepper(sc, 1);
  for (int s = 0; s < 100; ++s) stepper.step(b, p);
  for (int k = 0; k < 2; ++k) {
    const double depth = -b.theta[size_t(k) * b.n_q + 2];  // theta_z = 0: the joint frame at z = r
    CHECK(depth == Approx(9.81 / (1e5 * p.stiffness_scale[k])).epsilon(1e-6));
    CHECK(!status_failed(b.status[k]));
  }
  // a lone rollout with compliant.normal_stiffness = k_n f_1 takes the same steps
  const Scene sc1 = load_scene_text(kSphereRest, "sphere_rest", {"compliant.normal_stiffness=" + num(1e5 * f1)});
  Run r(sc1.model, sc1.compliant, sc1.theta0, sc1.theta_dot0);
  for (int s = 0; s < 100; ++s) r.step();
  CHECK(r.d.theta[2] == Approx(b.theta[size_t(b.n_q) + 2]).epsilon(1e-12));
}

TEST_CASE("compliant: a T-step whose program is not positive definite fails that step, not the run",
          "[compliant]") {
  // The floating chain at 50 ms assembles, at one step, a tangential program whose H is not
  // positive definite (numerics/cone_qp.h). That is the state's, not a bad input: the step is flagged
  // and the run goes on (it used to end with InvalidArgument "cone_qp.H ...").
  const Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/chain_floating_ground.yaml",
                              {"integrator.type=compliant", "integrator.dt=0.05"});
  Rollout r;
  REQUIRE_NOTHROW(r = simulate(sc));
  int failed = 0;
  for (const StepStats& st : r.stats) failed += !st.converged();
  INFO("steps run " << r.steps_run << ", failed " << failed);
  CHECK(failed > 0);  // the step this test is about is flagged
  for (const VecX& th : r.theta) CHECK(th.allFinite());
}
