// A bigstep Model as an MJCF that MuJoCo loads: built through MuJoCo's own model
// editing API (mjSpec) and written by mj_saveXMLString, no hand-written XML. Every DOF becomes a
// MuJoCo hinge or slide joint with qpos0 = 0, in bigstep's DOF order, so MuJoCo's qpos and qvel ARE
// theta and theta_dot (a floating joint: 3 slides + 3 hinges rz, ry, rx; a ball: 3 hinges), and
// importing the export (io/mjcf_import.h) gives back the same mass matrix and contacts.
#pragma once
#include <string>

#include "core/model.h"

namespace bigstep {

/// What the MJCF carries besides the Model.
struct MjcfExportOptions {
  std::string name = "bigstep";   ///< <mujoco model="...">
  double timestep = 0.002;        ///< <option timestep>
  double friction = 1.0;          ///< every geom's sliding friction (MuJoCo's pair rule takes the max)
};

/// The MJCF text of m. Rules (docs/model_data.md "Exporting MJCF"):
///  - one body per link at its joint frame (pos, quat), its joint's DOFs as hinge / slide joints
///    (axis in the frame preceding the DOF, as MuJoCo composes a body's joints in order), range,
///    damping, armature, stiffness / springref; explicit inertial (mass, COM, full inertia);
///  - a massless link with DOFs has no MuJoCo body of its own (MuJoCo refuses massless moving bodies):
///    its joints go into the body of its only child, whose frame and contents are re-expressed in the
///    massless link's frame (joint anchors at the child's joint origin); a massless moving link with
///    0 or several children is an InvalidArgument naming it;
///  - geoms keep type, pose, size, contype and conaffinity; a contact point (sphere radius 0) becomes a
///    sphere of radius 1e-6 m (MuJoCo needs a positive size); exclude -> <contact><exclude>;
///    motors and position servos -> <motor> / <position> on the DOF's joint.
/// Throws InvalidArgument when MuJoCo refuses the result (its message) or when built without MuJoCo.
std::string export_mjcf(const Model& m, const MjcfExportOptions& opt = {});

}  // namespace bigstep
