// RL tasks on imported MuJoCo models: Gymnasium v5's observation, reward and termination
// definitions (gymnasium/envs/mujoco/{hopper,walker2d,half_cheetah,ant,humanoid}_v5.py) evaluated
// on MuJoCo's qpos / qvel (io/mjcf_import.h maps bigstep's theta to them), so returns are
// comparable with Gymnasium's MuJoCo environments, plus a quadruped walking task on the A1.
// A task file (configs/tasks/*.yaml) is a scene with one extra `task:` block (task_keys() lists
// its keys); the scene part is loaded by load_scene_text, so every scene key and --set works.
//
// Terms per step (dt = the control step = one physics step of bigstep):
//   forward  = w_f * (x_after - x_before) / dt       x: qpos[0] (hopper, walker2d, half_cheetah,
//                                                     quadruped), the torso body origin (ant), the
//                                                     mass centre sum m_b xipos_b / sum m_b (humanoid)
//   survive  = healthy_reward * is_healthy            (not half_cheetah)
//   ctrl     = w_c * |a|^2                            on the action as given (Gymnasium: not clipped)
//   contact  = w_k * |clip(cfrc_ext, range)|^2 (ant); min(w_k * |cfrc_ext|^2, max) (humanoid)
//   reward   = forward + survive - ctrl - contact;  terminated = !is_healthy && terminate_when_unhealthy
// Why a MuJoCo "probe": Humanoid-v5's observation holds cinert, cvel, qfrc_actuator and cfrc_ext,
// and Ant-v5's holds cfrc_ext: MuJoCo's own derived quantities. They are computed by MuJoCo's
// functions (mj_forward + mj_rnePostConstraint on the imported mjModel) at bigstep's state, so the
// definitions are Gymnasium's to the bit; cfrc_ext is therefore the contact force MuJoCo's contact
// model gives at that state, not bigstep's contact force (bigstep keeps no per-body wrench).
#pragma once
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "io/scene.h"

namespace bigstep {

enum class TaskKind { Hopper, Walker2d, HalfCheetah, Ant, Humanoid, Quadruped };

/// How actions become controls (VecEnv).
///   actuator: one action per model actuator; motors apply gear * clamp(a, ctrlrange), position
///             actuators set the stable-PD target of their DOF (MuJoCo's <position>: kp, kv;
///             solvers/terms/actuation.h's map: theta_bar = sum kp gear clamp(a) / sum kp gear^2)
///   torque  : one action per actuated DOF (the actuators' DOFs, or every DOF outside a free joint
///             when the model has none) in [-torque_limit, torque_limit] N m, applied as given (an
///             out-of-range value is flagged, not clipped: the iteration budget guards the batch)
///   position: one action per actuated DOF (as torque), its position target theta_bar through the
///             stable PD with gains task.position_kp / task.position_kv (the model's actuators
///             switched to MuJoCo <position> actuators of gear 1); bounds: the joint's range, or
///             [-pi, pi] when unlimited; an out-of-range target is flagged and clamped
enum class ActionMode { Actuator, Torque, Position };

/// The `task:` block of a task file. Defaults are Gymnasium v5's for the kind.
struct TaskSpec {
  std::string kind_name;                 ///< task.kind: hopper | walker2d | half_cheetah | ant | humanoid | quadruped
  TaskKind kind = TaskKind::Hopper;
  int episode_steps = 1000;              ///< task.episode_steps: truncation after this many env steps
  double forward_reward_weight = 1.0;    ///< task.forward_reward_weight
  double ctrl_cost_weight = 1e-3;        ///< task.ctrl_cost_weight
  double healthy_reward = 1.0;           ///< task.healthy_reward
  double contact_cost_weight = 0;        ///< task.contact_cost_weight (ant, humanoid)
  bool terminate_when_unhealthy = true;  ///< task.terminate_when_unhealthy
  std::array<double, 2> healthy_z{0.7, 1e300};          ///< task.healthy_z_range
  std::array<double, 2> healthy_angle{-0.2, 0.2};       ///< task.healthy_angle_range (hopper, walker2d)
  std::array<double, 2> healthy_state{-100.0, 100.0};   ///< task.healthy_state_range (hopper)
  std::array<double, 2> contact_force_range{-1.0, 1.0}; ///< task.contact_force_range (ant)
  double contact_cost_max = 10.0;        ///< task.contact_cost_max (humanoid's contact_cost_range[1])
  bool exclude_current_positions = true; ///< task.exclude_current_positions_from_observation
  bool include_cfrc_ext = true;          ///< task.include_cfrc_ext_in_observation (ant, humanoid)
  bool include_cinert = true;            ///< task.include_cinert_in_observation (humanoid)
  bool include_cvel = true;              ///< task.include_cvel_in_observation (humanoid)
  bool include_qfrc_actuator = true;     ///< task.include_qfrc_actuator_in_observation (humanoid)
  ActionMode action_mode = ActionMode::Actuator;  ///< task.action_mode: actuator | torque
  double torque_limit = 1.0;             ///< task.torque_limit [N m] (torque mode)
  double position_kp = 100.0;            ///< task.position_kp [N m/rad or N/m] (position mode)
  double position_kv = 2.0;              ///< task.position_kv [N m s/rad or N s/m] (position mode)
  int iteration_budget = 0;              ///< task.iteration_budget: solver iterations per attempt and env step (0 = integrator.it_max)
};

/// The keys of the task block, "task.<name>", with their meaning (the help text).
const std::vector<std::pair<std::string, std::string>>& task_keys();

/// A task file: scene + task block. Overrides "task.<key>=<yaml>" edit the task block, any other
/// "key=value" the scene (as bigstep run --set). Throws InvalidArgument naming file, key and value.
struct TaskFile {
  Scene scene;
  TaskSpec spec;
};
TaskFile load_task(const std::string& path, const std::vector<std::string>& overrides = {});
/// Same from YAML text; `source` names it in messages and anchors relative model paths.
TaskFile load_task_text(const std::string& yaml, const std::string& source, const std::vector<std::string>& overrides = {});

/// Per-thread scratch of Task::evaluate (a MuJoCo mjData for the probe kinds). Not shared.
struct TaskScratch;
struct TaskScratchDeleter {
  void operator()(TaskScratch* s) const;
};
using TaskScratchPtr = std::unique_ptr<TaskScratch, TaskScratchDeleter>;

/// The reward terms of one step (Gymnasium's info keys reward_forward, reward_ctrl, ...).
struct TaskTerms {
  double forward = 0, ctrl = 0, contact = 0, survive = 0;  ///< ctrl and contact are costs (>= 0)
  double x_velocity = 0, y_velocity = 0;
  bool healthy = true;
};

/// A task bound to its scene's imported model. Evaluation is const and thread-safe given one
/// TaskScratch per thread; it does not allocate.
class Task {
 public:
  Task(const TaskSpec& spec, const Scene& sc);
  ~Task();
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;

