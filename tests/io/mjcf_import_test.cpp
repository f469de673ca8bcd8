// MJCF / URDF import (io/mjcf_import.h) against libmujoco itself as the oracle: mass matrix
// and bias forces at random states through the velocity map, body poses, the (qpos, qvel) map
// both ways, keyframes, actuator forces, and the errors for what bigstep cannot represent.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "core/crba.h"
#include "core/error.h"
#include "core/forward_dynamics.h"
#include "core/kinematics.h"
#include "core/rnea.h"
#include "io/mjcf_import.h"
#include "tests/support/tol.h"

using namespace bigstep;
using bigstep::test::tol;
namespace fs = std::filesystem;

#ifndef BIGSTEP_WITH_MUJOCO

TEST_CASE("mujoco import: a build without MuJoCo says how to get it", "[mujoco]") {
  try {
    import_mujoco("model.xml");
    FAIL("no error");
  } catch (const InvalidArgument& e) {
    CHECK(std::string(e.what()).find("pip install mujoco") != std::string::npos);
  }
}

#else

#include <mujoco/mujoco.h>

namespace {

// stdout of a python3 one-liner, trailing newline removed ("" when it fails)
std::string python(const std::string& code) {
  std::string out;
  FILE* p = popen(("python3 -c \"" + code + "\" 2>/dev/null").c_str(), "r");
  if (!p) return out;
  char buf[512];
  while (fgets(buf, sizeof(buf), p)) out += buf;
  pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// gymnasium's MJCF assets, loaded from the installed package (never copied into the repo)
std::string gym_asset(const std::string& name) {
  static const std::string dir =
      python("import gymnasium, os; print(os.path.join(os.path.dirname(gymnasium.__file__), 'envs', 'mujoco', 'assets'))");
  REQUIRE(!dir.empty());
  return dir + "/" + name + ".xml";
}

// one folder per test process for the written models, removed at exit
fs::path temp_dir() {
  struct Dir {
    fs::path p = fs::temp_directory_path() / ("bigstep_mujoco_" + std::to_string(::getpid()));
    Dir() { fs::create_directories(p); }
    ~Dir() {
      std::error_code ec;
      fs::remove_all(p, ec);
    }
  };
  static const Dir d;
  return d.p;
}

std::string write_temp(const std::string& name, const std::string& text) {
  const fs::path p = temp_dir() / name;
  std::ofstream(p) << text;
  return p.string();
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t i = s.find(from); i != std::string::npos; i = s.find(from, i + to.size())) s.replace(i, from.size(), to);
  return s;
}

// example-robot-data's go1.urdf as MuJoCo can compile it: the file's placeholder inertia of the
// world-fixed "base" link (every entry 1e-6, a singular tensor) is made diagonal, which MuJoCo
// otherwise rejects ("inertia must have positive eigenvalues"); floating = true turns the fixed
// base -> trunk joint into a URDF floating joint (a MuJoCo free joint).
std::string go1_urdf(bool floating) {
  static const std::string src = python(
      "import cmeel, os; print(os.path.join(os.path.dirname(os.path.dirname(cmeel.__file__)), 'cmeel.prefix', 'share', "
      "'example-robot-data', 'robots', 'go1_description', 'urdf', 'go1.urdf'))");
  std::ifstream in(src);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = replace_all(ss.str(), R"(<inertia ixx="1e-6" ixy="1e-6" ixz="1e-6" iyy="1e-6" iyz="1e-6" izz="1e-6"/>)",
                                 R"(<inertia ixx="1e-6" ixy="0" ixz="0" iyy="1e-6" iyz="0" izz="1e-6"/>)");
  text = replace_all(text, R"(<robot name="go1">)", R"(<robot name="go1"><mujoco><compiler discardvisual="true"/></mujoco>)");
  if (floating) text = replace_all(text, R"(<joint name="floating_base" type="fixed">)", R"(<joint name="floating_base" type="floating">)");
  return write_temp(floating ? "go1_floating.urdf" : "go1_fixed.urdf", text);
}

// a small model with every joint kind, refs, anchors off the body origin, rotated inertias, a
// multi-joint body, welded bodies (to a link and to the world), motors and a position servo
const char* kKitchen = R"(<mujoco model="kitchen">
  <option gravity="0.3 -0.2 -9.81" timestep="0.005"/>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="post" pos="1 1 0" euler="0 0 30">
      <geom name="post" type="box" size=".1 .1 .5" pos="0 0 0.5" contype="2" conaffinity="2"/>
    </body>
    <body name="base" pos="0.1 0.2 1" quat="0.9 0.1 0.3 0.2">
      <freejoint name="root"/>
      <inertial pos="0.01 0.02 -0.03" quat="0.8 0.2 0.1 0.4" mass="3" diaginertia="0.1 0.2 0.25"/>
      <geom name="shell" type="box" size="0.2 0.1 0.05" contype="0" conaffinity="0"/>
      <body name="arm" pos="0.3 0 0" euler="10 20 30">
        <joint name="shoulder" type="ball" pos="0.05 0 0.02" damping="0" armature="0"/>
        <inertial pos="0.1 0.02 0.01" quat="0.7 0.1 -0.3 0.2" mass="1" diaginertia="0.01 0.02 0.025"/>
        <geom name="upper" type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
        <body name="fore" pos="0.3 0 0" euler="-5 15 0">
          <joint name="e1" type="hinge" axis="0 1 0" pos="0.01 0.02 0" ref="0.3" range="-1 1" limited="true" damping="0.5" armature="0.02"/>
          <joint name="e2" type="slide" axis="1 0.5 0" pos="0.02 0 0.01" ref="0.1"/>
          <joint name="e3" type="hinge" axis="0.2 0 1" pos="0 0.03 0"/>
          <inertial pos="0.05 0.01 0.02" quat="0.9 0 0.2 0.1" mass="0.7" diaginertia="0.004 0.005 0.006"/>
          <geom name="elbow" type="sphere" size="0.04" pos="0.1 0 0"/>
          <body name="hand" pos="0.2 0 0" euler="20 0 10">
            <inertial pos="0.02 0.01 0" quat="0.6 0.3 0.1 0.2" mass="0.3" diaginertia="0.001 0.002 0.0025"/>
            <geom name="palm" type="cylinder" size="0.02 0.05"/>
            <body name="finger" pos="0.05 0 0">
              <joint name="f" type="hinge" axis="1 0 0" pos="0 0 0.01"/>
              <inertial pos="0.01 0 0" mass="0.05" diaginertia="0.0001 0.0002 0.00025"/>
              <geom name="tip" type="ellipsoid" size="0.01 0.02 0.015"/>
            </body>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor name="m_e1" joint="e1" gear="2" ctrlrange="-1 1"/>
    <position name="p_e3" joint="e3" kp="10" kv="1" gear="1.5"/>
    <motor name="m_f" joint="f"/>
  </actuator>
  <keyframe>
    <key name="k" qpos="0.1 0.2 0.9 0.9 0.1 -0.2 0.3 0.8 0.2 0.3 -0.4 0.4 0.2 -0.3 0.5" qvel="0.1 -0.2 0.3 0.4 -0.5 0.6 0.7 0.8 -0.9 1 0.5 -0.4 0.3"/>
  </keyframe>
</mujoco>
)";

