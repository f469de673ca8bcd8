// CPU emulation of the batched GPU scheme (docs/methods/pbfd.md §6): K PBFD trajectories, each "launch"
// runs one LM iteration (solvers/pbd/pbd_step_team.h) for every RUNNING trajectory, OpenMP over
// trajectories. Free-running (rollout) mode or lockstep mode (WAITING after each step until
// release_waiting()). The CUDA backend runs the same iteration body per block.
// DenseAlgebra::Library emulates the CUDA library path (cuBLAS batched J^T J / J^T r, cuSOLVER
// batched Cholesky + solve between the team phases) with Eigen, so CI checks its phase logic.
#pragma once
#include <omp.h>

#include <Eigen/Cholesky>

#include <algorithm>
#include <limits>
#include <memory>
#include <vector>

#include "core/model_view.h"
#include "core/parallel_for.h"
#include "solvers/pbd/pbd_step.h"
#include "solvers/pbd/pbd_step_persistent.h"
#include "solvers/pbd/pbd_step_team.h"
#include "solvers/team/team.h"
#include "solvers/team/team_thread.h"

namespace bigstep {

template <class S>
class PbfdTeamBatch {
 public:
  /// out_slots: committed steps kept for theta(k, n) etc. (a ring: step n in slot n % out_slots);
  /// 0 = n_steps, all of them. Lockstep RL loops read each step right away and need 1.
  PbfdTeamBatch(const Model& m, const PbdSettings& s, int K, int n_steps, bool lockstep, int threads = 0,
                DenseAlgebra algebra = DenseAlgebra::Fused, int out_slots = 0)
      : model_(m), arrays_(m), mv_(arrays_.view()), K_(K), D_(m.n_q), threads_(threads > 0 ? threads : omp_get_num_procs()),
        algebra_(algebra) {
    cfg_.eps_r = S(s.eps_r);
    cfg_.eps_x = S(s.eps_x);
    cfg_.it_max = s.it_max;
    cfg_.n_steps = n_steps;
    cfg_.n_out = out_slots > 0 ? out_slots : n_steps;
    cfg_.lockstep = lockstep;
    cfg_.restart = s.restart;
    cfg_.warm_lambda = s.warm_lambda;
    lm_set_friction(cfg_, s.contact);
    contact_ = s.contact;
    cfg_.order = s.order;
    const ContactParams& c = s.contact;
    p_ = {S(s.dt), S(c.c_perp), S(c.c_par), S(c.alpha), S(c.beta), S(c.gamma)};
    per_ = size_t(lm_traj_size(mv_, cfg_.n_out, cfg_.order));
    // poisoned: every entry the iteration reads must have been written first (init() sets the
    // inputs), so a read-before-write shows up as NaN in the equivalence tests
    data_.assign(per_ * K, std::numeric_limits<S>::quiet_NaN());
    ints_.assign(size_t(kLmInts) * K, 0);
    iters_.assign(size_t(cfg_.n_out) * K, -1);
    status_.assign(size_t(cfg_.n_out) * K, ~0u);
    scratch_.assign(size_t(pbfd_scratch_size(mv_)) * threads_, S(0));
  }

  /// Initial state of trajectory k: theta(0) and theta_{-1} = theta(0) - dt theta_dot(0).
  void init(int k, const VecX& theta0, const VecX& theta_m1) {
    LmTraj<S> t = traj(k);
    for (int i = 0; i < D_; ++i) {
      t.th_n[i] = S(theta0[i]);
      t.th_nm1[i] = S(theta_m1[i]);
      t.tau[i] = t.theta_bar[i] = t.theta_dot_bar[i] = t.kp[i] = t.kd[i] = 0;
    }
    lm_write_params<S>(model_, t.params, contact_, nullptr);
    CpuTeam team;
    lm_team_init(team, mv_, t, scratch_.data());
  }

