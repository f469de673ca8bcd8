// Height field (core/height_field.h) and its pair functions (core/collision.h sphere_hfield):
// the B-spline's derivatives against central differences, its bounds and flat outside; the closest
// point against a brute-force search; the contact of a sphere, a capsule and a box through the
// table; a flat map equals the plane bit for bit; d depth / d theta = -n^T J against central
// differences on two moving links, allocating nothing.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "core/collision.h"
#include "tests/support/geom_scenes.h"
#include "tests/support/malloc_guard.h"
#include "tests/support/tol.h"

using namespace bigstep;
using namespace bigstep::test;

namespace {

// 1 m x 0.8 m, 10 x 8 cells (0.1 m), bumps <= 3 cm
HeightField bumpy(uint64_t seed = 7) { return height_field_random(0.5, 0.4, 10, 8, 0.03, seed); }

// Brute-force closest point of the surface to c: the smallest |(u, h(u)) - c| on a 0.5 mm grid over
// a 6 cm square around c_xy, then on 10 um and 0.2 um grids around the best node. Returns the distance.
double brute_distance(const HeightField& hf, const Vec3& c, Vec3& q_best) {
  double best = 1e9;
  Eigen::Vector2d centre(c.x(), c.y());
  for (const double step : {5e-4, 1e-5, 2e-7}) {
    const Eigen::Vector2d mid = centre;
    for (int a = -60; a <= 60; ++a)
      for (int b = -60; b <= 60; ++b) {
        const Eigen::Vector2d u = mid + step * Eigen::Vector2d(a, b);
        const Vec3 q(u.x(), u.y(), height_field_eval(hf, u.x(), u.y()).h);
        const double d = (q - c).norm();
        if (d < best) best = d, q_best = q, centre = u;
      }
  }
  return best;
}

}  // namespace

TEST_CASE("height field: gradient and Hessian by central differences, bounds, flat outside", "[height_field]") {
  const HeightField hf = bumpy();
  Rng rng(11);
  const double e = 1e-5;
  for (int k = 0; k < 200; ++k) {
    const Vec3 p = uniform_vec(rng, -0.6, 0.6);  // inside and around the rectangle
    const HeightSample s = height_field_eval(hf, p.x(), p.y());
    const HeightSample xp = height_field_eval(hf, p.x() + e, p.y()), xm = height_field_eval(hf, p.x() - e, p.y());
    const HeightSample yp = height_field_eval(hf, p.x(), p.y() + e), ym = height_field_eval(hf, p.x(), p.y() - e);
    // central differences: truncation ~ e^2 h''' ~ 1e-10 * 30 m^-2; round-off 1e-17 / 1e-5
    CHECK(std::abs((xp.h - xm.h) / (2 * e) - s.g.x()) < tol(1e-8));
    CHECK(std::abs((yp.h - ym.h) / (2 * e) - s.g.y()) < tol(1e-8));
    CHECK(std::abs((xp.g.x() - xm.g.x()) / (2 * e) - s.H(0, 0)) < tol(1e-5));
    CHECK(std::abs((yp.g.x() - ym.g.x()) / (2 * e) - s.H(0, 1)) < tol(1e-5));
    CHECK(std::abs((yp.g.y() - ym.g.y()) / (2 * e) - s.H(1, 1)) < tol(1e-5));
    CHECK(s.H(0, 1) == s.H(1, 0));
    // a convex combination of heights in [0, 0.03): 0 <= h <= bump_max
    CHECK((s.h >= 0 && s.h <= 0.03));
    // flat (exactly 0, zero slope) outside the rectangle
    if (std::abs(p.x()) >= 0.5 || std::abs(p.y()) >= 0.4) {
      CHECK(s.h == 0);
      CHECK(s.g.norm() == 0);
    }
  }
  // not a flat map: the bumps reach most of bump_max somewhere on a 1 cm grid
  double h_max = 0;
  for (double x = -0.5; x <= 0.5; x += 0.01)
    for (double y = -0.4; y <= 0.4; y += 0.01) h_max = std::max(h_max, height_field_eval(hf, x, y).h);
  CHECK(h_max > 0.015);
  // C2 across a cell edge (x = -0.5 + 4 dx): value, slope and curvature continuous
  const double xe = -0.1, y = 0.033;
  const HeightSample l = height_field_eval(hf, std::nextafter(xe, -1.0), y), r = height_field_eval(hf, xe, y);
  CHECK(std::abs(l.h - r.h) < 1e-15);
  CHECK((l.g - r.g).norm() < 1e-13);
  CHECK((l.H - r.H).norm() < 1e-11);
  // same seed, same heights; another seed, other heights
  CHECK(bumpy(7).z == hf.z);
  CHECK(bumpy(8).z != hf.z);
  CHECK_THROWS_WITH(height_field_random(0.5, 0.4, 10, 8, -0.01, 0), Catch::Contains("bump_max"));
  CHECK_THROWS_WITH(height_field_random(0.5, 0.4, 0, 8, 0.01, 0), Catch::Contains("nx"));
  CHECK_THROWS_WITH(height_field_random(0.5, NAN, 10, 8, 0.01, 0), Catch::Contains("hy"));
}

