// Rotation charts of ball and floating joints (core/chart.h): the ZYX maps, the kinematics,
// dynamics and derivatives read in a chart, and the re-anchoring of a rollout's state.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/chart.h"
#include "core/crba.h"
#include "core/kinematics.h"
#include "core/rnea.h"
#include "tests/support/random_models.h"

using namespace bigstep;
using namespace bigstep::test;

namespace {

// a floating root with ball, hinge, prismatic and planar children: two charts
Model chart_model(uint32_t seed) {
  RandomModelOptions opt;
  opt.root = JointType::Floating;
  opt.children = {JointType::Ball, JointType::Hinge, JointType::Prismatic, JointType::Planar};
  return random_model(seed, opt).model;
}

std::vector<Mat3> random_charts(const Model& m, Rng& rng) {
  std::vector<Mat3> c(size_t(m.n_chart));
  for (Mat3& C : c) C = random_rotation(rng);
  return c;
}

// theta re-expressed in the identity chart (every chart's angles: zyx_angles(C R(angles)))
VecX in_identity(const Model& m, const std::vector<Mat3>& chart, VecX th) {
  to_identity_chart(m, chart.data(), th);
  return th;
}

}  // namespace

TEST_CASE("chart: zyx_angles inverts zyx_rotation; E maps angle rates to the body angular velocity", "[chart]") {
  Rng rng(11);
  for (int i = 0; i < 200; ++i) {
    const Vec3 e(uniform(rng, -3.1, 3.1), uniform(rng, -1.5, 1.5), uniform(rng, -3.1, 3.1));
    const Mat3 R = zyx_rotation(e.data());
    CHECK((R - axis_rotation(Vec3::UnitZ(), e[0]) * axis_rotation(Vec3::UnitY(), e[1]) *
                   axis_rotation(Vec3::UnitX(), e[2])).norm() < 1e-15);
    CHECK((zyx_angles(R) - e).norm() < 1e-12);
    // omega_body = R^T dR/dt by central differences along a random rate
    const Vec3 ed = uniform_vec(rng, -2, 2);
    const double h = 1e-6;
    const Vec3 ep = e + h * ed, em = e - h * ed;
    const Mat3 Rd = (zyx_rotation(ep.data()) - zyx_rotation(em.data())) / (2 * h);
    const Mat3 W = R.transpose() * Rd;
    const Vec3 omega(W(2, 1), W(0, 2), W(1, 0));
    CHECK((zyx_rate_matrix(e.data()) * ed - omega).norm() < 1e-8 * (1 + omega.norm()));
  }
}

TEST_CASE("chart: kinematics in a chart equal the identity chart's at the re-expressed angles", "[chart]") {
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    const Model m = chart_model(seed);
    REQUIRE(m.n_chart == 2);
    Rng rng(100 + seed);
    const std::vector<Mat3> chart = random_charts(m, rng);
    const VecX th = random_theta(m, rng);
    Kinematics kc(m), ki(m);
    kc.chart = chart.data();
    forward_kinematics(m, th, kc);
    forward_kinematics(m, in_identity(m, chart, th), ki);
    for (int j = 0; j < m.n_link; ++j) {
      INFO("seed " << seed << " link " << j);
      CHECK((kc.R[j] - ki.R[j]).norm() < 1e-12);
      CHECK((kc.t[j] - ki.t[j]).norm() < 1e-12);
    }
    // RNEA in the chart: the same world poses (so the same potential energy gradient up to the
    // angle map) and tau = H qdd + c, H from CRBA in the chart
    const VecX qd = uniform_vecx(rng, m.n_q, -1, 1), qdd = uniform_vecx(rng, m.n_q, -1, 1);
    RneaScratch rs(m);
    rs.chart = chart.data();
    VecX tau(m.n_q), bias(m.n_q);
    rnea(m, th, qd, qdd, tau, rs);
    nonlinear_effects(m, th, qd, bias, rs);
    CrbaScratch cs(m);
    cs.kin.chart = chart.data();
    MatX H;
    crba(m, th, H, cs);
    CHECK((tau - (H * qdd + bias)).norm() < 1e-10 * (1 + tau.norm()));
    // kinetic energy is the body's, whatever the chart: the chart angles' rates map to the same
    // body angular velocity as the identity chart's, E(theta) theta_dot = E(theta') theta_dot'
    const VecX thi = in_identity(m, chart, th);
    VecX qdi = qd;
    for (int c = 0; c < m.n_chart; ++c) {
      const int k = m.chart_dof[c];
      qdi.segment<3>(k) = zyx_rate_matrix(thi.data() + k).inverse() * zyx_rate_matrix(th.data() + k) * qd.segment<3>(k);
    }
    MatX Hi;
    crba(m, thi, Hi);
    CHECK(std::abs(qd.dot(H * qd) - qdi.dot(Hi * qdi)) < 1e-10 * (1 + qd.dot(H * qd)));
  }
}

