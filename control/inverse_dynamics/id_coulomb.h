// Model B: Coulomb-friction inverse dynamics with complementarity (docs/methods/inverse_dynamics.md
// §5; paper §5, (51)-(63) with the corrected LCP of §5.2, I3, I4): pyramid k = 4, the copositive
// LCP in z_B = [f_N; f_F; lambda] solved by Lemke (lexicographic, numerics/lcp_lemke.h), Tikhonov
// retries, and the slack repair QP for incompatible plans (I14). No chatter mitigation (§5.3), but a
// minimum-torque choice among the LCP's solutions (a Stage II as §6.2, see the .cpp).
#pragma once
#include "control/inverse_dynamics/id_problem.h"

namespace bigstep {

/// mu used for an infinite friction coefficient in model B (the LCP needs a finite pyramid).
inline constexpr double kIdCoulombMuInf = 1e3;

/// Slip speeds and separating velocities below kIdSlipTol (1 + max |r_B|) [m/s] count as 0 when
/// model B picks its minimum-torque solution (the LCP solver's acceptance tolerance, lcp_lemke.h).
inline constexpr double kIdSlipTol = 1e-6;
/// Forms the LCP (Q_B, r_B) of §5.2 into ws.Q, ws.r (leading 6n entries) for p; requires
/// ws.factor(p) and ws.contact_rows(p, true) done. Exposed for the copositivity oracle (§10.13).
void id_coulomb_lcp(const IdProblem& p, IdWorkspace& ws);

/// Model B. r: sized by ws.init_result. min_torque: move Lemke's solution to the least-|tau| one
/// with the same v+ and complementarity pattern (id_coulomb.cpp); false returns
/// Lemke's vertex (tests compare the two).
void id_coulomb(const IdProblem& p, IdWorkspace& ws, IdResult& r, bool min_torque = true);

}  // namespace bigstep