struct Case {
  std::string name, path;
  MujocoImportOptions opt;
};

// the models of the cross-checks, with the options each one needs (what bigstep drops is named)
std::vector<Case> cases() {
  MujocoImportOptions humanoid;
  humanoid.drop_tendons = true;
  MujocoImportOptions go1;
  go1.drop_frictionloss = true;
  go1.drop_geoms = true;  // box-box / box-capsule pairs (see the go1 test below)
  return {{"kitchen", write_temp("kitchen.xml", kKitchen), {}},
          {"hopper", gym_asset("hopper"), {}},
          {"walker2d", gym_asset("walker2d"), {}},
          {"half_cheetah", gym_asset("half_cheetah"), {}},
          {"ant", gym_asset("ant"), {}},
          {"humanoid", gym_asset("humanoid"), humanoid},
          {"go1 fixed", go1_urdf(false), go1},
          {"go1 floating", go1_urdf(true), go1}};
}

struct MjModelPtr {
  mjModel* m;
  mjData* d;
  explicit MjModelPtr(const std::string& path) {
    char err[1000] = "";
    m = mj_loadXML(path.c_str(), nullptr, err, sizeof(err));
    INFO(err);
    REQUIRE(m);
    d = mj_makeData(m);
  }
  ~MjModelPtr() {
    mj_deleteData(d);
    mj_deleteModel(m);
  }
};

// a random theta: limited joints inside their range, free positions in a box, Euler angles with
// |ry| < 1.2 (away from gimbal lock)
VecX random_theta(const MujocoImport& imp, const Model& model, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  VecX th(imp.nv);
  for (int k = 0; k < imp.nv; ++k) {
    if (model.dof_limited[k]) {
      const double lo = model.dof_range[2 * k], hi = model.dof_range[2 * k + 1];
      th[k] = lo + (hi - lo) * 0.5 * (1 + u(rng));
    } else {
      th[k] = (model.dof_revolute[k] ? 3.0 : 1.0) * u(rng);
    }
  }
  for (const MujocoJointMap& j : imp.joints) {
    const int e = j.type == MujocoJoint::Ball ? j.theta_adr : j.type == MujocoJoint::Free ? j.theta_adr + 3 : -1;
    if (e >= 0) th[e + 1] = 1.2 * u(rng);
  }
  return th;
}

VecX random_vec(int n, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-2, 2);
  VecX v(n);
  for (int i = 0; i < n; ++i) v[i] = u(rng);
  return v;
}

