// VecEnv (envs/vec_env.h) on the hopper task: a misbehaving env never disturbs the others (bit for
// bit) and stays within the iteration budget, SAME_STEP auto-reset, per-episode re-randomisation
// from seeded streams, pushes (batch.push_*), bad actions flagged per env, thread-count
// independence, and task-file errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "core/error.h"
#include "envs/vec_env.h"

using namespace bigstep;

#ifdef BIGSTEP_WITH_MUJOCO

namespace {

std::string task_file(const std::string& name) { return std::string(BIGSTEP_SOURCE_DIR) + "/configs/tasks/" + name + ".yaml"; }

VecEnv make_env(const std::string& task, int K, std::vector<std::string> ov = {}, uint64_t seed = 3, bool autoreset = true) {
  return VecEnv(task_file(task), VecEnvOptions{K, seed, "cpu", std::move(ov), autoreset});
}
VecEnv hopper(int K, std::vector<std::string> ov = {}, uint64_t seed = 3, bool autoreset = true) {
  return make_env("hopper", K, std::move(ov), seed, autoreset);
}

// Smooth deterministic actions in [-0.8, 0.8], different per env and step.
void actions_at(int step, int K, int A, std::vector<double>& a) {
  a.resize(size_t(K) * A);
  for (int k = 0; k < K; ++k)
    for (int i = 0; i < A; ++i) a[size_t(k) * A + i] = 0.8 * std::sin(0.3 * step + 1.7 * k + 0.9 * i);
}

std::vector<double> row(const double* p, int k, int n) { return std::vector<double>(p + size_t(k) * n, p + size_t(k + 1) * n); }

}  // namespace

TEST_CASE("vec_env: a 1e6 action in env 0 is flagged within the budget; envs 1..K-1 are bit-identical", "[vec_env]") {
  // torque mode: the action is applied as given (no ctrlrange clamp), so only the budget guards.
  // The friction continuation off: with it the 1e6 step converges (solvers/pbd/pbd_step.cpp, tested in
  // pbd_friction_continuation_test.cpp), and this case is about the budget's flag
  const std::vector<std::string> ov{"task.action_mode=torque", "task.torque_limit=200", "task.iteration_budget=40",
                                    "batch.threads=2", "integrator.friction_continuation=0"};
  const int K = 4, steps = 6;
  VecEnv clean = hopper(K, ov), bad = hopper(K, ov);
  const int A = clean.action_dim(), D = clean.obs_dim();
  REQUIRE(clean.iteration_budget() == 40);
  std::vector<double> a;
  bool flagged = false;
  for (int s = 0; s < steps; ++s) {
    actions_at(s, K, A, a);
    for (double& x : a) x *= 100;  // N m, within the torque limit
    clean.step(a.data());
    a[0] = 1e6;
    bad.step(a.data());
    for (int k = 1; k < K; ++k) {
      CHECK(row(bad.obs(), k, D) == row(clean.obs(), k, D));
      CHECK(bad.reward()[k] == clean.reward()[k]);
      CHECK(row(bad.qpos(), k, clean.task().nq()) == row(clean.qpos(), k, clean.task().nq()));
      CHECK(bad.flags()[k] == 0u);
    }
    // budget: it_max LM iterations per attempt, two attempts with the restart rule (docs/methods/pbfd.md §5.3)
    CHECK(bad.iterations()[0] <= 2 * 40);
    CHECK((bad.flags()[0] & ENV_ACTION_OUT_OF_RANGE) != 0);
    if (bad.flags()[0] & (ENV_BUDGET_EXCEEDED | ENV_SOLVER_FAILED)) {
      flagged = true;
      CHECK(bad.truncated()[0] == 1);
      CHECK(bad.reward()[0] == 0.0);
      CHECK(bad.episode_step()[0] == 0);  // auto-reset by policy
    }
  }
  CHECK(flagged);
}

TEST_CASE("vec_env: SAME_STEP auto-reset: final_obs is the ended episode's, obs the next one's", "[vec_env]") {
  const int K = 3, T = 4;
  VecEnv a = hopper(K, {"task.episode_steps=4"}), ref = hopper(K, {"task.episode_steps=4"}, 3, false);
  const int A = a.action_dim(), D = a.obs_dim();
  std::vector<double> u;
  for (int s = 0; s < T; ++s) {
    actions_at(s, K, A, u);
    for (double& x : u) x *= 0.1;  // gentle: no env falls (terminates) within T steps
    a.step(u.data());
    ref.step(u.data());
    for (int k = 0; k < K; ++k) {
      REQUIRE(a.terminated()[k] == 0);
      CHECK(a.truncated()[k] == (s == T - 1));
    }
  }
  for (int k = 0; k < K; ++k) {
    // the ended episode's last observation equals the one of the env without auto-reset
    CHECK(row(a.final_obs(), k, D) == row(ref.obs(), k, D));
    CHECK(a.episode_step()[k] == 0);
    CHECK(a.episode()[k] == 1u);
    CHECK(a.reward()[k] == ref.reward()[k]);  // the step's reward is the ended episode's
    CHECK(row(a.obs(), k, D) != row(ref.obs(), k, D));
  }
  // the new episode's start is the seeded stream (seed, k, 1): the same in a fresh VecEnv reset()
  VecEnv fresh = hopper(K, {"task.episode_steps=4"});
  fresh.reset(-1);
  for (int k = 0; k < K; ++k) CHECK(row(a.obs(), k, D) == row(fresh.obs(), k, D));
  // reset(seed) rebuilds: the same as a new VecEnv with that seed
  VecEnv s7 = hopper(K, {}, 7);
  a.reset(7);
  for (int k = 0; k < K; ++k) CHECK(row(a.obs(), k, D) == row(s7.obs(), k, D));
}

