// MJCF / URDF import: MuJoCo's own compiler (mj_loadXML) builds an mjModel, and this file converts
// that mjModel into a bigstep ModelSpec plus the map between MuJoCo's (qpos, qvel) and bigstep's
// (theta, theta_dot). No XML is parsed here. docs/model_data.md "Importing MJCF / URDF" has the
// rules; every MuJoCo feature bigstep cannot represent is an InvalidArgument naming the file, the
// element and the attribute, or is dropped only when an option below asks for it by name.
#pragma once
#include <string>
#include <vector>

#include "core/model.h"

struct mjSpec_;  // MuJoCo's parsed model (mujoco/mjspec.h)

namespace bigstep {

/// MuJoCo joint kinds (mjtJoint order).
enum class MujocoJoint : uint8_t { Free, Ball, Slide, Hinge };

/// One MuJoCo joint and the bigstep link / DOFs it became.
///   hinge, slide: 1 DOF, theta = qpos (the joint's ref is folded into the link's joint frame)
///   ball        : 3 DOFs, theta = ZYX Euler angles (rz, ry, rx) of qpos's quaternion,
///                 R(q) = Rz(rz) Ry(ry) Rx(rx); qvel = angular velocity in the child (local) frame
///   free        : 6 DOFs, theta = (x, y, z, rz, ry, rx); qpos = (position, quaternion);
///                 qvel = (linear velocity of the body origin in the WORLD frame, angular velocity
///                 in the BODY frame) -- MuJoCo's free-joint convention (mj_integratePos)
struct MujocoJointMap {
  std::string name;          ///< MuJoCo joint name ("joint<i>" when unnamed)
  MujocoJoint type = MujocoJoint::Hinge;
  int qpos_adr = 0;          ///< first entry in qpos (jnt_qposadr)
  int qvel_adr = 0;          ///< first entry in qvel (jnt_dofadr)
  int theta_adr = 0;         ///< first bigstep DOF (equals qvel_adr: DOFs keep MuJoCo's order)
  int link = 0;              ///< bigstep link whose joint this is
};

/// Explicit permissions to drop MuJoCo features bigstep has no model for. Each is an error by
/// default; a dropped feature is listed in MujocoImport::dropped.
struct MujocoImportOptions {
  bool drop_joint_stiffness = false;  ///< jnt_stiffness (joint springs; humanoid, half_cheetah)
  bool drop_frictionloss = false;     ///< dof_frictionloss (dry joint friction; URDF <dynamics friction>)
  bool drop_tendons = false;          ///< tendons no actuator uses (humanoid's hip-knee limit tendons)
  bool drop_geoms = false;            ///< import no geoms at all (dynamics only)
  /// geom pairs whose shapes bigstep has no collision function for (box-box, box-capsule): skipped
  /// one by one (Model::skipped_pairs) instead of failing
  bool drop_unsupported_pairs = false;
  // edits of the file's model before MuJoCo compiles it (so MuJoCo's model, the oracle, has them too)
  bool free_root = false;             ///< a free joint on every jointless body attached to the world
  bool floor = false;                 ///< a world plane geom "floor" at z = 0 (normal +z)
};

/// Everything bigstep takes from one compiled mjModel.
struct MujocoImport {
  std::string path;                   ///< the file given to import_mujoco
  ModelSpec spec;                     ///< links, geoms, exclude, actuators, gravity
  double timestep = 0;                ///< opt.timestep [s]
  std::vector<double> geom_friction;  ///< per spec.geoms entry: sliding mu (geom_friction[0])
  std::vector<int> geom_mj;           ///< per spec.geoms entry: the MuJoCo geom id
  struct Keyframe {
    std::string name;
    VecX theta, theta_dot;
    /// (n_chart) the rotation charts theta is read in (core/chart.h): a ball / free joint past 45
    /// degrees is anchored at its own orientation, so its rates exist at any orientation
    std::vector<Mat3> chart;
  };
  std::vector<Keyframe> keyframes;    ///< mjModel keys as bigstep states (through the map)
  VecX theta0;                        ///< qpos0 as theta
  std::vector<std::string> dropped;   ///< what the options dropped, one line each
  /// what the conversion approximated without being asked (a cylinder as a capsule, an ellipsoid
  /// as a sphere, visual-only geoms left out, ...), one line per kind; `bigstep run` prints them
  /// once on stderr and writes them into summary.json ("import_approximations")
  std::vector<std::string> approximations;

