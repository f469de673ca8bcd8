// Collision stage (core/collision.h): every pair function against analytic contacts, in both
// argument orders through the table; the driver on models (legacy spheres / planes equal the
// solvers' sphere_plane_phi, overflow, no allocation); contact Jacobians against point_jacobian
// and central differences of the depth on two moving links.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "core/collision.h"
#include "solvers/terms/contact_terms.h"
#include "tests/support/geom_scenes.h"
#include "tests/support/malloc_guard.h"

using namespace bigstep;
using namespace bigstep::test;

namespace {

// An analytic case is written in a convenient frame and checked after a rigid motion (Q, t) of
// the whole scene, so no axis-aligned shortcut can pass.
struct Rigid {
  Mat3 Q = Mat3::Identity();
  Vec3 t = Vec3::Zero();
  Vec3 point(const Vec3& x) const { return Q * x + t; }
  Vec3 dir(const Vec3& v) const { return Q * v; }
  GeomFrame frame(const Vec3& p, const Mat3& R, const Vec3& size) const {
    return {point(p), Q * R, size};
  }
};

Rigid random_rigid(uint32_t seed) {
  Rng rng(seed);
  return {random_rotation(rng), uniform_vec(rng, -1, 1)};
}

// Rotation taking local +z to the unit vector n (for placing capsule axes and plane normals).

struct Expected {
  Vec3 pos, n;
  double depth;
};

// Runs table[ta][tb](a, b) and table[tb][ta](b, a); the first must give `want` in order, the
// swapped call the same contacts (in any order: a parallel capsule pair walks the other axis)
// with the normal flipped. 1e-12: a few roundings of O(1) coordinates.
void check_pair(GeomType ta, const GeomFrame& a, GeomType tb, const GeomFrame& b, double margin,
                const std::vector<Expected>& want) {
  Contact ab[max_pair_contacts], ba[max_pair_contacts];
  const CollisionFunc f_ab = collision_func[int(ta)][int(tb)], f_ba = collision_func[int(tb)][int(ta)];
  REQUIRE(f_ab != nullptr);
  REQUIRE(f_ba != nullptr);
  const int n_ab = f_ab(a, b, margin, ab), n_ba = f_ba(b, a, margin, ba);
  INFO(geom_type_name(ta) << "-" << geom_type_name(tb));
  REQUIRE(n_ab == int(want.size()));
  REQUIRE(n_ba == int(want.size()));
  CHECK(n_ab <= pair_max_contacts(ta, tb));
  const double eps = tol(1e-12);
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("contact " << i << " depth " << ab[i].depth << " n " << ab[i].n.transpose() << " pos "
                    << ab[i].pos.transpose());
    CHECK(std::abs(ab[i].depth - want[i].depth) < eps);
    CHECK((ab[i].n - want[i].n).norm() < eps);
    CHECK((ab[i].pos - want[i].pos).norm() < eps);
    CHECK(std::abs(ab[i].n.norm() - 1) < eps);
    int j = 0;  // the swapped call's contact at the same point
    for (int k = 1; k < n_ba; ++k)
      if ((ba[k].pos - want[i].pos).norm() < (ba[j].pos - want[i].pos).norm()) j = k;
    CHECK(std::abs(ba[j].depth - want[i].depth) < eps);
    CHECK((ba[j].n + want[i].n).norm() < eps);
    CHECK((ba[j].pos - want[i].pos).norm() < eps);
  }
}

const double kR = 0.1;  // a radius used by several cases [m]

}  // namespace

// ---------------------------------------------------------------------------------------
// The table
// ---------------------------------------------------------------------------------------

TEST_CASE("collision: the table is null exactly where pair_max_contacts is 0", "[collision]") {
  for (int a = 0; a < n_geom_type; ++a)
    for (int b = 0; b < n_geom_type; ++b) {
      const GeomType ta = GeomType(a), tb = GeomType(b);
      INFO(geom_type_name(ta) << "-" << geom_type_name(tb));
      CHECK((collision_func[a][b] == nullptr) == (pair_max_contacts(ta, tb) == 0));
      CHECK(pair_max_contacts(ta, tb) == pair_max_contacts(tb, ta));
      CHECK(pair_max_contacts(ta, tb) <= max_pair_contacts);
    }
  // what exists: every pair with a plane or a sphere, capsule-capsule; not box-box / box-capsule
  CHECK(collision_func[int(GeomType::Plane)][int(GeomType::Plane)] == nullptr);
  CHECK(collision_func[int(GeomType::Box)][int(GeomType::Box)] == nullptr);
  CHECK(collision_func[int(GeomType::Box)][int(GeomType::Capsule)] == nullptr);
  CHECK(pair_max_contacts(GeomType::Box, GeomType::Plane) == 8);
  CHECK(pair_max_contacts(GeomType::Capsule, GeomType::Capsule) == 2);
}

// ---------------------------------------------------------------------------------------
// Pair functions against analytic contacts (each after a random rigid motion)
// ---------------------------------------------------------------------------------------

