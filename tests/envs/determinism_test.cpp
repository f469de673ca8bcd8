// Determinism for every integrator (issue 10 item 6, design.md "Data"): on a contact-rich scene with
// per-rollout randomisation, the CPU batch equals K lone serial runs bit for bit (states and
// iteration counts) for any thread count. Before per-rollout Data, NE-MDP's QP warm start and
// NMDP's PGM warm start lived in per-thread integrators, so iteration counts changed with --threads
// (spider, NE-MDP, 6 rollouts: rollout 0 averaged 1.37 vs 1.45 iterations with 1 vs 3 threads).
#include <catch2/catch.hpp>

#include "envs/batch.h"

using namespace bigstep;

namespace {

struct Case {
  const char* integrator;
  double dt;
  int steps;
};

// the spider quadruped standing on four feet with its jump servo (configs/quadruped_spider.yaml)
Scene spider(const Case& c) {
  return load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/quadruped_spider.yaml",
                    {std::string("integrator.type=") + c.integrator, "integrator.dt=" + std::to_string(c.dt),
                     "batch.randomize_friction=0.5", "batch.randomize_stiffness=0.5"});
}

struct Result {
  std::vector<double> theta;
  std::vector<int> iterations;  // (K x steps)
};

Result batched(const Scene& sc, const BatchOptions& opt, int threads, int steps) {
  StateBatch b(opt.rollouts, sc.model.n_q);
  RolloutParamTable p;
  init_batch(sc, opt, b, p);
  CpuBatchStepper st(sc, threads);
  Result r;
  for (int s = 0; s < steps; ++s) {
    st.step(b, p);
    r.iterations.insert(r.iterations.end(), b.iterations.begin(), b.iterations.end());
  }
  r.theta = b.theta;
  return r;
}

// rollout by rollout, each with its own integrator and Data (the serial oracle)
Result serial(const Scene& sc, const BatchOptions& opt, int steps) {
  StateBatch b(opt.rollouts, sc.model.n_q);
  RolloutParamTable p;
  init_batch(sc, opt, b, p);
  Result r;
  r.iterations.assign(size_t(opt.rollouts) * steps, 0);
  for (int k = 0; k < opt.rollouts; ++k) {
    const auto integ = make_integrator(sc);
    Data d = integ->make_data();
    d.theta = b.row(b.theta, k);
    d.theta_prev = b.row(b.theta_prev, k);
    for (int s = 0; s < steps; ++s) {
      const StepControl u{sc.tau, sc.pd.active() ? &sc.pd : nullptr, s * sc.settings.dt};
      r.iterations[size_t(s) * opt.rollouts + k] = integ->step(d, u, RolloutParams{p.contact[k]}).iterations;
    }
    b.row(b.theta, k) = d.theta;
  }
  r.theta = b.theta;
  return r;
}

}  // namespace

TEST_CASE("determinism: batch == serial bit for bit for every integrator and thread count", "[batch][determinism]") {
  const Case cases[] = {{"ne_mdp", 0.005, 12}, {"ne_lcp", 0.005, 12}, {"pbfd", 0.01, 8},
                        {"pbd", 0.01, 8},      {"nmdp_ne", 0.02, 4},  {"nmdp_pbd", 0.02, 4}};
  for (const Case& c : cases) {
    SECTION(c.integrator) {
      const Scene sc = spider(c);
      BatchOptions opt;
      opt.rollouts = 6;
      opt.seed = 21;
      opt.perturb_theta = 0.02;
      opt.randomize_friction = opt.randomize_stiffness = 0.5;
      const Result ref = serial(sc, opt, c.steps);
      for (int threads : {1, 2, 3}) {
        INFO(c.integrator << ", " << threads << " threads");
        const Result r = batched(sc, opt, threads, c.steps);
        CHECK(r.theta == ref.theta);
        CHECK(r.iterations == ref.iterations);
      }
      // the rollouts really differ, and some contact solve did work (iterations > 0)
      CHECK(ref.theta[0] != ref.theta[sc.model.n_q]);
      CHECK(*std::max_element(ref.iterations.begin(), ref.iterations.end()) > 0);
    }
  }
}
