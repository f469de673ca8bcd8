// Contact frames for the Newton-Euler baselines: the contact set's geom contacts (any pair of
// geoms, body-body included) with their normal, tangent directions and relative core Jacobian, and
// its joint-limit stops, at the start of the step (docs/methods/newton_euler.md §2, docs/methods/nmdp.md §4); and the smooth part of
// the step with armature, damping and the stable-PD servo.
#pragma once
#include <vector>

#include "core/contact_set.h"
#include "core/crba.h"
#include "core/kinematics.h"
#include "core/rnea.h"
#include "solvers/terms/stable_pd.h"

namespace bigstep {

/// Newton-Euler baseline settings (docs/methods/newton_euler.md §2; docs/methods/nmdp.md §4, §8).
struct NeSettings {
  double dt = 1e-3;
  double mu = 0.5;                ///< Coulomb coefficient
  int friction_directions = 4;    ///< linearized cone edges (2 for planar x-z models)
  double active_distance = 1e-3;  ///< NE-LCP: a pair is a contact when phi <= this [m]
  /// NE-LCP speculative contacts: a pair (or stop) is also a row when the free velocity brings it
  /// within active_distance during the step, phi + 2 h min(n^T J v_free, 0) <= active_distance
  /// (ne_lcp.cpp); false = the plain rule phi <= active_distance alone
  bool speculative = true;
  /// NE-LCP: at most this many extra LCP solves per step that freeze each contact's nonlinear
  /// remainder gap(theta + h v+) - (phi + h n^T J v+) in its row (ne_lcp.cpp); 0 = first order only
  int relinearizations = 3;
  double cfm = 1e-6;              ///< NE-LCP: compliance added to diag(G), relative to max diag(G)
  /// NE-LCP: the largest separation speed the position correction may ask of a penetrating row
  /// (m/s for contacts; rad/s or m/s for joint-limit stops); 1e9 (or inf) = the literal -depth / dt
  double max_correction_speed = 0.1;
  // NE-MDP polytope v^i = k_c (d^3 + zeta_s) (n + mu t^i), docs/methods/nmdp.md §4
  double k_c = 0;                 ///< 0 = W / (N_s d_ref^3), N_s = half the contact points
  double d_ref = 5e-3;            ///< [m]
  double zeta = 1e-3;             ///< zeta_s = zeta d_ref^3 (ghost-force cap, docs/methods/nmdp.md B5)
  /// NE-MDP with the stable PD: the metric of the kinetic energy the contact QP minimizes.
  /// true (default): M~ = H + dt K_d, the matrix through which the contact impulse acts, so the
  /// QP is MDP-consistent (it stops the contact points' normal approach, as without a servo).
  /// false: H, docs/methods/newton_euler.md §3 read literally (departure, see ne_mdp.cpp). Same result without a servo.
  bool mdp_effective_metric = true;
};

void validate_ne_settings(const NeSettings& s);

/// One geom contact as the NE baselines' constraint rows see it, from the contact set
/// (core/contact_set.h) at the start of the step: gap phi = -depth, normal n (from b to a),
/// tangents from n (tangent_directions) and J = J_a(c_a) - J_b(c_b), the relative velocity of the
/// two cores (contact_core_jacobians). An impulse J^T p acts +p on link a and -p on link b, so
/// body-body contacts work as well as contacts with the world (b = world, J_b = 0).
struct ContactFrame {
  int contact = 0;        ///< index into the ContactSet's con
  double phi = 0;         ///< signed distance (> 0 separated) = -depth
  Vec3 n;                 ///< unit normal (towards free space of a)
  std::vector<Vec3> t;    ///< unit tangent directions, evenly spread in the tangent plane
  MatX J;                 ///< (3 x n_q) J_a(c_a) - J_b(c_b)
};

/// The contacts of one step for the NE baselines: the contact set (geom contacts and joint limits)
/// and the frames of its geom contacts, in buffers sized from the Model (m.max_contacts frames,
/// m.n_limit stops): update() does not allocate.
struct NeContacts {
  NeContacts(const Model& m, int n_dirs);
  ContactSet set;                     ///< set.lim[0 .. n_lim): joint-limit stops (dof, s, depth)
  std::vector<ContactFrame> frames;   ///< (max_contacts) first n_con valid
  int n_con = 0;                      ///< geom contacts
  int n_lim = 0;                      ///< joint-limit stops
  MatX Ja, Jb;                        ///< (3 x n_q) scratch of contact_core_jacobians
  std::vector<double> link_reach;     ///< (n_link) bound on |x| over the link's geoms' points (link
                                      ///< frame); inf for a plane on a link