// d/dt (J(theta)) theta_dot along theta_dot, J = qvel_jacobian: per Euler triple (a, b, c),
// the time derivative of the rate matrix (header) times (a', b', c')
VecX jdot_theta_dot(const MujocoImport& imp, const VecX& th, const VecX& thd) {
  VecX out = VecX::Zero(imp.nv);
  for (const MujocoJointMap& j : imp.joints) {
    const int e = j.type == MujocoJoint::Ball ? j.theta_adr : j.type == MujocoJoint::Free ? j.theta_adr + 3 : -1;
    if (e < 0) continue;
    const double b = th[e + 1], c = th[e + 2], da = thd[e], db = thd[e + 1], dc = thd[e + 2];
    const double sb = std::sin(b), cb = std::cos(b), sc = std::sin(c), cc = std::cos(c);
    out[e] = -da * db * cb;
    out[e + 1] = -da * db * sb * sc + da * dc * cb * cc - db * dc * sc;
    out[e + 2] = -da * db * sb * cc - da * dc * cb * sc - db * dc * cc;
  }
  return out;
}

double max_abs(const MatX& A) { return A.cwiseAbs().maxCoeff(); }

// MuJoCo's M and qfrc_bias at (theta, theta_dot), mapped to bigstep's coordinates
void mujoco_dynamics(const MujocoImport& imp, MjModelPtr& mj, const VecX& th, const VecX& thd, MatX& H, VecX& bias) {
  VecX qpos, qvel;
  qpos_from_theta(imp, th, qpos);
  qvel_from_theta_dot(imp, th, thd, qvel);
  mju_copy(mj.d->qpos, qpos.data(), imp.nq);
  mju_copy(mj.d->qvel, qvel.data(), imp.nv);
  mju_zero(mj.d->ctrl, mj.m->nu);
  mj_forward(mj.m, mj.d);
  MatX M_rowmajor(imp.nv, imp.nv);
  mj_fullM(mj.m, mj.d, M_rowmajor.data());  // symmetric: storage order does not matter
  const VecX c = Eigen::Map<const VecX>(mj.d->qfrc_bias, imp.nv);
  MatX J;
  qvel_jacobian(imp, th, J);
  // tau_b . theta_dot = tau_mj . qvel with qvel = J theta_dot, qacc = J theta_ddot + Jdot theta_dot:
  // H_b = J^T M J, bias_b = J^T (c + M Jdot theta_dot)
  H = J.transpose() * M_rowmajor * J;
  bias = J.transpose() * (c + M_rowmajor * jdot_theta_dot(imp, th, thd));
}

// f(imp, model, mj, theta, theta_dot) at 5 random states of every model of cases()
template <class F>
void for_each_state(unsigned seed, F f) {
  for (const Case& cs : cases()) {
    INFO("model " << cs.name);
    const MujocoImport imp = import_mujoco(cs.path, cs.opt);
    const Model model = Model::finalize(imp.spec);
    MjModelPtr mj(cs.path);
    REQUIRE(model.n_q == imp.nv);
    std::mt19937 rng(seed);
    for (int s = 0; s < 5; ++s) {
      INFO("state " << s);
      const VecX th = random_theta(imp, model, rng), thd = random_vec(imp.nv, rng);
      f(imp, model, mj, th, thd);
    }
  }
}

// joint forces of the actuators at ctrl: motor gear u, position gear (kp (u - gear theta) - kv gear
// theta_dot), u = ctrl clamped to ctrlrange (ActuatorSpec, core/model.h)
VecX actuator_tau(const MujocoImport& imp, const VecX& ctrl, const VecX& th, const VecX& thd) {
  VecX tau = VecX::Zero(imp.nv);
  for (size_t i = 0; i < imp.spec.actuators.size(); ++i) {
    const ActuatorSpec& a = imp.spec.actuators[i];
    const double u = a.ctrllimited ? std::clamp(ctrl[i], a.ctrlrange[0], a.ctrlrange[1]) : ctrl[i];
    tau[a.dof] += a.type == ActuatorType::Motor
                      ? a.gear * u
                      : a.gear * (a.kp * (u - a.gear * th[a.dof]) - a.kv * a.gear * thd[a.dof]);
  }
  return tau;
}

}  // namespace

TEST_CASE("mujoco import: the analytic Jdot theta_dot of the Euler map is the derivative of J", "[mujoco]") {
  const MujocoImport imp = import_mujoco(write_temp("kitchen.xml", kKitchen));
  const Model model = Model::finalize(imp.spec);
  std::mt19937 rng(3);
  const VecX th = random_theta(imp, model, rng), thd = random_vec(imp.nv, rng);
  const double h = 1e-6;
  MatX Jp, Jm;
  qvel_jacobian(imp, th + h * thd, Jp);
  qvel_jacobian(imp, th - h * thd, Jm);
  const VecX fd = (Jp - Jm) / (2 * h) * thd;
  // central difference: error ~ h^2 |d3 J| ~ 1e-11, plus rounding eps/h ~ 1e-10
  CHECK((fd - jdot_theta_dot(imp, th, thd)).cwiseAbs().maxCoeff() < tol(1e-8));
}