  const TaskSpec& spec() const { return spec_; }
  int obs_dim() const { return obs_dim_; }
  int action_dim() const { return int(act_dof_.size()); }
  int nq() const { return nq_; }
  int nv() const { return nv_; }
  /// Actuated DOF of each action (n_actions); gear per action (1 in torque mode).
  const std::vector<int>& action_dof() const { return act_dof_; }
  const std::vector<double>& action_gear() const { return act_gear_; }
  /// Per action: kp * gear of a position action (its share of the PD target's numerator), 0 for a
  /// force action (n_actions).
  const std::vector<double>& action_kp() const { return act_kp_; }
  /// The stable-PD gains of the position actions per DOF (n_q): K_p = sum kp gear^2,
  /// K_d = sum kv gear^2; empty when no action is a position target.
  const VecX& servo_kp() const { return servo_kp_; }
  const VecX& servo_kd() const { return servo_kd_; }
  /// The action space's bounds (ctrlrange, +-inf when unlimited; +-torque_limit in torque mode).
  const std::vector<double>& action_low() const { return low_; }
  const std::vector<double>& action_high() const { return high_; }
  TaskScratchPtr make_scratch() const;

  /// Observation, reward and termination at MuJoCo state (qpos (nq), qvel (nv)) reached by a step
  /// with action a (action_dim; nullptr = zeros, as after a reset) from a state whose tracked
  /// position was xy_before (2). xy_after (2) receives this state's tracked position (the next
  /// step's xy_before). obs: obs_dim entries.
  double evaluate(const double* qpos, const double* qvel, const double* a, const double* xy_before, TaskScratch& s,
                  double* obs, double* xy_after, TaskTerms& terms) const;

 private:
  void probe(const double* qpos, const double* qvel, const double* a, TaskScratch& s) const;
  TaskSpec spec_;
  int nq_ = 0, nv_ = 0, obs_dim_ = 0, nbody_ = 0;
  double dt_ = 0;
  std::vector<int> act_dof_;       // (n_actions)
  std::vector<double> act_gear_;   // (n_actions)
  std::vector<double> act_kp_;     // (n_actions)
  VecX servo_kp_, servo_kd_;       // (n_q) or empty
  std::vector<double> low_, high_; // (n_actions)
  bool needs_probe_ = false;
  struct Probe;
  std::unique_ptr<Probe> probe_;   // the imported mjModel (ant, humanoid)
};

}  // namespace bigstep
