// Per-point contact force and energy formulas of PBD/PBFD (spec pbfd.md §4.2-§4.4).
// Pure functions of (u, d, n): the chain rule to theta lives in pbd_objective / pbfd_residual.
// Every term is zero when d <= 0; callers branch on d > 0 (never evaluate d^(alpha-1) at 0).
#pragma once
#include <cmath>

#include "core/types.h"

namespace bigstep {

/// Contact model parameters (pbfd.md §4.7): alpha = 2, beta = gamma = 1 by default.
struct ContactParams {
  double c_perp = 1e5;  ///< C_perp, normal force coefficient [N/m^alpha]
  double c_par = 0;     ///< C_par, tangential coefficient
  double alpha = 2;     ///< normal force exponent (> 1 for a C^2 energy, Lemma 4.2)
  double beta = 1;      ///< slip exponent (>= 1: the force is not differentiable at zero slip below)
  double gamma = 1;     ///< depth exponent of the tangential terms (>= 1)
  double mu = 0.5;      ///< Coulomb coefficient for the Newton-Euler baselines (unused by PBD/PBFD)
};

/// Signed distance of a contact sphere centre c to plane (n, h0): phi = n^T c - h0 - r.
inline double sphere_plane_phi(const Vec3& c, double r, const Vec3& n, double h0) {
  return n.dot(c) - h0 - r;
}

/// PBD tangential energy e = |u|^(beta+1) d^(gamma+1) and its p-derivatives (pbfd.md §4.3).
struct TangentialEnergy {
  double e;
  Vec3 grad;   ///< grad_p e = -(f_par + f_star)
  Mat3 hess;   ///< grad_p^2 e (symmetric)
};

inline TangentialEnergy tangential_energy(const Vec3& u, double d, const Vec3& n,
                                          const ContactParams& cp) {
  const double b = cp.beta, g = cp.gamma, un = u.norm();
  const Mat3 Pt = Mat3::Identity() - n * n.transpose();
  const double ub1 = std::pow(un, b - 1);  // |u|^(beta-1); 1 at u = 0 when beta = 1
  const double ubp1 = std::pow(un, b + 1);
  const double dg = std::pow(d, g), dg1 = std::pow(d, g + 1);
  TangentialEnergy t;
  t.e = ubp1 * dg1;
  t.grad = (b + 1) * ub1 * dg1 * u - (g + 1) * ubp1 * dg * n;
  Mat3 slip = Pt;
  if (b != 1 && un > 0) slip += (b - 1) * (u / un) * (u / un).transpose();
  t.hess = (b + 1) * dg1 * ub1 * slip -
           (b + 1) * (g + 1) * dg * ub1 * (u * n.transpose() + n * u.transpose()) +
           g * (g + 1) * ubp1 * std::pow(d, g - 1) * n * n.transpose();
  return t;
}

/// PBFD friction force f_par = -(beta+1)|u|^(beta-1) d^(gamma+1) u and df_par/dp (pbfd.md §4.4,
/// exponent corrected per A1). The Jacobian is not symmetric: f_par has no energy.
struct FrictionForce {
  Vec3 f;
  Mat3 df_dp;
};

inline FrictionForce pbfd_friction(const Vec3& u, double d, const Vec3& n, const ContactParams& cp) {
  const double b = cp.beta, g = cp.gamma, un = u.norm();
  const Mat3 Pt = Mat3::Identity() - n * n.transpose();
  const double ub1 = std::pow(un, b - 1);
  const double dg = std::pow(d, g), dg1 = std::pow(d, g + 1);
  FrictionForce ff;
  ff.f = -(b + 1) * ub1 * dg1 * u;
  Mat3 slip = Pt;
  if (b != 1 && un > 0) slip += (b - 1) * (u / un) * (u / un).transpose();
  ff.df_dp = -(b + 1) * dg1 * ub1 * slip + (b + 1) * (g + 1) * dg * ub1 * u * n.transpose();
  return ff;
}

/// Spurious normal push f* = (gamma+1)|u|^(beta+1) d^gamma n that PBFD drops (pbfd.md §4.4).
inline Vec3 spurious_normal_force(const Vec3& u, double d, const Vec3& n, const ContactParams& cp) {
  return (cp.gamma + 1) * std::pow(u.norm(), cp.beta + 1) * std::pow(d, cp.gamma) * n;
}

}  // namespace bigstep