TEST_CASE("mujoco import: mass matrix and bias forces equal MuJoCo's at random states", "[mujoco]") {
  for_each_state(7, [](const MujocoImport& imp, const Model& model, MjModelPtr& mj, const VecX& th, const VecX& thd) {
    MatX H_mj;
    VecX b_mj;
    mujoco_dynamics(imp, mj, th, thd, H_mj, b_mj);
    // bigstep: CRBA plus the armature (MuJoCo's M holds it), RNEA with qdd = 0 (Coriolis + gravity)
    MatX H;
    crba(model, th, H);
    H.diagonal() += Eigen::Map<const VecX>(model.dof_armature.data(), model.n_q);
    const VecX b = nonlinear_effects(model, th, thd);
    INFO("H - H_mj max " << max_abs(H - H_mj) << "\nb - b_mj max " << max_abs(b - b_mj));
    // round-off of two O(n) recursions: 1e-9 relative to the largest entry
    CHECK(max_abs(H - H_mj) <= tol(1e-9) * max_abs(H_mj));
    CHECK(max_abs(b - b_mj) <= tol(1e-9) * std::max(max_abs(b_mj), max_abs(H_mj)));
  });
}

TEST_CASE("mujoco import: forward dynamics with damping, armature, springs and actuators equals MuJoCo's qacc_smooth", "[mujoco]") {
  std::mt19937 rng_u(17);
  for_each_state(19, [&](const MujocoImport& imp, const Model& model, MjModelPtr& mj, const VecX& th, const VecX& thd) {
    // (hinge / slide springs are imported: qacc_smooth includes MuJoCo's qfrc_spring)
    const VecX ctrl = 0.75 * random_vec(int(mj.m->nu), rng_u);  // in [-1.5, 1.5]: clamping is exercised
    VecX qpos, qvel;
    qpos_from_theta(imp, th, qpos);
    qvel_from_theta_dot(imp, th, thd, qvel);
    mju_copy(mj.d->qpos, qpos.data(), imp.nq);
    mju_copy(mj.d->qvel, qvel.data(), imp.nv);
    if (mj.m->nu) mju_copy(mj.d->ctrl, ctrl.data(), mj.m->nu);
    mj_forward(mj.m, mj.d);
    // qacc = J theta_ddot + Jdot theta_dot
    const VecX thdd = forward_dynamics(model, th, thd, actuator_tau(imp, ctrl, th, thd));
    MatX J;
    qvel_jacobian(imp, th, J);
    const VecX qacc = J * thdd + jdot_theta_dot(imp, th, thd);
    const VecX qacc_mj = Eigen::Map<const VecX>(mj.d->qacc_smooth, imp.nv);
    INFO("qacc - qacc_mj max " << max_abs(qacc - qacc_mj) << " of " << max_abs(qacc_mj));
    // two factorisations of M (condition number up to ~1e5 on humanoid): 1e-8 relative
    CHECK(max_abs(qacc - qacc_mj) <= tol(1e-8) * max_abs(qacc_mj));
  });
}

TEST_CASE("mujoco import: every body's world pose equals MuJoCo's xpos / xmat", "[mujoco]") {
  for_each_state(11, [](const MujocoImport& imp, const Model& model, MjModelPtr& mj, const VecX& th, const VecX&) {
    VecX qpos;
    qpos_from_theta(imp, th, qpos);
    mju_copy(mj.d->qpos, qpos.data(), imp.nq);
    mj_kinematics(mj.m, mj.d);
    Kinematics kin(model);
    forward_kinematics(model, th, kin);
    for (int b = 1; b < int(mj.m->nbody); ++b) {
      INFO("body " << imp.body_name[b]);
      const int L = imp.body_link[b];
      const Mat3 R_L = L < 0 ? Mat3::Identity() : kin.R[L];
      const Vec3 t_L = L < 0 ? Vec3::Zero() : kin.t[L];
      const Vec3 x = R_L * imp.body_t[b] + t_L;
      const Mat3 R = R_L * imp.body_R[b];
      const Vec3 x_mj(mj.d->xpos[3 * b], mj.d->xpos[3 * b + 1], mj.d->xpos[3 * b + 2]);
      const Mat3 R_mj = Eigen::Map<const Eigen::Matrix<double, 3, 3, Eigen::RowMajor>>(mj.d->xmat + 9 * b);
      CHECK((x - x_mj).norm() < tol(1e-12));
      CHECK((R - R_mj).norm() < tol(1e-12));
    }
  });
}

