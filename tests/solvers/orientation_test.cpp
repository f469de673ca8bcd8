// Orientations without singularities (core/chart.h): every integrator steps free and ball joints
// through every orientation. Each step re-anchors a chart whose middle Euler angle is past 45
// degrees, so no step meets the ZYX singularity. Before the charts a cube resting on a side face
// (ry = pi/2) was held with STATUS_GIMBAL_LOCK, a third of random drops aborted, and a
// Newton-Euler step went on with H singular to 1e-18 until the state reached 1e61 m.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "batch/batch.h"
#include "batch/rollout.h"
#include "core/chart.h"
#include "core/kinematics.h"
#include "io/mjcf_import.h"
#include "io/scene.h"
#include "tests/support/random_models.h"

using namespace bigstep;
using namespace bigstep::test;

namespace {

const char* const kCube = R"(scene: cube
model:
  gravity: [0, 0, -9.81]
  links:
    - {name: cube, joint: floating, box: {size: [0.2, 0.2, 0.2], mass: 1}}
  geoms:
    - {name: floor, type: plane}
    - {name: cube, link: cube, type: box, size: [0.1, 0.1, 0.1]}
initial: {theta: [0, 0, 0.4, 0, 0, 0]}
integrator: {type: ne_lcp, dt: 0.02, duration: 1.0}
contact: {mu: 0.5}
)";

struct Method {
  const char* type;
  double dt;
};
// every integrator at a step it is used at on this scene
const Method kMethods[] = {{"pbd", 0.02},    {"pbfd", 0.02},   {"nmdp_ne", 0.01}, {"nmdp_pbd", 0.01},
                           {"ne_lcp", 0.005}, {"ne_mdp", 0.005}, {"compliant", 0.005}};

Scene cube_scene(const Method& me, double duration) {
  return load_scene_text(kCube, "cube", {std::string("integrator.type=") + me.type,
                                         "integrator.dt=" + std::to_string(me.dt),
                                         "integrator.duration=" + std::to_string(duration)});
}

// world orientation of the cube at a state (its only chart is the floating joint's)
Mat3 cube_R(const Model& m, const VecX& th, const Mat3* chart) {
  Kinematics k(m);
  k.chart = chart;
  forward_kinematics(m, th, k);
  return k.R[0];
}

// the face the cube rests on: world up in the body frame is +-e_i; 0 when it is not on a face
int resting_face(const Mat3& R) {
  const Vec3 up = R.transpose() * Vec3::UnitZ();
  int i;
  const double a = up.cwiseAbs().maxCoeff(&i);
  return a > 0.99 ? (up[i] > 0 ? i + 1 : -(i + 1)) : 0;  // within 8 degrees: the soft contacts rest a little tilted
}

struct Drop {
  bool aborted = false, finite = true;
  uint32_t status = 0;
  int face = 0;
  double height = 0, speed = 0;
  Vec3 up = Vec3::Zero();  // world z in the body frame at the end
};

// A cube dropped from 0.4 m in orientation R0 spinning at omega0 (body frame), stepped for
// `duration` through a Data: the state starts in the chart R0 (angles 0), as any orientation can.
Drop drop(const Scene& sc, const Integrator& integ, const Mat3& R0, const Vec3& omega0, double duration) {
  const Model& m = sc.model;
  const double dt = sc.settings.dt;
  Data d = integ.make_data();
  d.chart[0] = R0;
  d.theta.setZero();
  d.theta[2] = 0.4;
  d.theta_prev = d.theta;
  d.theta_prev.segment<3>(3) = -dt * zyx_rate_matrix(d.theta.data() + 3).inverse() * omega0;
  const RolloutParams p = integ.default_params();
  StepControl u;
  Drop out;
  const int steps = int(std::lround(duration / dt));
  for (int n = 0; n < steps; ++n) {
    const StepStats st = integ.step(d, u, p);
    out.status |= st.status;
    if (!d.theta.allFinite()) out.finite = false;
    if (status_failed(st.status) && (st.status & (STATUS_NONFINITE | STATUS_GIMBAL_LOCK | STATUS_FACTOR_FAILED))) {
      out.aborted = true;
      break;
    }
  }
  out.face = resting_face(cube_R(m, d.theta, d.chart.data()));
  out.up = cube_R(m, d.theta, d.chart.data()).transpose() * Vec3::UnitZ();
  out.height = d.theta[2];
  out.speed = (d.theta - d.theta_prev).head<3>().norm() / dt;
  return out;
}

