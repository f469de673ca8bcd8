// mjModel -> ModelSpec and the (qpos, qvel) <-> (theta, theta_dot) map (io/mjcf_import.h;
// docs/model_data.md "Importing MJCF / URDF"; joint sequences of docs/methods/pbfd.md §2.1).
#include "io/mjcf_import.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <memory>

#include "core/chart.h"
#include "core/error.h"
#include "io/utf8.h"

#ifdef BIGSTEP_WITH_MUJOCO
#include <mujoco/mujoco.h>

#include "io/mjcf_spec_ptr.h"
#endif

namespace bigstep {

namespace {

// MuJoCo quaternion (w, x, y, z) at q[0..3] -> rotation (normalised first).
Mat3 quat_rotation(const double* q) {
  return Eigen::Quaterniond(q[0], q[1], q[2], q[3]).normalized().toRotationMatrix();
}

void quat_from_rotation(const Mat3& R, double* q) {
  Eigen::Quaterniond e(R);
  e.normalize();
  if (e.w() < 0) e.coeffs() *= -1;
  q[0] = e.w(), q[1] = e.x(), q[2] = e.y(), q[3] = e.z();
}

// the Euler triple of a ball (at theta_adr) or free (theta_adr + 3) joint; -1 for 1-DOF joints
int euler_adr(const MujocoJointMap& j) {
  return j.type == MujocoJoint::Ball ? j.theta_adr : j.type == MujocoJoint::Free ? j.theta_adr + 3 : -1;
}

void check_sizes(const MujocoImport& imp, const char* what, const VecX& v, int n) {
  BIGSTEP_CHECK_ARG(v.size() == n, what, v.size(), detail::concat("must have ", n, " entries (", imp.path, ")"));
}

}  // namespace

void qpos_from_theta(const MujocoImport& imp, const VecX& theta, VecX& qpos, const Mat3* chart) {
  check_sizes(imp, "theta.size()", theta, imp.nv);
  qpos.resize(imp.nq);
  int c = 0;  // chart of the next ball / free joint
  // C Rz Ry Rx of the angles at e in chart c (C left out while it is the identity: the same bits)
  const auto rotation = [&](const double* e) {
    const Mat3 R = zyx_rotation(e);
    const Mat3* C = chart ? chart + c++ : nullptr;
    return C && *C != Mat3::Identity() ? Mat3(*C * R) : R;
  };
  for (const MujocoJointMap& j : imp.joints) {
    const double* th = theta.data() + j.theta_adr;
    double* q = qpos.data() + j.qpos_adr;
    switch (j.type) {
      case MujocoJoint::Hinge: case MujocoJoint::Slide: q[0] = th[0]; break;
      case MujocoJoint::Ball: quat_from_rotation(rotation(th), q); break;
      case MujocoJoint::Free:
        q[0] = th[0], q[1] = th[1], q[2] = th[2];
        quat_from_rotation(rotation(th + 3), q + 3);
        break;
    }
  }
}

void theta_from_qpos(const MujocoImport& imp, const VecX& qpos, VecX& theta, Mat3* chart) {
  check_sizes(imp, "qpos.size()", qpos, imp.nq);
  theta.resize(imp.nv);
  int c = 0;  // chart of the next ball / free joint
  // the angles of rotation R at e: in the identity chart, or (past the anchor bound) in chart R itself
  const auto angles = [&](const Mat3& R, double* e) {
    Vec3::Map(e) = zyx_angles(R);
    if (!chart) return;
    Mat3& C = chart[c++];
    C.setIdentity();
    if (std::abs(std::cos(e[1])) < kChartAnchorCos) {
      C = R;
      e[0] = e[1] = e[2] = 0;
    }
  };
  for (const MujocoJointMap& j : imp.joints) {
    const double* q = qpos.data() + j.qpos_adr;
    double* th = theta.data() + j.theta_adr;
    switch (j.type) {
      case MujocoJoint::Hinge: case MujocoJoint::Slide: th[0] = q[0]; break;
      case MujocoJoint::Ball: angles(quat_rotation(q), th); break;
      case MujocoJoint::Free:
        th[0] = q[0], th[1] = q[1], th[2] = q[2];
        angles(quat_rotation(q + 3), th + 3);
        break;
    }
  }
}

void qvel_jacobian(const MujocoImport& imp, const VecX& theta, MatX& J) {
  check_sizes(imp, "theta.size()", theta, imp.nv);
  J.setIdentity(imp.nv, imp.nv);
  for (const MujocoJointMap& j : imp.joints) {
    const int e = euler_adr(j);
    if (e >= 0) J.block<3, 3>(e, e) = zyx_rate_matrix(theta.data() + e);
  }
}

void qvel_from_theta_dot(const MujocoImport& imp, const VecX& theta, const VecX& theta_dot, VecX& qvel) {
  check_sizes(imp, "theta.size()", theta, imp.nv);
  check_sizes(imp, "theta_dot.size()", theta_dot, imp.nv);
  qvel = theta_dot;
  for (const MujocoJointMap& j : imp.joints) {
    const int e = euler_adr(j);
    if (e >= 0) qvel.segment<3>(e) = zyx_rate_matrix(theta.data() + e) * theta_dot.segment<3>(e);
  }
}

void theta_dot_from_qvel(const MujocoImport& imp, const VecX& theta, const VecX& qvel, VecX& theta_dot) {
  check_sizes(imp, "theta.size()", theta, imp.nv);
  check_sizes(imp, "qvel.size()", qvel, imp.nv);
  theta_dot = qvel;
  for (const MujocoJointMap& j : imp.joints) {
    const int e = euler_adr(j);
    if (e < 0) continue;
    // det E = -cos b: the Euler rates do not exist at gimbal lock (docs/methods/pbfd.md §2.1)
    BIGSTEP_CHECK_ARG(std::abs(std::cos(theta[e + 1])) > 1e-12, detail::concat(imp.path, ": joint ", j.name, " ry"),
                      theta[e + 1], "Euler singularity (|cos ry| ~ 0): qvel has no Euler rates here");
    theta_dot.segment<3>(e) = zyx_rate_matrix(theta.data() + e).inverse() * qvel.segment<3>(e);
  }
}

#ifndef BIGSTEP_WITH_MUJOCO

MujocoImport import_mujoco(const std::string& path, const MujocoImportOptions&) {
  throw InvalidArgument(path + ": built without MuJoCo; pip install mujoco and reconfigure");
}

#else

namespace {

struct ModelDeleter {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
};

// "kind i (name)" or "kind i" for an unnamed element
std::string element(const mjModel* m, int type, const char* kind, int id) {
  const char* n = mj_id2name(m, type, id);
  return n && *n ? detail::concat(kind, " ", id, " (", n, ")") : detail::concat(kind, " ", id);
}

std::string name_or(const mjModel* m, int type, const char* kind, int id) {
  const char* n = mj_id2name(m, type, id);
  return n && *n ? std::string(n) : detail::concat(kind, id);
}

Vec3 vec3(const double* p) { return Vec3(p[0], p[1], p[2]); }

// one bigstep link's inertia, accumulated over the MuJoCo bodies merged into it: mass, first
// moment and the inertia about the link origin, all in link axes
struct LinkMass {
  double m = 0;
  Vec3 mc = Vec3::Zero();
  Mat3 I_o = Mat3::Zero();
  void add(double mass, const Vec3& c, const Mat3& I_c) {
    m += mass;
    mc += mass * c;
    I_o += I_c + mass * (c.squaredNorm() * Mat3::Identity() - c * c.transpose());
  }
};

// The conversion of one mjModel; members are the pieces under construction.
struct Converter {
  const mjModel* m;
  const MujocoImportOptions& opt;
  MujocoImport& out;
  std::vector<LinkMass> link_mass;
  int off = 0;  // opt.disableflags: a feature MuJoCo switches off is not imported

