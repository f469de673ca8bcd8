// Height field evaluation, seeded generation and closest point (core/height_field.h).
#include "core/height_field.h"

#include <cmath>
#include <random>

#include "core/error.h"

namespace bigstep {

namespace {

// Uniform cubic B-spline weights of the 4 nodes i-1 .. i+2 at fraction f in [0, 1) of cell i,
// with their first and second derivatives in f.
struct Basis {
  double w[4], d1[4], d2[4];
};
Basis bspline_basis(double f) {
  const double f2 = f * f, f3 = f2 * f, g = 1 - f;
  return {{g * g * g / 6, (3 * f3 - 6 * f2 + 4) / 6, (-3 * f3 + 3 * f2 + 3 * f + 1) / 6, f3 / 6},
          {-g * g / 2, (3 * f2 - 4 * f) / 2, (-3 * f2 + 2 * f + 1) / 2, f2 / 2},
          {g, 3 * f - 2, 1 - 3 * f, f}};
}

}  // namespace

HeightSample height_field_eval(const HeightField& hf, double x, double y) {
  HeightSample s;
  const double dx = hf.dx(), dy = hf.dy();
  const double u = (x + hf.hx) / dx, v = (y + hf.hy) / dy;
  // outside the support of every node (more than 2 cells off the grid; also catches NaN): h = 0
  if (!(u > -2 && u < hf.nx + 2 && v > -2 && v < hf.ny + 2)) return s;
  const int i = int(std::floor(u)), j = int(std::floor(v));
  const Basis bx = bspline_basis(u - i), by = bspline_basis(v - j);
  // tensor product over the 4 x 4 nodes (i-1 .. i+2) x (j-1 .. j+2)
  double h = 0, hu = 0, hv = 0, huu = 0, huv = 0, hvv = 0;
  for (int b = 0; b < 4; ++b) {
    double r = 0, ru = 0, ruu = 0;  // row j-1+b along x
    for (int a = 0; a < 4; ++a) {
      const double zab = hf.node(i - 1 + a, j - 1 + b);
      r += bx.w[a] * zab;
      ru += bx.d1[a] * zab;
      ruu += bx.d2[a] * zab;
    }
    h += by.w[b] * r;
    hu += by.w[b] * ru;
    huu += by.w[b] * ruu;
    hv += by.d1[b] * r;
    huv += by.d1[b] * ru;
    hvv += by.d2[b] * r;
  }
  s.h = h;
  s.g = Eigen::Vector2d(hu / dx, hv / dy);
  s.H << huu / (dx * dx), huv / (dx * dy), huv / (dx * dy), hvv / (dy * dy);
  return s;
}

HeightField height_field_random(double hx, double hy, int nx, int ny, double bump_max, uint64_t seed) {
  BIGSTEP_CHECK_ARG(std::isfinite(hx) && hx > 0, "height_field.hx", hx, "must be finite and > 0");
  BIGSTEP_CHECK_ARG(std::isfinite(hy) && hy > 0, "height_field.hy", hy, "must be finite and > 0");
  BIGSTEP_CHECK_ARG(nx >= 1 && nx <= 4096, "height_field.nx", nx, "must be in [1, 4096]");
  BIGSTEP_CHECK_ARG(ny >= 1 && ny <= 4096, "height_field.ny", ny, "must be in [1, 4096]");
  BIGSTEP_CHECK_ARG(std::isfinite(bump_max) && bump_max >= 0, "height_field.bump_max", bump_max,
                    "must be finite and >= 0");
  HeightField hf;
  hf.nx = nx;
  hf.ny = ny;
  hf.hx = hx;
  hf.hy = hy;
  hf.z.assign(size_t(nx + 1) * size_t(ny + 1), 0.0);
  hf.z_max = bump_max;  // the bound they are drawn under (read back as the scene's bump_max)
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> U(0.0, 1.0);
  for (int j = 2; j <= ny - 2; ++j)
    for (int i = 2; i <= nx - 2; ++i) {
      const double zij = bump_max * U(rng);  // in [0, bump_max)
      hf.z[size_t(j) * size_t(nx + 1) + size_t(i)] = zij;
    }
  return hf;
}

Vec3 height_field_closest(const HeightField& hf, const Vec3& c, Vec3& n) {
  // minimise f(u) = 1/2 |u - c_xy|^2 + 1/2 (h(u) - c_z)^2:
  //   grad f = (u - c_xy) + (h - c_z) grad h,  hess f = I + grad h grad h^T + (h - c_z) hess h;
  // Newton while hess f is positive definite, else the Gauss-Newton matrix I + grad h grad h^T
  Eigen::Vector2d u(c.x(), c.y());
  HeightSample s = height_field_eval(hf, u.x(), u.y());
  for (int it = 0; it < 12; ++it) {
    const double e = s.h - c.z();
    const Eigen::Vector2d grad = (u - Eigen::Vector2d(c.x(), c.y())) + e * s.g;
    Eigen::Matrix2d A = Eigen::Matrix2d::Identity() + s.g * s.g.transpose();
    const Eigen::Matrix2d A_newton = A + e * s.H;
    if (A_newton(0, 0) > 0 && A_newton.determinant() > 0) A = A_newton;
    const Eigen::Vector2d du = -A.inverse() * grad;
    if (!(du.norm() > 1e-14)) break;  // (a flat map stops here at once: grad = 0)
    u += du;
    s = height_field_eval(hf, u.x(), u.y());
  }
  // 0 - h_x, not -h_x: a flat map's normal is (+0, +0, 1), bit for bit a plane's
  n = Vec3(0 - s.g.x(), 0 - s.g.y(), 1).normalized();
  return Vec3(u.x(), u.y(), s.h);
}

}  // namespace bigstep
