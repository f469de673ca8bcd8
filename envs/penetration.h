// Terrain penetration of a state (issue 10 item 7): a body that sinks through the ground (say with
// contact.c_perp = 0) is flagged per rollout (STATUS_PENETRATED) and fails the run instead of
// running on silently. The run loops check after each step; the integrators know nothing of it.
#pragma once
#include <string>

#include "core/kinematics.h"

namespace bigstep {

/// A contact sphere has penetrated when its centre lies more than max(kPenetrationDepth, radius)
/// below a terrain plane: far beyond any contact's working depth (mm for the shipped scenes).
constexpr double kPenetrationDepth = 0.05;  // [m]

struct Penetration {
  int sphere = -1;   ///< index into Model::spheres, -1 = none
  int plane = -1;    ///< index into Model::planes
  double depth = 0;  ///< centre below the plane [m]
  bool found() const { return sphere >= 0; }
};

/// The first penetrated sphere at theta (n_q), or none. Uses kin as scratch.
Penetration find_penetration(const Model& m, const VecX& theta, Kinematics& kin);

/// One line for messages: "contact sphere 3 (link box) is 0.31 m below terrain[0] (limit 0.05 m)".
std::string describe(const Model& m, const Penetration& p);

}  // namespace bigstep
