// Iterations to convergence inside one launch (docs/methods/pbfd.md §6 "Batched GPU
// scheduling", Fig. 3): a team runs its trajectory's LM iterations (solvers/pbd/pbd_step_team.h) until
// the trajectory leaves RUNNING -- in lockstep mode after one committed step (WAITING), in rollout
// mode after its whole horizon (DONE) -- or until an optional iteration cap. Each iteration is the
// same lm_team_iteration() a one-iteration-per-launch sequence runs, so the results are that
// sequence's bit for bit (tests/solvers/pbd/pbd_step_persistent_test.cpp).
//
// What lives where during the launch (the CUDA warp kernel puts `local` in shared memory):
//   staged in and out : B (D x D), g, th, th_c (D each), the scalars and the ints (pbd_traj_fields.h) --
//                       the state one iteration hands to the next;
//   local only        : J_r and the Cholesky factor (one D x D slot: J_r is last read by the
//                       normal equations, L first written by the factorisation after them),
//                       r / delta (D) and the residual's scratch -- produced and consumed within
//                       one iteration;
//   global            : theta_n, theta_{n-1}, step constants, controls, gains, parameters and the
//                       output slots (written once per committed step).
#pragma once
#include "solvers/pbd/pbd_step_team.h"

namespace bigstep {

/// S entries of one trajectory's local workspace (B, J_r = Lc; g, th, th_c, r; the scalars; the
/// residual scratch), plus kLmInts ints held separately.
template <class S>
BIGSTEP_HD int lm_local_size(const ModelView<S>& m) {
  const int D = m.n_q;
  return 2 * D * D + 4 * D + LmScal::count + pbfd_scratch_size(m, true);  // the residual always gets J_r here
}

namespace team_detail {

// Copies n entries lane-parallel (consecutive lanes, consecutive addresses: coalesced).
template <class T, class Team>
BIGSTEP_HD void lm_copy(Team& team, T* dst, const T* src, int n) {
  team.for_each_lane(n, [&](int e) { dst[e] = src[e]; });
}

// The carried state of t (see the header comment) between g (global) and l (local).
template <class S, class Team>
BIGSTEP_HD void lm_carry(Team& team, int D, const LmTraj<S>& from, const LmTraj<S>& to) {
  lm_copy(team, to.B, from.B, D * D);
  lm_copy(team, to.g, from.g, D);
  lm_copy(team, to.th, from.th, D);
  lm_copy(team, to.th_c, from.th_c, D);
  lm_copy(team, to.scal, from.scal, int(LmScal::count));
  lm_copy(team, to.ints, from.ints, int(LmInt::count));
  team.sync();
}

}  // namespace team_detail

/// The local view of trajectory tg: its temporaries and carried state (see the header comment) in
/// `local` (lm_local_size(m) S) and local_ints (kLmInts), the rest tg's (global). *scratch: the
/// residual's scratch inside `local`.
template <class S>
BIGSTEP_HD LmTraj<S> lm_local_view(int D, const LmTraj<S>& tg, S* local, int* local_ints, S** scratch) {
  LmTraj<S> t = tg;
  S* p = local;
  t.B = p; p += D * D;
  t.J = p;  // why shared: see the header comment (saves D^2 S of shared memory per trajectory)
  t.Lc = p; p += D * D;
  t.g = p; p += D;
  t.th = p; p += D;
  t.th_c = p; p += D;
  t.r = p; p += D;
  t.scal = p; p += LmScal::count;
  *scratch = p;
  t.ints = local_ints;
  return t;
}

/// lm_team_run on a view t = lm_local_view(tg, ...) and step constants in = lm_step_in(cfg, t, ...)
/// the caller holds (the CUDA warp kernel keeps tg, t and in in shared memory, read where used:
/// why -- held in registers, their ~60 pointers were the FP32 kernel's largest live set and
/// spilled).
template <class S, class Team>
BIGSTEP_HD int lm_team_run_view(Team& team, const ModelView<S>& m, const LmTeamSettings<S>& cfg, const LmTraj<S>& tg,
                                LmTraj<S>& t, const PbfdStepConst<S>& in, S* scratch, int it_cap) {
  using namespace team_detail;
  const int D = m.n_q;
  const bool running = tg.status() == TRAJ_RUNNING;
  team.sync();  // every lane has read the status before any lane writes it
  if (!running) return 0;
  lm_carry(team, D, tg, t);
  int n = 0;
  for (;;) {
    const bool go = t.status() == TRAJ_RUNNING && (it_cap <= 0 || n < it_cap);
    team.sync();  // read by every lane before the next iteration's first write
    if (!go) break;
    lm_team_iteration(team, m, cfg, t, in, scratch);
    ++n;
  }
  lm_carry(team, D, t, tg);
  return n;
}

/// Runs trajectory tg's LM iterations until it leaves RUNNING, or `it_cap` iterations when
/// it_cap > 0 (then it may still be RUNNING; a later call resumes it exactly). local:
/// lm_local_size(m) S, local_ints: kLmInts ints (shared memory on the GPU). Returns the
/// iterations run (the launches a one-iteration-per-launch schedule would have spent on it).
template <class S, class Team>
BIGSTEP_HD int lm_team_run(Team& team, const ModelView<S>& m, const LmTeamSettings<S>& cfg, const LmTraj<S>& tg,
                           S dt, S alpha, S beta, S gamma, S* local, int* local_ints, int it_cap) {
  S* scratch = nullptr;
  LmTraj<S> t = lm_local_view(m.n_q, tg, local, local_ints, &scratch);
  const PbfdStepConst<S> in = lm_step_in(cfg, t, dt, alpha, beta, gamma);  // every lane its own copy
  return lm_team_run_view(team, m, cfg, tg, t, in, scratch, it_cap);
}

}  // namespace bigstep
