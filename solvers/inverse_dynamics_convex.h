// Model C: complementarity-free convex inverse dynamics (spec inverse-dynamics-contact.md §6; paper
// §6, (68)-(78) in the reduced form of §6.1, Stage II (101)-(111) as §6.2 and I8 restate it).
// Stage I: maximal-dissipation QP in z = [f_N; f_F] with non-penetration and the pyramid (QP,mu) or
// without it (QP,inf). Stage II: minimum-norm torques over the nullspace of the Stage I Hessian,
// with the eps |z|^2 regularisation of I8. An infeasible Stage I (I14) is repaired and flagged.
#pragma once
#include "solvers/inverse_dynamics.h"

namespace bigstep {

/// Model C. bounded: pyramid rows (QP,mu) or not (QP,inf). stage2 = false returns the Stage I
/// solution (tests compare the two). r: sized by ws.init_result.
void id_convex(const IdProblem& p, IdWorkspace& ws, IdResult& r, bool bounded, bool stage2 = true);

/// Orthonormal basis of null(G) (G = ws.G, nb x rows) into ws.Wn.leftCols(d): Householder QR with
/// column pivoting of G^T, rank by a relative threshold 1e-9 (§6.2). Returns d = rows - rank.
int id_nullspace(IdWorkspace& ws);

}  // namespace bigstep
