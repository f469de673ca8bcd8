// Forward kinematics and the twist-rule derivatives (docs/methods/pbfd.md §2.2-§2.3).
#include "core/kinematics.h"

#include <cmath>

namespace bigstep {

Kinematics::Kinematics(const Model& m)
    : R(m.n_link, Mat3::Identity()), t(m.n_link, Vec3::Zero()), w(m.n_q, Vec3::Zero()),
      o(m.n_q, Vec3::Zero()), dR(size_t(m.n_link) * m.n_q, Mat3::Zero()),
      dt(size_t(m.n_link) * m.n_q, Vec3::Zero()) {}

void forward_kinematics(const Model& m, const VecX& theta, Kinematics& kin) {
  for (int j = 0; j < m.n_link; ++j) {
    // start from the parent pose, apply the constant joint offset
    Mat3 R = m.link_parent[j] < 0 ? Mat3::Identity() : kin.R[m.link_parent[j]];
    Vec3 t = m.link_parent[j] < 0 ? Vec3::Zero() : kin.t[m.link_parent[j]];
    t = R * m.link_t_o[j] + t;
    R = R * m.link_R_o[j];
    // elementary DOFs in composition order; a chart C sits just before a 3-angle joint's rz, taken
    // with that DOF as the axis C a and the rotation C Rot (the team form's association)
    const int c = kin.chart ? m.link_chart[j] : -1;
    for (int k = m.link_dof_adr[j]; k < m.link_dof_adr[j] + m.link_dof_num[j]; ++k) {
      const bool charted = c >= 0 && k == m.chart_dof[c];
      kin.w[k] = charted ? Vec3(R * (kin.chart[c] * m.dof_axis[k])) : Vec3(R * m.dof_axis[k]);
      if (m.dof_revolute[k]) {
        kin.o[k] = t;
        R = charted ? Mat3(R * (kin.chart[c] * axis_rotation(m.dof_axis[k], theta[k])))
                    : Mat3(R * axis_rotation(m.dof_axis[k], theta[k]));
      } else {
        kin.o[k] = t;
        t += kin.w[k] * theta[k];
      }
    }
    kin.R[j] = R;
    kin.t[j] = t;
  }
}

void link_derivatives(const Model& m, Kinematics& kin) {
  for (int j = 0; j < m.n_link; ++j)
    for (int k = 0; k < m.n_q; ++k) {
      Mat3& dR = kin.dR[size_t(j) * m.n_q + k];
      Vec3& dt = kin.dt[size_t(j) * m.n_q + k];
      if (!m.moves(k, j)) {
        dR.setZero();
        dt.setZero();
      } else if (m.dof_revolute[k]) {
        dR = skew(kin.w[k]) * kin.R[j];
        dt = kin.w[k].cross(kin.t[j] - kin.o[k]);
      } else {
        dR.setZero();
        dt = kin.w[k];
      }
    }
}

void point_jacobian(const Model& m, const Kinematics& kin, int j, const Vec3& p,
                    Eigen::Ref<MatX> J) {
  for (int k = 0; k < m.n_q; ++k) {
    if (!m.moves(k, j))
      J.col(k).setZero();
    else if (m.dof_revolute[k])
      J.col(k) = kin.w[k].cross(p - kin.o[k]);
    else
      J.col(k) = kin.w[k];
  }
}

namespace {
// Hess += scale sum_ab w . (omega_a x J_b) over revolute a <= b on the path of link j; col(b) = J_b
template <class Col>
void add_point_hessian_cols(const Model& m, const Kinematics& kin, int j, Col col, const Vec3& w, double scale,
                            MatX& Hess) {
  for (int a = 0; a < m.n_q; ++a) {
    if (!m.moves(a, j) || !m.dof_revolute[a]) continue;
    // (omega_a x J_b) . w = (J_b x w) . omega_a ; only b >= a on the path contribute
    const Vec3 wa = scale * kin.w[a];
    for (int b = a; b < m.n_q; ++b) {
      if (!m.moves(b, j)) continue;
      const double h = w.dot(wa.cross(col(b)));
      Hess(a, b) += h;
      if (b != a) Hess(b, a) += h;
    }
  }
}
}  // namespace

void add_point_hessian(const Model& m, const Kinematics& kin, int j, const MatX& J,
                       const Vec3& w, double scale, MatX& Hess) {
  add_point_hessian_cols(m, kin, j, [&](int b) { return Vec3(J.col(b).head<3>()); }, w, scale, Hess);
}

void add_point_hessian(const Model& m, const Kinematics& kin, int j, const Vec3& p,
                       const Vec3& w, double scale, MatX& Hess) {
  add_point_hessian_cols(m, kin, j, [&](int b) { return point_jacobian_column(m, kin, b, p); }, w, scale, Hess);
}

bool gimbal_locked(const Model& m, const VecX& theta) {
  for (int k : m.gimbal_dof)
    if (std::abs(std::cos(theta[k])) < 1e-6) return true;
  return false;
}

}  // namespace bigstep