TEST_CASE("collision: sphere-plane depth, normal and point", "[collision]") {
  const Rigid X = random_rigid(11);
  const Vec3 n = Vec3(0.3, -0.2, 1).normalized();
  const GeomFrame plane = X.frame(Vec3(0.1, 0.2, 0.3), z_to(n), Vec3::Zero());
  // centre at height h above the plane point, shifted along the plane
  const Vec3 along = n.cross(Vec3::UnitX()).normalized();
  auto sphere_at = [&](double h) {
    return X.frame(Vec3(0.1, 0.2, 0.3) + 0.4 * along + h * n, Mat3::Identity(), Vec3(kR, 0, 0));
  };
  auto want = [&](double h) {  // depth r - h; pos midway between c - r n and the projection
    const Vec3 c = Vec3(0.1, 0.2, 0.3) + 0.4 * along + h * n;
    return Expected{X.point(c - 0.5 * (kR + h) * n), X.dir(n), kR - h};
  };
  check_pair(GeomType::Sphere, sphere_at(0.06), GeomType::Plane, plane, 0, {want(0.06)});
  check_pair(GeomType::Sphere, sphere_at(0.12), GeomType::Plane, plane, 0.03, {want(0.12)});
  check_pair(GeomType::Sphere, sphere_at(0.12), GeomType::Plane, plane, 0.01, {});
  check_pair(GeomType::Sphere, sphere_at(-0.2), GeomType::Plane, plane, 0, {want(-0.2)});  // below
  // a contact point (radius 0)
  GeomFrame point = sphere_at(-0.01);
  point.size[0] = 0;
  check_pair(GeomType::Sphere, point, GeomType::Plane, plane, 0,
             {{point.p + 0.5 * 0.01 * X.dir(n), X.dir(n), 0.01}});
  // exactly touching (dyadic numbers, axis-aligned: no rounding): reported with depth 0
  const GeomFrame ground{Vec3(0, 0, 0.25), Mat3::Identity(), Vec3::Zero()};
  check_pair(GeomType::Sphere, {Vec3(1, 2, 0.75), Mat3::Identity(), Vec3(0.5, 0, 0)}, GeomType::Plane,
             ground, 0, {{Vec3(1, 2, 0.25), Vec3::UnitZ(), 0.0}});
}

TEST_CASE("collision: capsule-plane gives its end spheres", "[collision]") {
  const Rigid X = random_rigid(12);
  const GeomFrame plane = X.frame(Vec3::Zero(), Mat3::Identity(), Vec3::Zero());  // z <= 0
  const double h = 0.3;  // half-length
  // lying flat along x at centre height 0.07: both ends 0.03 deep
  const GeomFrame flat = X.frame(Vec3(0.2, 0.1, 0.07), z_to(Vec3::UnitX()), Vec3(kR, h, 0));
  check_pair(GeomType::Capsule, flat, GeomType::Plane, plane, 0,
             {{X.point(Vec3(0.5, 0.1, -0.015)), X.dir(Vec3::UnitZ()), 0.03},
              {X.point(Vec3(-0.1, 0.1, -0.015)), X.dir(Vec3::UnitZ()), 0.03}});
  // tilted by 30 degrees: only the lower end (height 0.07 - h sin 30) touches
  const Vec3 u(std::cos(M_PI / 6), 0, std::sin(M_PI / 6));
  const Vec3 c(0, 0, 0.2);
  const GeomFrame tilted = X.frame(c, z_to(u), Vec3(kR, h, 0));
  const Vec3 low = c - h * u;  // height 0.05: depth 0.05
  check_pair(GeomType::Capsule, tilted, GeomType::Plane, plane, 0,
             {{X.point(Vec3(low.x(), low.y(), -0.025)), X.dir(Vec3::UnitZ()), 0.05}});
  // with a margin that reaches the upper end (height 0.35 - 0.1 = 0.25 away) both are reported
  check_pair(GeomType::Capsule, tilted, GeomType::Plane, plane, 0.3,
             {{X.point(Vec3(low.x() + 2 * h * u.x(), 0, 0.125)), X.dir(Vec3::UnitZ()), -0.25},
              {X.point(Vec3(low.x(), low.y(), -0.025)), X.dir(Vec3::UnitZ()), 0.05}});
}

TEST_CASE("collision: box-plane reports the corners of a tilted box (1, 2, 4)", "[collision]") {
  const Rigid X = random_rigid(13);
  const Vec3 n = Vec3(-0.2, 0.4, 1).normalized();
  const Mat3 Rp = z_to(n);  // plane frame: corners below its z = 0 are in contact
  const GeomFrame plane = X.frame(Vec3(0.3, 0, -0.1), Rp, Vec3::Zero());
  const double e = 0.2, delta = 0.01;  // cube half-extent, depth of the lowest corners
  // a box given in the plane frame (rotation Rrel, centre height H) -> world frame
  auto box = [&](const Mat3& Rrel, double H) {
    return X.frame(Vec3(0.3, 0, -0.1) + Rp * Vec3(0.05, -0.1, H), Rp * Rrel, Vec3(e, e, e));
  };
  // expected contacts: the corners (bit order of collide_box_plane) lower than the margin
  auto corners = [&](const Mat3& Rrel, double H, double margin) {
    std::vector<Expected> out;
    for (int i = 0; i < 8; ++i) {
      const Vec3 s((i & 1) ? e : -e, (i & 2) ? e : -e, (i & 4) ? e : -e);
      const Vec3 x = Vec3(0.05, -0.1, H) + Rrel * s;  // plane frame
      if (x.z() > margin) continue;
      const Vec3 mid(x.x(), x.y(), 0.5 * x.z());
      out.push_back({X.point(Vec3(0.3, 0, -0.1) + Rp * mid), X.dir(n), -x.z()});
    }
    return out;
  };
  const double yaw = 0.4;
  SECTION("a corner down: the diagonal (1,1,1) points into the plane") {
    const Mat3 Rrel = Eigen::Quaterniond::FromTwoVectors(Vec3(1, 1, 1), -Vec3::UnitZ()).toRotationMatrix();
    const double H = e * std::sqrt(3.0) - delta;  // next corners at H - e/sqrt(3) > 0
    const auto want = corners(Rrel, H, 0);
    REQUIRE(want.size() == 1);
    CHECK(want[0].depth == Approx(delta));
    check_pair(GeomType::Box, box(Rrel, H), GeomType::Plane, plane, 0, want);
  }
  SECTION("an edge down: rotated 45 degrees about x (and yawed)") {
    const Mat3 Rrel = axis_rotation(Vec3::UnitZ(), yaw) * axis_rotation(Vec3::UnitX(), M_PI / 4);
    const double H = e * std::sqrt(2.0) - delta;
    const auto want = corners(Rrel, H, 0);
    REQUIRE(want.size() == 2);
    check_pair(GeomType::Box, box(Rrel, H), GeomType::Plane, plane, 0, want);
    // the margin reaches the middle corners (height H) too
    check_pair(GeomType::Box, box(Rrel, H), GeomType::Plane, plane, H + 1e-9, corners(Rrel, H, H + 1e-9));
    CHECK(corners(Rrel, H, H + 1e-9).size() == 6);  // 2 lowest + 4 at height H
  }
  SECTION("a face down (yawed)") {
    const Mat3 Rrel = axis_rotation(Vec3::UnitZ(), yaw);
    const auto want = corners(Rrel, e - delta, 0);
    REQUIRE(want.size() == 4);
    for (const Expected& c : want) CHECK(c.depth == Approx(delta));
    check_pair(GeomType::Box, box(Rrel, e - delta), GeomType::Plane, plane, 0, want);
    // sunk below its own height: all 8 corners
    check_pair(GeomType::Box, box(Rrel, -e - delta), GeomType::Plane, plane, 0,
               corners(Rrel, -e - delta, 0));
  }
}