TEST_CASE("vec_env: masses / friction / stiffness are re-drawn per episode from (seed, k, episode)", "[vec_env]") {
  const std::vector<std::string> ov{"task.episode_steps=2", "batch.randomize_mass=0.3", "batch.randomize_friction=0.3",
                                    "batch.randomize_stiffness=0.3"};
  VecEnv a = hopper(3, ov), b = hopper(2, ov);
  const int L = a.sc().model.n_link;
  const std::vector<double> m0 = a.params().link_mass_scale;
  const double mu0 = a.params().contact[1].mu;
  std::vector<double> u;
  for (int s = 0; s < 2; ++s) {
    actions_at(s, 3, a.action_dim(), u);
    a.step(u.data());
    b.step(u.data());  // the first 2 rows of u
  }
  REQUIRE(a.episode()[1] == 1u);
  // new draws, each factor within exp([-r, r])
  CHECK(a.params().link_mass_scale != m0);
  CHECK(a.params().contact[1].mu != mu0);
  for (double s : a.params().link_mass_scale) CHECK((s >= std::exp(-0.3) && s <= std::exp(0.3)));
  // env 1's draws are its own stream: the same with K = 2
  for (int j = 0; j < L; ++j) CHECK(a.params().link_mass_scale[size_t(L) + j] == b.params().link_mass_scale[size_t(L) + j]);
  CHECK(a.params().contact[1].c_perp == b.params().contact[1].c_perp);
}

TEST_CASE("vec_env: the team engine takes each episode's new parameters", "[vec_env]") {
  // the CPU emulation of the CUDA engine (batch.engine=team) against the reference engine, with
  // masses, friction and stiffness re-drawn at every episode (8 steps each); walker2d (the team
  // engine takes link geoms against the floor only, hopper's foot-torso pairs are not); with either
  // friction law (the Coulomb law's per-rollout mu, docs/methods/pbfd.md §4.9)
  for (const char* law : {"contact.friction=power", "contact.friction=coulomb"}) {
    INFO(law);
    const std::vector<std::string> ov{"task.episode_steps=8", "batch.randomize_mass=0.3", "batch.randomize_friction=0.3",
                                      "batch.randomize_stiffness=0.3", "batch.threads=1", law};
    std::vector<std::string> team_ov = ov;
    team_ov.push_back("batch.engine=team");
    VecEnv ref = make_env("walker2d", 2, ov), team = make_env("walker2d", 2, team_ov);
    REQUIRE(team.engine_name() == "cpu_team_emulation");
    const int D = ref.obs_dim();
    std::vector<double> u;
    for (int s = 0; s < 25; ++s) {
      actions_at(s, 2, ref.action_dim(), u);
      for (double& x : u) x *= 0.3;
      ref.step(u.data());
      team.step(u.data());
      for (int k = 0; k < 2; ++k)
        for (int i = 0; i < D; ++i) CHECK(team.obs()[size_t(k) * D + i] == Approx(ref.obs()[size_t(k) * D + i]).margin(1e-6));
    }
    CHECK(team.episode()[0] == 3u);  // 25 steps: the third episode's draws
  }
}

TEST_CASE("vec_env: a push is a kick N(0, push_speed^2) on theta_dot from the env's stream (seed, k)", "[vec_env]") {
  // oracle: the same kick given to a push-free twin through set_state (qvel = theta_dot on the
  // hopper's slide / hinge joints), the stream re-drawn here as vec_env.h documents it
  const double speed = 0.5;
  const int K = 3;
  const uint64_t seed = 3;
  VecEnv pushed = hopper(K, {"batch.push_prob=1", "batch.push_speed=0.5"}, seed), twin = hopper(K, {}, seed);
  const int nq = twin.task().nq(), nv = twin.task().nv(), D = twin.obs_dim(), n = twin.sc().model.n_q;
  REQUIRE(nv == n);
  for (int k = 0; k < K; ++k) {
    std::seed_seq seq{uint32_t(seed), uint32_t(seed >> 32), uint32_t(k), 0x70757368u};
    std::mt19937_64 rng(seq);
    REQUIRE(std::uniform_real_distribution<double>(0.0, 1.0)(rng) < 1.0);
    std::normal_distribution<double> N(0.0, 1.0);
    std::vector<double> qpos = row(twin.qpos(), k, nq), qvel = row(twin.qvel(), k, nv);
    for (int i = 0; i < n; ++i) qvel[size_t(i)] += speed * N(rng);
    twin.set_state(k, qpos.data(), qvel.data());
  }
  std::vector<double> u;
  actions_at(0, K, twin.action_dim(), u);
  pushed.step(u.data());
  twin.step(u.data());
  for (size_t i = 0; i < size_t(K) * D; ++i) CHECK(pushed.obs()[i] == Approx(twin.obs()[i]).margin(1e-9));
  // without pushes the state differs by the kick: the oracle is not vacuous
  VecEnv plain = hopper(K, {}, seed);
  plain.step(u.data());
  double diff = 0;
  for (size_t i = 0; i < size_t(K) * D; ++i) diff = std::max(diff, std::abs(plain.obs()[i] - pushed.obs()[i]));
  CHECK(diff > 0.1);
}

