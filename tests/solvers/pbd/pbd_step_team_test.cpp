// The team-form LM iteration (one iteration per "launch", CPU emulation with shuffled lanes)
// reproduces the Eigen reference step driver: same iteration counts per step and the same
// trajectory to round-off (1e-9 after 40 steps), for K >= 3 rollouts that differ; free-running and
// lockstep scheduling give identical results; a poisoned rollout fails alone.
#include <catch2/catch.hpp>

#include "core/collision.h"
#include "solvers/registry.h"

#include <cmath>
#include <random>

#include "batch/batch.h"
#include "io/scene.h"
#include "solvers/pbd/pbd_batch_team.h"
#include "tests/support/team_case.h"

using namespace bigstep;

namespace {

using Case = test::TeamCase;
Case make_case(const std::string& cfg, int K, std::vector<std::string> ov = {}) {
  return test::make_team_case(cfg, K, ov, 21);
}

// Optional per-rollout mass scales and controls (constant torques, a stable-PD servo).
struct Controls {
  std::vector<double> mass_scale;  // (K x n_link) link mass scales, row-major, or empty
  VecX tau;                        // (n_q) or empty
  const PdServo* pd = nullptr;     // needs lockstep: the targets are set between steps
  std::vector<double> mu;          // (K) per-rollout Coulomb mu (contact.friction = coulomb), or empty
};

// thread_lanes > 0: the team phases run on that many OS threads per trajectory at once
// (ThreadTeam, solvers/team/team_thread.h). Returns the number of committed steps that restarted.
int compare_with_reference(const Case& c, int n_steps, bool lockstep, DenseAlgebra algebra = DenseAlgebra::Fused,
                           const Controls& u = {}, int thread_lanes = 0) {
  const int K = int(c.th0.size());
  const double dt = c.sc.settings.dt;
  REQUIRE((u.pd == nullptr || lockstep));
  PbfdTeamBatch<double> batch(c.sc.model, c.sc.settings, K, n_steps, lockstep, 2, algebra);
  batch.use_thread_team(thread_lanes);
  int restarted = 0;
  // the controls of step n for every rollout: torques and the servo's targets at t_{n+1}
  auto set_controls = [&](int n) {
    VecX tb, tdb;
    if (u.pd) {
      tb.resize(c.sc.model.n_q);
      tdb.resize(c.sc.model.n_q);
      u.pd->reference(n * dt + dt, tb, tdb);
    }
    for (int k = 0; k < K; ++k) batch.set_controls(k, u.tau, tb, tdb);
  };
  for (int k = 0; k < K; ++k) {
    batch.init(k, c.th0[k], c.thm1[k]);
    ContactParams cp = c.sc.settings.contact;
    if (!u.mu.empty()) cp.mu = u.mu[size_t(k)];
    if (!u.mass_scale.empty() || !u.mu.empty())
      batch.set_params(k, cp, u.mass_scale.empty() ? nullptr : u.mass_scale.data() + size_t(k) * c.sc.model.n_link);
  }
  if (u.pd) batch.set_gains(u.pd->kp, u.pd->kd);
  set_controls(0);
  int launches = 0, step = 0;
  for (;;) {
    const int running = batch.launch();
    ++launches;
    if (running == 0) {
      bool waiting = false;
      for (int k = 0; k < K; ++k) waiting |= batch.status(k) == TRAJ_WAITING;
      if (!waiting) break;
      set_controls(++step);
      batch.release_waiting();
    }
    REQUIRE(launches < 100000);
  }
  for (int k = 0; k < K; ++k) {
    REQUIRE(batch.status(k) == TRAJ_DONE);
    const Model m = u.mass_scale.empty() ? c.sc.model
                                         : scale_mass(c.sc.model, u.mass_scale.data() + size_t(k) * c.sc.model.n_link);
    // the team form keeps the restart-only driver: the reference without the friction continuation
    // (solvers/pbd/pbd_step.cpp), which only differs on steps where both attempts fail
    PbdSettings rs = c.sc.settings;
    rs.friction_continuation = 0;
    if (!u.mu.empty()) rs.contact.mu = u.mu[size_t(k)];
    PbdIntegrator ref(m, rs);
    VecX th = c.th0[k], thp = c.thm1[k], next;
    for (int n = 0; n < n_steps; ++n) {
      const StepControl ctl{u.tau.size() ? u.tau : c.sc.tau, u.pd, n * dt};
      const StepStats st = ref.step_controlled(th, thp, ctl, next);
      thp = th;
      th = next;
      INFO("rollout " << k << " step " << n);
      CHECK(batch.iterations(k, n) == st.iterations);
      CHECK((batch.theta(k, n) - th).lpNorm<Eigen::Infinity>() <= 1e-9);
      CHECK(((batch.step_status(k, n) & STATUS_NOT_CONVERGED) != 0) == ((st.status & STATUS_NOT_CONVERGED) != 0));
      restarted += (batch.step_status(k, n) & STATUS_RESTARTED) != 0;
    }
  }
  return restarted;
}

// Per-link scales (K x n_link): rollout k's factor base[k] varied per link (0.8, 0.95, 1.1, 1.25).
std::vector<double> per_link(const Model& m, const std::vector<double>& base) {
  std::vector<double> s;
  for (double b : base)
    for (int j = 0; j < m.n_link; ++j) s.push_back(b * (0.8 + 0.15 * (j % 4)));
  return s;
}

}  // namespace