TEST_CASE("collision: sphere-sphere along the centre line", "[collision]") {
  const Rigid X = random_rigid(14);
  const double ra = 0.15, rb = 0.05;
  const Vec3 u = Vec3(1, -2, 0.5).normalized(), cb(0.1, 0.2, 0.3);
  auto at = [&](double D) { return X.frame(cb + D * u, Mat3::Identity(), Vec3(ra, 0, 0)); };
  const GeomFrame b = X.frame(cb, Mat3::Identity(), Vec3(rb, 0, 0));
  auto want = [&](double D) {  // midway between cb + D u - ra u and cb + rb u
    return Expected{X.point(cb + 0.5 * (D - ra + rb) * u), X.dir(u), ra + rb - D};
  };
  check_pair(GeomType::Sphere, at(0.17), GeomType::Sphere, b, 0, {want(0.17)});
  check_pair(GeomType::Sphere, at(0.25), GeomType::Sphere, b, 0.06, {want(0.25)});
  check_pair(GeomType::Sphere, at(0.25), GeomType::Sphere, b, 0.04, {});
  // exactly touching (dyadic numbers, no rounding): reported with depth 0
  check_pair(GeomType::Sphere, {Vec3(0.5, 0, 0), Mat3::Identity(), Vec3(0.375, 0, 0)}, GeomType::Sphere,
             {Vec3::Zero(), Mat3::Identity(), Vec3(0.125, 0, 0)}, 0,
             {{Vec3(0.125, 0, 0), Vec3::UnitX(), 0.0}});
  // coincident centres: the documented fallback normal world +z, depth ra + rb
  Contact c[1];
  REQUIRE(collide_sphere_sphere(at(0), b, 0, c) == 1);
  CHECK(c[0].n == Vec3::UnitZ());
  CHECK(c[0].depth == Approx(ra + rb));
}

TEST_CASE("collision: sphere-capsule against the closest axis point", "[collision]") {
  const Rigid X = random_rigid(15);
  const double rs = 0.05, rc = 0.1, h = 0.4;
  const GeomFrame cap = X.frame(Vec3::Zero(), z_to(Vec3::UnitX()), Vec3(rc, h, 0));  // axis x
  auto sphere = [&](const Vec3& c) { return X.frame(c, Mat3::Identity(), Vec3(rs, 0, 0)); };
  // beside the middle: closest axis point (0.1, 0, 0), normal +y, depth 0.15 - 0.12
  check_pair(GeomType::Sphere, sphere(Vec3(0.1, 0.12, 0)), GeomType::Capsule, cap, 0,
             {{X.point(Vec3(0.1, 0.5 * (0.12 - rs + rc), 0)), X.dir(Vec3::UnitY()), 0.03}});
  // beyond the end cap: against the end point (0.4, 0, 0) along (3, 0, 4) / 5 at distance 0.125
  const Vec3 u(0.6, 0, 0.8), end(h, 0, 0);
  check_pair(GeomType::Sphere, sphere(end + 0.125 * u), GeomType::Capsule, cap, 0,
             {{X.point(end + 0.5 * (0.125 - rs + rc) * u), X.dir(u), 0.025}});
  // separated within the margin
  check_pair(GeomType::Sphere, sphere(Vec3(-0.2, 0, -0.2)), GeomType::Capsule, cap, 0.06,
             {{X.point(Vec3(-0.2, 0, -0.5 * (0.2 - rs + rc))), X.dir(-Vec3::UnitZ()), -0.05}});
  check_pair(GeomType::Sphere, sphere(Vec3(-0.2, 0, -0.2)), GeomType::Capsule, cap, 0.04, {});
  // centre on the axis: a normal perpendicular to the axis, depth rs + rc
  Contact c[1];
  REQUIRE(collide_sphere_capsule(sphere(Vec3(0.2, 0, 0)), cap, 0, c) == 1);
  CHECK(std::abs(c[0].n.dot(X.dir(Vec3::UnitX()))) < 1e-12);
  CHECK(c[0].n.norm() == Approx(1));
  CHECK(c[0].depth == Approx(rs + rc));
}

