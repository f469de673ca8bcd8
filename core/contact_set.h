// The contacts of one configuration as every integrator consumes them: collide()'s geom pairs
// plus the joint limits (core/joint_limit.h), in buffers sized from the Model (no allocation),
// and the kinematic quantities the integrators' contact terms need.
//
// Each geom contact is written through its sphere-swept cores (collision.h): with c_a, c_b the
// core points following their links,
//   depth(theta) = r_a + r_b - n . (c_a - c_b)          (n from b to a)
//   J            = J_a(c_a) - J_b(c_b)                  (3 x n_q, relative motion of the cores)
//   grad depth   = -J^T n
//   hess depth   = -n . (d^2 c_a - d^2 c_b) - kappa J^T P_t J,   P_t = I - n n^T
// The last term is the turning of a centre-line normal (kappa = 1/|c_a - c_b|, collision.h); it is
// exact for sphere-sphere and for sphere-plane, capsule-plane, box-plane (kappa = 0 and fixed
// cores). Where a core slides over its shape (a capsule axis point, a box face point against a
// sphere or capsule) the sliding is not differentiated: the gradient stays exact (a smooth surface
// point moving along the surface does not change the depth to first order) and the Hessian is a
// model of the true one (the Gauss-Newton-like term above), which costs LM iterations, not accuracy.
// Slip (PBD/PBFD friction, docs/methods/pbfd.md §4.3) is the tangential relative displacement of the cores since
// theta_n: u = P_t [(c_a - c_a(theta_n)) - (c_b - c_b(theta_n))]. For a contact point (radius 0)
// against a plane it is the u = P_t (c - c_n) of docs/methods/pbfd.md §4.3.
#pragma once
#include <vector>

#include "core/collision.h"
#include "core/joint_limit.h"

namespace bigstep {

struct ContactSet {
  explicit ContactSet(const Model& m)
      : con(size_t(m.max_contacts)), lim(size_t(m.n_limit)) {}

  std::vector<Contact> con;        ///< (max_contacts) geom contacts, first n_con valid
  int n_con = 0;
  std::vector<LimitContact> lim;   ///< (n_limit) joint-limit contacts, first n_lim valid
  int n_lim = 0;
  uint32_t status = 0;             ///< STATUS_CONTACT_OVERFLOW is never set (capacity = max)

  /// collide() and joint_limits() at the configuration theta of kin (forward_kinematics done),
  /// keeping what has depth >= -margin.
  void update(const Model& m, const Kinematics& kin, const VecX& theta, double margin);
};

/// World core points c_a, c_b of contact c at the configuration of kin (inline: they sit in the
/// contact loops of every iterate).
inline Vec3 contact_core_a(const Kinematics& kin, const Contact& c) {
  return c.link_a < 0 ? c.ca_local : point_position(kin, c.link_a, c.ca_local);
}
inline Vec3 contact_core_b(const Kinematics& kin, const Contact& c) {
  return c.link_b < 0 ? c.cb_local : point_position(kin, c.link_b, c.cb_local);
}

/// depth(theta) = r_a + r_b - n . (c_a - c_b) with the cores placed by kin (n held).
double contact_core_depth(const Kinematics& kin, const Contact& c);

/// Ja = J_a(c_a), Jb = J_b(c_b) (3 x n_q each; zero for the world) and J = Ja - Jb.
void contact_core_jacobians(const Model& m, const Kinematics& kin, const Contact& c, Eigen::Ref<MatX> Ja,
                            Eigen::Ref<MatX> Jb, Eigen::Ref<MatX> J);

/// Slip u = P_t [(c_a - c_a_n) - (c_b - c_b_n)], cores placed by kin (theta) and kin_n (theta_n).
Vec3 contact_slip(const Kinematics& kin, const Kinematics& kin_n, const Contact& c);

/// Hess += scale * [ sum over both cores of (+-) w . d^2 c / dtheta^2 ]: the second-derivative
/// term of a force w applied at c_a and -w at c_b (Ja, Jb from contact_core_jacobians). With
/// w = n and scale = -1 this is the material part of hess depth above.
void add_contact_point_hessian(const Model& m, const Kinematics& kin, const Contact& c, const MatX& Ja,
                               const MatX& Jb, const Vec3& w, double scale, MatX& Hess);

/// Hess += scale * (-kappa J^T P_t J): the normal-turning part of hess depth (nothing when
/// kappa = 0). JtP: (n_q x 3) scratch.
void add_contact_curvature(const Contact& c, const MatX& J, double scale, MatX& Hess, MatX& JtP);

}  // namespace bigstep