  bool enabled(int flag) const { return !(off & flag); }
  bool constraint_enabled(int flag) const { return !(off & (mjDSBL_CONSTRAINT | flag)); }

  std::string where(int type, const char* kind, int id) const { return out.path + ": " + element(m, type, kind, id); }

  // names go into JSON (summary.json, inspect) and messages: each must be UTF-8
  void check_names() {
    const std::pair<int, const char*> kinds[] = {{mjOBJ_BODY, "body"},         {mjOBJ_JOINT, "joint"}, {mjOBJ_GEOM, "geom"},
                                                 {mjOBJ_SITE, "site"},         {mjOBJ_ACTUATOR, "actuator"},
                                                 {mjOBJ_KEY, "key"},           {mjOBJ_TENDON, "tendon"}};
    const int counts[] = {int(m->nbody), int(m->njnt), int(m->ngeom), int(m->nsite), int(m->nu), int(m->nkey), int(m->ntendon)};
    for (size_t t = 0; t < std::size(kinds); ++t)
      for (int id = 0; id < counts[t]; ++id) {
        const char* n = mj_id2name(m, kinds[t].first, id);
        if (n && !is_valid_utf8(n))
          throw InvalidArgument(detail::concat(out.path, ": ", kinds[t].second, " ", id, ".name = \"", escaped_bytes(n),
                                               "\": not valid UTF-8 (names go into JSON output)"));
      }
  }

