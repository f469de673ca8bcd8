// Composite (subtree) moments: the terms of PBD / PBFD (Eq. 6, Eq. 13) that are sums over links
// of products with link-pose derivatives, evaluated CRBA-style in O(L + D^2) instead of per link
// and DOF pair (docs/methods/pbfd.md §2.3-§2.4, §3, §4.2-§4.4).
//
// In homogeneous form a link pose is Y_j = [R_j t_j; 0 1] and DOF k acts by the twist matrix
// W_k = [w^_k  o_k x w_k; 0 0] (revolute) or [0 u_k; 0 0] (prismatic), so d_k Y_j = W_k Y_j and
// d_k d_l Y_j = W_k W_l Y_j for k <= l on the root->j path (docs/methods/pbfd.md §2.3). With the 4 x 4 mass
// moment Sigma_j = [S_j m_j c_j; m_j c_j^T m_j], <(A,a),(B,b)>_j = tr([A a] Sigma_j [B b]^T)
// (§2.4). Every first-order term is then tr(W_k G) and every second-order term tr(W_k W_l G)
// for a 4 x 3 moment G summed over the links that k (or l) moves:
//   inertia (§3):        G_j = Y_j Sigma_j [A_j b_j]^T / dt^2,  plus the mass matrix / dt^2 from
//                        P_j = Y_j Sigma_j Y_j^T / dt^2:  H_kl = tr(W_k P_sub(l) W_l^T)
//   a force f at world point x on link j (gravity -m_j g at the COM, contact forces):
//                        G_j += [x; 1] f^T  (residual += J_x^T f, Jacobian += f . d^2 x)
//   a 3 x 3 stiffness K at point x (J_x^T K J_x, contacts against the world):
//                        K6_j += X^T K X,  X = [-x^  I] (3 x 6), J_x col k = X s_k,
//                        s_k = (w_k, o_k x w_k) or (0, u_k) the DOF's world twist.
// finish() sums each moment over the subtree (children after parents, Model order) and forms
//   r_k += tr(W_k G_sub(k)),  J_kl += tr(W_k (P_sub(l) W_l^T + W_l G_sub(l))) + s_k^T K6_sub(l) s_l
// for k <= l with k moving link(l) (J_lk the same with K6 transposed); other pairs are zero.
// Users: the PBFD residual r, J_r (Eq. 13, solvers/pbd/pbd_residual.cpp) and the PBD objective's
// grad E and model matrices (Eq. 6, solvers/pbd/pbd_objective.cpp).
#pragma once
#include <vector>

#include "core/inertia.h"

namespace bigstep {

using Mat4 = Eigen::Matrix4d;
using Mat43 = Eigen::Matrix<double, 4, 3>;
using Mat6 = Eigen::Matrix<double, 6, 6>;
using Vec6 = Eigen::Matrix<double, 6, 1>;

/// Per-link moments of one iterate (sized from the Model: no allocation in a step).
struct CompositeMoments {
  explicit CompositeMoments(const Model& m)
      : G(size_t(m.n_link), Mat43::Zero()), P(size_t(m.n_link), Mat4::Zero()),
        K(size_t(m.n_link), Mat6::Zero()), s(size_t(m.n_q), Vec6::Zero()), y(size_t(m.n_q), Vec6::Zero()) {}
  std::vector<Mat43> G;  ///< (n_link) first/second-order moment (above)
  std::vector<Mat4> P;   ///< (n_link) mass second moment / dt^2 (Jacobian only)
  std::vector<Mat6> K;   ///< (n_link) point stiffnesses (Jacobian only)
  std::vector<Vec6> s;   ///< (n_q) DOF twists (finish)
  std::vector<Vec6> y;   ///< (n_q) scratch of finish
  bool with_jacobian = false;
};

/// Starts the moments at kin (forward_kinematics done) with the inertia term of anchor an
/// (docs/methods/pbfd.md §3) and gravity; with_jacobian: also the mass moments and zero stiffnesses.
void begin_moments(const Model& m, const Kinematics& kin, const InertiaAnchor& an, double dt,
                   const double* mass_scale, bool with_jacobian, CompositeMoments& cm);

/// Force f at world point x on link j (nothing for the world, j < 0).
inline void add_point_force(CompositeMoments& cm, int j, const Vec3& x, const Vec3& f) {
  if (j < 0) return;
  cm.G[size_t(j)].topRows<3>().noalias() += x * f.transpose();
  cm.G[size_t(j)].row(3) += f.transpose();
}

/// Stiffness J_x^T K J_x of world point x on link j (K need not be symmetric). Inline: it runs
/// once per contact in every iterate's contact loop.
inline void add_point_stiffness(CompositeMoments& cm, int j, const Vec3& x, const Mat3& K) {
  if (j < 0) return;
  // X^T K X with X = [-x^ I]: [[-x^ K x^, x^ K], [-K x^, K]], by cross products (x^ a = x x a,
  // row b^T x^ = (b x x)^T): the same products and sums as the skew-matrix form, none with a zero
  Mat3 xK, Kx, xKx;
  for (int i = 0; i < 3; ++i) xK.col(i) = x.cross(K.col(i));
  for (int i = 0; i < 3; ++i) {
    Kx.row(i) = Vec3(K.row(i).transpose()).cross(x).transpose();
    xKx.row(i) = Vec3(xK.row(i).transpose()).cross(x).transpose();
  }
  Mat6& K6 = cm.K[size_t(j)];
  K6.topLeftCorner<3, 3>() -= xKx;
  K6.topRightCorner<3, 3>() += xK;
  K6.bottomLeftCorner<3, 3>() -= Kx;
  K6.bottomRightCorner<3, 3>() += K;
}


/// r += the first-order terms; Jr (when set, needs with_jacobian) += the second-order ones.
/// force_curvature = false leaves out the f . d^2x part tr(W_k W_l G) (inertia, gravity and point
/// forces through their second kinematic derivatives): Jr then gets the mass matrix / dt^2 (from P)
/// plus the stiffnesses, the Gauss-Newton model of Eq. 6 (docs/methods/pbfd.md §5, A4).
void finish_moments(const Model& m, const Kinematics& kin, CompositeMoments& cm, VecX& r, MatX* Jr,
                    bool force_curvature = true);

}  // namespace bigstep
