// Model: immutable articulated-body description (docs/methods/pbfd.md §2).
// Built once from a ModelSpec by Model::finalize(), validated there, never mutated after.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "core/geom.h"
#include "core/height_field.h"
#include "core/types.h"

namespace bigstep {

/// Joint kinds; each is a fixed sequence of elementary DOFs (docs/methods/pbfd.md §2.1 table).
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
  // joint properties (MuJoCo's jnt_range / dof_damping / dof_armature / jnt_stiffness, qpos_spring)
  bool limited = false;                 ///< hinge / prismatic only: range is enforced
  double range[2] = {0, 0};             ///< [lo, hi] of the joint coordinate [rad or m], lo < hi
  double limit_stiffness = 0;           ///< PBD/PBFD limit penalty C [N m/rad^alpha or N/m^alpha]; 0 = contact c_perp
  double damping = 0;                   ///< >= 0, viscous on each of the joint's DOFs [N m s/rad or N s/m]
  double armature = 0;                  ///< >= 0, rotor inertia added to each DOF's diagonal of H [kg m^2 or kg]
  /// >= 0, joint spring on each of the joint's DOFs: generalised force -k (theta_k - springref)
  /// [N m/rad or N/m] (MuJoCo's stiffness, qfrc_spring). Hinge, prismatic and planar (each of x, z,
  /// ry, as MuJoCo's slide, slide, hinge joints) only: on a ball or floating joint it would act on
  /// each Euler angle / translation separately, which is not MuJoCo's ball / free spring (a
  /// rotation distance to a reference quaternion), so a non-zero value there is rejected.
  double stiffness = 0;
  double springref = 0;                 ///< joint coordinate where the spring is relaxed [rad or m] (qpos_spring)
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

/// Actuator kinds (MuJoCo's motor and position actuators; core/actuation.h maps controls).
enum class ActuatorType : uint8_t { Motor, Position };

/// One actuator on one DOF. Its length is gear * theta_dof (MuJoCo's transmission).
///   motor   : generalised force gear * ctrl on the DOF
///   position: force kp (ctrl - gear theta) - kv gear theta_dot, i.e. the stable PD (stable_pd.h)
///             with K_p = kp gear^2, K_d = kv gear^2 and target theta_bar = ctrl / gear
/// ctrl is clamped to ctrlrange when ctrllimited.
struct ActuatorSpec {
  std::string name;
  int dof = -1;                         ///< DOF index it drives
  ActuatorType type = ActuatorType::Motor;
  double gear = 1;                      ///< != 0
  bool ctrllimited = false;
  double ctrlrange[2] = {0, 0};         ///< [lo, hi], lo < hi when ctrllimited
  double kp = 0, kv = 0;                ///< position actuators: gains >= 0 (kp > 0)
};

/// Everything needed to build a Model. (geoms and exclude come last so that the positional
/// initialisation ModelSpec{links, spheres, planes, gravity} keeps compiling.)
struct ModelSpec {
  std::vector<LinkSpec> links;          ///< parent-before-child order
  std::vector<ContactSphere> spheres;   ///< legacy contact points; become sphere geoms
  std::vector<Plane> planes;            ///< legacy terrain; become world plane geoms
  Vec3 gravity = Vec3(0, 0, -9.81);
  std::vector<GeomSpec> geoms;          ///< collision shapes (geom.h)
  std::vector<std::pair<int, int>> exclude;  ///< link pairs never in contact (-1 = world)
  std::vector<ActuatorSpec> actuators;  ///< controls (core/actuation.h)
  /// a candidate pair without a collision function is skipped (Model::skipped_pairs) instead of an
  /// error: for imported models whose shapes touch where bigstep cannot collide them (opt-in)
  bool skip_unsupported_pairs = false;
  std::vector<HeightField> height_fields;  ///< surfaces of the height-field geoms (GeomSpec::hfield)
};

/// Immutable model. Sizes first, then per-link and per-DOF arrays (shape in comments).
class Model {
 public:
  /// Validate `spec`, derive the DOF tables, the geom arrays and the candidate pair list.
  /// Throws InvalidArgument naming the field.
  ///
  /// Legacy contact sources become geoms: spheres[s] -> a sphere on its link (contype 0,
  /// conaffinity 1: it touches planes and explicit geoms but never another contact point, as
  /// today's solvers have no point-point contact); planes[p] -> a world plane with frame origin
  /// offset * n and local +z = n (contype = conaffinity = 1). An existing scene's pair list is
  /// therefore exactly spheres x planes, sphere-major (x = s * n_planes + p, like the solvers).
  ///
  /// Filter: geoms i, j form a candidate pair when
  ///   (contype_i & conaffinity_j) || (contype_j & conaffinity_i),  and
  ///   they are on different links and not both on the world,  and
  ///   neither link is the other's parent (the world counts as nobody's parent here, so a world
  ///   geom does touch a link attached to the world: that is ground contact),  and
  ///   the link pair is not in exclude (either order).
  /// A candidate pair whose types have no pair function (box-box, box-capsule) is an error: filter
  /// it with contype / conaffinity or exclude.
  static Model finalize(const ModelSpec& spec);