  void check_model_level() {
    // elements with no bigstep counterpart
    BIGSTEP_CHECK_ARG(m->neq == 0 || !constraint_enabled(mjDSBL_EQUALITY), where(mjOBJ_EQUALITY, "equality", 0), "(equality constraint)",
                      "equality constraints are not supported");
    BIGSTEP_CHECK_ARG(m->nflex == 0, where(mjOBJ_FLEX, "flex", 0), "(flex)", "flexes are not supported");
    BIGSTEP_CHECK_ARG(m->npair == 0, out.path + ": contact pair 0", "(<contact><pair>)",
                      "explicit contact pairs are not supported (bigstep filters by contype / conaffinity / exclude)");
    if (m->ntendon > 0) {
      BIGSTEP_CHECK_ARG(opt.drop_tendons, where(mjOBJ_TENDON, "tendon", 0), "(tendon)",
                        "tendons are not supported (MujocoImportOptions::drop_tendons drops them)");
      out.dropped.push_back(detail::concat(m->ntendon, " tendon(s), first ", element(m, mjOBJ_TENDON, "tendon", 0)));
    }
    BIGSTEP_CHECK_ARG(enabled(mjDSBL_FILTERPARENT), out.path + ": option.flag.filterparent",
                      "disable", "bigstep always filters parent-child contacts");
    BIGSTEP_CHECK_ARG(enabled(mjDSBL_ACTUATION) || m->nu == 0, out.path + ": option.flag.actuation", "disable",
                      "switching the actuators off is not supported");
  }

  // the joints of one body as a chain of links; (R_pre, t_pre) is the body's frame before its
  // joints, in the frame of the link `parent`
  void add_joint_links(int b, int parent, Mat3 R_pre, Vec3 t_pre) {
    const int jn = m->body_jntnum[b], j0 = m->body_jntadr[b];
    Vec3 p_last = Vec3::Zero();
    for (int jj = j0; jj < j0 + jn; ++jj) {
      const std::string f = where(mjOBJ_JOINT, "joint", jj);
      const int type = m->jnt_type[jj];
      const Vec3 p = vec3(m->jnt_pos + 3 * jj), a = vec3(m->jnt_axis + 3 * jj);
      const double q0 = m->qpos0[m->jnt_qposadr[jj]];
      LinkSpec l;
      l.name = jn == 1 ? out.body_name[b] : out.body_name[b] + "/" + name_or(m, mjOBJ_JOINT, "joint", jj);
      l.parent = parent;
      MujocoJointMap map;
      map.name = name_or(m, mjOBJ_JOINT, "joint", jj);
      map.qpos_adr = m->jnt_qposadr[jj];
      map.qvel_adr = m->jnt_dofadr[jj];
      map.theta_adr = map.qvel_adr;
      // the link frame sits on the joint anchor: the body frame after the joint, shifted by p
      switch (type) {
        case mjJNT_FREE:
          BIGSTEP_CHECK_ARG(jn == 1 && m->body_parentid[b] == 0, f + ".type", "free",
                            "a free joint must be the only joint of a child of the world");
          // qpos[0..2] is the body origin in the world, qpos[3..6] its orientation: body_pos,
          // body_quat and jnt_pos do not enter (mj_kinematics)
          map.type = MujocoJoint::Free;
          l.joint = JointType::Floating;
          l.parent = -1;
          p_last.setZero();
          break;
        case mjJNT_BALL:
          map.type = MujocoJoint::Ball;
          l.joint = JointType::Ball;
          l.R_o = R_pre, l.t_o = t_pre + R_pre * p;
          p_last = p;
          break;
        case mjJNT_SLIDE:
          // x = x_pre + R_pre a (qpos - ref): the ref goes into the offset so that theta = qpos
          map.type = MujocoJoint::Slide;
          l.joint = JointType::Prismatic;
          l.axis = a;
          l.R_o = R_pre, l.t_o = t_pre + R_pre * (p - q0 * a);
          p_last = p;
          break;
        case mjJNT_HINGE:
          // R = R_pre Rot(a, qpos - ref): the ref goes into the joint frame so that theta = qpos
          map.type = MujocoJoint::Hinge;
          l.joint = JointType::Hinge;
          l.axis = a;
          l.R_o = R_pre * axis_rotation(a, -q0), l.t_o = t_pre + R_pre * p;
          p_last = p;
          break;
        default:
          BIGSTEP_CHECK_ARG(false, f + ".type", type, "unknown joint type");
      }
      set_joint_properties(jj, f, l);
      map.link = int(out.spec.links.size());
      out.spec.links.push_back(l);
      link_mass.emplace_back();
      out.joints.push_back(map);
      // the next joint starts from the body frame: -p in this link's frame
      parent = map.link;
      R_pre.setIdentity();
      t_pre = -p_last;
    }
    out.body_link[b] = parent;
    out.body_R[b] = Mat3::Identity();
    out.body_t[b] = -p_last;
  }

