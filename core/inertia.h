// Mass moments, generalized mass matrix, the closed-form PBD inertia integral I(theta)
// and the gravity potential V(theta) with derivatives (docs/methods/pbfd.md §2.4 and §3).
#pragma once
#include <vector>

#include "core/kinematics.h"

namespace bigstep {

// Per-rollout mass randomisation (batch/batch.h RolloutParamTable::link_mass_scale): every function
// that reads masses takes an optional `const double* mass_scale` (n_link factors, nullptr = 1).
// Link j then has mass s_j m_j, central inertia s_j I_j, hence second moment s_j S_j, and the same
// COM: the result equals the unscaled call on a Model whose link masses and inertias are scaled
// (up to rounding), without copying the Model.
// link_scale, total_mass and weight of a scaled model: core/model.h.

/// <(A,a),(B,b)>_j = tr(A S_j B^T) + m_j (a^T B c_j + b^T A c_j + a^T b)   (docs/methods/pbfd.md §2.4).
double moment_product(const Model& m, int j, const Mat3& A, const Vec3& a, const Mat3& B,
                      const Vec3& b, const double* mass_scale = nullptr);

/// Generalized mass matrix H_kl = sum_j <d_k T_j, d_l T_j>_j (n_q x n_q).
/// Needs forward_kinematics and link_derivatives.
void mass_matrix(const Model& m, const Kinematics& kin, MatX& H, const double* mass_scale = nullptr);

/// Inertia anchor: the pose the inertia term pulls towards, per link.
/// PBD: Rhat = 2 R(theta_n) - R(theta_{n-1}) (same for t); then A_j = R_j(theta) - Rhat_j.
struct InertiaAnchor {
  std::vector<Mat3> R;  ///< (n_link)
  std::vector<Vec3> t;  ///< (n_link)
};

/// Anchor from the two previous poses: (1 + a) T(theta_-) - a T(theta_--); PBD uses a = 1.
InertiaAnchor make_inertia_anchor(const Kinematics& kin_prev, const Kinematics& kin_prev2,
                                  double a = 1.0);
/// Same into an existing anchor (no allocation once it is sized).
void make_inertia_anchor(const Kinematics& kin_prev, const Kinematics& kin_prev2, double a, InertiaAnchor& an);
/// an += w T(kin) per link (a multistep anchor as a weighted sum of poses, weights summing to 1).
void add_inertia_anchor(const Kinematics& kin, double w, InertiaAnchor& an);

/// I(theta) = 1/(2 dt^2) sum_j <(A_j,b_j),(A_j,b_j)>_j   (docs/methods/pbfd.md §3).
double inertia_value(const Model& m, const Kinematics& kin, const InertiaAnchor& an, double dt,
                     const double* mass_scale = nullptr);
/// grad += dI/dtheta. Needs link_derivatives.
void add_inertia_gradient(const Model& m, const Kinematics& kin, const InertiaAnchor& an,
                          double dt, VecX& grad, const double* mass_scale = nullptr);
/// Hess += exact d^2 I / dtheta^2 (includes second kinematic derivatives).
void add_inertia_hessian(const Model& m, const Kinematics& kin, const InertiaAnchor& an,
                         double dt, MatX& Hess, const double* mass_scale = nullptr);

/// V(theta) = -sum_j m_j g^T (R_j c_j + t_j).
double gravity_value(const Model& m, const Kinematics& kin, const double* mass_scale = nullptr);
/// grad += dV/dtheta, and (when Hess != nullptr) Hess += d^2V/dtheta^2.
void add_gravity_derivatives(const Model& m, const Kinematics& kin, VecX& grad, MatX* Hess,
                             const double* mass_scale = nullptr);

/// World position of the whole-model centre of mass.
Vec3 centre_of_mass(const Model& m, const Kinematics& kin, const double* mass_scale = nullptr);

}  // namespace bigstep
