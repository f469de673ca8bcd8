// Contact set (core/contact_set.h): the core-point form of every pair function's contacts
// (depth, gradient, Hessian, slip) by central differences on two moving links, and joint limits
// (core/joint_limit.h) as contacts in joint space.
#include <catch2/catch.hpp>

#include <vector>

#include "core/contact_set.h"
#include "core/error.h"
#include "tests/support/geom_scenes.h"

using namespace bigstep;
using namespace bigstep::test;

namespace {

struct Case { GeomType a, b; bool exact_hessian; };
// every pair function in both orders; the Hessian is exact where the cores are material points
const Case kCases[] = {{GeomType::Sphere, GeomType::Sphere, true},   {GeomType::Sphere, GeomType::Plane, true},
                       {GeomType::Capsule, GeomType::Plane, true},   {GeomType::Box, GeomType::Plane, true},
                       {GeomType::Sphere, GeomType::Capsule, false}, {GeomType::Capsule, GeomType::Sphere, false},
                       {GeomType::Capsule, GeomType::Capsule, false}, {GeomType::Sphere, GeomType::Box, false},
                       {GeomType::Box, GeomType::Sphere, false}};

// Contacts at theta with a margin that reports every pair's contacts (same count at theta +- h).
int contacts_at(const Model& m, const VecX& th, Kinematics& kin, std::vector<Contact>& con) {
  forward_kinematics(m, th, kin);
  uint32_t status = 0;
  return collide(m, kin, 10, con.data(), int(con.size()), status);
}

// grad depth = -J^T n of contact i found at th (J from the cores).
VecX depth_gradient_at(const Model& m, const VecX& th, int i) {
  Kinematics kin(m);
  std::vector<Contact> con(m.max_contacts);
  REQUIRE(contacts_at(m, th, kin, con) > i);
  MatX Ja(3, m.n_q), Jb(3, m.n_q), J(3, m.n_q);
  contact_core_jacobians(m, kin, con[i], Ja, Jb, J);
  return -J.transpose() * con[i].n;
}

}  // namespace

TEST_CASE("contact set: core depth, gradient, Hessian and slip by central differences", "[contact]") {
  for (const Case& cs : kCases)
    for (uint32_t seed = 1; seed <= 4; ++seed) {
      Rng rng(seed * 131 + uint32_t(cs.a) * 7 + uint32_t(cs.b));
      ModelSpec spec = two_arm_spec(rng);
      VecX th;
      const Model m = two_arm_pair_model(rng, cs.a, cs.b, spec, th);
      Kinematics kin(m);
      std::vector<Contact> con(m.max_contacts);
      const int n = contacts_at(m, th, kin, con);
      REQUIRE(n >= 1);
      link_derivatives(m, kin);
      MatX Ja(3, m.n_q), Jb(3, m.n_q), J(3, m.n_q), Jw(3, m.n_q), JtP(m.n_q, 3);
      VecX g(m.n_q);
      for (int i = 0; i < n; ++i) {
        const Contact& c = con[i];
        INFO(geom_type_name(cs.a) << "-" << geom_type_name(cs.b) << " seed " << seed << " contact " << i);
        // the cores reproduce the pair function's depth and the witness points' gradient
        CHECK(std::abs(contact_core_depth(kin, c) - c.depth) < 1e-12);
        contact_core_jacobians(m, kin, c, Ja, Jb, J);
        contact_depth_gradient(m, kin, c, g);
        CHECK(rel_err(-J.transpose() * c.n, g) < 1e-12);
        // slip is zero at theta_n and moves with P_t J (the contact frozen)
        CHECK(contact_slip(kin, kin, c).norm() < 1e-15);
        const MatX du = fd_jacobian(
            [&](const VecX& x) {
              Kinematics kx(m);
              forward_kinematics(m, x, kx);
              return VecX(contact_slip(kx, kin, c));
            },
            th);
        const Mat3 Pt = Mat3::Identity() - c.n * c.n.transpose();
        CHECK(rel_err(Pt * J, du) < fd_tol());
        if (!cs.exact_hessian) continue;
        // Hessian of the depth of the re-collided contact against differences of its gradient
        MatX H = MatX::Zero(m.n_q, m.n_q);
        add_contact_point_hessian(m, kin, c, Ja, Jb, c.n, -1, H);
        add_contact_curvature(c, J, 1, H, JtP);
        const MatX fd = fd_jacobian([&](const VecX& x) { return depth_gradient_at(m, x, i); }, th);
        const double err = rel_err(H, fd);
        INFO("Hessian rel err " << err);
        CHECK(err < fd_tol());
        CHECK((H - H.transpose()).norm() < 1e-12 * (1 + H.norm()));
      }
    }
}

