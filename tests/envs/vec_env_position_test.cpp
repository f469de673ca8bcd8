// Position actions through the VecEnv and the batch engines (envs/tasks.h
// ActionMode::Position, BatchEngine::step's per-rollout theta_bar): the hopper's actuators as
// MuJoCo <position> actuators of gear 1 (task.action_mode: position, task.position_kp / kv).
//   - a constant target holds each joint at it: at rest the servo balances the static load,
//     kp |theta - theta_bar| <= |tau_static|, so |theta - theta_bar| <= m_total g L / kp (the whole
//     robot's weight on a lever of its size L bounds any joint's static torque, gravity or contact)
//   - the reference engine's rollout k equals a single-rollout run (make_integrator, one Data, a
//     PdServo whose reference is the same targets) bit for bit; the team engine's (on walker2d)
//     rollout 0 of a K = 3 batch equals its K = 1 run bit for bit
//   - actuator mode maps a model's <position> actuators (kp, kv, gear) the same way (solvers/terms/actuation.h)
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "control/pd_limit.h"
#include "envs/vec_env.h"

using namespace bigstep;

#ifdef BIGSTEP_WITH_MUJOCO

namespace {

std::string hopper_file() { return std::string(BIGSTEP_SOURCE_DIR) + "/configs/tasks/hopper.yaml"; }
// the team engine takes walker2d (planar like the hopper), not the hopper's geom pairs
std::string walker_file() { return std::string(BIGSTEP_SOURCE_DIR) + "/configs/tasks/walker2d.yaml"; }

std::vector<std::string> position_overrides(double kp, double kv, std::vector<std::string> more = {}) {
  std::vector<std::string> ov{"task.action_mode=position", "task.position_kp=" + std::to_string(kp),
                              "task.position_kv=" + std::to_string(kv), "task.terminate_when_unhealthy=false",
                              "task.episode_steps=100000"};
  ov.insert(ov.end(), more.begin(), more.end());
  return ov;
}

// Targets of env k: inside each joint's range (hopper: thigh, leg, foot, all limited), per env.
void targets(const VecEnv& env, int k, double* a) {
  const Task& t = env.task();
  for (int i = 0; i < env.action_dim(); ++i) {
    const double lo = t.action_low()[i], hi = t.action_high()[i];
    a[i] = lo + (0.3 + 0.15 * ((k + i) % 3)) * (hi - lo);
  }
}

}  // namespace

TEST_CASE("vec_env_position: position mode's action space is the joints' ranges, gains on the actuated DOFs",
          "[vec_env][position]") {
  VecEnv env(hopper_file(), VecEnvOptions{2, 1, "cpu", position_overrides(300, 10), true});
  const Task& t = env.task();
  const Model& m = env.sc().model;
  REQUIRE(env.action_dim() == 3);
  for (int i = 0; i < 3; ++i) {
    const int j = t.action_dof()[i];
    CHECK(m.dof_limited[j] == 1);
    CHECK(t.action_low()[i] == m.dof_range[2 * j]);
    CHECK(t.action_high()[i] == m.dof_range[2 * j + 1]);
    CHECK(env.sc().pd.kp[j] == 300);
    CHECK(env.sc().pd.kd[j] == 10);
  }
  // the root's DOFs are not servoed
  for (int j = 0; j < 3; ++j) CHECK(env.sc().pd.kp[j] == 0);
  // a scene that already has a servo is refused, naming control.pd
  CHECK_THROWS_WITH(VecEnv(std::string(BIGSTEP_SOURCE_DIR) + "/configs/tasks/a1_walk.yaml",
                           VecEnvOptions{1, 0, "cpu", {"task.action_mode=position"}, true}),
                    Catch::Contains("control.pd"));
  CHECK_THROWS_WITH(VecEnv(hopper_file(), VecEnvOptions{1, 0, "cpu", {"task.action_mode=position", "task.position_kp=-1"}, true}),
                    Catch::Contains("task.position_kp"));
}

TEST_CASE("vec_env_position: a constant target holds the joints (reference and team engines)", "[vec_env][position]") {
  const double kp = 2000, kv = 50;
  for (const char* engine : {"reference", "team"}) {
    INFO("engine " << engine);
    const bool team = std::string(engine) == "team";
    VecEnv env(team ? walker_file() : hopper_file(),
               VecEnvOptions{3, 2, "cpu", position_overrides(kp, kv, {std::string("batch.engine=") + engine}), true});
    const int K = env.num_envs(), A = env.action_dim(), n = env.sc().model.n_q;
    std::vector<double> a(size_t(K) * A);
    for (int k = 0; k < K; ++k) targets(env, k, a.data() + size_t(k) * A);
    // 3 s: the hopper falls, lands and comes to rest on its joints' targets
    const int steps = int(std::lround(3.0 / env.dt()));
    for (int s = 0; s < steps; ++s) {
      env.step(a.data());
      for (int k = 0; k < K; ++k) REQUIRE(env.flags()[k] == 0u);
    }
    const Model& m = env.sc().model;
    const double L = 2.0;  // [m] > the hopper's / walker's extent (1.6 m standing)
    const double bound = m.total_mass * m.gravity.norm() * L / kp;
    const StateBatch& b = env.batch();
    for (int k = 0; k < K; ++k)
      for (int i = 0; i < A; ++i) {
        const int j = env.task().action_dof()[i];
        const double th = b.theta[size_t(k) * n + j], th_prev = b.theta_prev[size_t(k) * n + j];
        CHECK(env.theta_bar()[size_t(k) * n + j] == a[size_t(k) * A + i]);
        CHECK(std::abs(th - a[size_t(k) * A + i]) <= bound);
        CHECK(std::abs(th - th_prev) / env.dt() < 0.05);  // at rest [rad/s]
      }
  }
}

