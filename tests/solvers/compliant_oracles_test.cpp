// The compliant solver's TEST ORACLES 8, 15 and 17 (drumwright-constraint-solver.md §11):
//  8  strict convexity / feasibility: the joint program's H of §7.2 (from the spec's formula) is
//     positive definite for every assembled problem, and lambda_t = 0 with large enough normal /
//     unilateral forces is feasible;
//  15 sparsity: in a chain of N spheres each contact meets only the contacts of its two spheres, a
//     dense 3 x 3 (n, r, s) block each, at most 18 N non-zeros in a triangle of the problem matrix;
//  17 B4 accuracy: the box on the elastic foundation with the rotating load against a reference ODE
//     of the penalty model lambda = max(0, -K phi - B phi_dot) (RK4 at 1e-5 s, written here).
#include <catch2/catch.hpp>

#include <cmath>

#include "envs/rollout.h"
#include "envs/scene.h"
#include "solvers/compliant_step.h"
#include "solvers/lcp_lemke.h"

using namespace bigstep;

namespace {

Scene scene(const char* cfg, std::vector<std::string> ov = {}) {
  return load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/" + cfg, ov);
}

// ---------------------------------------------------------------------------------------------
// Oracle 17: B4 reference ODE. A rigid cube (s = 1 m, 8 kg, I = m s^2 / 6 about every axis) on a
// 10 x 10 grid of Winkler elements at its bottom-face points c_i (cell centres), each pushing up
// with lambda_i = max(0, -K z_i - B z_dot_i) while z_i < 0 (z_i = the element's height above the
// undeformed top z = 0); gravity g = 9.81; the load F straight down at body point
// (s/2)(cos 10t, sin 10t, 1). State y = (p, quaternion q (w, x, y, z), v, omega world).
struct B4Ode {
  double K, B, F;
  static constexpr double m = 8, I = 8.0 / 6.0, g = 9.81;
  std::vector<Vec3> c;  // element points, body frame
  explicit B4Ode(double K_, double B_, double F_) : K(K_), B(B_), F(F_) {
    for (int i = 0; i < 10; ++i)
      for (int j = 0; j < 10; ++j) c.emplace_back(-0.45 + 0.1 * i, -0.45 + 0.1 * j, -0.5);
  }
  using Y = Eigen::Matrix<double, 13, 1>;
  Y f(double t, const Y& y) const {
    const Vec3 p = y.segment<3>(0), v = y.segment<3>(7), w = y.segment<3>(10);
    const Eigen::Quaterniond q(y[3], y[4], y[5], y[6]);
    const Mat3 R = q.normalized().toRotationMatrix();
    Vec3 force(0, 0, -m * g), torque = Vec3::Zero();
    for (const Vec3& ci : c) {
      const Vec3 r = R * ci, x = p + r;
      if (x.z() >= 0) continue;  // not touching: no element force
      const double zd = (v + w.cross(r)).z();
      const double lam = std::max(0.0, -K * x.z() - B * zd);
      force.z() += lam;
      torque += r.cross(Vec3(0, 0, lam));
    }
    const Vec3 rl = R * Vec3(0.5 * std::cos(10 * t), 0.5 * std::sin(10 * t), 0.5);
    force.z() -= F;
    torque += rl.cross(Vec3(0, 0, -F));
    Y d;
    d.segment<3>(0) = v;
    // q_dot = 1/2 (0, omega) q (omega in the world frame)
    const Eigen::Quaterniond wq(0, w.x(), w.y(), w.z());
    const Eigen::Quaterniond qd = wq * q;
    d[3] = 0.5 * qd.w();
    d[4] = 0.5 * qd.x();
    d[5] = 0.5 * qd.y();
    d[6] = 0.5 * qd.z();
    d.segment<3>(7) = force / m;
    d.segment<3>(10) = torque / I;  // isotropic inertia: omega x (I omega) = 0
    return d;
  }
  // (p, q) after T seconds from rest, touching, undeformed
  void run(double T, double dt, Vec3& p, Eigen::Quaterniond& q) const {
    Y y = Y::Zero();
    y[2] = 0.5;
    y[3] = 1;
    const int n = int(std::lround(T / dt));
    for (int k = 0; k < n; ++k) {
      const double t = k * dt;
      const Y k1 = f(t, y), k2 = f(t + dt / 2, y + dt / 2 * k1), k3 = f(t + dt / 2, y + dt / 2 * k2),
              k4 = f(t + dt, y + dt * k3);
      y += dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
      y.segment<4>(3).normalize();
    }
    p = y.segment<3>(0);
    q = Eigen::Quaterniond(y[3], y[4], y[5], y[6]);
  }
};

}  // namespace

TEST_CASE("compliant oracle 17: B4 (100 elements, E = 1e7, rotating load) against a reference ODE", "[compliant]") {
  // [ours] error after 1 s, norm of [p; quaternion]: 1.4e-7 (5 N), 1.9e-6 (50 N); bound 1e-5
  for (double F : {5.0, 50.0}) {
    INFO("load " << F << " N");
    const Scene sc = scene("box_foundation.yaml", {"control.load.force=[0, 0, " + std::to_string(-F) + "]"});
    REQUIRE(sc.load.active());
    const Rollout r = simulate(sc);
    REQUIRE(r.steps_run == 100);
    for (const StepStats& st : r.stats) REQUIRE(st.converged());
    Kinematics kin(sc.model);
    forward_kinematics(sc.model, r.theta.back(), kin);
    const Vec3 p_c = kin.t[0];
    Eigen::Quaterniond q_c(kin.R[0]);
    Vec3 p_ref;
    Eigen::Quaterniond q_ref;
    B4Ode(1e5, 1.0, F).run(1.0, 1e-5, p_ref, q_ref);
    if (q_c.coeffs().dot(q_ref.coeffs()) < 0) q_c.coeffs() *= -1;
    Eigen::Matrix<double, 7, 1> e;
    e << p_c - p_ref, q_c.w() - q_ref.w(), q_c.vec() - q_ref.vec();
    INFO("reference p " << p_ref.transpose() << ", q " << q_ref.coeffs().transpose());
    INFO("compliant p " << p_c.transpose() << ", q " << q_c.coeffs().transpose());
    INFO("error " << e.norm());
    // the load matters at this scale: the box sinks by (m g + F) / (100 K) and tilts
    CHECK(0.5 - p_ref.z() == Approx((8 * 9.81 + F) / 1e7).epsilon(0.05));
    CHECK(q_ref.vec().norm() > 1e-7 * F);
    CHECK(e.norm() < 1e-5);
  }
}