  /// Contacts and stops with phi = -depth <= phi_max at theta (kin: forward_kinematics(theta) done),
  /// in the contact set's order (collide's pair order, then limited DOFs in index order).
  void update(const Model& m, const Kinematics& kin, const VecX& theta, double phi_max, int n_dirs);

  /// Speculative set of a step of h: the contacts and stops that are active (phi <= phi_0) or that
  /// the velocity v brings within phi_0 by the end of the step, predicted with a safety factor k:
  ///   phi + k h min(n^T J v, 0) <= phi_0          (stops: n^T J v = s v_k).
  /// kin_next: forward_kinematics(theta + h v) done; it bounds how far any geom point moves, which
  /// sets the collision margin of the candidates. Same order as update() among the kept ones.
  void update_speculative(const Model& m, const Kinematics& kin, const Kinematics& kin_next, const VecX& theta,
                          const VecX& v, double h, double phi_0, double k, int n_dirs);

 private:
  void fill_frame(const Model& m, const Kinematics& kin, int i, int n_dirs);
};

/// The smooth part of a semi-implicit Euler step, shared by the NE baselines: velocity
/// v = (theta - theta_prev)/dt, the mass matrix with armature H = H_crba(theta) + diag(a), and the
/// implicit (backward Euler) damping b and stable-PD damping K_d (docs/methods/newton_euler.md §3) in
///   M~ = H + dt diag(b) + dt K_d,
///   f  = tau - c - grad V - b .* v - k .* (theta - ref) - K_p (theta + dt v - theta_bar) - K_d (v - theta_dot_bar),
///   v_free = v + dt M~^-1 f          (targets at t + dt; without damping and servo M~ = H).
/// The joint spring k (dof_stiffness, ref = dof_springref) is explicit at theta (MuJoCo's Euler).
/// This is (H + dt B + dt K_d) v+ = H v + dt (tau - c - ...) of common.md's agreed damping form.
/// A contact impulse B w then gives v(w) = v_free + dt M~^-1 B w: damping and armature are part of
/// the matrix through which contact impulses act (and of the contact Delassus operator).
/// Every buffer is sized from the Model (crba / rnea scratch, LDLT): a step does not allocate.
struct NeSmoothStep {
  explicit NeSmoothStep(const Model& m);
  MatX H;                  ///< (n_q x n_q) mass matrix H(theta) + diag(a)
  MatX Mt;                 ///< (n_q x n_q) M~ (equal to H when neither damping nor servo)
  Eigen::LDLT<MatX> Mf;    ///< factor of M~
  bool pd = false;         ///< a stable-PD servo is active
  bool damped = false;     ///< some DOF has damping b_k > 0 (M~ != H)
  VecX v_free;             ///< (n_q)
  // scratch (n_q)
  VecX v, f, th_bar, th_dot_bar, tmp;
  CrbaScratch crba;
  RneaScratch rnea;
  /// The rollout's rotation charts for H and the bias forces (core/chart.h).
  void bind_chart(const Mat3* chart) { crba.kin.chart = rnea.chart = chart; }
};

/// Fills out at (theta, theta_prev) with controls u (constant torques + optional stable-PD servo,
/// stable_pd.h; the servo's targets are taken at u.t + dt). The inputs are those of
/// Integrator::step, already checked (sizes, finite, no gimbal lock); gains of the wrong size throw
/// InvalidArgument. mass_scale: the rollout's link mass scales (RolloutParams::link_mass_scale), nullptr = 1.
void ne_smooth_step(const Model& m, double dt, const VecX& theta, const VecX& theta_prev, const StepControl& u,
                    NeSmoothStep& out, const double* mass_scale = nullptr);

/// Evenly spread unit tangents t_i = cos(2 pi i/k) t1 + sin(2 pi i/k) t2, with t1 the projection
/// of e_x on the tangent plane (e_y if n is along x) so that k = 2 stays in the x-z plane.
std::vector<Vec3> tangent_directions(const Vec3& n, int k);

/// Same into t[0 .. k) (k <= t.size()); does not allocate.
void tangent_directions(const Vec3& n, int k, std::vector<Vec3>& t);

}  // namespace bigstep
