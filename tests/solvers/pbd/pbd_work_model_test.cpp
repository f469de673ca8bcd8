// The GPU work model's counters (solvers/team/counted.h, CountingTeam in solvers/team/team.h,
// solvers/pbd/pbd_work_model.h): hand counts of small team kernels, lane efficiency of a balanced
// and of a one-lane loop, the counted LM run takes the iterations the plain one takes, and the
// device model's bounds by hand.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <type_traits>

#include "io/scene.h"
#include "solvers/pbd/pbd_batch_team.h"
#include "solvers/pbd/pbd_work_model.h"

using namespace bigstep;

namespace {
using C = Counted<double>;

// K starts of sc: theta(0) + N(0, 0.01) per entry (seeded), theta_{-1} = theta(0) - dt theta_dot(0)
void perturbed_starts(const Scene& sc, double dt, int K, unsigned seed, std::vector<VecX>& th0,
                      std::vector<VecX>& thm1) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> N(0, 0.01);
  for (int k = 0; k < K; ++k) {
    VecX q = sc.theta0;
    for (int i = 0; i < q.size(); ++i) q[i] += N(rng);
    th0.push_back(q);
    thm1.push_back(q - dt * sc.theta_dot0);
  }
}
}  // namespace

TEST_CASE("work model: a team dot product counts n multiplies on the lanes and n adds on lane 0", "[team][work_model]") {
  // p_i = x_i y_i on lane i % 8 (n = 37: lanes 0-4 take 5, lanes 5-7 take 4), barrier, then lane 0
  // sums s = 0 + p_0 + ... + p_36 (37 adds), barrier: work 74, path 5 + 37 = 42, 2 barriers
  const int n = 37, lanes = 8;
  std::vector<C> x(n), y(n), p(n);
  for (int i = 0; i < n; ++i) x[i] = 0.5 * i, y[i] = 2.0 - i;
  WorkTally tally(lanes, 1);
  C s = 0;
  {
    CountingTeam team(tally);
    team.for_each_lane(n, [&](int i) { p[i] = x[i] * y[i]; });
    team.sync();
    team.single([&] {
      for (int i = 0; i < n; ++i) s += p[i];
    });
    team.sync();
  }
  double ref = 0;
  for (int i = 0; i < n; ++i) ref += (0.5 * i) * (2.0 - i);
  CHECK(double(s) == ref);  // counting does not change the arithmetic
  const TeamWork w = tally.total();
  CHECK(w.work == 2 * n);
  CHECK(w.path == 5 + n);
  CHECK(w.barriers == 2);
  CHECK(w.efficiency(lanes) == Approx(74.0 / (8 * 42)));
  // nothing counts once the team is gone
  const C t = x[3] * y[3] + s;
  CHECK(tally.total().work == 2 * n);
  CHECK(double(t) == 1.5 * -1.0 + ref);
}

TEST_CASE("work model: a balanced loop has lane efficiency 1, a one-lane loop 1/lanes", "[team][work_model]") {
  const int lanes = 32;
  std::vector<C> a(64), b(64, 1.5), c(64, 2.0);
  WorkTally tally(lanes, 2);
  {
    CountingTeam team(tally);
    // 64 entries on 32 lanes, one fma-shaped update each (2 ops): every lane 4 ops
    team.for_each_lane(64, [&](int i) { a[i] = b[i] * c[i] + a[i]; });
    team.sync();
    tally.set_phase(1);
    team.single([&] {
      for (int i = 0; i < 64; ++i) a[i] = b[i] * c[i] + a[i];
    });
    // outside any lane function: each GPU lane runs it itself (counted once, on every lane's path)
    const C u = a[0] * a[1];
    (void)u;
    team.sync();
  }
  CHECK(tally.phase[0].work == 128);
  CHECK(tally.phase[0].path == 4);
  CHECK(tally.phase[0].efficiency(lanes) == 1.0);
  CHECK(tally.phase[1].work == 129);
  CHECK(tally.phase[1].path == 129);
  CHECK(tally.phase[1].efficiency(lanes) == Approx(1.0 / lanes));
}