  // limits, damping, armature; the unsupported passive terms are errors (or dropped on request)
  void set_joint_properties(int jj, const std::string& f, LinkSpec& l) {
    const int type = m->jnt_type[jj];
    const int d0 = m->jnt_dofadr[jj], nd = type == mjJNT_FREE ? 6 : type == mjJNT_BALL ? 3 : 1;
    if (m->jnt_limited[jj] && constraint_enabled(mjDSBL_LIMIT)) {
      BIGSTEP_CHECK_ARG(type == mjJNT_HINGE || type == mjJNT_SLIDE, f + ".limited", "true",
                        "limits exist for hinge and slide joints only (a ball joint's cone limit is not supported)");
      l.limited = true;
      l.range[0] = m->jnt_range[2 * jj], l.range[1] = m->jnt_range[2 * jj + 1];
    }
    const double k = m->jnt_stiffness[jj];
    const bool poly = m->jnt_stiffnesspoly[mjNPOLY * jj] != 0 || m->jnt_stiffnesspoly[mjNPOLY * jj + 1] != 0;
    if ((k != 0 || poly) && enabled(mjDSBL_SPRING)) {
      // a linear spring on a hinge / slide is bigstep's: force -k (theta - ref) with theta = qpos
      // and ref = qpos_spring (MuJoCo's qfrc_spring); ball / free springs act on the quaternion
      // and non-linear ones have no bigstep form
      const bool linear_1dof = !poly && (type == mjJNT_HINGE || type == mjJNT_SLIDE);
      if (linear_1dof) {
        l.stiffness = k;
        l.springref = m->qpos_spring[m->jnt_qposadr[jj]];
      } else {
        BIGSTEP_CHECK_ARG(opt.drop_joint_stiffness, f + (poly ? ".stiffnesspoly" : ".stiffness"), k,
                          "springs on ball / free joints and non-linear springs are not supported "
                          "(MujocoImportOptions::drop_joint_stiffness drops them)");
        out.dropped.push_back(detail::concat(f, ".stiffness = ", k));
      }
    }
    for (int d = d0; d < d0 + nd; ++d) {
      if (m->dof_frictionloss[d] != 0 && constraint_enabled(mjDSBL_FRICTIONLOSS)) {
        BIGSTEP_CHECK_ARG(opt.drop_frictionloss, f + ".frictionloss", m->dof_frictionloss[d],
                          "dry joint friction is not supported (MujocoImportOptions::drop_frictionloss drops it)");
        if (d == d0) out.dropped.push_back(detail::concat(f, ".frictionloss = ", m->dof_frictionloss[d]));
      }
      BIGSTEP_CHECK_ARG(m->dof_dampingpoly[mjNPOLY * d] == 0 && m->dof_dampingpoly[mjNPOLY * d + 1] == 0,
                        f + ".dampingpoly", m->dof_dampingpoly[mjNPOLY * d], "non-linear damping is not supported");
      BIGSTEP_CHECK_ARG(m->dof_damping[d] == m->dof_damping[d0], f + ".damping", m->dof_damping[d],
                        "must be the same on every DOF of the joint");
      BIGSTEP_CHECK_ARG(m->dof_armature[d] == m->dof_armature[d0], f + ".armature", m->dof_armature[d],
                        "must be the same on every DOF of the joint");
    }
    // why: bigstep adds armature and damping per Euler rate, MuJoCo per local angular velocity;
    // the two differ for 3-DOF rotations, so only hinge / slide joints may carry them
    if (nd > 1) {
      BIGSTEP_CHECK_ARG(m->dof_damping[d0] == 0 || !enabled(mjDSBL_DAMPER), f + ".damping", m->dof_damping[d0],
                        "damping on a ball / free joint is not supported (bigstep's would act on Euler rates)");
      BIGSTEP_CHECK_ARG(m->dof_armature[d0] == 0, f + ".armature", m->dof_armature[d0],
                        "armature on a ball / free joint is not supported (bigstep's would act on Euler rates)");
    }
    l.damping = enabled(mjDSBL_DAMPER) ? m->dof_damping[d0] : 0;
    l.armature = m->dof_armature[d0];
  }

