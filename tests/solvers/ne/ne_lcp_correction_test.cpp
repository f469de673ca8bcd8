// NE-LCP position correction (solvers/ne/ne_lcp.cpp; docs/methods/newton_euler.md §2 "-d_p/dt correction", bounded here):
// a penetrating row asks for a separation speed min(depth / h, max_correction_speed), so the
// correction injects a bounded kinetic energy whatever the dt. The scenes that exposed the
// unbounded term (docs/benchmarks.md "Against MuJoCo at matched accuracy"): gymnasium's ant
// launched from its initial pose, the dropped chain bouncing back at 0.625 ms, and a hinge stop
// hit at speed that threw the arm back.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/crba.h"
#include "core/inertia.h"
#include "core/kinematics.h"
#include "batch/rollout.h"
#include "solvers/ne/ne_lcp.h"

using namespace bigstep;

namespace {

// Kinetic + potential energy with the armature's rotor energy 1/2 a_k v_k^2 (part of NE-LCP's
// mass matrix H + diag(a)), v = (theta_b - theta_a) / dt.
double energy(const Model& m, const VecX& theta_a, const VecX& theta_b, double dt) {
  double e = mechanical_energy(m, theta_a, theta_b, dt);
  if (m.has_damping_armature)
    for (int k = 0; k < m.n_q; ++k) e += 0.5 * m.dof_armature[k] * std::pow((theta_b[k] - theta_a[k]) / dt, 2);
  return e;
}

// One limited joint on the world: mass at com (link frame), inertia 0.001 I, range [lo, hi].
Model limited_joint(JointType j, const Vec3& axis, double mass, const Vec3& com, double lo, double hi, bool gravity) {
  ModelSpec spec;
  if (!gravity) spec.gravity = Vec3::Zero();
  LinkSpec l;
  l.name = "link";
  l.parent = -1;
  l.joint = j;
  l.axis = axis;
  l.mass = mass;
  l.com = com;
  l.inertia = 0.001 * Mat3::Identity();
  l.limited = true;
  l.range[0] = lo;
  l.range[1] = hi;
  spec.links.push_back(l);
  return Model::finalize(spec);
}

}  // namespace

TEST_CASE("ne_lcp correction: a penetrating stop separates at min(depth / h, max_correction_speed)", "[ne][lcp][correction]") {
  // one row, no gravity, at rest: w = v+ - c >= 0 with the least impulse, so v+ = c exactly
  // (up to the cfm slack): c = depth / h (the literal term) while that is below the cap
  // 2 kg slider along z, stop at 0 (range [0, 1]), no gravity
  const Model m = limited_joint(JointType::Prismatic, Vec3::UnitZ(), 2.0, Vec3::Zero(), 0, 1, false);
  const double h = 1e-3;
  NeSettings s;
  s.dt = h;
  for (const double depth : {2e-5, 1e-4, 0.05, 0.5}) {
    for (const double cap : {0.1, 1.0}) {
      s.max_correction_speed = cap;
      NeLcpIntegrator integ(m, s);
      const VecX th = VecX::Constant(1, -depth);
      VecX next;
      REQUIRE(integ.step(th, th, VecX(), next).converged());
      const double v = (next[0] - th[0]) / h;
      INFO("depth " << depth << ", cap " << cap);
      CHECK(v == Approx(std::min(depth / h, cap)).epsilon(1e-5));
    }
  }
  // a gap keeps phi / h: a slider approaching at 1 m/s from 0.5 mm stops exactly on the stop
  s.max_correction_speed = 0.1;
  NeLcpIntegrator integ(m, s);
  const VecX th = VecX::Constant(1, 5e-4), prev = VecX::Constant(1, 5e-4 + h);
  VecX next;
  REQUIRE(integ.step(th, prev, VecX(), next).converged());
  CHECK(std::abs(next[0]) < 1e-8);
}

TEST_CASE("ne_lcp correction: bad max_correction_speed is named", "[ne][lcp][correction]") {
  NeSettings s;
  s.max_correction_speed = 0;
  CHECK_THROWS_WITH(validate_ne_settings(s), Catch::Contains("contact.max_correction_speed = 0"));
  s.max_correction_speed = std::nan("");
  CHECK_THROWS_WITH(validate_ne_settings(s), Catch::Contains("contact.max_correction_speed"));
}

