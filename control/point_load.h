// control.load: a force of fixed world direction and size applied at a material point of a link that
// turns about the link's z axis at a constant rate. It is the rotating load of Drumwright's B4 box on
// an elastic foundation (docs/methods/compliant.md §10, paper §5.5 Fig. 7: 5 N or 50 N
// straight down at body point (s/2)(cos 10t, sin 10t, 1)). Like every applied force f(t, q, v) of
// the compliant step's recipe (docs/methods/compliant.md §3 step 1) it is evaluated at the start of the step, (t_n, theta_n), and added
// to the step's generalized forces as J_p(theta_n)^T F.
#pragma once
#include "core/kinematics.h"

namespace bigstep {

struct PointLoad {
  int link = -1;               ///< control.load.link; -1 = no load
  Vec3 force = Vec3::Zero();   ///< control.load.force, world frame [N]
  Vec3 point = Vec3::Zero();   ///< control.load.point: the point at t = 0, link frame [m]
  double spin = 0;             ///< control.load.spin: rate of the point about the link z axis [rad/s]
  bool active() const { return link >= 0; }
  /// The point at time t, link frame: R_z(spin t) point.
  Vec3 point_at(double t) const;
};

/// Scratch of add_point_load, sized once from the Model (no allocation per step).
struct PointLoadScratch {
  explicit PointLoadScratch(const Model& m) : kin(m), J(MatX::Zero(3, m.n_q)) {}
  Kinematics kin;
  MatX J;  ///< (3 x n_q)
};

/// tau += J_p(theta)^T F: the generalized force of the load at (theta, t). tau: n_q entries. No-op
/// when the load is not active. chart: the rollout's rotation charts (core/chart.h), nullptr = identity.
void add_point_load(const Model& m, const PointLoad& load, const VecX& theta, double t, PointLoadScratch& s, VecX& tau,
                    const Mat3* chart = nullptr);

}  // namespace bigstep