// the run went to its end, no step held or non-finite
void check_whole_run(const Scene& sc, const Rollout& r) {
  CHECK_FALSE(r.aborted);
  CHECK(int(r.stats.size()) == sc.steps());
  uint32_t any = 0;
  for (const StepStats& st : r.stats) any |= st.status;
  CHECK((any & (STATUS_GIMBAL_LOCK | STATUS_NONFINITE)) == 0);
}

Mat3 uniform_rotation(Rng& rng) {
  // a uniform unit quaternion (Shoemake's subgroup algorithm)
  const double u1 = uniform(rng, 0, 1), u2 = uniform(rng, 0, 2 * M_PI), u3 = uniform(rng, 0, 2 * M_PI);
  const double a = std::sqrt(1 - u1), b = std::sqrt(u1);
  return Eigen::Quaterniond(b * std::cos(u3), a * std::sin(u2), a * std::cos(u2), b * std::sin(u3))
      .normalized()
      .toRotationMatrix();
}

}  // namespace

TEST_CASE("orientation: every integrator steps a cube that starts at ry = pi/2", "[orientation]") {
  for (const Method& me : kMethods) {
    INFO(me.type);
    Scene sc = cube_scene(me, 1.5);
    sc.theta0 << 0, 0, 0.3, 0.2, M_PI / 2, 0.1;  // on a side face, just above the floor
    const Rollout r = simulate(sc);
    check_whole_run(sc, r);
    const Mat3 R = cube_R(sc.model, r.theta.back(), r.chart_of(r.theta.size() - 1));
    CHECK(resting_face(R) == -1);  // the +x face was down at the start and stays down
    CHECK(r.theta.back()[2] == Approx(0.1).margin(0.025));  // the MDP methods' soft contact rests 1-2 cm deep
  }
}

TEST_CASE("orientation: a cube tumbling onto a side face comes to rest on it (NE-LCP once reached 1e61 m)",
          "[orientation]") {
  // thrown down spinning about its y axis at 15 rad/s: it lands on a face with ry = pi/2
  for (const Method& me : kMethods) {
    INFO(me.type);
    Scene sc = cube_scene(me, 2.0);
    sc.theta0 << 0, 0, 0.4, 0.3, 0.2, 0.1;
    sc.theta_dot0 << 0, 0, -5, 0, 15, 0;
    const Rollout r = simulate(sc);
    CHECK_FALSE(r.aborted);
    for (const VecX& th : r.theta) CHECK(th.allFinite());
    CHECK(resting_face(cube_R(sc.model, r.theta.back(), r.chart_of(r.theta.size() - 1))) != 0);
    CHECK(r.theta.back()[2] == Approx(0.1).margin(0.025));
  }
}

TEST_CASE("orientation: cubes dropped in random orientations and spins all come to rest on a face, every integrator",
          "[orientation][drops]") {
  // 12 drops per integrator here (about 50 s of CPU); BIGSTEP_DROPS=1000 runs the full sweep
  const char* env = std::getenv("BIGSTEP_DROPS");
  const int n_drops = env ? std::max(1, std::atoi(env)) : 12;
  for (const Method& me : kMethods) {
    const Scene sc = cube_scene(me, 2.0);
    const std::unique_ptr<Integrator> integ = make_integrator(sc);
    Rng rng(4242);
    int aborted = 0, nonfinite = 0, off_face = 0;
    for (int i = 0; i < n_drops; ++i) {
      const Mat3 R0 = uniform_rotation(rng);
      const Vec3 omega0 = uniform_vec(rng, -6, 6);
      const Drop dr = drop(sc, *integ, R0, omega0, 2.0);
      aborted += dr.aborted;
      nonfinite += !dr.finite;
      const bool rest = dr.face != 0 && std::abs(dr.height - 0.1) < 0.025 && dr.speed < 0.05;
      off_face += !rest;
      if (!rest)
        WARN(me.type << " drop " << i << ": face " << dr.face << " height " << dr.height << " speed " << dr.speed
                     << " status bits " << dr.status << " up " << dr.up.transpose());
    }
    WARN(me.type << ": " << n_drops << " drops: " << aborted << " aborted, " << nonfinite << " non-finite, " << off_face
                 << " not at rest on a face");
    CHECK(aborted == 0);
    CHECK(nonfinite == 0);
    CHECK(off_face == 0);
  }
}

