// Newton-Euler baselines (docs/methods/newton_euler.md §2-§3): dry-friction analytic oracles, stiction,
// free flight and energy conservation; body-body contact, joint limits, damping and armature.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <memory>
#include <vector>

#include "core/error.h"
#include "batch/rollout.h"
#include "solvers/ne/ne_lcp.h"
#include "solvers/ne/ne_mdp.h"
#include "solvers/nmdp/nmdp_terms.h"
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
    CHECK(std::abs(mt.sliding_distance_m - expect) <= 0.02 * expect);  // 2 % at dt = 1 ms
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

// ---------------------------------------------------------------------------------------------
// Contact set, joint limits, damping and armature
// ---------------------------------------------------------------------------------------------

namespace {

// A link of mass m with a diagonal central inertia i (kg m^2), COM at com (link frame).
LinkSpec ne_link(const char* name, int parent, JointType j, double mass, double i, const Vec3& com = Vec3::Zero()) {
  LinkSpec l;
  l.name = name;
  l.parent = parent;
  l.joint = j;
  l.mass = mass;
  l.com = com;
  l.inertia = i * Mat3::Identity();
  return l;
}

GeomSpec ne_geom(GeomType t, int link, const Vec3& pos, const Vec3& size) {
  GeomSpec g;
  g.type = t;
  g.link = link;
  g.pos = pos;
  g.size = size;
  return g;
}

NeSettings ne_settings(double dt) {
  NeSettings s;
  s.dt = dt;
  s.friction_directions = 2;  // planar x-z models
  return s;
}

// "ne_lcp" or "ne_mdp" on m with settings s.
std::unique_ptr<Integrator> make_ne(const std::string& type, const Model& m, const NeSettings& s) {
  if (type == "ne_lcp") return std::make_unique<NeLcpIntegrator>(m, s);
  return std::make_unique<NeMdpIntegrator>(m, s);
}

// Steps integ from theta_0 with theta_prev = theta_0 - dtheta_0 for n steps; theta after each step (theta[0] = theta_0).
std::vector<VecX> run(Integrator& integ, const VecX& th0, const VecX& thd0, int n, const VecX& tau = VecX(),
                      const std::function<void(const VecX& th, const VecX& th_next)>& each = nullptr) {
  std::vector<VecX> th{th0};
  VecX prev = th0 - thd0, cur = th0, next;
  for (int s = 0; s < n; ++s) {
    const StepStats st = integ.step(cur, prev, tau, next);
    REQUIRE(st.converged());
    if (each) each(cur, next);
    prev = cur;
    cur = next;
    th.push_back(cur);
  }
  return th;
}

}  // namespace

TEST_CASE("ne baselines: a ball on a moving link comes to rest on a box fixed to the world", "[ne][contact]") {
  // ball (r = 0.1) on a planar link dropped from z = 0.5 onto a world box whose top is z = 0.1
  ModelSpec spec;
  spec.links.push_back(ne_link("ball", -1, JointType::Planar, 1.0, 0.004));
  spec.geoms.push_back(ne_geom(GeomType::Sphere, 0, Vec3::Zero(), Vec3(0.1, 0, 0)));
  spec.geoms.push_back(ne_geom(GeomType::Box, -1, Vec3::Zero(), Vec3(0.5, 0.5, 0.1)));
  const Model m = Model::finalize(spec);
  REQUIRE(m.max_contacts == 1);
  const double dt = 1e-3, rest = 0.2;
  for (const char* type : {"ne_lcp", "ne_mdp"}) {
    const NeSettings s = ne_settings(dt);
    const std::unique_ptr<Integrator> integ = make_ne(type, m, s);
    const std::vector<VecX> th = run(*integ, Vec3(0.05, 0.5, 0), Vec3(0.2 * dt, 0, 0), 1500);
    double lowest = 1e9;
    for (const VecX& x : th) lowest = std::min(lowest, x[1]);
    const VecX& end = th.back();
    const double v_end = (th.back() - th[th.size() - 2]).norm() / dt;
    INFO(type << ": lowest z " << lowest << ", final z " << end[1] << ", final speed " << v_end);
    CHECK(v_end < 1e-3);                 // at rest, on top
    CHECK(end[1] > 0.1);                 // no tunnelling through the 0.2 m box
    if (std::string(type) == "ne_lcp") {
      // the impact step can overshoot by v dt (2.4 mm at 2.4 m/s) before the row activates
      CHECK(rest - lowest <= s.active_distance + 2.5e-3);
      CHECK(std::abs(end[1] - rest) < 1e-4);
    } else {
      // MDP has no position correction: the depth the impact pressed in (force capped at
      // k_c (d^3 + zeta_s), N_s = 1 here, 2.4 m/s) stays, ~ 4 d_ref
      CHECK(rest - end[1] > 0);
      CHECK(rest - lowest < 5 * s.d_ref);
      CHECK(end[1] - lowest < 1e-3);
    }
  }
}