  // bodies in MuJoCo's order (parents first): jointed bodies become links, jointless ones merge
  // into their parent's link (MuJoCo's weld), inertias accumulate on the link
  void convert_bodies() {
    const int nbody = int(m->nbody);
    out.body_name.resize(nbody);
    out.body_link.assign(nbody, -1);
    out.body_R.assign(nbody, Mat3::Identity());
    out.body_t.assign(nbody, Vec3::Zero());
    out.body_name[0] = "world";
    for (int b = 1; b < nbody; ++b) {
      out.body_name[b] = name_or(m, mjOBJ_BODY, "body", b);
      const std::string f = where(mjOBJ_BODY, "body", b);
      BIGSTEP_CHECK_ARG(m->body_mocapid[b] < 0, f + ".mocap", "true", "mocap bodies are not supported");
      BIGSTEP_CHECK_ARG(m->body_gravcomp[b] == 0, f + ".gravcomp", m->body_gravcomp[b],
                        "gravity compensation is not supported");
      const int pb = m->body_parentid[b];
      // the body frame before its joints, in the parent body's link frame
      const Mat3 Rq = quat_rotation(m->body_quat + 4 * b);
      const Mat3 R_pre = out.body_R[pb] * Rq;
      const Vec3 t_pre = out.body_R[pb] * vec3(m->body_pos + 3 * b) + out.body_t[pb];
      if (m->body_jntnum[b] == 0) {
        out.body_link[b] = out.body_link[pb];
        out.body_R[b] = R_pre;
        out.body_t[b] = t_pre;
      } else {
        add_joint_links(b, out.body_link[pb], R_pre, t_pre);
      }
      // inertia: principal moments in the (ipos, iquat) frame -> central tensor in link axes;
      // mass on the world (bodies welded to it) does not move and is dropped
      const int L = out.body_link[b];
      if (L < 0) continue;
      const Mat3 R_i = out.body_R[b] * quat_rotation(m->body_iquat + 4 * b);
      const Mat3 I_c = R_i * vec3(m->body_inertia + 3 * b).asDiagonal() * R_i.transpose();
      link_mass[L].add(m->body_mass[b], out.body_R[b] * vec3(m->body_ipos + 3 * b) + out.body_t[b], I_c);
    }
    for (size_t L = 0; L < out.spec.links.size(); ++L) {
      const LinkMass& lm = link_mass[L];
      LinkSpec& l = out.spec.links[L];
      l.mass = lm.m;
      if (lm.m <= 0) continue;  // intermediate links of multi-joint bodies: massless
      l.com = lm.mc / lm.m;
      l.inertia = lm.I_o - lm.m * (l.com.squaredNorm() * Mat3::Identity() - l.com * l.com.transpose());
      l.inertia = 0.5 * (l.inertia + l.inertia.transpose()).eval();
    }
  }