  /// New episode for trajectory k (lockstep RL resets): state from theta0 / theta_m1, RUNNING at
  /// its next step; its parameters, gains and controls stay.
  void reinit(int k, const VecX& theta0, const VecX& theta_m1) {
    LmTraj<S> t = traj(k);
    for (int i = 0; i < D_; ++i) {
      t.th_n[i] = S(theta0[i]);
      t.th_nm1[i] = S(theta_m1[i]);
    }
    CpuTeam team;
    lm_team_init(team, mv_, t, scratch_.data());
  }

  /// Runs every team phase from now on with ThreadTeam (solvers/team/team_thread.h): `lanes` OS
  /// threads per trajectory at once with a real barrier, trajectories one after another (no
  /// OpenMP), so a missing sync() races as on the GPU (the ThreadSanitizer tests). 0 = CpuTeam.
  void use_thread_team(int lanes) { runner_ = lanes > 0 ? std::make_unique<ThreadTeamRunner>(lanes) : nullptr; }

  /// One launch: `iterations` LM iterations (default 1, docs/methods/pbfd.md §6) of every RUNNING trajectory.
  /// Several per launch amortise launch overhead on the GPU; results equal that many launches.
  /// Returns how many are RUNNING.
  int launch(int iterations = 1) {
    if (algebra_ == DenseAlgebra::Library) {
      for (int it = 0; it < iterations; ++it) library_iteration();
      return count(TRAJ_RUNNING);
    }
    each_traj([&](auto& team, LmTraj<S>& t, int, S* scr) {
      for (int it = 0; it < iterations; ++it) lm_team_iteration(team, mv_, cfg_, t, p_.dt, p_.alpha, p_.beta, p_.gamma, scr);
    });
    return count(TRAJ_RUNNING);
  }
  /// How many trajectories are in state st (TrajStatus).
  int count(int st) const {
    int n = 0;
    for (int k = 0; k < K_; ++k) n += ints_[kLmInts * k + LmInt::status] == st;
    return n;
  }
  /// Per-rollout parameters (after init; default: the settings' C_perp, C_par and mass scale 1).
  /// link_mass_scale: n_link factors on link masses and inertias (RolloutParams), nullptr = 1.
  void set_params(int k, const ContactParams& c, const double* link_mass_scale = nullptr) {
    lm_write_params<S>(model_, traj(k).params, c, link_mass_scale);
  }
  /// Turns the stable-PD servo on with gains kp, kd (n_q each) for every trajectory.
  void set_gains(const VecX& kp, const VecX& kd) {
    cfg_.pd = true;
    for (int k = 0; k < K_; ++k) {
      LmTraj<S> t = traj(k);
      for (int i = 0; i < D_; ++i) {
        t.kp[i] = S(kp[i]);
        t.kd[i] = S(kd[i]);
      }
    }
  }
  /// Controls of trajectory k's next step: torques and (with a servo) the PD targets at the
  /// step's end time (n_q each; theta_bar / theta_dot_bar may be empty without a servo).
  /// In lockstep mode set them while the trajectory is WAITING, then release_waiting().
  void set_controls(int k, const VecX& tau, const VecX& theta_bar = {}, const VecX& theta_dot_bar = {}) {
    LmTraj<S> t = traj(k);
    for (int i = 0; i < D_; ++i) {
      t.tau[i] = tau.size() ? S(tau[i]) : S(0);
      t.theta_bar[i] = theta_bar.size() ? S(theta_bar[i]) : S(0);
      t.theta_dot_bar[i] = theta_dot_bar.size() ? S(theta_dot_bar[i]) : S(0);
    }
  }
  /// Lockstep: WAITING -> RUNNING for every trajectory (after the caller set new torques).
  void release_waiting() {
    for (int k = 0; k < K_; ++k) {
      int& st = ints_[kLmInts * k + LmInt::status];
      if (st == TRAJ_WAITING) st = TRAJ_RUNNING;
    }
  }
  int status(int k) const { return ints_[kLmInts * k + LmInt::status]; }
  int steps_done(int k) const { return ints_[kLmInts * k + LmInt::step]; }
  /// Committed configuration of trajectory k after step n (0-based).
  VecX theta(int k, int n) {
    VecX v(D_);
    theta_into(k, n, v.data());
    return v;
  }
  /// theta(k, n) into out (n_q), no allocation (a lockstep engine's per-step read-back).
  void theta_into(int k, int n, double* out) {
    const LmTraj<S> t = traj(k);
    for (int i = 0; i < D_; ++i) out[i] = double(t.out_theta[(n % cfg_.n_out) * D_ + i]);
  }
  int iterations(int k, int n) const { return iters_[size_t(k) * cfg_.n_out + n % cfg_.n_out]; }
  /// Last accepted residual |r|_inf of trajectory k (its last committed step, in lockstep mode).
  double residual(int k) { return double(traj(k).res()); }
  /// Largest residual(k) over all trajectories (the CUDA mirror reduces it on the device).
  double max_residual() {
    double r = 0;
    for (int k = 0; k < K_; ++k) r = std::max(r, residual(k));
    return r;
  }
  unsigned step_status(int k, int n) const { return status_[size_t(k) * cfg_.n_out + n % cfg_.n_out]; }

