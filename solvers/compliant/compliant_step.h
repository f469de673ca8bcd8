// Drumwright's L-stable compliant constraint solver (docs/methods/compliant.md §3-§8,
// paper "unconditionally stable first-order constraint solver"): every constraint row is an
// implicit spring-damper in constraint space, lambda = -K phi - B phi_dot - M^_x G^dot_x v (15)/(23);
// one linear solve (bilateral rows only) or one strictly convex program per step (unilateral rows,
// contacts with a true Coulomb cone), then one semi-implicit Euler step (36)-(37).
// Rows (solvers/compliant/compliant_rows.h): point-to-point loop closures (bilateral, b), joint limits
// (generic unilateral, u), geom contacts from the collision stage (normal n, tangents r, s).
#pragma once
#include <vector>

#include "solvers/compliant/compliant_reduced_qp.h"
#include "solvers/compliant/compliant_rows.h"
#include "numerics/cone_qp.h"
#include "solvers/integrator.h"
#include "solvers/terms/ne_contact.h"
#include "numerics/qp_dense.h"

namespace bigstep {

/// How the friction rows are solved (docs/methods/compliant.md §7.5).
enum class FrictionSolve {
  Staggered,  ///< default: block Gauss-Seidel, N-step (§6 QP) / T-step (disks of fixed radius)
  Joint,      ///< the paper's single program of App. 0.A (§7.2), kept for comparison (errata A2)
};

/// The friction set of one contact (docs/methods/compliant.md §7.2-§7.4).
enum class FrictionCone {
  Cone,        ///< ||(lambda_r, lambda_s)|| <= mu lambda_n, a second-order cone (3-D)
  Cone2d,      ///< |lambda_r| <= mu lambda_n, r in the x-z plane (planar models, §7.3)
  Polyhedral,  ///< k edges cos th_j lambda_r + sin th_j lambda_s <= mu_eff lambda_n (§7.4)
};

const char* friction_solve_name(FrictionSolve s);
const char* friction_cone_name(FrictionCone c);

/// compliant.* scene keys (docs/methods/compliant.md §4, §7; defaults are the paper's where it gives them).
struct CompliantSettings {
  double dt = 0.01;                  ///< h [s]
  double mu = 0.5;                   ///< Coulomb coefficient (contact.mu)
  CompliantRowParams rows;           ///< K, B of every row kind, the loops, G^dot terms
  double zeta = 0;                   ///< weight on normal / unilateral forces (joint program); 0 = 1/h (§6.1)
  FrictionSolve solve = FrictionSolve::Staggered;
  FrictionCone cone = FrictionCone::Cone;
  int cone_edges = 8;                ///< k of the polyhedral cone, >= 3
  bool cone_inscribed = true;        ///< mu_eff = mu cos(pi/k) (never exceeds the cone), else mu
  /// staggered stop: ||dy|| + ||dx|| <= eps (1 + ||y||); a loop that stalls returns its best sweep,
  /// flagged STATUS_NOT_CONVERGED only when that sweep's change is above sqrt(eps)
  double eps = 1e-8;
  /// K_max of the staggered loop. (ours) 200, not 50: a box sticking on a 20 deg slope
  /// (tests/solvers/pbd/pbd_normal_force_test.cpp) needs 45-60 sweeps to reach eps = 1e-8 (linear rate ~0.7)
  int max_iterations = 200;
  /// contacts one step can hold (dense buffers are sized from it); 0 = the model's max_contacts,
  /// at most 128; at most kMaxCompliantContacts. More active contacts than this drop the rest and flag STATUS_CONTACT_OVERFLOW.
  int max_contacts = 0;
};

/// Largest compliant.max_contacts: the dense buffers grow as (3 max_contacts)^2 doubles.
constexpr int kMaxCompliantContacts = 1024;
/// Bytes one step's workspace may take (compliant_workspace_bytes): 1 GiB.
constexpr size_t kCompliantWorkspaceBudget = size_t(1) << 30;

/// Throws InvalidArgument naming the key (compliant.* / contact.mu / integrator.dt).
void validate_compliant_settings(const CompliantSettings& s);

/// Bytes of the workspace's dense buffers for this model and settings, computed in size_t;
/// SIZE_MAX when the count overflows.
size_t compliant_workspace_bytes(const Model& m, const CompliantSettings& s);
/// Throws InvalidArgument naming compliant.max_contacts when compliant_workspace_bytes exceeds
/// kCompliantWorkspaceBudget.
void check_compliant_workspace(const Model& m, const CompliantSettings& s);

/// Per-rollout scratch of the compliant step (d.ws), every buffer at its largest size. Public so that
/// tests can read the last step's rows and forces: lambda* = [y; x] with y = [lambda_n (contacts);
/// lambda_u (limit stops)], x = the tangential rows (r, s per contact; r only for Cone2d);
/// lambda_b the bilateral forces (6. of §3).
struct CompliantWorkspace : Workspace {
  CompliantWorkspace(const Model& m, const CompliantSettings& s);
  int nc_max = 0;                       ///< contacts capacity
  CompliantRows rows;                   ///< rows of the last step (compliant_rows.h)
  Kinematics kin, kin_p, kin_m;         ///< at theta_n and theta_n +- eps v (G^dot v)
  NeSmoothStep sm;                      ///< M (with armature, implicit damping), f, v0
  void bind_chart(const Mat3* chart) override {
    kin.chart = kin_p.chart = kin_m.chart = chart;
    sm.bind_chart(chart);
  }
  MatX Mt;                              ///< (n x n) M~ = M + G_b^T W_b G_b (§3)
  Eigen::LDLT<MatX> Mtf;                ///< its factor
  VecX ft, c0, lam_b, tmp_n, v1;        ///< f~ (n), c0 (n_b), lambda_b (n_b), scratch (n), v1 (n)
  MatX WGb;                             ///< (n_b x n) W_b G_b
  MatX MinvGt;                          ///< (n x R) M~^-1 G*^T
  MatX A;                               ///< (R x R) A* = G* M~^-1 G*^T
  VecX u_free, z, qd, lam, lam_prev;    ///< (R) G* M~^-1 f~, M^ G^dot v, q or d (§7.1), lambda*, W
  VecX lam_best;                        ///< (R) the staggered loop's best sweep
  MatX psd;                             ///< (R x R) scratch of the pseudo-inverse solves
  std::vector<int> perm, idx;           ///< (R) scratch
  // N-step with more rows than DOFs: the QP in 2n unknowns (compliant_reduced_qp.h)
  ReducedQpWorkspace rqp;
  // N-step (§6): the QP min 1/2 y^T y s.t. rows, y >= 0 (dual active set, exact)
  QpWorkspace qp;
  QpResult qp_res;
  MatX qp_Q, qp_A, qp_E;                ///< (ny x ny), (ny x ny), (0 x ny)
  VecX qp_c, qp_b, qp_e, qp_lb, qp_ub;
  // T-step and joint program (§7.2, §7.5): the cone QP (ADMM), row-major buffers
  ConeQp<double> cqp;
  std::vector<double> H, g, Ac, bc, lb, mu_c, rad, cx, cy;
  std::vector<int> cone, disk;
  double cqp_rho = 0;
  std::vector<double> ipm_s;            ///< the T-step's interior-point fallback (disk_qp_ipm.h) scratch
  std::vector<int> ipm_i;
  bool tstep_ipm = false;               ///< this step's T-steps use the interior point (ADMM ran out once)
  // last step's counts
  int iterations = 0;                   ///< staggered sweeps (or 1), of the last step
  int qp_iterations = 0;                ///< N-step + T-step + joint solver iterations, of the last step
  int n_step_iterations = 0;            ///< N-step active-set iterations (reduced QP pieces + dense QP), of the last step
  int fallbacks = 0;                    ///< N-steps of the last step whose reduced QP did not settle (dense QP ran)
  int inexact = 0;                      ///< T-steps of the last step taken at max_iter with residuals <= 1e-6 relative
};

class CompliantIntegrator final : public Integrator {
 public:
  CompliantIntegrator(const Model& m, const CompliantSettings& s);
  RolloutParams default_params() const override;
  const CompliantSettings& settings() const { return s_; }

 protected:
  /// Friction coefficient p.contact.mu; link mass scales p.link_mass_scale; contact-normal
  /// stiffness factor p.stiffness_scale.
  StepStats advance(const VecX& theta_n, const VecX& theta_nm1, const StepControl& u, const RolloutParams& p,
                    Data& d, VecX& theta_next) const override;
  std::unique_ptr<Workspace> make_workspace() const override;
  bool velocity_state() const override { return true; }  // v_n = (theta_n - theta_{n-1}) / dt

 private:
  CompliantSettings s_;
};

}  // namespace bigstep
