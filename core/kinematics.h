// Forward kinematics, link-pose derivatives by the twist rule, point Jacobians and
// point second derivatives (docs/methods/pbfd.md §2.2-§2.3).
#pragma once
#include <vector>

#include "core/model.h"

namespace bigstep {

/// One configuration's kinematic quantities. Built from a Model; filled by forward_kinematics().
struct Kinematics {
  explicit Kinematics(const Model& m);

  /// (n_chart) the rollout's rotation charts (core/chart.h), nullptr = identity; not owned
  const Mat3* chart = nullptr;

  // computed by forward_kinematics()
  std::vector<Mat3> R;   ///< (n_link) world orientation R_j
  std::vector<Vec3> t;   ///< (n_link) world origin t_j
  std::vector<Vec3> w;   ///< (n_q) world axis: omega_k (revolute) or u_k (prismatic)
  std::vector<Vec3> o;   ///< (n_q) world point on the axis of a revolute DOF
  // computed by link_derivatives(); zero where DOF k does not move link j
  std::vector<Mat3> dR;  ///< (n_link x n_q) d R_j / d theta_k at [j * n_q + k]
  std::vector<Vec3> dt;  ///< (n_link x n_q) d t_j / d theta_k
};

/// Poses of every link and DOF axes at theta (dim n_q), the Euler angles of ball / floating
/// joints read in kin.chart (core/chart.h). O(L).
void forward_kinematics(const Model& m, const VecX& theta, Kinematics& kin);

/// First derivatives of every link pose (docs/methods/pbfd.md §2.3). Needs forward_kinematics first. O(L D).
void link_derivatives(const Model& m, Kinematics& kin);

/// a |> (M, v): action of DOF a on a direction-like pair, in place (docs/methods/pbfd.md §2.3).
inline void dof_act(const Model& m, const Kinematics& kin, int a, Mat3& M, Vec3& v) {
  if (m.dof_revolute[a]) {
    M = skew(kin.w[a]) * M;
    v = kin.w[a].cross(v);
  } else {
    M.setZero();
    v.setZero();
  }
}

/// World position of local point x of link j.
inline Vec3 point_position(const Kinematics& kin, int j, const Vec3& x) {
  return kin.R[j] * x + kin.t[j];
}

/// Column k of the Jacobian of world point p on a link that DOF k moves: omega_k x (p - o_k)
/// (revolute) or u_k (prismatic).
inline Vec3 point_jacobian_column(const Model& m, const Kinematics& kin, int k, const Vec3& p) {
  return m.dof_revolute[k] ? Vec3(kin.w[k].cross(p - kin.o[k])) : kin.w[k];
}

/// Point Jacobian J_p = dX(x, theta)/dtheta (3 x n_q) of world point p on link j.
void point_jacobian(const Model& m, const Kinematics& kin, int j, const Vec3& p,
                    Eigen::Ref<MatX> J);

/// Hess += scale * sum_i w_i d^2 p_i / dtheta dtheta (n_q x n_q), J from point_jacobian.
/// d^2p/dtheta_a dtheta_b = omega_a x J_b for revolute a <= b on the path, 0 if a is prismatic.
void add_point_hessian(const Model& m, const Kinematics& kin, int j, const MatX& J,
                       const Vec3& w, double scale, MatX& Hess);
/// Same with the Jacobian columns of world point p computed on the fly (no J needed).
void add_point_hessian(const Model& m, const Kinematics& kin, int j, const Vec3& p,
                       const Vec3& w, double scale, MatX& Hess);

/// Checks the middle Euler angles; true when some |cos| < 1e-6 (gimbal lock, docs/methods/pbfd.md §2.1).
bool gimbal_locked(const Model& m, const VecX& theta);

}  // namespace bigstep