#ifdef BIGSTEP_WITH_MUJOCO
TEST_CASE("ne_lcp correction: gymnasium's ant from its initial pose falls and settles, not launched", "[ne][lcp][correction][mujoco]") {
  // gymnasium's ant starts with its ankles at 0, 30 deg outside their ranges ([30, 70] deg and
  // mirrored), armature 1: the literal -depth / h asked 0.52 rad / h of each ankle (523 rad/s at
  // 1 ms) and threw the ant metres up. Bounded, the stops inject at most
  // 1/2 (H + diag(a))_kk max_correction_speed^2 each (G_kk^-1 <= M~_kk), and the fall only loses energy.
  for (const double dt : {1e-3, 1e-2}) {
    INFO("dt " << dt);
    const Scene sc = load_scene("gymnasium:ant.xml", {"integrator.type=ne_lcp", "integrator.dt=" + std::to_string(dt),
                                                      "integrator.duration=1.5"});
    const Model& m = sc.model;
    REQUIRE(m.n_limit == 8);
    const Rollout r = simulate(sc);
    REQUIRE(r.stats.size() == r.theta.size() - 1);
    for (const StepStats& st : r.stats) REQUIRE(st.converged());
    Kinematics kin(m);
    forward_kinematics(m, r.theta[0], kin);
    const double z0 = centre_of_mass(m, kin).z();
    // the bound on what the eight stops may inject, from the mass matrix at the start
    MatX H;
    crba(m, r.theta[0], H);
    double inject = 0;
    for (int i = 0; i < m.n_limit; ++i) {
      const int k = m.limit_dof[i];
      inject += 0.5 * (H(k, k) + m.dof_armature[k]) * std::pow(sc.ne.max_correction_speed, 2);
    }
    const double E0 = energy(m, r.theta[0], r.theta[0], dt);  // at rest
    double z_max = z0, z_end = 0, dE_max = -1e300;
    for (size_t i = 1; i < r.theta.size(); ++i) {
      forward_kinematics(m, r.theta[i], kin);
      z_end = centre_of_mass(m, kin).z();
      z_max = std::max(z_max, z_end);
      dE_max = std::max(dE_max, energy(m, r.theta[i - 1], r.theta[i], dt) - E0);
    }
    INFO("COM z0 " << z0 << ", max " << z_max << ", end " << z_end << "; max E - E0 " << dE_max << " J, bound "
                   << inject << " J");
    CHECK(z_max <= z0 + 0.02);
    CHECK(dE_max <= inject);
    CHECK(inject < 0.05);  // the bound itself is small: 1 % of the ant's 6.7 J above the floor
    // it came down and rests on the floor (torso sphere r = 0.25 and legs: COM >= 0.2 m)
    CHECK(z_end < z0 - 0.2);
    CHECK(z_end > 0.2);
    const VecX v_end = (r.theta.back() - r.theta[r.theta.size() - 2]) / dt;
    CHECK(v_end.head(3).norm() < 0.05);
  }
}
#endif

TEST_CASE("ne_lcp correction: a box dropped at 0.625 ms does not bounce back from a missed contact", "[ne][lcp][correction]") {
  // one link of configs/chain_floating_ground.yaml (0.2 x 0.04 x 0.04 m box, 8 corners) dropped
  // flat: it lands at ~2.4 m/s, 1.5 mm per step > active_distance 1 mm, so some drop heights
  // cross into the floor before the corners become contacts. The literal correction sent them
  // back at depth / h (bounces of 14 and 21 mm at 0.30 and 0.33 m); capped at 0.1 m/s the rebound
  // is at most v^2 / 2g = 0.5 mm.
  const char* const yaml = R"(scene: box_drop
model:
  links:
    - {name: l0, parent: world, joint: floating, pos: [0, 0, 0], box: {size: [0.2, 0.04, 0.04], density: 1000, centre: [0.1, 0, 0], corners: true}}
  terrain:
    - {normal: [0, 0, 1], offset: 0}
initial: {theta: [0, 0, 0.3, 0, 0, 0]}
integrator: {type: ne_lcp, dt: 0.000625, duration: 0.36}
contact: {mu: 0.5}
)";
  // speculative contacts off: they would stop the corners on the floor (deepest 0 below), and
  // this test is about what the correction does once a contact was missed
  double deepest = 0, deepest_speculative = 0;
  for (const double z0 : {0.30, 0.31, 0.32, 0.33}) {
    INFO("drop from " << z0);
    Scene sc = load_scene_text(yaml, "box_drop", {"initial.theta=[0, 0, " + std::to_string(z0) + ", 0, 0, 0]"});
    {
      const Rollout r = simulate(sc);
      for (const StepStats& st : r.stats) REQUIRE(st.converged());
      for (const VecX& th : r.theta) deepest_speculative = std::max(deepest_speculative, 0.02 - th[2]);
    }
    sc.ne.speculative = false;
    const Rollout r = simulate(sc);
    for (const StepStats& st : r.stats) REQUIRE(st.converged());
    // the box rests with its centre at z = 0.02; rebound = the highest z after the first touch
    size_t touch = 0;
    while (touch < r.theta.size() && r.theta[touch][2] > 0.021) ++touch;
    REQUIRE(touch < r.theta.size());
    double z_min = 1, z_after = 0;
    for (size_t i = touch; i < r.theta.size(); ++i) {
      z_min = std::min(z_min, r.theta[i][2]);
      z_after = std::max(z_after, r.theta[i][2]);
    }
    deepest = std::max(deepest, 0.02 - z_min);
    INFO("lowest " << z_min << ", highest after touching " << z_after);
    CHECK(z_after - 0.02 < 2e-3);
    CHECK(std::abs(r.theta.back()[2] - 0.02) < 1e-4);
  }
  CHECK(deepest > 2e-4);  // some drop did cross the floor: the correction was exercised
  CHECK(deepest_speculative < 1e-6);  // (the box lands flat: its centre sits at the corners' depth)
}