TEST_CASE("collision: capsule-capsule crossing, parallel and degenerate parallel", "[collision]") {
  const Rigid X = random_rigid(16);
  const double ra = 0.1, rb = 0.08;
  auto cap = [&](const Vec3& p, const Vec3& axis, double r, double h) {
    return X.frame(p, z_to(axis), Vec3(r, h, 0));
  };
  const Vec3 ex = Vec3::UnitX(), ey = Vec3::UnitY(), ez = Vec3::UnitZ();
  SECTION("crossing axes: one contact on the common perpendicular") {
    // a along x at height 0.15 (offset along its axis), b along y: closest points (0,0,.15), 0
    const GeomFrame a = cap(Vec3(0.1, 0, 0.15), ex, ra, 0.3), b = cap(Vec3(0, -0.2, 0), ey, rb, 0.4);
    check_pair(GeomType::Capsule, a, GeomType::Capsule, b, 0,
               {{X.point(Vec3(0, 0, 0.5 * (0.15 - ra + rb))), X.dir(ez), ra + rb - 0.15}});
    // skewed (60 degrees) and clamped: b's end (0.4 along b) is nearest to a
    const Vec3 ub(0.5, std::sqrt(0.75), 0);
    const GeomFrame b2 = cap(Vec3(0.1, 0, 0) - 0.6 * ub, ub, rb, 0.2);  // b spans -0.8..-0.4 along ub
    const Vec3 pb = Vec3(0.1, 0, 0) - 0.4 * ub;  // b's upper end; a's closest point is above it?
    // a's axis point closest to pb: (pb.x, 0, 0.15) lies inside a (|pb.x - 0.1| < 0.3)
    const Vec3 pa(pb.x(), 0, 0.15), d = pa - pb;
    const Vec3 nd = d.normalized();
    check_pair(GeomType::Capsule, a, GeomType::Capsule, b2, 0.5,
               {{X.point(0.5 * ((pa - ra * nd) + (pb + rb * nd))), X.dir(nd), ra + rb - d.norm()}});
  }
  SECTION("parallel, overlapping: two contacts at the ends of the overlap") {
    // a: x in [-0.4, 0.6] at height 0.15; b: x in [-0.3, 0.3] at 0 (antiparallel axis)
    const GeomFrame a = cap(Vec3(0.1, 0, 0.15), ex, ra, 0.5), b = cap(Vec3::Zero(), -ex, rb, 0.3);
    const double z = 0.5 * (0.15 - ra + rb), depth = ra + rb - 0.15;
    check_pair(GeomType::Capsule, a, GeomType::Capsule, b, 0,
               {{X.point(Vec3(-0.3, 0, z)), X.dir(ez), depth}, {X.point(Vec3(0.3, 0, z)), X.dir(ez), depth}});
  }
  SECTION("parallel, touching end to end over one point of overlap: one contact") {
    const GeomFrame a = cap(Vec3(0.7, 0, 0.1), ex, ra, 0.4), b = cap(Vec3::Zero(), ex, rb, 0.3);
    check_pair(GeomType::Capsule, a, GeomType::Capsule, b, 0,
               {{X.point(Vec3(0.3, 0, 0.5 * (0.1 - ra + rb))), X.dir(ez), ra + rb - 0.1}});
  }
  SECTION("degenerate parallel: collinear, end to end") {
    // a: x in [0.6, 1.4], b: x in [-0.5, 0.5]: ends 0.1 apart along the common axis
    const GeomFrame a = cap(Vec3(1, 0, 0), ex, ra, 0.4), b = cap(Vec3::Zero(), ex, rb, 0.5);
    check_pair(GeomType::Capsule, a, GeomType::Capsule, b, 0,
               {{X.point(Vec3(0.5 * ((0.6 - ra) + (0.5 + rb)), 0, 0)), X.dir(ex), ra + rb - 0.1}});
    check_pair(GeomType::Capsule, b, GeomType::Capsule, a, 0,
               {{X.point(Vec3(0.5 * ((0.6 - ra) + (0.5 + rb)), 0, 0)), X.dir(-ex), ra + rb - 0.1}});
  }
  SECTION("degenerate parallel: coaxial and overlapping") {
    const GeomFrame a = cap(Vec3(0.2, 0, 0), ex, ra, 0.4), b = cap(Vec3::Zero(), ex, rb, 0.3);
    Contact c[2];
    REQUIRE(collide_capsule_capsule(a, b, 0, c) == 2);
    for (const Contact& k : c) {
      CHECK(std::abs(k.n.dot(X.dir(ex))) < 1e-12);  // any normal across the axis
      CHECK(k.n.norm() == Approx(1));
      CHECK(k.depth == Approx(ra + rb));
    }
    CHECK(c[0].pos.isApprox(X.point(Vec3(-0.2, 0, 0)) + 0.5 * (rb - ra) * c[0].n, 1e-12));
    CHECK(c[1].pos.isApprox(X.point(Vec3(0.3, 0, 0)) + 0.5 * (rb - ra) * c[1].n, 1e-12));
  }
}

// The closest distance of two segments by nested ternary searches (the squared distance is
// convex in s for fixed t, and its minimum over s is convex in t): an oracle independent of the
// clamping rule in collide_capsule_capsule.
static double segment_distance(const GeomFrame& a, const GeomFrame& b) {
  auto along = [](const GeomFrame& g, double s) { return Vec3(g.p + s * g.R.col(2)); };
  auto min_over = [](double lo, double hi, auto&& f) {
    for (int it = 0; it < 100; ++it) {  // the interval shrinks to (2/3)^100 ~ 2e-18 of its length
      const double m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
      if (f(m1) < f(m2))
        hi = m2;
      else
        lo = m1;
    }
    return f(0.5 * (lo + hi));
  };
  return std::sqrt(min_over(-b.size[1], b.size[1], [&](double t) {
    return min_over(-a.size[1], a.size[1], [&](double s) { return (along(a, s) - along(b, t)).squaredNorm(); });
  }));
}

