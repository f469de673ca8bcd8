#include "cli/batch_engines.h"

#include <omp.h>

#include "core/error.h"
#include "solvers/pbfd_batch_team.h"
#ifdef BIGSTEP_WITH_CUDA
#include "cuda/pbfd_lm.h"
#endif

namespace bigstep {

namespace {

class ReferenceEngine final : public BatchEngine {
 public:
  ReferenceEngine(const Scene& sc) : st_(sc, sc.threads) {}
  void step(StateBatch& b, const RolloutParams& p) override { st_.step(b, p); }
  std::string name() const override { return "cpu_batched"; }
  int threads() const override { return st_.threads(); }

 private:
  CpuBatchStepper st_;
};

// Uniform access to the CPU emulation and the CUDA mirror of the team batch: per-rollout C_perp,
// C_par and mass scale at construction, the servo's gains, and each step's controls.
struct CpuTeam64 {
  PbfdTeamBatch<double> b;
  int K;
  CpuTeam64(const Scene& sc, const StateBatch& s, const RolloutParams& p)
      : b(sc.model, sc.settings, s.K, sc.steps(), true, sc.threads), K(s.K) {
    for (int k = 0; k < s.K; ++k) {
      b.init(k, s.row(s.theta, k), s.row(s.theta_prev, k));
      const ContactParams& cp = p.contact.empty() ? sc.settings.contact : p.contact[k];
      b.set_params(k, cp.c_perp, cp.c_par, p.mass_scale.empty() ? 1.0 : p.mass_scale[k]);
    }
    if (sc.pd.active()) b.set_gains(sc.pd.kp, sc.pd.kd);
  }
  void controls(const VecX& tau, const VecX& theta_bar, const VecX& theta_dot_bar) {
    for (int k = 0; k < K; ++k) b.set_controls(k, tau, theta_bar, theta_dot_bar);
  }
  void sync() {}
};
#ifdef BIGSTEP_WITH_CUDA
struct CudaTeam64 {
  PbfdTeamBatchCuda<double> b;
  int K, D;
  std::vector<double> u;  // (K x 3 n_q) controls
  CudaTeam64(const Scene& sc, const StateBatch& s, const RolloutParams& p)
      : b(sc.model, sc.settings, s.K, sc.steps(), true), K(s.K), D(s.n_q) {
    std::vector<VecX> th0(s.K), thm1(s.K);
    for (int k = 0; k < s.K; ++k) {
      th0[k] = s.row(s.theta, k);
      thm1[k] = s.row(s.theta_prev, k);
    }
    b.init(th0, thm1, p.contact, p.mass_scale);
    if (sc.pd.active()) b.set_gains(sc.pd.kp, sc.pd.kd);
  }
  void controls(const VecX& tau, const VecX& theta_bar, const VecX& theta_dot_bar) {
    u.assign(size_t(K) * 3 * D, 0.0);
    for (int k = 0; k < K; ++k) {
      double* row = u.data() + size_t(k) * 3 * D;
      for (int i = 0; i < D; ++i) {
        if (tau.size()) row[i] = tau[i];
        if (theta_bar.size()) row[D + i] = theta_bar[i];
        if (theta_dot_bar.size()) row[2 * D + i] = theta_dot_bar[i];
      }
    }
    b.set_controls(u);
  }
  void sync() { b.download(); }
};
#endif

// Lockstep: every step() sets the step's controls (control.tau; the servo's targets at the step's
// end time, as the single-rollout run) while all rollouts wait, releases them, and launches until
// every live rollout committed its next timestep.
template <class Team>
class TeamEngine final : public BatchEngine {
 public:
  TeamEngine(const Scene& sc, const StateBatch& b, const RolloutParams& p, std::string name, int threads)
      : sc_(sc), team_(sc, b, p), name_(std::move(name)), threads_(threads) {}
  void step(StateBatch& b, const RolloutParams&) override {
    if (sc_.pd.active()) {
      theta_bar_.resize(b.n_q);
      theta_dot_bar_.resize(b.n_q);
      sc_.pd.reference(b.steps * sc_.settings.dt + sc_.settings.dt, theta_bar_, theta_dot_bar_);  // as u.t + dt
    }
    team_.controls(sc_.tau, theta_bar_, theta_dot_bar_);
    if (done_ > 0) team_.b.release_waiting();
    while (team_.b.launch() > 0) {
    }
    team_.sync();
    for (int k = 0; k < b.K; ++k) {
      if (b.status[k] & kHeld) continue;
      if (team_.b.status(k) == TRAJ_FAILED) {  // no commit: hold theta, flag it
        b.status[k] |= STATUS_NONFINITE;
        continue;
      }
      b.row(b.theta_prev, k) = b.row(b.theta, k);
      b.row(b.theta, k) = team_.b.theta(k, done_);
      const unsigned st = team_.b.step_status(k, done_);
      b.status[k] = st | (b.status[k] & STATUS_NOT_CONVERGED);
      b.iterations[k] = team_.b.iterations(k, done_);
      b.residual[k] = team_.b.residual(k);
    }
    ++done_;
    ++b.steps;
  }
  std::string name() const override { return name_; }
  int threads() const override { return threads_; }

 private:
  static constexpr uint32_t kHeld = STATUS_NONFINITE | STATUS_GIMBAL_LOCK | STATUS_FACTOR_FAILED;
  const Scene& sc_;
  Team team_;
  std::string name_;
  int threads_;
  int done_ = 0;
  VecX theta_bar_, theta_dot_bar_;  // the servo's targets of the current step (empty: no servo)
};

void check_team_supported(const Scene& sc, const std::string& who) {
  BIGSTEP_CHECK_ARG(sc.integrator == "pbfd" && sc.settings.optimizer == Optimizer::JtjLm, who,
                    sc.integrator + "+" + optimizer_name(sc.settings.optimizer),
                    "the team (GPU-form) engine implements integrator.type=pbfd with optimizer jtj_lm only");
  BIGSTEP_CHECK_ARG(sc.tau.size() == 0 || sc.tau.size() == sc.model.n_q, "control.tau", sc.tau.size(),
                    detail::concat("expected n_q = ", sc.model.n_q, " entries"));
  validate_pd_servo(sc.pd, sc.model.n_q, "control.pd");
}

}  // namespace

std::unique_ptr<BatchEngine> make_batch_engine(const Scene& sc, const BackendChoice& bk, const StateBatch& b,
                                               const RolloutParams& p) {
  if (bk.backend == Backend::Cuda) {
    check_team_supported(sc, "--backend cuda");
#ifdef BIGSTEP_WITH_CUDA
    return std::make_unique<TeamEngine<CudaTeam64>>(sc, b, p, "cuda_team_fp64", 0);
#endif
  }
  if (sc.engine == "team") {
    check_team_supported(sc, "batch.engine=team");
    return std::make_unique<TeamEngine<CpuTeam64>>(sc, b, p, "cpu_team_emulation",
                                                   sc.threads > 0 ? sc.threads : omp_get_num_procs());
  }
  return std::make_unique<ReferenceEngine>(sc);
}

}  // namespace bigstep
