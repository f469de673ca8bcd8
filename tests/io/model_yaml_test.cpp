// YAML model keys for geoms, exclude and joint properties (io/model_yaml.cpp): values land in
// the Model's arrays, and bad values are named by their key path.
#include <catch2/catch.hpp>

#include "io/scene.h"
#include "tests/support/scene_errors.h"

using namespace bigstep;
using bigstep::test::expect_error;

namespace {

const char* kTwo = R"(scene: two
model:
  links:
    - {name: base, joint: planar, box: {size: [0.4, 0.4, 0.2], mass: 2}}
    - {name: arm, parent: base, joint: hinge, axis: [0, 1, 0], range: [-1, 0.5], damping: 0.3, armature: 0.02,
       limit_stiffness: 500, stiffness: 4, springref: -0.25, mass: 1, com: [0, 0, -0.2], inertia: [0.01, 0.01, 0.01]}
    - {name: ball, joint: floating, mass: 1, inertia: [0.004, 0.004, 0.004]}
  geoms:
    - {name: floor, type: plane}
    - {name: body, link: base, type: box, size: [0.2, 0.2, 0.1]}
    - {name: fist, link: arm, type: capsule, pos: [0, 0, -0.2], size: [0.05, 0.15], contype: 2, conaffinity: 3}
    - {name: ball, link: ball, type: sphere, size: [0.1]}
  exclude: [[arm, ball]]
integrator: {type: pbfd, dt: 0.02}
)";


}  // namespace

TEST_CASE("model yaml: geoms, exclude and joint properties reach the Model", "[yaml]") {
  const Model m = load_scene_text(kTwo, "two.yaml", {}).model;
  REQUIRE(m.n_geom == 4);
  CHECK(m.geom_type[0] == GeomType::Plane);
  CHECK(m.geom_link[0] == -1);
  CHECK(m.geom_type[2] == GeomType::Capsule);
  CHECK(m.geom_link[2] == 1);
  CHECK(m.geom_pos[2] == Vec3(0, 0, -0.2));
  CHECK(m.geom_size[2] == Vec3(0.05, 0.15, 0));
  CHECK(m.geom_contype[2] == 2);
  CHECK(m.geom_conaffinity[2] == 3);
  CHECK(m.geom_size[3][0] == 0.1);
  // pairs: floor-body, floor-fist, floor-ball, body-ball; base-arm are parent and child and
  // arm-ball are excluded
  CHECK(m.n_pair == 4);
  CHECK(m.exclude == std::vector<std::pair<int, int>>{{1, 2}});
  // the hinge is DOF 3 (after the planar base's 3)
  CHECK(m.n_limit == 1);
  CHECK(m.limit_dof[0] == 3);
  CHECK(m.dof_range[6] == -1.0);
  CHECK(m.dof_range[7] == 0.5);
  CHECK(m.dof_limit_k[3] == 500);
  CHECK(m.dof_damping[3] == 0.3);
  CHECK(m.dof_armature[3] == 0.02);
  CHECK(m.dof_damping[0] == 0.0);
  CHECK(m.dof_stiffness[3] == 4.0);
  CHECK(m.dof_springref[3] == -0.25);
  CHECK(m.dof_stiffness[0] == 0.0);
  CHECK(m.has_stiffness);
}

TEST_CASE("model yaml: bad geoms, exclude and ranges are named", "[yaml]") {
  expect_error(kTwo, {"model.geoms[0].link=base"}, {"plane must be on the world"});
  expect_error(kTwo, {"model.geoms[1].size=[0.2, 0.2]"}, {"model.geoms[1].size"});
  expect_error(kTwo, {"model.geoms[3]={type: sphere, link: ball}"}, {"model.geoms[3].size"});
  expect_error(kTwo, {"model.geoms[1].type=cone"}, {"model.geoms[1].type"});
  expect_error(kTwo, {"model.geoms[1].link=nobody"}, {"model.geoms[1].link", "nobody"});
  expect_error(kTwo, {"model.geoms[0].size=[1]"}, {"a plane has no size"});
  expect_error(kTwo, {"model.exclude=[[arm]]"}, {"model.exclude[0]"});
  expect_error(kTwo, {"model.exclude=[[arm, nobody]]"}, {"nobody"});
  expect_error(kTwo, {"model.links[1].range=[1, -1]"}, {"model.links[1].range"});
  expect_error(kTwo, {"model.links[0].range=[-1, 1]"}, {"hinge and prismatic"});
  expect_error(kTwo, {"model.links[1].damping=-1"}, {"damping"});
  expect_error(kTwo, {"model.links[1].stiffness=-2"}, {"links[1] (arm).stiffness", "-2"});
  expect_error(kTwo, {"model.links[2].stiffness=1"}, {"links[2] (ball).stiffness", "hinge, prismatic and planar"});
  // box-capsule has no pair function: the pair is named with a way out
  expect_error(kTwo, {"model.geoms[3]={link: ball, type: box, size: [0.1, 0.1, 0.1]}", "model.exclude=[]"}, {"exclude"});
}
