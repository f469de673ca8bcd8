// model.terrain[i].height_map (io/model_yaml.cpp, core/height_field.h) in scenes: bad values are
// errors naming key and value; a ball on a slider rests on the bumps at the height of a brute-force
// oracle under the NE-LCP (touching) and PBFD (sunk by its penalty depth); a flat map reproduces the
// plane's rollout bit for bit; the team engine and the MJCF export refuse the map, naming it.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "batch/batch_engines.h"
#include "io/mjcf_export.h"
#include "batch/rollout.h"
#include "io/scene.h"
#include "solvers/registry.h"
#include "tests/support/scene_errors.h"
#include "tests/support/tol.h"

using namespace bigstep;
using namespace bigstep::test;

namespace {

// A 1 kg ball (r = 5 cm) on a vertical slider at (x, y) = (0.13, -0.07) over a 1 m x 1 m map of
// 0.1 m cells, bumps <= 3 cm (seed 3), dropped from 1 cm above its resting height.
const char* kBall = R"(scene: hmap_ball
model:
  links:
    - {name: ball, parent: world, joint: prismatic, axis: [0, 0, 1], pos: [0.13, -0.07, 0], mass: 1,
       inertia: [1.0e-3, 1.0e-3, 1.0e-3], damping: 20}
  contacts:
    - {link: ball, points: [[0, 0, 0]], radius: 0.05}
  terrain:
    - {height_map: {size: [1, 1], cells: [10, 10], bump_max: 0.03, seed: 3}}
integrator: {type: ne_lcp, dt: 0.001, duration: 1.0}
contact: {mu: 0.5, c_perp: 1.0e6}
)";

// The lowest centre height of a sphere of radius r over (x, y) that does not cut the surface:
// max over |u - (x, y)| <= r of h(u) + sqrt(r^2 - |u - (x, y)|^2), on a 1 mm grid then a 5 um grid
// around the best point. Also the surface point u* where it touches.
double rest_height(const HeightField& hf, double x, double y, double r, Vec3& touch) {
  double best = -1;
  Eigen::Vector2d centre(x, y);
  for (const double step : {1e-3, 5e-6}) {
    const Eigen::Vector2d mid = centre;
    for (int a = -60; a <= 60; ++a)
      for (int b = -60; b <= 60; ++b) {
        const Eigen::Vector2d u = mid + step * Eigen::Vector2d(a, b);
        const double rho2 = (u - Eigen::Vector2d(x, y)).squaredNorm();
        if (rho2 > r * r) continue;
        const double h = height_field_eval(hf, u.x(), u.y()).h;
        const double z = h + std::sqrt(r * r - rho2);
        if (z > best) best = z, centre = u, touch = Vec3(u.x(), u.y(), h);
      }
  }
  return best;
}

Scene ball(const std::vector<std::string>& extra) {
  Scene sc = load_scene_text(kBall, "ball.yaml", {});
  Vec3 touch = Vec3::Zero();
  const double z0 = rest_height(sc.model.hfield[0], 0.13, -0.07, 0.05, touch) + 0.01;
  std::vector<std::string> ov{"initial.theta=[" + std::to_string(z0) + "]"};
  ov.insert(ov.end(), extra.begin(), extra.end());
  return load_scene_text(kBall, "ball.yaml", ov);
}

}  // namespace

TEST_CASE("height map: bad values are errors naming the key and the value", "[height_map]") {
  auto set = [](const std::string& hm) { return std::vector<std::string>{"model.terrain[0]={height_map: " + hm + "}"}; };
  expect_error(kBall, set("{size: [1, 1]}"), {"model.terrain[0].height_map.cells", "(missing)"});
  expect_error(kBall, set("{cells: [4, 4]}"), {"model.terrain[0].height_map.size", "(missing)"});
  expect_error(kBall, set("{size: [1, -1], cells: [4, 4]}"), {"height_map.size", "-1", "> 0"});
  expect_error(kBall, set("{size: [1, 1, 1], cells: [4, 4]}"), {"height_map.size"});
  expect_error(kBall, set("{size: [1, 1], cells: [4, 0]}"), {"height_map.cells", "0"});
  expect_error(kBall, set("{size: [1, 1], cells: [4, 2.5]}"), {"height_map.cells", "2.5", "integers"});
  expect_error(kBall, set("{size: [1, 1], cells: [4, 5000]}"), {"height_map.cells", "5000"});
  expect_error(kBall, set("{size: [1, 1], cells: [10, 10], bump_max: -0.01}"), {"height_map.bump_max", "-0.01", ">= 0"});
  expect_error(kBall, set("{size: [1, 1], cells: [10, 10], bump_max: 0.06}"), {"height_map.bump_max", "0.06", "half the cell"});
  expect_error(kBall, set("{size: [1, 1], cells: [10, 10], seed: -2}"), {"height_map.seed", "-2"});
  expect_error(kBall, set("{size: [1, 1], cells: [10, 10], bumps: 3}"), {"height_map.bumps"});
  expect_error(kBall, {"model.terrain[0]={height_map: {size: [1, 1], cells: [4, 4]}, normal: [0, 0, 1]}"},
               {"model.terrain[0].normal"});
  // a good one: a world height-field geom named after its terrain entry, its surface as drawn
  const Scene sc = load_scene_text(kBall, "ball.yaml", {});
  REQUIRE(sc.model.hfield.size() == 1);
  CHECK(sc.model.geom_type[0] == GeomType::HeightField);
  CHECK(sc.model.geom_name[0] == "terrain[0].height_map");
  CHECK(sc.model.geom_link[0] == -1);
  CHECK(sc.model.hfield[0].z == height_field_random(0.5, 0.5, 10, 10, 0.03, 3).z);
  CHECK(sc.model.planes.empty());
#ifdef BIGSTEP_WITH_MUJOCO
  // no MJCF form (MuJoCo's hfield is piecewise linear): export refuses it, naming the geom
  CHECK_THROWS_WITH(export_mjcf(sc.model), Catch::Contains("terrain[0].height_map") && Catch::Contains("height field"));
#endif
}

