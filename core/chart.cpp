// Rotation charts of ball and floating joints: ZYX angles, their rate matrix and re-anchoring
// (docs/methods/orientation.md).
#include "core/chart.h"

#include <cmath>

namespace bigstep {

Mat3 zyx_rotation(const double* e) {
  // the elementary rotations composed as forward_kinematics composes them
  return axis_rotation(Vec3::UnitZ(), e[0]) * axis_rotation(Vec3::UnitY(), e[1]) * axis_rotation(Vec3::UnitX(), e[2]);
}

Vec3 zyx_angles(const Mat3& R) {
  // first column (ca cb, sa cb, -sb), last row (-sb, cb sc, cb cc)
  return Vec3(std::atan2(R(1, 0), R(0, 0)), std::atan2(-R(2, 0), std::hypot(R(0, 0), R(1, 0))),
              std::atan2(R(2, 1), R(2, 2)));
}

Mat3 zyx_rate_matrix(const double* e) {
  // column k: the k-th elementary axis seen from the rotated (child) frame
  const double sb = std::sin(e[1]), cb = std::cos(e[1]), sc = std::sin(e[2]), cc = std::cos(e[2]);
  Mat3 E;
  E << -sb, 0, 1,  //
      cb * sc, cc, 0,  //
      cb * cc, -sc, 0;
  return E;
}

bool chart_admissible(const Model& m, const VecX& theta) {
  for (int c = 0; c < m.n_chart; ++c)
    if (std::abs(std::cos(theta[m.chart_dof[c] + 1])) < kChartTrialCos) return false;
  return true;
}

bool chart_needs_anchor(const Model& m, const VecX& theta) {
  for (int c = 0; c < m.n_chart; ++c)
    if (std::abs(std::cos(theta[m.chart_dof[c] + 1])) < kChartAnchorCos) return true;
  return false;
}

void rechart_angles(const Model& m, int c, const Mat3& Rn, VecX& v) {
  double* e = v.data() + m.chart_dof[c];
  const Vec3 a = zyx_angles(Rn.transpose() * zyx_rotation(e));
  e[0] = a[0], e[1] = a[1], e[2] = a[2];
}

void to_identity_chart(const Model& m, const Mat3* chart, VecX& theta) {
  if (!chart) return;
  for (int c = 0; c < m.n_chart; ++c) {
    if (chart[c] == Mat3::Identity()) continue;
    double* e = theta.data() + m.chart_dof[c];
    const Vec3 a = zyx_angles(chart[c] * zyx_rotation(e));
    e[0] = a[0], e[1] = a[1], e[2] = a[2];
  }
}

int anchor_charts(const Model& m, Data& d, bool keep_rate) {
  int moved = 0;
  for (int c = 0; c < m.n_chart; ++c) {
    const int k = m.chart_dof[c];
    if (std::abs(std::cos(d.theta[k + 1])) >= kChartAnchorCos) continue;
    ++moved;
    const Mat3 Rn = zyx_rotation(d.theta.data() + k);
    // omega = E(theta_n) (theta_n - theta_{n-1}), in the body frame (unchanged by the chart)
    const Vec3 omega = zyx_rate_matrix(d.theta.data() + k) * (d.theta.segment<3>(k) - d.theta_prev.segment<3>(k));
    // the new chart, kept a rotation to rounding
    Eigen::Quaterniond q(Mat3(d.chart[size_t(c)] * Rn));
    q.normalize();
    d.chart[size_t(c)] = q.toRotationMatrix();
    // every configuration a method reads, by the same function of its old angles
    rechart_angles(m, c, Rn, d.theta);
    if (keep_rate) {
      d.theta_prev.segment<3>(k) =
          d.theta.segment<3>(k) - zyx_rate_matrix(d.theta.data() + k).inverse() * omega;
    } else {
      rechart_angles(m, c, Rn, d.theta_prev);
    }
    for (VecX* v : {&d.history.theta_n, &d.history.theta_nm1, &d.history.theta_nm2, &d.history.theta_next,
                    &d.history.nm2, &d.nmdp.frame_start, &d.nmdp.theta_m, &d.nmdp.theta_mm})
      rechart_angles(m, c, Rn, *v);
  }
  return moved;
}

}  // namespace bigstep