TEST_CASE("mujoco import: the (qpos, qvel) map round-trips and agrees with MuJoCo's integrator", "[mujoco]") {
  for_each_state(13, [](const MujocoImport& imp, const Model&, MjModelPtr& mj, const VecX& th, const VecX& thd) {
    // theta -> qpos -> theta (Euler angles are drawn inside the principal range)
    VecX qpos, th2, qpos2, qvel, thd2, qvel2;
    qpos_from_theta(imp, th, qpos);
    theta_from_qpos(imp, qpos, th2);
    CHECK((th2 - th).cwiseAbs().maxCoeff() < tol(1e-12));
    qpos_from_theta(imp, th2, qpos2);
    CHECK((qpos2 - qpos).cwiseAbs().maxCoeff() < tol(1e-12));
    // theta_dot -> qvel -> theta_dot and back
    qvel_from_theta_dot(imp, th, thd, qvel);
    theta_dot_from_qvel(imp, th, qvel, thd2);
    CHECK((thd2 - thd).cwiseAbs().maxCoeff() < tol(1e-12));
    qvel_from_theta_dot(imp, th, thd2, qvel2);
    CHECK((qvel2 - qvel).cwiseAbs().maxCoeff() < tol(1e-12));
    // MuJoCo's own velocity of the path qpos(theta + s theta_dot) at s = 0 (mj_differentiatePos:
    // free joints' linear part in the world frame, angular parts in the body frame)
    const double h = 1e-6;
    VecX qa, qb, v_fd(imp.nv);
    qpos_from_theta(imp, th - h * thd, qa);
    qpos_from_theta(imp, th + h * thd, qb);
    mj_differentiatePos(mj.m, v_fd.data(), 2 * h, qa.data(), qb.data());
    CHECK((v_fd - qvel).cwiseAbs().maxCoeff() < tol(1e-7) * (1 + qvel.cwiseAbs().maxCoeff()));
  });
}

TEST_CASE("mujoco import: in rotation charts the poses equal MuJoCo's and (qpos, qvel) round-trip at any orientation",
          "[mujoco][chart]") {
  for_each_state(17, [](const MujocoImport& imp, const Model& model, MjModelPtr& mj, const VecX& th, const VecX& thd) {
    if (model.n_chart == 0) return;
    std::mt19937 rng(1700 + model.n_q);
    std::uniform_real_distribution<double> U(-M_PI, M_PI);
    std::vector<Mat3> chart(size_t(model.n_chart));
    for (Mat3& C : chart)
      C = axis_rotation(Vec3::UnitZ(), U(rng)) * axis_rotation(Vec3::UnitY(), U(rng)) * axis_rotation(Vec3::UnitX(), U(rng));
    // theta in random charts -> qpos: MuJoCo's poses are bigstep's kinematics in those charts
    VecX qpos, th2, qpos2, qvel, thd2, qvel2;
    qpos_from_theta(imp, th, qpos, chart.data());
    mju_copy(mj.d->qpos, qpos.data(), imp.nq);
    mj_kinematics(mj.m, mj.d);
    Kinematics kin(model);
    kin.chart = chart.data();
    forward_kinematics(model, th, kin);
    for (int b = 1; b < int(mj.m->nbody); ++b) {
      const int L = imp.body_link[b];
      if (L < 0) continue;
      const Mat3 R_mj = Eigen::Map<const Eigen::Matrix<double, 3, 3, Eigen::RowMajor>>(mj.d->xmat + 9 * b);
      const Vec3 x_mj(mj.d->xpos[3 * b], mj.d->xpos[3 * b + 1], mj.d->xpos[3 * b + 2]);
      INFO("body " << imp.body_name[b]);
      CHECK((kin.R[L] * imp.body_R[b] - R_mj).norm() < tol(1e-12));
      CHECK((kin.R[L] * imp.body_t[b] + kin.t[L] - x_mj).norm() < tol(1e-12));
    }
    // qpos -> (theta, charts) -> qpos
    std::vector<Mat3> chart2(chart.size());
    theta_from_qpos(imp, qpos, th2, chart2.data());
    qpos_from_theta(imp, th2, qpos2, chart2.data());
    CHECK((qpos2 - qpos).cwiseAbs().maxCoeff() < tol(1e-12));
    // every joint turned to a middle angle of exactly 90 degrees: the rates still exist
    VecX th90 = th;
    for (int c = 0; c < model.n_chart; ++c) th90[model.chart_dof[c] + 1] = M_PI / 2;
    qpos_from_theta(imp, th90, qpos);
    theta_from_qpos(imp, qpos, th2, chart2.data());
    for (int c = 0; c < model.n_chart; ++c) CHECK(th2.segment<3>(model.chart_dof[c]).norm() < 1e-12);
    qvel = thd;
    theta_dot_from_qvel(imp, th2, qvel, thd2);
    qvel_from_theta_dot(imp, th2, thd2, qvel2);
    CHECK((qvel2 - qvel).cwiseAbs().maxCoeff() < tol(1e-12));
    qpos_from_theta(imp, th2, qpos2, chart2.data());
    CHECK((qpos2 - qpos).cwiseAbs().maxCoeff() < tol(1e-12));
  });
}