TEST_CASE("lm team: matches the reference on the fixed chain (no contact)", "[team][lm]") {
  compare_with_reference(make_case("chain_fixed.yaml", 3), 40, false);
}

TEST_CASE("lm team: matches the reference on the floating chain landing (contact, friction)", "[team][lm]") {
  compare_with_reference(make_case("chain_floating_ground.yaml", 3, {"initial.theta=[0, 0, 0.05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]"}), 30, false);
}

TEST_CASE("lm team: the Coulomb law with per-rollout mu matches the reference", "[team][lm][coulomb]") {
  // contact.friction = coulomb (docs/methods/pbfd.md §4.9): the sliding box from 3 m/s and the landing chain,
  // each rollout its own mu (the team's per-trajectory parameter, as batch.randomize_friction draws it)
  const std::vector<std::string> coulomb{"contact.friction=coulomb", "contact.stiction_velocity=0.01"};
  std::vector<std::string> box = coulomb;
  box.push_back("initial.theta_dot=[3, 0, 0]");
  Controls u;
  u.mu = {0.3, 0.6, 1.1};
  compare_with_reference(make_case("box_slide.yaml", 3, box), 30, false, DenseAlgebra::Fused, u);
  std::vector<std::string> chain = coulomb;
  chain.push_back("initial.theta=[0, 0, 0.05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]");
  compare_with_reference(make_case("chain_floating_ground.yaml", 3, chain), 30, false, DenseAlgebra::Fused, u);
  compare_with_reference(make_case("chain_floating_ground.yaml", 3, chain), 30, true, DenseAlgebra::Library);
}

TEST_CASE("lm team: lockstep scheduling gives the same results as free-running", "[team][lm]") {
  compare_with_reference(make_case("box_slide.yaml", 4), 30, true);
}

TEST_CASE("lm team: a non-finite rollout fails alone", "[team][lm]") {
  Case c = make_case("chain_fixed.yaml", 3);
  c.th0[1][3] = std::nan("");
  PbfdTeamBatch<double> batch(c.sc.model, c.sc.settings, 3, 5, false, 1);
  for (int k = 0; k < 3; ++k) batch.init(k, c.th0[k], c.thm1[k]);
  while (batch.launch() > 0) {
  }
  CHECK(batch.status(1) == TRAJ_FAILED);
  CHECK(batch.status(0) == TRAJ_DONE);
  CHECK(batch.status(2) == TRAJ_DONE);
}

TEST_CASE("lm team: several iterations per launch equal that many single launches", "[team][lm]") {
  // Fusing n iterations into one launch (to amortise GPU launch overhead) must not change a bit:
  // a trajectory that commits inside the launch moves on exactly as it would between launches.
  const Case c = make_case("chain_floating_ground.yaml", 3, {"initial.theta=[0, 0, 0.05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]"});
  const int K = int(c.th0.size()), n_steps = 12;
  PbfdTeamBatch<double> one(c.sc.model, c.sc.settings, K, n_steps, false, 2);
  PbfdTeamBatch<double> four(c.sc.model, c.sc.settings, K, n_steps, false, 2);
  for (int k = 0; k < K; ++k) {
    one.init(k, c.th0[k], c.thm1[k]);
    four.init(k, c.th0[k], c.thm1[k]);
  }
  int l1 = 0, l4 = 0;
  while (one.launch() > 0) ++l1;
  while (four.launch(4) > 0) ++l4;
  CHECK(l4 < l1);
  for (int k = 0; k < K; ++k) {
    REQUIRE(four.status(k) == TRAJ_DONE);
    for (int n = 0; n < n_steps; ++n) {
      CHECK(four.iterations(k, n) == one.iterations(k, n));
      CHECK(four.theta(k, n) == one.theta(k, n));
    }
  }
}

