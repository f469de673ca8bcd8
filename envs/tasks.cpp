// RL tasks: Gymnasium v5 definitions on MuJoCo's qpos / qvel (tasks.h).
#include "envs/tasks.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/error.h"
#include "io/mjcf_import.h"

#ifdef BIGSTEP_WITH_MUJOCO
#include <mujoco/mujoco.h>
#endif

namespace bigstep {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct KindDef {
  const char* name;
  TaskKind kind;
};
constexpr KindDef kKinds[] = {{"hopper", TaskKind::Hopper},     {"walker2d", TaskKind::Walker2d},
                              {"half_cheetah", TaskKind::HalfCheetah}, {"ant", TaskKind::Ant},
                              {"humanoid", TaskKind::Humanoid}, {"quadruped", TaskKind::Quadruped}};

// Gymnasium v5's constructor defaults of each kind (the *_v5.py __init__ signatures); the
// quadruped's are ours (Ant-like: forward speed of the base, alive bonus, torque cost).
TaskSpec kind_defaults(TaskKind k) {
  TaskSpec s;
  s.kind = k;
  switch (k) {
    case TaskKind::Hopper:
      s.healthy_z = {0.7, kInf};
      s.healthy_angle = {-0.2, 0.2};
      break;
    case TaskKind::Walker2d:
      s.healthy_z = {0.8, 2.0};
      s.healthy_angle = {-1.0, 1.0};
      break;
    case TaskKind::HalfCheetah:
      s.ctrl_cost_weight = 0.1;
      s.healthy_reward = 0;
      s.terminate_when_unhealthy = false;
      break;
    case TaskKind::Ant:
      s.ctrl_cost_weight = 0.5;
      s.contact_cost_weight = 5e-4;
      s.healthy_z = {0.2, 1.0};
      break;
    case TaskKind::Humanoid:
      s.forward_reward_weight = 1.25;
      s.ctrl_cost_weight = 0.1;
      s.contact_cost_weight = 5e-7;
      s.healthy_reward = 5.0;
      s.healthy_z = {1.0, 2.0};
      break;
    case TaskKind::Quadruped:
      s.ctrl_cost_weight = 0.05;
      s.healthy_z = {0.15, 0.6};
      s.include_cfrc_ext = false;
      s.action_mode = ActionMode::Torque;
      break;
  }
  return s;
}

std::string yaml_text(const YAML::Node& n) {
  YAML::Emitter e;
  e << YAML::Flow << n;
  return e.c_str();
}

template <class T>
T as(const YAML::Node& n, const std::string& file, const std::string& key) {
  try {
    return n.as<T>();
  } catch (const YAML::Exception&) {
    throw InvalidArgument(detail::concat(file, ": task.", key, " = ", yaml_text(n), ": expected ",
                                         std::is_same_v<T, bool> ? "true or false" : std::is_same_v<T, int> ? "an integer" : "a number"));
  }
}

std::array<double, 2> range(const YAML::Node& n, const std::string& file, const std::string& key) {
  BIGSTEP_CHECK_ARG(n.IsSequence() && n.size() == 2, file + ": task." + key, yaml_text(n), "expected [low, high]");
  // .inf / -.inf are YAML's infinities
  std::array<double, 2> r{as<double>(n[0], file, key), as<double>(n[1], file, key)};
  BIGSTEP_CHECK_ARG(r[0] <= r[1], file + ": task." + key, yaml_text(n), "expected low <= high");
  return r;
}

// The task block -> TaskSpec: kind first (it sets the defaults), then every other key.
TaskSpec parse_task(const YAML::Node& t, const std::string& file) {
  BIGSTEP_CHECK_ARG(t && t.IsMap(), file + ": task", t ? yaml_text(t) : "(absent)", "expected a map with task.kind");
  BIGSTEP_CHECK_ARG(t["kind"], file + ": task.kind", "(absent)", "expected hopper | walker2d | half_cheetah | ant | humanoid | quadruped");
  const std::string kind = as<std::string>(t["kind"], file, "kind");
  const KindDef* kd = nullptr;
  for (const KindDef& d : kKinds)
    if (kind == d.name) kd = &d;
  BIGSTEP_CHECK_ARG(kd, file + ": task.kind", kind, "expected hopper | walker2d | half_cheetah | ant | humanoid | quadruped");
  TaskSpec s = kind_defaults(kd->kind);
  s.kind_name = kind;
  for (const auto& kv : t) {
    const std::string key = kv.first.as<std::string>();
    const YAML::Node& v = kv.second;
    const std::string where = file + ": task." + key;
    if (key == "kind") continue;
    else if (key == "episode_steps") s.episode_steps = as<int>(v, file, key);
    else if (key == "forward_reward_weight") s.forward_reward_weight = as<double>(v, file, key);
    else if (key == "ctrl_cost_weight") s.ctrl_cost_weight = as<double>(v, file, key);
    else if (key == "healthy_reward") s.healthy_reward = as<double>(v, file, key);
    else if (key == "contact_cost_weight") s.contact_cost_weight = as<double>(v, file, key);
    else if (key == "terminate_when_unhealthy") s.terminate_when_unhealthy = as<bool>(v, file, key);
    else if (key == "healthy_z_range") s.healthy_z = range(v, file, key);
    else if (key == "healthy_angle_range") s.healthy_angle = range(v, file, key);
    else if (key == "healthy_state_range") s.healthy_state = range(v, file, key);
    else if (key == "contact_force_range") s.contact_force_range = range(v, file, key);
    else if (key == "contact_cost_max") s.contact_cost_max = as<double>(v, file, key);
    else if (key == "exclude_current_positions_from_observation") s.exclude_current_positions = as<bool>(v, file, key);
    else if (key == "include_cfrc_ext_in_observation") s.include_cfrc_ext = as<bool>(v, file, key);
    else if (key == "include_cinert_in_observation") s.include_cinert = as<bool>(v, file, key);
    else if (key == "include_cvel_in_observation") s.include_cvel = as<bool>(v, file, key);
    else if (key == "include_qfrc_actuator_in_observation") s.include_qfrc_actuator = as<bool>(v, file, key);
    else if (key == "action_mode") {
      const std::string m = as<std::string>(v, file, key);
      BIGSTEP_CHECK_ARG(m == "actuator" || m == "torque" || m == "position", where, m,
                        "expected actuator | torque | position");
      s.action_mode = m == "torque" ? ActionMode::Torque : m == "position" ? ActionMode::Position : ActionMode::Actuator;
    } else if (key == "torque_limit") s.torque_limit = as<double>(v, file, key);
    else if (key == "position_kp") s.position_kp = as<double>(v, file, key);
    else if (key == "position_kv") s.position_kv = as<double>(v, file, key);
    else if (key == "iteration_budget") s.iteration_budget = as<int>(v, file, key);
    else {
      std::string known;
      for (const auto& k : task_keys()) known += (known.empty() ? "" : ", ") + k.first.substr(5);
      throw InvalidArgument(detail::concat(where, " = ", yaml_text(v), ": unknown task key (known: ", known, ")"));
    }
  }
  BIGSTEP_CHECK_ARG(s.episode_steps >= 1, file + ": task.episode_steps", s.episode_steps, "must be >= 1");
  BIGSTEP_CHECK_ARG(s.torque_limit > 0 && std::isfinite(s.torque_limit), file + ": task.torque_limit", s.torque_limit,
                    "must be finite and > 0");
  BIGSTEP_CHECK_ARG(s.position_kp > 0 && std::isfinite(s.position_kp), file + ": task.position_kp", s.position_kp,
                    "must be finite and > 0");
  BIGSTEP_CHECK_ARG(s.position_kv >= 0 && std::isfinite(s.position_kv), file + ": task.position_kv", s.position_kv,
                    "must be finite and >= 0");
  BIGSTEP_CHECK_ARG(s.iteration_budget >= 0, file + ": task.iteration_budget", s.iteration_budget, "must be >= 0 (0 = integrator.it_max)");
  for (double w : {s.forward_reward_weight, s.ctrl_cost_weight, s.healthy_reward, s.contact_cost_weight})
    BIGSTEP_CHECK_ARG(std::isfinite(w), file + ": task weights", w, "must be finite");
  return s;
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& task_keys() {
  static const std::vector<std::pair<std::string, std::string>> k{
      {"task.kind", "hopper | walker2d | half_cheetah | ant | humanoid | quadruped (sets Gymnasium v5's defaults)"},
      {"task.episode_steps", "env steps before truncation"},
      {"task.forward_reward_weight", "weight of the forward speed"},
      {"task.ctrl_cost_weight", "weight of |action|^2"},
      {"task.healthy_reward", "reward per step while healthy"},
      {"task.contact_cost_weight", "weight of |cfrc_ext|^2 (ant, humanoid)"},
      {"task.terminate_when_unhealthy", "end the episode when not healthy"},
      {"task.healthy_z_range", "[low, high] of the torso height"},
      {"task.healthy_angle_range", "[low, high] of the torso angle qpos[2] (hopper, walker2d)"},
      {"task.healthy_state_range", "[low, high] of qpos[2:], qvel (hopper)"},
      {"task.contact_force_range", "clip of cfrc_ext (ant)"},
      {"task.contact_cost_max", "cap of the contact cost (humanoid)"},
      {"task.exclude_current_positions_from_observation", "drop x (and y) from the observation"},
      {"task.include_cfrc_ext_in_observation", "cfrc_ext[1:] in the observation (ant, humanoid)"},
      {"task.include_cinert_in_observation", "cinert[1:] (humanoid)"},
      {"task.include_cvel_in_observation", "cvel[1:] (humanoid)"},
      {"task.include_qfrc_actuator_in_observation", "qfrc_actuator[6:] (humanoid)"},
      {"task.action_mode", "actuator (ctrl per actuator, clamped to ctrlrange) | torque (N m per actuated DOF) | "
                           "position (target per actuated DOF through the stable PD)"},
      {"task.torque_limit", "action bound of torque mode [N m]"},
      {"task.position_kp", "stiffness of position mode's servo [N m/rad]"},
      {"task.position_kv", "damping of position mode's servo [N m s/rad]"},
      {"task.iteration_budget", "solver iterations per attempt in one env step (0 = integrator.it_max); a PBFD step makes at most 2 + (integrator.friction_continuation + 1) attempts"}};
  return k;
}

TaskFile load_task_text(const std::string& yaml, const std::string& source, const std::vector<std::string>& overrides) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::ParserException& e) {
    throw InvalidArgument(detail::concat(source, ": line ", e.mark.line + 1, ": YAML syntax error: ", e.msg));
  }
  BIGSTEP_CHECK_ARG(root.IsMap(), source, "(not a map)", "a task file is a scene with a task: block");
  YAML::Node task = YAML::Clone(root["task"]);
  root.remove("task");
  // task.* overrides edit the block; the others go to the scene loader
  std::vector<std::string> scene_overrides;
  for (const std::string& o : overrides) {
    const size_t eq = o.find('=');
    BIGSTEP_CHECK_ARG(eq != std::string::npos, "override", o, "expected key=value");
    if (o.rfind("task.", 0) != 0) {
      scene_overrides.push_back(o);
      continue;
    }
    const std::string key = o.substr(5, eq - 5);
    try {
      task[key] = YAML::Load(o.substr(eq + 1));
    } catch (const YAML::ParserException& e) {
      throw InvalidArgument(detail::concat("override ", o, ": YAML syntax error: ", e.msg));
    }
  }
  TaskFile tf{load_scene_text(yaml_text(root), source, scene_overrides), parse_task(task, source)};
  BIGSTEP_CHECK_ARG(tf.scene.imported != nullptr, source + ": model", "(a YAML model)",
                    "tasks are defined on MuJoCo's qpos / qvel: use model: {mjcf: ...} or {urdf: ...}");
  return tf;
}

