// Inverse dynamics with rigid contact and friction (docs/methods/inverse_dynamics.md; paper:
// Zapolsky & Drumwright). Given (q, v), desired joint accelerations and the contacts, compute the
// actuator torques tau and the contact impulses together, so that one velocity-level step of the
// rigid-contact model realizes the desired joint velocities qdot_des = P v + dt qdd_des (§2, (39)).
// Three models (one file each): A no-slip LCP (id_nslip.h), B Coulomb LCP
// (id_coulomb.h), C convex two-stage QP (id_convex.h). This header holds
// their shared interface: the problem (§2 conventions, not the paper's signs: docs/methods/inverse_dynamics.md §11 I1), the result,
// the per-rollout workspace and the block elimination of §3 that every model uses.
//
// Block elimination (§3 [derived]) with P a selector of the actuated coordinates ("q") and the
// unactuated ones ("b", floating base or held object): L L^T = M_bb,
//   y0 = L^-1 (kappa_b - M_bq qdot_des),   G = L^-1 J_{c,b}^T   (nb x rows),
//   v+_q = qdot_des,  v+_b = L^-T (y0 + G z),   dt tau = (M v+ - kappa - J_c^T z)_q,
// so the contact-space operator J_c 𝒫 J_c^T = G^T G never needs M^-1 (rank <= nb).
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "core/types.h"
#include "solvers/terms/ne_contact.h"
#include "numerics/lcp_lemke.h"
#include "numerics/qp_dense.h"