TEST_CASE("height field: closest point and signed distance against a brute-force search", "[height_field]") {
  const HeightField hf = bumpy();
  Rng rng(5);
  for (int k = 0; k < 40; ++k) {
    const Vec3 p = uniform_vec(rng, -0.45, 0.45);
    // 2 cm above to 5 mm below the surface at (x, y)
    const double up = -0.005 + 0.025 * (k % 8) / 7.0;
    const Vec3 c(p.x(), 0.8 * p.y(), height_field_eval(hf, p.x(), 0.8 * p.y()).h + up);
    Vec3 n;
    const Vec3 q = height_field_closest(hf, c, n);
    const double d = n.dot(c - q);
    Vec3 q_bf = Vec3::Zero();
    const double d_bf = brute_distance(hf, c, q_bf);
    INFO("k " << k << " c " << c.transpose() << " d " << d << " brute force " << d_bf);
    // the distance: the brute force overestimates by ~ kappa (grid step)^2 ~ 1e-10 m
    CHECK(std::abs(std::abs(d) - d_bf) < tol(1e-9));
    CHECK(std::signbit(d) == std::signbit(up));
    // the point (the distance is flat along the surface: the last grid places it to ~1e-6 m)
    CHECK((q - q_bf).norm() < tol(1e-5));
    // on the surface, normal = (-grad h, 1)/|.| at q, c - q along n (a stationary point)
    const HeightSample s = height_field_eval(hf, q.x(), q.y());
    CHECK(q.z() == s.h);
    CHECK((n - Vec3(-s.g.x(), -s.g.y(), 1).normalized()).norm() < 1e-15);
    CHECK((c - q - d * n).norm() < tol(1e-12));
  }
}

