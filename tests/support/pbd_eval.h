// grad E (Eq. 6) and r (Eq. 13) as plain functions of theta, for the central-difference tests.
#pragma once
#include "solvers/pbd_objective.h"
#include "solvers/pbfd_residual.h"

namespace bigstep::test {

inline VecX energy_grad(const Model& m, const PbdStepInput& in, const VecX& th, PbdWorkspace& ws) {
  double E;
  VecX g;
  pbd_energy_derivatives(m, in, th, ws, E, g, nullptr, HessianKind::None);
  return g;
}

inline VecX residual(const Model& m, const PbdStepInput& in, const VecX& th, PbdWorkspace& ws) {
  VecX r;
  pbfd_residual(m, in, th, ws, r, nullptr);
  return r;
}

}  // namespace bigstep::test
