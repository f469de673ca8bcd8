// Mass moments, mass matrix, inertia integral and gravity (docs/methods/pbfd.md §2.4, §3).
#include "core/inertia.h"

namespace bigstep {

double moment_product(const Model& m, int j, const Mat3& A, const Vec3& a, const Mat3& B,
                      const Vec3& b, const double* mass_scale) {
  const double tr = (A * m.link_S[j]).cwiseProduct(B).sum();  // tr(A S B^T)
  const double v = tr + m.link_mass[j] * (a.dot(B * m.link_com[j]) + b.dot(A * m.link_com[j]) + a.dot(b));
  return mass_scale ? mass_scale[j] * v : v;  // linear in (m_j, S_j)
}

void mass_matrix(const Model& m, const Kinematics& kin, MatX& H, const double* ms) {
  H.setZero(m.n_q, m.n_q);
  for (int j = 0; j < m.n_link; ++j) {
    const size_t base = size_t(j) * m.n_q;
    for (int k = 0; k < m.n_q; ++k) {
      if (!m.moves(k, j)) continue;
      for (int l = k; l < m.n_q; ++l) {
        if (!m.moves(l, j)) continue;
        H(k, l) += moment_product(m, j, kin.dR[base + k], kin.dt[base + k], kin.dR[base + l],
                                  kin.dt[base + l], ms);
      }
    }
  }
  H.triangularView<Eigen::StrictlyLower>() = H.transpose().triangularView<Eigen::StrictlyLower>();
}

InertiaAnchor make_inertia_anchor(const Kinematics& kin_prev, const Kinematics& kin_prev2,
                                  double a) {
  InertiaAnchor an;
  make_inertia_anchor(kin_prev, kin_prev2, a, an);
  return an;
}

void make_inertia_anchor(const Kinematics& kin_prev, const Kinematics& kin_prev2, double a, InertiaAnchor& an) {
  const size_t L = kin_prev.R.size();
  an.R.resize(L);
  an.t.resize(L);
  for (size_t j = 0; j < L; ++j) {
    an.R[j] = (1 + a) * kin_prev.R[j] - a * kin_prev2.R[j];
    an.t[j] = (1 + a) * kin_prev.t[j] - a * kin_prev2.t[j];
  }
}

void add_inertia_anchor(const Kinematics& kin, double w, InertiaAnchor& an) {
  for (size_t j = 0; j < an.R.size(); ++j) {
    an.R[j] += w * kin.R[j];
    an.t[j] += w * kin.t[j];
  }
}

double inertia_value(const Model& m, const Kinematics& kin, const InertiaAnchor& an, double dt, const double* ms) {
  double s = 0;
  for (int j = 0; j < m.n_link; ++j) {
    const Mat3 A = kin.R[j] - an.R[j];
    const Vec3 b = kin.t[j] - an.t[j];
    s += moment_product(m, j, A, b, A, b, ms);
  }
  return s / (2 * dt * dt);
}

void add_inertia_gradient(const Model& m, const Kinematics& kin, const InertiaAnchor& an,
                          double dt, VecX& grad, const double* ms) {
  const double s = 1 / (dt * dt);
  for (int j = 0; j < m.n_link; ++j) {
    const Mat3 A = kin.R[j] - an.R[j];
    const Vec3 b = kin.t[j] - an.t[j];
    const size_t base = size_t(j) * m.n_q;
    for (int k = 0; k < m.n_q; ++k)
      if (m.moves(k, j)) grad[k] += s * moment_product(m, j, kin.dR[base + k], kin.dt[base + k], A, b, ms);
  }
}

void add_inertia_hessian(const Model& m, const Kinematics& kin, const InertiaAnchor& an,
                         double dt, MatX& Hess, const double* ms) {
  const double s = 1 / (dt * dt);
  for (int j = 0; j < m.n_link; ++j) {
    const Mat3 A = kin.R[j] - an.R[j];
    const Vec3 b = kin.t[j] - an.t[j];
    const size_t base = size_t(j) * m.n_q;
    for (int k = 0; k < m.n_q; ++k) {
      if (!m.moves(k, j)) continue;
      for (int l = k; l < m.n_q; ++l) {
        if (!m.moves(l, j)) continue;
        // d_kl T_j = k |> d_l T_j  (k <= l on the root->j path)
        Mat3 M = kin.dR[base + l];
        Vec3 v = kin.dt[base + l];
        dof_act(m, kin, k, M, v);
        const double h = moment_product(m, j, kin.dR[base + k], kin.dt[base + k], kin.dR[base + l],
                                        kin.dt[base + l], ms) +
                         moment_product(m, j, M, v, A, b, ms);
        Hess(k, l) += s * h;
        if (l != k) Hess(l, k) += s * h;
      }
    }
  }
}

double gravity_value(const Model& m, const Kinematics& kin, const double* ms) {
  double V = 0;
  for (int j = 0; j < m.n_link; ++j)
    V -= link_scale(ms, j) * m.link_mass[j] * m.gravity.dot(point_position(kin, j, m.link_com[j]));
  return V;
}

void add_gravity_derivatives(const Model& m, const Kinematics& kin, VecX& grad, MatX* Hess, const double* ms) {
  // Jacobian columns of each link's COM computed on the fly (no 3 x n_q temporary)
  for (int j = 0; j < m.n_link; ++j) {
    const double mj = link_scale(ms, j) * m.link_mass[j];
    if (mj == 0) continue;
    const Vec3 p = point_position(kin, j, m.link_com[j]);
    for (int k = 0; k < m.n_q; ++k)
      if (m.moves(k, j)) grad[k] -= mj * point_jacobian_column(m, kin, k, p).dot(m.gravity);
    if (Hess) add_point_hessian(m, kin, j, p, m.gravity, -mj, *Hess);
  }
}

Vec3 centre_of_mass(const Model& m, const Kinematics& kin, const double* ms) {
  Vec3 c = Vec3::Zero();
  for (int j = 0; j < m.n_link; ++j)
    c += link_scale(ms, j) * m.link_mass[j] * point_position(kin, j, m.link_com[j]);
  const double M = total_mass(m, ms);
  return M > 0 ? Vec3(c / M) : c;
}

}  // namespace bigstep
