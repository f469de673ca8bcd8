// Per-contact random friction (batch.contact_mu_min / max; batch/batch.h draw_geom_mu,
// RolloutParams::geom_mu; the random terrain of docs/methods/inverse_dynamics.md §9): the draws are
// seeded, per rollout and per geom, inside [min, max] and redrawn per episode; the NE-LCP uses the
// contact's own mu (a box on an incline: sticks above tan(theta), slides with the Coulomb
// acceleration below it); the ID controllers read the same values.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "batch/batch.h"
#include "batch/rollout.h"
#include "io/scene.h"
#include "control/inverse_dynamics/id_controller.h"

using namespace bigstep;

namespace {

// configs/incline_box.yaml (gravity tilted: tan(theta) = 2.539 / 9.476 = 0.268, 4 corner contacts)
// under the NE-LCP at 1 ms
Scene incline(std::vector<std::string> extra = {}) {
  extra.insert(extra.end(), {"integrator.type=ne_lcp", "integrator.dt=0.001", "integrator.duration=0.5"});
  return load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/incline_box.yaml", extra);
}

}  // namespace

TEST_CASE("contact mu: seeded per rollout and per geom, in range, redrawn per episode", "[batch][contact_mu]") {
  const Scene sc = incline({"batch.contact_mu_min=0.1", "batch.contact_mu_max=1.5"});
  REQUIRE(sc.contact_mu_max == 1.5);
  const int K = 3, G = sc.model.n_geom;
  BatchOptions opt{K, 5, 1, 0, 0, 0, 0, 0, sc.contact_mu_min, sc.contact_mu_max};
  StateBatch b(K, sc.model.n_q), b2(K, sc.model.n_q);
  RolloutParamTable p, p2;
  init_batch(sc, opt, b, p);
  init_batch(sc, opt, b2, p2);
  REQUIRE(p.geom_mu.size() == size_t(K * G));
  CHECK(p.geom_mu == p2.geom_mu);  // same seed, same draws
  for (double mu : p.geom_mu) CHECK((mu >= 0.1 && mu <= 1.5));
  CHECK(p.geom_mu[0] != p.geom_mu[1]);      // per geom
  CHECK(p.geom_mu[0] != p.geom_mu[size_t(G)]);  // per rollout
  const std::vector<double> before = p.geom_mu;
  reset_rollouts(sc, opt, b, {1});
  redraw_params(sc, opt, b, p, {1});
  for (int g = 0; g < G; ++g) {
    CHECK(p.geom_mu[size_t(g)] == before[size_t(g)]);          // rollout 0 kept
    CHECK(p.geom_mu[size_t(G + g)] != before[size_t(G + g)]);  // rollout 1: a new episode, new draws
  }
  // the lone-rollout draw (bigstep run without --rollouts): seeded, in range
  const std::vector<double> lone = scene_geom_mu(sc);
  REQUIRE(lone.size() == size_t(G));
  CHECK(lone == scene_geom_mu(sc));
  for (double mu : lone) CHECK((mu >= 0.1 && mu <= 1.5));
  CHECK(scene_geom_mu(incline()).empty());
}

TEST_CASE("contact mu: the NE-LCP uses each contact's own mu (incline box)", "[batch][contact_mu]") {
  const Scene sc = incline();
  const int K = 2, G = sc.model.n_geom;
  BatchOptions opt{K, 0, 1, 0, 0, 0, 0, 0, 0, 0};
  StateBatch b(K, sc.model.n_q);
  RolloutParamTable p;
  init_batch(sc, opt, b, p);
  // rollout 0: every contact mu = 0.5 > tan(theta) (sticks); rollout 1: mu = 0.1 (slides)
  p.geom_mu.assign(size_t(K * G), 0.5);
  for (int g = 0; g < G; ++g) p.geom_mu[size_t(G + g)] = 0.1;
  CpuBatchStepper eng(sc, 1);
  for (int s = 0; s < sc.steps(); ++s) eng.step(b, p);
  const double gt = 2.5390148316, gn = 9.4757323562, t = sc.steps() * sc.settings.dt;
  CHECK(std::abs(b.row(b.theta, 0)[0]) < 1e-4);
  // sliding: x = 1/2 (g_t - mu g_n) t^2 (the contact.mu = 0.25 of the scene is not used)
  const double x_slide = 0.5 * (gt - 0.1 * gn) * t * t;
  CHECK(b.row(b.theta, 1)[0] == Approx(x_slide).epsilon(0.03));
}
