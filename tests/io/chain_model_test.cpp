// io/chain_model.h builds configs/chain_fixed.yaml's chain for any length: with 10 links it has
// the scene's joint-space inertia and gravity torques at random configurations.
#include <catch2/catch.hpp>

#include <random>

#include "core/crba.h"
#include "core/rnea.h"
#include "io/chain_model.h"
#include "io/scene.h"

using namespace bigstep;

TEST_CASE("fixed_chain_model(10) is configs/chain_fixed.yaml's chain", "[envs]") {
  const Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/chain_fixed.yaml");
  const Model m = fixed_chain_model(10);
  REQUIRE(m.n_q == sc.model.n_q);
  CHECK(m.total_mass == Approx(sc.model.total_mass).epsilon(1e-12));
  std::mt19937 rng(2);
  std::uniform_real_distribution<double> U(-1, 1);
  for (int trial = 0; trial < 3; ++trial) {
    VecX q(10);
    for (int i = 0; i < 10; ++i) q[i] = U(rng);
    MatX H, Hs;
    crba(m, q, H);
    crba(sc.model, q, Hs);
    CHECK((H - Hs).lpNorm<Eigen::Infinity>() <= 1e-12 * (1 + Hs.lpNorm<Eigen::Infinity>()));
    CHECK((gravity_torques(m, q) - gravity_torques(sc.model, q)).lpNorm<Eigen::Infinity>() <= 1e-11);
  }
  CHECK_THROWS_WITH(fixed_chain_model(0), Catch::Contains("fixed chain links"));
}
