// Pair functions of the collision stage and their dispatch table (see collision.h for the
// contact conventions; MuJoCo's engine_collision_primitive.c is the model for the layout).
// Every function writes pos, n (from b to a) and depth, and reports a contact while
// depth >= -margin.
#include <algorithm>
#include <cmath>

#include "core/box_closest.h"
#include "core/collision.h"
#include "core/segment_closest.h"

namespace bigstep {

namespace {

// A unit vector perpendicular to the unit vector u (deterministic; for degenerate normals).
Vec3 any_perpendicular(const Vec3& u) {
  Eigen::Index i_min;
  u.cwiseAbs().minCoeff(&i_min);
  return u.cross(Vec3::Unit(i_min)).normalized();
}

// Sphere (ca, ra) against sphere (cb, rb): the normal joins the centres; n_fallback (unit) is
// used when they coincide and the direction is undefined.
int sphere_sphere(const Vec3& ca, double ra, const Vec3& cb, double rb, const Vec3& n_fallback,
                  double margin, Contact* con) {
  const Vec3 d = ca - cb;
  const double centres = d.norm();
  const double dist = centres - ra - rb;
  if (dist > margin) return 0;
  // below this the direction of d is round-off; any normal gives the same depth there
  con->n = centres > 1e-12 ? Vec3(d / centres) : n_fallback;
  con->depth = -dist;
  con->pos = 0.5 * ((ca - ra * con->n) + (cb + rb * con->n));
  con->ra = ra;
  con->rb = rb;
  con->kappa = centres > 1e-12 ? 1 / centres : 0;  // n = (ca - cb)/|ca - cb| turns with the centres
  return 1;
}

// Point of segment (centre p, unit axis u, half-length h) closest to x.
Vec3 closest_on_segment(const Vec3& p, const Vec3& u, double h, const Vec3& x) {
  return p + std::clamp(u.dot(x - p), -h, h) * u;
}

// Swapped-argument table entry: f(b, a) gives the normal from a to b; flip it. pos and depth do
// not depend on the order.
template <CollisionFunc f>
int mirrored(const GeomFrame& a, const GeomFrame& b, double margin, Contact* con) {
  const int n = f(b, a, margin, con);
  for (int i = 0; i < n; ++i) {
    con[i].n = -con[i].n;
    std::swap(con[i].ra, con[i].rb);
  }
  return n;
}

}  // namespace

// sphere a, plane b: the sphere centre's height above the plane minus the radius. 1 contact.
int collide_sphere_plane(const GeomFrame& a, const GeomFrame& b, double margin, Contact* con) {
  return sphere_plane(a.p, a.size[0], b, margin, con);
}

namespace {

// A sphere-swept point against geom b: sphere_plane or sphere_hfield (collision.h).
using SphereContact = int (*)(const Vec3& c, double r, const GeomFrame& b, double margin, Contact* con);

// capsule a against b by f: the two end spheres of its axis segment (+half first). <= 2 contacts.
template <SphereContact f>
int capsule_ends(const GeomFrame& a, const GeomFrame& b, double margin, Contact* con) {
  const Vec3 half = a.size[1] * a.R.col(2);
  int n = f(a.p + half, a.size[0], b, margin, con);
  n += f(a.p - half, a.size[0], b, margin, con + n);
  return n;
}

// box a against b by f: each of the 8 corners as a point (radius 0), corner i at
// a.p + a.R (+-hx, +-hy, +-hz) with the signs from bits 0, 1, 2 of i (- when clear). <= 8 contacts.
template <SphereContact f>
int box_corners(const GeomFrame& a, const GeomFrame& b, double margin, Contact* con) {
  int n = 0;
  for (int i = 0; i < 8; ++i) {
    const Vec3 s((i & 1) ? 1.0 : -1.0, (i & 2) ? 1.0 : -1.0, (i & 4) ? 1.0 : -1.0);
    n += f(a.p + a.R * s.cwiseProduct(a.size), 0.0, b, margin, con + n);
  }
  return n;
}

}  // namespace

// capsule a, plane b: the two end spheres of the axis segment against the plane. <= 2 contacts
// (the deepest point of a capsule is always at an end; both ends when it lies flat).
int collide_capsule_plane(const GeomFrame& a, const GeomFrame& b, double margin, Contact* con) {
  return capsule_ends<sphere_plane>(a, b, margin, con);
}

// box a, plane b: each of the 8 corners as a point against the plane. <= 8 contacts. All corners
// within the margin are reported: a face down gives 4, an edge 2, a corner 1.
int collide_box_plane(const GeomFrame& a, const GeomFrame& b, double margin, Contact* con) {
  return box_corners<sphere_plane>(a, b, margin, con);
}

// sphere a, sphere b: distance of the centres minus both radii, normal along the centre line
// (world +z when the centres coincide). 1 contact.
int collide_sphere_sphere(const GeomFrame& a, const GeomFrame& b, double margin, Contact* con) {
  return sphere_sphere(a.p, a.size[0], b.p, b.size[0], Vec3::UnitZ(), margin, con);
}

// sphere a, capsule b: sphere against the sphere of radius r_b at the point of b's axis segment
// closest to a's centre (a normal perpendicular to the axis when the centre is on it). 1 contact.
int collide_sphere_capsule(const GeomFrame& a, const GeomFrame& b, double margin, Contact* con) {
  const Vec3 u = b.R.col(2);
  const Vec3 q = closest_on_segment(b.p, u, b.size[1], a.p);
  return sphere_sphere(a.p, a.size[0], q, b.size[0], any_perpendicular(u), margin, con);
}

// capsule a, capsule b: spheres at the closest points of the two axis segments. <= 2 contacts:
// 1 in general; 2 when the axes are parallel and overlap along a length, where the closest
// points form a segment: its two ends are the contacts (a line contact).
int collide_capsule_capsule(const GeomFrame& a, const GeomFrame& b, double margin, Contact* con) {
  const Vec3 ua = a.R.col(2), ub = b.R.col(2), r = a.p - b.p;
  const double ha = a.size[1], hb = b.size[1], ra = a.size[0], rb = b.size[0];
  const double cab = ua.dot(ub), c = ua.dot(r), f = ub.dot(r);
  const double sin2 = 1 - cab * cab;
  // axes parallel (angle below ~1e-6 rad): the closest points form an interval, or are ends
  if (sin2 < 1e-12) {
    // the overlap [lo, hi] of b's segment with a's along a's axis (core/segment_closest.h)
    double s_mid, lo, hi;
    segment_overlap(cab, c, ha, hb, s_mid, lo, hi);
    // offset of b's axis from a's, perpendicular to both; a coaxial pair takes any perpendicular
    const Vec3 off = -r + c * ua;
    const Vec3 n_fallback = off.norm() > 1e-12 ? Vec3(-off.normalized()) : any_perpendicular(ua);
    if (hi >= lo) {
      int n = 0;
      for (const double s : {lo, hi}) {
        if (n == 1 && hi - lo <= 1e-12 * (ha + hb)) break;  // overlap of one point: one contact
        const Vec3 xa = a.p + s * ua;
        n += sphere_sphere(xa, ra, closest_on_segment(b.p, ub, hb, xa), rb, n_fallback, margin,
                           con + n);
      }
      return n;
    }
    // no overlap: a's end facing b against b's end facing a
    const double s_a = s_mid > 0 ? ha : -ha;
    const Vec3 xa = a.p + s_a * ua;
    return sphere_sphere(xa, ra, closest_on_segment(b.p, ub, hb, xa), rb, n_fallback, margin, con);
  }
  // general position: the closest points a.p + s ua, b.p + t ub (core/segment_closest.h)
  double s, t;
  segment_closest(cab, c, f, sin2, ha, hb, s, t);
  // crossing axes (closest points coincide): the normal is the common perpendicular
  Vec3 n_fallback = ua.cross(ub).normalized();
  if (n_fallback.dot(r) < 0) n_fallback = -n_fallback;
  return sphere_sphere(a.p + s * ua, ra, b.p + t * ub, rb, n_fallback, margin, con);
}

// sphere a, box b: with a's centre outside the box, against the closest point of the box (normal
// from it to the centre); with the centre inside, pushed out through the nearest face (normal =
// that face's outward normal, depth = radius + distance to the face). 1 contact.
int collide_sphere_box(const GeomFrame& a, const GeomFrame& b, double margin, Contact* con) {
  const double r = a.size[0];
  const Vec3 c = b.R.transpose() * (a.p - b.p);  // centre in the box frame
  Vec3 q;
  if (box_closest(c, b.size, q)) {  // (core/box_closest.h, shared with the team residual)
    // outside: the closest point q is on the surface
    const Vec3 d = c - q;
    const double dist = d.norm() - r;
    if (dist > margin) return 0;
    con->n = b.R * (d / d.norm());
    con->depth = -dist;
    con->pos = b.R * (q + 0.5 * dist * (d / d.norm())) + b.p;
    // (midway between q and the sphere surface point c - r d/|d|)
    con->ra = r;
    con->rb = 0;
    con->kappa = 1 / d.norm();  // n joins the closest box point and the centre
    return 1;
  }
  // inside (or on the surface): the face with the smallest distance h_i - |c_i|
  double to_face, sign;
  const int i = box_nearest_face(c, b.size, to_face, sign);
  Vec3 n_local = Vec3::Zero();
  n_local[i] = sign;
  con->n = b.R * n_local;
  con->depth = r + to_face;
  con->pos = a.p + 0.5 * (to_face - r) * con->n;  // between c - r n and the face point c + to_face n
  con->ra = r;
  con->rb = 0;
  con->kappa = 0;  // a face normal
  return 1;
}

int sphere_hfield(const Vec3& c, double r, const GeomFrame& b, double margin, Contact* con) {
  const HeightField& hf = *b.hfield;
  const Vec3 c_local = b.R.transpose() * (c - b.p);
  // above every bump by more than r + margin (h <= z_max): no contact, no Newton
  if (c_local.z() - r > hf.z_max + margin) return 0;
  Vec3 n_local;
  const Vec3 q_local = height_field_closest(hf, c_local, n_local);
  // the tangent plane at q as a plane frame: its normal n, through q (sphere_plane reads p, R z)
  GeomFrame tangent;
  tangent.p = b.R * q_local + b.p;
  tangent.R.col(2) = b.R * n_local;
  return sphere_plane(c, r, tangent, margin, con);
}

// sphere a, height field b: the sphere's centre against the surface (sphere_hfield). 1 contact.
int collide_sphere_hfield(const GeomFrame& a, const GeomFrame& b, double margin, Contact* con) {
  return sphere_hfield(a.p, a.size[0], b, margin, con);
}

// capsule a, height field b: the two end spheres of the axis segment, as against a plane. <= 2
// contacts. [approximation] The deepest point of a capsule over a curved surface can lie between
// its ends (a capsule lying across a bump); the ends are what a plane needs and what the point
// feet of the ID scenes use. A capsule longer than the bumps' spacing misses the bump under it.
int collide_capsule_hfield(const GeomFrame& a, const GeomFrame& b, double margin, Contact* con) {
  return capsule_ends<sphere_hfield>(a, b, margin, con);
}

// box a, height field b: each of the 8 corners as a point (collide_box_plane's order). <= 8
// contacts. [approximation] as for the capsule: a bump under a face's interior is not seen.
int collide_box_hfield(const GeomFrame& a, const GeomFrame& b, double margin, Contact* con) {
  return box_corners<sphere_hfield>(a, b, margin, con);
}

// The table [type a][type b]; rows and columns in GeomType order: plane, sphere, capsule, box,
// height field.
const CollisionFunc collision_func[n_geom_type][n_geom_type] = {
    {nullptr, mirrored<collide_sphere_plane>, mirrored<collide_capsule_plane>,
     mirrored<collide_box_plane>, nullptr},
    {collide_sphere_plane, collide_sphere_sphere, collide_sphere_capsule, collide_sphere_box,
     collide_sphere_hfield},
    {collide_capsule_plane, mirrored<collide_sphere_capsule>, collide_capsule_capsule, nullptr,
     collide_capsule_hfield},
    {collide_box_plane, mirrored<collide_sphere_box>, nullptr, nullptr, collide_box_hfield},
    {nullptr, mirrored<collide_sphere_hfield>, mirrored<collide_capsule_hfield>,
     mirrored<collide_box_hfield>, nullptr},
};

int pair_max_contacts(GeomType a, GeomType b) {
  // most contacts of each table entry; symmetric, 0 exactly where the table is null
  static constexpr int max_contacts[n_geom_type][n_geom_type] = {
      {0, 1, 2, 8, 0},
      {1, 1, 1, 1, 1},
      {2, 1, 2, 0, 2},
      {8, 1, 0, 0, 8},
      {0, 1, 2, 8, 0},
  };
  return max_contacts[int(a)][int(b)];
}

}  // namespace bigstep