TEST_CASE("lm team: the library path (batched J^T J, Cholesky, solve between phases) matches the reference",
          "[team][lm]") {
  // Same decisions as the fused kernel; only the dense algebra's rounding differs (Eigen's
  // blocked products / LLT here, cuBLAS / cuSOLVER on the GPU), well inside the 1e-9 tolerance.
  compare_with_reference(make_case("chain_fixed.yaml", 3), 30, false, DenseAlgebra::Library);
  compare_with_reference(make_case("chain_floating_ground.yaml", 3, {"initial.theta=[0, 0, 0.05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]"}), 30, false,
                         DenseAlgebra::Library);
  compare_with_reference(make_case("box_slide.yaml", 4), 20, true, DenseAlgebra::Library);
}

TEST_CASE("lm team: per-rollout mass scales and joint torques match the reference on scaled models", "[team][lm]") {
  // The team form keeps one model and scales inertia + gravity per rollout (and the convergence
  // scale max(1, W)); the reference steps a scaled copy of the model (batch/batch.h scale_mass).
  const Case c = make_case("chain_floating_ground.yaml", 3, {"initial.theta=[0, 0, 0.05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]"});
  Controls u;
  u.mass_scale = per_link(c.sc.model, {0.45, 1.0, 2.6});
  u.tau = VecX::Zero(c.sc.model.n_q);
  for (int i = 6; i < c.sc.model.n_q; ++i) u.tau[i] = 0.3 * ((i % 3) - 1);  // joint torques, free base
  compare_with_reference(c, 25, false, DenseAlgebra::Fused, u);
  compare_with_reference(c, 10, true, DenseAlgebra::Library, u);
}

TEST_CASE("lm team: the stable-PD servo (targets set between lockstep steps) matches the reference", "[team][lm][pd]") {
  // The spider quadruped (D = 18) under its jump reference at dt = 20 ms, PBFD JTJ-LM: the
  // servo's -tau_pd and diag(K_p + K_d/dt) enter the team residual, targets at t_{n+1}.
  const Case c = make_case("quadruped_spider.yaml", 3, {"integrator.type=pbfd", "integrator.optimizer=jtj_lm",
                                                        "integrator.dt=0.02"});
  REQUIRE(c.sc.pd.active());
  Controls u;
  u.pd = &c.sc.pd;
  u.mass_scale = per_link(c.sc.model, {1.0, 0.8, 1.25});
  compare_with_reference(c, 20, true, DenseAlgebra::Fused, u);
}

TEST_CASE("lm team: box, capsule and sphere geoms on the ground match the reference", "[team][lm][geom]") {
  // explicit geoms against the terrain plane (point cores in the team form, collide() in the
  // reference), besides the chain's contact points: iteration counts and trajectories as the
  // reference, both algebras, with per-rollout mass scales
  const Case c = make_case("chain_floating_ground.yaml", 3,
                           {"initial.theta=[0, 0, 0.04, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]",
                            "model.geoms=[{link: l2, type: box, pos: [0.1, 0, -0.01], rpy: [0.2, 0, 0.3], "
                            "size: [0.08, 0.03, 0.03], contype: 0}, {link: l4, type: capsule, pos: [0.1, 0, -0.02], "
                            "rpy: [0, 1.5708, 0], size: [0.03, 0.07], contype: 0}, {link: l8, type: sphere, "
                            "pos: [0.2, 0, 0], size: [0.045], contype: 0}]"});
  REQUIRE(c.sc.model.n_point_pair == c.sc.model.n_pair - 3 + 8 + 2 + 1);  // 3 geom pairs -> 11 point rows
  REQUIRE(team_unsupported(c.sc.model).empty());
  {  // the geoms do touch the ground along the reference trajectory
    const Model& m = c.sc.model;
    PbdIntegrator ref(m, c.sc.settings);
    Kinematics kin(m);
    std::vector<Contact> con(m.max_contacts);
    VecX th = c.th0[0], thp = c.thm1[0], next;
    int geom_contacts = 0;
    for (int n = 0; n < 25; ++n) {
      ref.step_controlled(th, thp, StepControl{c.sc.tau, nullptr, 0.0}, next);
      thp = th;
      th = next;
      forward_kinematics(m, th, kin);
      uint32_t status = 0;
      const int nc = collide(m, kin, 0.0, con.data(), int(con.size()), status);
      for (int i = 0; i < nc; ++i) geom_contacts += con[i].geom_a < m.sphere_geom_adr && con[i].depth > 0;
    }
    REQUIRE(geom_contacts > 0);
  }
  compare_with_reference(c, 25, false);
  compare_with_reference(c, 12, true, DenseAlgebra::Library);
  Controls u;
  u.mass_scale = per_link(c.sc.model, {0.6, 1.0, 1.9});
  compare_with_reference(c, 12, false, DenseAlgebra::Fused, u);
}

