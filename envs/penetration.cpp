// Terrain penetration of a state (envs/penetration.h).
#include "envs/penetration.h"

#include <algorithm>

#include "core/error.h"

namespace bigstep {

Penetration find_penetration(const Model& m, const VecX& theta, Kinematics& kin) {
  if (m.spheres.empty() || m.planes.empty()) return {};
  forward_kinematics(m, theta, kin);
  for (size_t s = 0; s < m.spheres.size(); ++s) {
    const ContactSphere& cs = m.spheres[s];
    const Vec3 c = point_position(kin, cs.link, cs.centre);
    for (size_t p = 0; p < m.planes.size(); ++p) {
      // depth of the centre below the plane n^T y = offset
      const double depth = m.planes[p].offset - m.planes[p].normal.dot(c);
      if (depth > std::max(kPenetrationDepth, cs.radius)) return {int(s), int(p), depth};
    }
  }
  return {};
}

std::string describe(const Model& m, const Penetration& p) {
  const ContactSphere& cs = m.spheres[p.sphere];
  return detail::concat("contact sphere ", p.sphere, " (link ", m.links[cs.link].name, ") is ", p.depth,
                        " m below terrain[", p.plane, "] (limit max(", kPenetrationDepth, " m, radius ", cs.radius, " m))");
}

}  // namespace bigstep
