// The B6 sphere stack of the compliant solver's tests (docs/methods/compliant.md §10): N
// floating spheres r = 0.1 m, 1 kg, I = 0.004 kg m^2, and the ground plane z = 0.
#pragma once
#include <string>

#include "core/model.h"

namespace bigstep::test {

/// Sphere i's joint frame at (0, 0, z0 + dz i), so theta = 0 places the spheres there.
inline Model sphere_stack_model(int N, double z0, double dz) {
  ModelSpec spec;
  for (int i = 0; i < N; ++i) {
    LinkSpec l;
    l.name = "s";  // (not "s" + to_string: GCC 12 -Wrestrict false positive)
    l.name += std::to_string(i);
    l.joint = JointType::Floating;
    l.t_o = Vec3(0, 0, z0 + dz * i);
    l.mass = 1;
    l.inertia = 0.004 * Mat3::Identity();
    spec.links.push_back(l);
    GeomSpec g;
    g.type = GeomType::Sphere;
    g.link = i;
    g.size[0] = 0.1;
    spec.geoms.push_back(g);
  }
  GeomSpec plane;
  plane.type = GeomType::Plane;
  plane.link = -1;
  spec.geoms.push_back(plane);
  return Model::finalize(spec);
}

}  // namespace bigstep::test
