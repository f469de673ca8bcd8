// Model C: complementarity-free convex inverse dynamics (docs/methods/inverse_dynamics.md §6; paper
// §6, (68)-(78) in the reduced form of §6.1, Stage II (101)-(111) as §6.2 and I8 restate it).
// Stage I: maximal-dissipation QP in z = [f_N; f_F] (relative to the contacts' rest for ID_{QP,*},
// IdStage1) with non-penetration and the pyramid (QP,mu) or
// without it (QP,inf; or at a large mu with IdProblem::friction_needs_load, see kIdQpMuInf). Stage II: minimum-norm torques over the nullspace of the Stage I Hessian,
// with the eps |z|^2 regularisation of I8. An infeasible Stage I (I14) is repaired and flagged; a
// Stage I beyond the physical bound (id_impulse_bound) is re-solved with it as rows, a Stage II
// beyond it falls back to Stage I (ID_IMPULSE_BOUND).
#pragma once
#include "control/inverse_dynamics/id_problem.h"

namespace bigstep {

/// The friction coefficient of ID_{QP,inf}'s pyramid rows with IdProblem::friction_needs_load
/// (without it: no rows, the paper's QP,inf). Removing the rows
/// lets Stage I / II put friction on contacts whose normal impulse is zero: closed loop on the
/// trotting spider (NE-LCP, mu = 100) it asked 3.6e5 N of tangential force of a foot with f_N = 0,
/// which no simulator delivers, and the robot fell (and blew up) within 0.3 s. mu -> inf is the
/// limit of the cone, which ties friction to f_N > 0: a large finite mu keeps that tie. 1e3 trots
/// on the 100-friction ground; 1e4 fell again there (rows that stiff let a foot with a tiny f_N
/// pin its tangential motion, more than the simulator's mu = 100 allows).
inline constexpr double kIdQpMuInf = 1e3;

/// Stage I's objective without a planned unactuated velocity (IdProblem::vb_des): the kinetic energy
/// relative to the contacts' rest (ID_{QP,mu}, ID_{QP,inf}: stance feet stick where the cone allows,
/// the .cpp derives it), or the paper's 1/2 v+^T M v+ (§6.1: the base's momentum coordinate at rest;
/// kept for models A and B's fallbacks, id_nslip.cpp / _coulomb.cpp).
enum class IdStage1 { Rest, Momentum };

/// Model C. bounded: pyramid rows at p.mu (QP,mu) or none / at kIdQpMuInf (QP,inf, see
/// IdProblem::friction_needs_load). stage2 = false returns the Stage I
/// solution (tests compare the two). r: sized by ws.init_result. id_solve's QpMu / QpInf use
/// IdStage1::Rest.
void id_convex(const IdProblem& p, IdWorkspace& ws, IdResult& r, bool bounded, bool stage2 = true,
               IdStage1 target = IdStage1::Momentum);

/// Orthonormal basis of null(G) (G = ws.G, nb x rows) into ws.Wn.leftCols(d): Householder QR with
/// column pivoting of G^T, rank by a relative threshold 1e-9 (§6.2). Returns d = rows - rank.
int id_nullspace(IdWorkspace& ws);
/// The same for the matrix whose transpose (rows x nb) the caller put in ws.QR.topLeftCorner(rows, nb)
/// (overwritten); the basis goes to ws.Wn.topLeftCorner(rows, d).
int id_nullspace_of(IdWorkspace& ws, int rows);

}  // namespace bigstep