TEST_CASE("mujoco import: model, geoms, actuators and keyframes of the kitchen model", "[mujoco]") {
  const std::string path = write_temp("kitchen.xml", kKitchen);
  const MujocoImport imp = import_mujoco(path);
  const Model model = Model::finalize(imp.spec);
  MjModelPtr mj(path);
  CHECK(imp.timestep == 0.005);
  CHECK(imp.spec.gravity == Vec3(0.3, -0.2, -9.81));
  // links: base (free), arm (ball), fore/e1, fore/e2, fore/e3 (hand merged in), finger
  REQUIRE(model.n_link == 6);
  CHECK(model.link_name[2] == "fore/e1");
  CHECK(model.link_mass[2] == 0);
  CHECK(model.link_mass[4] == Approx(0.7 + 0.3));
  CHECK(model.link_joint[0] == JointType::Floating);
  CHECK(model.link_joint[1] == JointType::Ball);
  CHECK(model.n_q == 13);
  CHECK(imp.nq == 15);
  CHECK(model.dof_limited[9] == 1);  // e1 keeps its range (theta = qpos)
  CHECK(model.dof_range[18] == Approx(-M_PI / 180));  // MJCF angles are in degrees by default
  CHECK(model.dof_damping[9] == 0.5);
  CHECK(model.dof_armature[9] == 0.02);
  // geoms: the visual-only box is left out, the cylinder is a capsule, the ellipsoid a sphere
  // of its largest semi-axis, post's box is on the world (welded)
  std::vector<std::string> names;
  for (const GeomSpec& g : imp.spec.geoms) names.push_back(g.name);
  CHECK(names == std::vector<std::string>{"floor", "post", "upper", "elbow", "palm", "tip"});
  CHECK(imp.spec.geoms[1].link == -1);
  CHECK(imp.spec.geoms[4].type == GeomType::Capsule);
  CHECK(imp.spec.geoms[4].link == 4);
  CHECK(imp.spec.geoms[5].type == GeomType::Sphere);
  CHECK(imp.spec.geoms[5].size[0] == 0.02);
  CHECK(imp.geom_friction.size() == 6);
  CHECK(imp.geom_friction[0] == 1.0);
  // MuJoCo's parent filter: fore's geoms (below two massless links) never touch arm's
  CHECK(imp.spec.exclude == std::vector<std::pair<int, int>>{{4, 1}});
  // actuator forces: set ctrl and compare MuJoCo's qfrc_actuator with the ActuatorSpec formulas
  REQUIRE(imp.spec.actuators.size() == 3);
  CHECK(imp.spec.actuators[1].type == ActuatorType::Position);
  std::mt19937 rng(5);
  const VecX th = random_theta(imp, model, rng), thd = random_vec(imp.nv, rng);
  VecX qpos, qvel;
  qpos_from_theta(imp, th, qpos);
  qvel_from_theta_dot(imp, th, thd, qvel);
  mju_copy(mj.d->qpos, qpos.data(), imp.nq);
  mju_copy(mj.d->qvel, qvel.data(), imp.nv);
  const double ctrl[3] = {0.7, 0.3, -0.4};
  mju_copy(mj.d->ctrl, ctrl, 3);
  mj_forward(mj.m, mj.d);
  const VecX tau = actuator_tau(imp, Eigen::Map<const VecX>(ctrl, 3), th, thd);
  CHECK((tau - Eigen::Map<const VecX>(mj.d->qfrc_actuator, imp.nv)).cwiseAbs().maxCoeff() < tol(1e-12));
  // the keyframe through the map
  REQUIRE(imp.keyframes.size() == 1);
  CHECK(imp.keyframes[0].name == "k");
  VecX kq, kv;
  qpos_from_theta(imp, imp.keyframes[0].theta, kq, imp.keyframes[0].chart.data());
  qvel_from_theta_dot(imp, imp.keyframes[0].theta, imp.keyframes[0].theta_dot, kv);
  VecX key_q = Eigen::Map<const VecX>(mj.m->key_qpos, imp.nq);
  for (int a : {3, 7}) key_q.segment<4>(a).normalize();  // MuJoCo normalises at compile time too
  CHECK((kq - key_q).cwiseAbs().maxCoeff() < tol(1e-12));
  CHECK((kv - Eigen::Map<const VecX>(mj.m->key_qvel, imp.nv)).cwiseAbs().maxCoeff() < tol(1e-12));
  // qpos0 as theta: MuJoCo's reference configuration reproduces its body poses
  VecX q0;
  qpos_from_theta(imp, imp.theta0, q0);
  CHECK((q0 - Eigen::Map<const VecX>(mj.m->qpos0, imp.nq)).cwiseAbs().maxCoeff() < tol(1e-12));
}

