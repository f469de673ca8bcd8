// CPU batched backend: batched == serial bit for bit, seeded determinism, per-rollout streams,
// a diverging rollout is flagged without disturbing the others (docs/architecture.md §9 rules 4, 5).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "batch/batch.h"
#include "envs/tasks.h"
#include "batch/batch_engines.h"
#include "core/error.h"
#include "io/scene_keys.h"

using namespace bigstep;

namespace {

Scene chain(const std::vector<std::string>& extra = {}) {
  std::vector<std::string> ov{"integrator.dt=0.02"};
  ov.insert(ov.end(), extra.begin(), extra.end());
  return load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/chain_floating_ground.yaml", ov);
}

StateBatch run(const Scene& sc, const BatchOptions& opt, int threads, int steps, int poison = -1) {
  StateBatch b(opt.rollouts, sc.model.n_q);
  RolloutParamTable p;
  init_batch(sc, opt, b, p);
  if (poison >= 0) b.theta[size_t(poison) * b.n_q + 2] = std::nan("");
  CpuBatchStepper st(sc, threads);
  for (int s = 0; s < steps; ++s) st.step(b, p);
  return b;
}

// A lone rollout of scene `lone` from (th, thp): its own Data, `steps` steps with the scene's torques
// and parameters `rp` (default: the integrator's own); the final theta.
VecX lone_run(const Scene& lone, const VecX& th, const VecX& thp, int steps, const RolloutParams* rp = nullptr) {
  auto integ = make_integrator(lone);
  Data d = integ->make_data();
  d.theta = th;
  d.theta_prev = thp;
  StepControl u;
  u.tau = lone.tau;
  const RolloutParams par = rp ? *rp : integ->default_params();
  for (int s = 0; s < steps; ++s) integ->step(d, u, par);
  return d.theta;
}

}  // namespace

TEST_CASE("batch: any thread count gives bit-identical results", "[batch]") {
  const Scene sc = chain();
  BatchOptions opt;
  opt.rollouts = 5;
  opt.seed = 11;
  opt.perturb_theta = 0.05;
  const StateBatch a = run(sc, opt, 1, 30), b = run(sc, opt, 3, 30);
  CHECK(a.theta == b.theta);
  CHECK(a.theta_prev == b.theta_prev);
  CHECK(a.iterations == b.iterations);
  // the rollouts really differ (no tiled identical states)
  for (int k = 1; k < opt.rollouts; ++k) CHECK(a.theta[size_t(k) * a.n_q] != a.theta[0]);
}

TEST_CASE("batch: rollout k equals the single-rollout integrator from the same start", "[batch]") {
  const Scene sc = chain();
  BatchOptions opt;
  opt.rollouts = 3;
  opt.seed = 5;
  StateBatch b(3, sc.model.n_q);
  RolloutParamTable p;
  init_batch(sc, opt, b, p);
  const int k = 2;
  VecX th = b.row(b.theta, k), thp = b.row(b.theta_prev, k), next;
  const auto integ = make_integrator(sc);
  CpuBatchStepper st(sc, 2);
  for (int s = 0; s < 20; ++s) {
    st.step(b, p);
    integ->step(th, thp, sc.tau, next);
    thp = th;
    th = next;
  }
  CHECK(VecX(b.row(b.theta, k)) == th);
}

TEST_CASE("batch: seeds are deterministic and per-rollout streams independent of K", "[batch]") {
  const Scene sc = chain();
  BatchOptions opt;
  opt.rollouts = 3;
  opt.seed = 7;
  StateBatch a(3, sc.model.n_q), b(6, sc.model.n_q), c(3, sc.model.n_q);
  RolloutParamTable p;
  init_batch(sc, opt, a, p);
  opt.rollouts = 6;
  init_batch(sc, opt, b, p);
  CHECK(std::vector<double>(b.theta.begin(), b.theta.begin() + a.theta.size()) == a.theta);
  opt.rollouts = 3;
  opt.seed = 8;
  init_batch(sc, opt, c, p);
  CHECK(c.theta != a.theta);
  CHECK(run(sc, opt, 2, 5).theta == run(sc, opt, 2, 5).theta);
}