TEST_CASE("vec_env_position: the reference engine's rollouts equal single-rollout runs bit for bit", "[vec_env][position]") {
  // power-law friction: these stiff servo targets with the task's dry friction exceed the solver's
  // iteration budget at step 11 (flagged, held), which would end the comparison early
  VecEnv env(hopper_file(), VecEnvOptions{3, 4, "cpu", position_overrides(300, 10, {"batch.threads=2", "contact.friction=power"}),
                                          true});
  const int K = env.num_envs(), A = env.action_dim(), n = env.sc().model.n_q, steps = 25;
  const Scene& sc = env.sc();
  // the single-rollout runs: one Data each from the batch's initial states
  auto integ = make_integrator(sc);
  std::vector<Data> d;
  for (int k = 0; k < K; ++k) {
    d.push_back(integ->make_data());
    d[k].theta = env.batch().row(env.batch().theta, k);
    d[k].theta_prev = env.batch().row(env.batch().theta_prev, k);
  }
  VecX bar(n);
  PdServo pd{sc.pd.kp, sc.pd.kd, [&bar](double, VecX& th_bar, VecX& th_dot_bar) {
               th_bar = bar;
               th_dot_bar.setZero(bar.size());
             }};
  std::vector<double> a(size_t(K) * A);
  PdLimit limit(sc.model, sc.controller.tau_max);
  REQUIRE(limit.active());
  for (int s = 0; s < steps; ++s) {
    // targets that move: a sweep inside the ranges, different per env
    for (int k = 0; k < K; ++k)
      for (int i = 0; i < A; ++i) {
        const double lo = env.task().action_low()[i], hi = env.task().action_high()[i];
        a[size_t(k) * A + i] = lo + (0.5 + 0.4 * std::sin(0.3 * s + k + 2.0 * i)) * (hi - lo);
      }
    env.step(a.data());
    for (int k = 0; k < K; ++k) {
      bar.setZero();
      for (int i = 0; i < A; ++i) bar[env.task().action_dof()[i]] = a[size_t(k) * A + i];
      StepControl u;
      u.tau = VecX::Zero(n);
      u.pd = &pd;
      u.t = s * sc.settings.dt;
      // the servo within the hopper's actuator limits (gear x ctrlrange), as the batch applies it
      const VecX th_n = d[k].theta, th_prev = d[k].theta_prev;
      integ->step(d[k], u, integ->default_params());
      limit.begin(u);
      while (limit.saturate(th_n, d[k].theta, sc.settings.dt)) {
        d[k].theta = th_n;
        d[k].theta_prev = th_prev;
        integ->step(d[k], limit.control(), integ->default_params());
      }
      const VecX got = env.batch().row(env.batch().theta, k);
      INFO("step " << s << ", env " << k);
      REQUIRE(env.flags()[k] == 0u);
      CHECK((got.array() == d[k].theta.array()).all());
    }
  }
}

TEST_CASE("vec_env_position: the team engine's rollout 0 equals its K = 1 run bit for bit", "[vec_env][position]") {
  const auto ov = position_overrides(300, 10, {"batch.engine=team", "batch.threads=2"});
  VecEnv batch(walker_file(), VecEnvOptions{3, 6, "cpu", ov, true}), one(walker_file(), VecEnvOptions{1, 6, "cpu", ov, true});
  REQUIRE(batch.engine_name() == "cpu_team_emulation");
  const int K = 3, A = batch.action_dim(), n = batch.sc().model.n_q;
  std::vector<double> a(size_t(K) * A);
  for (int s = 0; s < 25; ++s) {
    for (int k = 0; k < K; ++k)
      for (int i = 0; i < A; ++i) {
        const double lo = batch.task().action_low()[i], hi = batch.task().action_high()[i];
        a[size_t(k) * A + i] = lo + (0.5 + 0.4 * std::cos(0.2 * s + 1.5 * k + i)) * (hi - lo);
      }
    batch.step(a.data());
    one.step(a.data());
    INFO("step " << s);
    for (int j = 0; j < n; ++j) CHECK(batch.batch().theta[j] == one.batch().theta[j]);
  }
}

TEST_CASE("vec_env_position: a NaN target holds that env only", "[vec_env][position]") {
  VecEnv env(hopper_file(), VecEnvOptions{2, 1, "cpu", position_overrides(300, 10), false});
  const int A = env.action_dim();
  std::vector<double> a(size_t(2) * A);
  targets(env, 0, a.data());
  targets(env, 1, a.data() + A);
  a[1] = std::nan("");
  env.step(a.data());
  CHECK((env.flags()[0] & ENV_ACTION_NONFINITE) != 0u);
  CHECK(env.truncated()[0] == 1);
  CHECK(env.flags()[1] == 0u);
}

#else
TEST_CASE("vec_env_position: skipped", "[vec_env][position]") { SUCCEED("built without MuJoCo: no task models"); }
#endif
