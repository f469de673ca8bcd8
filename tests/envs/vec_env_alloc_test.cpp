// No heap allocation inside a VecEnv step (docs/architecture.md §5): after a warm-up, N steps of
// the hopper (walker2d) task with short episodes -- so every env
// auto-resets (fresh initial state from its seeded stream, re-drawn masses / friction / stiffness,
// the engine told) several times inside the counted window -- make no malloc, for the reference
// engine and the team engine (CPU emulation), on one and on two threads, in torque and in
// position-target action modes, and with random pushes (batch.push_*: the engine re-reads the
// kicked rows). malloc_guard.h counts every malloc in the process (OpenMP workers included), so a
// counter of 0 means none anywhere.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "envs/vec_env.h"
#include "tests/support/malloc_guard.h"

using namespace bigstep;

#ifdef BIGSTEP_WITH_MUJOCO

namespace {

// Mallocs of `steps` VecEnv steps after `warm` warm-up steps (first-touch growth: OpenMP's pool,
// the engines' per-rollout Data on the first step, ...). One env gets a NaN action once in the
// window (its episode truncated and reset: the held-rollout path).
long mallocs_of_steps(const std::string& task, const std::vector<std::string>& ov, int K, int warm, int steps,
                      long* resets) {
  VecEnv env(std::string(BIGSTEP_SOURCE_DIR) + "/configs/tasks/" + task + ".yaml", VecEnvOptions{K, 5, "cpu", ov, true});
  const int A = env.action_dim();
  std::vector<double> a(size_t(K) * A);  // sized before counting
  const auto fill = [&](int s) {
    for (int k = 0; k < K; ++k)
      for (int i = 0; i < A; ++i) a[size_t(k) * A + i] = 0.5 * std::sin(0.4 * s + 1.3 * k + 0.7 * i);
  };
  for (int s = 0; s < warm; ++s) {
    fill(s);
    env.step(a.data());
  }
  uint32_t episodes_before = 0;
  for (int k = 0; k < K; ++k) episodes_before += env.episode()[k];
  long n = 0;
  {
    test::MallocCounter count;
    for (int s = warm; s < warm + steps; ++s) {
      fill(s);
      if (s == warm + steps / 2) a[0] = std::nan("");
      env.step(a.data());
    }
    n = count.count();
  }
  uint32_t episodes_after = 0;
  for (int k = 0; k < K; ++k) episodes_after += env.episode()[k];
  *resets = long(episodes_after) - long(episodes_before);
  return n;
}

}  // namespace

TEST_CASE("vec_env_alloc: VecEnv::step with auto-resets does not allocate", "[vec_env][alloc]") {
  // episodes of 4 steps, randomised parameters re-drawn per episode, an iteration budget
  const std::vector<std::string> base{"task.episode_steps=4", "batch.randomize_mass=0.1", "batch.randomize_friction=0.1",
                                      "batch.randomize_stiffness=0.1"};
  // (the team engine takes walker2d, not the hopper's geom pairs; one thread first: no OpenMP pool yet)
  struct Case {
    const char* name;
    const char* task;
    std::vector<std::string> ov;
  };
  const std::vector<Case> cases{
      {"reference, 1 thread", "hopper", {"batch.threads=1"}},
      {"team, 1 thread", "walker2d", {"batch.engine=team", "batch.threads=1"}},
      {"reference, 2 threads", "hopper", {"batch.threads=2"}},
      {"team, 2 threads", "walker2d", {"batch.engine=team", "batch.threads=2"}},
      {"reference, torque mode", "hopper", {"batch.threads=2", "task.action_mode=torque", "task.torque_limit=50"}},
      {"reference, position mode, 1 thread", "hopper", {"batch.threads=1", "task.action_mode=position"}},
      {"team, position mode", "walker2d", {"batch.engine=team", "batch.threads=2", "task.action_mode=position"}},
      {"reference, pushes", "hopper", {"batch.threads=2", "batch.push_prob=0.5", "batch.push_speed=0.3"}},
      {"team, pushes", "walker2d", {"batch.engine=team", "batch.threads=1", "batch.push_prob=0.5", "batch.push_speed=0.3"}},
  };
  for (const Case& c : cases) {
    std::vector<std::string> ov = base;
    ov.insert(ov.end(), c.ov.begin(), c.ov.end());
    long resets = 0;
    const long n = mallocs_of_steps(c.task, ov, 6, 10, 12, &resets);
    INFO(c.name << ": " << n << " mallocs in 12 steps, " << resets << " auto-resets");
    CHECK(resets >= 12);  // every env ended at least twice inside the counted window
    CHECK(n == 0);
  }
}

TEST_CASE("vec_env_alloc: the allocation-free seed sequence gives std::seed_seq's streams", "[vec_env][alloc]") {
  // oracle: the initial state of env k, episode e, drawn here through std::seed_seq (batch/batch.h:
  // stream (seed, k, episode), theta then theta_dot, N(0, 1) scaled by batch.perturb_*)
  const uint64_t seed = 0x1234567890abcdefull;
  VecEnv env(std::string(BIGSTEP_SOURCE_DIR) + "/configs/tasks/hopper.yaml",
             VecEnvOptions{3, seed, "cpu", {"batch.threads=1"}, true});
  const Scene& sc = env.sc();
  const int n = sc.model.n_q;
  const auto expect = [&](int k, uint32_t episode, std::vector<double>& th, std::vector<double>& th_prev) {
    std::seed_seq s0{uint32_t(seed), uint32_t(seed >> 32), uint32_t(k), 0x6269u};
    std::seed_seq se{uint32_t(seed), uint32_t(seed >> 32), uint32_t(k), 0x6269u, episode};
    std::mt19937_64 rng(episode == 0 ? s0 : se);
    std::normal_distribution<double> N(0, 1);
    th.resize(n);
    th_prev.resize(n);
    for (int i = 0; i < n; ++i) th[i] = sc.theta0[i] + sc.perturb_theta * N(rng);
    for (int i = 0; i < n; ++i) th_prev[i] = th[i] - sc.settings.dt * (sc.theta_dot0[i] + sc.perturb_theta_dot * N(rng));
  };
  std::vector<double> th, th_prev;
  for (uint32_t episode : {0u, 1u, 2u}) {
    if (episode > 0) env.reset();  // every env's next episode
    for (int k = 0; k < 3; ++k) {
      expect(k, episode, th, th_prev);
      INFO("env " << k << ", episode " << episode);
      REQUIRE(env.episode()[k] == episode);
      for (int i = 0; i < n; ++i) {
        CHECK(env.batch().theta[size_t(k) * n + i] == th[i]);
        CHECK(env.batch().theta_prev[size_t(k) * n + i] == th_prev[i]);
      }
    }
  }
}

#else
TEST_CASE("vec_env_alloc: skipped", "[vec_env][alloc]") { SUCCEED("built without MuJoCo: no task models"); }
#endif