namespace bigstep {

/// Which inverse-dynamics model (docs/methods/inverse_dynamics.md §7 names).
enum class IdKind {
  LcpInf,  ///< A: no-slip MLCP -> PSD LCP (ID_{LCP,inf})
  LcpMu,   ///< B: Coulomb MLCP -> copositive LCP, pyramid k = 4 (ID_{LCP,mu})
  QpMu,    ///< C: Stage I + Stage II QPs with the pyramid (ID_{QP,mu})
  QpInf,   ///< C without the pyramid row (ID_{QP,inf})
};
const char* id_kind_name(IdKind k);

/// Status bits of one solve (IdResult::status); 0 = solved as the model states.
enum : uint32_t {
  ID_LEMKE_FALLBACK = 1u << 0,  ///< A: the pivoting method failed (cycle / it_max), Lemke solved
  ID_REGULARIZED = 1u << 1,     ///< a Tikhonov-regularized LCP (Q + eps I) was solved (§4.6)
  ID_INFEASIBLE = 1u << 2,      ///< the plan is incompatible with the contacts (I14): repaired
  ID_SLIP = 1u << 3,            ///< A: a contact row is violated after the solve (§4.3 check)
  ID_FAILED = 1u << 4,          ///< no solution, not even the repair: tau = contact-free torques
  ID_NONFINITE = 1u << 5,       ///< non-finite input: tau = 0
  ID_PLANNED_UNACTUATED = 1u << 6,  ///< A, B with IdProblem::vb_des: solved as model C (see id_solve)
  /// The solution's impulses exceed the problem's physical bound (id_impulse_bound): B solved as
  /// model C; A solved as model C at mu = inf (the cone's limit); C's Stage I re-solved with the
  /// bound as rows, its Stage II dropped for Stage I. A and C check it with
  /// IdProblem::friction_needs_load only (the paper's rows are unbounded friction by definition).
  ID_IMPULSE_BOUND = 1u << 7,
  /// Controller level (IdControllerState::status, control/inverse_dynamics/id_controller.h): the torque of some
  /// actuated DOF was clamped to its actuator limit (actuator ctrlrange or controller.tau_max).
  ID_TORQUE_CLAMPED = 1u << 8,
  /// Controller level: the torques came out non-finite or, after the actuator limits, beyond the
  /// model's divergence bound (control/control_bound.h): the controller has left the physical
  /// range, whatever the state does next. The run loops stop the rollout (STATUS_CONTROL_DIVERGED).
  ID_DIVERGED = 1u << 9,
};

/// One problem (§2, §3). Rows of N, S, T are the generalized wrenches of the unit normal and two
/// orthogonal unit tangents of each contact (n x m). mu: per contact, +inf allowed (A ignores it).
/// ids: persistent contact ids (warm start of model A, §4.4), empty = the row index.
struct IdProblem {
  Eigen::Ref<const MatX> M;         ///< (m x m) SPD generalized inertia at t0
  Eigen::Ref<const VecX> kappa;     ///< (m) M v + dt f_ext
  Eigen::Ref<const VecX> qdot_des;  ///< (nq) P v + dt qdd_des
  Eigen::Ref<const MatX> N, S, T;   ///< (n x m)
  Eigen::Ref<const VecX> phi;       ///< (n) signed distances at t0 (> 0 separated)
  Eigen::Ref<const VecX> mu;        ///< (n)
  double dt = 1e-3;
  std::span<const int> ids = {};
  /// mu = inf as the limit of the cone (friction only where the normal impulse is positive)
  /// instead of the paper's unbounded tangential rows: model A keeps the tangent rows of loaded
  /// contacts only, QP,inf bounds its pyramid at kIdQpMuInf. The ID controllers set it (without it
  /// id_lcp_inf / id_qp_inf fall on the trot, see id_nslip.cpp); the §10 oracles
  /// test the paper's models (false).
  bool friction_needs_load = false;
  /// Planned velocity of the unactuated coordinates at t0 + dt (nb values in
  /// IdWorkspace::unactuated() order), or empty: the paper's free unactuated block (§3). Given (a
  /// held object's plan: the box follows the hand), model C's Stage I minimizes the kinetic energy
  /// relative to the planned motion, 1/2 (v+ - v_d)^T M (v+ - v_d) with v_d = [qdot_des; vb_des],
  /// instead of 1/2 v+^T M v+: the contact impulses bring the object to its plan as far as the
  /// friction cone allows (linear term G^T (y0 - L^T vb_des) instead of G^T yk) [ours]. Without it
  /// a grasp's squeeze is an internal force no model asks for and the object drops (see
  /// configs/id_arm_grasp.yaml). Models A and B then solve as model C (id_solve).
  std::span<const double> vb_des = {};
  /// The friction coefficient that stands for mu = inf in QP,inf's pyramid rows with
  /// friction_needs_load (and in model A's with vb_des); 0 = kIdQpMuInf (id_convex.h).
  double mu_inf = 0;
};

/// Per-rollout result and carry. Impulses are N s; forces = impulses / dt.
struct IdResult {
  VecX tau;          ///< (nq) actuator forces [N m]
  VecX v_plus;       ///< (m) velocity at t0 + dt
  VecX f_n;          ///< (n) normal impulses
  VecX f_s, f_t;     ///< (n) signed tangential impulses along S, T
  uint32_t status = 0;
  int iterations = 0;  ///< pivots (A, B) or QP iterations (C)
  int n = 0;           ///< contacts of the last solve
  /// A: ids of the contacts that carried force in the last solve (the warm start of the next)
  std::vector<int> support;
  int n_support = 0;
};

/// Sum of the normal forces of r [N] (impulses over dt).
double id_normal_force(const IdResult& r, double dt);

/// Shared buffers of every model, sized once for (m, actuated set, n_max contacts): a solve does
/// not allocate. One per rollout (docs/architecture.md §4: per-rollout state in Data, not in solver objects).
class IdWorkspace {
 public:
  /// actuated: indices of the actuated coordinates (P's rows), strictly increasing, in [0, m).
  IdWorkspace(int m, std::span<const int> actuated, int n_max);

  int m() const { return m_; }
  int nq() const { return nq_; }
  int nb() const { return nb_; }
  int n_max() const { return n_max_; }
  const std::vector<int>& actuated() const { return act_; }
  const std::vector<int>& unactuated() const { return una_; }
  /// Sizes the result's vectors (n_max entries for the contact ones): call once per rollout.
  void init_result(IdResult& r) const;