TEST_CASE("orientation: a ball-joint pendulum swung through ry = +-pi/2 moves as the hinge pendulum", "[orientation]") {
  // a 1 m rod hung from a ball joint, released horizontal (ry = pi/2): its swing stays in the
  // x-z plane, so at every step it must be where the same rod on a y hinge is
  const std::string rod = R"(scene: rod
model:
  gravity: [0, 0, -9.81]
  links:
    - {name: rod, joint: JOINT, box: {size: [0.04, 0.04, 1.0], mass: 1, centre: [0, 0, -0.5]}}
initial: {theta: THETA}
integrator: {type: pbfd, dt: 0.01, duration: 3.0}
)";
  auto scene = [&](const char* joint, const char* theta, const char* type) {
    std::string t = rod;
    t.replace(t.find("JOINT"), 5, joint);
    t.replace(t.find("THETA"), 5, theta);
    return load_scene_text(t, "rod", {std::string("integrator.type=") + type});
  };
  for (const char* type : {"pbd", "pbfd", "nmdp_ne", "nmdp_pbd", "ne_lcp", "ne_mdp", "compliant"}) {
    INFO(type);
    Scene ball = scene("ball", "[0, 1.5707963267948966, 0]", type);
    Scene hinge = scene("hinge, axis: [0, 1, 0]", "[1.5707963267948966]", type);
    const Rollout rb = simulate(ball), rh = simulate(hinge);
    REQUIRE_FALSE(rb.aborted);
    REQUIRE(rb.theta.size() == rh.theta.size());
    double err = 0, swing = 0;
    for (size_t i = 0; i < rb.theta.size(); ++i) {
      const Mat3 Rb = chart_orientation(ball.model, rb.chart_of(i), 0, rb.theta[i]);
      const Mat3 Rh = axis_rotation(Vec3::UnitY(), rh.theta[i][0]);
      err = std::max(err, (Rb - Rh).norm());
      swing = std::max(swing, std::abs(rh.theta[i][0]));
    }
    WARN(type << ": largest orientation difference " << err << ", hinge swing " << swing);
    CHECK(swing > 1.5);  // it swung through the bottom to the far side
    CHECK(err < 1e-9);  // measured 7e-14 .. 3e-12
  }
}

