// The batch engines behind one interface (batch/batch_engines.h) take an RL policy's per-rollout,
// per-step torques: the team engine (CPU emulation of the CUDA kernel) matches the reference
// engine step for step with per-link mass scales (same iterations, states within the team
// tolerance 1e-9), non-finite
// actions flag their rollout only, and free-running scheduling refuses per-step actions.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "core/chart.h"
#include "core/error.h"
#include "batch/batch_engines.h"
#include "envs/tasks.h"
#include "solvers/pbd/pbd_context.h"
#include "solvers/registry.h"

using namespace bigstep;

namespace {

Scene chain(const std::string& engine, std::vector<std::string> extra = {}) {
  std::vector<std::string> ov{"integrator.dt=0.01", "batch.engine=" + engine,
                              "initial.theta=[0, 0, 0.05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]"};
  ov.insert(ov.end(), extra.begin(), extra.end());
  return load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/chain_floating_ground.yaml", ov);
}

// Policy stand-in: torques on the hinges that differ per rollout and change every step.
std::vector<double> actions(int K, int n, int step) {
  std::vector<double> tau(size_t(K) * n, 0.0);
  for (int k = 0; k < K; ++k)
    for (int i = 6; i < n; ++i) tau[size_t(k) * n + i] = 0.4 * std::sin(0.3 * step + 0.7 * k + i);
  return tau;
}

// K rollouts initialised from the scene (init_batch)
struct Initial {
  StateBatch b;
  RolloutParamTable p;
  Initial(const Scene& sc, int K) : b(K, sc.model.n_q) {
    BatchOptions opt;
    opt.rollouts = K;
    init_batch(sc, opt, b, p);
  }
};

struct Run {
  StateBatch b;
  std::vector<int> iterations;  // (steps x K)
};

Run run(const Scene& sc, int K, int steps, int nan_rollout = -1, int nan_step = -1) {
  BatchOptions opt;
  opt.rollouts = K;
  opt.seed = 3;
  opt.randomize_mass = 0.3;
  Run r{StateBatch(K, sc.model.n_q), {}};
  RolloutParamTable p;
  init_batch(sc, opt, r.b, p);
  // per-link mass scales (K x n_link), a different factor on each link: the team engine applies
  // them per link in its residual and weight, the reference in every core mass read
  REQUIRE(p.link_mass_scale.size() == size_t(K) * sc.model.n_link);
  REQUIRE(p.link_mass_scale[0] != p.link_mass_scale[1]);
  const auto engine = make_batch_engine(sc, BackendChoice{}, r.b, p);
  for (int s = 0; s < steps; ++s) {
    std::vector<double> tau = actions(K, sc.model.n_q, s);
    if (s == nan_step) tau[size_t(nan_rollout) * sc.model.n_q + 7] = std::nan("");
    engine->step(r.b, p, tau.data());
    r.iterations.insert(r.iterations.end(), r.b.iterations.begin(), r.b.iterations.end());
  }
  return r;
}

}  // namespace

TEST_CASE("batch engines: team engine with per-step, per-rollout torques matches the reference", "[batch][team]") {
  const int K = 3, steps = 25;
  // integrator.order 2: theta_{n-2} is carried from one engine call to the next (the reference's
  // Data::history, the team trajectories' own), from the fresh first step on
  for (const std::string order : {"1", "2"}) {
    INFO("integrator.order " << order);
    const Run ref = run(chain("reference", {"integrator.order=" + order}), K, steps),
              team = run(chain("team", {"integrator.order=" + order}), K, steps);
    CHECK(team.iterations == ref.iterations);
    for (size_t i = 0; i < ref.b.theta.size(); ++i) CHECK(std::abs(team.b.theta[i] - ref.b.theta[i]) <= 1e-9);
  }
  const Run team = run(chain("team"), K, steps);
  // the actions matter: without them rollout 0 ends elsewhere
  const Scene sc = chain("team");
  BatchOptions opt;
  opt.rollouts = K;
  opt.seed = 3;
  opt.randomize_mass = 0.3;
  StateBatch b(K, sc.model.n_q);
  RolloutParamTable p;
  init_batch(sc, opt, b, p);
  const auto engine = make_batch_engine(sc, BackendChoice{}, b, p);
  for (int s = 0; s < steps; ++s) engine->step(b, p);
  double diff = 0;
  for (size_t i = 0; i < b.theta.size(); ++i) diff = std::max(diff, std::abs(b.theta[i] - team.b.theta[i]));
  CHECK(diff > 1e-3);
}

