// Closest points of two capsule axis segments a.p + s ua (|s| <= ha) and b.p + t ub (|t| <= hb),
// in the scalars of the pair (cab = ua.ub, c = ua.r, f = ub.r, r = a.p - b.p, sin2 = 1 - cab^2):
// one form for the reference collision stage (core/collision_primitive.cpp collide_capsule_capsule)
// and the team / CUDA residual (solvers/pbd/pbd_residual_team.h body_pair_cores), so that both find
// the same contacts bit for bit.
#pragma once
#include "core/hd.h"

namespace bigstep {

template <class S> BIGSTEP_HD S clamp_to(S x, S lo, S hi) { return x < lo ? lo : (hi < x ? hi : x); }

/// General position (sin2 >= 1e-12): minimise |a.p + s ua - b.p - t ub|^2 over the box. s free
/// first, then t from s, clamped; if t was clamped, s again from t (Ericson, Real-Time Collision
/// Detection §5.1.9: correct because the objective is convex).
template <class S> BIGSTEP_HD void segment_closest(S cab, S c, S f, S sin2, S ha, S hb, S& s, S& t) {
  s = clamp_to((cab * f - c) / sin2, -ha, ha);
  t = cab * s + f;
  if (t < -hb || t > hb) {
    t = clamp_to(t, -hb, hb);
    s = clamp_to(cab * t - c, -ha, ha);
  }
}

/// Parallel axes (sin2 < 1e-12): b's segment along a's axis, s = ua . (x - a.p), is the interval
/// [s_mid - s_half, s_mid + s_half]; its overlap with a's is [lo, hi] (empty when hi < lo).
template <class S> BIGSTEP_HD void segment_overlap(S cab, S c, S ha, S hb, S& s_mid, S& lo, S& hi) {
  using std::abs;
  s_mid = -c;
  const S s_half = hb * abs(cab);
  lo = -ha < s_mid - s_half ? s_mid - s_half : -ha;
  hi = s_mid + s_half < ha ? s_mid + s_half : ha;
}

}  // namespace bigstep
