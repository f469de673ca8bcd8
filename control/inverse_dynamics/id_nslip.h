// Model A: no-slip inverse dynamics (docs/methods/inverse_dynamics.md §4; paper §4, App. C-F).
// MLCP (42)-(43) with §2 signs -> PSD LCP in the normal impulses after the corrected row selection
// (Algorithm 1 FIND-INDICES, §4.2, I5), solved by warm-started contact-space principal pivoting
// (Algorithm 2 as cleaned in §4.6, I6) with cycle detection, Lemke fallback and Tikhonov retries;
// an incompatible plan (I14) is repaired by the slack QP of §4.3 and flagged; impulses beyond the
// physical bound (id_impulse_bound) are replaced by model C's solve at mu = inf (ID_IMPULSE_BOUND).
#pragma once
#include <span>

#include "control/inverse_dynamics/id_problem.h"

namespace bigstep {

/// Row selection threshold on the squared Gram-Schmidt pivot of a tangent row, relative to the
/// largest squared column (§4.2's eps).
inline constexpr double kIdRowSelectEps = 1e-8;

enum class PpmStatus { Solved, Cycle, Infeasible, MaxIterations };
const char* ppm_status_name(PpmStatus s);

/// Contact-space principal pivoting (§4.6) on the PSD LCP w = H^T H z + r0 >= 0, z >= 0, z^T w = 0,
/// H (nb x n) with nb <= ws.nb(): only |S| x |S| systems (|S| <= nb) are factored and Q = H^T H is
/// never formed, so one pivot costs O(n nb + nb^3) (the linear-in-contacts reduction, §4.5).
/// warm: indices (into 0..n) of the previous support, tried first (§4.4). On Solved, z (n) holds
/// the solution and ws.S_set the support. Does not allocate.
PpmStatus id_ppm(Eigen::Ref<const MatX> H, Eigen::Ref<const VecX> r0, std::span<const int> warm, IdWorkspace& ws,
                 Eigen::Ref<VecX> z, int& iterations);

/// Model A. With p.friction_needs_load the tangent (no-slip) rows are kept only at contacts with a
/// positive normal impulse (re-solves; a deviation from §4.1 that the closed loop needs, see the
/// .cpp). r: sized by ws.init_result; r.support / r.n_support (ids of the contacts that carried
/// force) are read as the warm start and overwritten. mu is not used (no-slip = infinite friction).
void id_no_slip(const IdProblem& p, IdWorkspace& ws, IdResult& r);

}  // namespace bigstep
