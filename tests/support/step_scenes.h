// Small scenes and helpers shared by the PBD / PBFD step tests.
#pragma once
#include <cstdio>
#include <string>

#include "core/inertia.h"
#include "core/kinematics.h"

namespace bigstep::test {

/// A repository config by name (configs/<name>.yaml).
inline std::string config(const std::string& name) {
  return std::string(BIGSTEP_SOURCE_DIR) + "/configs/" + name + ".yaml";
}

/// x with every digit, for --set overrides.
inline std::string num(double x) {
  char b[64];
  std::snprintf(b, sizeof b, "%.17g", x);
  return b;
}

/// Whole-model centre of mass at theta.
inline Vec3 com(const Model& m, const VecX& th) {
  Kinematics k(m);
  forward_kinematics(m, th, k);
  return centre_of_mass(m, k);
}

/// A rigid box on a 6-DOF floating base, no terrain; COM offset from the base origin so the
/// translational DOFs are not the COM.
inline const char* kFreeBox = R"(scene: free_box
model:
  links:
    - name: body
      joint: floating
      box: {size: [0.3, 0.2, 0.1], mass: 2.0, centre: [0.05, 0.02, -0.01]}
initial:
  theta: [0.1, -0.2, 1.5, 0.1, 0.2, 0.3]
integrator: {type: pbfd, dt: 0.01, duration: 1.0}
)";

}  // namespace bigstep::test