TaskFile load_task(const std::string& path, const std::vector<std::string>& overrides) {
  std::ifstream f(path);
  BIGSTEP_CHECK_ARG(f.good(), "task file", path, "cannot be opened");
  std::stringstream ss;
  ss << f.rdbuf();
  return load_task_text(ss.str(), path, overrides);
}

// ---- the MuJoCo probe: MuJoCo's derived quantities at a given state ----

struct TaskScratch {
#ifdef BIGSTEP_WITH_MUJOCO
  mjData* d = nullptr;
#endif
};
void TaskScratchDeleter::operator()(TaskScratch* s) const {
#ifdef BIGSTEP_WITH_MUJOCO
  if (s && s->d) mj_deleteData(s->d);
#endif
  delete s;
}

struct Task::Probe {
#ifdef BIGSTEP_WITH_MUJOCO
  mjModel* m = nullptr;
  ~Probe() {
    if (m) mj_deleteModel(m);
  }
#endif
};

Task::Task(const TaskSpec& spec, const Scene& sc) : spec_(spec) {
  BIGSTEP_CHECK_ARG(sc.imported != nullptr, "task model", sc.source, "tasks need an MJCF / URDF model (MuJoCo's qpos / qvel)");
  const MujocoImport& imp = *sc.imported;
  const Model& m = sc.model;
  nq_ = imp.nq;
  nv_ = imp.nv;
  dt_ = sc.settings.dt;
  const bool free_root = !imp.joints.empty() && imp.joints[0].type == MujocoJoint::Free;
  // actions: the actuators (actuator mode) or the actuated DOFs (torque and position modes)
  if (spec_.action_mode == ActionMode::Actuator) {
    BIGSTEP_CHECK_ARG(m.n_u > 0, sc.source + ": task.action_mode", "actuator",
                      "the model has no actuators: use task.action_mode: torque");
    for (int u = 0; u < m.n_u; ++u) {
      const bool position = m.actuator_type[u] == ActuatorType::Position;
      act_dof_.push_back(m.actuator_dof[u]);
      act_gear_.push_back(m.actuator_gear[u]);
      act_kp_.push_back(position ? m.actuator_kp[u] * m.actuator_gear[u] : 0.0);
      const bool lim = m.actuator_ctrllimited[u] != 0;
      low_.push_back(lim ? m.actuator_ctrlrange[2 * size_t(u)] : -kInf);
      high_.push_back(lim ? m.actuator_ctrlrange[2 * size_t(u) + 1] : kInf);
      if (!position) continue;
      // K_p = sum kp gear^2, K_d = sum kv gear^2 per DOF (solvers/terms/actuation.h)
      if (servo_kp_.size() == 0) servo_kp_ = servo_kd_ = VecX::Zero(m.n_q);
      servo_kp_[m.actuator_dof[u]] += m.actuator_kp[u] * m.actuator_gear[u] * m.actuator_gear[u];
      servo_kd_[m.actuator_dof[u]] += m.actuator_kv[u] * m.actuator_gear[u] * m.actuator_gear[u];
    }
  } else {
    std::vector<int> dofs;
    for (int u = 0; u < m.n_u; ++u) dofs.push_back(m.actuator_dof[u]);
    if (dofs.empty())
      for (int k = free_root ? 6 : 0; k < m.n_q; ++k) dofs.push_back(k);
    std::sort(dofs.begin(), dofs.end());
    dofs.erase(std::unique(dofs.begin(), dofs.end()), dofs.end());
    const bool position = spec_.action_mode == ActionMode::Position;
    if (position) servo_kp_ = servo_kd_ = VecX::Zero(m.n_q);
    for (int k : dofs) {
      act_dof_.push_back(k);
      act_gear_.push_back(1.0);
      act_kp_.push_back(position ? spec_.position_kp : 0.0);
      if (position) {
        // the joint's range (a limited DOF), else one turn; gear-1 <position> actuators
        const bool lim = m.dof_limited[k] != 0;
        low_.push_back(lim ? m.dof_range[2 * size_t(k)] : -M_PI);
        high_.push_back(lim ? m.dof_range[2 * size_t(k) + 1] : M_PI);
        servo_kp_[k] = spec_.position_kp;
        servo_kd_[k] = spec_.position_kv;
      } else {
        low_.push_back(-spec_.torque_limit);
        high_.push_back(spec_.torque_limit);
      }
    }
  }
  BIGSTEP_CHECK_ARG(!act_dof_.empty(), sc.source + ": task", spec_.kind_name, "no actuated DOF");
  // observation layout (Gymnasium's _get_obs order)
  const int skip = spec_.exclude_current_positions ? (spec_.kind == TaskKind::Ant || spec_.kind == TaskKind::Humanoid ||
                                                      spec_.kind == TaskKind::Quadruped ? 2 : 1) : 0;
  nbody_ = int(imp.body_name.size());
  obs_dim_ = nq_ - skip + nv_;
  const bool ant = spec_.kind == TaskKind::Ant, hum = spec_.kind == TaskKind::Humanoid;
  if (hum && spec_.include_cinert) obs_dim_ += 10 * (nbody_ - 1);
  if (hum && spec_.include_cvel) obs_dim_ += 6 * (nbody_ - 1);
  if (hum && spec_.include_qfrc_actuator) obs_dim_ += nv_ - 6;
  if ((ant || hum) && spec_.include_cfrc_ext) obs_dim_ += 6 * (nbody_ - 1);
  // the probe: cfrc_ext (ant, humanoid: the contact cost), cinert / cvel / qfrc_actuator / xipos (humanoid)
  needs_probe_ = ant || hum;
  if (needs_probe_) {
#ifdef BIGSTEP_WITH_MUJOCO
    probe_ = std::make_unique<Probe>();
    char err[1024] = "";
    probe_->m = mj_loadXML(imp.path.c_str(), nullptr, err, sizeof(err));
    BIGSTEP_CHECK_ARG(probe_->m != nullptr, "task model (MuJoCo probe)", imp.path, err);
    BIGSTEP_CHECK_ARG(probe_->m->nq == nq_ && probe_->m->nv == nv_ && probe_->m->nbody == nbody_, "task model (MuJoCo probe)",
                      imp.path, "MuJoCo's model differs from the imported one (model edits): not supported for ant / humanoid");
    BIGSTEP_CHECK_ARG(probe_->m->nu == int(act_dof_.size()) && spec_.action_mode == ActionMode::Actuator,
                      sc.source + ": task.action_mode", "torque", "ant / humanoid observe MuJoCo's actuator forces: use actuator");
#else
    throw InvalidArgument(sc.source + ": task " + spec_.kind_name + ": needs MuJoCo (built without it)");
#endif
  }
}