TEST_CASE("mujoco import: gymnasium models keep their actuators, limits and drop only what is asked", "[mujoco]") {
  const MujocoImport hopper = import_mujoco(gym_asset("hopper"));
  CHECK(hopper.spec.actuators.size() == 3);
  CHECK(hopper.spec.actuators[0].gear == 200);
  CHECK(hopper.dropped.empty());
  // hopper's rootz slides with ref 1.25: theta0 = qpos0
  CHECK(hopper.theta0[1] == 1.25);
  MujocoImportOptions o;
  o.drop_tendons = true;
  const MujocoImport humanoid = import_mujoco(gym_asset("humanoid"), o);
  CHECK(humanoid.spec.actuators.size() == 17);
  CHECK(humanoid.keyframes.size() == 5);
  REQUIRE(!humanoid.dropped.empty());
  CHECK(humanoid.dropped[0].find("tendon") != std::string::npos);
  // ant's aux bodies have no joint: merged into the torso, which keeps its free joint
  const MujocoImport ant = import_mujoco(gym_asset("ant"));
  CHECK(Model::finalize(ant.spec).n_link == 9);
}

namespace {

// import_mujoco(path) must throw InvalidArgument whose one-line message starts with the file
// and holds every needle
void expect_import_error(const std::string& path, const std::vector<std::string>& needles,
                         const MujocoImportOptions& opt = {}) {
  try {
    import_mujoco(path, opt);
    FAIL_CHECK("no error; expected " << needles.front());
  } catch (const InvalidArgument& e) {
    const std::string msg = e.what();
    INFO("message: " << msg);
    CHECK(msg.rfind(path + ": ", 0) == 0);
    CHECK(msg.find('\n') == std::string::npos);
    for (const auto& n : needles) {
      INFO("needle: " << n);
      CHECK(msg.find(n) != std::string::npos);
    }
  }
}

std::string tiny(const std::string& name, const std::string& body, const std::string& extra = "") {
  return write_temp(name + ".xml", "<mujoco><worldbody><geom type='plane' size='1 1 .1'/>" + body +
                                       "</worldbody>" + extra + "</mujoco>");
}

}  // namespace

TEST_CASE("mujoco import: unsupported elements are errors naming file, element and attribute", "[mujoco]") {
  const std::string link = "<body name='b'><joint name='j' type='hinge'/><geom name='g' size='.1'/></body>";
  expect_import_error(
      tiny("mesh", "<body name='b'><joint name='j'/><geom name='rock' type='mesh' mesh='m'/></body>",
           "<asset><mesh name='m' vertex='0 0 0 1 0 0 0 1 0 0 0 1'/></asset>"),
      {"geom 1 (rock)", ".type", "mesh"});
  expect_import_error(
      tiny("tendon", "<body name='b'><joint name='j'/><geom size='.1'/><body name='c'><joint name='k'/><geom size='.1'/></body></body>",
           "<tendon><fixed name='tie'><joint joint='j' coef='1'/><joint joint='k' coef='-1'/></fixed></tendon>"),
      {"tendon 0 (tie)", "drop_tendons"});
  expect_import_error(tiny("equality", link + "<body name='c'><joint name='k'/><geom size='.1'/></body>",
                           "<equality><joint name='couple' joint1='j' joint2='k'/></equality>"),
                      {"equality 0 (couple)", "equality constraints"});
  expect_import_error(tiny("ball_limit", "<body name='b'><joint name='cone' type='ball' limited='true' range='0 0.5'/><geom size='.1'/></body>"),
                      {"joint 0 (cone).limited", "ball"});
  expect_import_error(tiny("friction", "<body name='b'><joint name='j' frictionloss='0.2'/><geom size='.1'/></body>"),
                      {"joint 0 (j).frictionloss", "0.2"});
  expect_import_error(tiny("site_act", "<body name='b'><joint name='j'/><geom size='.1'/><site name='s'/></body>",
                           "<actuator><general name='thruster' site='s' gear='0 0 1 0 0 0'/></actuator>"),
                      {"actuator 0 (thruster).trntype"});
  expect_import_error(tiny("filter", link, "<actuator><general name='slow' joint='j' dyntype='filter' dynprm='0.1'/></actuator>"),
                      {"actuator 0 (slow).dyntype"});
  expect_import_error(tiny("box_box", "<body name='b'><joint name='j' type='slide'/><geom name='crate' type='box' size='.1 .1 .1'/></body>"
                                      "<body name='c'><joint name='k' type='slide'/><geom name='crate2' type='box' size='.1 .1 .1' pos='1 0 0'/></body>"),
                      {"crate", "crate2", "box-box", "no collision function"});
  // hinge / slide springs are bigstep's (LinkSpec stiffness, springref = qpos_spring); a ball's is not
  const MujocoImport cheetah = import_mujoco(gym_asset("half_cheetah"));
  CHECK(cheetah.dropped.empty());
  const Model mc = Model::finalize(cheetah.spec);
  CHECK(mc.has_stiffness);
  CHECK(std::count(mc.dof_stiffness.begin(), mc.dof_stiffness.end(), 240.0) == 1);  // bthigh
  expect_import_error(tiny("ball_spring", "<body name='b'><joint name='j' type='ball' stiffness='3'/><geom size='.1'/></body>"),
                      {"joint 0 (j).stiffness", "3", "drop_joint_stiffness"});
  // a missing file: MuJoCo's own message
  const std::string missing = (temp_dir() / "no_such_model.xml").string();
  expect_import_error(missing, {"MuJoCo could not load it", "no_such_model.xml"});
}

