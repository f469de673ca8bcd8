// PBFD residual r(theta) and its exact Jacobian J_r (docs/methods/pbfd.md §4.6, paper Eq. 13).
#pragma once
#include "solvers/pbd/pbd_context.h"

namespace bigstep {

/// r = grad I + grad V - tau - tau_pd(theta) + grad P_perp - C_par sum_p J_p^T f_par_p + the armature,
/// damping and limit gradients (joint_terms.h)  (n_q;
/// tau_pd = 0 without a servo, pbd_context.h), and when
/// Jr != nullptr the exact (non-symmetric) Jacobian dr/dtheta (n_q x n_q).
void pbfd_residual(const Model& m, const PbdStepInput& in, const VecX& theta, PbdWorkspace& ws,
                   VecX& r, MatX* Jr);

}  // namespace bigstep
