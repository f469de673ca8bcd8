// PBD objective E (spec pbfd.md §4.5, paper Eq. 6) with its gradient and the two model
// matrices of §5: the exact Hessian (LM) and the PSD Gauss-Newton-style matrix (JTJ-LM, A4).
#pragma once
#include "solvers/pbd_context.h"

namespace bigstep {

enum class HessianKind { None, Exact, GaussNewton };

/// E(theta) = I + V - theta^T tau + P_perp + C_par P_par. Value only (kinematics, no derivatives).
double pbd_energy(const Model& m, const PbdStepInput& in, const VecX& theta, PbdWorkspace& ws);

/// E, grad E and (kind != None) the model matrix B at theta.
void pbd_energy_derivatives(const Model& m, const PbdStepInput& in, const VecX& theta,
                            PbdWorkspace& ws, double& E, VecX& grad, MatX* B, HessianKind kind);

/// Normal contact: grad += -C_perp d^alpha J^T n; Hess += C_perp alpha d^(alpha-1) J^T n n^T J,
/// and when exact, Hess += -C_perp d^alpha (n . d^2p). Shared by Eq. 6 and Eq. 13 (§4.2).
void add_normal_contact(const Model& m, const Kinematics& kin, int link, const MatX& J, double d,
                        const Vec3& n, const ContactParams& cp, VecX& grad, MatX* Hess, bool exact);

}  // namespace bigstep