TEST_CASE("height field: sphere, capsule and box contacts through the table, both orders", "[height_field]") {
  const HeightField hf = bumpy();
  // the map on a moved, tilted frame
  GeomFrame b;
  b.p = Vec3(0.3, -0.2, 0.1);
  b.R = z_to(Vec3(0.1, -0.05, 1).normalized());
  b.size = Vec3(hf.hx, hf.hy, 0);
  b.hfield = &hf;
  const int S = int(GeomType::Sphere), C = int(GeomType::Capsule), B = int(GeomType::Box), H = int(GeomType::HeightField);
  // reference: the sphere core x of radius r against the surface (closest point in b's frame)
  auto expect = [&](const Vec3& x, double r, const Contact& c) {
    Vec3 n_l;
    const Vec3 xl = b.R.transpose() * (x - b.p);
    const Vec3 q = b.R * height_field_closest(hf, xl, n_l) + b.p;
    const Vec3 n = b.R * n_l;
    CHECK((c.n - n).norm() < 1e-14);
    CHECK(std::abs(c.depth - (r - n.dot(x - q))) < 1e-14);
    CHECK((contact_point_a(c) - (x - r * n)).norm() < 1e-14);  // on the sphere
    CHECK((contact_point_b(c) - q).norm() < 1e-14);            // on the surface
    CHECK((c.ra == r && c.rb == 0 && c.kappa == 0));
  };
  Rng rng(3);
  for (int k = 0; k < 10; ++k) {
    const Vec3 xy = uniform_vec(rng, -0.35, 0.35);
    const Vec3 base_l(xy.x(), xy.y(), height_field_eval(hf, xy.x(), xy.y()).h);
    GeomFrame a;
    a.R = random_rotation(rng);
    // sphere: 1 cm deep
    a.size = Vec3(0.05, 0, 0);
    a.p = b.R * (base_l + Vec3(0, 0, 0.04)) + b.p;
    Contact c[max_pair_contacts], m[max_pair_contacts];
    REQUIRE(collision_func[S][H](a, b, 0, c) == 1);
    expect(a.p, 0.05, c[0]);
    CHECK(c[0].depth > 0);
    REQUIRE(collision_func[H][S](b, a, 0, m) == 1);  // swapped: the normal flips
    CHECK((m[0].n == -c[0].n && m[0].depth == c[0].depth && m[0].ra == 0 && m[0].rb == 0.05));
    // far above every bump: none (h <= bump_max)
    GeomFrame high = a;
    high.p = b.R * (base_l + Vec3(0, 0, 0.2)) + b.p;
    CHECK(collision_func[S][H](high, b, 0.01, c) == 0);
    // capsule: its two end spheres
    a.size = Vec3(0.02, 0.1, 0);
    REQUIRE(collision_func[C][H](a, b, 10, c) == 2);
    expect(a.p + 0.1 * a.R.col(2), 0.02, c[0]);
    expect(a.p - 0.1 * a.R.col(2), 0.02, c[1]);
    CHECK(collision_func[H][C](b, a, 10, m) == 2);
    // box: its 8 corners, collide_box_plane's order
    a.size = Vec3(0.03, 0.02, 0.01);
    REQUIRE(collision_func[B][H](a, b, 10, c) == 8);
    for (int i = 0; i < 8; ++i) {
      const Vec3 s((i & 1) ? 1.0 : -1.0, (i & 2) ? 1.0 : -1.0, (i & 4) ? 1.0 : -1.0);
      expect(a.p + a.R * s.cwiseProduct(a.size), 0, c[i]);
    }
  }
  CHECK(pair_max_contacts(GeomType::HeightField, GeomType::Plane) == 0);
  CHECK(pair_max_contacts(GeomType::HeightField, GeomType::HeightField) == 0);
  CHECK(pair_max_contacts(GeomType::Box, GeomType::HeightField) == 8);
}

TEST_CASE("height field: a flat map gives the plane's contacts bit for bit", "[height_field]") {
  const HeightField flat = height_field_random(1, 1, 6, 6, 0, 1);
  GeomFrame b, plane;
  b.size = Vec3(1, 1, 0);
  b.hfield = &flat;
  Rng rng(9);
  for (int k = 0; k < 50; ++k) {
    GeomFrame a;
    a.p = uniform_vec(rng, -1.5, 1.5);  // on and off the rectangle
    a.p.z() = 0.05 * a.p.z();
    a.R = random_rotation(rng);
    a.size = Vec3(0.04, 0.07, 0.02);
    for (const int t : {int(GeomType::Sphere), int(GeomType::Capsule), int(GeomType::Box)}) {
      Contact c[max_pair_contacts], p[max_pair_contacts];
      const int n = collision_func[t][int(GeomType::HeightField)](a, b, 0.1, c);
      REQUIRE(n == collision_func[t][int(GeomType::Plane)](a, plane, 0.1, p));
      for (int i = 0; i < n; ++i) {
        CHECK((c[i].n == p[i].n && c[i].depth == p[i].depth && c[i].pos == p[i].pos));
        CHECK((c[i].ra == p[i].ra && c[i].rb == p[i].rb && c[i].kappa == p[i].kappa));
      }
    }
  }
}

