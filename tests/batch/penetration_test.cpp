// Penetration check (batch/penetration.h): the cores of a contact crossed by more than
// max(5 cm, r_a + r_b), for a contact point on the terrain and a ball in a box.
#include <catch2/catch.hpp>

#include "batch/penetration.h"

using namespace bigstep;

TEST_CASE("penetration: a contact point below the terrain and a ball inside a box", "[penetration]") {
  ModelSpec s;
  for (const char* name : {"point", "ball"}) {
    LinkSpec l;
    l.name = name;
    l.joint = JointType::Prismatic;
    l.axis = Vec3::UnitZ();
    l.mass = 1;
    l.inertia = 0.01 * Mat3::Identity();
    s.links.push_back(l);
  }
  s.spheres.push_back({0, Vec3(5, 0, 0), 0.0});  // a contact point on link 0, far from the box
  s.planes.push_back({Vec3::UnitZ(), 0.0});
  GeomSpec box;
  box.type = GeomType::Box;
  box.pos = Vec3(0, 0, 2);
  box.size = Vec3(0.5, 0.5, 0.5);  // top face at z = 2.5
  GeomSpec ball;
  ball.link = 1;
  ball.type = GeomType::Sphere;
  ball.size = Vec3(0.1, 0, 0);
  ball.contype = 1;
  s.geoms = {box, ball};
  const Model m = Model::finalize(s);
  PenetrationCheck check(m);
  auto at = [&](double z_point, double z_ball) {
    VecX th(2);
    th << z_point, z_ball;
    return check.find(m, th);
  };
  CHECK(!at(-0.04, 3).found());  // 4 cm below the ground: working depth
  const Penetration p = at(-0.06, 3);
  REQUIRE(p.found());
  CHECK(m.geom_name[p.geom_a] == "contacts[0]");
  CHECK(m.geom_name[p.geom_b] == "terrain[0]");
  CHECK(std::abs(p.depth - 0.06) < 1e-12);
  CHECK_THAT(describe(m, p), Catch::Contains("contacts[0] (link point)") && Catch::Contains("terrain[0]"));
  // the ball's centre 8 cm under the box's top face: within its radius; 12 cm: through
  CHECK(!at(0, 2.42).found());
  const Penetration q = at(0, 2.38);
  REQUIRE(q.found());
  CHECK(q.limit == 0.1);
  CHECK(std::abs(q.depth - 0.12) < 1e-12);
}
