// Sphere centre against a box, in the box frame (half-extents h, centre c = R_b^T (x - p_b)): the
// closest box point when c is outside, the face c leaves through when inside. One form for the
// reference collision stage (core/collision_primitive.cpp collide_sphere_box) and the team / CUDA
// residual (solvers/pbd/pbd_residual_team.h body_pair_box_cores), so that both find the same contact.
// V: any 3-vector with operator[] (Eigen's Vec3, hd::V3<S>).
#pragma once
#include "core/hd.h"

namespace bigstep {

/// q = c clamped to the box |q_i| <= h_i; true when c is outside (q != c), so q is on the surface.
template <class V> BIGSTEP_HD bool box_closest(const V& c, const V& h, V& q) {
  bool outside = false;
  for (int i = 0; i < 3; ++i) {
    q[i] = c[i] < -h[i] ? -h[i] : (h[i] < c[i] ? h[i] : c[i]);
    outside = outside || q[i] != c[i];
  }
  return outside;
}

/// c inside (or on) the box: the axis i of the nearest face (least h_i - |c_i|, the first on ties),
/// its distance to_face = h_i - |c_i| >= 0 and the outward sign of that face (c_i < 0: -1).
template <class V, class S> BIGSTEP_HD int box_nearest_face(const V& c, const V& h, S& to_face, S& sign) {
  using std::abs;
  int i = 0;
  to_face = h[0] - abs(c[0]);
  for (int k = 1; k < 3; ++k)
    if (h[k] - abs(c[k]) < to_face) i = k, to_face = h[k] - abs(c[k]);
  sign = c[i] < 0 ? S(-1) : S(1);
  return i;
}

}  // namespace bigstep