TEST_CASE("batch: a diverging rollout is flagged and does not disturb the others", "[batch]") {
  const Scene sc = chain();
  BatchOptions opt;
  opt.rollouts = 4;
  opt.seed = 2;
  const StateBatch clean = run(sc, opt, 2, 10), bad = run(sc, opt, 2, 10, /*poison=*/1);
  CHECK((bad.status[1] & STATUS_NONFINITE) != 0);
  for (int k : {0, 2, 3}) {
    INFO("rollout " << k);
    CHECK(bad.status[k] == clean.status[k]);
    for (int i = 0; i < bad.n_q; ++i) CHECK(bad.theta[size_t(k) * bad.n_q + i] == clean.theta[size_t(k) * clean.n_q + i]);
  }
}

TEST_CASE("batch: randomised friction is per rollout and reproducible", "[batch]") {
  const Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/box_slide.yaml");
  BatchOptions opt;
  opt.rollouts = 4;
  opt.seed = 3;
  opt.perturb_theta = opt.perturb_theta_dot = 0;
  opt.randomize_friction = 1.0;
  StateBatch b(4, sc.model.n_q);
  RolloutParamTable p;
  init_batch(sc, opt, b, p);
  REQUIRE(p.contact.size() == 4);
  CHECK(p.contact[0].c_par != p.contact[1].c_par);
  CpuBatchStepper st(sc, 2);
  for (int s = 0; s < 50; ++s) st.step(b, p);
  // identical initial states, different friction -> different distances; each equals a lone run
  CHECK(b.theta[0] != b.theta[sc.model.n_q]);
  // a lone rollout: its own Data, rollout 3's parameters with each step
  auto integ = make_integrator(sc);
  Data d = integ->make_data();
  d.theta = sc.theta0;
  d.theta_prev = sc.theta0 - sc.settings.dt * sc.theta_dot0;
  StepControl u;
  u.tau = sc.tau;
  for (int s = 0; s < 50; ++s) integ->step(d, u, RolloutParams{p.contact[3]});
  CHECK(VecX(b.row(b.theta, 3)) == d.theta);
}

TEST_CASE("batch: per-link mass scales equal a lone run on the scaled model", "[batch]") {
  const Scene sc = chain({"batch.randomize_mass=0.5"});
  BatchOptions opt;
  opt.rollouts = 3;
  opt.seed = 9;
  opt.randomize_mass = 0.5;
  opt.randomize_stiffness = 0.3;
  StateBatch b(3, sc.model.n_q);
  RolloutParamTable p;
  init_batch(sc, opt, b, p);
  const int L = sc.model.n_link;
  REQUIRE(p.link_mass_scale.size() == size_t(3) * L);
  REQUIRE(p.contact.size() == 3);
  CHECK(p.link_mass_scale[0] != p.link_mass_scale[L]);  // rollouts differ
  CHECK(p.link_mass_scale[0] != p.link_mass_scale[1]);  // links differ: each its own draw
  for (double s : p.link_mass_scale) CHECK((s >= std::exp(-0.5) && s <= std::exp(0.5)));
  CHECK(p.contact[0].c_perp != p.contact[1].c_perp);
  const int k = 1;
  const VecX th = b.row(b.theta, k), thp = b.row(b.theta_prev, k);
  CpuBatchStepper st(sc, 2);
  for (int s = 0; s < 15; ++s) st.step(b, p);
  Scene lone = sc;
  lone.model = scale_mass(sc.model, p.mass_scale_row(k, L));
  CHECK(lone.model.total_mass == total_mass(sc.model, p.mass_scale_row(k, L)));
  CHECK(p.mass_ratio(sc.model, k) == Approx(lone.model.total_mass / sc.model.total_mass).epsilon(1e-14));
  const RolloutParams rp{p.contact[k]};
  CHECK((VecX(b.row(b.theta, k)) - lone_run(lone, th, thp, 15, &rp)).lpNorm<Eigen::Infinity>() <= 1e-12);
}

