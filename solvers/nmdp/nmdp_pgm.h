// Projected gradient method for one NMDP (sub)step (docs/methods/nmdp.md §7.1-§7.3, §7.6; paper Alg. 1,
// Eq. 7-11): FOPGM (exact A) and ZOPGM (A-bar), the manifold projection Project(theta, w) of
// Eq. 9 / 11, and the search-direction QP of Eq. 8 in the weights w.
#pragma once
#include <functional>

#include "solvers/nmdp/nmdp_terms.h"
#include "numerics/qp_dense.h"

namespace bigstep {

/// Proximal weight scaling (§7.6): Diag multiplies 2/gamma by sigma = max_i (S^T Q_K S)_ii, so gamma
/// is dimensionless; None is the unscaled form (gamma with units).
enum class GammaScaling { Diag, None };

/// Alg. 1 parameters (§7.6).
struct PgmSettings {
  PgmMode mode = PgmMode::Fo;
  double eps = 1e-6;         ///< termination on |theta^k - theta^{k-1}|_inf of an accepted step
  double eta = 1.5;          ///< gamma factor
  double gamma0 = 1;         ///< gamma at the start of each PGM call (unless carried over)
  double gamma_max = 1e4;
  double gamma_min = 1e-12;
  int k_max = 500;           ///< outer iterations
  int n_proj = 50;           ///< Newton iterations per projection
  double tol_G = 0;          ///< |G|_2 tolerance; 0 = 1e-9 max(1, W)
  double rcond_min = 1e-13;  ///< LU reciprocal condition below which A counts as singular (A5.2)
  GammaScaling gamma_scaling = GammaScaling::Diag;
  bool line_search_first = true;  ///< backtracking on the energy in the first (w = 0) projection
};

void validate_pgm_settings(const PgmSettings& s);

/// How a projection ended (§7.2).
enum class ProjectOutcome { Ok, NonDecrease, Singular, NonFinite, MaxIterations, LineSearch };
/// How a PGM call ended (§7.3). Anything but Converged is a PGM failure (Alg. 2 halves h).
enum class PgmOutcome { Converged, ProjectionFailed, QpFailed, GammaMin, MaxIterations };

const char* project_outcome_name(ProjectOutcome o);
const char* pgm_outcome_name(PgmOutcome o);

/// One outer iterate of Alg. 1 as seen by an observer (tests of N11 / ND5, diagnostics).
struct PgmIterate {
  int k = 0;                  ///< outer iteration (1-based)
  bool accepted = false;      ///< K(theta') <= K_cur
  double gamma = 0;           ///< gamma used for this QP
  double K = 0;               ///< K(theta') of the candidate
  double K_prev = 0;          ///< K_cur before this iteration
  double G_norm = 0;          ///< |G(theta', w')|_2 after the projection
  const VecX* theta = nullptr;  ///< theta' (candidate)
  const VecX* w = nullptr;      ///< w'
  const DenseQp* qp = nullptr;          ///< the QP in y = w + dw over the active weights
  const QpResult* qp_result = nullptr;
};
using PgmObserver = std::function<void(const PgmIterate&)>;

struct PgmResult {
  PgmOutcome outcome = PgmOutcome::MaxIterations;
  ProjectOutcome project = ProjectOutcome::Ok;  ///< of the failing projection, if any
  int iterations = 0;       ///< outer iterations (QP solves), accepted or not
  int newton = 0;           ///< Newton iterations of every projection
  double G_norm = 0;        ///< |G| at the returned theta
  double K = 0;
  double gamma = 1;         ///< gamma after the last accepted step (for carry_gamma)
  bool ok() const { return outcome == PgmOutcome::Converged; }
};

/// Runs Alg. 1 on an NmdpProblem whose step is set. Owns the QP workspace; not thread-safe.
class Pgm {
 public:
  explicit Pgm(const NmdpProblem& P);

  /// Project(theta, w) of §7.2: Newton on G(., w) = 0 with A (Fo) or A-bar (Zo), full steps,
  /// failure on non-decrease of |G|. With line_search (the w = 0 projection, §7.6) a full step
  /// that does not decrease |G| is backtracked on merit0 (PBD: the step's energy) instead.
  ProjectOutcome project(NmdpProblem& P, VecX& theta, const VecX& w, PgmMode mode, bool line_search,
                         double tol_G, double rcond_min, int n_proj, int& newton, double& G_norm);

  /// Alg. 1 from the start guess theta (in: the predictor; out: the solution), w out.
  PgmResult solve(NmdpProblem& P, const PgmSettings& s, double gamma0, VecX& theta, VecX& w,
                  const PgmObserver& obs = {});

  /// Forget the QP warm start carried from the previous call (a new episode of the rollout).
  void reset_warm_start() {
    warm_.clear();
    warm_cols_.clear();
  }

 private:
  double lu_rcond();  // rcond of A_ from lu_ (Eigen's estimate, no allocation)

  QpWorkspace qp_;
  DenseQp qp_data_;    // the QP as observers see it (filled only with an observer)
  QpResult qp_res_;    // sized for the largest QP (all weights active)
  QpResult obs_res_;   // with an observer: the result of qp_data_
  std::vector<int> warm_, warm_cols_;
  std::vector<DenseQp::Group> groups_;  // simplex rows of the active candidates
  // every buffer sized at construction for all weights active; packed maps over them per QP
  VecX G_, Gn_, dth_, g_K_;
  MatX A_, B_, Ba_, S_, QS_, Q_K_, P_, P0_;  // P0_: S^T Q_K S before the proximal shift
  VecX c_, wa_, lb_, y_, q0_;                 // q0_: -S^T g_K
  Eigen::PartialPivLU<MatX> lu_;
  VecX rc_v_, rc_s_, rc_old_, rc_t_;  // lu_rcond scratch
  VecX theta_new_, theta_c_, w_c_;
  std::vector<int> cols_;
};

/// tol_G of §7.2: s.tol_G, or 1e-9 max(1, W) when it is 0.
double pgm_tol_G(const Model& m, const PgmSettings& s, const double* mass_scale = nullptr);  // W scaled (core/inertia.h)

}  // namespace bigstep
