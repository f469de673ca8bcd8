// Oracle 12, second half (docs/methods/inverse_dynamics.md §10: "on the random height map tracking
// error 19 % below PID"; §9 terrain: rigid height map, bumps <= 3 cm, mu ~ U(0.1, 1.5)): the trot of
// configs/id_quadruped_trot.yaml on bench/paper/id_height_map.py's map (1 s, seeds 0 and 1).
// What holds here (bench/experiments/notes/inverse_dynamics.md "Oracle 12 on the random height map"): ID(t_i) (id_lcp_mu)
// tracks >= 19 % better than the PID without an actuator limit (controller.tau_max = 0), and so does
// ID(t_{i-1}) with the scene's 288 N m; every controller walks the bumps without falling. Under the
// 288 N m limit id_lcp_mu's clamped touchdown torques cost it the margin (3 s, 5 seeds: 2 % worse
// than the PID): not asserted; nor is id_qp_mu (model C's Stage I, bench/experiments/notes/inverse_dynamics.md "Oracle 12, per terrain").
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "batch/rollout.h"
#include "io/scene.h"

using namespace bigstep;

namespace {

struct Run {
  double track = 0;  // mean |joint position error| [rad]
  double tilt = 0;   // largest torso tilt [rad]
  bool aborted = false;
};

Run trot(const std::string& controller, int seed, double tau_max = 288) {
  std::vector<std::string> ov{"integrator.duration=1", "controller.type=" + controller, "batch.contact_mu_min=0.1",
                              "batch.contact_mu_max=1.5", "batch.seed=" + std::to_string(seed),
                              "controller.tau_max=" + std::to_string(tau_max)};
  // bench/paper/id_height_map.py height_map(seed): 0.1 m cells, bumps in [-3, 0] cm, flat outside 6 m x 3 m
  ov.push_back("model.terrain=[{height_map: {size: [6, 3], cells: [60, 30], bump_max: 0.03, seed: " +
               std::to_string(seed) + ", pos: [0.5, 0, -0.03]}}]");
  const Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/id_quadruped_trot.yaml", ov);
  REQUIRE((sc.model.planes.empty() && sc.model.hfield.size() == 1));  // the map replaced the plane
  const Rollout r = simulate(sc);
  const Metrics m = compute_metrics(sc, r);
  return {m.track_pos_rad, m.tilt_max_rad, r.aborted};
}

}  // namespace

TEST_CASE("id height map: ID(t_i) without torque limit and ID(t_{i-1}) track >= 19 % better than the PID on bumps "
          "<= 3 cm, random mu; all stay up", "[id_controller][height_map]") {
  for (const int seed : {0, 1}) {
    const Run pd = trot("pd", seed), prev1 = trot("id_prev1", seed), lcp = trot("id_lcp_mu", seed),
              lcp_free = trot("id_lcp_mu", seed, 0);
    INFO("seed " << seed << ": |e_q| pd " << pd.track << ", id_prev1 " << prev1.track << ", id_lcp_mu " << lcp.track
                 << ", id_lcp_mu unlimited " << lcp_free.track);
    for (const Run& r : {pd, prev1, lcp, lcp_free}) {
      CHECK(!r.aborted);
      CHECK(r.tilt < 0.25);  // measured <= 0.153 rad (id_lcp_mu unlimited, seed 0)
    }
    // the paper's 19 %: measured 87 / 97 % below (0.0024 / 0.0005 vs 0.0186 / 0.0176 rad)
    CHECK(lcp_free.track < 0.81 * pd.track);
    // and 64 / 68 % below (0.0066 / 0.0056 rad)
    CHECK(prev1.track < 0.81 * pd.track);
  }
}
