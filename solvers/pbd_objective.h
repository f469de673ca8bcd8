// PBD objective E (spec pbfd.md §4.5, paper Eq. 6) with its gradient and the two model
// matrices of §5: the exact Hessian (LM) and the PSD Gauss-Newton-style matrix (JTJ-LM, A4).
#pragma once
#include "solvers/pbd_context.h"

namespace bigstep {

enum class HessianKind { None, Exact, GaussNewton };

/// E(theta) = I + V - theta^T tau + U_pd + P_perp + C_par P_par + armature + damping + limits
/// (joint_terms.h). Value only (kinematics and the contact set at theta in ws, no derivatives).
double pbd_energy(const Model& m, const PbdStepInput& in, const VecX& theta, PbdWorkspace& ws);

/// E, grad E and (kind != None) the model matrix B at theta.
void pbd_energy_derivatives(const Model& m, const PbdStepInput& in, const VecX& theta,
                            PbdWorkspace& ws, double& E, VecX& grad, MatX* B, HessianKind kind);

/// Normal contact c (depth d = c.depth > 0, J = ws.J its core Jacobian, pbfd.md §4.2 on the
/// contact set's cores): P = C_perp/(alpha+1) d^(alpha+1),
///   grad += -C_perp d^alpha J^T n,
///   Hess += C_perp alpha d^(alpha-1) (J^T n)(J^T n)^T                        (PSD part, both kinds)
///         + C_perp d^alpha hess depth   (exact only: -n . d^2(c_a - c_b) - kappa J^T P_t J).
/// Shared by Eq. 6 and Eq. 13. Uses ws.Ja, ws.Jb, ws.J, ws.Jt_n, ws.JtP.
void add_normal_contact(const Model& m, const Contact& c, const ContactParams& cp, PbdWorkspace& ws, VecX& grad,
                        MatX* Hess, bool exact);

/// Stable-PD potential of Eq. 6 (pbfd.md §4.1, nmdp.md §9), 0 without a servo:
///   U(theta) = 1/2 (theta - theta_bar)^T K_p (theta - theta_bar) + 1/(2 dt) (theta - theta_n)^T K_d (theta - theta_n)
///              - (K_d theta_dot_bar)^T theta,
/// whose gradient is -tau_pd(theta) (stable_pd_torque) and whose Hessian is diag(K_p + K_d/dt).
double pd_potential(const PbdStepInput& in, const VecX& theta);

/// grad += -tau_pd(theta) and, when Hess is set, Hess += diag(K_p + K_d/dt) = -d tau_pd/d theta
/// (exact, PSD). Eq. 6 adds grad U; Eq. 13 adds -tau_pd to r exactly as it subtracts tau.
void add_pd_terms(const PbdStepInput& in, const VecX& theta, VecX& grad, MatX* Hess);

}  // namespace bigstep