  // geoms (visual-only ones, contype = conaffinity = 0, never collide in MuJoCo and are left out);
  // what bigstep's shapes and contacts only approximate is listed in out.approximations
  void convert_geoms() {
    std::vector<std::string> visual, cyl_capsule, cyl_sphere, ellipsoid, condim;
    double mu_lo = INFINITY, mu_hi = -INFINITY;
    for (int g = 0; g < int(m->ngeom); ++g) {
      if (m->geom_contype[g] == 0 && m->geom_conaffinity[g] == 0) {
        visual.push_back(element(m, mjOBJ_GEOM, "geom", g));
        continue;
      }
      const std::string f = where(mjOBJ_GEOM, "geom", g);
      const int b = m->geom_bodyid[g];
      const double* s = m->geom_size + 3 * g;
      GeomSpec gs;
      // an unnamed geom is "<body>/geom<id>" (URDF collision geoms have no names)
      const char* gn = mj_id2name(m, mjOBJ_GEOM, g);
      gs.name = gn && *gn ? std::string(gn) : detail::concat(out.body_name[b], "/geom", g);
      gs.link = out.body_link[b];
      gs.R = out.body_R[b] * quat_rotation(m->geom_quat + 4 * g);
      gs.pos = out.body_R[b] * vec3(m->geom_pos + 3 * g) + out.body_t[b];
      gs.contype = uint32_t(m->geom_contype[g]);
      gs.conaffinity = uint32_t(m->geom_conaffinity[g]);
      switch (m->geom_type[g]) {
        case mjGEOM_PLANE:
          BIGSTEP_CHECK_ARG(gs.link == -1, f + ".type", "plane", "a plane must be on the world body (or welded to it)");
          gs.type = GeomType::Plane;
          break;
        case mjGEOM_SPHERE: gs.type = GeomType::Sphere, gs.size = Vec3(s[0], 0, 0); break;
        case mjGEOM_CAPSULE: gs.type = GeomType::Capsule, gs.size = Vec3(s[0], s[1], 0); break;
        // approximation: a cylinder (radius r, half-length h) becomes the capsule of the same radius
        // and the same total length (half-length h - r), so it never reaches beyond the cylinder's
        // ends; one no longer than its diameter (h <= r) becomes the sphere of radius r. (The capsule
        // of half-length h reached r beyond both ends: A1's hip cylinders then overlapped.)
        case mjGEOM_CYLINDER:
          if (s[1] > s[0]) gs.type = GeomType::Capsule, gs.size = Vec3(s[0], s[1] - s[0], 0);
          else gs.type = GeomType::Sphere, gs.size = Vec3(s[0], 0, 0);
          (s[1] > s[0] ? cyl_capsule : cyl_sphere).push_back(element(m, mjOBJ_GEOM, "geom", g));
          break;
        // approximation: an ellipsoid becomes the sphere of its largest semi-axis
        case mjGEOM_ELLIPSOID:
          gs.type = GeomType::Sphere, gs.size = Vec3(vec3(s).maxCoeff(), 0, 0);
          ellipsoid.push_back(element(m, mjOBJ_GEOM, "geom", g));
          break;
        case mjGEOM_BOX: gs.type = GeomType::Box, gs.size = vec3(s); break;
        case mjGEOM_MESH: BIGSTEP_CHECK_ARG(false, f + ".type", "mesh", "mesh geoms are not supported"); break;
        case mjGEOM_HFIELD: BIGSTEP_CHECK_ARG(false, f + ".type", "hfield", "height fields are not supported"); break;
        case mjGEOM_SDF: BIGSTEP_CHECK_ARG(false, f + ".type", "sdf", "SDF geoms are not supported"); break;
        default: BIGSTEP_CHECK_ARG(false, f + ".type", m->geom_type[g], "unsupported geom type");
      }
      if (m->geom_condim[g] != 3) condim.push_back(detail::concat(element(m, mjOBJ_GEOM, "geom", g), " condim ", m->geom_condim[g]));
      mu_lo = std::min(mu_lo, m->geom_friction[3 * g]);
      mu_hi = std::max(mu_hi, m->geom_friction[3 * g]);
      out.spec.geoms.push_back(gs);
      out.geom_friction.push_back(m->geom_friction[3 * g]);
      out.geom_mj.push_back(g);
    }
    approximated(cyl_capsule, "cylinder(s) became capsules of the same radius and total length");
    approximated(cyl_sphere, "cylinder(s) no longer than their diameter became spheres of the same radius");
    approximated(ellipsoid, "ellipsoid(s) became spheres of their largest semi-axis");
    approximated(visual, "visual-only geom(s) (contype = conaffinity = 0) left out");
    approximated(condim, "geom(s) with condim other than 3: contacts are condim 3 (sliding friction, no torsional or rolling)");
    if (mu_lo < mu_hi)
      out.approximations.push_back(detail::concat("geom sliding frictions from ", mu_lo, " to ", mu_hi,
                                                  ": a scene has one contact.mu (default: the largest over the contact pairs)"));
  }

  // one line "<n> <what>: <first few elements>" per kind of approximation
  void approximated(const std::vector<std::string>& items, const char* what) {
    if (items.empty()) return;
    constexpr size_t kShown = 4;
    std::string line = detail::concat(items.size(), " ", what, ": ");
    for (size_t i = 0; i < items.size() && i < kShown; ++i) line += (i ? ", " : "") + items[i];
    if (items.size() > kShown) line += ", ...";
    out.approximations.push_back(line);
  }

  // MuJoCo's body filter on bigstep links: same weld = same link already; MuJoCo also skips a
  // body and its parent's weld (neither on the world), which bigstep's parent test misses where
  // a multi-joint body's geoms sit below intermediate links. <exclude> pairs are body pairs.
  void convert_exclude() {
    auto add = [&](int la, int lb) {
      if (la == lb) return;
      for (const auto& [e1, e2] : out.spec.exclude)
        if ((e1 == la && e2 == lb) || (e1 == lb && e2 == la)) return;
      out.spec.exclude.emplace_back(la, lb);
    };
    const int nbody = int(m->nbody);
    for (int b = 1; b < nbody; ++b) {
      const int w = m->body_weldid[b], pw = m->body_weldid[m->body_parentid[w]];
      if (w != b || pw == 0) continue;  // one test per weld root, parent weld not the world
      const int la = out.body_link[b], lb = out.body_link[pw];
      if (la >= 0 && lb >= 0 && out.spec.links[la].parent != lb) add(la, lb);
    }
    for (int e = 0; e < int(m->nexclude); ++e) {
      const int sig = m->exclude_signature[e];
      add(out.body_link[sig >> 16], out.body_link[sig & 0xFFFF]);
    }
  }

