// VecEnv: K environments of one task (envs/tasks.h) stepped by one batch engine
// (batch/batch_engines.h), for RL loops (docs/architecture.md §1.4: C++ VecEnv).
//
// One step(actions):
//   1. actions (K x n_a) -> joint torques (K x n_q) and stable-PD targets theta_bar (K x n_q):
//      actuator mode: motors gear * clamp(a, ctrlrange), position actuators the target
//      sum kp gear clamp(a) / sum kp gear^2 of their DOF (solvers/terms/actuation.h); torque mode: a on
//      the actuated DOFs; position mode: theta_bar = clamp(a, joint range) on the actuated DOFs
//      with gains task.position_kp / position_kv (envs/tasks.h ActionMode). A non-finite row or an
//      out-of-range value is flagged per env (flags), never thrown
//   1b. pushes (batch.push_prob > 0, robustness training): with probability push_prob per env and
//      step, theta_dot gets a kick N(0, push_speed^2) on every coordinate (theta_prev moved by
//      -dt kick), drawn from the env's own stream (seed, k), and the engine is told (reset)
//   2. the engine steps every live rollout; a rollout whose solver hit the iteration budget
//      (task.iteration_budget LM iterations per attempt) or failed (non-finite, factorisation,
//      gimbal lock) is flagged, its state held at the step's start, and its episode truncated
//   3. theta -> MuJoCo's qpos / qvel (theta_dot = (theta - theta_prev) / dt), the task's
//      observation, reward and termination; truncation at task.episode_steps
//   4. auto-reset, SAME_STEP (Gymnasium's AutoresetMode.SAME_STEP, SB3's and rsl_rl's habit): an
//      env whose episode ended this step has its last observation in final_obs, and obs already
//      holds the first observation of its next episode (fresh initial state from the stream
//      (seed, k, episode), re-drawn masses / friction / stiffness when batch.randomize_* are on)
// Every output is a persistent buffer sized at construction (numpy views in Python); a step does
// not allocate, resets of ended envs included (tests/envs/vec_env_alloc_test.cpp).
#pragma once
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/backend.h"
#include "batch/batch_engines.h"
#include "envs/tasks.h"

namespace bigstep {

/// Per-env flags of the last step (VecEnv::flags), bit values.
enum EnvFlag : uint32_t {
  ENV_ACTION_NONFINITE = 1u << 0,   ///< a NaN / inf action: the rollout is held, the episode truncated
  ENV_ACTION_OUT_OF_RANGE = 1u << 1,///< an action outside the action space (actuator mode: clamped)
  ENV_BUDGET_EXCEEDED = 1u << 2,    ///< the solver hit the iteration budget: held, truncated
  ENV_SOLVER_FAILED = 1u << 3,      ///< non-finite state / factorisation / gimbal lock: held, truncated
};

struct VecEnvOptions {
  int num_envs = 1;
  uint64_t seed = 0;
  std::string backend = "cpu";            ///< cpu | cuda | auto
  std::vector<std::string> overrides;     ///< "key=value" (scene keys and task.* keys)
  bool autoreset = true;                  ///< false: ended envs stay ended until reset() (a single Env)
};

class VecEnv {
 public:
  VecEnv(const std::string& task_file, const VecEnvOptions& opt);
  /// From a loaded task file (tests).
  VecEnv(TaskFile tf, const VecEnvOptions& opt);
  ~VecEnv();

  /// Every env starts a new episode. seed >= 0: the batch is rebuilt from that seed (streams
  /// (seed, k, episode) from episode 0, randomised parameters re-drawn as at construction); seed < 0:
  /// each env's next episode of its current stream.
  void reset(int64_t seed = -1);
  /// One env step with actions (K x action_dim, row-major). Throws InvalidArgument only for a null
  /// pointer; bad values are flagged per env.
  void step(const double* actions);

  int num_envs() const { return K_; }
  int obs_dim() const { return task_->obs_dim(); }
  int action_dim() const { return task_->action_dim(); }
  double dt() const { return sc().settings.dt; }
  const Task& task() const { return *task_; }
  const Scene& sc() const { return tf_.scene; }
  const std::string& engine_name() const { return engine_name_; }
  const std::string& backend_reason() const { return bk_.reason; }  ///< why this backend (auto's choice)

