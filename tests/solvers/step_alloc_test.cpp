// No heap allocation inside a step (docs/architecture.md §5):
// after a rollout's Data is made and one warm-up step has sized what depends on the contact set,
// a step of every integrator on every scene allocates nothing.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "batch/batch.h"
#include "solvers/pbd/pbd_step.h"
#include "tests/support/malloc_guard.h"

using namespace bigstep;

namespace {

struct Case {
  const char* config;
  const char* integrator;
  double dt;
};

long allocations_per_step(const Case& c, std::vector<std::string> overrides = {}) {
  overrides.push_back(std::string("integrator.type=") + c.integrator);
  overrides.push_back("integrator.dt=" + std::to_string(c.dt));
  const Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/" + c.config, overrides);
  const auto integ = make_integrator(sc);
  Data d = integ->make_data();
  d.theta = sc.theta0;
  d.theta_prev = sc.theta0 - sc.settings.dt * sc.theta_dot0;
  const RolloutParams p = integ->default_params();
  StepControl u{sc.tau, sc.pd.active() ? &sc.pd : nullptr, 0.0};
  for (int s = 0; s < 3; ++s) {  // warm-up
    u.t = s * sc.settings.dt;
    integ->step(d, u, p);
  }
  long worst = 0;
  for (int s = 3; s < 6; ++s) {
    u.t = s * sc.settings.dt;
    test::MallocCounter mc;
    integ->step(d, u, p);
    worst = std::max(worst, mc.count());
  }
  return worst;
}

}  // namespace

TEST_CASE("malloc guard counts allocations", "[alloc]") {
  test::MallocCounter mc;
  VecX v(100);
  v.setZero();
  CHECK(mc.count() >= 1);
}

const char* const kConfigs[] = {"box_slide.yaml", "chain_fixed.yaml", "chain_floating_ground.yaml",
                                "chain_slope.yaml", "quadruped_spider.yaml"};

TEST_CASE("no allocation in a step: PBD and PBFD (LM, JTJ-LM) on every scene", "[alloc]") {
  const Case integrators[] = {{"", "pbfd", 0.01}, {"", "pbd", 0.01}};
  for (const char* cfg : kConfigs)
    for (Case c : integrators) {
      c.config = cfg;
      INFO(cfg << " " << c.integrator);
      CHECK(allocations_per_step(c) == 0);
    }
}

TEST_CASE("no allocation in a step: PBD and PBFD with geoms, a joint limit, damping, armature and a spring", "[alloc]") {
  // a floating ball (sphere geom) resting into a world box, with a hinged arm carrying a sphere
  // that touches the box too; the hinge is past its upper stop and damped, with armature and a spring
  ModelSpec spec;
  LinkSpec ball, arm;
  ball.name = "ball";
  ball.joint = JointType::Floating;
  ball.mass = 1;
  ball.inertia = 0.004 * Mat3::Identity();
  arm.name = "arm";
  arm.parent = 0;
  arm.joint = JointType::Hinge;
  arm.axis = Vec3::UnitY();
  arm.t_o = Vec3(0.15, 0, 0);
  arm.mass = 0.5;
  arm.com = Vec3(0.1, 0, 0);
  arm.inertia = 0.002 * Mat3::Identity();
  arm.limited = true;
  arm.range[0] = -0.1;
  arm.range[1] = 0.1;
  arm.damping = 0.5;
  arm.armature = 0.01;
  arm.stiffness = 2;
  arm.springref = -0.05;
  spec.links = {ball, arm};
  GeomSpec sphere, tip, box;
  sphere.type = GeomType::Sphere;
  sphere.link = 0;
  sphere.size[0] = 0.1;
  tip.type = GeomType::Sphere;
  tip.link = 1;
  tip.pos = Vec3(0.1, 0, 0);
  tip.size[0] = 0.1;
  box.type = GeomType::Box;
  box.link = -1;
  box.size = Vec3(1, 1, 0.1);
  spec.geoms = {sphere, tip, box};
  const Model m = Model::finalize(spec);
  for (Formulation f : {Formulation::Pbd, Formulation::Pbfd})
    for (Optimizer o : {Optimizer::Lm, Optimizer::JtjLm}) {
      if (f == Formulation::Pbfd && o == Optimizer::Lm) continue;
      INFO(formulation_name(f) << "+" << optimizer_name(o));
      PbdSettings s;
      s.formulation = f;
      s.optimizer = o;
      s.contact.c_par = 1e4;
      const PbdIntegrator integ(m, s);
      Data d = integ.make_data();
      d.theta = VecX::Zero(m.n_q);
      d.theta[2] = 0.195;
      d.theta[6] = 0.15;  // past the upper stop
      d.theta_prev = d.theta;
      d.theta_prev[0] -= 0.003;  // sliding: friction active
      const RolloutParams p = integ.default_params();
      StepControl u;
      for (int k = 0; k < 3; ++k) integ.step(d, u, p);  // warm-up
      long worst = 0;
      for (int k = 0; k < 3; ++k) {
        test::MallocCounter mc;
        integ.step(d, u, p);
        worst = std::max(worst, mc.count());
      }
      CHECK(worst == 0);
    }
}

