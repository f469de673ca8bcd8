// Collision stage: the contacts between the model's geoms at one configuration, and the contact
// Jacobians integrators need. Shaped like MuJoCo's engine_collision_driver.c (a pair list run
// through a table of pair functions, mjCOLLISIONFUNC) and engine_collision_primitive.c (one
// function per pair of shape types), written for bigstep's notation (docs/methods/pbfd.md §2-§4).
//
// Conventions of a Contact (every pair function, both argument orders):
//   n      unit normal in world coordinates pointing from geom b to geom a: moving a along +n
//          separates the pair, so a normal force on a is +f n and on b is -f n;
//   depth  penetration depth > 0 when the geoms overlap, minus the distance between the
//          surfaces when they are apart (reported while depth >= -margin), 0 when touching;
//          the signed distance of docs/methods/pbfd.md §1 is phi = -depth;
//   pos    world point midway between the two surfaces;
//   witness points  the surface point of a inside (or nearest to) b, p_a = pos - depth/2 n, and
//          of b, p_b = pos + depth/2 n, so p_b - p_a = depth n. They are stored in their link's
//          frame (pa_local, pb_local; world frame for a world geom) so an integrator can follow
//          the same material points with point_jacobian.
//   cores  every pair function reduces its shapes to a sphere-swept core: the witness point of
//          a is c_a - r_a n and of b is c_b + r_b n, with c_a, c_b the core points (a sphere's
//          centre, a point of a capsule's axis segment, a box corner or face point, a point on a
//          plane; radius 0 for box and plane) and r_a, r_b the radii. Then
//            depth = r_a + r_b - n . (c_a - c_b),
//          which integrators differentiate with the core points following their links (for a
//          sphere the centre, a fixed material point, so a rolling ball's slip is its centre's).
//   kappa  1 / |c_a - c_b| when n is the direction of the core line (sphere-sphere, sphere- and
//          capsule-capsule, sphere outside a box): the turning rate of n, d n = kappa P_t d(c_a -
//          c_b), P_t = I - n n^T. 0 when n is a fixed face or plane normal.
#pragma once
#include <cstdint>

#include "core/geom.h"
#include "core/height_field.h"
#include "core/kinematics.h"
#include "core/model.h"