  // persistent outputs of the last step / reset (row k = env k)
  double* obs() { return obs_.data(); }                 ///< (K x obs_dim)
  double* final_obs() { return final_obs_.data(); }     ///< (K x obs_dim) valid where done (autoreset)
  double* reward() { return reward_.data(); }           ///< (K)
  uint8_t* terminated() { return terminated_.data(); }  ///< (K) 0 / 1
  uint8_t* truncated() { return truncated_.data(); }    ///< (K) 0 / 1
  uint32_t* flags() { return flags_.data(); }           ///< (K) EnvFlag bits of the last step
  int32_t* episode_step() { return episode_step_.data(); }  ///< (K) steps of the current episode
  uint32_t* status() { return status_.data(); }         ///< (K) the engine's status bits of the last step (core/types.h)
  int32_t* iterations() { return iterations_.data(); }  ///< (K) solver iterations of the last step (before any reset)
  double* qpos() { return qpos_.data(); }               ///< (K x nq) MuJoCo qpos of the current state
  double* qvel() { return qvel_.data(); }               ///< (K x nv)
  const double* terms() const { return terms_.data(); } ///< (K x 4): forward, ctrl, contact, survive
  const uint32_t* episode() const { return b_.episode.data(); }  ///< (K) episodes started per env
  const RolloutParamTable& params() const { return p_; }
  /// (K x n_q) the servo targets of the last step (position actions), nullptr when the task has none.
  const double* theta_bar() const { return theta_bar_.empty() ? nullptr : theta_bar_.data(); }
  /// The batch state (theta, theta_prev: K x n_q) the engine steps.
  const StateBatch& batch() const { return b_; }
  int iteration_budget() const { return tf_.scene.settings.it_max; }

  /// Sets env k's state from MuJoCo's (qpos, qvel) (theta_prev = theta - dt theta_dot) and
  /// recomputes its observation (the Gymnasium equality tests; a policy's start-state curriculum).
  void set_state(int k, const double* qpos, const double* qvel);
  /// The task at a state without stepping (Task::evaluate): obs (obs_dim), terms (4: forward,
  /// ctrl, contact, survive), xy (2: the state's tracked position); returns the reward.
  double evaluate(const double* qpos, const double* qvel, const double* action, const double* xy_before, double* obs,
                  uint8_t* terminated, double* terms, double* xy);

 private:
  void build(int64_t seed);
  void observe(int k, const double* action, bool reset);  // qpos/qvel/obs/reward of env k
  void reset_envs(const std::vector<int>& ks);
  void clear_outputs();

  TaskFile tf_;
  VecEnvOptions opt_;
  std::unique_ptr<Task> task_;
  BackendChoice bk_;
  BatchOptions bopt_;
  int K_ = 0, nq_ = 0, nv_ = 0, n_ = 0;
  StateBatch b_;
  RolloutParamTable p_;
  std::unique_ptr<BatchEngine> engine_;
  std::string engine_name_;
  bool randomized_ = false;
  // persistent buffers
  std::vector<double> obs_, final_obs_, reward_, qpos_, qvel_, xy_, terms_, tau_, act_, theta_hold_, theta_prev_hold_;
  std::vector<double> theta_bar_;  // (K x n_q) servo targets of position actions, empty without
  std::vector<uint8_t> terminated_, truncated_;
  std::vector<uint32_t> flags_;
  std::vector<int32_t> episode_step_, iterations_;
  std::vector<uint32_t> status_;
  std::vector<int> ended_;  // scratch: envs to reset (capacity K)
  std::vector<int> pushed_;  // scratch: envs kicked this step (capacity K)
  std::vector<std::mt19937_64> push_rng_;  // (K) each env's push stream (seed, k), empty without pushes
  // per-thread scratch
  struct Scratch;
  std::vector<std::unique_ptr<Scratch>> scratch_;
  int threads_ = 1;
};

}  // namespace bigstep
