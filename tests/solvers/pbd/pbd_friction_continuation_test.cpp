// PBFD's friction continuation (solvers/pbd/pbd_step.cpp) on a recorded ant env step that
// JTJ-LM cannot solve: the ant task (configs/tasks/ant.yaml, PBFD at 50 ms), uniform random
// actions, the state before the step and its action as bench/perf/vec_env_failures.py met them
// (seed 0; replayed cold, no warm lambda). Without the continuation both attempts of docs/methods/pbfd.md §5.3
// end at a stationary point of GE = 1/2 |r|^2 with r != 0 and J_r nearly singular (asserted, so the
// fixture keeps testing the failing path); with it the step converges to r = 0 at the true C_par,
// with J_r regular and the ground's normal force equal to M (a_z + g) of the centre of mass (the discrete
// momentum balance), bit-identically on 1 and 2 threads and without allocating.
#include <catch2/catch.hpp>

#include <Eigen/SVD>
#include <cmath>
#include <vector>

#include "envs/vec_env.h"
#include "solvers/terms/actuation.h"
#include "solvers/pbd/pbd_objective.h"
#include "solvers/pbd/pbd_step.h"
#include "solvers/pbd/pbd_residual.h"
#include "core/inertia.h"
#include "core/kinematics.h"
#include "tests/support/malloc_guard.h"

using namespace bigstep;

#ifdef BIGSTEP_WITH_MUJOCO

namespace {

// the fixture (qpos, qvel before the step; the action), printed by bench/experiments/lm_stall_fixture.py --print-fixture
// step 4, env 25
const double kQpos[15] = {0.018603848641220385, -0.056714491213663218, 0.60511866444393025, 0.98482069292318464, -0.040080213434761043, -0.047542131832287692, -0.16205408042429473, 0.44093797008350943, 1.0717798251847008, 0.48969299809185124, -0.5200537040965566, 0.40895609920405507, -1.2324749534988999, 0.44866111536068515, 1.2356647146391588};
const double kQvel[14] = {0.26112082304200479, 0.14926984177383557, -1.6170210671293805, -1.9310089223478206, -0.38657110229522912, 0.53212362842052341, -1.9565054329146281, -3.4707657054743368, -0.83745466794255985, 3.3084687207411467, -2.5754730158660766, 0.32582233235742386, 1.8824764645958592, -0.094350962923535064};
const double kAction[8] = {-0.26188179158576963, 0.37339269835812772, -0.7566239159849466, -0.90022032802873175, 0.28694991444827811, -0.59892845601659239, -0.2827175095885841, 0.8441191235897767};

std::string ant_task() { return std::string(BIGSTEP_SOURCE_DIR) + "/configs/tasks/ant.yaml"; }

// the fixture is a step of the first-order form (the task file's default when it was recorded)
VecEnv ant_env(int K, std::vector<std::string> ov) {
  ov.push_back("task.episode_steps=1000");
  ov.push_back("integrator.order=1");
  return VecEnv(ant_task(), VecEnvOptions{K, 0, "cpu", std::move(ov), false});
}

// The fixture's step in the integrator's terms: theta_n, theta_{n-1} (VecEnv::set_state's
// conversion), the actuators' controls.
struct AntStep {
  VecEnv env;
  const Model& m;
  VecX theta_n, theta_nm1;
  ActuatorControls act;
  AntStep() : env(ant_env(1, {})), m(env.sc().model), theta_n(m.n_q), theta_nm1(m.n_q), act(m) {
    env.set_state(0, kQpos, kQvel);
    for (int i = 0; i < m.n_q; ++i) {
      theta_n[i] = env.batch().theta[size_t(i)];
      theta_nm1[i] = env.batch().theta_prev[size_t(i)];
    }
    act.set(m, kAction, 0.0);
  }
  PbdSettings settings(int stages) const {
    PbdSettings s = env.sc().settings;
    s.friction_continuation = stages;
    return s;
  }
  // r and J_r of Eq. 13 at theta for this step, C_par as the scene has it (docs/methods/pbfd.md §4.6)
  void residual(const VecX& theta, PbdWorkspace& ws, VecX& r, MatX& Jr) const {
    const PbdSettings s = env.sc().settings;
    make_step_input(m, theta_n, theta_nm1, s.dt, act.control().tau, s.contact, ws, ws.in);
    pbfd_residual(m, ws.in, theta, ws, r, &Jr);
  }
};

}  // namespace

TEST_CASE("friction_continuation: without it the fixture stalls at J_r^T r = 0 with r != 0", "[pbd][continuation]") {
  AntStep a;
  PbdIntegrator integ(a.m, a.settings(0));
  VecX theta_next;
  const StepStats st = integ.step_controlled(a.theta_n, a.theta_nm1, a.act.control(), theta_next);
  REQUIRE((st.status & STATUS_NOT_CONVERGED) != 0);
  PbdWorkspace ws(a.m);
  VecX r(a.m.n_q);
  MatX Jr(a.m.n_q, a.m.n_q);
  a.residual(theta_next, ws, r, Jr);
  const double tol = a.settings(0).eps_r * std::max(1.0, a.m.weight());
  const Eigen::JacobiSVD<MatX> svd(Jr);
  const VecX sv = svd.singularValues();
  const VecX g = Jr.transpose() * r;
  // the stationary point: r far above tolerance, its gradient J_r^T r nearly orthogonal to every
  // column of J_r (cos < 1e-3), and J_r nearly singular
  CAPTURE(r.lpNorm<Eigen::Infinity>(), tol, g.norm(), sv.transpose(), st.iterations);
  CHECK(r.lpNorm<Eigen::Infinity>() > 1e6 * tol);
  CHECK(g.norm() < 1e-3 * sv[0] * r.norm());
  CHECK(sv[sv.size() - 1] < 1e-3 * sv[0]);
}

