// Penetration of a state (batch/penetration.h).
#include "batch/penetration.h"

#include <algorithm>

#include "core/error.h"

namespace bigstep {

Penetration PenetrationCheck::find(const Model& m, const VecX& theta, const Mat3* chart) {
  if (m.n_pair == 0) return {};
  kin.chart = chart;
  forward_kinematics(m, theta, kin);
  uint32_t status = 0;
  const int n = collide(m, kin, 0.0, con.data(), int(con.size()), status);
  for (int i = 0; i < n; ++i) {
    const Contact& c = con[i];
    const double crossed = c.depth - c.ra - c.rb, limit = std::max(kPenetrationDepth, c.ra + c.rb);
    if (crossed > limit) return {c.geom_a, c.geom_b, crossed, limit};
  }
  return {};
}

std::string describe(const Model& m, const Penetration& p) {
  const int link = m.geom_link[p.geom_a];
  return detail::concat(m.geom_name[p.geom_a], " (link ", link >= 0 ? m.link_name[link] : "world", ") is ", p.depth,
                        " m through ", m.geom_name[p.geom_b], " (limit max(", kPenetrationDepth,
                        " m, the radii) = ", p.limit, " m)");
}

}  // namespace bigstep
