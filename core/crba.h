// Composite rigid body algorithm: the generalized mass matrix H(q) (Featherstone CRBA, world
// convention). Cross-checked against the moment-product H of core/inertia.h and RNEA columns.
#pragma once
#include "core/model.h"

namespace bigstep {

/// H (n_q x n_q), symmetric positive (semi)definite.
void crba(const Model& m, const VecX& q, MatX& H, const double* mass_scale = nullptr);  // core/inertia.h

}  // namespace bigstep
