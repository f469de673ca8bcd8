// Contact frames for the Newton-Euler baselines: (sphere, plane) pairs with their normal,
// tangent directions and point Jacobian at the start of the step (pbfd.md §7, nmdp.md §4).
#pragma once
#include <vector>

#include "core/kinematics.h"
#include "solvers/stable_pd.h"

namespace bigstep {

/// Newton-Euler baseline settings (pbfd.md §7; nmdp.md §4, §8).
struct NeSettings {
  double dt = 1e-3;
  double mu = 0.5;                ///< Coulomb coefficient
  int friction_directions = 4;    ///< linearized cone edges (2 for planar x-z models)
  double active_distance = 1e-3;  ///< NE-LCP: a pair is a contact when phi <= this [m]
  double cfm = 1e-6;              ///< NE-LCP: compliance added to diag(G), relative to max diag(G)
  // NE-MDP polytope v^i = k_c (d^3 + zeta_s) (n + mu t^i), nmdp.md §4
  double k_c = 0;                 ///< 0 = W / (N_s d_ref^3), N_s = half the contact points
  double d_ref = 5e-3;            ///< [m]
  double zeta = 1e-3;             ///< zeta_s = zeta d_ref^3 (ghost-force cap, nmdp.md B5)
  /// NE-MDP with the stable PD: the metric of the kinetic energy the contact QP minimizes.
  /// true (default): M~ = H + dt K_d, the matrix through which the contact impulse acts, so the
  /// QP is MDP-consistent (it stops the contact points' normal approach, as without a servo).
  /// false: H, nmdp.md §8 read literally (departure, see ne_mdp.cpp). Same result without a servo.
  bool mdp_effective_metric = true;
};

void validate_ne_settings(const NeSettings& s);

struct ContactFrame {
  int sphere = 0, plane = 0;
  double phi = 0;         ///< signed distance (> 0 separated)
  Vec3 n;                 ///< unit normal (towards free space)
  std::vector<Vec3> t;    ///< unit tangent directions, evenly spread in the tangent plane
  MatX J;                 ///< (3 x n_q) Jacobian of the sphere's contact point
};

/// The smooth part of a semi-implicit Euler step, shared by the NE baselines: velocity
/// v = (theta - theta_prev)/dt, H(theta) factored, and with Tan's stable PD (nmdp.md §8)
///   M~ = H + dt K_d,  b = tau - c - grad V - K_p (theta + dt v - theta_bar) - K_d (v - theta_dot_bar),
///   v_free = v + dt M~^-1 b          (targets at t + dt; without a servo M~ = H, b = tau - c - grad V).
/// A contact impulse B w then gives v(w) = v_free + dt M~^-1 B w.
struct NeSmoothStep {
  MatX H;                  ///< (n_q x n_q) mass matrix H(theta)
  Eigen::LDLT<MatX> Hf;    ///< factor of H
  Eigen::LDLT<MatX> Mf;    ///< factor of M~ = H + dt K_d (a copy of Hf's matrix when pd is false)
  bool pd = false;         ///< a stable-PD servo is active (M~ != H)
  VecX v_free;             ///< (n_q)
  // scratch sized on first use (n_q), so that later steps do not allocate
  VecX th_bar, th_dot_bar, tmp;
  MatX Mt;
};

/// Checks sizes (throws InvalidArgument) and finiteness (returns false with STATUS_NONFINITE and
/// theta_next = theta held); otherwise fills out. tau may be empty (= 0).
bool ne_smooth_step(const Model& m, double dt, const VecX& theta, const VecX& theta_prev, const VecX& tau,
                    NeSmoothStep& out, uint32_t& status, VecX& theta_next);

/// Same with full controls u (constant torques + optional stable-PD servo, stable_pd.h); the
/// servo's targets are taken at u.t + dt. Gains of the wrong size throw InvalidArgument.
/// mass_scale: the rollout's link mass scales (RolloutParams::link_mass_scale), nullptr = 1.
bool ne_smooth_step(const Model& m, double dt, const VecX& theta, const VecX& theta_prev, const StepControl& u,
                    NeSmoothStep& out, uint32_t& status, VecX& theta_next, const double* mass_scale = nullptr);

/// Evenly spread unit tangents t_i = cos(2 pi i/k) t1 + sin(2 pi i/k) t2, with t1 the projection
/// of e_x on the tangent plane (e_y if n is along x) so that k = 2 stays in the x-z plane.
std::vector<Vec3> tangent_directions(const Vec3& n, int k);

/// Same into t[0 .. k) (k <= t.size()); does not allocate.
void tangent_directions(const Vec3& n, int k, std::vector<Vec3>& t);

/// Every (sphere, plane) pair with phi <= phi_max, in sphere-major order. kin at theta.
std::vector<ContactFrame> collect_contacts(const Model& m, const Kinematics& kin, double phi_max, int n_dirs);

/// Frames of every possible pair (spheres x planes), each with t (n_dirs) and J (3 x n_q) sized:
/// the buffer collect_contacts fills without allocating.
std::vector<ContactFrame> make_contact_buffer(const Model& m, int n_dirs);
/// Same as above into the leading frames of `buf` (from make_contact_buffer); returns their number.
int collect_contacts(const Model& m, const Kinematics& kin, double phi_max, int n_dirs, std::vector<ContactFrame>& buf);

}  // namespace bigstep