TEST_CASE("batch: rigid dry friction slides v0^2/(2 mu g) whatever the mass scale", "[batch]") {
  // Coulomb friction and gravity both scale with the mass, so NE-LCP's stopping distance must not
  // depend on the per-rollout mass scale (a physics check that the scale reaches the integrator).
  const Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/box_slide.yaml",
                              {"integrator.type=ne_lcp", "integrator.dt=0.002"});
  BatchOptions opt;
  opt.rollouts = 3;
  opt.perturb_theta = opt.perturb_theta_dot = 0;
  opt.randomize_mass = 1.5;
  StateBatch b(3, sc.model.n_q);
  RolloutParamTable p;
  init_batch(sc, opt, b, p);
  std::vector<double> ratio;
  for (int k = 0; k < 3; ++k) ratio.push_back(p.mass_ratio(sc.model, k));
  CHECK(*std::max_element(ratio.begin(), ratio.end()) > 1.5 * *std::min_element(ratio.begin(), ratio.end()));
  CpuBatchStepper st(sc, 2);
  const double x0 = b.theta[0], v0 = sc.theta_dot0[0], mu = sc.ne.mu;
  for (int s = 0; s < 500; ++s) st.step(b, p);
  const double expect = v0 * v0 / (2 * mu * 9.81);
  for (int k = 0; k < 3; ++k) CHECK(b.theta[size_t(k) * b.n_q] - x0 == Approx(expect).epsilon(0.02));
}

TEST_CASE("batch: the scene's PD servo drives every rollout as in the single-rollout run", "[batch][pd]") {
  // The servo's targets move with time (jump reference), so this also checks that the batch
  // passes the step's start time t = steps * dt to the integrator.
  const Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/quadruped_spider.yaml",
                              {"integrator.dt=0.005"});
  REQUIRE(sc.pd.active());
  BatchOptions opt;
  opt.rollouts = 2;
  opt.seed = 3;
  StateBatch b(2, sc.model.n_q);
  RolloutParamTable p;
  init_batch(sc, opt, b, p);
  const int k = 1, steps = 40;
  VecX th = b.row(b.theta, k), thp = b.row(b.theta_prev, k), next;
  VecX th_free = th, thp_free = thp;
  CpuBatchStepper st(sc, 2);
  for (int s = 0; s < steps; ++s) st.step(b, p);
  CHECK(b.steps == steps);
  const auto integ = make_integrator(sc);
  for (int s = 0; s < steps; ++s) {
    const StepControl u{sc.tau, &sc.pd, s * sc.settings.dt};
    integ->step_controlled(th, thp, u, next);
    thp = th;
    th = next;
    integ->step(th_free, thp_free, sc.tau, next);  // same start, no servo
    thp_free = th_free;
    th_free = next;
  }
  CHECK(VecX(b.row(b.theta, k)) == th);
  // the servo matters over 0.2 s: without it the legs fold under gravity
  CHECK((th - th_free).lpNorm<Eigen::Infinity>() > 1e-2);
}