  int n_link = 0;  ///< number of links L
  int n_q = 0;     ///< number of generalized coordinates D = dim(theta)

  // links (flat, MuJoCo's body_* habit); link_spec(j) gives one back as a LinkSpec
  std::vector<std::string> link_name;   ///< (n_link)
  std::vector<int> link_parent;         ///< (n_link) parent link, -1 = world
  std::vector<JointType> link_joint;    ///< (n_link) joint to the parent
  std::vector<Mat3> link_R_o;           ///< (n_link x 9) joint frame orientation in the parent frame
  std::vector<Vec3> link_t_o;           ///< (n_link x 3) joint frame origin in the parent frame
  std::vector<Vec3> link_axis;          ///< (n_link x 3) unit joint axis (hinge, prismatic)
  std::vector<double> link_mass;        ///< (n_link) [kg]
  std::vector<Vec3> link_com;           ///< (n_link x 3) centre of mass, link frame
  std::vector<Mat3> link_inertia;       ///< (n_link x 9) inertia about the COM, link axes
  std::vector<Mat3> link_S;             ///< (n_link) second moment int rho x x^T dx, link frame (§2.4)
  std::vector<int> link_dof_adr;        ///< (n_link) first DOF of the link's joint
  std::vector<int> link_dof_num;        ///< (n_link) DOFs of the link's joint

  std::vector<int> dof_link;            ///< (n_q) link whose joint owns DOF k
  std::vector<uint8_t> dof_revolute;    ///< (n_q) 1 revolute, 0 prismatic
  std::vector<Vec3> dof_axis;           ///< (n_q) unit axis in the frame preceding the DOF
  std::vector<std::string> dof_name;    ///< (n_q) "link.joint_part"
  std::vector<int> gimbal_dof;          ///< middle Euler angles (ball / floating), checked each step
  // rotation charts (core/chart.h): the three Euler angles of a ball / floating joint are read in
  // the rollout's chart C (Data::chart), R = R_o C Rz(rz) Ry(ry) Rx(rx), so a floating joint's
  // translation comes first and C sits just before its rz
  int n_chart = 0;
  std::vector<int> chart_link;          ///< (n_chart) link of the ball / floating joint
  std::vector<int> chart_dof;           ///< (n_chart) its rz DOF; ry, rx follow
  std::vector<int> link_chart;          ///< (n_link) chart of link j's joint, -1 = none
  std::vector<uint8_t> dof_anc;         ///< (n_q x n_link) 1 when DOF k moves link j
  std::vector<double> dof_damping;      ///< (n_q) viscous coefficient b_k (joint's damping)
  std::vector<double> dof_armature;     ///< (n_q) armature a_k added to H_kk (joint's armature)
  std::vector<double> dof_stiffness;    ///< (n_q) spring k_k: generalised force -k_k (theta_k - ref_k)
  std::vector<double> dof_springref;    ///< (n_q) spring rest coordinate ref_k (joint's springref)
  std::vector<uint8_t> dof_limited;     ///< (n_q) 1 when the DOF's range is enforced
  std::vector<double> dof_range;        ///< (n_q x 2) [lo, hi]; unused when not limited
  std::vector<double> dof_limit_k;      ///< (n_q) limit penalty coefficient, 0 = contact c_perp

