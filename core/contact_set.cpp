// Contact set of one configuration and the core-point quantities of its contacts (contact_set.h).
#include "core/contact_set.h"

namespace bigstep {

void ContactSet::update(const Model& m, const Kinematics& kin, const VecX& theta, double margin) {
  n_con = collide(m, kin, margin, con.data(), int(con.size()), status);
  n_lim = joint_limits(m, theta, margin, lim.data());
}

double contact_core_depth(const Kinematics& kin, const Contact& c) {
  return c.ra + c.rb - c.n.dot(contact_core_a(kin, c) - contact_core_b(kin, c));
}

void contact_core_jacobians(const Model& m, const Kinematics& kin, const Contact& c, Eigen::Ref<MatX> Ja,
                            Eigen::Ref<MatX> Jb, Eigen::Ref<MatX> J) {
  if (c.link_a >= 0) point_jacobian(m, kin, c.link_a, contact_core_a(kin, c), Ja);
  else Ja.setZero();
  // against the world (every terrain contact): J = Ja, no zero Jb to build and subtract
  if (c.link_b < 0) {
    Jb.setZero();
    J.noalias() = Ja;
    return;
  }
  point_jacobian(m, kin, c.link_b, contact_core_b(kin, c), Jb);
  J.noalias() = Ja - Jb;
}

Vec3 contact_slip(const Kinematics& kin, const Kinematics& kin_n, const Contact& c) {
  const Vec3 dc = (contact_core_a(kin, c) - contact_core_a(kin_n, c)) -
                  (contact_core_b(kin, c) - contact_core_b(kin_n, c));
  return dc - c.n * c.n.dot(dc);
}

void add_contact_point_hessian(const Model& m, const Kinematics& kin, const Contact& c, const MatX& Ja,
                               const MatX& Jb, const Vec3& w, double scale, MatX& Hess) {
  if (c.link_a >= 0) add_point_hessian(m, kin, c.link_a, Ja, w, scale, Hess);
  if (c.link_b >= 0) add_point_hessian(m, kin, c.link_b, Jb, w, -scale, Hess);
}

void add_contact_curvature(const Contact& c, const MatX& J, double scale, MatX& Hess, MatX& JtP) {
  if (c.kappa == 0) return;
  const Mat3 Pt = Mat3::Identity() - c.n * c.n.transpose();
  JtP.noalias() = J.transpose() * Pt;
  Hess.noalias() -= scale * c.kappa * JtP * J;
}

}  // namespace bigstep
