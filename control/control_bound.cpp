// Divergence bound of a controller's torques (control/control_bound.h).
//
// Why m_total g0 span: a joint torque moves the links beyond the joint and pushes through the
// contacts. Every moment arm inside the model is below span, so holding the whole model's weight
// needs at most m_total g span, and accelerating all of it at a about that joint at most
// m_total a span (the inertia of everything beyond a joint about it is below m_total span^2, the
// angular acceleration a / span). kControlBound = 100 therefore admits a plan that accelerates the
// whole model at 100 g0 at its full span, or presses it on the ground with 100 times its weight --
// far past what any tracked plan asks (the trot, grasp and height-map scenes stay below 1 of it;
// tests/control/inverse_dynamics/id_divergence_test.cpp) -- while a controller fed back into
// itself passes it within a few steps of leaving the physical range (1e16 N m on the trot before
// the penetration guard saw anything). g0 rather than the model's gravity keeps the bound for a
// model without gravity.
#include "control/control_bound.h"

#include <algorithm>
#include <cmath>

namespace bigstep {

double model_span(const Model& m) {
  // path length from the root joint to each link's joint frame (parents come first)
  std::vector<double> reach(size_t(m.n_link), 0.0);
  double far = 0;
  for (int j = 0; j < m.n_link; ++j) {
    const int p = m.link_parent[size_t(j)];
    double r = p < 0 ? 0.0 : reach[size_t(p)] + m.link_t_o[size_t(j)].norm();
    if (m.link_joint[size_t(j)] == JointType::Prismatic && m.dof_limited[size_t(m.link_dof_adr[size_t(j)])]) {
      const int k = m.link_dof_adr[size_t(j)];
      r += std::max(std::abs(m.dof_range[2 * size_t(k)]), std::abs(m.dof_range[2 * size_t(k) + 1]));
    }
    reach[size_t(j)] = r;
    far = std::max(far, r + m.link_com[size_t(j)].norm());
  }
  for (int g = 0; g < m.n_geom; ++g) {
    const int j = m.geom_link[size_t(g)];
    if (j < 0) continue;  // world geoms are not part of the model's extent
    far = std::max(far, reach[size_t(j)] + m.geom_pos[size_t(g)].norm() + m.geom_size[size_t(g)].norm());
  }
  return 2 * far;
}

void control_divergence_bound(const Model& m, VecX& bound) {
  constexpr double g0 = 9.81;
  const double force = kControlBound * m.total_mass * g0, span = model_span(m);
  bound.resize(m.n_q);
  for (int k = 0; k < m.n_q; ++k) bound[k] = m.dof_revolute[size_t(k)] ? force * span : force;
}

}  // namespace bigstep
