// NMDP problem terms (docs/methods/nmdp.md §3-§6): the contact polytope of Eq. 5 (§4) and, for both
// discretizations, the kinetic-energy objective K, the dynamics residual G(theta, w) and its
// theta-Jacobian A (first order) or A-bar (zeroth order, §5.3):
//   NE-NMDP  (Eq. 6, §5):  K = 1/2 theta_dot^T H theta_dot,
//                          G = H theta_ddot + c + grad V - tau(theta) - B w
//   PBD-NMDP (Eq. 12, §6): K = 1/(2h^2) sum_j <T_j - T_j(theta_-), .>_j,
//                          G = grad I_alpha + grad V - tau(theta) - B w
// with theta_dot = (theta - theta_-)/h, theta_ddot = (theta_dot - theta_dot_-)/h (§3, B2),
// h = alpha dt_last, and B(theta) column (x, i) = J_x^T v_x^i, v_x^i = k_c s(d_x)(n + mu t^i).
// The NE-MDP baseline (§8) builds its B(theta_-) with the same polytope functions.
//
// Contacts: the candidate set C of a (sub)step is the contact set at theta_-
// (core/contact_set.h: collide() over the model's geoms, legacy points and planes included, plus
// the joint limits). A geom contact x acts through its sphere-swept cores: J_x = J_a(c_a) -
// J_b(c_b), so contact between two moving links puts +f on a and -f on b, and d_x(theta) =
// max(0, r_a + r_b - n . (c_a - c_b)) with n and t held for the substep (§4 "n, t frozen"). A
// joint stop (DOF k, direction s) is a frictionless candidate of its kind: one weight, generalised
// force s e_k k_c s(d), d = lo - theta_k or theta_k - hi (core/joint_limit.h).
// Joint terms (agreed formulas, a_k armature, b_k damping; both added to G and A, a also to K):
//   NE:  H -> H + diag(a), so G += a theta_ddot;  damping implicit at the (sub)step end: G += b theta_dot
//   PBD: G += a (theta - theta~)/h^2 + b theta_dot  (theta~ = (1 + alpha) theta_- - alpha theta_--,
//        the gradient of 1/2 a (theta - theta~)^2/h^2 + 1/2 b (theta - theta_-)^2/h)
// core/rnea does not include armature (it is added here); if it ever does, drop it here.
// Joint springs k_k (dof_stiffness, rest ref_k = dof_springref) join the potential V as
// V_s = 1/2 sum_k k_k (theta_k - ref_k)^2, in both forms exactly as gravity's grad V: evaluated at
// the unknown theta (implicit), G += k (theta - ref), A += diag(k), PBD merit0 += V_s.
#pragma once
#include <vector>

#include "core/contact_set.h"
#include "core/inertia.h"
#include "core/rnea.h"
#include "solvers/terms/ne_contact.h"
#include "solvers/terms/stable_pd.h"

namespace bigstep {

enum class NmdpForm { Ne, Pbd };            ///< Eq. 6 (Newton-Euler) or Eq. 12 (position-based)
enum class PgmMode { Fo, Zo };              ///< A (FOPGM) or A-bar (ZOPGM, Eq. 10-11)
enum class AccelDenominator { Recommended, Literal };  ///< theta_ddot over h (§3) or dt_last (Eq. 2)

const char* nmdp_form_name(NmdpForm f);
const char* pgm_mode_name(PgmMode m);

// ---------------------------------------------------------------------------------------
// Contact polytope (docs/methods/nmdp.md §4)
// ---------------------------------------------------------------------------------------

/// v_x^i = k_c s(d) (n + mu t^i),  s(d) = d^p + zeta_s  (p = depth_exponent, 3 [paper] or 4).
struct MdpPolytope {
  double k_c = 0;          ///< force scale [N/m^p]
  double zeta_s = 0;       ///< ghost cap zeta d_ref^3 [m^3] (B5)
  double mu = 0.5;         ///< friction coefficient
  int n_dirs = 4;          ///< V_x tangent directions (2 for planar x-z models)
  int depth_exponent = 3;  ///< p