// NE-LCP / NE-MDP: contact set and frames, Delassus, LCP/QP matrices, Lemke's basis re-solve, the QP
// result, crba / rnea scratch and the LDLT factor live in their workspaces.
TEST_CASE("no allocation in a step: NE-LCP and NE-MDP on every scene", "[alloc]") {
  const Case integrators[] = {{"", "ne_lcp", 0.002}, {"", "ne_mdp", 0.002}};
  for (const char* cfg : kConfigs)
    for (Case c : integrators) {
      c.config = cfg;
      INFO(cfg << " " << c.integrator);
      CHECK(allocations_per_step(c) == 0);
    }
}

// NMDP keeps its problem terms, candidates and PGM / QP buffers in its workspace (packed maps
// over max-size storage, an allocation-free rcond) and runs rnea with caller scratch.
TEST_CASE("no allocation in a step: NMDP (NE and PBD forms)", "[alloc]") {
  struct Budget {
    Case c;
    long max;
  };
  const Budget budgets[] = {
      {{"box_slide.yaml", "nmdp_ne", 0.01}, 0},        {{"box_slide.yaml", "nmdp_pbd", 0.01}, 0},
      {{"chain_slope.yaml", "nmdp_ne", 0.01}, 0},      {{"chain_slope.yaml", "nmdp_pbd", 0.01}, 0},
      {{"quadruped_spider.yaml", "nmdp_ne", 0.01}, 0}, {{"quadruped_spider.yaml", "nmdp_pbd", 0.01}, 0},
  };
  for (const Budget& b : budgets) {
    const long n = allocations_per_step(b.c);
    INFO(b.c.config << " " << b.c.integrator << ": " << n << " allocations per step");
    CHECK(n <= b.max);
  }
}

// Joint springs (dof_stiffness / dof_springref) in every integrator: the fixed chain with springs
// on three hinges, one relaxed away from 0 (the terms add nothing to any workspace).
TEST_CASE("no allocation in a step: every integrator with joint springs", "[alloc]") {
  const std::vector<std::string> springs{"model.links[0].stiffness=3", "model.links[2].stiffness=1.5",
                                         "model.links[2].springref=0.2", "model.links[4].stiffness=0.7"};
  const Case integrators[] = {{"chain_fixed.yaml", "pbd", 0.01},     {"chain_fixed.yaml", "pbfd", 0.01},
                              {"chain_fixed.yaml", "ne_lcp", 0.002}, {"chain_fixed.yaml", "ne_mdp", 0.002},
                              {"chain_fixed.yaml", "nmdp_ne", 0.01}, {"chain_fixed.yaml", "nmdp_pbd", 0.01}};
  for (const Case& c : integrators) {
    INFO(c.integrator);
    CHECK(allocations_per_step(c, springs) == 0);
  }
}

// Compliant (docs/methods/compliant.md): rows, M~ and its factor, A*, the N-step QP and the
// cone QP (T-step / joint program) live in its workspace, sized from the model at construction.
TEST_CASE("no allocation in a step: compliant (staggered, joint, polyhedral) on every scene and its own", "[alloc]") {
  for (const char* cfg : kConfigs)
    for (const char* opt : {"compliant.friction_solve=staggered", "compliant.friction_solve=joint",
                            "compliant.friction_cone=polyhedral"}) {
      INFO(cfg << " " << opt);
      CHECK(allocations_per_step({cfg, "compliant", 0.01}, {opt}) == 0);
    }
  for (const char* cfg : {"smd.yaml", "pendulum_absolute.yaml", "pendulum_limit.yaml", "box_foundation.yaml",
                          "incline_box.yaml", "sphere_stack.yaml"}) {
    INFO(cfg);
    CHECK(allocations_per_step({cfg, "compliant", 0.01}, {"compliant.friction_solve=staggered"}) == 0);
  }
}

TEST_CASE("no allocation in a step that re-anchors a rotation chart, every integrator", "[alloc][chart]") {
  // the floating chain's base turned past 45 degrees before each measured step: the step re-anchors
  // the chart (core/chart.h) and re-expresses the state and what the method carries
  for (const char* type : {"pbd", "pbfd", "ne_lcp", "ne_mdp", "nmdp_ne", "nmdp_pbd", "compliant"}) {
    INFO(type);
    const Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/chain_floating_ground.yaml",
                                {std::string("integrator.type=") + type, "integrator.dt=0.005"});
    REQUIRE(sc.model.n_chart == 1);
    const int pitch = sc.model.chart_dof[0] + 1;
    const auto integ = make_integrator(sc);
    Data d = integ->make_data();
    d.theta_prev = d.theta = sc.theta0;  // at rest
    const RolloutParams p = integ->default_params();
    StepControl u;
    long worst = 0;
    for (int s = 0; s < 6; ++s) {
      d.theta[pitch] = 1.2;
      d.theta_prev[pitch] = 1.19;
      const Mat3 C = d.chart[0];
      if (s < 3) {  // warm-up
        integ->step(d, u, p);
        continue;
      }
      test::MallocCounter mc;
      integ->step(d, u, p);
      worst = std::max(worst, mc.count());
      CHECK(d.chart[0] != C);  // it did re-anchor
    }
    CHECK(worst == 0);
  }
}