TEST_CASE("height field: d depth / d theta = -n^T J by central differences, and the Jacobian", "[height_field]") {
  for (const GeomType ta : {GeomType::Sphere, GeomType::Capsule, GeomType::Box})
    for (uint32_t seed = 1; seed <= 4; ++seed) {
      Rng rng(seed * 13 + uint32_t(ta));
      ModelSpec spec = two_arm_spec(rng);
      const Model bare = Model::finalize(spec);
      const VecX th = random_theta(bare, rng);
      Kinematics kin(bare);
      forward_kinematics(bare, th, kin);
      // geom a on the tip (link 3); the map's frame under it: a's centre 3 cm above the surface
      GeomSpec ga = random_geom(rng, ta, 3);
      ga.size *= 0.3;
      const Vec3 ca = point_position(kin, 3, ga.pos);
      spec.height_fields = {bumpy(seed)};
      GeomSpec gb;
      gb.type = GeomType::HeightField;
      gb.link = -1;
      gb.hfield = 0;
      gb.R = z_to(Vec3(0.05, 0.1, 1).normalized());
      const Vec3 xy(0.1 * seed - 0.2, 0.05, 0);  // map point under a
      gb.pos = ca - gb.R * Vec3(xy.x(), xy.y(), height_field_eval(spec.height_fields[0], xy.x(), xy.y()).h + 0.03);
      spec.geoms = {gb, ga};
      const Model m = Model::finalize(spec);
      REQUIRE(m.n_pair == 1);
      REQUIRE(m.geom_size[0] == Vec3(0.5, 0.4, 0));
      std::vector<Contact> con(m.max_contacts), scratch(m.max_contacts);
      const VecX d0 = contact_depths(m, th, con);
      REQUIRE(d0.size() == pair_max_contacts(ta, GeomType::HeightField));
      Kinematics k2(m);
      forward_kinematics(m, th, k2);
      MatX G(d0.size(), m.n_q), J(3, m.n_q), Ja(3, m.n_q);
      VecX g(m.n_q);
      for (int i = 0; i < d0.size(); ++i) {
        const Contact& c = con[i];
        REQUIRE((c.link_a == 3 && c.link_b == -1));
        contact_jacobian(m, k2, c, J);
        point_jacobian(m, k2, 3, contact_point_a(c), Ja);
        CHECK(rel_err(J, Ja) < 1e-14);  // the world map does not move
        contact_depth_gradient(m, k2, c, g);
        CHECK(rel_err(g, -J.transpose() * c.n) < 1e-14);
        G.row(i) = g.transpose();
      }
      const MatX fd = fd_jacobian([&](const VecX& x) { return contact_depths(m, x, scratch); }, th);
      const double err = rel_err(G, fd);
      INFO(geom_type_name(ta) << " seed " << seed << " rel err " << err);
      // the depth is the exact (Newton) distance, whose gradient is n: no first-order error
      CHECK(err < fd_tol());
      CHECK(G.leftCols(6).cwiseAbs().maxCoeff() > 1e-3);  // the base moves a against the map
      // the collision stage on the map allocates nothing (no allocation inside a step)
      uint32_t status = 0;
      long n_alloc = 0;
      {
        const MallocCounter counter;
        const int n = collide(m, k2, 10, con.data(), int(con.size()), status);
        for (int i = 0; i < n; ++i) contact_depth_gradient(m, k2, con[i], g);
        n_alloc = counter.count();
      }
      CHECK(n_alloc == 0);
    }
}