  /// One persistent launch (solvers/pbd/pbd_step_persistent.h, the CUDA warp kernel's loop): every
  /// RUNNING trajectory iterates until it leaves RUNNING (lockstep: its step committed; rollout:
  /// its horizon done) or for it_cap iterations when it_cap > 0. Equals that many launch() calls
  /// bit for bit. Returns how many are RUNNING (0 when it_cap <= 0).
  int launch_persistent(int it_cap = 0) {
    const int nl = lm_local_size(mv_);
    if (local_.empty()) {  // sized once, on the first persistent launch (not per launch)
      local_.assign(size_t(nl) * threads_, std::numeric_limits<S>::quiet_NaN());
      local_ints_.assign(size_t(kLmInts) * threads_, 0);
    }
    const auto run = [&](int k) {
      CpuTeam team;
      const int th = omp_get_thread_num();
      lm_team_run(team, mv_, cfg_, traj(k), p_.dt, p_.alpha, p_.beta, p_.gamma, local_.data() + size_t(nl) * th,
                  local_ints_.data() + size_t(kLmInts) * th, it_cap);
    };
    // dynamic: iterations per trajectory differ; results do not depend on the thread
    for_each_index_dynamic(K_, threads_, 16, run);
    return count(TRAJ_RUNNING);
  }

 private:
  S* scratch(int thread) { return scratch_.data() + size_t(thread) * pbfd_scratch_size(mv_); }

  // f(team, t, k, scratch) for every trajectory k: CpuTeam with OpenMP over trajectories, or all
  // lanes of the ThreadTeamRunner at once on one trajectory after another
  template <class F>
  void each_traj(F&& f) {
    if (runner_) {
      for (int k = 0; k < K_; ++k)
        runner_->run([&](ThreadTeam& team) {
          LmTraj<S> t = traj(k);
          f(team, t, k, scratch(0));
        });
      return;
    }
    // (core/parallel_for.h: one thread runs outside a parallel region, which would allocate)
    for_each_index(K_, threads_, [&](int k) {
      CpuTeam team;
      LmTraj<S> t = traj(k);
      f(team, t, k, scratch(omp_get_thread_num()));
    });
  }