  // ---- shared stages (used by the model files) ----
  /// Start of every model: clears r.status and r.iterations, check(p) and factor(p). False (and
  /// r flagged ID_NONFINITE, plus ID_FAILED for a singular M_bb, tau = 0) when the solve cannot start.
  bool begin(const IdProblem& p, IdResult& r);
  /// No solution at all: ID_FAILED, z = 0 and v+_q = qdot_des (the contact-free torques).
  void fail(const IdProblem& p, IdResult& r);
  /// Checks sizes (InvalidArgument naming the field) and finiteness (false = non-finite).
  bool check(const IdProblem& p) const;
  /// Factors M_bb, forms y0 and yk = L^-1 kappa_b, B = L^-1 M_bq.
  bool factor(const IdProblem& p);
  /// Stacks contact rows J_c: pyramid = false: [N; S; T] (3n, model A), true: [N; S; -S; T; -T]
  /// (5n, models B, C); forms G = L^-1 J_{c,b}^T and jv = J_{c,q} qdot_des + G^T y0 (= J_c v*).
  void contact_rows(const IdProblem& p, bool pyramid);
  /// v+, tau and the per-contact impulses from z (rows of contact_rows) and v+_q = vq.
  void finish(const IdProblem& p, Eigen::Ref<const VecX> z, Eigen::Ref<const VecX> vq, IdResult& r);
  /// The repair QP of §4.3 (46)-(50) with slacks (I10, I14): minimize 1/2 |v+_q - qdot_des|^2 +
  /// rho/2 |s|^2 (+ rho/2 |tangential velocity|^2 for the no-slip model) + eps/2 |z|^2 subject to
  /// the unactuated dynamics, N v+ + s >= -phi/dt, s >= 0, f_N >= 0 and the model's friction rows.
  /// Always feasible. Requires contact_rows(p, pyramid) done. Returns false if the QP fails.
  bool repair(const IdProblem& p, bool pyramid, bool bounded, IdResult& r);