  // motors and position servos on hinge / slide joints
  void convert_actuators() {
    for (int i = 0; i < int(m->nactuator); ++i) {
      const std::string f = where(mjOBJ_ACTUATOR, "actuator", i);
      const double* gp = m->actuator_gainprm + mjNGAIN * i;
      const double* bp = m->actuator_biasprm + mjNBIAS * i;
      BIGSTEP_CHECK_ARG(m->actuator_trntype[i] == mjTRN_JOINT, f + ".trntype", m->actuator_trntype[i],
                        "only joint transmissions are supported (no tendon, site, slider-crank, body)");
      BIGSTEP_CHECK_ARG(m->actuator_ctrlnum[i] == 1 && m->actuator_outnum[i] == 1, f + ".ctrlnum",
                        m->actuator_ctrlnum[i], "multi-input / multi-output actuators are not supported");
      const int jj = m->actuator_trnid[2 * i];
      const int jt = m->jnt_type[jj];
      BIGSTEP_CHECK_ARG(jt == mjJNT_HINGE || jt == mjJNT_SLIDE, f + ".joint", element(m, mjOBJ_JOINT, "joint", jj),
                        "must be a hinge or slide joint");
      BIGSTEP_CHECK_ARG(!m->jnt_actfrclimited[jj], f + ".joint", element(m, mjOBJ_JOINT, "joint", jj) + ".actuatorfrcrange",
                        "joint actuator force limits are not supported");
      BIGSTEP_CHECK_ARG(m->actuator_dyntype[i] == mjDYN_NONE, f + ".dyntype", m->actuator_dyntype[i],
                        "actuator dynamics are not supported (dyntype must be none)");
      BIGSTEP_CHECK_ARG(m->actuator_gaintype[i] == mjGAIN_FIXED, f + ".gaintype", m->actuator_gaintype[i],
                        "only fixed gains are supported");
      BIGSTEP_CHECK_ARG(!m->actuator_forcelimited[i], f + ".forcerange", "limited", "force limits are not supported");
      BIGSTEP_CHECK_ARG(m->actuator_delay[i] == 0, f + ".delay", m->actuator_delay[i], "delays are not supported");
      BIGSTEP_CHECK_ARG(m->actuator_damping[i] == 0, f + ".damping", m->actuator_damping[i],
                        "actuator damping is not supported");
      BIGSTEP_CHECK_ARG(m->actuator_armature[i] == 0, f + ".armature", m->actuator_armature[i],
                        "actuator armature is not supported");
      ActuatorSpec a;
      a.name = name_or(m, mjOBJ_ACTUATOR, "actuator", i);
      a.dof = m->jnt_dofadr[jj];
      a.gear = m->actuator_gear[6 * m->actuator_outadr[i]];
      const int c = m->actuator_ctrladr[i];
      a.ctrllimited = m->actuator_ctrllimited[c] && enabled(mjDSBL_CLAMPCTRL);
      a.ctrlrange[0] = m->actuator_ctrlrange[2 * c], a.ctrlrange[1] = m->actuator_ctrlrange[2 * c + 1];
      if (m->actuator_biastype[i] == mjBIAS_NONE) {
        // motor: force = gear ctrl
        BIGSTEP_CHECK_ARG(gp[0] == 1, f + ".gainprm[0]", gp[0], "a motor needs gain 1 (MuJoCo's <motor>)");
        a.type = ActuatorType::Motor;
      } else {
        // position: force = kp ctrl - kp length - kv velocity, i.e. biasprm = (0, -kp, -kv)
        BIGSTEP_CHECK_ARG(m->actuator_biastype[i] == mjBIAS_AFFINE, f + ".biastype", m->actuator_biastype[i],
                          "only none (motor) or affine (position) bias is supported");
        BIGSTEP_CHECK_ARG(bp[0] == 0 && bp[1] == -gp[0] && gp[0] > 0 && bp[2] <= 0, f + ".biasprm",
                          detail::concat("(", bp[0], ", ", bp[1], ", ", bp[2], ")"),
                          "a position actuator needs biasprm = (0, -kp, -kv) with kp = gainprm[0] > 0");
        a.type = ActuatorType::Position;
        a.kp = gp[0], a.kv = -bp[2];
      }
      out.spec.actuators.push_back(a);
    }
  }