  // the coordinate map
  int nq = 0, nv = 0;                 ///< MuJoCo's dim(qpos), dim(qvel); n_q of the Model is nv
  std::vector<MujocoJointMap> joints; ///< (njnt) in MuJoCo's joint order
  // every MuJoCo body as a pose in a bigstep link's frame (jointless bodies are merged into
  // their parent's link, bodies welded to the world into the world, link -1)
  std::vector<std::string> body_name; ///< (nbody) body 0 is the world
  std::vector<int> body_link;         ///< (nbody) link carrying the body's inertia and geoms
  std::vector<Mat3> body_R;           ///< (nbody) body frame orientation in that link's frame
  std::vector<Vec3> body_t;           ///< (nbody) body frame origin in that link's frame
};

/// The options' edits of a parsed model before compiling (free_root: a free joint on every jointless
/// body attached to the world; floor: a world plane "floor" at z = 0). import_mujoco applies them;
/// exposed so that a MuJoCo-side user (bench vs-mujoco) builds the very same model. Only in builds
/// with MuJoCo.
void edit_mujoco_spec(::mjSpec_* spec, const MujocoImportOptions& opt);

/// Compile an MJCF or URDF file with MuJoCo (mj_loadXML) and convert it. Throws InvalidArgument
/// with MuJoCo's own error text for a missing / unparsable file, and naming the file, element and
/// attribute for anything bigstep cannot represent (a name that is not UTF-8 too); also when bigstep
/// was built without MuJoCo.
MujocoImport import_mujoco(const std::string& path, const MujocoImportOptions& options = {});

/// qpos (nq) of theta (nv) whose ball / free joint angles are read in the rotation charts chart
/// (core/chart.h: n_chart, the model's ball / free joints in MuJoCo's joint order; nullptr =
/// identity). Quaternions come out unit with w >= 0 (q and -q are one rotation).
void qpos_from_theta(const MujocoImport& imp, const VecX& theta, VecX& qpos, const Mat3* chart = nullptr);
/// theta (nv) of qpos (nq); quaternions are normalised first; Euler angles in (-pi, pi],
/// the middle one in [-pi/2, pi/2]. With chart (n_chart, written): a joint whose middle angle is
/// past core/chart.h's anchor bound gets its orientation as chart and angles 0 (so that its rates
/// exist, theta_dot_from_qvel); the others the identity.
void theta_from_qpos(const MujocoImport& imp, const VecX& qpos, VecX& theta, Mat3* chart = nullptr);
/// qvel = J(theta) theta_dot (see qvel_jacobian).
void qvel_from_theta_dot(const MujocoImport& imp, const VecX& theta, const VecX& theta_dot, VecX& qvel);
/// theta_dot = J(theta)^-1 qvel. Throws InvalidArgument at an Euler singularity (|cos ry| < 1e-12).
void theta_dot_from_qvel(const MujocoImport& imp, const VecX& theta, const VecX& qvel, VecX& theta_dot);
/// J = d qvel / d theta_dot (nv x nv): identity on hinge / slide / free translation DOFs, and for
/// each ZYX Euler triple (a, b, c) = (rz, ry, rx) the body-frame rate matrix
///   omega_local = [ -sin b        0       1 ] [a']
///                 [ cos b sin c   cos c   0 ] [b']
///                 [ cos b cos c  -sin c   0 ] [c'].
void qvel_jacobian(const MujocoImport& imp, const VecX& theta, MatX& J);

}  // namespace bigstep