TEST_CASE("lm team: armature, damping, springs and joint limits match the reference", "[team][lm][dof]") {
  // The floating chain landing with the per-DOF terms on its hinges (some limits start beyond a
  // stop, one takes c_perp; two springs, one on a limited hinge): iteration counts and
  // trajectories as the reference, both algebras,
  // with per-rollout mass scales and joint torques too.
  const Case c = make_case("chain_floating_ground.yaml", 3,
                           {"initial.theta=[0, 0, 0.05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]",
                            "model.links[1].damping=0.3", "model.links[2].armature=0.01",
                            "model.links[3].range=[-0.01, 0.01]", "model.links[3].limit_stiffness=200",
                            "model.links[4].range=[-0.005, 0.002]", "model.links[5].damping=0.1",
                            "model.links[5].armature=0.004", "model.links[5].range=[-0.02, 0.003]",
                            "model.links[5].limit_stiffness=500", "model.links[7].armature=0.002",
                            "model.links[2].stiffness=4", "model.links[2].springref=0.03",
                            "model.links[5].stiffness=1.5", "model.links[5].springref=-0.01"});
  REQUIRE(c.sc.model.n_limit > 0);
  REQUIRE(c.sc.model.has_stiffness);
  bool beyond = false;  // a rollout starts beyond a stop
  for (const VecX& q : c.th0)
    for (int i = 0; i < c.sc.model.n_q; ++i)
      beyond |= c.sc.model.dof_limited[size_t(i)] &&
                (q[i] < c.sc.model.dof_range[2 * size_t(i)] || q[i] > c.sc.model.dof_range[2 * size_t(i) + 1]);
  REQUIRE(beyond);
  compare_with_reference(c, 30, false);
  compare_with_reference(c, 15, true, DenseAlgebra::Library);
  Controls u;
  u.mass_scale = per_link(c.sc.model, {0.45, 1.0, 2.6});
  u.tau = VecX::Zero(c.sc.model.n_q);
  for (int i = 6; i < c.sc.model.n_q; ++i) u.tau[i] = 0.3 * ((i % 3) - 1);
  compare_with_reference(c, 20, false, DenseAlgebra::Fused, u);
}