namespace bigstep {

/// One contact between geom a and geom b (conventions above).
struct Contact {
  int geom_a = -1, geom_b = -1;
  int link_a = -1, link_b = -1;  ///< links of the geoms, -1 = world
  Vec3 pos = Vec3::Zero();       ///< world point midway between the surfaces
  Vec3 n = Vec3::UnitZ();        ///< world unit normal, from b to a
  double depth = 0;              ///< > 0 penetrating, < 0 separated (within the margin)
  Vec3 pa_local = Vec3::Zero();  ///< witness point on a, link a frame (world for link -1)
  Vec3 pb_local = Vec3::Zero();  ///< witness point on b, link b frame (world for link -1)
  double ra = 0, rb = 0;         ///< core radii: p_a = c_a - ra n, p_b = c_b + rb n
  Vec3 ca_local = Vec3::Zero();  ///< core point of a, link a frame (world for link -1)
  Vec3 cb_local = Vec3::Zero();  ///< core point of b, link b frame (world for link -1)
  double kappa = 0;              ///< 1/|c_a - c_b| when n follows the core line, else 0 (above)
};

/// World witness points of a contact: p_a = pos - depth/2 n, p_b = pos + depth/2 n.
inline Vec3 contact_point_a(const Contact& c) { return c.pos - 0.5 * c.depth * c.n; }
inline Vec3 contact_point_b(const Contact& c) { return c.pos + 0.5 * c.depth * c.n; }

/// A geom placed in the world: what a pair function reads.
struct GeomFrame {
  Vec3 p = Vec3::Zero();         ///< world origin of the geom frame
  Mat3 R = Mat3::Identity();     ///< world orientation of the geom frame
  Vec3 size = Vec3::Zero();      ///< geom_size (GeomSpec)
  const HeightField* hfield = nullptr;  ///< the surface of a height-field geom (else null)
};

/// World frame of geom g at the configuration of `kin` (forward_kinematics done).
GeomFrame geom_frame(const Model& m, const Kinematics& kin, int g);

/// Pair function: writes at most pair_max_contacts(type_a, type_b) contacts between a and b with
/// depth >= -margin into con and returns how many. It fills pos, n, depth, ra, rb and kappa;
/// collide() adds the geom / link indices and the local witness and core points.
using CollisionFunc = int (*)(const GeomFrame& a, const GeomFrame& b, double margin, Contact* con);

/// Sphere (centre c, radius r) against the half-space below plane frame b (normal = b.R z):
/// writes pos, n, depth, ra, rb, kappa of one contact and returns 1 when depth >= -margin, else 0.
/// Shared by the sphere, capsule (its two end spheres) and box (its corners, r = 0) pair functions
/// and by collide()'s sphere-plane fast path (inline: the same rounding on both paths).
inline int sphere_plane(const Vec3& c, double r, const GeomFrame& b, double margin, Contact* con) {
  const Vec3 n = b.R.col(2);
  const double dist = n.dot(c - b.p) - r;  // surface-to-plane distance, < 0 penetrating
  if (dist > margin) return 0;
  con->n = n;
  con->depth = -dist;
  con->pos = c - (r + 0.5 * dist) * n;  // between c - r n (on the sphere) and c's projection
  con->ra = r;
  con->rb = 0;
  con->kappa = 0;  // the plane's normal does not turn as the sphere moves
  return 1;
}

/// Sphere (centre c, radius r) against the height field b (b.hfield): the sphere_plane() contact
/// with the tangent plane at the surface point q closest to c (height_field_closest), so n is the
/// surface normal at q and depth = r - n . (c - q), exact to Newton's tolerance (not a first-order
/// vertical distance). kappa = 0: the scalar kappa cannot hold the surface's two curvatures; the
/// integrators treat n as fixed within an iterate (bumps <= 3 cm over cells of >= 5 cm turn it by
/// little). A flat map gives the plane's contact bit for bit (q = (c_x, c_y, 0), n = +z).
int sphere_hfield(const Vec3& c, double r, const GeomFrame& b, double margin, Contact* con);

/// The dispatch table, indexed [type of a][type of b]; null where no pair function exists
/// (plane-plane, box-box, box-capsule, height field-plane, height field-height field). Each pair function below fills one entry; the entry for
/// the swapped types calls it with the arguments swapped and the normal flipped.
extern const CollisionFunc collision_func[n_geom_type][n_geom_type];

/// Largest pair_max_contacts over the table (box-plane: 8 corners): scratch size of one pair.
inline constexpr int max_pair_contacts = 8;

// Pair functions (collision_primitive.cpp). The geometry of each is stated at its definition.
int collide_sphere_plane(const GeomFrame& a, const GeomFrame& b, double margin, Contact* con);
int collide_capsule_plane(const GeomFrame& a, const GeomFrame& b, double margin, Contact* con);
int collide_box_plane(const GeomFrame& a, const GeomFrame& b, double margin, Contact* con);
int collide_sphere_sphere(const GeomFrame& a, const GeomFrame& b, double margin, Contact* con);
int collide_sphere_capsule(const GeomFrame& a, const GeomFrame& b, double margin, Contact* con);
int collide_capsule_capsule(const GeomFrame& a, const GeomFrame& b, double margin, Contact* con);
int collide_sphere_box(const GeomFrame& a, const GeomFrame& b, double margin, Contact* con);
int collide_sphere_hfield(const GeomFrame& a, const GeomFrame& b, double margin, Contact* con);
int collide_capsule_hfield(const GeomFrame& a, const GeomFrame& b, double margin, Contact* con);
int collide_box_hfield(const GeomFrame& a, const GeomFrame& b, double margin, Contact* con);

/// Collision stage: runs every candidate pair of the model (m.pair_geom_a / pair_geom_b, in
/// order) at the configuration of `kin` (forward_kinematics done) and writes the contacts with
/// depth >= -margin into out[0 .. capacity). Returns the number written. When they do not fit,
/// the rest are dropped and status |= STATUS_CONTACT_OVERFLOW; capacity >= m.max_contacts never
/// overflows. No heap allocation. Throws InvalidArgument for margin < 0 or non-finite,
/// capacity < 0, or a Kinematics of another model.
int collide(const Model& m, const Kinematics& kin, double margin, Contact* out, int capacity,
            uint32_t& status);

/// J (3 x n_q) = d(p_a - p_b)/dtheta = J_a(p_a) - J_b(p_b): the Jacobian of the relative velocity
/// of the witness points, each following its own link (a world geom contributes 0). Common
/// ancestors of both links contribute w_k x (p_a - p_b) (revolute) or 0 (prismatic).
/// p_a, p_b are the material points pa_local, pb_local placed by `kin`, so kin may be another
/// configuration than the one collide() ran at (at that one they are contact_point_a / _b).
void contact_jacobian(const Model& m, const Kinematics& kin, const Contact& c, Eigen::Ref<MatX> J);

/// g (n_q) = d depth / d theta = -J^T n with J from contact_jacobian: the first-order change of
/// the depth as the witness points move with their links (n held fixed; at a smooth contact the
/// motion of the witness points along the surfaces does not change the depth to first order).
/// A normal force f >= 0 on the pair gives generalised forces -f g.
void contact_depth_gradient(const Model& m, const Kinematics& kin, const Contact& c,
                            Eigen::Ref<VecX> g);

}  // namespace bigstep
