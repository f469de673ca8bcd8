// Model: immutable articulated-body description (spec pbfd.md §2).
// Built once from a ModelSpec by Model::finalize(), validated there, never mutated after.
#pragma once
#include <string>
#include <vector>

#include "core/types.h"

namespace bigstep {

/// Joint kinds; each is a fixed sequence of elementary DOFs (pbfd.md §2.1 table).
enum class JointType { Fixed, Hinge, Prismatic, Ball, Floating, Planar };

const char* joint_type_name(JointType t);
/// Number of generalized coordinates of a joint type (hinge 1, ball 3, floating 6, planar 3).
int joint_dof_count(JointType t);

/// One link and the joint that attaches it to its parent.
struct LinkSpec {
  std::string name;
  int parent = -1;                      ///< index of the parent link, -1 = world
  JointType joint = JointType::Fixed;
  Mat3 R_o = Mat3::Identity();          ///< joint frame orientation in the parent frame
  Vec3 t_o = Vec3::Zero();              ///< joint frame origin in the parent frame
  Vec3 axis = Vec3::UnitZ();            ///< unit axis (hinge, prismatic), joint frame
  double mass = 0;                      ///< [kg]
  Vec3 com = Vec3::Zero();              ///< centre of mass, link frame
  Mat3 inertia = Mat3::Zero();          ///< inertia tensor about the COM, link axes
};

/// A contact sphere (radius 0 is a point) fixed to a link.
struct ContactSphere {
  int link = 0;
  Vec3 centre = Vec3::Zero();           ///< link frame
  double radius = 0;                    ///< >= 0 [m]
};

/// Half-space obstacle phi(y) = n^T y - offset (> 0 outside), unit normal n.
struct Plane {
  Vec3 normal = Vec3::UnitZ();
  double offset = 0;
};

/// Everything needed to build a Model.
struct ModelSpec {
  std::vector<LinkSpec> links;          ///< parent-before-child order
  std::vector<ContactSphere> spheres;
  std::vector<Plane> planes;
  Vec3 gravity = Vec3(0, 0, -9.81);
};

/// Immutable model. Sizes first, then per-link and per-DOF arrays (shape in comments).
class Model {
 public:
  /// Validate `spec` and derive the DOF tables. Throws InvalidArgument naming the field.
  static Model finalize(const ModelSpec& spec);

  int n_link = 0;  ///< number of links L
  int n_q = 0;     ///< number of generalized coordinates D = dim(theta)

  std::vector<LinkSpec> links;          ///< (n_link)
  std::vector<Mat3> link_S;             ///< (n_link) second moment int rho x x^T dx, link frame (§2.4)
  std::vector<int> link_dof_adr;        ///< (n_link) first DOF of the link's joint
  std::vector<int> link_dof_num;        ///< (n_link) DOFs of the link's joint

  std::vector<int> dof_link;            ///< (n_q) link whose joint owns DOF k
  std::vector<uint8_t> dof_revolute;    ///< (n_q) 1 revolute, 0 prismatic
  std::vector<Vec3> dof_axis;           ///< (n_q) unit axis in the frame preceding the DOF
  std::vector<std::string> dof_name;    ///< (n_q) "link.joint_part"
  std::vector<int> gimbal_dof;          ///< middle Euler angles (ball / floating), checked each step
  std::vector<uint8_t> dof_anc;         ///< (n_q x n_link) 1 when DOF k moves link j

  std::vector<ContactSphere> spheres;
  std::vector<Plane> planes;
  Vec3 gravity = Vec3(0, 0, -9.81);
  double total_mass = 0;                ///< sum of link masses [kg]

  /// True when DOF k lies on the root->j path (pbfd.md §2.3 anc(j)).
  bool moves(int k, int j) const { return dof_anc[size_t(k) * n_link + j] != 0; }
  /// Total weight W = m g [N], the scale of the convergence test (pbfd.md §5.1).
  double weight() const { return total_mass * gravity.norm(); }
};

/// Second moment from mass, COM and central inertia: S = 1/2 tr(I) I3 - I + m c c^T (§2.4).
Mat3 second_moment(double m, const Vec3& c, const Mat3& I_c);

}  // namespace bigstep