TEST_CASE("ne baselines: a ball comes to rest on a second body resting on the floor", "[ne][contact]") {
  // box link (planar, 0.4 x 0.4 x 0.1 m, 2 kg) on a world plane; ball link (r = 0.1, 1 kg) dropped
  // on it: a body-body contact whose impulse acts + on the ball and - on the box
  ModelSpec spec;
  spec.links.push_back(ne_link("box", -1, JointType::Planar, 2.0, 0.03));
  spec.links.push_back(ne_link("ball", -1, JointType::Planar, 1.0, 0.004));
  spec.geoms.push_back(ne_geom(GeomType::Box, 0, Vec3::Zero(), Vec3(0.2, 0.2, 0.05)));
  spec.geoms.push_back(ne_geom(GeomType::Sphere, 1, Vec3::Zero(), Vec3(0.1, 0, 0)));
  spec.geoms.push_back(ne_geom(GeomType::Plane, -1, Vec3::Zero(), Vec3::Zero()));
  const Model m = Model::finalize(spec);
  const double dt = 1e-3;
  for (const char* type : {"ne_lcp", "ne_mdp"}) {
    const NeSettings s = ne_settings(dt);
    const std::unique_ptr<Integrator> integ = make_ne(type, m, s);
    VecX th0(6), thd0 = VecX::Zero(6);
    th0 << 0, 0.05, 0, 0.03, 0.45, 0;
    const std::vector<VecX> th = run(*integ, th0, thd0, 1500);
    const VecX& end = th.back();
    const double v_end = (th.back() - th[th.size() - 2]).norm() / dt;
    double ball_gap = 1e9;  // smallest ball bottom - box top
    for (const VecX& x : th) ball_gap = std::min(ball_gap, (x[4] - 0.1) - (x[1] + 0.05));
    INFO(type << ": box z " << end[1] << ", ball z " << end[4] << ", smallest gap " << ball_gap
              << ", final speed " << v_end);
    CHECK(v_end < 1e-3);
    CHECK(end[4] > end[1]);  // the ball is still above the box: no tunnelling
    if (std::string(type) == "ne_lcp") {
      CHECK(std::abs(end[1] - 0.05) < 1e-4);               // box on the floor
      CHECK(std::abs(end[4] - (end[1] + 0.15)) < 1e-4);    // ball on the box
      CHECK(-ball_gap <= s.active_distance + 2.5e-3);
    } else {
      // MDP has no position correction: what the impact pressed in (the ball falling 0.25 m onto
      // the box, force capped at k_c (d^3 + zeta_s) with N_s = max_contacts / 2 = 5) stays
      CHECK(std::abs(end[1] - 0.05) < 3 * s.d_ref);
      CHECK(std::abs(end[4] - (end[1] + 0.15)) < 5 * s.d_ref);
      CHECK(-ball_gap < 5 * s.d_ref);
    }
  }
}

namespace {
// Pendulum: hinge about -y at the origin, 1 kg at 0.5 m along x; theta > 0 lifts it, so gravity
// drives it down onto the lower stop lo = -0.5 from theta = 0 at rest.
Model stop_pendulum() {
  ModelSpec spec;
  LinkSpec l = ne_link("arm", -1, JointType::Hinge, 1.0, 0.001, Vec3(0.5, 0, 0));
  l.axis = -Vec3::UnitY();
  l.limited = true;
  l.range[0] = -0.5;
  l.range[1] = 1.0;
  spec.links.push_back(l);
  return Model::finalize(spec);
}
}  // namespace

