// VecEnv: a task's K environments over one batch engine (vec_env.h).
#include "envs/vec_env.h"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/parallel_for.h"
#include "io/mjcf_import.h"

namespace bigstep {

// One thread's scratch: the task's (MuJoCo probe data) and the state maps' vectors.
struct VecEnv::Scratch {
  TaskScratchPtr task;
  VecX theta, theta_dot, qpos, qvel;
};

namespace {
constexpr uint32_t kEngineHeld = STATUS_NONFINITE | STATUS_GIMBAL_LOCK | STATUS_FACTOR_FAILED;
int checked_num_envs(int K) {
  BIGSTEP_CHECK_ARG(K >= 1 && K <= (1 << 24), "num_envs", K, "must be in [1, 2^24]");
  return K;
}
}  // namespace

VecEnv::VecEnv(const std::string& task_file, const VecEnvOptions& opt) : VecEnv(load_task(task_file, opt.overrides), opt) {}

VecEnv::VecEnv(TaskFile tf, const VecEnvOptions& opt)
    : tf_(std::move(tf)), opt_(opt), b_(checked_num_envs(opt.num_envs), tf_.scene.model.n_q) {
  Scene& sc = tf_.scene;
  // the iteration budget is the integrator's per-attempt cap for every env
  if (tf_.spec.iteration_budget > 0) sc.settings.it_max = tf_.spec.iteration_budget;
  task_ = std::make_unique<Task>(tf_.spec, sc);
  // position actions: the engines' stable-PD servo takes the task's gains and per-env targets
  if (task_->servo_kp().size()) {
    BIGSTEP_CHECK_ARG(!sc.pd.active(), sc.source + ": control.pd", "a servo",
                      "position actions set the servo's gains and targets: remove control.pd or use task.action_mode: torque");
    sc.pd.kp = task_->servo_kp();
    sc.pd.kd = task_->servo_kd();
    // (engines call it only without per-env targets; the VecEnv always passes them)
    sc.pd.reference = [theta0 = sc.theta0](double, VecX& th_bar, VecX& th_dot_bar) {
      th_bar = theta0;
      th_dot_bar.setZero(theta0.size());
    };
    theta_bar_.assign(size_t(opt.num_envs) * sc.model.n_q, 0.0);
  }
  bk_ = select_backend(opt.backend);
  K_ = opt.num_envs;
  nq_ = task_->nq();
  nv_ = task_->nv();
  n_ = sc.model.n_q;
  // the rollouts' rotation charts (core/chart.h), read by the observations and set by set_state
  if (sc.model.n_chart > 0) b_.chart.assign(size_t(K_) * sc.model.n_chart, Mat3::Identity());
  const int D = obs_dim(), A = action_dim();
  obs_.assign(size_t(K_) * D, 0.0);
  final_obs_.assign(size_t(K_) * D, 0.0);
  reward_.assign(K_, 0.0);
  qpos_.assign(size_t(K_) * nq_, 0.0);
  qvel_.assign(size_t(K_) * nv_, 0.0);
  xy_.assign(size_t(K_) * 2, 0.0);
  terms_.assign(size_t(K_) * 4, 0.0);
  tau_.assign(size_t(K_) * n_, 0.0);
  act_.assign(size_t(K_) * A, 0.0);
  theta_hold_.assign(size_t(K_) * n_, 0.0);
  theta_prev_hold_.assign(size_t(K_) * n_, 0.0);
  terminated_.assign(K_, 0);
  truncated_.assign(K_, 0);
  flags_.assign(K_, 0);
  episode_step_.assign(K_, 0);
  iterations_.assign(K_, 0);
  status_.assign(K_, 0u);
  ended_.reserve(K_);
  pushed_.reserve(K_);
  threads_ = sc.threads > 0 ? sc.threads : omp_get_num_procs();
  for (int t = 0; t < threads_; ++t) {
    auto s = std::make_unique<Scratch>();
    s->task = task_->make_scratch();
    s->theta.setZero(n_);
    s->theta_dot.setZero(n_);
    s->qpos.setZero(nq_);
    s->qvel.setZero(nv_);
    scratch_.push_back(std::move(s));
  }
  bopt_ = static_cast<const BatchOptions&>(sc);  // the scene's batch.* block with this env's K and seed
  bopt_.rollouts = K_;
  bopt_.seed = opt.seed;
  randomized_ = sc.randomize_friction > 0 || sc.randomize_stiffness > 0 || sc.randomize_mass > 0 ||
                sc.randomize_limit_stiffness > 0;
  build(int64_t(opt.seed));
}

VecEnv::~VecEnv() = default;

// A fresh batch from seed: states, randomised parameters, engine; every env's first observation.
void VecEnv::build(int64_t seed) {
  bopt_.seed = uint64_t(seed);
  // b_ keeps its buffers (Python holds views of status / iterations): rows rewritten in place
  b_.steps = 0;
  init_batch(sc(), bopt_, b_, p_);
  // the push streams: one per env, (seed, k, tag), apart from the batch's (seed, k, episode)
  push_rng_.clear();
  if (sc().push_prob > 0)
    for (int k = 0; k < K_; ++k) {
      std::seed_seq seq{uint32_t(seed), uint32_t(uint64_t(seed) >> 32), uint32_t(k), 0x70757368u};
      push_rng_.emplace_back(seq);
    }
  // the CUDA engine cannot change per-rollout parameters between episodes (BatchEngine::set_params)
  if (bk_.backend == Backend::Cuda && randomized_) {
    BIGSTEP_CHECK_ARG(opt_.backend == "auto", "backend", opt_.backend,
                      "per-episode re-randomisation (batch.randomize_*) needs a CPU engine: use backend cpu");
    bk_ = BackendChoice{Backend::Cpu, "auto: CPU, the CUDA engine does not re-randomise per episode"};
  }
  try {
    engine_ = make_batch_engine(sc(), bk_, b_, p_);
  } catch (const InvalidArgument& e) {
    // auto falls back to the CPU reference when the CUDA (team) engine does not support the task
    if (opt_.backend != "auto" || bk_.backend != Backend::Cuda) throw;
    bk_ = BackendChoice{Backend::Cpu, std::string("auto: CPU, the CUDA engine does not support this task: ") + e.what()};
    engine_ = make_batch_engine(sc(), bk_, b_, p_);
  }
  engine_name_ = engine_->name();
  clear_outputs();
  for_each_index(K_, threads_, [&](int k) { observe(k, nullptr, true); });
}

// After a reset of every env: no step outputs yet.
void VecEnv::clear_outputs() {
  std::fill(episode_step_.begin(), episode_step_.end(), 0);
  std::fill(flags_.begin(), flags_.end(), 0u);
  std::fill(reward_.begin(), reward_.end(), 0.0);
  std::fill(terms_.begin(), terms_.end(), 0.0);
  std::fill(terminated_.begin(), terminated_.end(), uint8_t(0));
  std::fill(truncated_.begin(), truncated_.end(), uint8_t(0));
  std::fill(iterations_.begin(), iterations_.end(), 0);
  std::fill(status_.begin(), status_.end(), 0u);
}

void VecEnv::reset(int64_t seed) {
  if (seed >= 0) return build(seed);
  ended_.clear();
  for (int k = 0; k < K_; ++k) ended_.push_back(k);
  reset_envs(ended_);
  clear_outputs();
}

// New episodes for the envs in ks: seeded initial states, re-drawn parameters, engine told, first
// observations.
void VecEnv::reset_envs(const std::vector<int>& ks) {
  if (ks.empty()) return;
  reset_rollouts(sc(), bopt_, b_, ks);
  if (randomized_) {
    redraw_params(sc(), bopt_, b_, p_, ks);
    engine_->set_params(p_, ks);
  }
  engine_->reset(b_, ks);
  const int n = int(ks.size());
  for_each_index(n, threads_, [&](int i) {
    episode_step_[ks[i]] = 0;
    observe(ks[i], nullptr, true);
  });
}

// theta -> (qpos, qvel) -> the task's observation; on a step also reward and termination. reset:
// the tracked position starts here; the step's reward / termination of an ended episode stay.
void VecEnv::observe(int k, const double* action, bool reset) {
  Scratch& s = *scratch_[omp_get_thread_num()];
  const MujocoImport& imp = *sc().imported;
  s.theta = b_.row(b_.theta, k);
  s.theta_dot = (s.theta - b_.row(b_.theta_prev, k)) / dt();
  qpos_from_theta(imp, s.theta, s.qpos, b_.chart_row(k, sc().model.n_chart));
  qvel_from_theta_dot(imp, s.theta, s.theta_dot, s.qvel);
  std::copy(s.qpos.data(), s.qpos.data() + nq_, qpos_.data() + size_t(k) * nq_);
  std::copy(s.qvel.data(), s.qvel.data() + nv_, qvel_.data() + size_t(k) * nv_);
  double* xy = xy_.data() + 2 * size_t(k);
  double xy_before[2] = {xy[0], xy[1]};
  TaskTerms t;
  const double r = task_->evaluate(s.qpos.data(), s.qvel.data(), action, xy_before, *s.task,
                                   obs_.data() + size_t(k) * obs_dim(), xy, t);
  if (reset) return;
  double* tk = terms_.data() + 4 * size_t(k);
  reward_[k] = r;
  terminated_[k] = !t.healthy && tf_.spec.terminate_when_unhealthy;
  tk[0] = t.forward, tk[1] = t.ctrl, tk[2] = t.contact, tk[3] = t.survive;
}

void VecEnv::step(const double* actions) {
  BIGSTEP_CHECK_ARG(actions != nullptr, "actions", "null", detail::concat("expected (", K_, " x ", action_dim(), ") values"));
  const int A = action_dim();
  const std::vector<int>& dof = task_->action_dof();
  const std::vector<double>&gear = task_->action_gear(), &lo = task_->action_low(), &hi = task_->action_high();
  const std::vector<double>& kp = task_->action_kp();
  const bool clamp = tf_.spec.action_mode != ActionMode::Torque;
  const bool servo = !theta_bar_.empty();
  // 1. actions -> torques and servo targets; bad values flagged per env; state kept for a held rollout
  for (int k = 0; k < K_; ++k) {
    const double* a = actions + size_t(k) * A;
    double* tau = tau_.data() + size_t(k) * n_;
    double* bar = servo ? theta_bar_.data() + size_t(k) * n_ : nullptr;
    uint32_t f = 0;
    std::fill(tau, tau + n_, 0.0);
    if (servo) std::fill(bar, bar + n_, 0.0);
    for (int i = 0; i < A; ++i) {
      double u = a[i];
      act_[size_t(k) * A + i] = u;
      if (!std::isfinite(u)) f |= ENV_ACTION_NONFINITE;
      else if (u < lo[i] || u > hi[i]) {
        f |= ENV_ACTION_OUT_OF_RANGE;
        if (clamp) u = std::clamp(u, lo[i], hi[i]);  // MuJoCo clamps ctrl to ctrlrange
      }
      if (kp[i] > 0) bar[dof[i]] += kp[i] * u;  // position: sum kp gear u, divided by K_p below
      else tau[dof[i]] += gear[i] * u;
    }
    if (servo) {
      const VecX& Kp = task_->servo_kp();
      // position mode (one gear-1 target per DOF): the action itself, not (kp u) / kp rounded
      if (tf_.spec.action_mode == ActionMode::Position)
        for (int i = 0; i < A; ++i) bar[dof[i]] = std::clamp(a[i], lo[i], hi[i]);
      else
        for (int j = 0; j < n_; ++j)
          if (Kp[j] > 0) bar[j] /= Kp[j];
    }
    // why zeros / the current state: a NaN row would rely on every engine detecting it; the env is
    // held anyway
    if (f & ENV_ACTION_NONFINITE) {
      std::fill(tau, tau + n_, 0.0);
      if (servo) std::copy_n(b_.theta.data() + size_t(k) * n_, n_, bar);
    }
    flags_[k] = f;
    std::copy_n(b_.theta.data() + size_t(k) * n_, n_, theta_hold_.data() + size_t(k) * n_);
    std::copy_n(b_.theta_prev.data() + size_t(k) * n_, n_, theta_prev_hold_.data() + size_t(k) * n_);
    // this step's "not converged" (the batch keeps it sticky)
    b_.status[k] &= ~uint32_t(STATUS_NOT_CONVERGED);
  }
  // 1b. pushes: a kick on theta_dot = (theta - theta_prev) / dt, i.e. theta_prev -= dt kick
  if (!push_rng_.empty()) {
    pushed_.clear();
    const double h = dt(), s = sc().push_speed;
    for (int k = 0; k < K_; ++k) {
      std::mt19937_64& rng = push_rng_[size_t(k)];
      if (std::uniform_real_distribution<double>(0.0, 1.0)(rng) >= sc().push_prob) continue;
      std::normal_distribution<double> N(0.0, 1.0);
      double* th_prev = b_.theta_prev.data() + size_t(k) * n_;
      for (int i = 0; i < n_; ++i) th_prev[i] -= h * s * N(rng);
      pushed_.push_back(k);
    }
    if (!pushed_.empty()) engine_->reset(b_, pushed_);  // the engine re-reads the kicked rows
  }
  // 2. the engine (a NaN torque row makes the integrator flag and hold that rollout)
  engine_->step(b_, p_, tau_.data(), servo ? theta_bar_.data() : nullptr);
  // 3. failures held, observations, rewards, terminations, truncations
  ended_.clear();
  for_each_index(K_, threads_, [&](int k) {
    const uint32_t st = b_.status[k];
    status_[k] = st;  // kept: an auto-reset clears the batch's row
    iterations_[k] = b_.iterations[k];
    uint32_t& f = flags_[k];
    if (st & STATUS_NOT_CONVERGED) f |= ENV_BUDGET_EXCEEDED;
    if (st & (kEngineHeld | STATUS_CONTACT_OVERFLOW)) f |= ENV_SOLVER_FAILED;
    const bool failed = (f & (ENV_ACTION_NONFINITE | ENV_BUDGET_EXCEEDED | ENV_SOLVER_FAILED)) != 0;
    if (failed) {
      // held at the step's start: what the solver left is not a state of the system
      std::copy_n(theta_hold_.data() + size_t(k) * n_, n_, b_.theta.data() + size_t(k) * n_);
      std::copy_n(theta_prev_hold_.data() + size_t(k) * n_, n_, b_.theta_prev.data() + size_t(k) * n_);
    }
    // a non-finite action has no ctrl cost: the task sees zeros
    observe(k, (f & ENV_ACTION_NONFINITE) ? nullptr : act_.data() + size_t(k) * A, false);
    ++episode_step_[k];
    truncated_[k] = failed || episode_step_[k] >= tf_.spec.episode_steps;
    if (failed) {
      reward_[k] = 0;  // a failed step earns nothing
      terminated_[k] = 0;
    }
  });
  // 4. SAME_STEP auto-reset of the ended envs
  for (int k = 0; k < K_; ++k)
    if (terminated_[k] || truncated_[k]) {
      std::copy_n(obs_.data() + size_t(k) * obs_dim(), obs_dim(), final_obs_.data() + size_t(k) * obs_dim());
      ended_.push_back(k);
    }
  if (opt_.autoreset) {
    // the rollouts the engine holds must be re-initialised before they step again
    reset_envs(ended_);
  }
}

void VecEnv::set_state(int k, const double* qpos, const double* qvel) {
  BIGSTEP_CHECK_ARG(k >= 0 && k < K_, "env index", k, detail::concat("must be in [0, ", K_, ")"));
  Scratch& s = *scratch_[0];
  const MujocoImport& imp = *sc().imported;
  Eigen::Map<const VecX> qp(qpos, nq_), qv(qvel, nv_);
  for (int i = 0; i < nq_; ++i) BIGSTEP_CHECK_ARG(std::isfinite(qpos[i]), detail::concat("qpos[", i, "]"), qpos[i], "must be finite");
  for (int i = 0; i < nv_; ++i) BIGSTEP_CHECK_ARG(std::isfinite(qvel[i]), detail::concat("qvel[", i, "]"), qvel[i], "must be finite");
  s.qpos = qp;
  s.qvel = qv;
  theta_from_qpos(imp, s.qpos, s.theta, b_.chart_row(k, sc().model.n_chart));
  theta_dot_from_qvel(imp, s.theta, s.qvel, s.theta_dot);
  b_.row(b_.theta, k) = s.theta;
  b_.row(b_.theta_prev, k) = s.theta - dt() * s.theta_dot;
  b_.status[k] = 0;
  ended_.assign(1, k);
  engine_->reset(b_, ended_);
  observe(k, nullptr, true);
}

double VecEnv::evaluate(const double* qpos, const double* qvel, const double* action, const double* xy_before, double* obs,
                        uint8_t* terminated, double* terms, double* xy) {
  TaskTerms t;
  const double r = task_->evaluate(qpos, qvel, action, xy_before, *scratch_[0]->task, obs, xy, t);
  *terminated = !t.healthy && tf_.spec.terminate_when_unhealthy;
  terms[0] = t.forward, terms[1] = t.ctrl, terms[2] = t.contact, terms[3] = t.survive;
  return r;
}

}  // namespace bigstep
