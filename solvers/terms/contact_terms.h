// Per-point contact force and energy formulas of PBD/PBFD (docs/methods/pbfd.md §4.2-§4.4).
// Pure functions of (u, d, n): the chain rule to theta lives in pbd_objective / pbfd_residual.
// Every term is zero when d <= 0; callers branch on d > 0 (never evaluate d^(alpha-1) at 0).
#pragma once
#include <cmath>

#include "core/types.h"

namespace bigstep {

/// PBFD's friction law (contact.friction): the paper's power law C_par f_par (§4.4) or the
/// regularised Coulomb law mu f_n (§4.9), implicit in theta_{n+1} either way.
enum class FrictionLaw { Power, Coulomb };

/// Contact model parameters (docs/methods/pbfd.md §4.7): alpha = 2, beta = gamma = 1 by default.
struct ContactParams {
  double c_perp = 1e5;  ///< C_perp, normal force coefficient [N/m^alpha]
  double c_par = 0;     ///< C_par, tangential coefficient
  double alpha = 2;     ///< normal force exponent (> 1 for a C^2 energy, Lemma 4.2)
  double beta = 1;      ///< slip exponent (>= 1: the force is not differentiable at zero slip below)
  double gamma = 1;     ///< depth exponent of the tangential terms (>= 1)
  double mu = 0.5;      ///< Coulomb coefficient: Newton-Euler baselines, NMDP, and PBFD's Coulomb law
  FrictionLaw friction = FrictionLaw::Power;  ///< PBFD's friction law (contact.friction)
  double stiction_velocity = 1e-2;  ///< v_s [m/s] of the Coulomb law: delta = v_s dt (§4.9)
  /// Hunt-Crossley normal damping zeta [s/m] of PBFD (docs/methods/pbfd.md §4.2):
  /// f_n = C_perp d^alpha max(0, 1 + zeta d_dot), d_dot the penetration rate over the step; 0 = off
  double damping = 0;
  /// factor on the joint stops' own C (Model dof_limit_k > 0; a stop with 0 takes c_perp above):
  /// batch.randomize_limit_stiffness's per-rollout draw. PBD/PBFD reference engine only.
  double limit_scale = 1;
};

/// Whether the friction law adds a force at all: C_par != 0 (power law), mu != 0 (Coulomb).
inline bool friction_active(const ContactParams& cp) {
  return cp.friction == FrictionLaw::Coulomb ? cp.mu != 0 : cp.c_par != 0;
}

/// x^e with the default exponents (0, 1, 2: alpha = 2, beta = gamma = 1 and their +-1) as
/// products, bit-identical to std::pow there (one rounding at most); std::pow otherwise.
inline double powr(double x, double e) {
  if (e == 2) return x * x;
  if (e == 1) return x;
  if (e == 0) return 1;
  return std::pow(x, e);
}

/// Hunt-Crossley factor s = max(0, 1 - zeta eta / dt) of the normal force (docs/methods/pbfd.md §4.2):
/// eta = n . y is the cores' normal displacement since theta_n, so -eta / dt is the penetration rate.
inline double contact_damping_factor(double zeta, double eta, double dt) {
  const double s = 1 - zeta * eta / dt;
  return s > 0 ? s : 0;
}

/// Signed distance of a contact sphere centre c to plane (n, h0): phi = n^T c - h0 - r.
inline double sphere_plane_phi(const Vec3& c, double r, const Vec3& n, double h0) {
  return n.dot(c) - h0 - r;
}

/// PBD tangential energy e = |u|^(beta+1) d^(gamma+1) and its p-derivatives (docs/methods/pbfd.md §4.3).
struct TangentialEnergy {
  double e;
  Vec3 grad;   ///< grad_p e = -(f_par + f_star)
  Mat3 hess;   ///< grad_p^2 e (symmetric)
};

inline TangentialEnergy tangential_energy(const Vec3& u, double d, const Vec3& n,
                                          const ContactParams& cp) {
  const double b = cp.beta, g = cp.gamma, un = u.norm();
  const Mat3 Pt = Mat3::Identity() - n * n.transpose();
  const double ub1 = powr(un, b - 1);  // |u|^(beta-1); 1 at u = 0 when beta = 1
  const double ubp1 = powr(un, b + 1);
  const double dg = powr(d, g), dg1 = powr(d, g + 1);
  TangentialEnergy t;
  t.e = ubp1 * dg1;
  t.grad = (b + 1) * ub1 * dg1 * u - (g + 1) * ubp1 * dg * n;
  Mat3 slip = Pt;
  if (b != 1 && un > 0) slip += (b - 1) * (u / un) * (u / un).transpose();
  t.hess = (b + 1) * dg1 * ub1 * slip -
           (b + 1) * (g + 1) * dg * ub1 * (u * n.transpose() + n * u.transpose()) +
           g * (g + 1) * ubp1 * powr(d, g - 1) * n * n.transpose();
  return t;
}

/// PBFD friction force f_par = -(beta+1)|u|^(beta-1) d^(gamma+1) u and df_par/dp (docs/methods/pbfd.md §4.4,
/// exponent corrected per A1). The Jacobian is not symmetric: f_par has no energy.
struct FrictionForce {
  Vec3 f;
  Mat3 df_dp;
};

inline FrictionForce pbfd_friction(const Vec3& u, double d, const Vec3& n, const ContactParams& cp) {
  const double b = cp.beta, g = cp.gamma, un = u.norm();
  const Mat3 Pt = Mat3::Identity() - n * n.transpose();
  const double ub1 = powr(un, b - 1);
  const double dg = powr(d, g), dg1 = powr(d, g + 1);
  FrictionForce ff;
  ff.f = -(b + 1) * ub1 * dg1 * u;
  Mat3 slip = Pt;
  if (b != 1 && un > 0) slip += (b - 1) * (u / un) * (u / un).transpose();
  ff.df_dp = -(b + 1) * dg1 * ub1 * slip + (b + 1) * (g + 1) * dg * ub1 * u * n.transpose();
  return ff;
}

// Turning normal (contact_set.h: kappa != 0, n = (c_a - c_b)/|c_a - c_b| follows the core line).
// With x = c_a - c_b, y = x - x(theta_n), eta = n . y and u = P_t y, the normal turns as
// dn = kappa P_t dx, so u moves by du = s P_t dx - kappa n u^T dx with s = 1 - kappa eta, while
// dd = -n^T dx still (x is along n). The functions above hold n fixed (kappa = 0: plane and face
// normals, exact there); these add what the turning changes, derived from e(u(x), d(x)):
//   grad_x e = grad_p e - kappa eta a u,                          a = (beta+1)|u|^(beta-1) d^(gamma+1)
//   hess_x e = s^2 a S - s m (u n^T + n u^T) + q n n^T
//              - kappa [a s (u n^T + n u^T) + kappa a u u^T + c P_t]
// with S = P_t + (beta-1) u^ u^T (the "slip" matrix), m = (beta+1)(gamma+1)|u|^(beta-1) d^gamma,
// q = gamma(gamma+1)|u|^(beta+1) d^(gamma-1), c = (gamma+1)|u|^(beta+1) d^gamma. PBFD's force is the
// tangential part of -grad_x e, f = s f_par (so Eq. 13 = Eq. 6 minus f* on every contact, D7), with
//   df/dx = s df_par/dp + s kappa (eta a S + a n u^T) + kappa a u (s n + kappa u)^T.
// kappa = 0 leaves every value untouched (the callers skip these then).

/// grad_p e, hess_p e of t -> grad_x e, hess_x e for a turning normal (above).
inline void add_normal_turning(TangentialEnergy& t, const Vec3& u, double d, const Vec3& n, double kappa,
                               double eta, const ContactParams& cp) {
  const double b = cp.beta, g = cp.gamma, un = u.norm(), s = 1 - kappa * eta;
  const Mat3 Pt = Mat3::Identity() - n * n.transpose();
  const double ub1 = powr(un, b - 1), ubp1 = powr(un, b + 1);
  const double dg = powr(d, g), dg1 = powr(d, g + 1);
  const double a = (b + 1) * ub1 * dg1, mm = (b + 1) * (g + 1) * dg * ub1, c = (g + 1) * ubp1 * dg;
  Mat3 S = Pt;
  if (b != 1 && un > 0) S += (b - 1) * (u / un) * (u / un).transpose();
  const Mat3 un_sym = u * n.transpose() + n * u.transpose();
  t.grad -= kappa * eta * a * u;
  // hess_p e = a S - m (u n^T + n u^T) + q n n^T: replace the first two by their s-scaled forms
  t.hess += (s * s - 1) * a * S - (s - 1) * mm * un_sym -
            kappa * (a * s * un_sym + kappa * a * u * u.transpose() + c * Pt);
}

/// f_par, df_par/dp of ff -> the force s f_par and its x-derivative for a turning normal (above).
inline void add_normal_turning(FrictionForce& ff, const Vec3& u, double d, const Vec3& n, double kappa,
                               double eta, const ContactParams& cp) {
  const double b = cp.beta, g = cp.gamma, un = u.norm(), s = 1 - kappa * eta;
  const Mat3 Pt = Mat3::Identity() - n * n.transpose();
  const double a = (b + 1) * powr(un, b - 1) * powr(d, g + 1);
  Mat3 S = Pt;
  if (b != 1 && un > 0) S += (b - 1) * (u / un) * (u / un).transpose();
  ff.df_dp = s * ff.df_dp + s * kappa * (eta * a * S + a * n * u.transpose()) +
             kappa * a * u * (s * n + kappa * u).transpose();
  ff.f *= s;
}

/// Regularised Coulomb friction (docs/methods/pbfd.md §4.9) on the step's slip u (tangential, u . n = 0):
///   f = -mu f_n u / sqrt(|u|^2 + delta^2),  f_n = C_perp d^alpha (the §4.2 normal force),
/// delta = v_s dt, so |f| / f_n = mu |v| / sqrt(|v|^2 + v_s^2) with v = u / dt the slip velocity.
/// df_dp is df/dx for the contact's x (x = p for a point against a plane): with w = (|u|^2 + delta^2)^(-1/2),
/// df/du = -mu f_n A, A = w I - w^3 u u^T (symmetric; A n = w n as u . n = 0), and df/dd = -mu (df_n/dd) w u,
/// df_n/dd = C_perp alpha d^(alpha-1). With the turning normal of the block above (kappa, eta; 0 for a
/// fixed normal) du/dx = s P_t - kappa n u^T, s = 1 - kappa eta, and dd/dx = -n^T, so
///   df/dx = (df/du)(du/dx) + (df/dd)(dd/dx) = -mu f_n [s (w P_t - w^3 u u^T) - kappa w n u^T] + mu (df_n/dd) w u n^T.
/// f keeps its value under a turning normal (no s factor: there is no energy to differentiate, the size
/// is mu f_n by the law), and the Jacobian is not symmetric.
inline FrictionForce coulomb_friction(const Vec3& u, double d, const Vec3& n, const ContactParams& cp, double delta,
                                      double kappa = 0, double eta = 0) {
  const Mat3 Pt = Mat3::Identity() - n * n.transpose();
  const double w = 1 / std::sqrt(u.squaredNorm() + delta * delta), s = 1 - kappa * eta;
  const double fn = cp.c_perp * powr(d, cp.alpha), dfn = cp.c_perp * cp.alpha * powr(d, cp.alpha - 1);
  FrictionForce ff;
  ff.f = -cp.mu * fn * w * u;
  ff.df_dp = -cp.mu * fn * (s * (w * Pt - w * w * w * u * u.transpose())) + cp.mu * dfn * w * u * n.transpose();
  if (kappa != 0) ff.df_dp += cp.mu * fn * kappa * w * n * u.transpose();
  return ff;
}

/// Spurious normal push f* = (gamma+1)|u|^(beta+1) d^gamma n that PBFD drops (docs/methods/pbfd.md §4.4).
inline Vec3 spurious_normal_force(const Vec3& u, double d, const Vec3& n, const ContactParams& cp) {
  return (cp.gamma + 1) * powr(u.norm(), cp.beta + 1) * powr(d, cp.gamma) * n;
}

}  // namespace bigstep