TEST_CASE("ne_lcp: a pendulum stops at its hinge limit; the limit impulse is >= 0 and complementary", "[ne][limit]") {
  const Model m = stop_pendulum();
  REQUIRE(m.n_limit == 1);
  const double dt = 1e-3, lo = -0.5;
  NeSettings s = ne_settings(dt);
  s.active_distance = 0.01;  // > omega dt at impact (4.3 rad/s): the stop row is active before it is crossed
  NeLcpIntegrator integ(m, s);
  int limit_steps = 0;
  const std::vector<VecX> th = run(integ, VecX::Zero(1), VecX::Zero(1), 1500, VecX(), [&](const VecX& x, const VecX& xn) {
    const NeLcpWorkspace& ws = static_cast<const NeLcpWorkspace&>(*integ.lone_data()->ws);
    REQUIRE(ws.nc == 0);
    if (ws.nl == 0) return;
    ++limit_steps;
    REQUIRE(ws.N == 1);
    const double z = ws.z[0], w = ws.w[0];
    // lambda >= 0, w = s v+ + phi / h (+ the cfm slack) >= 0, lambda w = 0
    CHECK(z >= 0);
    CHECK(w >= -1e-9);
    CHECK(std::abs(z * w) <= 1e-9 * (1 + std::abs(z)) * (1 + std::abs(w)));
    const double depth = lo - x[0];
    // the row's physics: w = s v+ - depth / h + cfm max(diag G) lambda (the contact compliance)
    const double g00 = ws.G.data()[0];
    CHECK(w == Approx((xn[0] - x[0]) / dt - depth / dt + s.cfm * g00 * z).margin(1e-9 * (1 + z / dt)));
  });
  double lowest = 0;
  for (const VecX& x : th) lowest = std::min(lowest, x[0]);
  const double v_end = std::abs(th.back()[0] - th[th.size() - 2][0]) / dt;
  INFO("lowest " << lowest << ", final " << th.back()[0] << ", active stop steps " << limit_steps);
  CHECK(limit_steps > 100);
  CHECK(lowest >= lo - 1e-3);
  CHECK(std::abs(th.back()[0] - lo) < 1e-4);
  CHECK(v_end < 1e-3);
  for (const VecX& x : th) CHECK(x[0] <= 1.0);
}

TEST_CASE("ne_mdp: a pendulum stops at its hinge limit (force-limited normal column)", "[ne][limit]") {
  const Model m = stop_pendulum();
  const double dt = 1e-3, lo = -0.5;
  NeMdpIntegrator integ(m, ne_settings(dt));
  const std::vector<VecX> th = run(integ, VecX::Zero(1), VecX::Zero(1), 2000);
  double lowest = 0;
  for (const VecX& x : th) lowest = std::min(lowest, x[0]);
  const double v_end = std::abs(th.back()[0] - th[th.size() - 2][0]) / dt;
  // the column's force is capped at k_c (d^3 + zeta_s) (N_s = 1: no contact points), so the impact
  // at 4.3 rad/s presses in until k_c d^4 / 4 ~ the kinetic energy, d ~ 2 cm; MDP has no position
  // correction, so the arm rests there, where k_c d^3 far exceeds the gravity torque
  INFO("lowest " << lowest << ", final " << th.back()[0]);
  CHECK(lowest >= lo - 0.03);
  CHECK(th.back()[0] < lo);
  CHECK(th.back()[0] - lowest < 1e-3);
  CHECK(v_end < 1e-3);
  for (const VecX& x : th) CHECK(x[0] <= 1.0);
}

TEST_CASE("ne baselines: implicit damping and armature, v+ = v (m + a) / (m + a + dt b)", "[ne][damping]") {
  // a 1-DOF slider, no gravity: (m + a + dt b) v+ = (m + a) v
  const double mass = 2.0, a = 0.5, b = 3.0, dt = 0.01;
  ModelSpec spec;
  LinkSpec l = ne_link("slider", -1, JointType::Prismatic, mass, 0.01);
  l.axis = Vec3::UnitX();
  l.damping = b;
  l.armature = a;
  spec.links.push_back(l);
  spec.gravity = Vec3::Zero();
  const Model m = Model::finalize(spec);
  const double r = (mass + a) / (mass + a + dt * b);
  for (const char* type : {"ne_lcp", "ne_mdp"}) {
    const std::unique_ptr<Integrator> integ = make_ne(type, m, ne_settings(dt));
    const std::vector<VecX> th = run(*integ, VecX::Zero(1), VecX::Constant(1, dt), 50);
    double v = 1.0;
    for (size_t n = 1; n < th.size(); ++n) {
      v *= r;
      INFO(type << " step " << n);
      CHECK((th[n][0] - th[n - 1][0]) / dt == Approx(v).epsilon(1e-12));
    }
  }
}

