// RNEA, world convention (Pinocchio's forward pass v, a, f then backward tau = S^T f).
#include "core/rnea.h"

#include <unsupported/Eigen/AutoDiff>

#include "core/error.h"
#include "core/inertia.h"
#include "core/kinematics.h"

namespace bigstep {

namespace {

template <class S> using Vec3T = Eigen::Matrix<S, 3, 1>;
template <class S> using Mat3T = Eigen::Matrix<S, 3, 3>;

// motion x motion: (w, v) x (w', v') = (w x w', w x v' + v x w')
template <class S>
Vec6T<S> cross_m(const Vec6T<S>& a, const Vec6T<S>& b) {
  Vec6T<S> r;
  r.template head<3>() = a.template head<3>().cross(b.template head<3>());
  r.template tail<3>() = a.template head<3>().cross(b.template tail<3>()) + a.template tail<3>().cross(b.template head<3>());
  return r;
}
// motion x* force: (w, v) x* (n, f) = (w x n + v x f, w x f)
template <class S>
Vec6T<S> cross_f(const Vec6T<S>& a, const Vec6T<S>& f) {
  Vec6T<S> r;
  r.template head<3>() = a.template head<3>().cross(f.template head<3>()) + a.template tail<3>().cross(f.template tail<3>());
  r.template tail<3>() = a.template head<3>().cross(f.template tail<3>());
  return r;
}
// I x for a body of mass m, world COM c, world central inertia Ic: f = m (v + w x c), n = Ic w + c x f
template <class S>
Vec6T<S> inertia_apply(S mass, const Vec3T<S>& c, const Mat3T<S>& Ic, const Vec6T<S>& x) {
  const Vec3T<S> w = x.template head<3>();
  const Vec3T<S> f = mass * (x.template tail<3>() + w.cross(c));
  Vec6T<S> r;
  r.template head<3>() = Ic * w + c.cross(f);
  r.template tail<3>() = f;
  return r;
}
template <class S>
Mat3T<S> rot(const Vec3& a, const S& q) {
  // Rodrigues with a Scalar angle (AD-friendly)
  using std::cos;
  using std::sin;
  const Mat3T<S> K = skew(a).cast<S>();
  return Mat3T<S>::Identity() + sin(q) * K + (S(1) - cos(q)) * (K * K);
}

// The pass itself over caller buffers R, t, v, a, f (n_link) and Sk (n_q): the allocating
// template and the scratch overload share it, so both give the same bits.
template <class S>
void rnea_pass(const Model& m, const VecXT<S>& q, const VecXT<S>& qd, const VecXT<S>& qdd, VecXT<S>& tau,
               std::vector<Mat3T<S>>& R, std::vector<Vec3T<S>>& t, std::vector<Vec6T<S>>& v,
               std::vector<Vec6T<S>>& a, std::vector<Vec6T<S>>& f, std::vector<Vec6T<S>>& Sk,
               const double* mass_scale, const Mat3* chart) {
  BIGSTEP_CHECK_ARG(q.size() == m.n_q && qd.size() == m.n_q && qdd.size() == m.n_q, "rnea: q/qd/qdd size",
                    detail::concat(q.size(), "/", qd.size(), "/", qdd.size()), detail::concat("expected n_q = ", m.n_q));
  const int L = m.n_link;
  // forward pass: poses, velocities, accelerations (gravity as a base acceleration -g)
  Vec6T<S> a0 = Vec6T<S>::Zero();
  a0.template tail<3>() = -m.gravity.cast<S>();
  for (int j = 0; j < L; ++j) {
    const int p = m.link_parent[j];
    Mat3T<S> Rj = p < 0 ? Mat3T<S>::Identity() : R[p];
    Vec3T<S> tj = p < 0 ? Vec3T<S>::Zero() : t[p];
    Vec6T<S> vj = p < 0 ? Vec6T<S>::Zero() : v[p];
    Vec6T<S> aj = p < 0 ? a0 : a[p];
    tj = Rj * m.link_t_o[j].cast<S>() + tj;
    Rj = Rj * m.link_R_o[j].cast<S>();
    // a chart C sits just before a 3-angle joint's rz (core/chart.h): axis C a, rotation C Rot
    const int ch = chart ? m.link_chart[j] : -1;
    for (int k = m.link_dof_adr[j]; k < m.link_dof_adr[j] + m.link_dof_num[j]; ++k) {
      const bool charted = ch >= 0 && k == m.chart_dof[ch];
      const Vec3T<S> w = charted ? Vec3T<S>(Rj * (chart[ch] * m.dof_axis[k]).cast<S>()) : Vec3T<S>(Rj * m.dof_axis[k].cast<S>());
      Vec6T<S>& s = Sk[k];
      if (m.dof_revolute[k]) {
        s << w, tj.cross(w);
        Rj = charted ? Mat3T<S>(Rj * (chart[ch].cast<S>() * rot<S>(m.dof_axis[k], q[k]))) : Mat3T<S>(Rj * rot<S>(m.dof_axis[k], q[k]));
      } else {
        s << Vec3T<S>::Zero(), w;
        tj += w * q[k];
      }
      // S_k moves with the frame before DOF k: dS/dt = v x S
      aj += s * qdd[k] + cross_m<S>(vj, s) * qd[k];
      vj += s * qd[k];
    }
    R[j] = Rj;
    t[j] = tj;
    v[j] = vj;
    a[j] = aj;
    const double sj = link_scale(mass_scale, j);
    const S mass = S(sj * m.link_mass[j]);
    const Vec3T<S> c = Rj * m.link_com[j].cast<S>() + tj;
    const Mat3T<S> Ic = Rj * (mass_scale ? Mat3(sj * m.link_inertia[j]) : m.link_inertia[j]).cast<S>() * Rj.transpose();
    f[j] = inertia_apply<S>(mass, c, Ic, aj) + cross_f<S>(vj, inertia_apply<S>(mass, c, Ic, vj));
  }
  // backward pass: joint forces, accumulate onto parents
  tau.resize(m.n_q);
  for (int j = L - 1; j >= 0; --j) {
    for (int k = m.link_dof_adr[j]; k < m.link_dof_adr[j] + m.link_dof_num[j]; ++k) tau[k] = Sk[k].dot(f[j]);
    if (m.link_parent[j] >= 0) f[m.link_parent[j]] += f[j];
  }
}

}  // namespace

template <class S>
void rnea(const Model& m, const VecXT<S>& q, const VecXT<S>& qd, const VecXT<S>& qdd, VecXT<S>& tau,
          const double* mass_scale, const Mat3* chart) {
  const int L = m.n_link;
  std::vector<Mat3T<S>> R(L);
  std::vector<Vec3T<S>> t(L);
  std::vector<Vec6T<S>> v(L), a(L), f(L), Sk(m.n_q);
  rnea_pass<S>(m, q, qd, qdd, tau, R, t, v, a, f, Sk, mass_scale, chart);
}

RneaScratch::RneaScratch(const Model& m)
    : R(size_t(m.n_link)), t(size_t(m.n_link)), v(size_t(m.n_link)), a(size_t(m.n_link)), f(size_t(m.n_link)),
      Sk(size_t(m.n_q)), zero(VecX::Zero(m.n_q)) {}

void rnea(const Model& m, const VecX& q, const VecX& qd, const VecX& qdd, VecX& tau, RneaScratch& ws,
          const double* mass_scale) {
  BIGSTEP_CHECK_ARG(int(ws.R.size()) == m.n_link && int(ws.Sk.size()) == m.n_q, "rnea: scratch size",
                    ws.R.size(), "the RneaScratch must be built from this model");
  rnea_pass<double>(m, q, qd, qdd, tau, ws.R, ws.t, ws.v, ws.a, ws.f, ws.Sk, mass_scale, ws.chart);
}

template void rnea<double>(const Model&, const VecX&, const VecX&, const VecX&, VecX&, const double*, const Mat3*);
using AD = Eigen::AutoDiffScalar<VecX>;
template void rnea<AD>(const Model&, const VecXT<AD>&, const VecXT<AD>&, const VecXT<AD>&, VecXT<AD>&, const double*,
                       const Mat3*);

VecX nonlinear_effects(const Model& m, const VecX& q, const VecX& qd, const double* mass_scale) {
  VecX tau;
  rnea<double>(m, q, qd, VecX::Zero(m.n_q), tau, mass_scale);
  return tau;
}

void nonlinear_effects(const Model& m, const VecX& q, const VecX& qd, VecX& tau, RneaScratch& ws,
                       const double* mass_scale) {
  rnea(m, q, qd, ws.zero, tau, ws, mass_scale);
}

VecX gravity_torques(const Model& m, const VecX& q, const double* mass_scale) {
  VecX tau;
  const VecX z = VecX::Zero(m.n_q);
  rnea<double>(m, q, z, z, tau, mass_scale);
  return tau;
}

MatX motion_subspace(const Model& m, const VecX& q) {
  Kinematics kin(m);
  forward_kinematics(m, q, kin);
  MatX S(6, m.n_q);
  motion_subspace(m, kin, S);
  return S;
}

void motion_subspace(const Model& m, const Kinematics& kin, MatX& S) {
  S.resize(6, m.n_q);
  for (int k = 0; k < m.n_q; ++k) {
    if (m.dof_revolute[k])
      S.col(k) << kin.w[k], kin.o[k].cross(kin.w[k]);
    else
      S.col(k) << Vec3::Zero(), kin.w[k];
  }
}

Eigen::Matrix<double, 6, 6> spatial_inertia_world(const Model& m, int j, const Mat3& R, const Vec3& t,
                                                  const double* mass_scale) {
  const double sj = link_scale(mass_scale, j), mass = sj * m.link_mass[j];
  const Vec3 c = R * m.link_com[j] + t;
  const Mat3 Ic = R * (mass_scale ? Mat3(sj * m.link_inertia[j]) : m.link_inertia[j]) * R.transpose();
  const Mat3 C = skew(c);
  Eigen::Matrix<double, 6, 6> I;
  I << Ic - mass * C * C, mass * C, -mass * C, mass * Mat3::Identity();
  return I;
}

}  // namespace bigstep
