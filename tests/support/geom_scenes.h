// Geom test scenes shared by the collision and contact-set tests: two links that are not parent
// and child, each moving with shared base DOFs and its own, with one geom pair placed in contact.
#pragma once
#include <string>
#include <vector>

#include "core/collision.h"
#include "core/model.h"
#include "core/kinematics.h"
#include "tests/support/random_models.h"

namespace bigstep::test {

/// Rotation taking local +z to the unit vector n (for placing capsule axes and plane normals).
inline Mat3 z_to(const Vec3& n) {
  return Eigen::Quaterniond::FromTwoVectors(Vec3::UnitZ(), n).toRotationMatrix();
}

/// world -> base (floating) -> {arm (ball), link2 (hinge) -> tip (prismatic)}: geoms go on arm
/// (link 1) and tip (link 3), which are not parent and child, so every pair is a candidate and
/// both move with the shared base DOFs as well as their own.
inline ModelSpec two_arm_spec(Rng& rng) {
  const JointType kinds[] = {JointType::Floating, JointType::Ball, JointType::Hinge, JointType::Prismatic};
  const int parents[] = {-1, 0, 0, 2};
  ModelSpec s;
  for (int j = 0; j < 4; ++j) {
    Box box;
    std::string name = "l";  // (not "l" + to_string: GCC 12 -Wrestrict false positive)
    name += std::to_string(j);
    s.links.push_back(random_link(rng, name, parents[j], kinds[j], false, box));
  }
  return s;
}

/// A random geom of type t with sizes of 0.05..0.25 m.
inline GeomSpec random_geom(Rng& rng, GeomType t, int link) {
  GeomSpec g;
  g.link = link;
  g.type = t;
  g.R = random_rotation(rng);
  g.size = uniform_vec(rng, 0.05, 0.25);
  return g;
}

/// spec (from two_arm_spec) with geom a of type ta on the tip (link 3) and geom b of type tb on
/// the arm (link 1; the world for a plane), b's centre 0.8 x (sum of sizes) from a's along a random
/// direction at a random configuration th (returned): the pair overlaps or nearly does.
inline Model two_arm_pair_model(Rng& rng, GeomType ta, GeomType tb, ModelSpec& spec, VecX& th) {
  const Model bare = Model::finalize(spec);
  th = random_theta(bare, rng);
  Kinematics kin(bare);
  forward_kinematics(bare, th, kin);
  GeomSpec ga = random_geom(rng, ta, 3);
  ga.pos = uniform_vec(rng, -0.2, 0.2);
  const Vec3 ca = point_position(kin, 3, ga.pos);
  const Vec3 u = random_unit(rng);
  GeomSpec gb = random_geom(rng, tb, tb == GeomType::Plane ? -1 : 1);
  const Vec3 cb = ca + 0.8 * (ga.size.maxCoeff() + gb.size.maxCoeff()) * u;
  if (gb.link < 0) {
    gb.pos = cb;
    gb.R = z_to(-u);  // plane normal pointing towards a
  } else {
    gb.pos = kin.R[1].transpose() * (cb - kin.t[1]);
  }
  spec.geoms = {gb, ga};
  return Model::finalize(spec);
}

/// Depths of all contacts at theta (margin 10: every contact of every pair is reported, so the
/// count is the same at theta +- h), con sized m.max_contacts; for central differences.
inline VecX contact_depths(const Model& m, const VecX& th, std::vector<Contact>& con) {
  Kinematics kin(m);
  forward_kinematics(m, th, kin);
  uint32_t status = 0;
  const int n = collide(m, kin, 10, con.data(), int(con.size()), status);
  VecX d(n);
  for (int i = 0; i < n; ++i) d[i] = con[i].depth;
  return d;
}

}  // namespace bigstep::test