TEST_CASE("contact set: the sphere-sphere Hessian needs the curvature term", "[contact]") {
  // mutation check of the test above: without -kappa J^T P_t J the Hessian is off by O(1)
  Rng rng(7);
  ModelSpec spec = two_arm_spec(rng);
  VecX th;
  const Model m = two_arm_pair_model(rng, GeomType::Sphere, GeomType::Sphere, spec, th);
  Kinematics kin(m);
  std::vector<Contact> con(m.max_contacts);
  REQUIRE(contacts_at(m, th, kin, con) == 1);
  MatX Ja(3, m.n_q), Jb(3, m.n_q), J(3, m.n_q);
  contact_core_jacobians(m, kin, con[0], Ja, Jb, J);
  MatX H = MatX::Zero(m.n_q, m.n_q);
  add_contact_point_hessian(m, kin, con[0], Ja, Jb, con[0].n, -1, H);
  const MatX fd = fd_jacobian([&](const VecX& x) { return depth_gradient_at(m, x, 0); }, th);
  CHECK(con[0].kappa > 0);
  CHECK(rel_err(H, fd) > 1e-2);
}

TEST_CASE("contact set: update collects geom contacts and joint limits without allocating", "[contact]") {
  ModelSpec s;
  LinkSpec l;
  l.name = "a";
  l.joint = JointType::Hinge;
  l.axis = Vec3::UnitY();
  l.mass = 1;
  l.inertia = 0.01 * Mat3::Identity();
  l.limited = true;
  l.range[0] = -0.5;
  l.range[1] = 0.75;
  s.links.push_back(l);
  l.name = "b";
  l.parent = 0;
  l.joint = JointType::Prismatic;
  l.axis = Vec3::UnitZ();
  l.range[0] = 0;
  l.range[1] = 0.2;
  s.links.push_back(l);
  l.name = "c";
  l.parent = 1;
  l.limited = false;
  s.links.push_back(l);
  s.spheres.push_back({1, Vec3(0, 0, -0.5), 0.0});
  s.planes.push_back({Vec3::UnitZ(), 0.0});
  const Model m = Model::finalize(s);
  REQUIRE(m.n_limit == 2);
  CHECK(m.limit_dof == std::vector<int>{0, 1});
  CHECK(m.dof_range[2] == 0.0);
  CHECK(m.dof_range[3] == 0.2);
  ContactSet cs(m);
  Kinematics kin(m);
  VecX th(3);
  th << 0.8, 0.09, 0;  // hinge 0.05 past its upper stop; slider mid-range (0.09 from the lower)
  forward_kinematics(m, th, kin);
  cs.update(m, kin, th, 0.0);
  REQUIRE(cs.n_lim == 1);
  CHECK(cs.lim[0].dof == 0);
  CHECK(cs.lim[0].s == -1);
  CHECK(std::abs(cs.lim[0].depth - 0.05) < 1e-15);
  CHECK(cs.n_con == 1);  // the point 0.5 below the hinge, 0.41 below the origin: penetrating
  CHECK(cs.con[0].ca_local == m.geom_pos[m.sphere_geom_adr]);  // a sphere's core is exactly its centre
  // within a margin of 0.1 the slider's lower stop (0.09 away) is reported too, with depth -0.09
  cs.update(m, kin, th, 0.1);
  REQUIRE(cs.n_lim == 2);
  CHECK(cs.lim[1].dof == 1);
  CHECK(cs.lim[1].s == 1);
  CHECK(std::abs(cs.lim[1].depth + 0.09) < 1e-15);
}