  // joint limits: the limited DOFs in index order (core/joint_limit.h)
  int n_limit = 0;
  std::vector<int> limit_dof;           ///< (n_limit)

  std::vector<ContactSphere> spheres;   ///< as given (read by today's solvers)
  std::vector<Plane> planes;            ///< as given, normals normalized

  // geoms: spec.geoms first, then one sphere geom per spheres[s] (at sphere_geom_adr + s), then
  // one world plane geom per planes[p] (at plane_geom_adr + p)
  int n_geom = 0;
  int sphere_geom_adr = 0;              ///< geom index of spheres[0]
  int plane_geom_adr = 0;               ///< geom index of planes[0]
  std::vector<std::string> geom_name;   ///< (n_geom) spec name, or "contacts[s]" / "terrain[p]"
  std::vector<GeomType> geom_type;      ///< (n_geom)
  std::vector<int> geom_link;           ///< (n_geom) -1 = world
  std::vector<Vec3> geom_pos;           ///< (n_geom x 3) geom origin, link frame
  std::vector<Mat3> geom_R;             ///< (n_geom x 9) geom orientation, link frame
  std::vector<Vec3> geom_size;          ///< (n_geom x 3) per type, see GeomSpec
  std::vector<uint32_t> geom_contype;   ///< (n_geom)
  std::vector<uint32_t> geom_conaffinity;  ///< (n_geom)
  std::vector<int> geom_hfield;         ///< (n_geom) index into hfield for a height field, else -1
  std::vector<HeightField> hfield;      ///< the height fields, as given (core/height_field.h)
  std::vector<std::pair<int, int>> exclude;  ///< link pairs never in contact, as given

  // candidate pairs: every geom pair that passes the filter (see Model::finalize), in geom-index
  // order (i < j, i outer); in each pair geom_link[a] > geom_link[b], so a world geom is b
  int n_pair = 0;
  std::vector<int> pair_geom_a;         ///< (n_pair)
  std::vector<int> pair_geom_b;         ///< (n_pair)
  std::vector<std::pair<int, int>> skipped_pairs;  ///< (geom a, geom b) without a pair function,
                                        ///< skipped on ModelSpec::skip_unsupported_pairs
  int max_contacts = 0;                 ///< sum of pair_max_contacts over the pairs: what collide()
                                        ///< can return at most

  // the plane pairs as point cores against planes (Model::finalize; what the team / CUDA PBFD
  // residual reads, solvers/pbd/pbd_residual_team.h). Every link geom in a pair with a world plane
  // contributes its core points once, in collide()'s order: a sphere its centre (radius r), a
  // capsule its two axis ends (+half first, radius r), a box its 8 corners (radius 0, corner i with
  // the signs of bits 0, 1, 2 of i). A legacy scene gives exactly spheres x planes, sphere-major.
  int n_point = 0;
  std::vector<int> point_link;          ///< (n_point) link of the core point
  std::vector<Vec3> point_pos;          ///< (n_point x 3) core point, link frame
  std::vector<double> point_radius;     ///< (n_point) radius swept around it [m]
  int n_plane = 0;                      ///< world plane geoms, in geom order
  std::vector<Vec3> plane_normal;       ///< (n_plane x 3) unit normal n of n^T y - offset >= 0
  std::vector<double> plane_offset;     ///< (n_plane)
  int n_point_pair = 0;                 ///< (point, plane) rows in pair order, then core order
  std::vector<int> point_pair_point;    ///< (n_point_pair)
  std::vector<int> point_pair_plane;    ///< (n_point_pair)
  int n_body_pair = 0;                  ///< pairs whose b is not a plane (no point-plane form)

