// Composite rigid body algorithm: the generalized mass matrix H(q) (Featherstone CRBA, world
// convention). Cross-checked against the moment-product H of core/inertia.h and RNEA columns.
#pragma once
#include <vector>

#include "core/kinematics.h"
#include "core/model.h"

namespace bigstep {

/// H (n_q x n_q), symmetric positive (semi)definite.
void crba(const Model& m, const VecX& q, MatX& H, const double* mass_scale = nullptr);  // core/inertia.h

/// The buffers of one CRBA pass (kinematics of q, motion subspace, composite inertias), sized from
/// the Model so that a call with caller scratch allocates nothing.
struct CrbaScratch {
  explicit CrbaScratch(const Model& m);
  Kinematics kin;
  MatX S;                                        ///< (6 x n_q)
  std::vector<Eigen::Matrix<double, 6, 6>> Ic;   ///< (n_link)
};

/// Same with caller scratch: no allocation when H is already n_q x n_q; the same bits.
void crba(const Model& m, const VecX& q, MatX& H, CrbaScratch& ws, const double* mass_scale = nullptr);

}  // namespace bigstep
