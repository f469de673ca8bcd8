// Determinism for every integrator (docs/architecture.md §4): on a contact-rich scene with
// per-rollout randomisation, the CPU batch equals K lone serial runs bit for bit (states and
// iteration counts) for any thread count. Before per-rollout Data, NE-MDP's QP warm start and
// NMDP's PGM warm start lived in per-thread integrators, so iteration counts changed with --threads
// (spider, NE-MDP, 6 rollouts: rollout 0 averaged 1.37 vs 1.45 iterations with 1 vs 3 threads).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "batch/batch.h"

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
                     "batch.randomize_friction=0.5", "batch.randomize_stiffness=0.5", "batch.randomize_mass=0.3"});
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

// rollout by rollout, each with its own integrator and Data (the serial oracle). scaled_model:
// each rollout runs on its own copy of the model with its link masses and inertias scaled
// (scale_mass) and no mass scale in its RolloutParams: the oracle of the per-link mass scales.
Result serial(const Scene& sc, const BatchOptions& opt, int steps, bool scaled_model = false) {
  StateBatch b(opt.rollouts, sc.model.n_q);
  RolloutParamTable p;
  init_batch(sc, opt, b, p);
  Result r;
  r.iterations.assign(size_t(opt.rollouts) * steps, 0);
  const int L = sc.model.n_link;
  for (int k = 0; k < opt.rollouts; ++k) {
    Scene lone = sc;
    if (scaled_model) lone.model = scale_mass(sc.model, p.mass_scale_row(k, L));
    const auto integ = make_integrator(scaled_model ? lone : sc);
    Data d = integ->make_data();
    d.theta = b.row(b.theta, k);
    d.theta_prev = b.row(b.theta_prev, k);
    for (int s = 0; s < steps; ++s) {
      const StepControl u{sc.tau, sc.pd.active() ? &sc.pd : nullptr, s * sc.settings.dt};
      const RolloutParams rp{p.contact[k], scaled_model ? nullptr : p.mass_scale_row(k, L), nullptr,
                             p.stiffness_scale[size_t(k)]};
      r.iterations[size_t(s) * opt.rollouts + k] = integ->step(d, u, rp).iterations;
    }
    b.row(b.theta, k) = d.theta;
  }
  r.theta = b.theta;
  return r;
}

// every integrator type on the contact-rich spider, a few steps each
const Case kCases[] = {{"ne_mdp", 0.005, 12}, {"ne_lcp", 0.005, 12}, {"pbfd", 0.01, 8},
                       {"pbd", 0.01, 8},      {"nmdp_ne", 0.02, 4},  {"nmdp_pbd", 0.02, 4},
                       {"compliant", 0.01, 6}};

// K perturbed rollouts with randomised friction, stiffness (0.5) and per-link masses (mass)
BatchOptions randomised(int K, uint64_t seed, double mass) {
  BatchOptions opt;
  opt.rollouts = K;
  opt.seed = seed;
  opt.perturb_theta = 0.02;
  opt.randomize_friction = opt.randomize_stiffness = 0.5;
  opt.randomize_mass = mass;  // a factor per link and rollout (no model copies)
  return opt;
}

}  // namespace

TEST_CASE("determinism: batch == serial bit for bit for every integrator and thread count", "[batch][determinism]") {
  for (const Case& c : kCases) {
    SECTION(c.integrator) {
      const Scene sc = spider(c);
      const BatchOptions opt = randomised(6, 21, 0.3);
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

TEST_CASE("per-link mass scales: a scaled rollout equals a lone run on the scaled model, every integrator",
          "[batch][mass]") {
  // RolloutParams::link_mass_scale applies s_j to link j's mass and inertia inside the integrator
  // (and the scaled weight to max(1, W), tol_G and k_c); the oracle steps a Model copy whose link
  // masses and inertias are scaled. Only rounding differs (s_j S_j vs S of the scaled inertia).
  for (const Case& c : kCases) {
    SECTION(c.integrator) {
      const Scene sc = spider(c);
      const BatchOptions opt = randomised(3, 5, 0.4);
      StateBatch b0(opt.rollouts, sc.model.n_q);
      RolloutParamTable p;
      init_batch(sc, opt, b0, p);
      REQUIRE(p.link_mass_scale.size() == size_t(opt.rollouts) * sc.model.n_link);
      CHECK(p.link_mass_scale[0] != p.link_mass_scale[1]);  // each link its own draw
      const Result oracle = serial(sc, opt, c.steps, true);
      const Result r = batched(sc, opt, 2, c.steps);
      INFO(c.integrator);
      double err = 0;
      for (size_t i = 0; i < r.theta.size(); ++i) err = std::max(err, std::abs(r.theta[i] - oracle.theta[i]));
      CHECK(err <= 1e-12);
      CHECK(r.iterations == oracle.iterations);
      // and the scales matter: an unscaled run differs
      const Result u = batched(sc, randomised(3, 5, 0), 1, c.steps);
      double diff = 0;
      for (size_t i = 0; i < r.theta.size(); ++i) diff = std::max(diff, std::abs(r.theta[i] - u.theta[i]));
      CHECK(diff > 1e-9);
    }
  }
}
