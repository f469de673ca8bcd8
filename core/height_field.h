// Height field: a rigid terrain z = h(x, y) over a rectangle of its geom frame (MuJoCo's hfield;
// docs/methods/inverse_dynamics.md §9 "rigid height map, bumps <= 3 cm").
//
// Surface. h is the uniform bicubic B-spline of a grid of control heights z_ij at the nodes
//   x_i = -hx + i dx, y_j = -hy + j dy   (i = 0..nx, j = 0..ny; dx = 2 hx / nx, dy = 2 hy / ny),
// with z = 0 at every node outside the grid: h(x, y) = sum_ij z_ij B((x - x_i)/dx) B((y - y_j)/dy),
// B the centred cubic B-spline (support [-2, 2]). Why a B-spline and not MuJoCo's triangles:
//   - the position-based integrators (PBD, PBFD) differentiate the contact depth and its normal
//     along the iterates; a piecewise-linear surface has normals that jump across triangle edges,
//     which makes their Newton / LM steps chatter. The cubic B-spline is C2: depth, normal and the
//     normal's turning are continuous everywhere;
//   - it is a convex combination of the control heights, so min z <= h <= max z: seeded bumps
//     drawn in [0, bump_max] never exceed bump_max (Catmull-Rom would overshoot);
//   - with the two outer rings of control heights 0 (height_field_random), h = 0 outside the
//     rectangle exactly: the map joins the plane z = 0 of its frame with C2 continuity.
// The nodes are control points, not samples: h(x_i, y_j) is a weighted mean of z near node ij.
#pragma once
#include <cstdint>
#include <vector>

#include "core/types.h"

namespace bigstep {

struct HeightField {
  int nx = 0, ny = 0;            ///< cells along x, y (nx + 1, ny + 1 control nodes)
  double hx = 0, hy = 0;         ///< half extents of the rectangle [m]
  std::vector<double> z;         ///< ((ny + 1) x (nx + 1)) control heights, row j, column i [m]
  double z_min = 0, z_max = 0;   ///< bounds of z, z_min <= 0 <= z_max (so of h, with the 0 off the grid) [m]

  double dx() const { return 2 * hx / nx; }
  double dy() const { return 2 * hy / ny; }
  /// Control height at node (i, j); 0 off the grid.
  double node(int i, int j) const {
    return i < 0 || j < 0 || i > nx || j > ny ? 0.0 : z[size_t(j) * size_t(nx + 1) + size_t(i)];
  }
};

/// h, its gradient (h_x, h_y) and Hessian [h_xx h_xy; h_xy h_yy] at (x, y) of the geom frame.
struct HeightSample {
  double h = 0;
  Eigen::Vector2d g = Eigen::Vector2d::Zero();
  Eigen::Matrix2d H = Eigen::Matrix2d::Zero();
};
HeightSample height_field_eval(const HeightField& hf, double x, double y);

/// A height field with nx x ny cells over [-hx, hx] x [-hy, hy] whose interior control heights
/// (2 <= i <= nx - 2, 2 <= j <= ny - 2) are drawn U(0, bump_max) from std::mt19937_64(seed), in
/// row order; the two outer rings stay 0 (flat outside the rectangle); z_max = bump_max. Throws InvalidArgument
/// naming the argument for sizes <= 0, nx or ny < 1, bump_max < 0 or non-finite values.
HeightField height_field_random(double hx, double hy, int nx, int ny, double bump_max, uint64_t seed);

/// Closest point of the surface z = h(x, y) to the point c (geom frame), by Newton's method on
/// 1/2 |(u, h(u)) - c|^2 from u = (c_x, c_y) (at most 12 steps, to |du| <= 1e-14 m). Returns the
/// surface point q; n = (-h_x, -h_y, 1) / |.| at q is the upward unit normal there, and the
/// signed distance of c is n . (c - q) (< 0 below the surface). Exact to the Newton tolerance where
/// the closest point is unique (c within the radius of curvature of the surface).
Vec3 height_field_closest(const HeightField& hf, const Vec3& c, Vec3& n);

}  // namespace bigstep