TEST_CASE("chart: point Jacobians in a chart match central differences", "[chart][fd]") {
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    const Model m = chart_model(seed);
    Rng rng(200 + seed);
    const std::vector<Mat3> chart = random_charts(m, rng);
    const VecX th = random_theta(m, rng);
    Kinematics kin(m);
    kin.chart = chart.data();
    forward_kinematics(m, th, kin);
    for (int j = 0; j < m.n_link; ++j) {
      const Vec3 x = uniform_vec(rng, -0.5, 0.5);
      MatX J(3, m.n_q);
      point_jacobian(m, kin, j, point_position(kin, j, x), J);
      const MatX fd = fd_jacobian(
          [&](const VecX& q) {
            Kinematics k2(m);
            k2.chart = chart.data();
            forward_kinematics(m, q, k2);
            return VecX(point_position(k2, j, x));
          },
          th);
      INFO("seed " << seed << " link " << j);
      CHECK(rel_err(J, fd) < fd_tol());
    }
  }
}

TEST_CASE("chart: anchor_charts keeps every pose and the body rate, and bit-equal states stay bit-equal", "[chart]") {
  const Model m = chart_model(3);
  Rng rng(300);
  for (bool keep_rate : {false, true}) {
    Data d(m);
    d.chart = random_charts(m, rng);
    d.theta = random_theta(m, rng);
    const int k0 = m.chart_dof[0], k1 = m.chart_dof[1];
    d.theta[k0 + 1] = 1.2;                                   // chart 0 past the bound: re-anchored
    d.theta[k1 + 1] = 0.3;                                   // chart 1 well inside: left alone
    d.theta_prev = d.theta + 0.02 * uniform_vecx(rng, m.n_q, -1, 1);
    d.history.theta_next = d.theta;                          // a recorded step that ended at theta_n
    d.history.theta_n = d.theta_prev;
    const std::vector<Mat3> chart0 = d.chart;
    const VecX th0 = d.theta, prev0 = d.theta_prev;
    const Vec3 omega0 = zyx_rate_matrix(th0.data() + k0) * (th0 - prev0).segment<3>(k0);
    REQUIRE(chart_needs_anchor(m, d.theta));
    CHECK(anchor_charts(m, d, keep_rate) == 1);
    CHECK_FALSE(chart_needs_anchor(m, d.theta));
    CHECK(std::abs(d.theta[k0 + 1]) < 1e-12);
    CHECK(d.chart[1] == chart0[1]);
    CHECK(d.theta.segment<3>(k1) == th0.segment<3>(k1));
    CHECK((d.chart[0] * d.chart[0].transpose() - Mat3::Identity()).norm() < 1e-14);
    // the pose at theta_n, whatever the re-expression
    CHECK((chart_orientation(m, d.chart.data(), 0, d.theta) - chart_orientation(m, chart0.data(), 0, th0)).norm() < 1e-12);
    if (keep_rate) {
      const Vec3 omega = zyx_rate_matrix(d.theta.data() + k0) * (d.theta - d.theta_prev).segment<3>(k0);
      CHECK((omega - omega0).norm() < 1e-12);
    } else {
      CHECK((chart_orientation(m, d.chart.data(), 0, d.theta_prev) - chart_orientation(m, chart0.data(), 0, prev0)).norm() <
            1e-12);
    }
    // configurations that were bit-equal stay so (the multistep history's continuation test)
    CHECK(d.history.theta_next == d.theta);
    if (!keep_rate) CHECK(d.history.theta_n == d.theta_prev);
  }
}