namespace {

// configs/tasks/a1_walk.yaml's scene on engine: the A1 (box trunk, thighs, calves; sphere feet),
// whose feet against the other links' boxes are sphere-box body pairs
Scene a1(const std::string& engine) {
  return load_task(std::string(BIGSTEP_SOURCE_DIR) + "/configs/tasks/a1_walk.yaml", {"batch.engine=" + engine}).scene;
}

// K rollouts of sc from theta0 (+- the task's perturbation), `steps` steps of seeded random leg
// torques up to tau_max (the policy stand-in of an RL task); the iterations (steps x K)
Run run_random(const Scene& sc, int K, int steps, double tau_max) {
  BatchOptions opt;
  opt.rollouts = K;
  opt.seed = 4;
  Run r{StateBatch(K, sc.model.n_q), {}};
  RolloutParamTable p;
  init_batch(sc, opt, r.b, p);
  const auto engine = make_batch_engine(sc, BackendChoice{}, r.b, p);
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> U(-tau_max, tau_max);
  const int n = sc.model.n_q;
  for (int s = 0; s < steps; ++s) {
    std::vector<double> tau(size_t(K) * n, 0.0);
    for (int k = 0; k < K; ++k)
      for (int i = 6; i < n; ++i) tau[size_t(k) * n + i] = U(rng);
    engine->step(r.b, p, tau.data());
    r.iterations.insert(r.iterations.end(), r.b.iterations.begin(), r.b.iterations.end());
  }
  return r;
}

// The sphere-box contacts between two links in penetration at theta q (the reference's collide())
int a1_box_contacts(const Model& m, const VecX& q, PbdWorkspace& ws, double depth_min, double depth_max) {
  forward_kinematics(m, q, ws.kin);
  update_contacts(m, q, ws);
  int n = 0;
  for (int c = 0; c < ws.cs.n_con; ++c) {
    const Contact& con = ws.cs.con[size_t(c)];
    const bool box = m.geom_type[con.geom_a] == GeomType::Box || m.geom_type[con.geom_b] == GeomType::Box;
    n += box && con.link_a >= 0 && con.link_b >= 0 && con.depth > depth_min && con.depth < depth_max;
  }
  return n;
}

}  // namespace

TEST_CASE("batch engines: a1_walk (sphere-box pairs between its links) on the team engine matches the reference",
          "[batch][team][body][box]") {
  // the task's scene at its dt (20 ms, stable-PD hold): its body pairs are feet (spheres) against
  // the trunk, thighs and calves (boxes), now in the team residual (core/box_closest.h). From the
  // task's standing start with random torques (|tau| <= 20 N m), and from a seeded pose with a foot
  // a few mm into another leg's box; same iterations, states within the team tolerance 1e-9
  Scene ref_sc = a1("reference"), team_sc = a1("team");
  REQUIRE(team_unsupported(team_sc.model).empty());
  int sphere_box = 0;
  for (int i = 0; i < team_sc.model.n_body_pair; ++i) {
    const int q = team_sc.model.body_pair_pair[i];
    const GeomType a = team_sc.model.geom_type[team_sc.model.pair_geom_a[q]], b = team_sc.model.geom_type[team_sc.model.pair_geom_b[q]];
    sphere_box += (a == GeomType::Box) != (b == GeomType::Box);
  }
  REQUIRE(sphere_box > 0);
  {
    const Run ref = run_random(ref_sc, 2, 10, 20), team = run_random(team_sc, 2, 10, 20);
    CHECK(team.iterations == ref.iterations);
    for (size_t i = 0; i < ref.b.theta.size(); ++i) CHECK(std::abs(team.b.theta[i] - ref.b.theta[i]) <= 1e-9);
  }
  std::mt19937 rng(2);
  std::uniform_real_distribution<double> U(0, 1);
  PbdWorkspace ws(ref_sc.model);
  VecX q = ref_sc.theta0;
  bool found = false;
  for (int tries = 0; tries < 20000 && !found; ++tries) {
    q = ref_sc.theta0;
    q[2] = 0.6;  // base up: the legs free
    for (int i = 6; i < q.size(); ++i) {
      const double lo = ref_sc.model.dof_range[2 * i], hi = ref_sc.model.dof_range[2 * i + 1];
      q[i] = lo + (hi - lo) * U(rng);
    }
    found = a1_box_contacts(ref_sc.model, q, ws, 0.0005, 0.004) > 0;
  }
  REQUIRE(found);
  ref_sc.theta0 = team_sc.theta0 = q;
  const Run ref = run_random(ref_sc, 2, 6, 5), team = run_random(team_sc, 2, 6, 5);
  CHECK(team.iterations == ref.iterations);
  for (size_t i = 0; i < ref.b.theta.size(); ++i) CHECK(std::abs(team.b.theta[i] - ref.b.theta[i]) <= 1e-9);
  for (int k = 0; k < 2; ++k) CHECK((ref.b.status[k] & STATUS_NOT_CONVERGED) == 0);
}