  // ---- buffers (public for the model files; sized at construction) ----
  int m_, nq_, nb_, n_max_;
  std::vector<int> act_, una_;
  int n = 0, rows = 0;    ///< contacts and contact rows of the current problem
  MatX L;                 ///< (nb x nb) Cholesky factor of M_bb (lower)
  MatX B;                 ///< (nb x nq) L^-1 M_bq
  VecX y0, yk;            ///< (nb)
  MatX Jc;                ///< (5 n_max x m) contact rows
  MatX G;                 ///< (nb x 5 n_max) L^-1 J_{c,b}^T
  VecX jv;                ///< (5 n_max) J_c v*
  VecX z;                 ///< (6 n_max) unknowns of the models
  VecX vq, vb, g, tmp;    ///< (nq), (nb), (m), (m)
  // LCP (model A fallback, model B): (6 n_max)
  LcpWorkspace lcp;
  MatX Q;                 ///< (6 n_max x 6 n_max)
  VecX r, w;              ///< (6 n_max)
  // QP (model C stages, repair)
  QpWorkspace qp;
  QpResult qres;
  MatX Hq, Aq, Eq;        ///< QP Hessian, inequality rows, (empty) equality rows
  VecX cq, bq, eq, lbq, ubq;
  VecX xrow;              ///< (nx) one constraint row of the repair QP
  // model A: row selection, contact-space pivoting
  MatX U, R;              ///< (nb x nb) orthonormal basis of the selected tangent columns, G_sel = U R
  std::vector<int> sel;   ///< selected tangent rows (indices into Jc)
  MatX H;                 ///< (nb x n_max) (I - U U^T) G_N
  VecX ystar;             ///< (nb)
  MatX K;                 ///< (nb x nb) Cholesky of H_S^T H_S
  std::vector<int> S_set, S_tmp;
  std::vector<int> warm;        ///< (n_max) warm-start support of the pivoting (indices)
  std::vector<uint8_t> tmask;   ///< (n_max) contacts whose tangent rows model A may select
  std::vector<uint64_t> seen;
  std::vector<uint8_t> flag;
  VecX zs, gam, a;        ///< (nb) each, scratch of the pivoting
  VecX ev, uy;            ///< (nb) each: R^-T e and U^T y0 of model A
  VecX yd;                ///< (nb) L^T vb_des (model C with a planned unactuated velocity)
  // model C: nullspace basis of G (Stage II)
  MatX Wn;                ///< (5 n_max x 5 n_max) columns [r, rows): orthonormal basis of null(G)
  MatX Kt;                ///< (nq x 5 n_max)
  VecX hv;                ///< (5 n_max) Householder scratch
  std::vector<int> perm;
  MatX QR;                ///< (5 n_max x nb) Householder QR of G^T
  // model B: minimum-torque selection among the LCP's solutions (id_coulomb.cpp)
  std::vector<int> bvar;  ///< (5 n_max) z entry of each free variable (a sliding contact: its f_N)
};

/// Actuated coordinates of a model for inverse dynamics: every DOF except those of floating and
/// planar joints (the free base, or a held object's free joint).
std::vector<int> id_actuated_dofs(const Model& m);

/// The problem data of a Model at (theta, v) (§2, §3): M = H(theta) + diag(armature),
/// kappa = M v - dt (c(theta, v) + grad V(theta) + b .* v) (f_ext: gravity, Coriolis, joint damping),
/// and the contact rows of the contact set with phi <= phi_max: N = n^T J, S = t1^T J, T = t2^T J
/// (t1, t2 the first two of the 4 evenly spread tangents, so F = [S; -S; T; -T] is the k = 4
/// pyramid), ids = geom_a * n_geom + geom_b (persistent for point contacts). Buffers sized from the
/// Model: update() does not allocate.
struct IdTerms {
  explicit IdTerms(const Model& m);
  Kinematics kin;
  NeContacts con;
  CrbaScratch crba;
  RneaScratch rnea;
  MatX M;            ///< (n_q x n_q)
  VecX kappa, bias;  ///< (n_q)
  MatX N, S, T;      ///< (max_contacts x n_q), first n rows valid
  VecX phi, mu;      ///< (max_contacts)
  std::vector<int> ids;
  int n = 0;
  /// geom_mu (n_geom, or nullptr = mu_all): per-contact mu, contact (a, b) uses geom_mu[a].
  void update(const Model& m, const VecX& theta, const VecX& v, double dt, double mu_all, double phi_max,
              const double* mass_scale = nullptr, const double* geom_mu = nullptr);
  /// Views of the first n contacts with the given desired joint velocity (nq) and dt.
  IdProblem problem(const VecX& qdot_des, double dt) const;
};

/// max(-min z, -min w, max |z_i w_i|) of w = Q z + r (w is overwritten): the violation of the LCP
/// (Q, r) by z, used to vet Tikhonov-regularized solutions against the original LCP.
double lcp_violation(Eigen::Ref<const MatX> Q, Eigen::Ref<const VecX> r, Eigen::Ref<const VecX> z, Eigen::Ref<VecX> w);

/// Physical bound of a model's contact impulses (ID_IMPULSE_BOUND) for the problem in ws
/// (factor and contact_rows done): n m_b u [N s] (the .cpp derives it), m_b the largest diagonal
/// entry of M_bb, u the largest no-impulse contact speed |J_c v* (+ phi/dt)|. Models A and C hold
/// the summed friction impulse to it and the summed normal impulse to it / min(1, mu_min) (the
/// squeeze that friction of that size needs); model B the normal impulse to kIdImpulseBound and the
/// friction to kIdFrictionBound times it (id_coulomb.cpp).
double id_impulse_bound(const IdProblem& p, const IdWorkspace& ws);
inline constexpr double kIdImpulseBound = 1;
inline constexpr double kIdFrictionBound = 0.25;
/// z: impulses in the rows of contact_rows (pyramid: [f_N; f_F] (5n), else [f_N; f_S; f_T] (3n)).
/// True when the summed normal impulse exceeds bound_n or the summed friction impulse (sum f_F, or
/// sum |f_S| + |f_T|) exceeds bound_f.
bool id_exceeds_impulse_bound(const IdWorkspace& ws, Eigen::Ref<const VecX> z, double bound_n, double bound_f);

/// Classical inverse dynamics with a known generalized contact impulse g (m): §3's block
/// elimination, v+_q = qdot_des, v+_b = M_bb^-1 (kappa_b + g_b - M_bq qdot_des), dt tau =
/// (M v+ - kappa - g)_q. Used by the ID(t_{i-1}), ID(t_{i-2}) controllers (§9). r.n = 0.
void id_given_impulse(const IdProblem& p, Eigen::Ref<const VecX> g, IdWorkspace& ws, IdResult& r);

/// Solves p with model `kind` (dispatch to the model files). Never throws for an infeasible plan
/// (flagged in r.status); throws InvalidArgument for wrong sizes.
void id_solve(IdKind kind, const IdProblem& p, IdWorkspace& ws, IdResult& r);

}  // namespace bigstep