TEST_CASE("vec_env: pushes come with probability push_prob per env and step", "[vec_env]") {
  // 400 envs, one step: the fraction kicked (obs different from the push-free batch) ~ B(400, 0.3)
  const int K = 400;
  VecEnv pushed = hopper(K, {"batch.push_prob=0.3", "batch.push_speed=0.2", "batch.threads=2"}),
         plain = hopper(K, {"batch.threads=2"});
  std::vector<double> u;
  actions_at(0, K, plain.action_dim(), u);
  pushed.step(u.data());
  plain.step(u.data());
  const int D = plain.obs_dim();
  int kicked = 0;
  for (int k = 0; k < K; ++k) kicked += row(pushed.obs(), k, D) != row(plain.obs(), k, D);
  // 4 standard deviations of the binomial count, sqrt(400 * 0.3 * 0.7) = 9.2
  CHECK(std::abs(kicked - 120) < 37);
  CHECK_THROWS_AS(hopper(1, {"batch.push_prob=1.5"}), InvalidArgument);
  CHECK_THROWS_AS(hopper(1, {"batch.push_speed=-1"}), InvalidArgument);
}

TEST_CASE("vec_env: bad actions are flagged per env, never thrown", "[vec_env]") {
  VecEnv a = hopper(3), ref = hopper(3);
  const int A = a.action_dim(), D = a.obs_dim();
  std::vector<double> u, v;
  actions_at(0, 3, A, u);
  v = u;
  u[0] = std::nan("");        // env 0: NaN
  u[size_t(A) + 1] = 5.0;     // env 1: out of ctrlrange [-1, 1]: clamped, as MuJoCo
  v[size_t(A) + 1] = 1.0;
  a.step(u.data());
  ref.step(v.data());
  CHECK(a.flags()[0] == ENV_ACTION_NONFINITE);
  CHECK(a.truncated()[0] == 1);
  CHECK(std::isfinite(a.obs()[0]));
  CHECK(a.flags()[1] == ENV_ACTION_OUT_OF_RANGE);
  CHECK(row(a.obs(), 1, D) == row(ref.obs(), 1, D));
  CHECK(a.flags()[2] == 0u);
  CHECK(row(a.obs(), 2, D) == row(ref.obs(), 2, D));
  // the ctrl cost is on the action as given (Gymnasium's control_cost(action))
  CHECK(a.terms()[4 * 1 + 1] == Approx(1e-3 * (u[A] * u[A] + 25.0 + u[A + 2] * u[A + 2])).epsilon(1e-14));
  CHECK_THROWS_AS(a.step(nullptr), InvalidArgument);
}

TEST_CASE("vec_env: results do not depend on the thread count", "[vec_env]") {
  VecEnv t1 = hopper(5, {"batch.threads=1", "task.episode_steps=3"}), t2 = hopper(5, {"batch.threads=2", "task.episode_steps=3"});
  std::vector<double> u;
  for (int s = 0; s < 5; ++s) {
    actions_at(s, 5, t1.action_dim(), u);
    t1.step(u.data());
    t2.step(u.data());
    CHECK(row(t1.obs(), 0, 5 * t1.obs_dim()) == row(t2.obs(), 0, 5 * t2.obs_dim()));
    CHECK(row(t1.reward(), 0, 5) == row(t2.reward(), 0, 5));
  }
}

TEST_CASE("vec_env: task files name the bad key and value", "[vec_env]") {
  auto msg = [](const std::vector<std::string>& ov) {
    try {
      hopper(1, ov);
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(msg({"task.wings=2"}), Catch::Contains("task.wings") && Catch::Contains("unknown task key"));
  CHECK_THAT(msg({"task.kind=robot"}), Catch::Contains("task.kind = robot"));
  CHECK_THAT(msg({"task.episode_steps=0"}), Catch::Contains("task.episode_steps = 0"));
  CHECK_THAT(msg({"task.action_mode=magic"}), Catch::Contains("task.action_mode = magic"));
  CHECK_THAT(msg({"task.healthy_z_range=[2, 1]"}), Catch::Contains("task.healthy_z_range"));
  CHECK_THAT(msg({"integrator.dtt=1"}), Catch::Contains("integrator.dtt"));
  CHECK_THROWS_AS(VecEnv(task_file("hopper"), VecEnvOptions{0, 0, "cpu", {}, true}), InvalidArgument);
}

#endif
