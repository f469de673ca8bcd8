// PBFD with the regularised Coulomb law (contact.friction = coulomb, docs/methods/pbfd.md §4.9):
// box slide distance v0^2 / (2 mu g), incline stick / slip at tan(theta) = mu, independent of dt
// and of C_par. First-order time integration: each step's velocity is the end-of-step velocity,
// so a slide with deceleration a = mu g covers sum_k (v0 - k a dt) dt = v0^2/(2a) - v0 dt/2 + O(dt^2):
// a relative floor of mu g dt / v0 (docs/methods/pbfd.md §4.9), checked against that recurrence too.
// The second-order form (integrator.order 2, §3.1) has no such floor: 2 % at every dt.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "batch/rollout.h"
#include "io/scene.h"
#include "solvers/pbd/pbd_step.h"
#include "tests/support/tol.h"

using namespace bigstep;
using bigstep::test::tol;

namespace {

constexpr double kG = 9.81, kPi = 3.14159265358979323846;

std::string config(const std::string& name) { return std::string(BIGSTEP_SOURCE_DIR) + "/configs/" + name + ".yaml"; }

std::string num(double x) {
  char b[64];
  std::snprintf(b, sizeof b, "%.17g", x);
  return b;
}

// every step converged and finite (docs/methods/pbfd.md §5.1: OK, or OK_SMALLSTEP near the tolerance)
int failed_steps(const Scene& sc, const Rollout& r) {
  const double res_max = 100 * sc.settings.eps_r * std::max(1.0, sc.model.weight());
  int bad = 0;
  for (size_t n = 0; n < r.stats.size(); ++n)
    bad += !r.stats[n].converged() || !(r.stats[n].residual <= res_max) || !r.theta[n + 1].allFinite();
  return bad;
}

// box_slide (planar box, four corners, C_perp 1.23e6) with the Coulomb law from v0 [m/s] at dt
Rollout slide(double v0, double dt, double mu, double c_par, int order = 1) {
  const Scene sc = load_scene(config("box_slide"),
                              {"contact.friction=coulomb", "contact.mu=" + num(mu), "contact.c_par=" + num(c_par),
                               "initial.theta_dot=[" + num(v0) + ", 0, 0]", "integrator.dt=" + num(dt),
                               "integrator.duration=" + num(v0 / (mu * kG) + 1), "integrator.order=" + num(order)});
  Rollout r = simulate(sc);
  CHECK(failed_steps(sc, r) == 0);
  return r;
}

// The first-order recurrence's distance: v_k = v_{k-1} - a dt while that stays > 0, x += v_k dt
double recurrence_distance(double v0, double a, double dt) {
  double v = v0, x = 0;
  while (v - a * dt > 0) {
    v -= a * dt;
    x += v * dt;
  }
  return x;
}

}  // namespace

TEST_CASE("coulomb: box slide distance v0^2 / (2 mu g) at dt 10 to 100 ms", "[pbd][coulomb][oracle]") {
  const double mu = 0.5, a = mu * kG;
  for (double v0 : {10.0, 25.0}) {
    const double exact = v0 * v0 / (2 * a);
    for (double dt : {0.01, 0.02, 0.05, 0.1}) {
      const Rollout r = slide(v0, dt, mu, 0.0);
      const double x = r.theta.back()[0] - r.theta.front()[0];
      const double rec = recurrence_distance(v0, a, dt), floor = a * dt / v0;
      INFO("v0 " << v0 << " dt " << dt << " distance " << x << " exact " << exact << " recurrence " << rec
                 << " rel err " << x / exact - 1 << " first-order floor " << floor);
      // the law is exactly Coulomb at every dt: the first-order recurrence within 0.5 % (what is left:
      // the box's pitch under friction, the regularised last step)
      CHECK(std::abs(x / rec - 1) < tol(0.005));
      // and the exact distance within 2 % where the floor a dt / v0 allows it, else within the floor
      if (floor <= 0.015) CHECK(std::abs(x / exact - 1) < tol(0.02));
      CHECK(std::abs(x / exact - 1) < floor + tol(0.005));
      // it stopped: at rest at the end
      const VecX v = (r.theta.back() - r.theta[r.theta.size() - 2]) / dt;
      CHECK(std::abs(v[0]) < 0.02);
    }
  }
}

TEST_CASE("coulomb: second order, box slide distance v0^2 / (2 mu g) within 2 % at dt 10 to 100 ms",
          "[pbd][coulomb][oracle][order2]") {
  // the four-point backward difference (§3.1) integrates the constant deceleration exactly; what is
  // left is the stop itself (the last step's partial deceleration), ~1 % at v0 = 1 m/s, dt = 0.1 s
  const double mu = 0.5, a = mu * kG;
  for (double v0 : {1.0, 2.0, 5.0, 10.0}) {
    const double exact = v0 * v0 / (2 * a);
    for (double dt : {0.01, 0.02, 0.05, 0.1}) {
      const Rollout r = slide(v0, dt, mu, 0.0, 2);
      const double x = r.theta.back()[0] - r.theta.front()[0];
      INFO("v0 " << v0 << " dt " << dt << " distance " << x << " exact " << exact << " rel err " << x / exact - 1);
      CHECK(std::abs(x / exact - 1) < tol(0.02));
      if (v0 >= 5) CHECK(std::abs(x / exact - 1) < tol(0.002));
    }
  }
}