  // One iteration of every trajectory through the library path: the phases of
  // solvers/pbd/pbd_step_team.h with the dense algebra done batch-wide in between, as the CUDA
  // library path does with cuBLAS gemmStridedBatched and cuSOLVER potrfBatched/potrsBatched.
  void library_iteration() {
    using Mat = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;  // column-major, as cuBLAS
    using Vec = Eigen::Matrix<S, Eigen::Dynamic, 1>;
    const int D = D_;
    B_new_.resize(size_t(K_) * D * D);
    g_new_.resize(size_t(K_) * D);
    info_.assign(K_, 0);
    again_.assign(K_, 0);
    each_traj([&](auto& team, LmTraj<S>& t, int, S* scr) {
      lm_phase_evaluate(team, mv_, cfg_, t, p_.dt, p_.alpha, p_.beta, p_.gamma, scr);
    });
    // "gemmStridedBatched" over all K: B = J^T J, g = J^T r (J row-major = J^T column-major);
    // serial under ThreadTeam (its tests run under ThreadSanitizer, which does not see OpenMP's barriers)
#pragma omp parallel for schedule(static) num_threads(threads_) if (!runner_)
    for (int k = 0; k < K_; ++k) {
      LmTraj<S> t = traj(k);
      const Eigen::Map<const Mat> Jt(t.J, D, D);
      Eigen::Map<Mat>(B_new_.data() + size_t(k) * D * D, D, D).noalias() = Jt * Jt.transpose();
      Eigen::Map<Vec>(g_new_.data() + size_t(k) * D, D).noalias() = Jt * Eigen::Map<const Vec>(t.r, D);
    }
    each_traj([&](auto& team, LmTraj<S>& t, int k, S* scr) {
      lm_phase_normal_take(team, D, t, B_new_.data() + size_t(k) * D * D, g_new_.data() + size_t(k) * D);
      lm_phase_update(team, mv_, cfg_, t, scr);
    });
    // "potrfBatched" with lambda growth and re-factorisation of the failed ones (30 tries)
    for (int round = 0; round < 31; ++round) {
      each_traj([&](auto& team, LmTraj<S>& t, int k, S*) {
        lm_phase_assemble(team, D, t);
        team.single([&] {  // the "library call": one lane (the host) for the trajectory
          Eigen::Map<Mat> A(t.Lc, D, D);
          Eigen::LLT<Eigen::Ref<Mat>> llt(A);  // in place: lower factor in A, as potrf
          const bool finite = A.allFinite();
          info_[k] = llt.info() == Eigen::Success && finite ? 0 : 1;
        });
        team.sync();
        const bool a = lm_phase_factor_check(team, t, info_[k]);
        team.single([&] { again_[k] = a; });
      });
      if (std::count(again_.begin(), again_.end(), 1) == 0) break;
    }
    // "potrsBatched": r = -(L L^T)^-1 g in place, then the candidate phase
    each_traj([&](auto& team, LmTraj<S>& t, int, S* scr) {
      team.single([&] {
        if (!t.over()) {
          const Eigen::Map<const Mat> L(t.Lc, D, D);
          Eigen::Map<Vec> r(t.r, D);
          L.template triangularView<Eigen::Lower>().solveInPlace(r);
          L.template triangularView<Eigen::Lower>().transpose().solveInPlace(r);
        }
      });
      team.sync();
      lm_phase_candidate(team, mv_, cfg_, t, scr);
    });
  }

  LmTraj<S> traj(int k) {
    return lm_traj_at(mv_, cfg_.n_out, cfg_.order, k, data_.data(), ints_.data(), iters_.data(), status_.data());
  }

  Model model_;  // one copy (link masses, gravity) for the per-rollout weights of set_params
  ModelArrays<S> arrays_;
  ModelView<S> mv_;
  int K_, D_, threads_;
  DenseAlgebra algebra_;
  LmTeamSettings<S> cfg_;
  LmStepScalars<S> p_;
  ContactParams contact_;  // the settings' contact law: every rollout's until set_params
  size_t per_;
  std::vector<S> data_, scratch_;
  std::vector<int> ints_, iters_;
  std::vector<unsigned> status_;
  std::vector<S> B_new_, g_new_;  // library path: batched products
  std::vector<int> info_;         // library path: factorisation status per trajectory
  std::vector<S> local_;          // persistent launches: one lm_local_size workspace per thread
  std::vector<int> local_ints_;
  std::vector<int> again_;        // library path: 1 = factor again (lambda grew)
  std::unique_ptr<ThreadTeamRunner> runner_;  // use_thread_team(): ThreadTeam lanes, else CpuTeam
};

}  // namespace bigstep
