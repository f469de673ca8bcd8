// Gimbal lock of a floating base's middle Euler angle (docs/methods/pbfd.md §2.1, core/kinematics.h gimbal_locked):
// every integrator flags a step that starts with |cos ry| < 1e-6 (STATUS_GIMBAL_LOCK) and holds the
// state. The PBD / PBFD and NMDP steps always did; the Newton-Euler smooth step (NE-LCP, NE-MDP,
// compliant) did not, and a cube that tumbled onto a side face (ry = pi/2 to 1e-9) was stepped with
// H singular to 1e-18 until its state reached 1e61 m, every step reported ok.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "core/types.h"
#include "batch/rollout.h"
#include "io/scene.h"

using namespace bigstep;

namespace {

const char* const kCube = R"(scene: cube
model:
  gravity: [0, 0, -9.81]
  links:
    - {name: cube, joint: floating, box: {size: [0.2, 0.2, 0.2], mass: 1}}
  geoms:
    - {name: floor, type: plane}
    - {name: cube, link: cube, type: box, size: [0.1, 0.1, 0.1]}
initial: {theta: [0, 0, 0.4, 0, 0, 0]}
integrator: {type: ne_lcp, dt: 0.02, duration: 1.0}
contact: {mu: 0.5}
)";

double max_abs(const Rollout& r) {
  double m = 0;
  for (const VecX& th : r.theta) m = std::max(m, th.cwiseAbs().maxCoeff());
  return m;
}

}  // namespace

TEST_CASE("gimbal lock: every Newton-Euler step flags ry = pi/2 and holds the state", "[ne][gimbal]") {
  for (const char* type : {"ne_lcp", "ne_mdp", "compliant", "pbfd", "nmdp_ne"}) {
    INFO(type);
    const Scene sc = load_scene_text(kCube, "cube", {std::string("integrator.type=") + type,
                                                      "initial.theta=[0, 0, 0.3, 0.2, 1.5707963267948966, 0.1]"});
    const Rollout r = simulate(sc);
    REQUIRE(r.stats.size() == 1);  // the run stops at the flagged step
    CHECK((r.stats[0].status & STATUS_GIMBAL_LOCK) != 0);
    CHECK(r.aborted);
    CHECK(r.theta.back() == r.theta.front());  // held, not stepped
  }
}

TEST_CASE("gimbal lock: NE-LCP flags a cube tumbling onto a side face instead of stepping it to 1e61 m", "[ne][gimbal]") {
  // thrown down spinning about its y axis at 15 rad/s: it lands on a face with ry = pi/2 (to 1e-8)
  const Scene sc = load_scene_text(kCube, "cube", {"initial.theta=[0, 0, 0.4, 0.3, 0.2, 0.1]",
                                                   "initial.theta_dot=[0, 0, -5, 0, 15, 0]"});
  const Rollout r = simulate(sc);
  INFO("steps run " << r.stats.size() << ", largest |theta| " << max_abs(r));
  CHECK(max_abs(r) < 10);  // before: 1e61 (then 1e103)
  for (const VecX& th : r.theta) CHECK(th.allFinite());
  REQUIRE(!r.stats.empty());
  CHECK((r.stats.back().status & STATUS_GIMBAL_LOCK) != 0);
  CHECK(r.aborted);
}
