// Penetration of a state (a bad-input check): a body that sinks through the ground or into another
// body (say with contact.c_perp = 0) is flagged per rollout (STATUS_PENETRATED) and fails the run
// instead of running on silently. The run loops check after each step; the integrators know
// nothing of it. Runs the collision stage (core/collision.h) on every geom pair.
#pragma once
#include <string>
#include <vector>

#include "core/collision.h"

namespace bigstep {

/// A contact has penetrated when its cores have crossed (collision.h: depth = r_a + r_b - n.(c_a -
/// c_b)) by more than max(kPenetrationDepth, r_a + r_b): for a contact sphere on a plane, its
/// centre lies more than max(5 cm, radius) below the plane; for a sphere in a box, its centre
/// lies that deep inside. Far beyond any contact's working depth (mm for the shipped scenes).
constexpr double kPenetrationDepth = 0.05;  // [m]

struct Penetration {
  int geom_a = -1, geom_b = -1;  ///< the pair (geom indices), -1 = none
  double depth = 0;              ///< crossing of the cores, depth - r_a - r_b [m]
  double limit = 0;              ///< max(kPenetrationDepth, r_a + r_b) [m]
  bool found() const { return geom_a >= 0; }
};

/// Scratch for the check (kinematics and a contact buffer of the model's capacity).
struct PenetrationCheck {
  explicit PenetrationCheck(const Model& m) : kin(m), con(size_t(m.max_contacts)) {}
  /// The first penetrated contact at theta (n_q) in the rotation charts chart (core/chart.h,
  /// nullptr = identity), or none.
  Penetration find(const Model& m, const VecX& theta, const Mat3* chart = nullptr);
  Kinematics kin;
  std::vector<Contact> con;
};

/// One line for messages: "contacts[3] (link box) is 0.31 m through terrain[0] (limit 0.05 m)".
std::string describe(const Model& m, const Penetration& p);

}  // namespace bigstep
