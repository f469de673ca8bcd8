// Newton-Euler baselines (pbfd.md §7, nmdp.md §8): dry-friction analytic oracles, stiction,
// free flight and energy conservation.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/error.h"
#include "envs/rollout.h"
#include "solvers/ne_lcp.h"
#include "solvers/ne_mdp.h"
#include "tests/support/tol.h"

using namespace bigstep;
using bigstep::test::tol;

namespace {

const std::string kBox = std::string(BIGSTEP_SOURCE_DIR) + "/configs/box_slide.yaml";

// Box at z = 0.1 (corners touching), sliding at v0 along x with dry friction mu.
Scene box(const std::string& type, double mu, double dt, double v0 = 1.0) {
  return load_scene(kBox, {"integrator.type=" + type, "integrator.dt=" + std::to_string(dt),
                           "contact.mu=" + std::to_string(mu), "contact.friction_directions=2",
                           "initial.theta=[0, 0.1, 0]", "initial.theta_dot=[" + std::to_string(v0) + ", 0, 0]"});
}

}  // namespace

TEST_CASE("ne_lcp: box stops at v0^2 / (2 mu g)", "[ne][lcp]") {
  for (double mu : {0.2, 0.5, 1.0}) {
    const Scene sc = box("ne_lcp", mu, 1e-3);
    const Rollout r = simulate(sc);
    const Metrics mt = compute_metrics(sc, r);
    const double expect = 1.0 / (2 * mu * 9.81);
    INFO("mu " << mu << " distance " << mt.sliding_distance_m << " expected " << expect);
    CHECK(r.stopped_at_rest);
    CHECK(std::abs(mt.sliding_distance_m - expect) <= 0.02 * expect);  // the 2% at dt = 1 ms
    CHECK(mt.max_tilt_rad < 1e-6);
    for (const auto& s : r.stats) REQUIRE(s.converged());
  }
}

TEST_CASE("ne_lcp: mu = 0 gives no tangential force", "[ne][lcp]") {
  Scene sc = box("ne_lcp", 0.0, 1e-3);
  sc.stop_at_rest = false;
  sc.duration = 0.5;
  const Rollout r = simulate(sc);
  const Metrics mt = compute_metrics(sc, r);
  // constant velocity 1 m/s; the 1e-6 contact compliance (cfm) leaves ~1e-8 of slack
  CHECK(mt.sliding_distance_m == Approx(0.5).epsilon(1e-6));
}

TEST_CASE("ne_lcp: large mu gives stiction", "[ne][lcp]") {
  // a push below the friction limit (mu m g = 9.81 N for mu = 1) leaves the box at rest
  Scene sc = box("ne_lcp", 1.0, 1e-3, 0.0);
  sc.stop_at_rest = false;
  sc.duration = 0.5;
  sc.tau = VecX::Zero(3);
  sc.tau[0] = 5.0;
  Rollout r = simulate(sc);
  CHECK(std::abs(r.theta.back()[0]) < 1e-6);  // creep from the 1e-6 compliance only (3e-9 m seen)
  // above the limit it slides with a = (F - mu m g) / m
  sc.tau[0] = 15.0;
  r = simulate(sc);
  const double a = 15.0 - 9.81;
  CHECK(r.theta.back()[0] == Approx(0.5 * a * 0.25).epsilon(0.02));
}

TEST_CASE("ne_mdp: box sliding distance close to Coulomb's", "[ne][mdp]") {
  for (double mu : {0.2, 0.5}) {
    const Scene sc = box("ne_mdp", mu, 1e-3);
    const Rollout r = simulate(sc);
    const Metrics mt = compute_metrics(sc, r);
    const double expect = 1.0 / (2 * mu * 9.81);
    INFO("mu " << mu << " distance " << mt.sliding_distance_m << " expected " << expect);
    // MDP with a linearized cone and depth-scaled polytope: 3% of the rigid Coulomb value
    CHECK(std::abs(mt.sliding_distance_m - expect) <= 0.03 * expect);
    for (const auto& s : r.stats) REQUIRE(s.converged());
  }
}

TEST_CASE("ne baselines: free flight equals semi-implicit Euler (ND8)", "[ne]") {
  for (const char* type : {"ne_lcp", "ne_mdp"}) {
    Scene sc = load_scene(kBox, {std::string("integrator.type=") + type, "integrator.dt=0.01",
                                 "initial.theta=[0, 2.0, 0]", "initial.theta_dot=[1, 3, 0]", "contact.zeta=0"});
    sc.stop_at_rest = false;
    sc.duration = 0.3;
    const Rollout r = simulate(sc);
    double z = 2.0, vz = 3.0;
    for (int n = 0; n < 30; ++n) {
      vz -= 9.81 * 0.01;
      z += 0.01 * vz;
    }
    INFO(type);
    CHECK(r.theta.back()[1] == Approx(z).margin(1e-12));
    CHECK(r.theta.back()[0] == Approx(0.3).margin(1e-12));
  }
}

TEST_CASE("ne_lcp: frictionless chain conserves energy at small dt", "[ne][lcp]") {
  Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/chain_fixed.yaml",
                        {"integrator.type=ne_lcp", "integrator.dt=1e-4", "integrator.duration=0.5"});
  const Rollout r = simulate(sc);
  const double dt = sc.settings.dt;
  const double E0 = mechanical_energy(sc.model, r.theta[0], r.theta[1], dt);
  double drift = 0, swing = 0;
  for (size_t i = 1; i < r.theta.size(); ++i) {
    const double E = mechanical_energy(sc.model, r.theta[i - 1], r.theta[i], dt);
    drift = std::max(drift, std::abs(E - E0));
  }
  // potential energy released over the swing, the scale of the energy exchange
  const Metrics mt = compute_metrics(sc, r);
  swing = sc.model.total_mass * 9.81 * std::abs(mt.com_initial.z() - mt.com_final.z());
  INFO("max |E - E0| = " << drift << " J, exchanged " << swing << " J");
  REQUIRE(swing > 0.5);                 // the chain really swung
  CHECK(drift <= tol(0.01) * swing);    // semi-implicit Euler: O(dt) error, ~0.2% here
}

TEST_CASE("ne baselines: bad settings are named", "[ne]") {
  CHECK_THROWS_WITH(load_scene(kBox, {"integrator.type=ne_lcp", "contact.friction_directions=3"}),
                    Catch::Contains("contact.friction_directions = 3"));
  CHECK_THROWS_WITH(load_scene(kBox, {"integrator.type=ne_mdp", "contact.mu=-1"}),
                    Catch::Contains("contact.mu = -1"));
  CHECK_THROWS_WITH(load_scene(kBox, {"integrator.type=ne_foo"}), Catch::Contains("integrator.type = ne_foo"));
}