TEST_CASE("batch engines: a1_walk at integrator.order 2 on the team engine matches the reference",
          "[batch][team][body][order2]") {
  // the feet (body pairs with the legs' boxes, the ground) and the joint stops enter the team
  // form's contact-event count (lm_commit_order2) as the reference's (pbd_active_contacts,
  // docs/methods/pbfd.md §3.1 "Contact events"); from the standing start with random torques
  Scene ref_sc = a1("reference"), team_sc = a1("team");
  ref_sc.settings.order = team_sc.settings.order = 2;
  const Run ref = run_random(ref_sc, 2, 10, 20), team = run_random(team_sc, 2, 10, 20);
  CHECK(team.iterations == ref.iterations);
  for (size_t i = 0; i < ref.b.theta.size(); ++i) CHECK(std::abs(team.b.theta[i] - ref.b.theta[i]) <= 1e-9);
}

TEST_CASE("batch engines: the hopper (capsule pairs between its links) on the team engine matches the reference",
          "[batch][team][body]") {
  // gymnasium's hopper at the task's dt (20 ms), started with the knee folded so that a body pair
  // (foot or leg against thigh or torso) is in contact: the team engine finds those contacts in its
  // residual (Model::body_pair_*), the reference through collide(); same iterations, states within
  // the team tolerance 1e-9 (a seeded search picks the start: the first with such a contact)
  auto hopper = [](const std::string& engine) {
    return load_scene("gymnasium:hopper.xml", {"integrator.type=pbfd", "integrator.dt=0.02", "contact.c_par=2e5",
                                               "batch.engine=" + engine});
  };
  Scene ref_sc = hopper("reference"), team_sc = hopper("team");
  REQUIRE(ref_sc.model.n_body_pair == 3);
  std::mt19937 rng(2);
  std::uniform_real_distribution<double> U(0, 1);
  PbdWorkspace ws(ref_sc.model);
  VecX q(6);
  bool found = false;
  for (int tries = 0; tries < 5000 && !found; ++tries) {
    q << 0, 0.1 + 0.1 * U(rng), -0.3 + 0.6 * U(rng), -2.6 * U(rng), -2.6 * U(rng), -0.8 + 1.6 * U(rng);
    forward_kinematics(ref_sc.model, q, ws.kin);
    update_contacts(ref_sc.model, q, ws);
    for (int c = 0; c < ws.cs.n_con; ++c) {
      const Contact& con = ws.cs.con[size_t(c)];
      found = found || (con.link_b >= 0 && con.depth > 0.0005 && con.depth < 0.004);
    }
  }
  REQUIRE(found);
  ref_sc.theta0 = team_sc.theta0 = q;
  const int K = 3, steps = 10;
  const Run ref = run(ref_sc, K, steps), team = run(team_sc, K, steps);
  CHECK(team.iterations == ref.iterations);
  for (size_t i = 0; i < ref.b.theta.size(); ++i) CHECK(std::abs(team.b.theta[i] - ref.b.theta[i]) <= 1e-9);
  for (int k = 0; k < K; ++k) CHECK((ref.b.status[k] & STATUS_NOT_CONVERGED) == 0);
}

TEST_CASE("batch engines: a non-finite action flags its rollout only", "[batch][team]") {
  const int K = 3, steps = 12, n = chain("team").model.n_q;
  for (const char* engine : {"team", "reference"}) {
    INFO(engine);
    const Run clean = run(chain(engine), K, steps), bad = run(chain(engine), K, steps, 1, 4);
    CHECK((bad.b.status[1] & STATUS_NONFINITE) != 0);
    for (int k : {0, 2}) {
      CHECK(bad.b.status[k] == clean.b.status[k]);
      for (int i = 0; i < n; ++i) CHECK(bad.b.theta[size_t(k) * n + i] == clean.b.theta[size_t(k) * n + i]);
    }
    for (int i = 0; i < n; ++i) CHECK(std::isfinite(bad.b.theta[size_t(n) + i]));  // held, not poisoned
  }
}

