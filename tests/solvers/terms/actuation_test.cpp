// Actuators (core/model.h ActuatorSpec, solvers/terms/actuation.h): motor and position actuators
// become the step's torques and stable-PD servo exactly as MuJoCo's transmission defines them;
// a position actuator stepped through ActuatorControls equals the hand-built servo bit for bit in
// every integrator; YAML keys, validation and clamping.
#include <catch2/catch.hpp>

#include <cmath>

#include "io/scene.h"
#include "solvers/terms/actuation.h"
#include "solvers/registry.h"
#include "tests/support/malloc_guard.h"
#include "tests/support/scene_errors.h"

using namespace bigstep;

namespace {

// Two hinges (a pendulum with a second link) with a motor on DOF 0 (gear 2, ctrl in [-1, 1]) and
// two position actuators on DOF 1 (gears 0.5 and -2).
const char* kArm = R"(scene: arm
model:
  links:
    - {name: a, joint: hinge, axis: [0, 1, 0], box: {size: [0.1, 0.1, 1], mass: 1, centre: [0, 0, -0.5]}}
    - {name: b, parent: a, joint: hinge, axis: [0, 1, 0], pos: [0, 0, -1], box: {size: [0.1, 0.1, 1], mass: 1, centre: [0, 0, -0.5]}}
  actuators:
    - {name: shoulder, joint: a, gear: 2, ctrlrange: [-1, 1]}
    - {name: elbow1, joint: b, type: position, gear: 0.5, kp: 40, kv: 4}
    - {name: elbow2, joint: b, type: position, gear: -2, kp: 10, kv: 1}
integrator: {type: pbfd, dt: 0.02, duration: 1}
)";

}  // namespace

TEST_CASE("actuation: motor force, position gains and targets through the transmission", "[actuation]") {
  const Scene sc = load_scene_text(kArm, "arm.yaml", {});
  const Model& m = sc.model;
  REQUIRE(m.n_u == 3);
  CHECK(m.actuator_dof == std::vector<int>{0, 1, 1});
  ActuatorControls ac(m);
  const double ctrl[3] = {3.0, 0.2, -0.1};  // the motor's 3 is clamped to 1
  const StepControl& u = ac.set(m, ctrl, 0.5);
  CHECK(u.t == 0.5);
  CHECK(u.tau[0] == 2.0);
  CHECK(u.tau[1] == 0.0);
  REQUIRE(u.pd);
  // K_p = 40 * 0.25 + 10 * 4 = 50, K_d = 4 * 0.25 + 1 * 4 = 5 on DOF 1; nothing on DOF 0
  CHECK(u.pd->kp[0] == 0.0);
  CHECK(u.pd->kd[0] == 0.0);
  CHECK(std::abs(u.pd->kp[1] - 50) < 1e-14);
  CHECK(std::abs(u.pd->kd[1] - 5) < 1e-14);
  // force of the pair = sum gear (kp (ctrl - gear theta) - kv gear theta_dot) = -K_p (theta - theta_bar) - K_d theta_dot
  VecX th_bar(2), th_dot_bar(2);
  u.pd->reference(0.5, th_bar, th_dot_bar);
  CHECK(th_dot_bar.isZero());
  for (const double theta : {-0.3, 0.0, 0.7})
    for (const double theta_dot : {-1.0, 0.5}) {
      const double mujoco = 0.5 * (40 * (0.2 - 0.5 * theta) - 4 * 0.5 * theta_dot) +
                            -2 * (10 * (-0.1 - -2 * theta) - 1 * -2 * theta_dot);
      const double servo = -u.pd->kp[1] * (theta - th_bar[1]) - u.pd->kd[1] * theta_dot;
      CHECK(std::abs(servo - mujoco) < 1e-12);
    }
}

TEST_CASE("actuation: stepping with actuator controls equals the hand-built servo in every integrator",
          "[actuation]") {
  const Scene sc = load_scene_text(kArm, "arm.yaml", {});
  const Model& m = sc.model;
  for (const SolverEntry& s : solver_registry()) {
    INFO(s.name);
    Scene sc2 = load_scene_text(kArm, "arm.yaml", {std::string("integrator.type=") + s.name});
    const auto a = make_integrator(sc2), b = make_integrator(sc2);
    ActuatorControls ac(m);
    // the same servo by hand: gains and targets from the formulas in actuation.h
    PdServo pd;
    pd.kp = VecX::Zero(2);
    pd.kd = VecX::Zero(2);
    pd.kp[1] = 50;
    pd.kd[1] = 5;
    const double target = (40 * 0.5 * 0.2 + 10 * -2 * -0.1) / 50;
    pd.reference = [target](double, VecX& th, VecX& thd) {
      th = VecX::Zero(2);
      th[1] = target;
      thd = VecX::Zero(2);
    };
    VecX tha = VecX::Zero(2), tha_prev = tha, thb = tha, thb_prev = tha, next(2);
    const double ctrl[3] = {0.3, 0.2, -0.1};
    double t = 0;
    for (int i = 0; i < 25; ++i, t += sc2.settings.dt) {
      StepControl ub;
      ub.tau = VecX::Zero(2);
      ub.tau[0] = 0.6;
      ub.pd = &pd;
      ub.t = t;
      a->step_controlled(tha, tha_prev, ac.set(m, ctrl, t), next);
      tha_prev = tha;
      tha = next;
      b->step_controlled(thb, thb_prev, ub, next);
      thb_prev = thb;
      thb = next;
    }
    CHECK(tha == thb);
    CHECK(tha.allFinite());
    CHECK(std::abs(tha[1]) > 1e-3);  // the elbow moved towards its target
  }
}

TEST_CASE("actuation: set() does not allocate", "[actuation]") {
  const Scene sc = load_scene_text(kArm, "arm.yaml", {});
  ActuatorControls ac(sc.model);
  const double ctrl[3] = {0.3, 0.2, -0.1};
  ac.set(sc.model, ctrl, 0);
  test::MallocCounter count;
  ac.set(sc.model, ctrl, 0.1);
  CHECK(count.count() == 0);
}

TEST_CASE("actuation: bad actuators are named", "[actuation]") {
  test::expect_error(kArm, {"model.actuators[0].joint=zz"}, {"model.actuators[0].joint", "zz"});
  test::expect_error(kArm, {"model.actuators[0].gear=0"}, {"gear"});
  test::expect_error(kArm, {"model.actuators[0].kp=3"}, {"model.actuators[0].kp", "motor"});
  test::expect_error(kArm, {"model.actuators[1]={joint: b, type: position}"}, {"model.actuators[1].kp"});
  test::expect_error(kArm, {"model.actuators[0].ctrlrange=[1, -1]"}, {"ctrlrange"});
  test::expect_error(kArm, {"model.actuators[0].joint_dof=1"}, {"joint_dof"});
}
