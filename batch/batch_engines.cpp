#include "batch/batch_engines.h"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "core/chart.h"
#include "core/error.h"
#include "solvers/pbd/pbd_batch_team.h"
#include "solvers/registry.h"
#ifdef BIGSTEP_WITH_CUDA
#include "cuda/pbd_step.h"
#endif

namespace bigstep {

namespace {

class ReferenceEngine final : public BatchEngine {
 public:
  ReferenceEngine(const Scene& sc) : st_(sc, sc.threads) {}
  void step(StateBatch& b, const RolloutParamTable& p, const double* tau, const double* theta_bar,
            const double* theta_dot_bar) override {
    st_.step(b, p, tau, theta_bar, theta_dot_bar);
  }
  // the rows in b are the state; the rollouts' carried solver state is dropped
  void reset(const StateBatch&, const std::vector<int>& ks) override { st_.reset(ks); }
  void set_params(const RolloutParamTable&, const std::vector<int>&) override {}  // p is read every step
  std::string name() const override { return "cpu_batched"; }
  int threads() const override { return st_.threads(); }
  void check_penetration(bool on) override { st_.check_penetration(on); }

 private:
  CpuBatchStepper st_;
};

// The team engines' solver settings: FP32 uses batch.fp32_eps_r / fp32_eps_x (docs/methods/pbfd.md §6).
template <class S>
PbdSettings team_settings(const Scene& sc) {
  PbdSettings s = sc.settings;
  if (sizeof(S) == 4) {
    s.eps_r = sc.fp32_eps_r;
    s.eps_x = sc.fp32_eps_x;
  }
  return s;
}

// Lockstep engines keep one output slot and have no horizon (an RL loop steps as long as it
// likes); free-running ones run integrator.duration / dt steps and keep them all.
inline int team_horizon(const Scene& sc, bool lockstep) { return lockstep ? (1 << 30) : sc.steps(); }

// Uniform access to the CPU emulation and the CUDA mirror of the team batch: per-rollout C_perp,
// C_par and link mass scales at construction, the servo's gains, and each step's controls.
template <class S>
struct CpuTeamBatch {
  PbfdTeamBatch<S> b;
  int K;
  VecX row_, bar_, dot_bar_;  // scratch: one rollout's torques and servo targets
  CpuTeamBatch(const Scene& sc, const StateBatch& s, const RolloutParamTable& p, bool lockstep)
      : b(sc.model, team_settings<S>(sc), s.K, team_horizon(sc, lockstep), lockstep, sc.threads, DenseAlgebra::Fused,
          lockstep ? 1 : 0),
        K(s.K),
        row_(s.n_q),
        bar_(s.n_q),
        dot_bar_(VecX::Zero(s.n_q)) {
    for (int k = 0; k < s.K; ++k) {
      b.init(k, s.row(s.theta, k), s.row(s.theta_prev, k));
      const ContactParams& cp = p.contact.empty() ? sc.settings.contact : p.contact[k];
      b.set_params(k, cp, p.mass_scale_row(k, sc.model.n_link));
    }
    if (sc.pd.active()) b.set_gains(sc.pd.kp, sc.pd.kd);
  }
  // tau_k: rollout k's torques (n_q) or nullptr = tau for every rollout; bar_k / dot_bar_k: rollout
  // k's servo targets (n_q) or nullptr = theta_bar / theta_dot_bar (bar_k given: dot_bar_k nullptr = 0)
  void controls(const VecX& tau, const double* tau_k, const VecX& theta_bar, const VecX& theta_dot_bar,
                const double* bar_k, const double* dot_bar_k) {
    const size_t n = size_t(row_.size());
    for (int k = 0; k < K; ++k) {
      if (tau_k) row_ = Eigen::Map<const VecX>(tau_k + size_t(k) * n, n);
      if (bar_k) bar_ = Eigen::Map<const VecX>(bar_k + size_t(k) * n, n);
      if (dot_bar_k) dot_bar_ = Eigen::Map<const VecX>(dot_bar_k + size_t(k) * n, n);
      b.set_controls(k, tau_k ? row_ : tau, bar_k ? bar_ : theta_bar, bar_k ? dot_bar_ : theta_dot_bar);
    }
  }
  void reinit(const StateBatch& s, const std::vector<int>& ks) {
    // through the sized scratch rows: a Map passed as const VecX& would be a heap temporary
    for (int k : ks) {
      row_ = s.row(s.theta, k);
      bar_ = s.row(s.theta_prev, k);
      b.reinit(k, row_, bar_);
    }
  }
  void set_params(const Scene& sc, const RolloutParamTable& p, const std::vector<int>& ks) {
    for (int k : ks) {
      const ContactParams& cp = p.contact.empty() ? sc.settings.contact : p.contact[k];
      b.set_params(k, cp, p.mass_scale_row(k, sc.model.n_link));
    }
  }
  // this step's controls, release (after step 0), iterations to convergence in one persistent
  // launch (the CUDA warp kernel's loop, solvers/pbd/pbd_step_persistent.h)
  void advance(const VecX& tau, const double* tau_k, const VecX& theta_bar, const VecX& theta_dot_bar,
               const double* bar_k, const double* dot_bar_k, bool release) {
    controls(tau, tau_k, theta_bar, theta_dot_bar, bar_k, dot_bar_k);
    if (release) b.release_waiting();
    while (b.launch_persistent() > 0) {
    }
  }
};
#ifdef BIGSTEP_WITH_CUDA
template <class S>
struct CudaTeamBatch {
  PbfdTeamBatchCuda<S> b;
  int K, D;
  std::vector<double> u;  // (K x 3 n_q) controls
  CudaTeamBatch(const Scene& sc, const StateBatch& s, const RolloutParamTable& p, bool lockstep)
      : b(sc.model, team_settings<S>(sc), s.K, team_horizon(sc, lockstep), lockstep, DenseAlgebra::Fused,
          lockstep ? 1 : 0),
        K(s.K),
        D(s.n_q) {
    std::vector<VecX> th0(s.K), thm1(s.K);
    for (int k = 0; k < s.K; ++k) {
      th0[k] = s.row(s.theta, k);
      thm1[k] = s.row(s.theta_prev, k);
    }
    b.init(th0, thm1, p.contact, p.link_mass_scale);
    if (sc.pd.active()) b.set_gains(sc.pd.kp, sc.pd.kd);
  }
  void fill_controls(const VecX& tau, const double* tau_k, const VecX& theta_bar, const VecX& theta_dot_bar,
                     const double* bar_k, const double* dot_bar_k) {
    u.assign(size_t(K) * 3 * D, 0.0);
    for (int k = 0; k < K; ++k) {
      double* row = u.data() + size_t(k) * 3 * D;
      for (int i = 0; i < D; ++i) {
        if (tau_k) row[i] = tau_k[size_t(k) * D + i];
        else if (tau.size()) row[i] = tau[i];
        if (bar_k) row[D + i] = bar_k[size_t(k) * D + i];
        else if (theta_bar.size()) row[D + i] = theta_bar[i];
        if (dot_bar_k) row[2 * D + i] = dot_bar_k[size_t(k) * D + i];
        else if (!bar_k && theta_dot_bar.size()) row[2 * D + i] = theta_dot_bar[i];
      }
    }
  }
  void reinit(const StateBatch& s, const std::vector<int>& ks) {
    std::vector<VecX> th0, thm1;
    for (int k : ks) {
      th0.push_back(s.row(s.theta, k));
      thm1.push_back(s.row(s.theta_prev, k));
    }
    b.reinit(ks, th0, thm1);
  }
  void set_params(const Scene&, const RolloutParamTable&, const std::vector<int>&) {
    throw InvalidArgument("--backend cuda = cuda_team: per-episode re-randomisation (batch.randomize_*) is not "
                          "supported by the CUDA engine yet; use the CPU engines or turn randomisation off");
  }
  // one env step = one replay of a CUDA graph: controls upload, release, the persistent warp
  // kernel, outputs (not K whole trajectory states) into pinned memory
  void advance(const VecX& tau, const double* tau_k, const VecX& theta_bar, const VecX& theta_dot_bar,
               const double* bar_k, const double* dot_bar_k, bool) {
    fill_controls(tau, tau_k, theta_bar, theta_dot_bar, bar_k, dot_bar_k);
    b.step_graph(u);
  }
};
#endif

// Lockstep (batch.schedule=lockstep): every step() sets the step's controls (control.tau; the
// servo's targets at the step's end time, as the single-rollout run) while all rollouts wait,
// releases them, and launches until every live rollout committed its next timestep.
// Rollout (free-running, the paper's scheme): the first step() launches until every rollout has
// committed all its steps (constant controls), later calls read the stored steps back.
// The stages are those of batch/step_stages.h, the advance being one launch for every rollout;
// the ID controller is refused by check_team_supported. Not stage 3: the servo's torque is not
// held at the actuator limits (the re-step needs per-rollout gains, which the kernel does not
// have), so with limited actuators a saturating servo steps differently from the reference.
template <class Team>
class TeamEngine final : public BatchEngine {
 public:
  TeamEngine(const Scene& sc, const StateBatch& b, const RolloutParamTable& p, std::string name, int threads)
      : sc_(sc), lockstep_(sc.schedule == "lockstep"), team_(sc, b, p, lockstep_), name_(std::move(name)),
        threads_(threads), stages_(sc, 1), theta_(b.n_q) {
    if (stages_.state_torques()) tau_rows_.assign(size_t(b.K) * size_t(b.n_q), 0.0);
  }
  void step(StateBatch& b, const RolloutParamTable&, const double* tau, const double* theta_bar,
            const double* theta_dot_bar) override {
    BIGSTEP_CHECK_ARG(!theta_bar || sc_.pd.active(), "theta_bar", "per-rollout targets",
                      "need a stable-PD servo (control.pd gains) in the scene");
    BIGSTEP_CHECK_ARG(lockstep_ || theta_bar == nullptr, "batch.schedule", sc_.schedule,
                      "per-step servo targets need batch.schedule=lockstep");
    BIGSTEP_CHECK_ARG(lockstep_ || tau == nullptr, "batch.schedule", sc_.schedule,
                      "per-step torques need batch.schedule=lockstep (free-running rollouts run all steps at once)");
    BIGSTEP_CHECK_ARG(lockstep_ || done_ < sc_.steps(), "integrator.duration", sc_.steps() * sc_.settings.dt,
                      "a free-running (batch.schedule=rollout) engine has run all its steps");
    const size_t n = size_t(b.n_q);
    if (lockstep_ || done_ == 0) {
      // 1. controls: the servo's targets; with control.load each rollout's torques at its theta_n
      if (sc_.pd.active() && !theta_bar) {
        theta_bar_.resize(b.n_q);
        theta_dot_bar_.resize(b.n_q);
        sc_.pd.reference(b.steps * sc_.settings.dt + sc_.settings.dt, theta_bar_, theta_dot_bar_);  // as u.t + dt
      }
      const double* tau_k = tau;
      if (stages_.state_torques()) {
        for (int k = 0; k < b.K; ++k) {
          theta_ = b.row(b.theta, k);
          const VecX& t_k = stages_.torques(0, b.steps * sc_.settings.dt, theta_, tau ? tau + k * n : nullptr);
          std::copy(t_k.data(), t_k.data() + n, tau_rows_.data() + k * n);
        }
        tau_k = tau_rows_.data();
      }
      // 2. advance: every live rollout's step (no 3.: see above)
      team_.advance(sc_.tau, tau_k, theta_bar_, theta_dot_bar_, theta_bar, theta_dot_bar, done_ > 0);
    }
    for (int k = 0; k < b.K; ++k) {
      if (b.status[k] & kHeld) continue;
      // a failed rollout has no commit from its failing step on: hold theta, flag it
      if (team_.b.status(k) == TRAJ_FAILED && done_ >= team_.b.steps_done(k)) {
        b.status[k] |= STATUS_NONFINITE;
        continue;
      }
      b.row(b.theta_prev, k) = b.row(b.theta, k);
      team_.b.theta_into(k, done_, b.theta.data() + k * n);
      // 4. check outputs
      theta_ = b.row(b.theta, k);
      unsigned st = team_.b.step_status(k, done_) | stages_.check_outputs(0, theta_);
      // the team form has no rotation charts yet (core/chart.h): a free or ball joint within 10
      // degrees of its Euler angles' singularity is flagged and held, not stepped on (the
      // residual loses a direction there and a wrong point can look converged)
      if (!chart_admissible(sc_.model, theta_)) st |= STATUS_GIMBAL_LOCK;
      b.status[k] = st | (b.status[k] & STATUS_NOT_CONVERGED);
      b.iterations[k] = team_.b.iterations(k, done_);
      b.residual[k] = lockstep_ ? team_.b.residual(k) : std::nan("");  // free-running: only the last step's is kept
    }
    ++done_;
    ++b.steps;
  }
  void reset(const StateBatch& b, const std::vector<int>& ks) override {
    BIGSTEP_CHECK_ARG(lockstep_, "batch.schedule", sc_.schedule,
                      "resetting rollouts needs batch.schedule=lockstep (free-running rollouts run all steps at once)");
    team_.reinit(b, ks);  // RUNNING from the new rows; the others wait for the next step()
  }
  void set_params(const RolloutParamTable& p, const std::vector<int>& ks) override { team_.set_params(sc_, p, ks); }
  std::string name() const override { return name_; }
  int threads() const override { return threads_; }
  void check_penetration(bool on) override { stages_.check_penetration(on); }