TEST_CASE("orientation: a torque-free body spun near its intermediate axis flips (Dzhanibekov) as the Euler equations say",
          "[orientation]") {
  // principal moments from a 0.4 x 0.2 x 0.1 m box of 1 kg: I_y is the intermediate one
  const char* body = R"(scene: tbar
model:
  gravity: [0, 0, 0]
  links:
    - {name: body, joint: floating, box: {size: [0.4, 0.2, 0.1], mass: 1}}
initial: {theta: [0, 0, 0, 0, 0, 0]}
integrator: {type: ne_lcp, dt: 0.001, duration: 4.0}
)";
  const double lx = 0.4, ly = 0.2, lz = 0.1;
  const Vec3 I(1.0 / 12 * (ly * ly + lz * lz), 1.0 / 12 * (lx * lx + lz * lz), 1.0 / 12 * (lx * lx + ly * ly));
  const Vec3 w0(0.03, 8.0, 0.0);  // not along the decaying mode x = z of the linearised flip
  // reference: RK4 of I w' = (I w) x w at 1e-4 s, the time of the first sign change of w_y
  auto euler_rhs = [&](const Vec3& w) { return Vec3((I.cwiseProduct(w)).cross(w).cwiseQuotient(I)); };
  double t_flip_ref = -1;
  {
    Vec3 w = w0;
    const double h = 1e-4;
    for (int n = 0; n < 40000 && t_flip_ref < 0; ++n) {
      const Vec3 k1 = euler_rhs(w), k2 = euler_rhs(w + 0.5 * h * k1), k3 = euler_rhs(w + 0.5 * h * k2),
                 k4 = euler_rhs(w + h * k3);
      const Vec3 wn = w + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
      if (wn.y() < 0 && w.y() >= 0) t_flip_ref = (n + 1) * h;
      w = wn;
    }
  }
  REQUIRE(t_flip_ref > 0);
  // PBFD at its second order (at first order it is backward Euler, which takes energy out of any
  // rotation: (1 + (w dt)^2)^-1 per step, a third of it over this run)
  for (const Method me : {Method{"ne_lcp", 0.001}, Method{"pbfd", 0.002}, Method{"nmdp_ne", 0.002}}) {
    INFO(me.type);
    const Scene sc = load_scene_text(body, "tbar", {std::string("integrator.type=") + me.type,
                                                     "integrator.dt=" + std::to_string(me.dt),
                                                     std::string("integrator.order=") + (me.type[0] == 'p' ? "2" : "1")});
    const std::unique_ptr<Integrator> integ = make_integrator(sc);
    Data d = integ->make_data();
    d.theta_prev.segment<3>(3) = -me.dt * zyx_rate_matrix(d.theta.data() + 3).inverse() * w0;
    const RolloutParams p = integ->default_params();
    StepControl u;
    // world angular momentum and energy from the body rate E(theta_n) (theta_n - theta_{n-1}) / dt
    auto body_rate = [&] {
      return Vec3(zyx_rate_matrix(d.theta.data() + 3) * (d.theta - d.theta_prev).segment<3>(3) / me.dt);
    };
    auto momentum = [&](const Vec3& w) {
      return Vec3(chart_orientation(sc.model, d.chart.data(), 0, d.theta) * I.cwiseProduct(w));
    };
    const Vec3 L0 = momentum(body_rate());
    const double E0 = 0.5 * w0.dot(I.cwiseProduct(w0));
    double t_flip = -1, dL = 0, dE = 0;
    int anchors = 0;
    const int steps = int(std::lround(2 * t_flip_ref / me.dt));
    for (int n = 0; n < steps; ++n) {
      const Mat3 C = d.chart[0];
      const double wy = body_rate().y();
      const StepStats st = integ->step(d, u, p);
      REQUIRE_FALSE(status_failed(st.status));
      anchors += d.chart[0] != C;
      const Vec3 w = body_rate();
      if (t_flip < 0 && w.y() < 0 && wy >= 0) t_flip = (n + 1) * me.dt;
      dL = std::max(dL, (momentum(w) - L0).norm() / L0.norm());
      dE = std::max(dE, std::abs(0.5 * w.dot(I.cwiseProduct(w)) - E0) / E0);
    }
    WARN(me.type << ": flip at " << t_flip << " s (RK4 " << t_flip_ref << " s), |dL|/|L| " << dL << ", |dE|/E "
                 << dE << ", chart re-anchors " << anchors);
    CHECK(anchors > 0);
    CHECK(t_flip == Approx(t_flip_ref).epsilon(0.1));
    CHECK(dL < 0.05);
    CHECK(dE < 0.05);
  }
}

#ifdef BIGSTEP_WITH_MUJOCO
TEST_CASE("orientation: a humanoid lying face down, on its back and on its side is simulated, not held",
          "[orientation][mujoco]") {
  // Gymnasium's humanoid dropped from 0.3 m in three lying poses: face down and on its back put the
  // free joint's middle angle at +-90 degrees (once an abort at the first step)
  struct Pose {
    const char* name;
    int dof;       // the free joint's Euler angle turned by 90 degrees (rz, ry, rx = 3, 4, 5)
    double angle;
    Vec3 down;     // the torso axis that must end pointing down
  };
  const Pose poses[] = {{"face down", 4, M_PI / 2, Vec3::UnitX()},
                        {"on its back", 4, -M_PI / 2, -Vec3::UnitX()},
                        {"on its side", 5, M_PI / 2, -Vec3::UnitY()}};
  // PBFD at the task's 15 ms, NE-LCP at 3 ms
  const std::vector<std::vector<std::string>> methods = {{"integrator.type=pbfd", "integrator.dt=0.015"},
                                                         {"integrator.type=ne_lcp", "integrator.dt=0.003"}};
  for (const std::vector<std::string>& method : methods) {
    for (const Pose& p : poses) {
      INFO(method[0] << ", " << p.name);
      Scene sc = load_scene_text(R"(scene: humanoid_lying
model: {mjcf: 'gymnasium:humanoid.xml', allow: [tendons]}
integrator: {type: pbfd, dt: 0.015, duration: 1.5}
)",
                                 "humanoid", method);
      sc.theta0[2] = 0.3;
      sc.theta0[p.dof] = p.angle;
      const Rollout r = simulate(sc);
      check_whole_run(sc, r);
      Kinematics k(sc.model);
      k.chart = r.chart_of(r.theta.size() - 1);
      forward_kinematics(sc.model, r.theta.back(), k);
      CHECK(k.t[0].z() < 0.35);                           // the torso lies on the floor
      CHECK((k.R[0] * p.down).z() < -0.7);                // still the same way down
    }
  }
}