  /// k_c s(d) for depth d >= 0; `ghost` says whether zeta_s applies to this point.
  double scale(double d, bool ghost) const;
  /// d (k_c s) / d d = k_c p d^(p-1) (0 for d <= 0).
  double dscale(double d) const;
};

/// k_c = contact.k_c, or W / (N_s d_ref^3) with N_s = half the contact points when it is 0;
/// zeta_s = zeta d_ref^3 (docs/methods/nmdp.md §4, B5).
/// mass_scale: link mass scales (core/inertia.h) of the weight W in the automatic k_c, nullptr = 1.
MdpPolytope make_mdp_polytope(const Model& m, const NeSettings& s, int depth_exponent = 3,
                              const double* mass_scale = nullptr);

/// Polytope vertices of one point, columns v^i = scale (n + mu t^i) (3 x n_dirs).
void mdp_vertices(const MdpPolytope& P, double scale, const Vec3& n, const std::vector<Vec3>& t,
                  Eigen::Ref<MatX> V);

/// B columns of one point: J^T v^i (n_q x n_dirs), J the 3 x n_q point Jacobian.
void mdp_columns(const MdpPolytope& P, const MatX& J, double scale, const Vec3& n, const std::vector<Vec3>& t,
                 Eigen::Ref<MatX> Bx);

/// Normal part n . f of one point's force f = sum_i w_i v^i = scale sum_i w_i (n + mu t^i): the
/// tangents t^i are orthogonal to n, so it is scale sum_i w_i (StepStats::normal_force).
inline double mdp_normal_force(double scale, const Eigen::Ref<const VecX>& w) { return scale * w.sum(); }

// ---------------------------------------------------------------------------------------
// One (sub)step's problem
// ---------------------------------------------------------------------------------------

/// What one NMDP (sub)step holds constant (§3): theta_-, theta_--, dt_last, h, torques and the
/// stable-PD targets at the substep's end time (§9).
struct NmdpStepInput {
  double h = 0;        ///< substep length alpha dt_last [s]
  double dt_last = 0;  ///< length of the last completed (sub)step [s]
  VecX theta_m;        ///< theta_-  (n_q)
  VecX theta_mm;       ///< theta_-- (n_q)
  VecX tau;            ///< constant torques (n_q)
  VecX kp, kd;         ///< PD gains (n_q), empty = no servo
  VecX theta_bar, theta_dot_bar;  ///< PD targets at the substep end time (n_q)
};

/// One contact candidate of a (sub)step, evaluated at a theta. Candidates are fixed for the
/// (sub)step (docs/methods/nmdp.md §4 "fixed set C"): a geom contact of the contact set at theta_- (its cores,
/// normal n and tangents frozen), or a joint-limit stop (frictionless, one weight). Slots: unit x
/// owns the weights w[off .. off + nv); geom slots x < max_contacts (nv = V), limit slots after
/// them (nv = 1); a slot without a candidate this substep has s = 0 and its weights stay 0.
struct NmdpContact {
  bool valid = false;   ///< a candidate this substep
  int dof = -1;         ///< joint-limit stop: DOF k (-1: a geom contact)
  double sgn = 0;       ///< limit: s (+1 lower stop, pushes theta_k up; -1 upper)
  int off = 0, nv = 0;  ///< weight columns w[off .. off + nv)
  Vec3 n = Vec3::UnitZ();  ///< geom: normal from b to a, held for the substep
  std::vector<Vec3> t;  ///< geom: tangents t^i (V), held for the substep
  bool ghost = false;   ///< zeta_s applies (depth(theta_-) >= -ghost_distance)
  double d = 0;         ///< penetration depth max(0, depth(theta))
  double s = 0;         ///< k_c s(d) (with the ghost cap when it applies)
  double ds = 0;        ///< d(k_c s)/dd
  MatX J, Ja, Jb;       ///< geom: (3 x n_q) J = J_a(c_a) - J_b(c_b) and its two parts
};

namespace detail {
/// A direction-like pair (M, v) of docs/methods/pbfd.md §2.3 (a pose derivative): ne_inertial_jacobian's scratch.
struct PosePair {
  Mat3 R = Mat3::Zero();
  Vec3 t = Vec3::Zero();
  PosePair& operator+=(const PosePair& o) {
    R += o.R;
    t += o.t;
    return *this;
  }
};
}  // namespace detail

/// The NMDP problem of one rollout: model, polytope, form and one substep's constants, with the
/// evaluations PGM needs. Caches kinematics of the last theta; not thread-safe.
class NmdpProblem {
 public:
  /// candidate_margin: collide() margin at theta_- that makes a pair a candidate (default: every
  /// pair, as the legacy sphere x plane loops had; see set_step).
  NmdpProblem(const Model& m, const MdpPolytope& poly, NmdpForm form,
              AccelDenominator accel = AccelDenominator::Recommended, double ghost_distance = 0,
              double candidate_margin = kEveryPair);
  static constexpr double kEveryPair = 1e300;