  // the body pairs (b not a plane: two links, or a link and a world sphere / capsule) as core
  // segments (Model::finalize; what the team / CUDA PBFD residual reads, pbd_residual_team.h): in
  // pair order, a and b as pair_geom_a / _b. A sphere is a segment of half-length 0 (its centre), a
  // capsule its axis segment; collide()'s pair functions reduce both to the closest core points.
  // A box (against a sphere: the one box pair collide() has) has no segment form (its radius and
  // half-length are left 0): the team residual reads its frame and half-extents from the geom
  // (ModelView body_pair_geom -> geom_R, geom_size; core/box_closest.h). A height field has none
  // either: team_unsupported refuses it.
  std::vector<int> body_pair_pair;      ///< (n_body_pair) index into pair_geom_a / _b
  std::vector<int> body_pair_link;      ///< (n_body_pair x 2) links of a, b (-1 = world)
  std::vector<Vec3> body_pair_pos;      ///< (n_body_pair x 2) segment centres of a, b, link frames
  std::vector<Vec3> body_pair_axis;     ///< (n_body_pair x 2) unit segment axes (geom z), link frames
  std::vector<double> body_pair_size;   ///< (n_body_pair x 4) r_a, h_a, r_b, h_b: radius, half-length
  std::vector<int> body_pair_con_adr;   ///< (n_body_pair) first contact slot of the pair
  int n_body_con = 0;                   ///< contact slots: sum of pair_max_contacts over body pairs

  // actuators (core/actuation.h): n_u controls
  int n_u = 0;
  std::vector<std::string> actuator_name;      ///< (n_u)
  std::vector<ActuatorType> actuator_type;     ///< (n_u)
  std::vector<int> actuator_dof;               ///< (n_u) driven DOF
  std::vector<double> actuator_gear;           ///< (n_u)
  std::vector<uint8_t> actuator_ctrllimited;   ///< (n_u)
  std::vector<double> actuator_ctrlrange;      ///< (n_u x 2)
  std::vector<double> actuator_kp;             ///< (n_u) position gain (0 for motors)
  std::vector<double> actuator_kv;             ///< (n_u) velocity gain (0 for motors)

  Vec3 gravity = Vec3(0, 0, -9.81);
  double total_mass = 0;                ///< sum of link masses [kg]

  /// Link j as a LinkSpec (its joint's range, damping, armature, spring from its first DOF): what
  /// finalize() was given, axis normalised. For printing and for rebuilding a ModelSpec.
  LinkSpec link_spec(int j) const;
  /// Every link_spec(j), parent-before-child.
  std::vector<LinkSpec> link_specs() const;

  /// True when DOF k lies on the root->j path (docs/methods/pbfd.md §2.3 anc(j)).
  bool moves(int k, int j) const { return dof_anc[size_t(k) * n_link + j] != 0; }
  bool has_damping_armature = false;    ///< some DOF has damping or armature (else integrators skip them)
  bool has_stiffness = false;           ///< some DOF has a spring k_k > 0 (else integrators skip it)
  /// Total weight W = m g [N], the scale of the convergence test (docs/methods/pbfd.md §5.1).
  double weight() const { return total_mass * gravity.norm(); }
};

// Per-rollout link mass scales (RolloutParams::link_mass_scale, core/inertia.h): n_link factors,
// nullptr = 1. Link j of the scaled model has mass s_j m_j and inertia s_j I_j (COM unchanged).

/// s_j of a mass-scale array (nullptr = 1).
inline double link_scale(const double* mass_scale, int j) { return mass_scale ? mass_scale[j] : 1.0; }
/// Total mass sum_j s_j m_j [kg] (m.total_mass when mass_scale is null; same order as finalize).
inline double total_mass(const Model& m, const double* mass_scale) {
  if (!mass_scale) return m.total_mass;
  double M = 0;
  for (int j = 0; j < m.n_link; ++j) M += mass_scale[j] * m.link_mass[j];
  return M;
}
/// Total weight W = (sum_j s_j m_j) |g| [N] (m.weight() when mass_scale is null).
inline double weight(const Model& m, const double* mass_scale) { return total_mass(m, mass_scale) * m.gravity.norm(); }

/// Second moment from mass, COM and central inertia: S = 1/2 tr(I) I3 - I + m c c^T (§2.4).
Mat3 second_moment(double m, const Vec3& c, const Mat3& I_c);

}  // namespace bigstep