TEST_CASE("coulomb: the slide does not depend on C_par", "[pbd][coulomb]") {
  const Rollout r0 = slide(5.0, 0.05, 0.5, 0.0), r1 = slide(5.0, 0.05, 0.5, 3e7);
  REQUIRE(r0.theta.size() == r1.theta.size());
  for (size_t n = 0; n < r0.theta.size(); ++n) CHECK(r0.theta[n] == r1.theta[n]);
  // and mu is what sets it: mu = 0.25 slides twice as far (recurrence within 0.5 %)
  const Rollout r2 = slide(5.0, 0.01, 0.25, 0.0);
  const double x2 = r2.theta.back()[0] - r2.theta.front()[0];
  CHECK(std::abs(x2 / recurrence_distance(5.0, 0.25 * kG, 0.01) - 1) < tol(0.005));
}

TEST_CASE("coulomb: PBD refuses the Coulomb law (no energy for Eq. 6)", "[pbd][coulomb]") {
  try {
    load_scene(config("box_slide"), {"integrator.type=pbd", "contact.friction=coulomb"});
    FAIL("loaded");
  } catch (const InvalidArgument& e) {
    const std::string w = e.what();
    INFO(w);
    CHECK(w.find("contact.friction") != std::string::npos);
    CHECK(w.find("integrator.type") != std::string::npos);
  }
}

namespace {

// incline_box (1 kg box on four r = 1 cm feet) as PBFD, mu 0.5, the slope theta written as tilted gravity;
// returns x along the slope per step
std::vector<double> incline(double theta, double dt, double duration, int order = 1) {
  const double gx = kG * std::sin(theta), gz = -kG * std::cos(theta);
  const Scene sc = load_scene(config("incline_box"),
                              {"integrator.type=pbfd", "integrator.optimizer=jtj_lm", "integrator.dt=" + num(dt),
                               "integrator.duration=" + num(duration), "contact.friction=coulomb", "contact.mu=0.5",
                               "integrator.order=" + num(order), "contact.c_perp=1e6",
                               "model.gravity=[" + num(gx) + ", 0, " + num(gz) + "]"});
  const Rollout r = simulate(sc);
  CHECK(failed_steps(sc, r) == 0);
  std::vector<double> x;
  for (const VecX& q : r.theta) x.push_back(q[0]);
  return x;
}

}  // namespace

TEST_CASE("coulomb: incline sticks below tan(theta) = mu, creeping at the regularised law's speed", "[pbd][coulomb][oracle]") {
  // a sticking box's friction mu f_n v / sqrt(v^2 + v_s^2) balances m g sin(theta): it creeps at
  // v_c = v_s q / sqrt(1 - q^2), q = tan(theta) / mu, over 1 s (after 1 s of settling)
  for (double q : {0.5, 0.9}) {
    const double theta = std::atan(q * 0.5), v_c = 0.01 * q / std::sqrt(1 - q * q);
    for (double dt : {0.01, 0.05, 0.1}) {
      const std::vector<double> x = incline(theta, dt, 2.0);
      const size_t n1 = size_t(std::lround(1.0 / dt));
      const double v = (x.back() - x[x.size() - 1 - n1]) / 1.0;
      INFO("tan/mu " << q << " dt " << dt << " creep " << v << " m/s, predicted " << v_c << ", total " << x.back());
      CHECK(std::abs(v / v_c - 1) < tol(0.02));
      CHECK(v < 0.03);  // far below sliding: g (sin - mu cos) t would be > 0 m/s only beyond tan = mu
    }
  }
}

TEST_CASE("coulomb: incline slides above tan(theta) = mu with acceleration g (sin - mu cos)", "[pbd][coulomb][oracle]") {
  for (double deg : {30.0, 40.0}) {
    const double theta = deg * kPi / 180, a = kG * (std::sin(theta) - 0.5 * std::cos(theta));
    for (double dt : {0.01, 0.05, 0.1}) {
      const int order = dt == 0.05 ? 2 : 1;  // the second-order form too: also exact for a constant force
      const std::vector<double> x = incline(theta, dt, 2.0, order);
      // second difference over the last second: exact for a constant force under the first-order step
      const size_t n1 = size_t(std::lround(0.5 / dt)), N = x.size() - 1;
      const double h = double(n1) * dt;
      const double acc = (x[N] - 2 * x[N - n1] + x[N - 2 * n1]) / (h * h);
      INFO("theta " << deg << " deg dt " << dt << " order " << order << " acceleration " << acc << " predicted " << a);
      CHECK(std::abs(acc / a - 1) < tol(0.03));
    }
  }
}