TEST_CASE("mujoco import: every approximation of a shape or contact is listed once", "[mujoco]") {
  // BUG: the cylinder -> capsule, ellipsoid -> sphere and the left-out visual geom were silent
  const MujocoImport imp = import_mujoco(write_temp("kitchen.xml", kKitchen));
  auto line_with = [&](const std::string& a, const std::string& b) {
    return std::count_if(imp.approximations.begin(), imp.approximations.end(), [&](const std::string& l) {
      return l.find(a) != std::string::npos && l.find(b) != std::string::npos;
    });
  };
  CHECK(line_with("1 cylinder(s) became capsules", "(palm)") == 1);
  CHECK(line_with("1 ellipsoid(s) became spheres of their largest semi-axis", "(tip)") == 1);
  CHECK(line_with("1 visual-only geom(s)", "(shell)") == 1);
  CHECK(imp.dropped.empty());
  // a model of spheres, capsules and boxes on a plane of one friction approximates nothing
  const MujocoImport exact = import_mujoco(tiny("exact", "<body name='b'><joint name='j'/><geom size='.1'/></body>"));
  CHECK(exact.approximations.empty());
  // a short cylinder is a sphere; condim 6 loses its torsional and rolling friction
  const MujocoImport other = import_mujoco(
      tiny("short_cyl", "<body name='b'><joint name='j'/><geom name='puck' type='cylinder' size='.1 .05' condim='6'/></body>"));
  REQUIRE(other.approximations.size() == 2);
  CHECK(other.approximations[0].find("1 cylinder(s) no longer than their diameter became spheres of the same radius: geom 1 (puck)") == 0);
  CHECK(other.approximations[1].find("condim other than 3: contacts are condim 3") != std::string::npos);
  CHECK(other.approximations[1].find("geom 1 (puck) condim 6") != std::string::npos);
}

TEST_CASE("mujoco import: a name that is not UTF-8 is refused naming the element", "[mujoco]") {
  // BUG: MuJoCo and the converter took it; the JSON writer threw later (an empty summary.json)
  for (const char* kind : {"body", "joint", "geom", "site", "actuator"}) {
    const std::string bad = "b\xff";
    const std::string body = std::string("<body name='") + (std::string(kind) == "body" ? bad : "b") + "'><joint name='" +
                             (std::string(kind) == "joint" ? bad : "j") + "'/><geom name='" +
                             (std::string(kind) == "geom" ? bad : "g") + "' size='.1'/><site name='" +
                             (std::string(kind) == "site" ? bad : "s") + "'/></body>";
    const std::string act = std::string("<actuator><motor name='") + (std::string(kind) == "actuator" ? bad : "m") +
                            "' joint='" + (std::string(kind) == "joint" ? bad : "j") + "'/></actuator>";
    const std::string path = tiny(std::string("utf8_") + kind, body, act);
    // MuJoCo itself compiles it: the name reaches the converter byte for byte
    char err[1000] = "";
    mjModel* mj = mj_loadXML(path.c_str(), nullptr, err, sizeof err);
    REQUIRE(mj);
    mj_deleteModel(mj);
    const int id = std::string(kind) == "body" || std::string(kind) == "geom" ? 1 : 0;  // body 0 world, geom 0 plane
    expect_import_error(path, {detail::concat(kind, " ", id, ".name = \"b\\xff\""), "not valid UTF-8"});
  }
}

TEST_CASE("mujoco import: go1's collision geoms need filtering before bigstep can collide them", "[mujoco]") {
  // go1.urdf's collision geoms: trunk box, imu box, and per leg hip + rotor cylinders (-> capsules),
  // thigh box + rotor cylinder, calf box + rotor cylinder, foot sphere; MuJoCo fuses the fixed
  // base into the world. Box-box (and box-capsule) pairs survive the filter, so finalize refuses.
  MujocoImportOptions o;
  o.drop_frictionloss = true;
  expect_import_error(go1_urdf(false), {"(world/geom0)", "box-box", "no collision function", "allow: [unsupported_pairs]"}, o);
  expect_import_error(go1_urdf(false), {"frictionloss", "0.2"});
  // skipped one by one when asked, and said so
  o.drop_unsupported_pairs = true;
  const MujocoImport go1 = import_mujoco(go1_urdf(true), o);
  const Model m = Model::finalize(go1.spec);
  CHECK(!m.skipped_pairs.empty());
  CHECK(m.n_pair > 0);
  for (const auto& [a, b] : m.skipped_pairs) CHECK(pair_max_contacts(m.geom_type[a], m.geom_type[b]) == 0);
  CHECK(std::any_of(go1.dropped.begin(), go1.dropped.end(),
                    [](const std::string& d) { return d.find("drop_unsupported_pairs") != std::string::npos; }));
}

#endif