TEST_CASE("batch engines: free-running scheduling refuses per-step actions, naming the key", "[batch][team]") {
  const Scene sc = chain("team", {"batch.schedule=rollout"});
  Initial init(sc, 2);
  StateBatch& b = init.b;
  RolloutParamTable& p = init.p;
  const auto engine = make_batch_engine(sc, BackendChoice{}, b, p);
  const std::vector<double> tau = actions(2, sc.model.n_q, 0);
  CHECK_THROWS_WITH(engine->step(b, p, tau.data()), Catch::Contains("batch.schedule") && Catch::Contains("lockstep"));
}

TEST_CASE("batch engines: lockstep team engines have no horizon; free-running ones stop at the duration", "[batch][team]") {
  // Lockstep keeps one output slot (memory K x n_q, not K x steps x n_q) and steps past
  // integrator.duration as the reference does; the free-running engine says its steps are used up.
  const Scene ref_sc = chain("reference", {"integrator.duration=0.05"}), sc = chain("team", {"integrator.duration=0.05"});
  REQUIRE(sc.steps() == 5);
  BatchOptions opt;
  opt.rollouts = 2;
  StateBatch a(2, sc.model.n_q), b(2, sc.model.n_q);
  RolloutParamTable p;
  init_batch(sc, opt, a, p);
  init_batch(sc, opt, b, p);
  const auto ref = make_batch_engine(ref_sc, BackendChoice{}, a, p), team = make_batch_engine(sc, BackendChoice{}, b, p);
  for (int s = 0; s < 12; ++s) {
    ref->step(a, p);
    team->step(b, p);
  }
  CHECK(b.steps == 12);
  CHECK(team->name() == "cpu_team_emulation");
  for (size_t i = 0; i < a.theta.size(); ++i) CHECK(std::abs(a.theta[i] - b.theta[i]) <= 1e-9);
  const Scene free_sc = chain("team", {"integrator.duration=0.05", "batch.schedule=rollout"});
  StateBatch c(2, sc.model.n_q);
  init_batch(free_sc, opt, c, p);
  const auto free_engine = make_batch_engine(free_sc, BackendChoice{}, c, p);
  for (int s = 0; s < 5; ++s) free_engine->step(c, p);
  CHECK(c.theta != b.theta);  // c is at step 5, b at step 12
  CHECK_THROWS_WITH(free_engine->step(c, p), Catch::Contains("integrator.duration"));
}

TEST_CASE("batch engines: resetting some rollouts mid-run matches the reference and revives failed ones", "[batch][team]") {
  // RL auto-reset: rollouts whose episode ended (or that failed) restart from fresh seeded states
  // (stream (seed, k, episode)) while the others go on; team and reference engines agree.
  // integrator.order 2: a reset rollout's next step is a fresh start (no theta_{n-2}) on both engines
  const int K = 3, n = chain("team").model.n_q;
  BatchOptions opt;
  opt.rollouts = K;
  opt.seed = 6;
  for (const std::string order : {"1", "2"}) {
    INFO("integrator.order " << order);
    auto run_with_resets = [&](const std::string& engine) {
      const Scene sc = chain(engine, {"integrator.order=" + order});
      StateBatch b(K, n);
      RolloutParamTable p;
      init_batch(sc, opt, b, p);
      const auto e = make_batch_engine(sc, BackendChoice{}, b, p);
      for (int s = 0; s < 18; ++s) {
        std::vector<double> tau = actions(K, n, s);
        if (s == 4) tau[size_t(2) * n + 8] = std::nan("");  // rollout 2 fails ...
        e->step(b, p, tau.data());
        if (s == 4) CHECK((b.status[2] & STATUS_NONFINITE) != 0);
        if (s == 8) {  // ... and is reset together with rollout 0
          reset_rollouts(sc, opt, b, {0, 2});
          e->reset(b, {0, 2});
        }
      }
      return b;
    };
    const StateBatch ref = run_with_resets("reference"), team = run_with_resets("team");
    CHECK(team.episode == std::vector<uint32_t>{1, 0, 1});
    CHECK(team.status == ref.status);
    CHECK(team.status[2] == 0);  // revived
    CHECK(team.iterations == ref.iterations);
    for (size_t i = 0; i < ref.theta.size(); ++i) CHECK(std::abs(team.theta[i] - ref.theta[i]) <= 1e-9);
  }
  // episode 1 starts elsewhere than episode 0
  StateBatch fresh(K, n);
  RolloutParamTable p;
  init_batch(chain("team"), opt, fresh, p);
  const VecX e0 = fresh.row(fresh.theta, 0);
  reset_rollouts(chain("team"), opt, fresh, {0});
  CHECK((VecX(fresh.row(fresh.theta, 0)) - e0).norm() > 1e-4);
  CHECK_THROWS_WITH(reset_rollouts(chain("team"), opt, fresh, {3}), Catch::Contains("rollout index = 3"));
}