TEST_CASE("work model: special functions, comparisons and free operations", "[team][work_model]") {
  WorkTally tally(1, 1);
  {
    CountingTeam team(tally);
    team.single([&] {
      using std::abs;
      using std::pow;
      using std::sqrt;
      const C x = 2.0, y = -x;                 // negation: free
      const C z = pow(abs(y), C(0.5)) + sqrt(x);  // pow (special), sqrt, + : 3
      const bool big = z > 1;                  // comparison: 1
      CHECK(big);
      CHECK(isfinite(z));  // free
    });
    team.sync();
  }
  CHECK(tally.total().work == 4);
  CHECK(tally.total().special == 1);
}

TEST_CASE("work model: the counted LM run takes the plain run's iterations", "[team][work_model]") {
  // Counted<double> changes no arithmetic, so the counted driver (phase by phase) must follow the
  // plain team batch iteration for iteration; floating chain landing, 3 rollouts, 20 steps
  const Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/chain_floating_ground.yaml",
                              {"initial.theta=[0, 0, 0.05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]"});
  const int K = 3, steps = 20;
  std::vector<VecX> th0, thm1;
  perturbed_starts(sc, sc.settings.dt, K, 5, th0, thm1);
  PbfdTeamBatch<double> plain(sc.model, sc.settings, K, steps, false, 1);
  for (int k = 0; k < K; ++k) plain.init(k, th0[k], thm1[k]);
  while (plain.launch(8) > 0) {
  }
  double iters = 0;
  for (int k = 0; k < K; ++k)
    for (int n = 0; n < steps; ++n) iters += plain.iterations(k, n);
  const LmWorkCount c = count_lm_work<double>(sc.model, sc.settings, th0, thm1, steps, 32);
  // a pass of lm_team_iteration evaluates once; the step's iteration count (LmStats) leaves out
  // the final evaluation that converges: one pass more per step (no restarts here)
  CHECK(c.iterations == iters + K * steps);
  CHECK(c.failed_steps == 0);
  // every iteration evaluates r and J_r: the evaluate phase is most of the work, and no phase
  // can be better balanced than perfectly
  const TeamWork tot = c.iteration_total();
  CHECK(c.phase[LMW_EVALUATE].work > 0.5 * tot.work);
  for (int p = 0; p < LMW_N; ++p) CHECK(c.phase[size_t(p)].efficiency(32) <= 1.0);
  CHECK(tot.efficiency(32) > 0.0);
}

TEST_CASE("work model: the device model's bounds by hand", "[team][work_model]") {
  // one phase, per env step and trajectory: path 1000 instructions, work 16000, 10 barriers
  LmWorkCount c;
  c.K = 1;
  c.steps = 1;
  c.iterations = 1;
  c.max_iterations_step = 3;
  c.phase.assign(LMW_N, TeamWork{});
  c.phase[0] = TeamWork{16000, 1000, 10, 0};
  GpuSpec g;  // 132 SMs, 4 FP32 warp instructions / clock, dependent interval 4 clocks
  g.clock_ghz = 1.0;
  GpuMapping mp;
  mp.lanes = 32;
  mp.regs = 64;         // 65536 / (64 * 32) = 32 warps
  mp.smem_per_traj = 0;
  mp.bar_clk = 20;
  mp.host_us_per_launch = 5;
  const int K = 132 * 64;  // 64 per SM
  const GpuPrediction p = predict_gpu(c, g, mp, K, false);
  CHECK(p.lane_efficiency == Approx(0.5));
  CHECK(p.resident == 32);
  CHECK(p.t_thr_us == Approx(64 * 1000 / 4.0 / 1e3));              // 16 us
  CHECK(p.t_lat_us == Approx(2 * (1000 * 4 + 10 * 20) / 1e3));      // 8.4 us
  CHECK(std::string(p.bound) == "throughput");
  CHECK(p.t_step_us == Approx(16 + 5));
  mp.launch_per_iteration = true;  // a launch per iteration of the slowest trajectory: 3 x 5 us
  CHECK(predict_gpu(c, g, mp, K, false).t_step_us == Approx(16 + 15));
}

