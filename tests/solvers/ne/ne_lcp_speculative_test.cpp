// NE-LCP speculative contacts (solvers/ne/ne_lcp.cpp, NeSettings::speculative): a pair is a row when
// the free motion closes it to within active_distance during the step, with the row
// v_n+ >= -phi / h (it may approach until it touches). Oracles: at large dt a body thrown at the
// floor neither tunnels (penetration at the cfm slack, not the step length) nor bounces
// (restitution 0: no upward speed after the impact); without speculation the same throws cross the
// floor by centimetres (the test can fail).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "core/contact_set.h"
#include "core/kinematics.h"
#include "batch/rollout.h"

using namespace bigstep;

namespace {

// smallest gap phi = -depth of a configuration's geom contacts, capped at 1 mm (the active
// distance): < 0 penetrates, < 1 mm touches
double min_gap(const Model& m, const VecX& theta) {
  Kinematics kin(m);
  forward_kinematics(m, theta, kin);
  ContactSet cs(m);
  cs.update(m, kin, theta, 1e-3);
  double phi = 1e-3;
  for (int i = 0; i < cs.n_con; ++i) phi = std::min(phi, -cs.con[size_t(i)].depth);
  return phi;
}
double max_depth(const Model& m, const VecX& theta) { return std::max(0.0, -min_gap(m, theta)); }

// deepest penetration over a rollout, and the largest upward speed of DOF k after its first step
// within `touch` of z_rest
struct Impact {
  double deepest = 0, rebound = -1e300;
  bool touched = false;
};
Impact impact(const Model& m, const Rollout& r, double dt, int k, double z_touch) {
  Impact out;
  for (size_t i = 1; i < r.theta.size(); ++i) {
    out.deepest = std::max(out.deepest, max_depth(m, r.theta[i]));
    if (out.touched) out.rebound = std::max(out.rebound, (r.theta[i][k] - r.theta[i - 1][k]) / dt);
    if (r.theta[i][k] <= z_touch) out.touched = true;
  }
  return out;
}

const char* const kBall = R"(scene: ball_throw
model:
  links:
    - {name: ball, parent: world, joint: floating, box: {size: [0.1, 0.1, 0.1], mass: 1.0}}
  contacts:
    - {link: ball, points: [[0, 0, 0]], radius: 0.05}
  terrain:
    - {normal: [0, 0, 1], offset: 0}
initial: {theta: [0, 0, 1, 0, 0, 0], theta_dot: [0, 0, -10, 0, 0, 0]}
integrator: {type: ne_lcp, dt: 0.02, duration: 0.4}
contact: {mu: 0.5}
)";

}  // namespace

TEST_CASE("ne_lcp speculative: a ball thrown at the floor at 10 m/s, dt = 0.02, neither tunnels nor bounces", "[ne][lcp][speculative]") {
  // 0.2 m per step, 200x active_distance: the start heights put the crossing at different phases
  // of a step. Speculative: the step that would cross stops the ball on the floor (v+ = -phi / h),
  // the next holds it (restitution 0). Penetration: the cfm slack only, h cfm max(diag G) lambda
  // ~ 0.02 * 1e-6 * 1 * 10 = 2e-7 m.
  const double dt = 0.02, r = 0.05;
  double deepest_plain = 0;
  for (const double z0 : {1.0, 1.04, 1.09, 1.13, 1.17}) {
    for (const bool speculative : {true, false}) {
      INFO("z0 " << z0 << ", speculative " << speculative);
      Scene sc = load_scene_text(kBall, "ball_throw", {"initial.theta=[0, 0, " + std::to_string(z0) + ", 0, 0, 0]"});
      sc.ne.speculative = speculative;
      const Rollout ro = simulate(sc);
      for (const StepStats& st : ro.stats) REQUIRE(st.converged());
      const Impact im = impact(sc.model, ro, dt, 2, r + 1e-3);
      REQUIRE(im.touched);
      INFO("deepest " << im.deepest << " m, largest upward speed after touching " << im.rebound << " m/s");
      if (!speculative) {
        deepest_plain = std::max(deepest_plain, im.deepest);
        continue;
      }
      CHECK(im.deepest < 1e-5);
      CHECK(im.rebound < 1e-4);
      CHECK(std::abs(ro.theta.back()[2] - r) < 1e-5);  // at rest on the floor
    }
  }
  // the same throws with the plain rule phi <= 1 mm cross the floor (then leave it at the
  // capped correction speed): the speculative rows are what stops them
  CHECK(deepest_plain > 0.05);
}

TEST_CASE("ne_lcp speculative: the floating chain thrown down tumbling at dt = 0.02 lands without tunnelling or bounce", "[ne][lcp][speculative]") {
  // configs/chain_floating_ground.yaml (10 links, 80 corners), 5 m/s down, tilted and spinning, with
  // its hinges moving: corners close at different speeds, some faster than the root. The
  // prediction is first order in h (a rotating corner's path bends), so a small penetration is
  // allowed (2 mm, against centimetres with the plain rule). No bounce: from the first touch on,
  // contacts only take energy out, so E never rises above its running minimum since that touch
  // by more than 0.15 J (2.5 % of the 5.9 J left one step after the impact; the free tumbling before
  // it gains 2 J by the difference-velocity energy's O(h) error, which is why the count starts at
  // the touch). That error persists after the touch: with re-linearised rows (ne_lcp.cpp) E rises
  // 0.06 and 0.08 J on two steps in which the contacts' work 1/2 (v+ + v_free)^T J^T z is -0.54 and
  // -0.61 J (the smooth part of the step gains it; ne_lcp_relinearization_test checks the contacts'
  // work directly), so the bound was raised from 0.05 J.
  const std::string file = std::string(BIGSTEP_SOURCE_DIR) + "/configs/chain_floating_ground.yaml";
  const std::vector<std::string> set = {
      "integrator.type=ne_lcp", "integrator.dt=0.02", "integrator.duration=1.0",
      "initial.theta=[0, 0, 0.6, 0.2, -0.15, 0, 0.3, -0.2, 0.2, 0.1, -0.3, 0.2, 0.1, -0.1, 0.2]",
      "initial.theta_dot=[0.5, 0, -5, 1, 2, 0.5, 2, -2, 1, -1, 2, 1, -2, 1, 1]"};
  const double dt = 0.02;
  double deepest_plain = 0;
  for (const bool speculative : {true, false}) {
    INFO("speculative " << speculative);
    Scene sc = load_scene(file, set);
    sc.ne.speculative = speculative;
    const Model& m = sc.model;
    const Rollout ro = simulate(sc);
    for (const StepStats& st : ro.stats) REQUIRE(st.converged());
    double deepest = 0, e_min = 1e300, rise = 0;
    bool touched = false;
    for (size_t i = 1; i < ro.theta.size(); ++i) {
      const double phi = min_gap(m, ro.theta[i]);
      deepest = std::max(deepest, -phi);
      touched = touched || phi < 1e-3;
      if (!touched) continue;
      const double e = mechanical_energy(m, ro.theta[i - 1], ro.theta[i], dt);
      e_min = std::min(e_min, e);
      rise = std::max(rise, e - e_min);
    }
    REQUIRE(touched);
    INFO("deepest " << deepest << " m, energy rise above its running minimum " << rise << " J");
    if (!speculative) {
      deepest_plain = deepest;
      continue;
    }
    CHECK(deepest < 2e-3);
    CHECK(rise < 0.15);
  }
  CHECK(deepest_plain > 0.02);
}
