// K rollouts of one scene stepped together on the CPU batched backend (docs/architecture.md §1.3 "Engines":
// threads over rollouts). State is SoA, rows are rollouts. A bad rollout is flagged in its status
// and held; it never disturbs the others. Results are bit-identical for any thread count because
// each rollout's arithmetic is independent of the partition.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "batch/step_stages.h"
#include "io/scene.h"

namespace bigstep {

/// Host SoA state of K rollouts. theta / theta_prev are (K x n_q), row k contiguous.
struct StateBatch {
  StateBatch(int K, int n_q);
  int K, n_q;
  std::vector<double> theta;       ///< (K x n_q) theta_n
  std::vector<double> theta_prev;  ///< (K x n_q) theta_{n-1}
  std::vector<uint32_t> status;    ///< (K) last step's status bits; failure bits are sticky
  std::vector<int> iterations;     ///< (K) last step's iterations
  std::vector<double> residual;    ///< (K) last step's convergence measure
  std::vector<StepStats> stats;    ///< (K) last step's full statistics (the CPU reference engine fills it)
  int steps = 0;                   ///< timesteps taken: theta is the state at t = steps * dt
  std::vector<uint32_t> episode;   ///< (K) resets of each rollout (reset_rollouts), 0 = first episode
  /// (K x n_chart) the rotation charts of each rollout's ball / floating joints (core/chart.h), row k
  /// contiguous; theta and theta_prev are read in them. Empty = the identity for every rollout (an
  /// engine that re-anchors sizes it at its first step). Whoever writes a state resets its row.
  std::vector<Mat3> chart;
  /// Rollout k's charts (n_chart), nullptr while chart is empty.
  Mat3* chart_row(int k, int n_chart) { return chart.empty() ? nullptr : chart.data() + size_t(k) * n_chart; }
  const Mat3* chart_row(int k, int n_chart) const {
    return chart.empty() ? nullptr : chart.data() + size_t(k) * n_chart;
  }
  /// Rollout k's charts back to the identity (a state written from outside is in the identity chart).
  void reset_chart(int k, int n_chart) {
    if (Mat3* c = chart_row(k, n_chart)) std::fill(c, c + n_chart, Mat3::Identity());
  }
  Eigen::Map<VecX> row(std::vector<double>& a, int k) { return Eigen::Map<VecX>(a.data() + size_t(k) * n_q, n_q); }
  Eigen::Map<const VecX> row(const std::vector<double>& a, int k) const {
    return Eigen::Map<const VecX>(a.data() + size_t(k) * n_q, n_q);
  }
};

/// Per-rollout parameters of a batch, one table read by every engine (reference, team, CUDA; no
/// Model copies). Empty = the scene's value for every rollout.
struct RolloutParamTable {
  std::vector<ContactParams> contact;   ///< (K) or empty
  std::vector<double> link_mass_scale;  ///< (K x n_link) row-major: factor s_kj on link j's mass and
                                        ///< inertia in rollout k (COM unchanged), or empty = 1
  std::vector<double> geom_mu;          ///< (K x n_geom) per-contact Coulomb mu (RolloutParams::geom_mu), or empty
  const double* geom_mu_row(int k, int n_geom) const {
    return geom_mu.empty() ? nullptr : geom_mu.data() + size_t(k) * n_geom;
  }
  /// (K) or empty = 1: the factor batch.randomize_stiffness drew for rollout k (c_perp was multiplied
  /// by it too): RolloutParams::stiffness_scale, the compliant solver's contact stiffness factor
  std::vector<double> stiffness_scale;
  /// Row k of link_mass_scale (n_link factors), nullptr when empty: RolloutParams::link_mass_scale.
  const double* mass_scale_row(int k, int n_link) const {
    return link_mass_scale.empty() ? nullptr : link_mass_scale.data() + size_t(k) * n_link;
  }
  /// Total-mass ratio of rollout k: sum_j s_kj m_j / sum_j m_j (1 when unscaled or massless).
  double mass_ratio(const Model& m, int k) const;
};

/// Per-contact friction (the random terrain of docs/methods/inverse_dynamics.md §9): one
/// mu ~ U(lo, hi) per geom of the Model (n_geom values into out) from rng. A contact (a, b) uses
/// geom a's value (a is the geom on the higher link, never the world's: core/model.h).
void draw_geom_mu(const Model& m, double lo, double hi, std::mt19937_64& rng, double* out);
/// The lone-rollout draw of the scene's batch.contact_mu_min / max (its own stream of batch.seed;
/// empty when off): what `bigstep run` without --rollouts uses.
std::vector<double> scene_geom_mu(const Scene& sc);

/// The model with every link mass and inertia tensor multiplied by s (> 0): the oracle of the
/// per-rollout scales (tests), which engines apply without copying the Model.
Model scale_mass(const Model& m, double s);
/// Same with one factor per link (n_link entries, each > 0).
Model scale_mass(const Model& m, const double* link_scale);

/// Initial states and per-rollout parameters for K rollouts. Rollout k draws from its own stream
/// (seed, k), so it is the same whatever K is: theta(0), theta_dot(0), then (when enabled) friction
/// c_par and mu, stiffness c_perp, then one mass factor exp(U(-r, r)) per link, link 0 first (each
/// link its own draw), then one mu per geom (contact_mu_*), then the limit-stiffness factor.
void init_batch(const Scene& sc, const BatchOptions& opt, StateBatch& b, RolloutParamTable& p);

/// Starts a new episode for the listed rollouts: fresh initial states from the stream
/// (seed, k, episode), status / iterations cleared; their randomised parameters stay. The engine
/// must then be told (BatchEngine::reset). Throws InvalidArgument for an index outside [0, K).
void reset_rollouts(const Scene& sc, const BatchOptions& opt, StateBatch& b, const std::vector<int>& ks);

/// Per-episode re-randomisation: the listed rollouts draw fresh friction / stiffness / mass factors
/// (the options' ranges, the order of init_batch) from their stream (seed, k, episode) with episode =
/// b.episode[k] (>= 1 after reset_rollouts); episode 0 keeps init_batch's draws. No-op when no
/// randomize_* option is on. The engine must then be told (BatchEngine::set_params).
void redraw_params(const Scene& sc, const BatchOptions& opt, const StateBatch& b, RolloutParamTable& p,
                   const std::vector<int>& ks);

/// The CPU reference engine: one const integrator shared by every thread, one Data per rollout
/// (state copied in and out of b each step, carried solver state and scratch kept), so a
/// rollout's result does not depend on the thread count or on which thread steps it.
class CpuBatchStepper {
 public:
  CpuBatchStepper(const Scene& sc, int threads);
  /// One step of every rollout whose status has no failure bit, with the scene's controls
  /// (control.tau, or tau (K x n_q) when given; the control.pd servo with targets at the step's
  /// end time (b.steps + 1) dt, as the single-rollout run; control.load at (b.steps dt, theta_n)
  /// added to either). theta_bar / theta_dot_bar (K x n_q, nullptr = the servo's reference / 0):
  /// per-rollout servo targets of this step, with control.pd's gains (BatchEngine::step).
  /// Advances b.steps.
  void step(StateBatch& b, const RolloutParamTable& p, const double* tau = nullptr, const double* theta_bar = nullptr,
            const double* theta_dot_bar = nullptr);
  /// The listed rollouts start a new episode from b's rows: what their solvers carried is dropped.
  void reset(const std::vector<int>& ks);
  int threads() const { return threads_; }
  /// Stage 4 flags STATUS_PENETRATED (batch/step_stages.h); default off.
  void check_penetration(bool on) { stages_.check_penetration(on); }

 private:
  void make_data(int K);  // first step: Data per rollout

  const Scene& sc_;
  int threads_;
  StepStages stages_;                         // the step's stages, one lane per thread
  std::unique_ptr<Integrator> integ_;
  std::vector<Data> data_;                    // (K) one per rollout
  // (K) per-rollout inverse-dynamics controller state (controller.type = id_*), empty otherwise
  std::vector<std::unique_ptr<IdControllerState>> id_;
};

}  // namespace bigstep
