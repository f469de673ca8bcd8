// Iterations to convergence inside one launch (solvers/pbd/pbd_step_persistent.h, the loop the CUDA
// warp kernel runs) against the one-iteration-per-launch sequence (docs/methods/pbfd.md §6): FP64 results
// equal bit for bit -- committed theta, iterations, status bits, last residual -- on the floating
// chain landing (rollout mode, one launch per horizon), the spider under its PD servo (lockstep,
// one launch per env step), steps that fail and restart from theta_n (it_max = 4), and with an
// iteration cap per launch (the carried state leaves and re-enters the local workspace mid-step).
#include <catch2/catch.hpp>

#include <random>

#include "io/scene.h"
#include "solvers/pbd/pbd_batch_team.h"
#include "tests/support/team_case.h"

using namespace bigstep;

namespace {

using Case = test::TeamCase;
Case make_case(const std::string& cfg, int K, std::vector<std::string> ov = {}) {
  return test::make_team_case(cfg, K, ov, 5);
}

// Runs every trajectory to its end with `launch` (returns the running count); in lockstep mode
// sets the servo's targets at t_{n+1} while all wait. Returns the number of launches.
template <class Launch>
int run(const Case& c, PbfdTeamBatch<double>& b, bool lockstep, Launch&& launch) {
  const int K = int(c.th0.size()), D = c.sc.model.n_q;
  const double dt = c.sc.settings.dt;
  for (int k = 0; k < K; ++k) b.init(k, c.th0[k], c.thm1[k]);
  const bool pd = lockstep && c.sc.pd.active();
  if (pd) b.set_gains(c.sc.pd.kp, c.sc.pd.kd);
  VecX tb(D), tdb(D);
  auto controls = [&](int n) {
    if (!pd) return;
    c.sc.pd.reference(n * dt + dt, tb, tdb);
    for (int k = 0; k < K; ++k) b.set_controls(k, VecX(), tb, tdb);
  };
  controls(0);
  int launches = 0, step = 0;
  for (;;) {
    ++launches;
    REQUIRE(launches < 100000);
    if (launch(b) > 0) continue;
    if (b.count(TRAJ_WAITING) == 0) return launches;
    controls(++step);
    b.release_waiting();
  }
}

// Both batches committed the same steps bit for bit; returns the OR of all status bits seen.
unsigned expect_identical(PbfdTeamBatch<double>& a, PbfdTeamBatch<double>& b, int K, int n_steps) {
  unsigned seen = 0;
  for (int k = 0; k < K; ++k) {
    INFO("rollout " << k);
    REQUIRE(a.status(k) == b.status(k));
    REQUIRE(a.steps_done(k) == b.steps_done(k));
    CHECK(a.residual(k) == b.residual(k));
    for (int n = 0; n < std::min(n_steps, a.steps_done(k)); ++n) {
      INFO("step " << n);
      CHECK(a.iterations(k, n) == b.iterations(k, n));
      CHECK(a.step_status(k, n) == b.step_status(k, n));
      CHECK(a.theta(k, n) == b.theta(k, n));
      seen |= a.step_status(k, n);
    }
  }
  return seen;
}

void compare(const Case& c, int n_steps, bool lockstep, int it_cap = 0, int* persistent_launches = nullptr) {
  const int K = int(c.th0.size());
  PbfdTeamBatch<double> one(c.sc.model, c.sc.settings, K, n_steps, lockstep, 2);
  PbfdTeamBatch<double> per(c.sc.model, c.sc.settings, K, n_steps, lockstep, 2);
  const int l1 = run(c, one, lockstep, [](PbfdTeamBatch<double>& b) { return b.launch(); });
  const int lp = run(c, per, lockstep, [&](PbfdTeamBatch<double>& b) { return b.launch_persistent(it_cap); });
  CHECK(lp < l1);
  if (persistent_launches) *persistent_launches = lp;
  expect_identical(per, one, K, n_steps);
}

const std::vector<std::string> kLanding = {"initial.theta=[0, 0, 0.05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]"};

}  // namespace

TEST_CASE("lm persistent: one launch per horizon equals one launch per iteration (floating chain landing)",
          "[team][lm][persistent]") {
  int launches = 0;
  compare(make_case("chain_floating_ground.yaml", 3, kLanding), 15, false, 0, &launches);
  CHECK(launches == 1);  // rollout mode: the whole horizon in one launch
}

TEST_CASE("lm persistent: one launch per env step equals one launch per iteration (spider, PD servo, lockstep)",
          "[team][lm][persistent]") {
  const Case c = make_case("quadruped_spider.yaml", 3,
                           {"integrator.type=pbfd", "integrator.optimizer=jtj_lm", "integrator.dt=0.02"});
  REQUIRE(c.sc.pd.active());
  const int n_steps = 10;
  int launches = 0;
  compare(c, n_steps, true, 0, &launches);
  CHECK(launches == n_steps);  // lockstep: one launch per step
}

TEST_CASE("lm persistent: failed attempts restart from theta_n identically", "[team][lm][persistent]") {
  // it_max = 4 is too few for the landing: attempts fail, restart once from theta_n, and commit
  // NOT_CONVERGED; the restart bookkeeping (ATTEMPT, IT_TOTAL) is carried state
  const Case c = make_case("chain_floating_ground.yaml", 3, {kLanding[0], "integrator.it_max=4"});
  for (bool lockstep : {false, true}) {
    const int K = int(c.th0.size()), n_steps = 12;
    PbfdTeamBatch<double> one(c.sc.model, c.sc.settings, K, n_steps, lockstep, 2);
    PbfdTeamBatch<double> per(c.sc.model, c.sc.settings, K, n_steps, lockstep, 2);
    run(c, one, lockstep, [](PbfdTeamBatch<double>& b) { return b.launch(); });
    run(c, per, lockstep, [](PbfdTeamBatch<double>& b) { return b.launch_persistent(); });
    const unsigned seen = expect_identical(per, one, K, n_steps);
    CHECK((seen & STATUS_RESTARTED) != 0);  // the restart path ran
  }
}

TEST_CASE("lm persistent: an iteration cap per launch resumes mid-step exactly", "[team][lm][persistent]") {
  // 3 iterations per launch: trajectories leave the local workspace in the middle of an attempt
  // (lambda, nu, B, g, th, th_c carried out and back in); any state not carried changes results
  compare(make_case("chain_floating_ground.yaml", 3, kLanding), 12, false, 3);
  compare(make_case("chain_floating_ground.yaml", 3, {kLanding[0], "integrator.it_max=4"}), 8, true, 3);
}

TEST_CASE("lm persistent: the second-order step's fresh start and history carry through one launch", "[team][lm][persistent][order2]") {
  // integrator.order 2: the first step of a free-running launch is a fresh start (dt_v = dt/2), the
  // next ones read theta_{n-2} (dt_v = 2 dt/3) inside the same launch; lockstep and an iteration
  // cap leave and re-enter the launch around the switch
  const std::string o2 = "integrator.order=2";
  int launches = 0;
  compare(make_case("chain_floating_ground.yaml", 3, {kLanding[0], o2}), 12, false, 0, &launches);
  CHECK(launches == 1);
  compare(make_case("chain_floating_ground.yaml", 3, {kLanding[0], o2}), 8, false, 3);
  compare(make_case("chain_floating_ground.yaml", 2, {kLanding[0], o2, "model.links[2].damping=0.2"}), 8, true);
}