// ---------------------------------------------------------------------------------------------
// Per-DOF model terms in the team LM (pbd_residual_team.h pbfd_dof_terms) on a 1 kg, 1 m rod
// pendulum (hinge about +y, COM 0.5 m below; I = m c^2 = 0.25 kg m^2, m g c = 4.905 N m): the
// physics each term must produce, against closed-form small-angle oracles.
namespace {

Model rod_pendulum(double damping, double armature, bool limited, double hi) {
  ModelSpec spec;
  LinkSpec l;
  l.name = "rod";
  l.joint = JointType::Hinge;
  l.axis = Vec3::UnitY();
  l.mass = 1;
  l.com = Vec3(0, 0, -0.5);
  l.damping = damping;
  l.armature = armature;
  l.limited = limited;
  l.range[0] = -hi;
  l.range[1] = hi;
  spec.links.push_back(l);
  return Model::finalize(spec);
}

// theta_n, n = 0 .. n_steps (theta_0 = th0) of the team LM from rest-or-moving start (v0).
std::vector<double> team_run(const Model& m, double th0, double v0, int n_steps) {
  PbdSettings s;
  s.dt = 0.01;
  PbfdTeamBatch<double> batch(m, s, 1, n_steps, false, 1);
  batch.init(0, VecX::Constant(1, th0), VecX::Constant(1, th0 - s.dt * v0));
  while (batch.launch(8) > 0) {
  }
  std::vector<double> th{th0};
  for (int n = 0; n < n_steps; ++n) {
    REQUIRE((batch.step_status(0, n) & team_detail::kFailBits) == 0);
    th.push_back(batch.theta(0, n)[0]);
  }
  return th;
}

// First time [s] theta changes sign (linear interpolation between steps).
double first_zero(const std::vector<double>& th, double dt) {
  for (size_t n = 1; n < th.size(); ++n)
    if ((th[n - 1] > 0) != (th[n] > 0)) return dt * (double(n - 1) + th[n - 1] / (th[n - 1] - th[n]));
  return -1;
}

// Energy 1/2 I theta_dot^2 + m g c (1 - cos theta) at step n (central velocity).
double energy(const std::vector<double>& th, size_t n, double I) {
  const double v = (th[n + 1] - th[n - 1]) / 0.02;
  return 0.5 * I * v * v + 4.905 * (1 - std::cos(th[n]));
}

}  // namespace

TEST_CASE("lm team: armature lengthens the pendulum's period by sqrt((I + a) / I)", "[team][lm][dof]") {
  // released from rest at 0.05 rad: first zero crossing at a quarter period (pi/2) sqrt(I_eff / (m g c))
  const double t0 = first_zero(team_run(rod_pendulum(0, 0, false, 1), 0.05, 0, 200), 0.01);
  const double ta = first_zero(team_run(rod_pendulum(0, 0.25, false, 1), 0.05, 0, 200), 0.01);
  // measured: 0.35492 s vs 0.35463 s (the implicit scheme's phase lag, 0.08 %); ratio 1.41373
  CHECK(t0 == Approx(M_PI / 2 * std::sqrt(0.25 / 4.905)).epsilon(0.005));
  CHECK(ta / t0 == Approx(std::sqrt(2.0)).epsilon(0.002));
}

TEST_CASE("lm team: damping b removes energy at the rate exp(-b t / I)", "[team][lm][dof]") {
  // the scheme's own numerical damping is the same in both runs; the ratio isolates b's
  const double b = 0.05, I = 0.25;
  const std::vector<double> free = team_run(rod_pendulum(0, 0, false, 1), 0.05, 0, 202);
  const std::vector<double> damped = team_run(rod_pendulum(b, 0, false, 1), 0.05, 0, 202);
  double e_free = 0, e_damped = 0;  // averaged over a period's worth of steps (the exchange
  for (size_t n = 150; n < 200; ++n) {  // between kinetic and potential energy is not exact)
    e_free += energy(free, n, I);
    e_damped += energy(damped, n, I);
  }
  // measured 0.7097 vs exp(-0.35) = 0.7047 (0.7 %: the damping also slows the exchange slightly)
  CHECK(e_damped / e_free == Approx(std::exp(-b * 1.75 / I)).epsilon(0.02));
}

TEST_CASE("lm team: a joint limit stops the swing near its stop and pushes it back", "[team][lm][dof]") {
  // 2 rad/s towards the upper stop at 0.2 rad: free, the rod would swing to ~0.46 rad. With the
  // stop (C = c_perp = 1e5, alpha = 2) the kinetic energy left at the stop (< 0.40 J) is stored
  // in C/3 d^3: d < 0.023 rad (measured: 0.014 rad)
  const std::vector<double> free = team_run(rod_pendulum(0, 0, false, 0.2), 0, 2, 60);
  const std::vector<double> lim = team_run(rod_pendulum(0, 0, true, 0.2), 0, 2, 60);
  const double max_free = *std::max_element(free.begin(), free.end());
  const double max_lim = *std::max_element(lim.begin(), lim.end());
  CHECK(max_free > 0.4);
  CHECK(max_lim > 0.2);
  CHECK(max_lim < 0.2 + 0.035);
  CHECK(lim.back() < 0.2);  // pushed back into the range
}