 private:
  static constexpr uint32_t kHeld = STATUS_NONFINITE | STATUS_GIMBAL_LOCK | STATUS_FACTOR_FAILED;
  const Scene& sc_;
  bool lockstep_;
  Team team_;
  std::string name_;
  int threads_;
  int done_ = 0;
  StepStages stages_;                 // the host-side stages (one lane: the launch is the parallel part)
  VecX theta_;                        // (n_q) scratch: a rollout's row
  std::vector<double> tau_rows_;      // (K x n_q) the torques with control.load, empty without
  VecX theta_bar_, theta_dot_bar_;  // the servo's targets of the current step (empty: no servo)
};

void check_team_supported(const Scene& sc, const std::string& who) {
  BIGSTEP_CHECK_ARG(find_solver(sc.integrator).has_team_engine(sc.settings.optimizer), who,
                    sc.integrator + "+" + optimizer_name(sc.settings.optimizer),
                    "the team (GPU-form) engine implements " + team_engine_methods());
  BIGSTEP_CHECK_ARG(sc.settings.contact.damping == 0, "contact.damping", sc.settings.contact.damping,
                    "the team (GPU-form) engine has no contact damping yet: use batch.engine=reference");
  const std::string unsupported = team_unsupported(sc.model);
  BIGSTEP_CHECK_ARG(unsupported.empty(), who, unsupported,
                    "the team (GPU-form) engine does not support this yet; use batch.engine=reference");
  BIGSTEP_CHECK_ARG(sc.tau.size() == 0 || sc.tau.size() == sc.model.n_q, "control.tau", sc.tau.size(),
                    detail::concat("expected n_q = ", sc.model.n_q, " entries"));
  validate_pd_servo(sc.pd, sc.model.n_q, "control.pd");
  // why: the team engines' per-rollout parameters are c_perp, c_par, mu and the mass scales only
  BIGSTEP_CHECK_ARG(sc.randomize_limit_stiffness == 0, "batch.randomize_limit_stiffness", sc.randomize_limit_stiffness,
                    "the team (GPU-form) engine does not randomise the joint stops: use batch.engine=reference");
  BIGSTEP_CHECK_ARG(!(sc.pd.active() && sc.schedule == "rollout"), "batch.schedule", sc.schedule,
                    "the PD servo's targets are set between steps: use batch.schedule=lockstep");
  // the stages of batch/step_stages.h the team engines cannot run: refused, never skipped
  BIGSTEP_CHECK_ARG(!sc.controller.inverse_dynamics(), "controller.type", controller_type_name(sc.controller.type),
                    "the inverse-dynamics controller solves per rollout on the CPU: use batch.engine=reference");
  BIGSTEP_CHECK_ARG(!(sc.load.active() && sc.schedule == "rollout"), "batch.schedule", sc.schedule,
                    "control.load's torques depend on each step's state: use batch.schedule=lockstep");
}

}  // namespace

std::unique_ptr<BatchEngine> make_batch_engine(const Scene& sc, const BackendChoice& bk, const StateBatch& b,
                                               const RolloutParamTable& p) {
  const bool fp32 = sc.precision == "fp32";
  BIGSTEP_CHECK_ARG(p.link_mass_scale.empty() || p.link_mass_scale.size() == size_t(b.K) * sc.model.n_link,
                    "RolloutParamTable.link_mass_scale.size()", p.link_mass_scale.size(),
                    detail::concat("expected 0 or K x n_link = ", size_t(b.K) * sc.model.n_link));
  if (bk.backend == Backend::Cuda) {
    check_team_supported(sc, "--backend cuda");
#ifdef BIGSTEP_WITH_CUDA
    if (fp32) return std::make_unique<TeamEngine<CudaTeamBatch<float>>>(sc, b, p, "cuda_team_fp32", 0);
    return std::make_unique<TeamEngine<CudaTeamBatch<double>>>(sc, b, p, "cuda_team_fp64", 0);
#endif
  }
  if (sc.engine == "team") {
    check_team_supported(sc, "batch.engine=team");
    const int threads = sc.threads > 0 ? sc.threads : omp_get_num_procs();
    if (fp32) return std::make_unique<TeamEngine<CpuTeamBatch<float>>>(sc, b, p, "cpu_team_emulation_fp32", threads);
    return std::make_unique<TeamEngine<CpuTeamBatch<double>>>(sc, b, p, "cpu_team_emulation", threads);
  }
  BIGSTEP_CHECK_ARG(!fp32, "batch.precision", sc.precision,
                    "the reference engine is FP64: use batch.engine=team or --backend cuda for fp32");
  BIGSTEP_CHECK_ARG(sc.schedule == "lockstep", "batch.schedule", sc.schedule,
                    "the reference engine steps in lockstep: use batch.engine=team or --backend cuda");
  return std::make_unique<ReferenceEngine>(sc);
}

}  // namespace bigstep