TEST_CASE("height map: a ball on a slider rests at the oracle height under NE-LCP and PBFD", "[height_map]") {
  const Scene sc = load_scene_text(kBall, "ball.yaml", {});
  const HeightField& hf = sc.model.hfield[0];
  Vec3 touch = Vec3::Zero();
  const double z_rest = rest_height(hf, 0.13, -0.07, 0.05, touch);
  // the touching point is on a slope: the normal is tilted (not the plane's answer)
  const Vec3 n = (Vec3(0.13, -0.07, z_rest) - touch).normalized();
  INFO("rest height " << z_rest << " normal " << n.transpose());
  REQUIRE(n.head<2>().norm() > 0.05);
  REQUIRE(z_rest - 0.05 > 0.002);  // and not the flat ground's 0.05
  {
    const Rollout r = simulate(ball({}));
    REQUIRE(!r.aborted);
    const double z = r.theta.back()[0];
    INFO("NE-LCP z " << z);
    // touching: phi within the NE-LCP's active distance, held by its correction (cfm 1e-6)
    CHECK(std::abs(z - z_rest) < tol(2e-5));
  }
  {
    const Rollout r = simulate(ball({"integrator.type=pbfd", "integrator.dt=0.01"}));
    REQUIRE(!r.aborted);
    const double z = r.theta.back()[0];
    // penalty contact f = c_perp d^2 along n holds m g through its vertical part: d = sqrt(m g /
    // (c_perp n_z)) ~ 3 mm; the sunk ball is a sphere of radius r - d resting on the map
    const double d = std::sqrt(9.81 / (1.0e6 * n.z()));
    Vec3 touch_d = Vec3::Zero();
    const double z_sunk = rest_height(hf, 0.13, -0.07, 0.05 - d, touch_d);
    INFO("PBFD z " << z << " sunk oracle " << z_sunk << " depth " << d);
    // the normal at the sunk contact differs from n by O(d kappa): ~1e-3 relative in d, 3 um
    CHECK(std::abs(z - z_sunk) < tol(1e-5));
    CHECK(z < z_rest - 0.5 * d);
  }
}

TEST_CASE("height map: a flat map reproduces the plane's rollout bit for bit (NE-LCP trot, PBFD chain)", "[height_map]") {
  const std::string cfg = std::string(BIGSTEP_SOURCE_DIR) + "/configs/";
  const std::string flat = "model.terrain=[{height_map: {size: [6, 4], cells: [12, 8], bump_max: 0}}]";
  struct Case {
    std::string file;
    std::vector<std::string> ov;
  };
  const Case cases[] = {{"id_quadruped_trot.yaml", {"integrator.duration=0.3"}},
                        {"id_quadruped_trot.yaml", {"integrator.duration=0.3", "controller.type=pd"}},
                        {"chain_floating_ground.yaml", {"integrator.duration=0.3", "integrator.dt=0.01"}}};
  for (const Case& c : cases) {
    INFO(c.file);
    const Scene plane = load_scene(cfg + c.file, c.ov);
    std::vector<std::string> ov = c.ov;
    ov.push_back(flat);
    const Scene map = load_scene(cfg + c.file, ov);
    REQUIRE(plane.model.planes.size() == 1);
    REQUIRE(map.model.planes.empty());
    REQUIRE(map.model.n_pair == plane.model.n_pair);
    const Rollout a = simulate(plane), b = simulate(map);
    REQUIRE(a.steps_run == b.steps_run);
    REQUIRE(a.steps_run > 0);
    bool same = true;
    for (size_t s = 0; s < a.theta.size(); ++s) same = same && a.theta[s] == b.theta[s];
    CHECK(same);
    // it moved: the comparison is not of two resting states
    CHECK((a.theta.back() - a.theta.front()).norm() > 1e-3);
  }
}

TEST_CASE("height map: the team engine refuses it, naming the geom; the reference takes it", "[height_map][team]") {
  Scene sc = ball({"integrator.type=pbfd", "integrator.dt=0.01", "batch.engine=team"});
  const std::string why = team_unsupported(sc.model);
  INFO(why);
  CHECK((why.find("terrain[0].height_map") != std::string::npos && why.find("height field") != std::string::npos));
  StateBatch b(2, sc.model.n_q);
  RolloutParamTable p;
  BatchOptions opt;
  opt.rollouts = 2;
  init_batch(sc, opt, b, p);
  CHECK_THROWS_WITH(make_batch_engine(sc, BackendChoice{}, b, p),
                    Catch::Contains("batch.engine=team") && Catch::Contains("terrain[0].height_map") &&
                        Catch::Contains("height field"));
  sc.engine = "reference";
  CHECK_NOTHROW(make_batch_engine(sc, BackendChoice{}, b, p));
}