  void convert_keyframes() {
    for (int k = 0; k < int(m->nkey); ++k) {
      MujocoImport::Keyframe key;
      key.name = name_or(m, mjOBJ_KEY, "key", k);
      const VecX qpos = Eigen::Map<const VecX>(m->key_qpos + m->nq * k, m->nq);
      const VecX qvel = Eigen::Map<const VecX>(m->key_qvel + m->nv * k, m->nv);
      key.chart.assign(size_t(std::count_if(out.joints.begin(), out.joints.end(),
                                            [](const MujocoJointMap& j) {
                                              return j.type == MujocoJoint::Ball || j.type == MujocoJoint::Free;
                                            })),
                       Mat3::Identity());
      theta_from_qpos(out, qpos, key.theta, key.chart.data());
      theta_dot_from_qvel(out, key.theta, qvel, key.theta_dot);
      out.keyframes.push_back(std::move(key));
    }
  }

  void run() {
    out.nq = int(m->nq), out.nv = int(m->nv);
    out.timestep = m->opt.timestep;
    off = m->opt.disableflags;
    out.spec.gravity = enabled(mjDSBL_GRAVITY) ? vec3(m->opt.gravity) : Vec3::Zero();
    check_names();
    check_model_level();
    convert_bodies();
    if (opt.drop_geoms)
      out.dropped.push_back(detail::concat(m->ngeom, " geom(s) (drop_geoms)"));
    else if (constraint_enabled(mjDSBL_CONTACT)) {  // contacts off in MuJoCo: no geoms
      convert_geoms();
      convert_exclude();
    }
    convert_actuators();
    theta_from_qpos(out, Eigen::Map<const VecX>(m->qpos0, m->nq), out.theta0);
    convert_keyframes();
  }
};

}  // namespace

namespace {

// MuJoCo's message on one line, like every bigstep error
[[noreturn]] void mujoco_failed(const std::string& path, std::string msg) {
  for (char& c : msg)
    if (c == '\n') c = ' ';
  throw InvalidArgument(path + ": MuJoCo could not load it: " + msg);
}

}  // namespace

void edit_mujoco_spec(mjSpec* s, const MujocoImportOptions& opt) {
  mjsBody* world = mjs_findBody(s, "world");
  if (opt.free_root)
    for (mjsElement* e = mjs_firstChild(world, mjOBJ_BODY, 0); e; e = mjs_nextChild(world, e, 0)) {
      mjsBody* b = mjs_asBody(e);
      if (!mjs_firstChild(b, mjOBJ_JOINT, 0)) mjs_addFreeJoint(b);
    }
  if (opt.floor) {
    mjsGeom* g = mjs_addGeom(world, nullptr);
    g->type = mjGEOM_PLANE;
    g->size[0] = g->size[1] = 0;  // infinite
    g->size[2] = 1;
    mjs_setName(g->element, "floor");
  }
}

MujocoImport import_mujoco(const std::string& path, const MujocoImportOptions& options) {
  char err[1024] = "";
  std::unique_ptr<mjModel, ModelDeleter> m;
  if (options.free_root || options.floor) {  // parse, edit, compile
    MjSpecPtr spec(mj_parseXML(path.c_str(), nullptr, err, sizeof(err)));
    if (!spec) mujoco_failed(path, err);
    edit_mujoco_spec(spec.get(), options);
    m.reset(mj_compile(spec.get(), nullptr));
    if (!m) mujoco_failed(path, mjs_getError(spec.get()));
  } else {
    m.reset(mj_loadXML(path.c_str(), nullptr, err, sizeof(err)));
    if (!m) mujoco_failed(path, err);
  }
  MujocoImport out;
  out.path = path;
  Converter{m.get(), options, out, {}, 0}.run();
  // validate now, so that a model bigstep cannot build fails here with the file's name
  out.spec.skip_unsupported_pairs = options.drop_unsupported_pairs;
  try {
    const Model model = Model::finalize(out.spec);
    if (!model.skipped_pairs.empty())
      out.dropped.push_back(detail::concat(model.skipped_pairs.size(),
                                           " geom pair(s) without a collision function (drop_unsupported_pairs)"));
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    const bool pair = what.find("no collision function") != std::string::npos;
    throw InvalidArgument(path + ": " + what + (pair ? "; or skip such pairs: model.allow: [unsupported_pairs]" : ""));
  }
  return out;
}

#endif

}  // namespace bigstep