  /// Sets the (sub)step constants and fixes the candidates: ContactSet::update at theta_-.
  /// Ghost forces (zeta_s) apply this substep to the candidates with phi(theta_-) <=
  /// ghost_distance (fixed per substep so v stays smooth in theta).
  void set_step(const NmdpStepInput& in);
  const NmdpStepInput& step() const { return in_; }
  NmdpForm form() const { return form_; }
  const Model& model() const { return m_; }
  const MdpPolytope& polytope() const { return poly_; }
  void set_mu(double mu) { poly_.mu = mu; }
  /// The rollout's link mass scales (RolloutParams::link_mass_scale, nullptr = 1; not owned) and
  /// the polytope's k_c that goes with them (make_mdp_polytope with the same scales).
  void set_mass_scale(const double* s, double k_c) {
    have_A0_ = false;  // A's cached inertial part scales with the masses
    ms_ = s;
    poly_.k_c = k_c;
  }
  const double* mass_scale() const { return ms_; }
  /// Candidate slots: max_contacts geom slots, then n_limit limit slots (NmdpContact).
  int n_contacts() const { return n_slots_; }
  /// m = max_contacts V + n_limit (slot-major order; fixed, so w never reallocates).
  int n_w() const { return n_w_; }
  /// Geom contacts and limit stops that are candidates this substep.
  int n_geom_candidates() const { return set_.n_con; }
  int n_limit_candidates() const { return set_.n_lim; }
  /// The contact set found at theta_- (set_step).
  const ContactSet& contact_set() const { return set_; }

  /// Contact candidates at theta (d, scale, Jacobian).
  const std::vector<NmdpContact>& contacts(const VecX& theta);
  /// Summed normal part of the geom candidates' forces B(theta) w at theta (limit stops
  /// excluded): sum_x mdp_normal_force(k_c s(d_x), w_x) [N] (StepStats::normal_force).
  double normal_force(const VecX& theta, const VecX& w);

  /// B(theta) (n_q x m).
  void B(const VecX& theta, MatX& B);
  /// Polytope vertices of geom candidate x at theta (3 x V) and dv^i/dX = -k_c s'(d)(n + mu t^i) n^T.
  void vertices(const VecX& theta, int x, MatX& V, std::vector<Mat3>& dV_dX);

  /// tau(theta) = tau_const - K_p (theta - theta_bar) - K_d ((theta - theta_-)/h - theta_dot_bar).
  VecX torque(const VecX& theta) const;

  /// K(theta) (§5.1 / §6), plus the servo term when set_servo_metric(true).
  double K(const VecX& theta);
  /// g_K and the PSD model Q_K: NE Gauss-Newton sum_j <W_k,j, W_l,j> (B11), PBD H/h^2.
  void K_derivatives(const VecX& theta, VecX& g, MatX& Q);
  /// Departure option (default off = docs/methods/nmdp.md §5-§6): add 1/2 sum_i (K_p + K_d/h)_i (theta -
  /// theta_-)_i^2 = h^2/2 theta_dot^T diag(K_p + K_d/h) theta_dot to K, i.e. measure theta_dot in
  /// the metric H + h K_d + h^2 K_p of A's leading part. The MDP stationarity dK/dw = 0 then
  /// asks the contact points to stop (J theta_dot = 0) even while a stiff servo drives the joints;
  /// with the kinetic energy alone the cheapest way to shed energy is to let the servo push the
  /// feet into the ground. The NMDP counterpart of NE-MDP's contact.mdp_metric = effective.
  void set_servo_metric(bool on) { servo_metric_ = on; }
  /// The rollout's rotation charts (core/chart.h) for every kinematics and RNEA pass of the problem.
  void bind_chart(const Mat3* chart) { kin_.chart = kin_a_.chart = rnea_ws_.chart = chart; }
  /// NE only: T_dot_j (per link) and W_{k,j} = d T_dot_j / d theta_k (at [j * n_q + k]).
  void velocity_frames(const VecX& theta, std::vector<Mat3>& Rd, std::vector<Vec3>& td,
                       std::vector<Mat3>& WR, std::vector<Vec3>& Wt);

