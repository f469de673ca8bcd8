// Composite (subtree) moments of PBD / PBFD (composite_moments.h has the formulas).
#include "core/composite_moments.h"

namespace bigstep {

namespace {
// tr(W_top X) = s . tr6(X) for a twist s = (w, v), W_top = [w^ v] (3 x 4) and any 4 x 3 X
template <class X>
Vec6 tr6(const X& x) {
  Vec6 y;
  y << x(1, 2) - x(2, 1), x(2, 0) - x(0, 2), x(0, 1) - x(1, 0), x(3, 0), x(3, 1), x(3, 2);
  return y;
}

// W_top = [w^ v] of twist s
Eigen::Matrix<double, 3, 4> twist_top(const Vec6& s) {
  Eigen::Matrix<double, 3, 4> W;
  W.leftCols<3>() = skew(Vec3(s.head<3>()));
  W.col(3) = s.tail<3>();
  return W;
}
}  // namespace

void begin_moments(const Model& m, const Kinematics& kin, const InertiaAnchor& an, double dt,
                   const double* ms, bool with_jacobian, CompositeMoments& cm) {
  const double s = 1 / (dt * dt);
  cm.with_jacobian = with_jacobian;
  for (int j = 0; j < m.n_link; ++j) {
    const double sj = link_scale(ms, j), mj = sj * m.link_mass[j];
    const Vec3& c = m.link_com[j];
    // Y_j Sigma_j = [R S + t m c^T, m (R c + t); m c^T, m]  (Sigma_j scaled by the rollout's s_j)
    const Vec3 x = kin.R[j] * c + kin.t[j];
    Mat4 YS;
    YS.topLeftCorner<3, 3>().noalias() = sj * kin.R[j] * m.link_S[j] + mj * kin.t[j] * c.transpose();
    YS.topRightCorner<3, 1>() = mj * x;
    YS.bottomLeftCorner<1, 3>() = mj * c.transpose();
    YS(3, 3) = mj;
    // inertia (docs/methods/pbfd.md §3): G_j = Y_j Sigma_j [A_j b_j]^T / dt^2, A_j = R_j - Rhat_j, b_j = t_j - that_j
    Mat43 Bt;
    Bt.topRows<3>() = (kin.R[j] - an.R[j]).transpose();
    Bt.row(3) = (kin.t[j] - an.t[j]).transpose();
    cm.G[size_t(j)].noalias() = s * YS * Bt;
    // gravity V = -sum_j m_j g . x_j: the force -m_j g at the COM
    add_point_force(cm, j, x, -mj * m.gravity);
    if (!with_jacobian) continue;
    // mass moment Y_j Sigma_j Y_j^T / dt^2 (the mass matrix term), no stiffness yet
    Mat4 Yt = Mat4::Zero();
    Yt.topLeftCorner<3, 3>() = kin.R[j].transpose();
    Yt.bottomLeftCorner<1, 3>() = kin.t[j].transpose();
    Yt(3, 3) = 1;
    cm.P[size_t(j)].noalias() = s * YS * Yt;
    cm.K[size_t(j)].setZero();
  }
}

void finish_moments(const Model& m, const Kinematics& kin, CompositeMoments& cm, VecX& r, MatX* Jr,
                    bool force_curvature) {
  const bool jac = Jr && cm.with_jacobian;
  // subtree sums, children after their parents in Model order
  for (int j = m.n_link - 1; j >= 0; --j) {
    const int p = m.link_parent[j];
    if (p < 0) continue;
    cm.G[size_t(p)] += cm.G[size_t(j)];
    if (!jac) continue;
    cm.P[size_t(p)] += cm.P[size_t(j)];
    cm.K[size_t(p)] += cm.K[size_t(j)];
  }
  // DOF twists and the first-order terms r_k += tr(W_k G_sub(k))
  for (int k = 0; k < m.n_q; ++k) {
    Vec6& s = cm.s[size_t(k)];
    if (m.dof_revolute[k]) s << kin.w[k], kin.o[k].cross(kin.w[k]);
    else s << Vec3::Zero(), kin.w[k];
    r[k] += s.dot(tr6(cm.G[size_t(m.dof_link[k])]));
  }
  if (!jac) return;
  // J_al += s_a . (tr6(P W_l^T + W_l G) + K6 s_l) for a <= l moving link(l); J_la with K6^T
  for (int l = 0; l < m.n_q; ++l) {
    const int j = m.dof_link[l];
    const Vec6& sl = cm.s[size_t(l)];
    const Eigen::Matrix<double, 3, 4> Wl = twist_top(sl);
    Mat43 X = cm.P[size_t(j)] * Wl.transpose();
    if (force_curvature) X.topRows<3>().noalias() += Wl * cm.G[size_t(j)];
    const Vec6 y = tr6(X);
    const Vec6 u = y + cm.K[size_t(j)] * sl, ut = y + cm.K[size_t(j)].transpose() * sl;
    for (int a = 0; a < l; ++a) {
      if (!m.moves(a, j)) continue;
      const Vec6& sa = cm.s[size_t(a)];
      (*Jr)(a, l) += sa.dot(u);
      (*Jr)(l, a) += sa.dot(ut);
    }
    (*Jr)(l, l) += sl.dot(u);
  }
}

}  // namespace bigstep
