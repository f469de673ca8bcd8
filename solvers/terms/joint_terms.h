// Per-DOF terms of PBD (Eq. 6) and PBFD (Eq. 13): armature, damping, springs and joint limits, by the agreed
// formulas (MuJoCo's dof_armature / dof_damping / jnt_range). Each is a sum over DOFs, so
// its value, gradient and (diagonal) Hessian come from one place and both formulations add the
// gradient (Eq. 13's residual is Eq. 6's gradient for conservative terms, docs/methods/pbfd.md §4.6):
//   armature a_k: 1/2 sum_k a_k (theta_k - theta~_k)^2 / h_a^2, theta~ the inertia anchor in joint
//                 space (first order: 2 theta_n - theta_{n-1}, h_a = dt; docs/methods/pbfd.md §3.1 for
//                 the second-order weights) (extra rotor inertia on DOF k; not scaled by the
//                 rollout's link mass scales)
//   damping  b_k: 1/2 sum_k b_k (theta_k - theta_v,k)^2 / h_v  (implicit viscous torque -b_k
//                 theta_dot_k with theta_dot = (theta - theta_v)/h_v: first order theta_v = theta_n,
//                 h_v = dt (backward Euler); unconditionally stable)
//   spring   k_k: 1/2 sum_k k_k (theta_k - ref_k)^2                (MuJoCo's stiffness / springref: a
//                 potential like gravity, so it is taken at theta_{n+1}, implicit; gradient
//                 k_k (theta_k - ref_k), Hessian k_k)
//   limits      : C/(alpha+1) d^(alpha+1) per stop with depth d > 0 (core/joint_limit.h),
//                 C = dof_limit_k or the rollout's contact C_perp when that is 0, alpha = contact
//                 alpha; gradient -s C d^alpha e_k, Hessian C alpha d^(alpha-1) e_k e_k^T (no friction).
// All Hessians are diagonal and PSD: the exact and the Gauss-Newton model matrices both take them.
#pragma once
#include "core/joint_limit.h"
#include "core/model.h"
#include "solvers/terms/contact_terms.h"

namespace bigstep {

/// Armature, damping and spring energy at theta (0 when the model has none of them).
/// theta_v, dt_v: the velocity reference and step (theta_dot = (theta - theta_v)/dt_v); theta_pred,
/// dt_a: the armature's anchor and step (PbdStepInput).
double joint_passive_value(const Model& m, const VecX& theta, const VecX& theta_v, double dt_v,
                           const VecX& theta_pred, double dt_a);

/// grad += armature, damping and spring gradient; Hess (when set) += diag(a_k/dt_a^2 + b_k/dt_v + k_k).
void add_joint_passive_terms(const Model& m, const VecX& theta, const VecX& theta_v, double dt_v,
                             const VecX& theta_pred, double dt_a, VecX& grad, MatX* Hess);

/// Limit penalty of the stops lim[0 .. n_lim) (only depth > 0 counts).
double joint_limit_value(const Model& m, const LimitContact* lim, int n_lim, const ContactParams& cp);

/// grad += -s C d^alpha e_k; Hess (when set) += C alpha d^(alpha-1) e_k e_k^T, per stop with d > 0.
void add_joint_limit_terms(const Model& m, const LimitContact* lim, int n_lim, const ContactParams& cp,
                           VecX& grad, MatX* Hess);

}  // namespace bigstep