TEST_CASE("lm team on OS-thread lanes (ThreadTeam) matches the reference, restarts included", "[team][lm][thread_team]") {
  // Every team phase runs on real concurrent lanes with a std::barrier (a warp's 32 lanes, and 5
  // lanes that own several entries each): a missing sync() gives lanes stale shared values, so
  // iteration counts or trajectories leave the reference (and ThreadSanitizer reports the race:
  // ctest -L tsan in a BIGSTEP_TSAN build). Small and short: a few seconds.
  const std::string drop{"initial.theta=[0, 0, 0.05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]"};
  for (int lanes : {32, 5}) {
    INFO("lanes " << lanes);
    compare_with_reference(make_case("chain_floating_ground.yaml", 2, {drop}), 8, false, DenseAlgebra::Fused, {}, lanes);
    // it_max = 3 fails the first attempt of every step: the restart from theta_n (the race this test guards)
    const int restarts = compare_with_reference(make_case("chain_floating_ground.yaml", 2, {drop, "integrator.it_max=3"}), 4,
                                                false, DenseAlgebra::Fused, {}, lanes);
    CHECK(restarts > 0);
    compare_with_reference(make_case("box_slide.yaml", 2, {"integrator.it_max=4"}), 4, true, DenseAlgebra::Library, {}, lanes);
    // 4 iterations per launch, lockstep: trajectories commit and turn WAITING inside a launch, and
    // the next pass's evaluate sees them not RUNNING; bit for bit the single-launch CpuTeam run
    const Case c = make_case("chain_floating_ground.yaml", 2, {drop});
    PbfdTeamBatch<double> one(c.sc.model, c.sc.settings, 2, 6, true, 1), four(c.sc.model, c.sc.settings, 2, 6, true, 1);
    four.use_thread_team(lanes);
    for (int k = 0; k < 2; ++k) {
      one.init(k, c.th0[k], c.thm1[k]);
      four.init(k, c.th0[k], c.thm1[k]);
    }
    for (int n = 0; n < 6; ++n) {
      while (one.launch() > 0) {
      }
      while (four.launch(4) > 0) {
      }
      one.release_waiting();
      four.release_waiting();
    }
    for (int k = 0; k < 2; ++k)
      for (int n = 0; n < 6; ++n) {
        CHECK(four.iterations(k, n) == one.iterations(k, n));
        CHECK(four.theta(k, n) == one.theta(k, n));
      }
  }
}

// ---------------------------------------------------------------------------------------------
// integrator.order 2 (docs/methods/pbfd.md §3.1): the team form carries theta_{n-2} and the fresh
// flag per trajectory (pbd_traj_fields.h) as the reference's Data::history does; the same
// iteration counts and trajectories as the reference, from the fresh first step on.

TEST_CASE("lm team: the second-order step matches the reference (chain, contact, servo, joint terms)",
          "[team][lm][order2]") {
  const std::string o2 = "integrator.order=2";
  const std::string drop{"initial.theta=[0, 0, 0.05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]"};
  compare_with_reference(make_case("chain_fixed.yaml", 3, {o2}), 40, false);
  compare_with_reference(make_case("chain_floating_ground.yaml", 3, {drop, o2}), 30, false);
  compare_with_reference(make_case("box_slide.yaml", 3, {o2}), 20, true, DenseAlgebra::Library);
  // armature (theta~, dt_a), damping (theta_v, dt_v), springs and stops, per-rollout scales
  const Case dof = make_case("chain_floating_ground.yaml", 3,
                             {drop, o2, "model.links[1].damping=0.3", "model.links[2].armature=0.01",
                              "model.links[3].range=[-0.01, 0.01]", "model.links[5].damping=0.1",
                              "model.links[5].armature=0.004", "model.links[2].stiffness=4"});
  Controls u;
  u.mass_scale = per_link(dof.sc.model, {0.45, 1.0, 2.6});
  compare_with_reference(dof, 20, false, DenseAlgebra::Fused, u);
  // the servo's K_d term reads theta_v and dt_v (fresh: dt/2, then 2 dt/3)
  const Case pd = make_case("quadruped_spider.yaml", 2,
                            {"integrator.type=pbfd", "integrator.optimizer=jtj_lm", "integrator.dt=0.02", o2});
  Controls s;
  s.pd = &pd.sc.pd;
  compare_with_reference(pd, 12, true, DenseAlgebra::Fused, s);
  // races on the new step constants (theta~, theta_v, theta_{n-2}) show on OS-thread lanes
  compare_with_reference(make_case("chain_floating_ground.yaml", 2, {drop, o2}), 6, false, DenseAlgebra::Fused, {}, 5);
}