TEST_CASE("GPU work model: the block plan over teams per block (shared memory, registers by warp)", "[work_model]") {
  LmWorkCount c;
  c.K = 1;
  c.steps = 1;
  c.iterations = 1;
  c.phase.assign(LMW_N, TeamWork{});
  c.phase[0] = TeamWork{16000, 1000, 10, 0};
  GpuSpec g;  // 233472 B shared per SM, 1024 B reserved per block, 65536 registers, 256 per warp unit
  GpuMapping mp;
  mp.lanes = 16;
  mp.smem_per_traj = 6236;
  mp.max_teams_per_block = 8;
  // 128 registers (4096 per warp): blocks of 8 teams (4 warps) -> 4 by registers, 233472 /
  // (8 x 6236 + 1024) = 4.6 -> 4 by shared memory: 32; blocks of 2 (1 warp): 16 by registers: 32
  // too, and the tie keeps the larger block
  mp.regs = 128;
  GpuPrediction p = predict_gpu(c, g, mp, 132 * 64, false);
  CHECK(p.resident == 32);
  CHECK(p.teams_per_block == 8);
  // 112 registers (3584 per warp, 18 warps): blocks of 6 (3 warps) -> 6 by registers, 233472 /
  // (6 x 6236 + 1024) = 6.07 -> 6 by shared memory: 36; blocks of 8 give 4 x 8 = 32, of 2 17 x 2 = 34
  mp.regs = 112;
  p = predict_gpu(c, g, mp, 132 * 64, false);
  CHECK(p.resident == 36);
  CHECK(p.teams_per_block == 6);
  // without block granularity: min(65536 / (112 x 16), 233472 / 6236) = min(36, 37) = 36
  mp.max_teams_per_block = 0;
  CHECK(predict_gpu(c, g, mp, 132 * 64, false).resident == 36);
}

TEST_CASE("team reduction: a fixed index tree, the same bits on every team, counted per level", "[team][work_model]") {
  // n = 13 values on 8 lanes: 13 partials (lanes 0-4 take 2), then levels h = 8, 4, 2, 1 combine
  // i + h into i for i + h < 13: 5, 4, 2, 1 pairs (one add each, on lanes i % 8)
  const int n = 13, lanes = 8;
  std::vector<double> x(n);
  for (int i = 0; i < n; ++i) x[i] = 1.0 / (3.0 + i) - 0.1 * i;
  // the tree by hand: its order differs from a left-to-right sum's, so this is what every team gives
  double v[16] = {};
  for (int i = 0; i < n; ++i) v[i] = x[i] * x[i];
  for (int h = 8; h >= 1; h /= 2)
    for (int i = 0; i < h; ++i)
      if (i + h < n) v[i] += v[i + h];
  auto sum_sq = [&](auto& team, auto* red) {
    using T = std::remove_pointer_t<decltype(red)>;
    team_reduce<1>(
        team, n, red, [&](int i, T* r) { r[0] = T(x[i]) * T(x[i]); }, [](T* a, const T* b) { a[0] += b[0]; });
    return double(red[0]);
  };
  std::vector<double> red(n);
  CpuTeam shuffled;  // lanes in reversed and strided orders
  CHECK(sum_sq(shuffled, red.data()) == v[0]);
  ThreadTeamRunner runner(5);
  double threaded = 0;
  runner.run([&](ThreadTeam& t) {
    const double s = sum_sq(t, red.data());
    t.single([&] { threaded = s; });
  });
  CHECK(threaded == v[0]);
  WorkTally tally(lanes, 1);
  std::vector<C> cred(n);
  {
    CountingTeam team(tally);
    CHECK(sum_sq(team, cred.data()) == v[0]);  // counting does not change the arithmetic
  }
  const TeamWork w = tally.total();
  CHECK(w.work == n + (n - 1));           // n products, n - 1 adds
  CHECK(w.path == 2 + 1 + 1 + 1 + 1);     // 2 products on lane 0, then one add per level
  CHECK(w.barriers == 0);                 // counted as the warp runs it: shuffles, no barrier
}

