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

/// finalize(s) must throw InvalidArgument whose message contains `needle`.
static void expect_error(const ModelSpec& s, const std::string& needle) {
  try {
    Model::finalize(s);
    FAIL("no error for " << needle);
  } catch (const InvalidArgument& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find(needle) != std::string::npos);
  }
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
  const auto expect = expect_error;
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

// ---------------------------------------------------------------------------------------
// Geoms (core/geom.h): validation, legacy conversion, candidate pairs
// ---------------------------------------------------------------------------------------

static GeomSpec geom(const char* name, int link, GeomType type, double size0 = 0.1) {
  GeomSpec g;
  g.name = name;
  g.link = link;
  g.type = type;
  g.size = Vec3(size0, 0.2, 0.3);
  return g;
}

TEST_CASE("model: invalid geoms are named by field and value", "[model][geom]") {
  auto with = [](GeomSpec g) {
    ModelSpec s = one_hinge();
    s.geoms.push_back(geom("ok", 0, GeomType::Box));
    s.geoms.push_back(g);
    return s;
  };
  GeomSpec g = geom("ball", 0, GeomType::Sphere);
  g.link = 1;
  expect_error(with(g), "geoms[1] (ball).link = 1");
  g = geom("ball", 0, GeomType::Sphere, -0.5);
  expect_error(with(g), "geoms[1] (ball).size[0] = -0.5");
  g = geom("ball", 0, GeomType::Sphere, NAN);
  expect_error(with(g), "geoms[1] (ball).size[0] = nan");
  g = geom("rod", 0, GeomType::Capsule, 0.0);
  expect_error(with(g), "geoms[1] (rod).size[0] = 0: capsule radius");
  g = geom("rod", 0, GeomType::Capsule);
  g.size[1] = 0;
  expect_error(with(g), "geoms[1] (rod).size[1] = 0: capsule half-length");
  g = geom("crate", 0, GeomType::Box);
  g.size[2] = -1;
  expect_error(with(g), "geoms[1] (crate).size = [0.1, 0.2, -1]");
  g = geom("floor", 0, GeomType::Plane);
  expect_error(with(g), "geoms[1] (floor).link = 0: a plane must be on the world");
  g = geom("ball", 0, GeomType::Sphere);
  g.pos.x() = INFINITY;
  expect_error(with(g), "geoms[1] (ball).pos");
  g = geom("ball", 0, GeomType::Sphere);
  g.R = 2 * Mat3::Identity();
  expect_error(with(g), "geoms[1] (ball).R");
  g = geom("", 0, GeomType::Sphere);
  g.type = GeomType(7);
  expect_error(with(g), "geoms[1].type = 7");
  ModelSpec s = one_hinge();
  s.exclude.push_back({0, 3});
  expect_error(s, "exclude[0].second = 3");
  s.exclude = {{0, 0}};
  expect_error(s, "exclude[0] = (0, 0)");
  // a radius-0 sphere is a contact point, a plane's size is unused
  s = with(geom("point", 0, GeomType::Sphere, 0.0));
  s.geoms.push_back(geom("floor", -1, GeomType::Plane, NAN));
  CHECK_NOTHROW(Model::finalize(s));
}

TEST_CASE("model: legacy spheres and planes become geoms after the explicit ones",
          "[model][geom]") {
  ModelSpec s = one_hinge();
  s.geoms.push_back(geom("rod", 0, GeomType::Capsule));
  s.spheres = {{0, Vec3(0.1, 0.2, 0.3), 0.0}, {0, Vec3(-0.1, 0, 0), 0.05}};
  s.planes = {{Vec3(0, 0, 2), 0.5}, {Vec3(1, 0, 1), -0.25}};
  const Model m = Model::finalize(s);
  REQUIRE(m.n_geom == 5);
  CHECK(m.sphere_geom_adr == 1);
  CHECK(m.plane_geom_adr == 3);
  CHECK(m.geom_name == std::vector<std::string>{"rod", "contacts[0]", "contacts[1]", "terrain[0]",
                                                "terrain[1]"});
  for (int s_i = 0; s_i < 2; ++s_i) {
    const int g = m.sphere_geom_adr + s_i;
    CHECK(m.geom_type[g] == GeomType::Sphere);
    CHECK(m.geom_link[g] == m.spheres[s_i].link);
    CHECK(m.geom_pos[g] == m.spheres[s_i].centre);
    CHECK(m.geom_size[g][0] == m.spheres[s_i].radius);
    CHECK(m.geom_contype[g] == 0);
    CHECK(m.geom_conaffinity[g] == 1);
  }
  for (int p = 0; p < 2; ++p) {
    const int g = m.plane_geom_adr + p;
    const Vec3 n = m.planes[p].normal;
    INFO("plane " << p);
    CHECK(m.geom_type[g] == GeomType::Plane);
    CHECK(m.geom_link[g] == -1);
    // the geom frame's +z is the normal, its origin lies on the plane, R is a rotation
    CHECK((m.geom_R[g].col(2) - n).norm() < 1e-15);
    CHECK(n.dot(m.geom_pos[g]) == Approx(m.planes[p].offset).margin(1e-15));
    CHECK((m.geom_R[g].transpose() * m.geom_R[g] - Mat3::Identity()).norm() < 1e-14);
    CHECK(m.geom_R[g].determinant() == Approx(1.0));
  }
  // pairs: the capsule with both planes, each sphere with each plane (sphere-major), never
  // sphere-sphere or capsule-sphere on the same link
  CHECK(m.n_pair == 6);
  CHECK(m.pair_geom_a == std::vector<int>{0, 0, 1, 1, 2, 2});
  CHECK(m.pair_geom_b == std::vector<int>{3, 4, 3, 4, 3, 4});
  CHECK(m.max_contacts == 2 * 2 + 4 * 1);
}

