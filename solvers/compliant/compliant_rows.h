// The constraint rows of the compliant solver (docs/methods/compliant.md §4): for every
// row its deformation phi0, Jacobian row G = (d phi / d theta) (theta is Euclidean, N = I), the
// velocity-product term G^dot v0 and its stiffness K and damping B, all at (theta_n, v_n).
//   bilateral b   point-to-point loop closure: phi = p_a - p_b (3 rows, world axes), K, B per loop
//   unilateral u  joint-limit stop (core/joint_limit.h): phi = -depth, G = s e_k^T, G^dot = 0
//   normal n      geom contact (core/collision.h): G_n = n^T J, J = J_a(c_a) - J_b(c_b) (separating
//                 positive), phi_n = -d^{3/2} with K_n = E* sqrt(r) (Hertz, paper §6.4), -d with the
//                 secant K_n = E* sqrt(r d) (hertz_consistent), or -d with K_n given (linear)
//   tangents r, s G_r = t1^T J, G_s = t2^T J, K = 0 (memoryless Coulomb friction, §6.2), B = B_t
// Contacts that do not touch (depth < 0) are not rows (force exactly 0); a limit stop is a row
// when phi <= 0.
#pragma once
#include <vector>

#include "core/contact_set.h"

namespace bigstep {

/// Normal force law of a geom contact (docs/methods/compliant.md §4, ambiguity A4).
enum class NormalModel { Hertz, HertzConsistent, Linear };
const char* normal_model_name(NormalModel n);

/// One point-to-point loop closure: material point p_a of link_a coincides with p_b of link_b
/// (-1 = world, the point then in world coordinates). 3 bilateral rows phi = p_a - p_b.
struct CompliantLoop {
  int link_a = -1;
  Vec3 p_a = Vec3::Zero();  ///< link_a frame
  int link_b = -1;
  Vec3 p_b = Vec3::Zero();  ///< link_b frame
  double k = 0;             ///< K of each row [N/m], >= 0
  double b = 0;             ///< B of each row [N s/m], >= 0
};

/// The stiffness and damping of every row kind.
struct CompliantRowParams {
  NormalModel normal = NormalModel::Hertz;
  double youngs = 1e11;       ///< E* of Hertz contact [Pa]
  double k_n = 1e6;           ///< linear normal stiffness [N/m]
  double b_n = 1;             ///< normal damping B_n [N s/m]
  double point_radius = 0.01; ///< Hertz radius of a sharp core (box corner, radius-0 point) [m]
  double b_t = 0;             ///< friction damping B_r = B_s; 0 = 1e6 / h (paper)
  double k_lim = 1e8;         ///< joint-limit stiffness [N m/rad or N/m]
  double b_lim = 0;           ///< joint-limit damping
  bool gdot = true;           ///< include the M^_x G^dot_x v0 terms (include_Gdot_terms, §4)
  std::vector<CompliantLoop> loops;
};

/// The rows of one step in buffers sized at construction (no allocation in assemble). Row order of
/// the non-bilateral rows lambda* = [y; x]: y = [n (contacts, collide()'s order); u (stops)],
/// x = per contact with friction its tangents (r, s; r only when tdim = 1).
struct CompliantRows {
  CompliantRows(const Model& m, int nc_max, int n_loops);

  // bilateral rows (3 per loop)
  int nb = 0;
  MatX Gb;                    ///< (3 n_loop x n_q)
  VecX phib, gdb, Kb, Bb;     ///< (3 n_loop)
  // non-bilateral rows
  int nc = 0;                 ///< contacts that are rows (<= nc_max)
  int nl = 0;                 ///< limit stops that are rows
  int ny = 0;                 ///< nc + nl
  int tdim = 0;               ///< tangent rows per contact: 0 (no friction), 1 (2-D) or 2
  int nx = 0;                 ///< nc tdim
  int R = 0;                  ///< ny + nx
  MatX G;                     ///< (R_max x n_q)
  VecX phi, gd, K, B;         ///< (R_max) phi0 (0 for tangents), G^dot v0, K, B
  std::vector<int> con;       ///< (nc_max) contact set index of contact row i
  std::vector<Vec3> t1, t2;   ///< (nc_max) tangent directions of contact i
  VecX depth;                 ///< (nc_max) penetration of contact i [m]
  ContactSet set;             ///< the collision stage's contacts and stops at theta_n
  MatX Ja, Jb, J, Jp, Jm;     ///< (3 x n_q) scratch
};

/// Effective Hertz radius of contact c: 1 / (kappa_a + kappa_b) with kappa = 1/r of a sphere or
/// capsule core, 0 of a plane or box face; a radius-0 sphere counts as point_radius, and two flat
/// shapes touching (a box corner on a plane) as point_radius.
double contact_radius(const Model& m, const Contact& c, double point_radius);

/// Fills rows from the configuration of kin (forward_kinematics(theta) done) and, with gdot, of
/// kin_p / kin_m at theta +- eps v (central differences of J v: G^dot v = (J(theta + eps v) v -
/// J(theta - eps v) v) / (2 eps)). tdim: tangent rows per contact (0 drops friction). k_scale: the
/// rollout's factor on every contact-normal K (RolloutParams::stiffness_scale; limits and loops keep
/// theirs). Contacts past rows' capacity are dropped with STATUS_CONTACT_OVERFLOW in status.
void assemble_rows(const Model& m, const Kinematics& kin, const Kinematics* kin_p, const Kinematics* kin_m,
                   double eps, const VecX& theta, const VecX& v, const CompliantRowParams& p, double h, int tdim,
                   double k_scale, CompliantRows& rows, uint32_t& status);

/// Tangents of the 2-D form (docs/methods/compliant.md §7.3): t1 = e_x projected on the tangent plane (e_y if n is along
/// x), t2 = n x t1 (tangent_directions' first two).
void contact_tangents(const Vec3& n, Vec3& t1, Vec3& t2);

}  // namespace bigstep
