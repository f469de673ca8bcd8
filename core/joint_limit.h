// Joint limits as contacts in joint space (MuJoCo's limit constraint habit). A limited
// hinge / prismatic DOF k with range [lo, hi] is in contact with its lower stop when
// depth = lo - theta_k >= -margin and with its upper stop when depth = theta_k - hi >= -margin.
// Written like a frictionless point contact: depth > 0 penetrating, and the stop pushes
// theta_k along s (+1 at the lower stop, -1 at the upper), so d depth / d theta = -s e_k.
// Every integrator consumes these next to collide()'s contacts: PBD/PBFD as the normal penalty,
// the Newton-Euler baselines as unilateral constraint rows, NMDP as a frictionless contact term.
#pragma once
#include "core/model.h"

namespace bigstep {

struct LimitContact {
  int dof = -1;       ///< DOF index k
  double s = 1;       ///< +1 lower stop (pushes theta_k up), -1 upper stop
  double depth = 0;   ///< > 0 beyond the stop, < 0 inside the range (within the margin)
};

/// The stops with depth >= -margin at theta, in DOF order (at most one per limited DOF, the
/// nearer stop; with margin < (hi - lo)/2 a DOF can never touch both). Writes out[0 .. n_limit)
/// and returns how many. No allocation.
inline int joint_limits(const Model& m, const VecX& theta, double margin, LimitContact* out) {
  int n = 0;
  for (int i = 0; i < m.n_limit; ++i) {
    const int k = m.limit_dof[i];
    const double lo = m.dof_range[2 * k], hi = m.dof_range[2 * k + 1];
    const double d_lo = lo - theta[k], d_hi = theta[k] - hi;
    // the nearer stop (the larger depth)
    const bool lower = d_lo >= d_hi;
    const double depth = lower ? d_lo : d_hi;
    if (!(depth >= -margin)) continue;
    out[n++] = {k, lower ? 1.0 : -1.0, depth};
  }
  return n;
}

}  // namespace bigstep