// Chain for the filter: world -> l0 -> {l1 -> l3, l2}; geoms g0 world plane, g1 box on l0,
// g2 capsule on l1, g3 and g4 spheres on l2, g5 sphere on l3.
static ModelSpec filter_scene() {
  ModelSpec s = one_hinge();
  const int parents[] = {0, 0, 1};
  const char* names[] = {"l1", "l2", "l3"};
  for (int i = 0; i < 3; ++i) {
    LinkSpec l = s.links[0];
    l.name = names[i];
    l.parent = parents[i];
    s.links.push_back(l);
  }
  s.geoms = {geom("g0", -1, GeomType::Plane), geom("g1", 0, GeomType::Box),
             geom("g2", 1, GeomType::Capsule), geom("g3", 2, GeomType::Sphere),
             geom("g4", 2, GeomType::Sphere), geom("g5", 3, GeomType::Sphere)};
  return s;
}

static std::vector<std::pair<int, int>> pairs_of(const Model& m) {
  std::vector<std::pair<int, int>> out;
  for (int p = 0; p < m.n_pair; ++p) out.push_back({m.pair_geom_a[p], m.pair_geom_b[p]});
  return out;
}

TEST_CASE("model: candidate pairs follow contype/conaffinity, links, parent-child and exclude",
          "[model][geom]") {
  using P = std::vector<std::pair<int, int>>;
  ModelSpec s = filter_scene();
  // world vs every link (l0's parent is the world: ground contact stays); l0 vs its grandchild
  // l3 only; siblings l1 / l2; l2 vs l3; never g3-g4 (same link), l0-l1, l0-l2, l1-l3 (parent)
  // a is the geom on the higher link index
  CHECK(pairs_of(Model::finalize(s)) ==
        P{{1, 0}, {2, 0}, {3, 0}, {4, 0}, {5, 0}, {5, 1}, {3, 2}, {4, 2}, {5, 3}, {5, 4}});

  SECTION("contype / conaffinity: either direction of the bit test suffices") {
    s.geoms[5].contype = 2;
    s.geoms[5].conaffinity = 2;
    CHECK(pairs_of(Model::finalize(s)) == P{{1, 0}, {2, 0}, {3, 0}, {4, 0}, {3, 2}, {4, 2}});
    s.geoms[0].conaffinity = 3;  // g5's contype 2 meets g0's conaffinity
    CHECK(pairs_of(Model::finalize(s)) == P{{1, 0}, {2, 0}, {3, 0}, {4, 0}, {5, 0}, {3, 2}, {4, 2}});
    s.geoms[0].conaffinity = 0;
    s.geoms[0].contype = 2;  // g0's contype 2 meets g5's conaffinity
    CHECK(pairs_of(Model::finalize(s)) == P{{5, 0}, {3, 2}, {4, 2}});
  }
  SECTION("exclude removes link pairs in either order, the world included") {
    s.exclude = {{2, 1}, {-1, 0}};
    CHECK(pairs_of(Model::finalize(s)) ==
          P{{2, 0}, {3, 0}, {4, 0}, {5, 0}, {5, 1}, {5, 3}, {5, 4}});
  }
  SECTION("max_contacts sums the pair functions' maxima") {
    // with the plane: box 8, capsule 2, three spheres 1 each; g5-g1 sphere-box 1; g3-g2, g4-g2
    // sphere-capsule 1 each; g5-g3, g5-g4 sphere-sphere 1 each
    CHECK(Model::finalize(s).max_contacts == 8 + 2 + 3 + 1 + 2 + 2);
  }
}

TEST_CASE("model: a candidate pair without a collision function is an error", "[model][geom]") {
  ModelSpec s = filter_scene();
  s.geoms[4].type = GeomType::Box;  // g4 (box on l2) vs g2 (capsule on l1): no box-capsule function
  expect_error(s, "geoms[4] (g4) / geoms[2] (g2) = box-capsule: no collision function");
  s.geoms[2].type = GeomType::Box;
  expect_error(s, "= box-box");
  s.exclude = {{1, 2}};  // filtered out: fine
  CHECK_NOTHROW(Model::finalize(s));
  s.exclude.clear();
  s.geoms[4].contype = s.geoms[4].conaffinity = 0;
  CHECK_NOTHROW(Model::finalize(s));
}