static double distance_to_axis(const GeomFrame& g, const Vec3& x) {
  const Vec3 u = g.R.col(2);
  return (x - g.p - std::clamp(u.dot(x - g.p), -g.size[1], g.size[1]) * u).norm();
}

TEST_CASE("collision: capsule-capsule depth equals radii minus the segment distance (random)",
          "[collision]") {
  Rng rng(17);
  for (int trial = 0; trial < 200; ++trial) {
    const GeomFrame a{uniform_vec(rng, -0.3, 0.3), random_rotation(rng),
                      Vec3(uniform(rng, 0.02, 0.2), uniform(rng, 0.05, 0.5), 0)};
    const GeomFrame b{uniform_vec(rng, -0.3, 0.3), random_rotation(rng),
                      Vec3(uniform(rng, 0.02, 0.2), uniform(rng, 0.05, 0.5), 0)};
    Contact c[2];
    const int n = collide_capsule_capsule(a, b, 10, c);  // margin 10: always reported
    INFO("trial " << trial);
    REQUIRE(n == 1);
    // 1e-9: the ternary searches stop at ~1e-12 in s, t; the distance is flat at its minimum
    CHECK(c[0].depth == Approx(a.size[0] + b.size[0] - segment_distance(a, b)).margin(tol(1e-9)));
    // the witness points lie on the capsule surfaces: distance r from the axis segment
    CHECK(distance_to_axis(a, contact_point_a(c[0])) == Approx(a.size[0]).margin(1e-12));
    CHECK(distance_to_axis(b, contact_point_b(c[0])) == Approx(b.size[0]).margin(1e-12));
  }
}

TEST_CASE("collision: sphere-box outside a face, an edge, a corner, and inside", "[collision]") {
  const Rigid X = random_rigid(18);
  const Vec3 h(0.3, 0.2, 0.1);
  const Mat3 Rb = axis_rotation(Vec3(1, 2, 3).normalized(), 0.7);  // box frame
  const Vec3 pb(0.1, -0.1, 0.2);
  const GeomFrame box = X.frame(pb, Rb, h);
  const double r = 0.08;
  // centre c and the expected contact, in the box frame
  auto check = [&](const Vec3& c, const Vec3& n_local, double depth, double margin = 0) {
    const Vec3 surface_b = c + (depth - r) * n_local;  // on the box; c - r n is on the sphere
    const Vec3 mid = 0.5 * ((c - r * n_local) + surface_b);
    check_pair(GeomType::Sphere, X.frame(pb + Rb * c, Mat3::Identity(), Vec3(r, 0, 0)), GeomType::Box,
               box, margin, {{X.point(pb + Rb * mid), X.dir(Rb * n_local), depth}});
  };
  check(Vec3(0.1, -0.05, 0.15), Vec3::UnitZ(), r - 0.05);                       // face +z
  const Vec3 d_edge = Vec3(0.03, 0, -0.04);                                      // edge (+x, -z)
  check(Vec3(0.3, 0.1, -0.1) + d_edge, d_edge.normalized(), r - 0.05);
  const Vec3 d_corner = Vec3(-0.02, 0.04, 0.04);                                 // corner
  check(Vec3(-0.3, 0.2, 0.1) + d_corner, d_corner.normalized(), r - 0.06);
  check(Vec3(0.1, -0.05, 0.2), Vec3::UnitZ(), r - 0.1, 0.03);                    // margin
  // inside: out through the nearest face (-y at 0.03), depth r + 0.03
  check(Vec3(0.1, -0.17, 0.02), -Vec3::UnitY(), r + 0.03);
  // a contact point exactly on the +x face: touching
  check(Vec3(0.3, 0.05, 0.05), Vec3::UnitX(), r);
}

// ---------------------------------------------------------------------------------------
// The driver on models
// ---------------------------------------------------------------------------------------

TEST_CASE("collision: the Model's point-plane table reproduces collide() on plane pairs", "[collision]") {
  // the team residual's form of the plane pairs (model.h "point cores"): row q is the q-th contact
  // collide() reports when every pair is within the margin; legacy spheres, boxes, capsules and
  // sphere geoms on links, 3 planes
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    RandomModelOptions opt;
    opt.n_spheres = 4;
    opt.n_planes = 3;
    RandomModel rm = random_model(seed, opt);
    ModelSpec spec = rm.spec;
    const GeomType types[] = {GeomType::Box, GeomType::Capsule, GeomType::Sphere, GeomType::Box};
    for (int g = 0; g < 4; ++g) {
      GeomSpec gs;
      gs.link = g % int(spec.links.size());
      gs.type = types[g];
      gs.pos = Vec3(0.1 * g, -0.05, 0.02 * g);
      gs.R = rpy_rotation(0.3 * g, -0.2, 0.1 + g);
      gs.size = Vec3(0.1 + 0.01 * g, 0.2, 0.05);
      gs.contype = 0;  // planes only (no box-capsule pair function)
      spec.geoms.push_back(gs);
    }
    const Model m = Model::finalize(spec);
    REQUIRE(m.n_body_pair == 0);
    REQUIRE(m.n_point == 8 + 2 + 1 + 8 + 4);
    REQUIRE(m.n_point_pair == 3 * m.n_point);
    Rng rng(seed + 200);
    Kinematics kin(m);
    forward_kinematics(m, random_theta(m, rng), kin);
    std::vector<Contact> con(m.max_contacts);
    uint32_t status = 0;
    const int n = collide(m, kin, 100, con.data(), int(con.size()), status);
    REQUIRE(n == m.n_point_pair);
    for (int q = 0; q < n; ++q) {
      const int s = m.point_pair_point[q], p = m.point_pair_plane[q];
      const Contact& c = con[q];
      const Vec3 core = point_position(kin, m.point_link[s], m.point_pos[s]);
      INFO("seed " << seed << " row " << q << " point " << s << " plane " << p);
      CHECK(c.link_a == m.point_link[s]);
      CHECK(c.ra == m.point_radius[s]);
      CHECK((point_position(kin, c.link_a, c.ca_local) - core).norm() < 1e-13);
      CHECK((c.n - m.plane_normal[p]).norm() < 1e-15);
      CHECK(c.depth == Approx(-(m.plane_normal[p].dot(core) - m.plane_offset[p] - m.point_radius[s])).margin(1e-13));
    }
  }
}

