#include "control/point_load.h"

#include <cmath>

namespace bigstep {

Vec3 PointLoad::point_at(double t) const {
  const double c = std::cos(spin * t), s = std::sin(spin * t);
  return Vec3(c * point.x() - s * point.y(), s * point.x() + c * point.y(), point.z());
}

void add_point_load(const Model& m, const PointLoad& load, const VecX& theta, double t, PointLoadScratch& s, VecX& tau,
                    const Mat3* chart) {
  if (!load.active()) return;
  s.kin.chart = chart;
  forward_kinematics(m, theta, s.kin);
  const Vec3 p_W = point_position(s.kin, load.link, load.point_at(t));
  point_jacobian(m, s.kin, load.link, p_W, s.J);
  tau.noalias() += s.J.transpose() * load.force;
}

}  // namespace bigstep
