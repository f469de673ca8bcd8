// Model validation: bad specs throw InvalidArgument naming the field and value.
#include <catch2/catch.hpp>

#include "core/error.h"
#include "core/model.h"

using namespace bigstep;

static ModelSpec one_hinge() {
  ModelSpec s;
  LinkSpec l;
  l.name = "arm";
  l.joint = JointType::Hinge;
  l.axis = Vec3::UnitY();
  l.mass = 1;
  l.com = Vec3(0.5, 0, 0);
  l.inertia = Mat3::Identity() * 0.01;
  s.links.push_back(l);
  return s;
}

TEST_CASE("model: DOF tables follow the joint sequences", "[model]") {
  ModelSpec s = one_hinge();
  LinkSpec b = s.links[0];
  b.name = "body";
  b.parent = 0;
  b.joint = JointType::Floating;
  s.links.push_back(b);
  b.name = "wrist";
  b.parent = 1;
  b.joint = JointType::Ball;
  s.links.push_back(b);
  const Model m = Model::finalize(s);
  CHECK(m.n_q == 1 + 6 + 3);
  CHECK(m.link_dof_adr == std::vector<int>{0, 1, 7});
  CHECK(m.gimbal_dof == std::vector<int>{5, 8});
  CHECK(m.dof_name[1] == "body.x");
  CHECK(m.moves(0, 2));
  CHECK_FALSE(m.moves(7, 1));
  CHECK(m.total_mass == Approx(3.0));
}

TEST_CASE("model: invalid fields are named", "[model]") {
  auto expect = [](ModelSpec s, const std::string& needle) {
    try {
      Model::finalize(s);
      FAIL("no error for " << needle);
    } catch (const InvalidArgument& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(needle) != std::string::npos);
    }
  };
  ModelSpec s = one_hinge();
  s.links[0].mass = -1;
  expect(s, "links[0] (arm).mass = -1");
  s = one_hinge();
  s.links[0].inertia = Vec3(1, 1, 3).asDiagonal();
  expect(s, "triangle inequality");
  s = one_hinge();
  s.links[0].axis = Vec3::Zero();
  expect(s, "links[0] (arm).axis");
  s = one_hinge();
  s.links[0].parent = 3;
  expect(s, "links[0] (arm).parent = 3");
  s = one_hinge();
  s.spheres.push_back({5, Vec3::Zero(), 0.0});
  expect(s, "contacts[0].link = 5");
  s = one_hinge();
  s.spheres.push_back({0, Vec3::Zero(), -0.1});
  expect(s, "contacts[0].radius = -0.1");
  s = one_hinge();
  s.planes.push_back({Vec3::Zero(), 0.0});
  expect(s, "terrain[0].normal");
  s = one_hinge();
  s.links[0].joint = JointType::Fixed;
  expect(s, "no degrees of freedom");
}