TEST_CASE("collision: legacy spheres x planes give the solvers' sphere_plane_phi", "[collision]") {
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    RandomModelOptions opt;
    opt.n_spheres = 6;
    opt.n_planes = 3;
    const RandomModel rm = random_model(seed, opt);
    const Model& m = rm.model;
    REQUIRE(m.n_pair == 18);
    Rng rng(seed + 100);
    Kinematics kin(m);
    forward_kinematics(m, random_theta(m, rng), kin);
    std::vector<Contact> con(m.max_contacts);
    uint32_t status = 0;
    // a margin larger than any distance here: every (sphere, plane) pair is reported
    const int n = collide(m, kin, 100, con.data(), int(con.size()), status);
    REQUIRE(n == 18);
    CHECK(status == 0);
    MatX J(3, m.n_q), Jc(3, m.n_q);
    VecX g(m.n_q);
    for (int x = 0; x < n; ++x) {
      const int s = x / 3, p = x % 3;  // sphere-major, like the solvers' x = s * n_planes + p
      const ContactSphere& sp = m.spheres[s];
      const Plane& pl = m.planes[p];
      const Contact& c = con[x];
      const Vec3 centre = point_position(kin, sp.link, sp.centre);
      INFO("seed " << seed << " sphere " << s << " plane " << p);
      CHECK(c.geom_a == m.sphere_geom_adr + s);
      CHECK(c.geom_b == m.plane_geom_adr + p);
      CHECK(c.link_a == sp.link);
      CHECK(c.link_b == -1);
      // 1e-13: the plane's origin offset * n reintroduces offset * (n.n - 1) ~ 1e-16
      CHECK(c.depth == Approx(-sphere_plane_phi(centre, sp.radius, pl.normal, pl.offset)).margin(1e-13));
      CHECK((c.n - pl.normal).norm() < 1e-15);
      // the witness point on the sphere is c - r n, in the link frame
      CHECK((point_position(kin, sp.link, c.pa_local) - (centre - sp.radius * pl.normal)).norm() < 1e-13);
      // and the depth gradient is today's -J_c^T n (ne_contact: J at the centre)
      point_jacobian(m, kin, sp.link, centre, Jc);
      contact_depth_gradient(m, kin, c, g);
      CHECK(rel_err(g, -Jc.transpose() * pl.normal) < 1e-13);
    }
  }
}

namespace {

// A box on the ground plane and a ball above it, each on a z slider from the world. At
// theta = (0.095, 0) the box is 5 mm into the ground (4 corners) and the ball 5 mm into the box.
Model box_scene() {
  ModelSpec s;
  for (const char* name : {"lbox", "lball"}) {
    LinkSpec l;
    l.name = name;
    l.joint = JointType::Prismatic;
    l.axis = Vec3::UnitZ();
    l.mass = 1;
    l.inertia = 0.01 * Mat3::Identity();
    s.links.push_back(l);
  }
  GeomSpec floor;
  floor.type = GeomType::Plane;
  GeomSpec box;
  box.link = 0;
  box.type = GeomType::Box;
  box.size = Vec3(0.2, 0.2, 0.1);
  GeomSpec ball;
  ball.link = 1;
  ball.type = GeomType::Sphere;
  ball.pos = Vec3(0, 0, 0.29);
  ball.size = Vec3(0.1, 0, 0);
  s.geoms = {floor, box, ball};
  return Model::finalize(s);
}

}  // namespace

TEST_CASE("collision: a full buffer sets STATUS_CONTACT_OVERFLOW and is never overrun",
          "[collision]") {
  const Model m = box_scene();
  // pairs: box-plane (8), ball-plane (1), ball-box (1)
  REQUIRE(m.n_pair == 3);
  REQUIRE(m.max_contacts == 10);
  Kinematics kin(m);
  forward_kinematics(m, Vec3(0.095, 0, 0).head(m.n_q), kin);  // box 5 mm deep, ball 5 mm into it
  std::vector<Contact> con(m.max_contacts);
  uint32_t status = 0;
  REQUIRE(collide(m, kin, 0, con.data(), int(con.size()), status) == 5);  // 4 corners + ball-box
  CHECK(status == 0);
  CHECK(con[4].link_a == 1);
  CHECK(con[4].link_b == 0);
  CHECK(con[4].depth == Approx(0.005));
  for (const int capacity : {0, 2, 4}) {
    INFO("capacity " << capacity);
    std::vector<Contact> small(capacity + 2);
    for (Contact& c : small) c.depth = 123;  // sentinels past the capacity must survive
    status = STATUS_RESTARTED;               // other bits are kept
    CHECK(collide(m, kin, 0, small.data(), capacity, status) == capacity);
    CHECK(status == (STATUS_RESTARTED | STATUS_CONTACT_OVERFLOW));
    CHECK(small[capacity].depth == 123);
    CHECK(small[capacity + 1].depth == 123);
    for (int i = 0; i < capacity; ++i) CHECK(small[i].depth == Approx(0.005));
  }
  // exactly enough room: no overflow
  status = 0;
  CHECK(collide(m, kin, 0, con.data(), 5, status) == 5);
  CHECK(status == 0);
  // bad arguments are named
  CHECK_THROWS_WITH(collide(m, kin, -1, con.data(), 5, status), Catch::Contains("margin = -1"));
  CHECK_THROWS_WITH(collide(m, kin, 0, con.data(), -1, status), Catch::Contains("capacity = -1"));
}