TEST_CASE("friction_continuation: the fixture step converges to r = 0 at the true C_par, physically", "[pbd][continuation]") {
  AntStep a;
  const PbdSettings s = a.settings(4);
  PbdIntegrator integ(a.m, s);
  VecX theta_next;
  const StepStats st = integ.step_controlled(a.theta_n, a.theta_nm1, a.act.control(), theta_next);
  CAPTURE(st.status, st.iterations, st.residual);
  REQUIRE_FALSE(status_failed(st.status));
  REQUIRE((st.status & STATUS_RESTARTED) != 0);  // it went through both failed attempts first
  // r recomputed from scratch at theta_{n+1} with the scene's C_par (the stages' softened C_par
  // restored): the discrete Newton law of Eq. 13 holds to the solver's tolerance
  PbdWorkspace ws(a.m);
  VecX r(a.m.n_q);
  MatX Jr(a.m.n_q, a.m.n_q);
  a.residual(theta_next, ws, r, Jr);
  const double W = std::max(1.0, a.m.weight()), tol = s.eps_r * W;
  CHECK(r.lpNorm<Eigen::Infinity>() <= tol);
  CHECK(ws.in.cp.c_par == a.env.sc().settings.contact.c_par);
  // and J_r is regular there (the stall's singular direction is gone)
  const Eigen::JacobiSVD<MatX> svd(Jr);
  CHECK(svd.singularValues().minCoeff() > 1e-6 * svd.singularValues().maxCoeff());
  // vertical momentum of the whole body (docs/methods/pbfd.md §3: the root translation rows of grad I are
  // M (c_{n+1} - 2 c_n + c_{n-1}) / dt^2 for the centre of mass c; the ground normal is e_z and
  // friction is tangential): the ground's summed normal force equals M (a_z + g)
  Kinematics kin(a.m);
  Vec3 c[3];
  const VecX* th[3] = {&a.theta_nm1, &a.theta_n, &theta_next};
  for (int i = 0; i < 3; ++i) {
    forward_kinematics(a.m, *th[i], kin);
    c[i] = centre_of_mass(a.m, kin);
  }
  const double dt = s.dt, M = a.m.total_mass;
  const double N_newton = M * ((c[2] - 2 * c[1] + c[0]).z() / (dt * dt) + a.m.gravity.norm());
  CAPTURE(st.normal_force, N_newton, M * a.m.gravity.norm());
  CHECK(st.normal_force > 0);
  CHECK(std::abs(st.normal_force - N_newton) <= 1e-6 * W);
}

TEST_CASE("friction_continuation: a stage count outside 0..8 is a named error", "[pbd][continuation]") {
  AntStep a;
  for (int bad : {-1, 9}) CHECK_THROWS_WITH(PbdIntegrator(a.m, a.settings(bad)), Catch::Contains("integrator.friction_continuation"));
}

TEST_CASE("friction_continuation: the VecEnv step is kept, bit-identical on 1 and 2 threads, without allocating",
          "[pbd][continuation][alloc]") {
  // three envs at the fixture (two threads split them), one step; continuation off flags them all
  const int K = 3;
  std::vector<double> act(size_t(K) * 8);
  for (int k = 0; k < K; ++k) std::copy(kAction, kAction + 8, act.begin() + size_t(k) * 8);
  std::vector<double> qpos[2];
  for (int threads : {1, 2}) {
    VecEnv env = ant_env(K, {"batch.threads=" + std::to_string(threads)});
    for (int k = 0; k < K; ++k) env.set_state(k, kQpos, kQvel);
    env.step(act.data());
    for (int k = 0; k < K; ++k) REQUIRE(env.flags()[k] == 0u);
    qpos[threads - 1].assign(env.qpos(), env.qpos() + size_t(K) * 15);
  }
  CHECK(qpos[0] == qpos[1]);
  VecEnv off = ant_env(K, {"integrator.friction_continuation=0"});
  for (int k = 0; k < K; ++k) off.set_state(k, kQpos, kQvel);
  off.step(act.data());
  for (int k = 0; k < K; ++k) CHECK((off.flags()[k] & ENV_BUDGET_EXCEEDED) != 0u);
  // no heap allocation in a step that runs the continuation (after one such step: first touch)
  VecEnv env = ant_env(1, {"batch.threads=1"});
  env.set_state(0, kQpos, kQvel);
  env.step(act.data());
  env.set_state(0, kQpos, kQvel);
  long n = 0;
  {
    test::MallocCounter count;
    env.step(act.data());
    n = count.count();
  }
  CHECK(env.flags()[0] == 0u);
  CHECK(n == 0);
}
#endif