TEST_CASE("ne baselines: armature, a hinge under constant torque accelerates at tau / (I + a)", "[ne][armature]") {
  // vertical hinge (no gravity torque), I_zz = 0.2 about the axis through the COM, armature 0.3
  const double I = 0.2, a = 0.3, tau = 1.5, dt = 1e-3;
  ModelSpec spec;
  LinkSpec l = ne_link("wheel", -1, JointType::Hinge, 1.0, I);
  l.axis = Vec3::UnitZ();
  l.armature = a;
  spec.links.push_back(l);
  const Model m = Model::finalize(spec);
  for (const char* type : {"ne_lcp", "ne_mdp"}) {
    const std::unique_ptr<Integrator> integ = make_ne(type, m, ne_settings(dt));
    const std::vector<VecX> th = run(*integ, VecX::Zero(1), VecX::Zero(1), 100, VecX::Constant(1, tau));
    for (size_t n = 1; n < th.size(); ++n) {
      INFO(type << " step " << n);
      CHECK((th[n][0] - th[n - 1][0]) / dt == Approx(double(n) * dt * tau / (I + a)).epsilon(1e-12));
    }
  }
}

TEST_CASE("ne_mdp: automatic k_c, N_s = half the contact points", "[ne][mdp]") {
  // shipped scenes (legacy contact points only): the value make_mdp_polytope gives, bit for bit
  for (const char* cfg : {"box_slide.yaml", "chain_slope.yaml", "quadruped_spider.yaml"}) {
    const Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/" + cfg, {"integrator.type=ne_mdp"});
    REQUIRE(sc.model.sphere_geom_adr == 0);
    const NeMdpIntegrator integ(sc.model, sc.ne);
    INFO(cfg);
    CHECK(integ.k_c() == make_mdp_polytope(sc.model, sc.ne).k_c);
  }
  // explicit geoms: N_s = max_contacts / 2 (a box on a plane: 8 corners, N_s = 4)
  ModelSpec spec;
  spec.links.push_back(ne_link("box", -1, JointType::Planar, 2.0, 0.03));
  spec.geoms.push_back(ne_geom(GeomType::Box, 0, Vec3::Zero(), Vec3(0.2, 0.2, 0.05)));
  spec.geoms.push_back(ne_geom(GeomType::Plane, -1, Vec3::Zero(), Vec3::Zero()));
  const Model m = Model::finalize(spec);
  REQUIRE(m.max_contacts == 8);
  const NeSettings s = ne_settings(1e-3);
  CHECK(NeMdpIntegrator(m, s).k_c() == Approx(m.weight() / (4 * std::pow(s.d_ref, 3))).epsilon(1e-15));
}

TEST_CASE("ne contacts: legacy contact points give the legacy sphere x plane frames", "[ne][contact]") {
  // on the shipped scenes every contact is a point (or sphere) on a plane: the frame's J is the
  // point Jacobian of the sphere centre bit for bit (the legacy collect_contacts), so NE-LCP and
  // NE-MDP trajectories are unchanged; and it equals contact_core_jacobians up to round-off
  for (const char* cfg : {"box_slide.yaml", "chain_slope.yaml", "quadruped_spider.yaml"}) {
    const Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/" + cfg, {"integrator.type=ne_lcp"});
    const Model& m = sc.model;
    Kinematics kin(m);
    forward_kinematics(m, sc.theta0, kin);
    NeContacts con(m, 4);
    con.update(m, kin, sc.theta0, 0.05, 4);
    INFO(cfg);
    REQUIRE(con.n_con > 0);
    MatX J(3, m.n_q), Ja(3, m.n_q), Jb(3, m.n_q), Jc(3, m.n_q);
    for (int i = 0; i < con.n_con; ++i) {
      const Contact& c = con.set.con[i];
      REQUIRE(c.geom_a >= m.sphere_geom_adr);
      REQUIRE(c.geom_b >= m.plane_geom_adr);
      const ContactSphere& sp = m.spheres[c.geom_a - m.sphere_geom_adr];
      const Plane& pl = m.planes[c.geom_b - m.plane_geom_adr];
      point_jacobian(m, kin, sp.link, point_position(kin, sp.link, sp.centre), J);
      CHECK(con.frames[i].J == J);
      CHECK(con.frames[i].n == pl.normal);
      CHECK(con.frames[i].phi ==
            Approx(pl.normal.dot(point_position(kin, sp.link, sp.centre)) - pl.offset - sp.radius).margin(1e-15));
      contact_core_jacobians(m, kin, c, Ja, Jb, Jc);
      CHECK((Jc - J).norm() <= 1e-12 * (1 + J.norm()));
    }
  }
}