TEST_CASE("collision: collide equals the pair functions on fresh geom frames, pair by pair",
          "[collision]") {
  // collide() places a geom once for consecutive pairs that share it and writes straight into
  // `out` while a pair's worth fits: the contact set must be bit for bit what each
  // pair function gives on geom_frame(), in pair order, on either path (roomy or tight buffer)
  const Model m = box_scene();
  Kinematics kin(m);
  for (const double z : {0.095, 0.09, 0.099}) {
    forward_kinematics(m, Vec3(z, 0.003, 0).head(m.n_q), kin);
    std::vector<Contact> ref;
    Contact buf[max_pair_contacts];
    for (int p = 0; p < m.n_pair; ++p) {
      const int ga = m.pair_geom_a[p], gb = m.pair_geom_b[p];
      const int n = collision_func[int(m.geom_type[ga])][int(m.geom_type[gb])](
          geom_frame(m, kin, ga), geom_frame(m, kin, gb), 0.02, buf);
      ref.insert(ref.end(), buf, buf + n);
    }
    REQUIRE(ref.size() == 5);  // 4 corners + ball-box
    for (const size_t capacity : {size_t(m.max_contacts), ref.size()}) {
      INFO("z " << z << " capacity " << capacity);
      std::vector<Contact> con(capacity);
      uint32_t status = 0;
      REQUIRE(collide(m, kin, 0.02, con.data(), int(capacity), status) == int(ref.size()));
      for (size_t i = 0; i < ref.size(); ++i) {
        CHECK(con[i].pos == ref[i].pos);
        CHECK(con[i].n == ref[i].n);
        CHECK(con[i].depth == ref[i].depth);
        CHECK((con[i].ra == ref[i].ra && con[i].rb == ref[i].rb && con[i].kappa == ref[i].kappa));
      }
    }
  }
}

TEST_CASE("collision: collide's sphere-plane fast path equals the general path bit for bit",
          "[collision]") {
  // collide() runs sphere-plane pairs without geom frames or the table: every field
  // must be what the pair function gives on geom_frame() plus the general path's local points
  // (R^T (p - t) of the witness points, the sphere centre from the model), with any margin, and
  // a buffer too small must keep the first `capacity` contacts and flag the overflow
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    RandomModelOptions opt;
    opt.n_spheres = 6;
    opt.n_planes = 3;
    const RandomModel rm = random_model(seed, opt);
    const Model& m = rm.model;
    Rng rng(seed + 300);
    Kinematics kin(m);
    forward_kinematics(m, random_theta(m, rng), kin);
    const auto local = [&](int j, const Vec3& p) { return j < 0 ? p : Vec3(kin.R[j].transpose() * (p - kin.t[j])); };
    for (const double margin : {0.0, 0.3, 100.0}) {
      std::vector<Contact> ref;
      Contact buf[max_pair_contacts];
      for (int p = 0; p < m.n_pair; ++p) {
        const int ga = m.pair_geom_a[p], gb = m.pair_geom_b[p];
        REQUIRE(m.geom_type[ga] == GeomType::Sphere);
        REQUIRE(m.geom_type[gb] == GeomType::Plane);
        if (collide_sphere_plane(geom_frame(m, kin, ga), geom_frame(m, kin, gb), margin, buf) == 0) continue;
        Contact c = buf[0];
        c.geom_a = ga;
        c.geom_b = gb;
        c.link_a = m.geom_link[ga];
        c.link_b = m.geom_link[gb];
        c.pa_local = local(c.link_a, contact_point_a(c));
        c.pb_local = local(c.link_b, contact_point_b(c));
        c.ca_local = m.geom_pos[ga];
        c.cb_local = local(c.link_b, contact_point_b(c) - c.rb * c.n);
        ref.push_back(c);
      }
      if (margin == 100.0) REQUIRE(ref.size() == size_t(m.n_pair));
      for (const size_t capacity : {size_t(m.max_contacts), ref.size() / 2}) {
        INFO("seed " << seed << " margin " << margin << " capacity " << capacity);
        std::vector<Contact> con(std::max<size_t>(capacity, 1));
        uint32_t status = 0;
        const int n = collide(m, kin, margin, con.data(), int(capacity), status);
        REQUIRE(n == int(std::min(capacity, ref.size())));
        CHECK(status == (capacity < ref.size() ? STATUS_CONTACT_OVERFLOW : 0u));
        for (int i = 0; i < n; ++i) {
          const Contact &a = con[size_t(i)], &b = ref[size_t(i)];
          CHECK((a.geom_a == b.geom_a && a.geom_b == b.geom_b && a.link_a == b.link_a && a.link_b == b.link_b));
          CHECK((a.pos == b.pos && a.n == b.n && a.depth == b.depth));
          CHECK((a.ra == b.ra && a.rb == b.rb && a.kappa == b.kappa));
          CHECK((a.pa_local == b.pa_local && a.pb_local == b.pb_local));
          CHECK((a.ca_local == b.ca_local && a.cb_local == b.cb_local));
        }
      }
    }
  }
}