TEST_CASE("contact set: joint range, damping, armature and spring are validated", "[contact]") {
  auto spec_with = [](JointType t, auto&& edit) {
    ModelSpec s;
    LinkSpec l;
    l.name = "a";
    l.joint = t;
    l.axis = Vec3::UnitZ();
    l.mass = 1;
    l.inertia = 0.01 * Mat3::Identity();
    edit(l);
    s.links.push_back(l);
    return s;
  };
  auto message = [](const ModelSpec& s) {
    std::string msg = "(no error)";
    try {
      Model::finalize(s);
    } catch (const InvalidArgument& e) {
      msg = e.what();
    }
    return msg;
  };
  CHECK_THAT(message(spec_with(JointType::Ball, [](LinkSpec& l) { l.limited = true; l.range[1] = 1; })),
             Catch::Contains("links[0] (a).range") && Catch::Contains("hinge and prismatic"));
  CHECK_THAT(message(spec_with(JointType::Hinge, [](LinkSpec& l) { l.limited = true; l.range[0] = 1; })),
             Catch::Contains("links[0] (a).range") && Catch::Contains("lo < hi"));
  CHECK_THAT(message(spec_with(JointType::Hinge, [](LinkSpec& l) { l.damping = -1; })),
             Catch::Contains("links[0] (a).damping"));
  CHECK_THAT(message(spec_with(JointType::Hinge, [](LinkSpec& l) { l.armature = NAN; })),
             Catch::Contains("links[0] (a).armature"));
  CHECK_THAT(message(spec_with(JointType::Hinge, [](LinkSpec& l) { l.stiffness = -3; })),
             Catch::Contains("links[0] (a).stiffness") && Catch::Contains("-3"));
  CHECK_THAT(message(spec_with(JointType::Prismatic, [](LinkSpec& l) { l.stiffness = INFINITY; })),
             Catch::Contains("links[0] (a).stiffness"));
  CHECK_THAT(message(spec_with(JointType::Hinge, [](LinkSpec& l) { l.springref = NAN; })),
             Catch::Contains("links[0] (a).springref"));
  // a per-Euler-angle spring is not MuJoCo's ball / free spring: rejected, named
  CHECK_THAT(message(spec_with(JointType::Ball, [](LinkSpec& l) { l.stiffness = 1; })),
             Catch::Contains("links[0] (a).stiffness") && Catch::Contains("hinge, prismatic and planar"));
  CHECK_THAT(message(spec_with(JointType::Floating, [](LinkSpec& l) { l.stiffness = 1; })),
             Catch::Contains("links[0] (a).stiffness") && Catch::Contains("floating"));
  CHECK_THAT(message(spec_with(JointType::Fixed, [](LinkSpec& l) { l.stiffness = 1; })),
             Catch::Contains("links[0] (a).stiffness") && Catch::Contains("fixed"));
  const Model mp = Model::finalize(spec_with(JointType::Planar, [](LinkSpec& l) { l.stiffness = 2; l.springref = -0.1; }));
  CHECK(mp.dof_stiffness == std::vector<double>{2, 2, 2});  // x, z, ry: MuJoCo's slide, slide, hinge
  CHECK(mp.dof_springref == std::vector<double>{-0.1, -0.1, -0.1});
  const Model ms = Model::finalize(spec_with(JointType::Hinge, [](LinkSpec& l) { l.stiffness = 3; l.springref = 0.4; }));
  CHECK(ms.has_stiffness);
  CHECK_FALSE(ms.has_damping_armature);
  CHECK(ms.dof_stiffness == std::vector<double>{3});
  CHECK(ms.dof_springref == std::vector<double>{0.4});
  CHECK(ms.link_spec(0).stiffness == 3);
  CHECK(ms.link_spec(0).springref == 0.4);
  const Model m = Model::finalize(spec_with(JointType::Ball, [](LinkSpec& l) { l.damping = 2; l.armature = 0.5; }));
  CHECK(m.has_damping_armature);
  CHECK_FALSE(m.has_stiffness);
  CHECK(m.dof_damping == std::vector<double>{2, 2, 2});
  CHECK(m.dof_armature == std::vector<double>{0.5, 0.5, 0.5});
}