TEST_CASE("team reduction: the register tree a warp shuffles gives team_reduce's bits", "[team]") {
  // The warp team's reduce (cuda/team_cuda.cuh) runs team_tree_registers with down = shuffle-down
  // within W lanes. Here W OS threads run the same function; down(x, h) publishes x in a slot and
  // reads lane + h's after a barrier (a shuffle-down: lane + h >= W gets its own x back). Values of
  // mixed magnitude and sign, so a different pairing or order changes the sum's bits.
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> x(32);
  for (double& e : x) {  // two draws in a fixed order (the operands of one '*' are unsequenced)
    const double mant = u(rng), expo = u(rng);
    e = mant * std::pow(10.0, 6.0 * expo);
  }
  for (int W : {16, 32}) {
    ThreadTeamRunner runner(W);
    std::vector<double> slot(size_t(W) * 2);
    for (int n = 1; n <= W; ++n) {
      std::vector<double> red(size_t(2) * n);
      CpuTeam cpu;
      const auto want = team_reduce<2>(
          cpu, n, red.data(),
          [&](int i, double* v) {
            v[0] = x[i] * (i + 1);
            v[1] = std::abs(x[i]);
          },
          [](double* a, const double* b) {
            a[0] += b[0];
            a[1] = b[1] > a[1] ? b[1] : a[1];
          });
      double got[2] = {0, 0};
      runner.run([&](ThreadTeam& t) {
        double v[2] = {-1e300, -1e300};  // lanes >= n hold anything
        if (t.lane < n) v[0] = x[t.lane] * (t.lane + 1), v[1] = std::abs(x[t.lane]);
        int c = 0;
        auto down = [&](double y, int h) {
          slot[size_t(2 * t.lane + c)] = y;
          t.sync();
          const double o = slot[size_t(2 * (t.lane + h < W ? t.lane + h : t.lane) + c)];
          t.sync();
          c ^= 1;
          return o;
        };
        team_tree_registers<2>(t.lane, n, v, down, [](double* a, const double* b) {
          a[0] += b[0];
          a[1] = b[1] > a[1] ? b[1] : a[1];
        });
        t.single([&] { got[0] = v[0], got[1] = v[1]; });
      });
      CHECK(got[0] == want[0]);
      CHECK(got[1] == want[1]);
    }
  }
  // a left-to-right sum differs from the tree for these values (so the check above can fail)
  double serial = 0;
  for (int i = 0; i < 32; ++i) serial += x[i] * (i + 1);
  std::vector<double> red(64);
  CpuTeam cpu;
  const auto tree = team_reduce<1>(
      cpu, 32, red.data(), [&](int i, double* v) { v[0] = x[i] * (i + 1); }, [](double* a, const double* b) { a[0] += b[0]; });
  CHECK(serial != tree[0]);
}

TEST_CASE("team triangle index: every entry of a lower triangle once, row by row", "[team]") {
  for (int n : {1, 2, 5, 15, 64}) {
    int q = 0;
    for (int a = 0; a < n; ++a)
      for (int b = 0; b <= a; ++b, ++q) {
        int i = -1, j = -1;
        tri_index(q, i, j);
        CHECK(i == a);
        CHECK(j == b);
      }
  }
}

TEST_CASE("work model: the floating chain's LM iteration keeps >= 75 % of 16 lanes busy", "[team][work_model]") {
  // FP32 as bench gpu-speedup runs it (eps_r 1e-4), 8 rollouts x 100 steps (the chain lands at
  // step ~45): lane efficiency = ops / (16 x busiest-lane path) over the whole iteration. Before the
  // serial phases were spread over the lanes (one-lane FK, decisions, left-looking pivots) it was 32 %.
  const Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/chain_floating_ground.yaml");
  PbdSettings s = sc.settings;
  s.eps_r = 1e-4;
  s.eps_x = 1e-6;
  const int K = 8, steps = 100;
  std::vector<VecX> th0, thm1;
  perturbed_starts(sc, s.dt, K, 1, th0, thm1);
  const LmWorkCount c = count_lm_work<float>(sc.model, s, th0, thm1, steps, 16);
  CHECK(c.failed_steps == 0);
  CHECK(c.iteration_total().efficiency(16) >= 0.75);
  // the phases that were one-lane code: the evaluation (FK) and the factorisation
  CHECK(c.phase[LMW_EVALUATE].efficiency(16) >= 0.7);
  CHECK(c.phase[LMW_FACTOR].efficiency(16) >= 0.5);
}