TEST_CASE("collision: collide does not allocate", "[collision]") {
  const Model m = box_scene();
  Kinematics kin(m);
  forward_kinematics(m, Vec3(0.095, 0, 0).head(m.n_q), kin);
  std::vector<Contact> con(m.max_contacts);
  MatX J(3, m.n_q);
  VecX g(m.n_q);
  uint32_t status = 0;
  long n_alloc = 0;
  int n = 0;
  {
    MallocCounter count;
    n = collide(m, kin, 0.01, con.data(), int(con.size()), status);
    for (int i = 0; i < n; ++i) {
      contact_jacobian(m, kin, con[i], J);
      contact_depth_gradient(m, kin, con[i], g);
    }
    n_alloc = count.count();
  }
  CHECK(n_alloc == 0);
  CHECK(n == 5);
}

// ---------------------------------------------------------------------------------------
// Contact Jacobians: point_jacobian oracle and central differences on two moving links
// ---------------------------------------------------------------------------------------

TEST_CASE("collision: d depth / d theta = -n^T (J_a - J_b) by central differences, two moving links",
          "[collision]") {
  struct Case { GeomType a, b; };
  // every pair function, each in both orders (a on the tip, b on the arm, and swapped), and
  // planes on the world
  const Case cases[] = {{GeomType::Sphere, GeomType::Sphere}, {GeomType::Sphere, GeomType::Capsule},
                        {GeomType::Capsule, GeomType::Sphere}, {GeomType::Capsule, GeomType::Capsule},
                        {GeomType::Sphere, GeomType::Box},     {GeomType::Box, GeomType::Sphere},
                        {GeomType::Sphere, GeomType::Plane},   {GeomType::Capsule, GeomType::Plane},
                        {GeomType::Box, GeomType::Plane}};
  for (const Case& cs : cases)
    for (uint32_t seed = 1; seed <= 6; ++seed) {
      Rng rng(seed * 31 + uint32_t(cs.a) * 7 + uint32_t(cs.b));
      ModelSpec spec = two_arm_spec(rng);
      VecX th;
      const Model m = two_arm_pair_model(rng, cs.a, cs.b, spec, th);
      Kinematics kin(m);
      REQUIRE(m.n_pair == 1);
      std::vector<Contact> con(m.max_contacts);
      const VecX d0 = contact_depths(m, th, con);
      REQUIRE(d0.size() >= 1);
      forward_kinematics(m, th, kin);
      // analytic rows -n^T (J_a - J_b), and J against the point_jacobian oracle
      MatX G(d0.size(), m.n_q), J(3, m.n_q), Ja(3, m.n_q), Jb(3, m.n_q);
      VecX g(m.n_q);
      for (int i = 0; i < d0.size(); ++i) {
        const Contact& c = con[i];
        REQUIRE(c.link_a == 3);
        contact_jacobian(m, kin, c, J);
        point_jacobian(m, kin, 3, contact_point_a(c), Ja);
        if (c.link_b >= 0)
          point_jacobian(m, kin, c.link_b, contact_point_b(c), Jb);
        else
          Jb.setZero();
        CHECK(rel_err(J, Ja - Jb) < 1e-14);
        contact_depth_gradient(m, kin, c, g);
        CHECK(rel_err(g, -J.transpose() * c.n) < 1e-14);
        G.row(i) = g.transpose();
      }
      std::vector<Contact> scratch(m.max_contacts);
      const MatX fd = fd_jacobian([&](const VecX& x) { return contact_depths(m, x, scratch); }, th);
      const double err = rel_err(G, fd);
      INFO(geom_type_name(cs.a) << "-" << geom_type_name(cs.b) << " seed " << seed << " contacts "
                                << d0.size() << " rel err " << err);
      CHECK(err < fd_tol());
      // both links' own DOFs act (arm: ball 6..8; tip: hinge 9, slider 10) ...
      const double scale = G.cwiseAbs().maxCoeff();
      CHECK(G.middleCols(9, 2).cwiseAbs().maxCoeff() > 1e-3 * scale);
      if (cs.b != GeomType::Plane) {
        CHECK(G.middleCols(6, 3).cwiseAbs().maxCoeff() > 1e-3 * scale);
        // ... while the base moves both rigidly and cannot change the depth: p_a - p_b || n
        CHECK(G.leftCols(6).cwiseAbs().maxCoeff() < 1e-12 * scale);
      }
    }
}

TEST_CASE("collision: contact_jacobian of a world geom on either side", "[collision]") {
  const Model m = box_scene();
  Kinematics kin(m);
  forward_kinematics(m, Vec3(0.3, -0.1, 0).head(m.n_q), kin);
  Contact c;
  c.link_a = 1;
  c.link_b = -1;
  c.pa_local = Vec3(0.1, 0, 0);
  c.pb_local = Vec3(5, 5, 5);
  c.n = Vec3::UnitZ();
  MatX J(3, m.n_q);
  contact_jacobian(m, kin, c, J);
  CHECK(J.col(0).isZero());                  // the box's slider does not move the ball
  CHECK(J.col(1).isApprox(Vec3::UnitZ()));  // the ball's slider
  std::swap(c.link_a, c.link_b);
  std::swap(c.pa_local, c.pb_local);
  contact_jacobian(m, kin, c, J);
  CHECK(J.col(1).isApprox(-Vec3::UnitZ()));
}
