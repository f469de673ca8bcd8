// Recursive Newton-Euler inverse dynamics in world-frame spatial algebra (Featherstone, world
// convention as in Pinocchio), over the elementary DOFs of docs/methods/pbfd.md §2.1. Templated on Scalar so
// forward-mode AD (Eigen AutoDiffScalar) differentiates it (core/rnea_derivatives.h).
//
//   tau = rnea(q, qd, qdd) = H(q) qdd + c(q, qd) + grad V(q)     (docs/methods/pbfd.md §2.4, A9 sign convention)
#pragma once
#include <vector>

#include "core/kinematics.h"
#include "core/model.h"

namespace bigstep {

/// Spatial vectors (6): motion (omega, v_O), force (n_O, f), both about the world origin.
template <class S> using Vec6T = Eigen::Matrix<S, 6, 1>;
template <class S> using VecXT = Eigen::Matrix<S, Eigen::Dynamic, 1>;

/// tau (n_q) = H qdd + c + grad V. Sizes are checked (InvalidArgument). mass_scale: n_link
/// factors on link masses and inertias (core/inertia.h), nullptr = 1. chart: the rotation charts
/// of the ball / floating joints' angles (core/chart.h, n_chart), nullptr = identity.
template <class S>
void rnea(const Model& m, const VecXT<S>& q, const VecXT<S>& qd, const VecXT<S>& qdd, VecXT<S>& tau,
          const double* mass_scale = nullptr, const Mat3* chart = nullptr);

/// The per-link and per-DOF buffers of one RNEA pass (poses, spatial velocities, accelerations,
/// forces, motion subspace columns), sized from the Model so that a call with caller scratch
/// allocates nothing (docs/architecture.md §5). zero: (n_q) zeros (qdd = 0).
struct RneaScratch {
  explicit RneaScratch(const Model& m);
  std::vector<Mat3> R;
  std::vector<Vec3> t;
  std::vector<Vec6T<double>> v, a, f, Sk;
  VecX zero;
  const Mat3* chart = nullptr;  ///< (n_chart) the rollout's rotation charts, nullptr = identity; not owned
};

/// rnea<double> with caller scratch: no allocation when tau already has n_q entries. Same
/// arithmetic as the allocating form, so the results are bit-identical.
void rnea(const Model& m, const VecX& q, const VecX& qd, const VecX& qdd, VecX& tau, RneaScratch& ws,
          const double* mass_scale = nullptr);

/// Bias forces c(q, qd) + grad V(q) = rnea(q, qd, 0).
VecX nonlinear_effects(const Model& m, const VecX& q, const VecX& qd, const double* mass_scale = nullptr);
/// Same into tau (n_q) with caller scratch: no allocation.
void nonlinear_effects(const Model& m, const VecX& q, const VecX& qd, VecX& tau, RneaScratch& ws,
                       const double* mass_scale = nullptr);
/// Gravity torques grad V(q) = rnea(q, 0, 0).
VecX gravity_torques(const Model& m, const VecX& q, const double* mass_scale = nullptr);

/// World motion subspace columns S_k (6 x n_q) at q: revolute (omega_k, o_k x omega_k),
/// prismatic (0, u_k).
MatX motion_subspace(const Model& m, const VecX& q);
/// Same from the kinematics of q (forward_kinematics done) into S (6 x n_q): no allocation.
void motion_subspace(const Model& m, const Kinematics& kin, MatX& S);

/// Spatial inertia of link j about the world origin (6 x 6) from its world pose.
Eigen::Matrix<double, 6, 6> spatial_inertia_world(const Model& m, int j, const Mat3& R, const Vec3& t,
                                                  const double* mass_scale = nullptr);

}  // namespace bigstep
