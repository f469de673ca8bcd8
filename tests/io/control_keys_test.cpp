// Scene keys of the stable-PD servo and the quadruped metrics (io/scene_io.cpp: control.pd.*,
// control.reference.*, metrics.type quadruped, metrics.heading, contact.mdp_metric): values
// arrive where they should, and every bad value gives one line naming the file, the full key
// path and the value (tests/io/scene_io_test.cpp style).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/error.h"
#include "io/scene.h"
#include "tests/support/scene_errors.h"

using namespace bigstep;
using bigstep::test::expect_error;

namespace {

// Planar base "a" (3 DOFs, unactuated) and a two-joint leg b -> c: D = 5.
const char* kBase = R"(scene: t
model:
  links:
    - name: a
      joint: planar
      box: {size: [0.4, 0.2, 0.1], mass: 2.0}
    - {name: b, parent: a, joint: hinge, axis: [0, 1, 0], pos: [0.2, 0, 0], box: {size: [0.04, 0.04, 0.3], mass: 0.5, centre: [0, 0, -0.15]}}
    - {name: c, parent: b, joint: hinge, axis: [0, 1, 0], pos: [0, 0, -0.3], box: {size: [0.04, 0.04, 0.3], mass: 0.3, centre: [0, 0, -0.15]}}
  contacts:
    - {link: c, points: [[0, 0, -0.3]]}
  terrain:
    - {normal: [0, 0, 1], offset: 0}
initial:
  theta: [0, 0.6, 0, 0.3, -0.6]
integrator:
  type: ne_mdp
  dt: 0.005
)";

std::string with(const std::string& extra) { return std::string(kBase) + extra; }

const std::string kPd = "control:\n  pd: {kp: 50, kd: 2}\n";
const std::string kLeg = "    legs:\n      - {hip: b, knee: c.angle, phase: 0.25, sweep_sign: -1}\n";

}  // namespace

TEST_CASE("control keys: no control.pd means no servo", "[scene_io][pd]") {
  const Scene sc = load_scene_text(kBase, "test.yaml");
  CHECK_FALSE(sc.pd.active());
  CHECK(sc.metric == MetricKind::Com);
  CHECK(sc.ne.mdp_effective_metric);
}

TEST_CASE("control keys: scalar gains skip the base, lists are taken as given", "[scene_io][pd]") {
  const Scene sc = load_scene_text(with(kPd), "test.yaml");
  REQUIRE(sc.pd.active());
  CHECK(sc.pd.kp == (VecX(5) << 0, 0, 0, 50, 50).finished());
  CHECK(sc.pd.kd == (VecX(5) << 0, 0, 0, 2, 2).finished());
  // hold (default) targets initial.theta
  CHECK(sc.reference.kind == ReferenceKind::Hold);
  VecX th, thd;
  sc.pd.reference(0.7, th, thd);
  CHECK(th == sc.theta0);
  CHECK(thd.isZero(0));

  const Scene l = load_scene_text(with("control:\n  pd: {kp: [0, 0, 0, 10, 20], kd: [0, 0, 0, 1, 0]}\n"
                                       "  reference: {type: hold, stand: [0, 0, 0, 0.1, 0.2]}\n"),
                                  "test.yaml");
  CHECK(l.pd.kp == (VecX(5) << 0, 0, 0, 10, 20).finished());
  CHECK(l.pd.kd == (VecX(5) << 0, 0, 0, 1, 0).finished());
  l.pd.reference(0, th, thd);
  CHECK(th == (VecX(5) << 0, 0, 0, 0.1, 0.2).finished());
}

TEST_CASE("control keys: legs, jump and walk parameters arrive", "[scene_io][pd]") {
  const std::string y = with(kPd + "  reference:\n    type: walk\n" + kLeg +
                             "    jump: {period: 1.9, crouch: {hip: 0.2}, extension: {knee: -0.3}}\n"
                             "    walk: {period: 0.8, stride: 0.1, leg_length: 0.5, duty: 0.6, lift: {knee: 0.4}}\n");
  const Scene w = load_scene_text(y, "test.yaml");
  CHECK(w.reference.kind == ReferenceKind::Walk);
  REQUIRE(w.reference.legs.size() == 1);
  CHECK(w.reference.legs[0].dof[kHip] == 3);
  CHECK(w.reference.legs[0].dof[kKnee] == 4);
  CHECK(w.reference.legs[0].dof[kAbduction] == -1);
  CHECK(w.reference.legs[0].phase == 0.25);
  CHECK(w.reference.legs[0].sweep_sign == -1);
  CHECK(w.reference.period == 0.8);
  CHECK(w.reference.ramp == 0.3);  // walk default
  CHECK(w.reference.stride == 0.1);
  CHECK(w.reference.duty == 0.6);
  CHECK(w.reference.lift[kKnee] == 0.4);
  // the same file switched to jump with --set
  const Scene j = load_scene_text(y, "test.yaml", {"control.reference.type=jump"});
  CHECK(j.reference.kind == ReferenceKind::Jump);
  CHECK(j.reference.period == 1.9);
  CHECK(j.reference.ramp == 0);
  CHECK(j.reference.crouch[kHip] == 0.2);
  CHECK(j.reference.extension[kKnee] == -0.3);
}