TEST_CASE("lm team: across contact events the second-order step is first order, as the reference's (chain landing)",
          "[team][lm][order2]") {
  // docs/methods/pbfd.md §3.1 "Contact events": a step whose window [t_{n-2}, t_n] holds a change
  // in the number of active contacts is taken in the first-order form (kind Event). The team form
  // counts them per trajectory at each accepted theta (lm_commit_order2). The chain lands inside the
  // compared window, so Event steps and four-point steps after them both occur.
  using Hist = Data::StepHistory;
  for (const char* dt : {"0.01", "0.02"}) {
    INFO("dt " << dt);
    const Case c = make_case("chain_floating_ground.yaml", 3,
                             {"initial.theta=[0, 0, 0.05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]", "integrator.order=2",
                              std::string("integrator.dt=") + dt});
    const int n_steps = 30;
    PbdSettings rs = c.sc.settings;
    rs.friction_continuation = 0;
    PbdIntegrator ref(c.sc.model, rs);
    Data d = ref.make_data();
    d.theta = c.th0[0];
    d.theta_prev = c.thm1[0];
    int events = 0, after = 0;
    for (int n = 0; n < n_steps; ++n) {
      ref.step(d, StepControl{c.sc.tau, nullptr, n * c.sc.settings.dt}, ref.default_params());
      if (d.history.kind == Hist::Event) ++events;
      else if (events > 0 && d.history.kind == Hist::History) ++after;
    }
    CHECK(events >= 2);
    CHECK(after > 0);
    compare_with_reference(c, n_steps, false);
    compare_with_reference(c, n_steps, true, DenseAlgebra::Library);
  }
}

TEST_CASE("lm team: the second-order step is not the first order's, and a reinit starts it fresh", "[team][lm][order2]") {
  const Case c1 = make_case("chain_fixed.yaml", 1), c2 = make_case("chain_fixed.yaml", 1, {"integrator.order=2"});
  const int n_steps = 20;
  PbfdTeamBatch<double> b1(c1.sc.model, c1.sc.settings, 1, n_steps, false, 1);
  PbfdTeamBatch<double> b2(c2.sc.model, c2.sc.settings, 1, n_steps, false, 1);
  b1.init(0, c1.th0[0], c1.thm1[0]);
  b2.init(0, c2.th0[0], c2.thm1[0]);
  while (b1.launch() > 0) {
  }
  while (b2.launch() > 0) {
  }
  CHECK((b1.theta(0, n_steps - 1) - b2.theta(0, n_steps - 1)).norm() > 1e-6);
  // lockstep: after 5 steps the trajectory is reset to (theta_a, theta_b): its next step is a
  // fresh start, as the reference's from a new Data (no theta_{n-2}), and the one after it
  // continues with theta_{n-2} = theta_1 - 2 theta_0 + 2 theta_{-1}
  PbfdTeamBatch<double> lock(c2.sc.model, c2.sc.settings, 1, 1 << 20, true, 1, DenseAlgebra::Fused, 1);
  lock.init(0, c2.th0[0], c2.thm1[0]);
  const VecX tha = c2.th0[0] + 0.01 * VecX::LinSpaced(c2.sc.model.n_q, -1, 1), thb = tha - 0.002 * VecX::Ones(c2.sc.model.n_q);
  PbdIntegrator ref(c2.sc.model, c2.sc.settings);
  VecX th = tha, thp = thb, next;
  for (int n = 0; n < 9; ++n) {
    if (n == 5) lock.reinit(0, tha, thb);
    while (lock.launch() > 0) {
    }
    if (n >= 5) {
      ref.step_controlled(th, thp, StepControl{c2.sc.tau, nullptr, 0.0}, next);
      thp = th;
      th = next;
      INFO("step " << n);
      CHECK((lock.theta(0, 0) - th).lpNorm<Eigen::Infinity>() <= 1e-9);
    }
    lock.release_waiting();
  }
}
