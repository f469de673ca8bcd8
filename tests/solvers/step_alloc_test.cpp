// No heap allocation inside a step (issue 10 item 5, design.md "No heap allocation inside a step"):
// after a rollout's Data is made and one warm-up step has sized what depends on the contact set,
// a step of every integrator on every scene allocates nothing.
#include <catch2/catch.hpp>

#include <algorithm>

#include "envs/batch.h"
#include "tests/support/malloc_guard.h"

using namespace bigstep;

namespace {

struct Case {
  const char* config;
  const char* integrator;
  double dt;
};

long allocations_per_step(const Case& c) {
  const Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/" + c.config,
                              {std::string("integrator.type=") + c.integrator, "integrator.dt=" + std::to_string(c.dt)});
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

// Not yet allocation-free (issue 10 item 5 continues): NMDP still builds its
// polytope columns and PGM matrices per step. The budget can only go down; lower it as each
// solver moves its buffers into its workspace.
TEST_CASE("allocation budget per step: NMDP (ratchet towards 0)", "[alloc]") {
  struct Budget {
    Case c;
    long max;
  };
  const Budget budgets[] = {
      {{"box_slide.yaml", "nmdp_ne", 0.01}, 753},        {{"box_slide.yaml", "nmdp_pbd", 0.01}, 372},
      {{"chain_slope.yaml", "nmdp_ne", 0.01}, 2611},     {{"chain_slope.yaml", "nmdp_pbd", 0.01}, 1596},
      {{"quadruped_spider.yaml", "nmdp_ne", 0.01}, 2679}, {{"quadruped_spider.yaml", "nmdp_pbd", 0.01}, 1172},
  };
  for (const Budget& b : budgets) {
    const long n = allocations_per_step(b.c);
    INFO(b.c.config << " " << b.c.integrator << ": " << n << " allocations per step");
    CHECK(n <= b.max);
  }
}