TEST_CASE("control keys: bad gains are named", "[scene_io][pd]") {
  expect_error(with("control:\n  pd: {kd: 2}\n"), {"control.pd.kp = (missing)", "required"});
  expect_error(with("control:\n  pd: {kp: -1, kd: 2}\n"), {"control.pd.kp = -1", ">= 0"});
  expect_error(with("control:\n  pd: {kp: abc, kd: 2}\n"), {"control.pd.kp = abc", "expected a number"});
  expect_error(with("control:\n  pd: {kp: [1, 2], kd: 2}\n"), {"control.pd.kp = [1, 2]", "expected 5 numbers, got 2"});
  expect_error(with("control:\n  pd: {kp: [0, 5, 0, 1, 1], kd: 2}\n"),
               {"control.pd.kp[1] = 5", "a.z is a floating-base DOF"});
  expect_error(with("control:\n  pd: {kp: [0, 0, 0, 1, -1], kd: 2}\n"), {"control.pd.kp[4] = -1", ">= 0"});
  expect_error(with("control:\n  pd: {kp: 1, kd: .nan}\n"), {"control.pd.kd", "must be finite"});
  expect_error(with("control:\n  pd: {kp: 1, kd: 1, ki: 3}\n"), {"control.pd.ki = 3", "unknown key"});
  expect_error(with("control:\n  reference: {type: hold}\n"), {"control.reference = {type: hold}", "needs control.pd"});
}

TEST_CASE("control keys: bad references are named", "[scene_io][pd]") {
  const std::string r = kPd + "  reference:\n";
  expect_error(with(r + "    type: dance\n"), {"control.reference.type = dance", "hold, jump, walk"});
  expect_error(with(r + "    type: jump\n"), {"control.reference.legs = []", "at least one leg"});
  expect_error(with(r + "    stand: [1, 2]\n"), {"control.reference.stand = [1, 2]", "expected 5 numbers"});
  expect_error(with(r + "    legs: {hip: b}\n"), {"control.reference.legs = {hip: b}", "expected a list"});
  expect_error(with(r + "    legs:\n      - {hip: nope}\n"), {"control.reference.legs[0].hip = nope", "no such DOF"});
  expect_error(with(r + "    legs:\n      - {hip: a}\n"), {"control.reference.legs[0].hip = a", "no such DOF"});
  expect_error(with(r + "    legs:\n      - {knee: c}\n"), {"control.reference.legs[0].hip = (missing)", "required"});
  expect_error(with(r + "    legs:\n      - {hip: b, elbow: c}\n"), {"control.reference.legs[0].elbow = c", "unknown key"});
  expect_error(with(r + "    legs:\n      - {hip: b, knee: b}\n"), {"control.reference.legs[0].knee = 3", "already belongs"});
  expect_error(with(r + "    legs:\n      - {hip: b, phase: 1.5}\n"), {"control.reference.legs[0].phase = 1.5", "[0, 1)"});
  expect_error(with(r + "    legs:\n      - {hip: b, sweep_sign: 0}\n"), {"control.reference.legs[0].sweep_sign = 0", "1 or -1"});
  const std::string jl = r + "    type: jump\n" + kLeg;
  expect_error(with(jl + "    jump: {period: 1.0}\n"), {"control.reference.jump.period = 1", "must be >= crouch_time"});
  expect_error(with(jl + "    jump: {extension_time: 0}\n"), {"control.reference.jump.extension_time = 0", "> 0"});
  expect_error(with(jl + "    jump: {crouch: {elbow: 1}}\n"), {"control.reference.jump.crouch.elbow = 1", "unknown key"});
  expect_error(with(jl + "    jump: {crouch: {hip: .inf}}\n"), {"control.reference.jump.crouch.hip", "must be finite"});
  expect_error(with(jl + "    jump: {bounce: 2}\n"), {"control.reference.jump.bounce = 2", "unknown key"});
  // walk parameters are checked even while the type is jump (so a --set switch cannot fail later)
  expect_error(with(jl + "    walk: {stride: 1.0, leg_length: 0.4}\n"), {"control.reference.walk.stride = 1", "2 leg_length"});
  expect_error(with(jl + "    walk: {duty: 1}\n"), {"control.reference.walk.duty = 1", "(0, 1)"});
  expect_error(with(jl + "    walk: {ramp: -1}\n"), {"control.reference.walk.ramp = -1", ">= 0"});
  expect_error(with(jl), {"control.reference.type=walk", "control.reference.walk.period=0"},
               {"control.reference.walk.period = 0", "> 0"});
}

TEST_CASE("control keys: quadruped metrics and the MDP metric", "[scene_io][pd]") {
  const Scene q = load_scene_text(with("metrics: {type: quadruped, link: a, heading: [0, 2, 0]}\n"), "test.yaml");
  CHECK(q.metric == MetricKind::Quadruped);
  CHECK(q.heading == Vec3(0, 1, 0));
  expect_error(with("metrics: {type: quadruped, heading: [0, 0, 1]}\n"), {"metrics.heading = [0, 0, 1]", "horizontal"});
  expect_error(with("metrics: {type: quad}\n"), {"metrics.type = quad", "quadruped"});
  const Scene k = load_scene_text(with("contact: {mdp_metric: kinetic}\n"), "test.yaml");
  CHECK_FALSE(k.ne.mdp_effective_metric);
  expect_error(with("contact: {mdp_metric: H}\n"), {"contact.mdp_metric = H", "effective, kinetic"});
}