Task::~Task() = default;

TaskScratchPtr Task::make_scratch() const {
  TaskScratchPtr s(new TaskScratch);
#ifdef BIGSTEP_WITH_MUJOCO
  if (probe_) s->d = mj_makeData(probe_->m);
#endif
  return s;
}

// MuJoCo's derived quantities at (qpos, qvel, ctrl): mj_forward (cinert, cvel, xipos,
// qfrc_actuator, contact forces) then mj_rnePostConstraint (cfrc_ext), as Gymnasium's
// do_simulation leaves them. The warm start is cleared so the result depends only on the state.
void Task::probe(const double* qpos, const double* qvel, const double* a, TaskScratch& s) const {
#ifdef BIGSTEP_WITH_MUJOCO
  const mjModel* m = probe_->m;
  mjData* d = s.d;
  std::copy(qpos, qpos + nq_, d->qpos);
  std::copy(qvel, qvel + nv_, d->qvel);
  for (int u = 0; u < m->nu; ++u) d->ctrl[u] = a ? a[u] : 0.0;
  std::fill(d->qacc_warmstart, d->qacc_warmstart + nv_, 0.0);
  mj_forward(m, d);
  mj_rnePostConstraint(m, d);
#endif
}

double Task::evaluate(const double* qpos, const double* qvel, const double* a, const double* xy_before, TaskScratch& s,
                      double* obs, double* xy_after, TaskTerms& t) const {
  const TaskKind k = spec_.kind;
  const bool ant = k == TaskKind::Ant, hum = k == TaskKind::Humanoid;
  if (needs_probe_) probe(qpos, qvel, a, s);
#ifdef BIGSTEP_WITH_MUJOCO
  const mjData* d = s.d;
  const mjModel* pm = probe_ ? probe_->m : nullptr;
#endif
  // tracked position: qpos[0] (planar walkers), torso origin = free joint position (ant,
  // quadruped), the mass centre (humanoid: Gymnasium's mass_center)
  xy_after[0] = qpos[0];
  xy_after[1] = (ant || k == TaskKind::Quadruped) ? qpos[1] : 0.0;
#ifdef BIGSTEP_WITH_MUJOCO
  if (hum) {
    double M = 0, c[2] = {0, 0};
    for (int b = 0; b < nbody_; ++b) {
      M += pm->body_mass[b];
      c[0] += pm->body_mass[b] * d->xipos[3 * b];
      c[1] += pm->body_mass[b] * d->xipos[3 * b + 1];
    }
    xy_after[0] = c[0] / M;
    xy_after[1] = c[1] / M;
  }
#endif
  t.x_velocity = (xy_after[0] - xy_before[0]) / dt_;
  t.y_velocity = (xy_after[1] - xy_before[1]) / dt_;

  // observation (each kind's _get_obs)
  const int skip = spec_.exclude_current_positions ? ((ant || hum || k == TaskKind::Quadruped) ? 2 : 1) : 0;
  double* o = obs;
  for (int i = skip; i < nq_; ++i) *o++ = qpos[i];
  const bool clip_v = k == TaskKind::Hopper || k == TaskKind::Walker2d;  // np.clip(qvel, -10, 10)
  for (int i = 0; i < nv_; ++i) *o++ = clip_v ? std::clamp(qvel[i], -10.0, 10.0) : qvel[i];
  double contact = 0;
#ifdef BIGSTEP_WITH_MUJOCO
  if (hum && spec_.include_cinert) o = std::copy(d->cinert + 10, d->cinert + 10 * nbody_, o);
  if (hum && spec_.include_cvel) o = std::copy(d->cvel + 6, d->cvel + 6 * nbody_, o);
  if (hum && spec_.include_qfrc_actuator) o = std::copy(d->qfrc_actuator + 6, d->qfrc_actuator + nv_, o);
  if (ant) {
    // contact_forces = clip(cfrc_ext, range); cost over every body (the world's row included)
    const double lo = spec_.contact_force_range[0], hi = spec_.contact_force_range[1];
    for (int i = 0; i < 6 * nbody_; ++i) {
      const double f = std::clamp(d->cfrc_ext[i], lo, hi);
      contact += f * f;
      if (spec_.include_cfrc_ext && i >= 6) *o++ = f;
    }
    contact *= spec_.contact_cost_weight;
  }
  if (hum) {
    for (int i = 0; i < 6 * nbody_; ++i) {
      contact += d->cfrc_ext[i] * d->cfrc_ext[i];
      if (spec_.include_cfrc_ext && i >= 6) *o++ = d->cfrc_ext[i];
    }
    contact = std::min(spec_.contact_cost_weight * contact, spec_.contact_cost_max);
  }
#endif

  // is_healthy
  bool healthy = true;
  switch (k) {
    case TaskKind::Hopper: {
      // state_vector()[2:] = (qpos[2:], qvel), strictly inside healthy_state_range
      for (int i = 2; i < nq_ + nv_; ++i) {
        const double v = i < nq_ ? qpos[i] : qvel[i - nq_];
        healthy = healthy && spec_.healthy_state[0] < v && v < spec_.healthy_state[1];
      }
      [[fallthrough]];
    }
    case TaskKind::Walker2d:
      healthy = healthy && spec_.healthy_z[0] < qpos[1] && qpos[1] < spec_.healthy_z[1] &&
                spec_.healthy_angle[0] < qpos[2] && qpos[2] < spec_.healthy_angle[1];
      break;
    case TaskKind::HalfCheetah: break;
    case TaskKind::Ant:
    case TaskKind::Quadruped:
      // Ant-v5: finite state and min_z <= z <= max_z (inclusive)
      for (int i = 0; i < nq_; ++i) healthy = healthy && std::isfinite(qpos[i]);
      for (int i = 0; i < nv_; ++i) healthy = healthy && std::isfinite(qvel[i]);
      healthy = healthy && spec_.healthy_z[0] <= qpos[2] && qpos[2] <= spec_.healthy_z[1];
      break;
    case TaskKind::Humanoid: healthy = spec_.healthy_z[0] < qpos[2] && qpos[2] < spec_.healthy_z[1]; break;
  }
  t.healthy = healthy;

  // reward = forward + survive - ctrl - contact
  double a2 = 0;
  for (int i = 0; a && i < action_dim(); ++i) a2 += a[i] * a[i];
  if (k == TaskKind::Quadruped) a2 /= spec_.torque_limit * spec_.torque_limit;  // normalised torques
  t.forward = spec_.forward_reward_weight * t.x_velocity;
  t.survive = k == TaskKind::HalfCheetah ? 0.0 : (healthy ? spec_.healthy_reward : 0.0);
  t.ctrl = spec_.ctrl_cost_weight * a2;
  t.contact = contact;
  return t.forward + t.survive - t.ctrl - t.contact;
}

}  // namespace bigstep