TEST_CASE("batch engines: the team engine takes joint terms, plane geoms, sphere / capsule and sphere-box pairs, refuses other box pairs, naming them", "[batch][team]") {
  // joint damping, armature, springs and limits are in the team form (pbd_residual_team.h
  // pbfd_dof_terms), and so are sphere / capsule pairs between links (body pairs) and a box
  // against a link's sphere (body_pair_box_cores); a box against a capsule or a box is not
  // (solvers/registry.h team_unsupported)
  for (const char* set : {"model.links[1].damping=0.1", "model.links[2].armature=0.01", "model.links[4].stiffness=2",
                          "model.links[3].range=[-0.5, 0.5]"}) {  // a range enables the limit
    INFO(set);
    const Scene sc = chain("team", {set});
    CHECK(team_unsupported(sc.model).empty());
    const Initial init(sc, 2);
    CHECK_NOTHROW(make_batch_engine(sc, BackendChoice{}, init.b, init.p));
  }
  // geoms against the world plane are point cores (Model::point_pair_*); a sphere between two links
  // (the sphere on l1 touches the contact points of l3..) is a body pair (Model::body_pair_*), and
  // so is a box there
  const Scene plane_only = chain("team", {"model.geoms=[{type: sphere, link: l1, size: [0.03], contype: 0}]"});
  CHECK(team_unsupported(plane_only.model).empty());
  {
    const Initial init(plane_only, 2);
    CHECK_NOTHROW(make_batch_engine(plane_only, BackendChoice{}, init.b, init.p));
  }
  const Scene spheres = chain("team", {"model.geoms=[{type: sphere, link: l1, size: [0.03]}]"});
  REQUIRE(spheres.model.n_body_pair > 0);
  CHECK(team_unsupported(spheres.model).empty());
  {
    const Initial init(spheres, 2);
    CHECK_NOTHROW(make_batch_engine(spheres, BackendChoice{}, init.b, init.p));
  }
  Scene sc = chain("team", {"model.geoms=[{name: brick, type: box, link: l1, size: [0.03, 0.02, 0.01]}]"});
  REQUIRE(sc.model.n_body_pair > 0);
  CHECK(team_unsupported(sc.model).empty());
  const Initial init(sc, 2);
  CHECK_NOTHROW(make_batch_engine(sc, BackendChoice{}, init.b, init.p));
  // collide() has no box-capsule or box-box function, so no loaded model has such a body pair (the
  // import refuses or drops it): the brick's partner made a capsule by hand stands in for one, and
  // the team engine names it
  const int q = sc.model.body_pair_pair[0];
  const int partner = sc.model.geom_type[sc.model.pair_geom_a[q]] == GeomType::Box ? sc.model.pair_geom_b[q] : sc.model.pair_geom_a[q];
  sc.model.geom_type[partner] = GeomType::Capsule;
  REQUIRE(!team_unsupported(sc.model).empty());
  CHECK_THROWS_WITH(make_batch_engine(sc, BackendChoice{}, init.b, init.p),
                    Catch::Contains("batch.engine=team") && Catch::Contains("model.geoms") && Catch::Contains("brick") &&
                        Catch::Contains("box") && Catch::Contains("capsule"));
  // the unchanged scene is accepted
  CHECK(team_unsupported(chain("team").model).empty());
  // the second-order step too (docs/methods/pbfd.md §3.1)
  {
    const Scene o2 = chain("team", {"integrator.order=2"});
    const Initial i2(o2, 2);
    CHECK(make_batch_engine(o2, BackendChoice{}, i2.b, i2.p)->name() == "cpu_team_emulation");
    const Scene dmp = chain("team", {"contact.damping=2"});
    const Initial i3(dmp, 2);
    CHECK_THROWS_WITH(make_batch_engine(dmp, BackendChoice{}, i3.b, i3.p),
                      Catch::Contains("contact.damping") && Catch::Contains("batch.engine=reference"));
  }
}