TEST_CASE("batch: randomised limit stiffness equals a lone run on the model with scaled stops", "[batch]") {
  // two_link.xml's elbow falls under gravity onto its 10-degree stop (C = model.limit_stiffness)
  const std::string xml = "model={mjcf: " BIGSTEP_SOURCE_DIR "/tests/data/two_link.xml}";
  const Scene sc = load_scene_text("scene: lim\nintegrator: {type: pbfd, dt: 0.01}\n", "lim.yaml",
                                   {xml, "control={}", "model.limit_stiffness=2.5e3", "batch.randomize_limit_stiffness=1.5"});
  REQUIRE(sc.randomize_limit_stiffness == 1.5);
  BatchOptions opt;
  opt.rollouts = 3;
  opt.seed = 5;
  opt.perturb_theta = opt.perturb_theta_dot = 0;
  opt.randomize_limit_stiffness = sc.randomize_limit_stiffness;
  StateBatch b(3, sc.model.n_q);
  RolloutParamTable p;
  init_batch(sc, opt, b, p);
  REQUIRE(p.contact.size() == 3);
  for (const ContactParams& c : p.contact) {
    CHECK((c.limit_scale >= std::exp(-1.5) && c.limit_scale <= std::exp(1.5)));
    CHECK(c.c_perp == sc.settings.contact.c_perp);  // only the stops are drawn
    CHECK(c.c_par == sc.settings.contact.c_par);
  }
  CHECK(p.contact[0].limit_scale != p.contact[1].limit_scale);
  const int steps = 60;
  const VecX th0 = b.row(b.theta, 0), thp0 = b.row(b.theta_prev, 0);
  CpuBatchStepper st(sc, 2);
  for (int s = 0; s < steps; ++s) st.step(b, p);
  // the stops act: identical starts end apart
  CHECK((VecX(b.row(b.theta, 0)) - VecX(b.row(b.theta, 1))).lpNorm<Eigen::Infinity>() > 1e-6);
  for (int k = 0; k < 3; ++k) {
    // oracle: the scene's model with every stop's C multiplied by rollout k's factor, default parameters
    Scene lone = sc;
    for (double& c : lone.model.dof_limit_k) c *= p.contact[k].limit_scale;
    CHECK((VecX(b.row(b.theta, k)) - lone_run(lone, th0, thp0, steps)).lpNorm<Eigen::Infinity>() <= 1e-12);
  }
  // the team engine has no per-rollout stop factor: refused, not ignored
  Scene team = sc;
  team.engine = "team";
  CHECK_THROWS_AS(make_batch_engine(team, BackendChoice{Backend::Cpu, "cpu"}, b, p), InvalidArgument);
}

TEST_CASE("scale_mass keeps the pairs a model dropped dropped (a1_walk's box-box, box-capsule)", "[batch]") {
  // a1_walk allows unsupported_pairs: its box-box and box-capsule pairs (no pair function) are
  // skipped; the scaled copy must skip the same ones (it threw "no collision function" before)
  const Scene sc = load_task(std::string(BIGSTEP_SOURCE_DIR) + "/configs/tasks/a1_walk.yaml").scene;
  REQUIRE(!sc.model.skipped_pairs.empty());
  const Model s = scale_mass(sc.model, 1.3);
  CHECK(s.skipped_pairs == sc.model.skipped_pairs);
  CHECK(s.pair_geom_a == sc.model.pair_geom_a);
  CHECK(s.pair_geom_b == sc.model.pair_geom_b);
  for (int j = 0; j < s.n_link; ++j) CHECK(s.link_mass[j] == Approx(1.3 * sc.model.link_mass[j]).epsilon(1e-14));
}

TEST_CASE("batch: randomisation spreads beyond e^+-5 are refused, at the bound every factor is finite and > 0", "[batch]") {
  // BUG: randomize_mass = 1000 drew mass factors exp(U(-1000, 1000)) of 0 and inf, and ran them
  const Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/box_slide.yaml");
  const int K = 64;
  for (int which = 0; which < 4; ++which) {
    BatchOptions opt;
    opt.rollouts = K;
    double* r[] = {&opt.randomize_friction, &opt.randomize_stiffness, &opt.randomize_mass, &opt.randomize_limit_stiffness};
    StateBatch b(K, sc.model.n_q);
    RolloutParamTable p;
    *r[which] = 1000;
    CHECK_THROWS_WITH(init_batch(sc, opt, b, p), Catch::Contains("batch.randomize_") && Catch::Contains("[0, 5]"));
    *r[which] = std::nan("");
    CHECK_THROWS_AS(init_batch(sc, opt, b, p), InvalidArgument);
    *r[which] = kMaxRandomizeSpread;
    init_batch(sc, opt, b, p);
    const double lo = std::exp(-kMaxRandomizeSpread), hi = std::exp(kMaxRandomizeSpread);
    for (int k = 0; k < K; ++k) {
      const double f = which == 0 ? p.contact[k].c_par / sc.settings.contact.c_par
                       : which == 1 ? p.stiffness_scale[k]
                       : which == 2 ? p.link_mass_scale[k]
                                    : p.contact[k].limit_scale;
      CHECK((std::isfinite(f) && f >= lo && f <= hi));
    }
  }
}