TEST_CASE("ne_lcp correction: a hinge stop hit at speed does not throw the arm back", "[ne][lcp][correction][limit]") {
  // pendulum on a hinge about -y, 1 kg at 0.5 m, from horizontal at rest onto its lower stop at
  // -0.5 rad: impact at ~4.3 rad/s, 4.3 mrad per step > active_distance 1e-3, so the arm crosses
  // the stop before the row is active. NE-LCP's stop is inelastic (restitution 0): after the
  // impact the arm may leave the stop at no more than the correction cap (0.1 rad/s).
  const Model m = limited_joint(JointType::Hinge, -Vec3::UnitY(), 1.0, Vec3(0.5, 0, 0), -0.5, 1.0, true);
  const double dt = 1e-3, lo = -0.5;
  NeSettings s;
  s.dt = dt;
  s.friction_directions = 2;
  // speculative: the stop row is active from the step that would cross it, so the arm stops on it
  s.speculative = true;
  {
    NeLcpIntegrator integ(m, s);
    VecX prev = VecX::Zero(1), cur = VecX::Zero(1), next;
    double deepest = 0, v_rebound = 0;
    for (int n = 0; n < 1500; ++n) {
      REQUIRE(integ.step(cur, prev, VecX(), next).converged());
      if (next[0] <= lo + 1e-3) v_rebound = std::max(v_rebound, (next[0] - cur[0]) / dt);
      deepest = std::max(deepest, lo - next[0]);
      prev = cur;
      cur = next;
    }
    INFO("speculative: deepest " << deepest << ", largest speed off the stop " << v_rebound);
    CHECK(deepest < 1e-6);
    CHECK(v_rebound < 1e-4);  // the cfm slack releases ~3e-6 rad/s as the impulse falls to the hold
  }
  // the plain rule phi <= active_distance: the arm crosses the stop, the capped correction acts
  s.speculative = false;
  NeLcpIntegrator integ(m, s);
  VecX prev = VecX::Zero(1), cur = VecX::Zero(1), next;
  double v_impact = 0, v_rebound = 0, deepest = 0;
  bool hit = false;
  for (int n = 0; n < 1500; ++n) {
    REQUIRE(integ.step(cur, prev, VecX(), next).converged());
    const double v = (next[0] - cur[0]) / dt;
    if (!hit && next[0] <= lo + 1e-3) hit = true, v_impact = (cur[0] - prev[0]) / dt;
    if (hit) v_rebound = std::max(v_rebound, v);
    deepest = std::max(deepest, lo - next[0]);
    prev = cur;
    cur = next;
  }
  INFO("impact " << v_impact << " rad/s, largest rebound " << v_rebound << " rad/s, deepest " << deepest);
  REQUIRE(v_impact < -3.0);
  CHECK(deepest > s.active_distance);           // it did cross the stop
  CHECK(v_rebound <= s.max_correction_speed + 1e-6);
  CHECK(v_rebound <= 0.05 * std::abs(v_impact));  // effectively inelastic
  CHECK(std::abs(cur[0] - lo) < 1e-3);
}
