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

// Uniform access to the CPU emulation and the CUDA mirror of the team batch.
struct CpuTeam64 {
  PbfdTeamBatch<double> b;
  CpuTeam64(const Scene& sc, const StateBatch& s, const RolloutParams& p)
      : b(sc.model, sc.settings, s.K, sc.steps(), true, sc.threads) {
    for (int k = 0; k < s.K; ++k) {
      b.init(k, s.row(s.theta, k), s.row(s.theta_prev, k));
      if (!p.contact.empty()) b.set_contact(k, p.contact[k].c_perp, p.contact[k].c_par);
    }
  }
  void sync() {}
};
#ifdef BIGSTEP_WITH_CUDA
struct CudaTeam64 {
  PbfdTeamBatchCuda<double> b;
  CudaTeam64(const Scene& sc, const StateBatch& s, const RolloutParams& p)
      : b(sc.model, sc.settings, s.K, sc.steps(), true) {
    std::vector<VecX> th0(s.K), thm1(s.K);
    for (int k = 0; k < s.K; ++k) {
      th0[k] = s.row(s.theta, k);
      thm1[k] = s.row(s.theta_prev, k);
    }
    b.init(th0, thm1, p.contact);
  }
  void sync() { b.download(); }
};
#endif

template <class Team>
class TeamEngine final : public BatchEngine {
 public:
  TeamEngine(const Scene& sc, const StateBatch& b, const RolloutParams& p, std::string name, int threads)
      : team_(sc, b, p), name_(std::move(name)), threads_(threads) {}
  void step(StateBatch& b, const RolloutParams&) override {
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
    }
    ++done_;
  }
  std::string name() const override { return name_; }
  int threads() const override { return threads_; }

 private:
  static constexpr uint32_t kHeld = STATUS_NONFINITE | STATUS_GIMBAL_LOCK | STATUS_FACTOR_FAILED;
  Team team_;
  std::string name_;
  int threads_;
  int done_ = 0;
};

void check_team_supported(const Scene& sc, const RolloutParams& p, const std::string& who) {
  BIGSTEP_CHECK_ARG(sc.integrator == "pbfd" && sc.settings.optimizer == Optimizer::JtjLm, who,
                    sc.integrator + "+" + optimizer_name(sc.settings.optimizer),
                    "the team (GPU-form) engine implements integrator.type=pbfd with optimizer jtj_lm only");
  BIGSTEP_CHECK_ARG(sc.tau.size() == 0 || sc.tau.isZero(), "control.tau", "non-zero",
                    detail::concat(who, ": the team engine runs with zero joint torques"));
  BIGSTEP_CHECK_ARG(p.mass_scale.empty(), "batch.randomize_mass", sc.randomize_mass,
                    detail::concat(who, ": the team engine shares one model across rollouts (set it to 0)"));
}

}  // namespace

std::unique_ptr<BatchEngine> make_batch_engine(const Scene& sc, const BackendChoice& bk, const StateBatch& b,
                                               const RolloutParams& p) {
  if (bk.backend == Backend::Cuda) {
    check_team_supported(sc, p, "--backend cuda");
#ifdef BIGSTEP_WITH_CUDA
    return std::make_unique<TeamEngine<CudaTeam64>>(sc, b, p, "cuda_team_fp64", 0);
#endif
  }
  if (sc.engine == "team") {
    check_team_supported(sc, p, "batch.engine=team");
    return std::make_unique<TeamEngine<CpuTeam64>>(sc, b, p, "cpu_team_emulation",
                                                   sc.threads > 0 ? sc.threads : omp_get_num_procs());
  }
  return std::make_unique<ReferenceEngine>(sc);
}

}  // namespace bigstep