namespace {

// a point force on the chain's third link, turning about its z axis (control/point_load.h)
const char* const kLoad = "control.load={link: l2, force: [0, 0, 3], point: [0.1, 0, 0], spin: 2}";

}  // namespace

TEST_CASE("batch engines: control.load steps the same on the team engine as on the reference", "[batch][team]") {
  // the load's torques depend on each rollout's theta_n: the team engine's host side sets them per
  // rollout before the launch, as the reference does before its integrator step (batch/step_stages.h)
  const int K = 3, steps = 25;
  const Run ref = run(chain("reference", {kLoad}), K, steps), team = run(chain("team", {kLoad}), K, steps);
  CHECK(team.iterations == ref.iterations);
  for (size_t i = 0; i < ref.b.theta.size(); ++i) CHECK(std::abs(team.b.theta[i] - ref.b.theta[i]) <= 1e-9);
  // the load matters: without it the rollouts end elsewhere
  const Run idle = run(chain("team"), K, steps);
  double diff = 0;
  for (size_t i = 0; i < idle.b.theta.size(); ++i) diff = std::max(diff, std::abs(idle.b.theta[i] - team.b.theta[i]));
  CHECK(diff > 1e-3);
}

TEST_CASE("batch engines: the team engine refuses control.load when free-running", "[batch][team]") {
  const Scene sc = chain("team", {kLoad, "batch.schedule=rollout"});
  const Initial in(sc, 2);
  CHECK_THROWS_WITH(make_batch_engine(sc, BackendChoice{}, in.b, in.p),
                    Catch::Contains("batch.schedule") && Catch::Contains("control.load"));
}

TEST_CASE("batch engines: every engine flags penetration in its step's output check", "[batch][team]") {
  // without a contact stiffness the chain falls through the floor: the first step whose state is
  // more than 5 cm through it carries STATUS_PENETRATED, on the reference and the team engine alike
  std::vector<int> first;
  for (const char* engine : {"reference", "team"}) {
    INFO(engine);
    const Scene sc = chain(engine, {"contact.c_perp=0"});
    Initial in(sc, 2);
    const auto eng = make_batch_engine(sc, BackendChoice{}, in.b, in.p);
    eng->check_penetration(true);
    int at = 0;
    for (int s = 0; s < 60 && !at; ++s) {
      eng->step(in.b, in.p);
      if (in.b.status[0] & STATUS_PENETRATED) at = s + 1;
    }
    CHECK(at > 1);
    first.push_back(at);
  }
  CHECK(first[0] == first[1]);
}

TEST_CASE("batch engines: the team engine refuses an inverse-dynamics controller by name", "[batch][team]") {
  // the ID controller solves per rollout on the CPU: refused, never skipped
  const Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/id_arm_grasp.yaml",
                              {"integrator.type=pbfd", "batch.engine=team"});
  const Initial in(sc, 2);
  CHECK_THROWS_WITH(make_batch_engine(sc, BackendChoice{}, in.b, in.p),
                    Catch::Contains("controller.type = id_qp_mu") && Catch::Contains("batch.engine=reference"));
}

TEST_CASE("batch engines: the team form flags a free joint near its Euler singularity instead of stepping it",
          "[batch][team][chart]") {
  // the team form has no rotation charts yet (the reference re-anchors, core/chart.h): a base
  // within 10 degrees of ry = 90 is held with STATUS_GIMBAL_LOCK; the other rollout steps on
  const Scene sc = chain("team");
  Initial init(sc, 2);
  StateBatch& b = init.b;
  RolloutParamTable& p = init.p;
  const int n = sc.model.n_q, pitch = sc.model.chart_dof[0] + 1;
  b.theta[pitch] = b.theta_prev[pitch] = 1.5;  // rollout 0 at 86 degrees, the other at 0
  const auto engine = make_batch_engine(sc, BackendChoice{}, b, p);
  int flagged_at = -1;
  std::vector<double> held;
  for (int s = 0; s < 8; ++s) {
    engine->step(b, p);
    CHECK((b.status[1] & STATUS_GIMBAL_LOCK) == 0);
    if (flagged_at < 0 && (b.status[0] & STATUS_GIMBAL_LOCK)) {
      flagged_at = s;
      held.assign(b.theta.begin(), b.theta.begin() + n);
      CHECK(std::abs(std::cos(held[size_t(pitch)])) < kChartTrialCos);
    } else if (flagged_at >= 0) {
      CHECK(std::vector<double>(b.theta.begin(), b.theta.begin() + n) == held);  // held from then on
    }
  }
  CHECK(flagged_at >= 0);
}
