// PBD objective E (docs/methods/pbfd.md §4.5, paper Eq. 6) with its gradient and the two model
// matrices of §5: the exact Hessian (LM) and the PSD Gauss-Newton-style matrix (JTJ-LM, A4).
#pragma once
#include "solvers/pbd/pbd_context.h"

namespace bigstep {

enum class HessianKind { None, Exact, GaussNewton };

/// E(theta) = I + V - theta^T tau + U_pd + P_perp + C_par P_par + armature + damping + limits
/// (joint_terms.h). Value only (kinematics and the contact set at theta in ws, no derivatives).
double pbd_energy(const Model& m, const PbdStepInput& in, const VecX& theta, PbdWorkspace& ws);

/// E, grad E and (kind != None) the model matrix B at theta: Exact the Hessian, GaussNewton the
/// mass matrix / dt^2 plus the PSD parts of the contact stiffnesses (no f . d^2x, no grad^2 V).
/// On the subtree moments of ws.cm (core/composite_moments.h).
void pbd_energy_derivatives(const Model& m, const PbdStepInput& in, const VecX& theta,
                            PbdWorkspace& ws, double& E, VecX& grad, MatX* B, HessianKind kind);

/// Stable-PD potential of Eq. 6 (docs/methods/pbfd.md §4.1, docs/methods/newton_euler.md §4), 0 without a servo:
///   U(theta) = 1/2 (theta - theta_bar)^T K_p (theta - theta_bar) + 1/(2 dt_v) (theta - theta_v)^T K_d (theta - theta_v)
///              - (K_d theta_dot_bar)^T theta,
/// whose gradient is -tau_pd(theta) (stable_pd_torque; first order theta_v = theta_n, dt_v = dt) and
/// whose Hessian is diag(K_p + K_d/dt_v).
double pd_potential(const PbdStepInput& in, const VecX& theta);

/// grad += -tau_pd(theta) and, when Hess is set, Hess += diag(K_p + K_d/dt_v) = -d tau_pd/d theta
/// (exact, PSD). Eq. 6 adds grad U; Eq. 13 adds -tau_pd to r exactly as it subtracts tau.
void add_pd_terms(const PbdStepInput& in, const VecX& theta, VecX& grad, MatX* Hess);

}  // namespace bigstep
