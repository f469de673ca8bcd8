// Forward dynamics qdd = H^-1 (tau - c - grad V) and forward-mode-AD derivatives of RNEA
// (the partials the Newton-Euler NMDP form needs, docs/methods/nmdp.md §5.2).
#pragma once
#include "core/model.h"

namespace bigstep {

/// qdd (n_q) solving (H + diag(a)) qdd = tau - rnea(q, qd, 0) - b o qd - k o (q - ref): the
/// rigid-body dynamics plus the joints' armature a, viscous damping b and spring k about ref
/// (dof_armature, dof_damping, dof_stiffness, dof_springref; MuJoCo's qacc with its passive
/// damping and spring forces). Uses CRBA + LDLT.
VecX forward_dynamics(const Model& m, const VecX& q, const VecX& qd, const VecX& tau,
                      const double* mass_scale = nullptr);  // core/inertia.h

/// d tau / d q and d tau / d qd (n_q x n_q each) of tau = rnea(q, qd, qdd), by forward-mode AD.
void rnea_derivatives(const Model& m, const VecX& q, const VecX& qd, const VecX& qdd, MatX& dtau_dq,
                      MatX& dtau_dqd, const double* mass_scale = nullptr);

}  // namespace bigstep