  /// G(theta, w) (n_q).
  void G(const VecX& theta, const VecX& w, VecX& G);
  /// A = dG/dtheta (Fo) or A-bar = A + sum_x J_x^T (d f_x/dX) J_x (Zo, §5.3).
  void A(const VecX& theta, const VecX& w, PgmMode mode, MatX& A);
  /// sum_x J_x^T (d f_x/dX) J_x with f_x = sum_i w_x,i v_x^i: the part Zo drops.
  void contact_dv_term(const VecX& theta, const VecX& w, MatX& T);

  /// PBD only: the energy E = I_alpha + V - theta^T tau_const + PD energy whose gradient is
  /// G(theta, 0). NE: 1/2 |G(theta, 0)|^2. Merit of the first projection's line search (§7.6).
  double merit0(const VecX& theta);

 private:
  void update(const VecX& theta, bool derivatives);  // kinematics (+ link derivatives, contacts)
  void add_contact_jacobian(const VecX& w, bool with_dv, MatX& A);  // A -= d(Bw)/dtheta pieces
  void add_contact_force(const VecX& w, VecX& G);                    // G -= B w
  Vec3 weighted_direction(int x, const VecX& w) const;               // u_x = sum_i w_x,i (n + mu t^i)
  void link_velocity(int j, const VecX& qd, Mat3& R, Vec3& t) const;  // T_dot_j (needs derivatives)
  double inertia_dt() const;  // denominator sqrt(h hd) of I_alpha
  double kinetic(const VecX& theta);                                  // K without the servo term
  void kinetic_derivatives(const VecX& theta, VecX& g, MatX& Q);
  void ne_inertial_jacobian(MatX& A);  // d(H theta_ddot + c)/dtheta at theta_ (needs derivatives)
  double limit_depth(const NmdpContact& x, const VecX& theta) const;  // depth of a limit stop
  void add_joint_terms(const VecX& theta, VecX* G, MatX* A) const;    // armature, damping, springs
  void sub_torque(const VecX& theta, VecX& G) const;                  // G -= tau(theta)
  void add_dv_term(int x, const VecX& w, double sign, MatX& A);       // A -= sign J^T (df/dX) J

  const Model& m_;
  MdpPolytope poly_;
  NmdpForm form_;
  AccelDenominator accel_;
  double ghost_distance_;
  bool servo_metric_ = false;
  const double* ms_ = nullptr;  // link mass scales of the current rollout
  double candidate_margin_;
  int n_slots_, n_w_;
  NmdpStepInput in_;
  VecX theta_dot_m_;                 // (theta_- - theta_--)/dt_last
  VecX theta_tilde_;                 // (1 + alpha) theta_- - alpha theta_--: armature's anchor (PBD)
  InertiaAnchor anchor_I_, anchor_K_;
  ContactSet set_;                   // candidates found at theta_- (set_step)
  // cache at theta_
  Kinematics kin_, kin_a_;
  VecX theta_;
  bool have_kin_ = false, have_deriv_ = false;
  bool have_A0_ = false;             // A0_ holds A's w-independent part at theta_
  MatX A0_;                          // (n_q x n_q) inertia + gravity + joint + servo part of A
  std::vector<NmdpContact> pairs_;   // (n_slots)
  // scratch sized at construction (no allocation in a step)
  VecX qd_, qdd_, tmp_, tmp2_, g0_, w0_;
  MatX JtP_;
  std::vector<Mat3> Rd_, WR_;
  std::vector<Vec3> td_, Wt_;
  std::vector<int> path_;
  std::vector<Vec3> om_;
  std::vector<detail::PosePair> dT_, Ud_, Ua_, Qd_, Y_;
  RneaScratch rnea_ws_;  // the NE form's H theta_ddot + c + grad V without allocation
};

}  // namespace bigstep