TEST_CASE("orientation: an MJCF keyframe at pitch 90 degrees with a spin loads and runs", "[orientation][mujoco]") {
  // its Euler rates do not exist in the identity chart: the import anchors the free joint's chart
  // at the keyframe's orientation, the scene starts in it, and qpos / qvel round-trip exactly
  const std::string path = (std::filesystem::temp_directory_path() / "bigstep_keyframe_pitch90.xml").string();
  {
    std::ofstream f(path);
    f << R"(<mujoco><worldbody><geom type="plane" size="2 2 .1"/>
  <body name="box" pos="0 0 0.3"><freejoint/><geom type="box" size=".1 .1 .1" mass="1"/></body>
  </worldbody><keyframe>
  <key name="side" qpos="0 0 0.3 0.7071067811865476 0 0.7071067811865476 0" qvel="0 0 0 1 2 3"/>
  </keyframe></mujoco>)";
  }
  for (const char* type : {"pbfd", "ne_lcp"}) {
    INFO(type);
    Scene sc = load_scene_text("scene: key90\nmodel: {mjcf: '" + path + "'}\ninitial: {keyframe: side}\n"
                               "integrator: {type: pbfd, dt: 0.005, duration: 0.5}\n",
                               "key90", {std::string("integrator.type=") + type});
    REQUIRE(sc.imported);
    const auto& key = sc.imported->keyframes.at(0);
    REQUIRE(key.chart.size() == 1);
    CHECK(key.chart[0] != Mat3::Identity());
    CHECK(key.theta.segment<3>(3).norm() < 1e-12);
    REQUIRE(sc.chart0.size() == 1);
    CHECK(sc.chart0[0] == key.chart[0]);
    VecX qpos, qvel;
    qpos_from_theta(*sc.imported, sc.theta0, qpos, sc.chart0.data());
    qvel_from_theta_dot(*sc.imported, sc.theta0, sc.theta_dot0, qvel);
    VecX q_ref(7), v_ref(6);
    q_ref << 0, 0, 0.3, std::sqrt(0.5), 0, std::sqrt(0.5), 0;
    v_ref << 0, 0, 0, 1, 2, 3;
    CHECK((qpos - q_ref).cwiseAbs().maxCoeff() < 1e-12);
    CHECK((qvel - v_ref).cwiseAbs().maxCoeff() < 1e-12);
    const Rollout r = simulate(sc);
    check_whole_run(sc, r);
    CHECK(*r.chart_of(0) == sc.chart0[0]);
  }
  std::filesystem::remove(path);
}
#endif

TEST_CASE("orientation: a batch of tumbling cubes is bit-identical for any thread count", "[orientation][batch]") {
  Scene sc = cube_scene(kMethods[1], 1.0);
  sc.theta_dot0 << 0, 0, -3, 4, 9, -2;
  BatchOptions opt;
  opt.rollouts = 16;
  opt.perturb_theta = 0.5;
  opt.perturb_theta_dot = 3;
  auto run = [&](int threads) {
    StateBatch b(opt.rollouts, sc.model.n_q);
    RolloutParamTable p;
    init_batch(sc, opt, b, p);
    CpuBatchStepper stepper(sc, threads);
    for (int n = 0; n < 50; ++n) stepper.step(b, p);
    return b;
  };
  const StateBatch a = run(1), b = run(2);
  CHECK(a.theta == b.theta);
  CHECK(a.theta_prev == b.theta_prev);
  REQUIRE(a.chart.size() == size_t(opt.rollouts));
  int moved = 0;
  for (size_t k = 0; k < a.chart.size(); ++k) {
    CHECK(a.chart[k] == b.chart[k]);
    moved += a.chart[k] != Mat3::Identity();
  }
  CHECK(moved > 0);  // some charts were re-anchored
  for (uint32_t s : a.status) CHECK((s & (STATUS_GIMBAL_LOCK | STATUS_NONFINITE)) == 0);
}
