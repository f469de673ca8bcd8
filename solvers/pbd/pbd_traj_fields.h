// One field table for the state of one PBFD team trajectory (LmTraj, solvers/pbd/pbd_step_team.h),
// as core/model_fields.h is for the Model. Every field is listed here ONCE; the LmTraj pointers
// and accessors, the block carving (lm_traj_at), its size (lm_traj_size), the offsets the CUDA host
// uploads to (LmTrajOffsets) and the index of each scalar, int and parameter are generated from
// these lists, so no code names a field by its position.
//
// BIGSTEP_LM_TRAJ_ARRAYS(X): X(name, present, size) -- the S arrays of one trajectory's block of
//   `data`, in memory order. size is in terms of D = n_q, L = n_link, P = n_point and n_out; a
//   field whose `present` is false takes no room and its pointer is null (`order`: the time
//   discretisation, LmTeamSettings::order). Neighbours the CUDA host uploads as one row: th_n,
//   th_nm1 (a reset); tau, theta_bar, theta_dot_bar (controls); kp, kd.
// BIGSTEP_LM_TRAJ_SCALARS(X): X(name) -- the S scalars of the `scal` array (one S each).
// BIGSTEP_LM_TRAJ_INTS(X): X(name) -- the ints of the trajectory's row of the `ints` buffer.
// BIGSTEP_LM_TRAJ_PARAMS(X): X(name) -- the per-rollout scalars at the head of `params` (the
//   n_link link mass scales follow them).
#pragma once

// clang-format off
#define BIGSTEP_LM_TRAJ_ARRAYS(X)                                                                      \
  X(th_n,          true,                D)         /* theta_n, the step's start */                      \
  X(th_nm1,        true,                D)         /* theta_{n-1} */                                     \
  X(th_nm2,        order == 2,          D)         /* theta_{n-2} (docs/methods/pbfd.md §3.1) */        \
  X(th_tilde,      order == 2,          D)         /* step constants: theta~, the armature's anchor */  \
  X(th_v,          order == 2,          D)         /*   and theta_v, the velocity reference */          \
  X(th,            true,                D)         /* the accepted iterate */                           \
  X(th_c,          true,                D)         /* the candidate (r, J_r are evaluated there) */     \
  X(g,             true,                D)         /* J_r^T r at th */                                   \
  X(r,             true,                D)         /* r at the candidate; then the LM step */           \
  X(J,             true,                D * D)     /* J_r at the candidate, row-major */                \
  X(B,             true,                D * D)     /* the model matrix J_r^T J_r at th */               \
  X(Lc,            true,                D * D)     /* its damped Cholesky factor */                     \
  X(anchor_R,      true,                9 * L)     /* step constants: 2 R(theta_n) - R(theta_{n-1}) */  \
  X(anchor_t,      true,                3 * L)     /*   and 2 t(theta_n) - t(theta_{n-1}) */            \
  X(centre_n,      true,                3 * P)     /* core points at theta_n */                         \
  X(pose_n_R,      m.n_body_pair > 0,   9 * L)     /* link poses at theta_n: the body pairs' slip */    \
  X(pose_n_t,      m.n_body_pair > 0,   3 * L)                                                          \
  X(tau,           true,                D)         /* the step's constant torques;   } controls of  */  \
  X(theta_bar,     true,                D)         /* PD targets at the step's end   } the step,    */  \
  X(theta_dot_bar, true,                D)         /*                                } contiguous   */  \
  X(kp,            true,                D)         /* PD gains (LmTeamSettings::pd) */                  \
  X(kd,            true,                D)                                                              \
  X(out_theta,     true,                n_out * D) /* committed configurations, slot = step % n_out */  \
  X(scal,          true,                LmScal::count)        /* BIGSTEP_LM_TRAJ_SCALARS */         \
  X(params,        true,                LmParam::count + L)   /* BIGSTEP_LM_TRAJ_PARAMS, scales */

#define BIGSTEP_LM_TRAJ_SCALARS(X)                                                                     \
  X(F)            /* 1/2 |r|^2 at th */                                                                 \
  X(lambda)       /* LM damping */                                                                      \
  X(nu)           /* its growth factor (Nielsen) */                                                     \
  X(pred)         /* the step's predicted decrease */                                                   \
  X(res)          /* |r|_inf at th */                                                           \
  X(rho)          /* gain ratio of the last candidate */                                                \
  X(accept)       /* 1: the candidate was accepted (after the step: 1 = a small step) */               \
  X(gmax)         /* |g|_inf at th */                                                                   \
  X(lambda_last)  /* the last converged step's final lambda (warm start), 0 = cold */

#define BIGSTEP_LM_TRAJ_INTS(X)                                                                        \
  X(status)       /* TrajStatus (first: the compaction kernels read it alone) */                        \
  X(step)         /* committed steps */                                                                 \
  X(it)           /* iterations of this attempt */                                                      \
  X(first)        /* 1: the next evaluation is the attempt's first */                                   \
  X(attempt)      /* 0, or 1 after the restart from theta_n */                                          \
  X(it_total)     /* iterations of the step's earlier attempts */                                       \
  X(over)         /* 1: this iteration's phases are done */                                             \
  X(tries)        /* failed factorisations of this iteration */                                         \
  X(kind)         /* order 2: the step's StepKind (pbd_residual_team.h): History, Fresh, Event */      \
  X(c_next)       /* order 2: active contacts at the last accepted theta_{n+1}, */                      \
  X(c_n)          /*   at its theta_n */                                                                \
  X(c_nm1)        /*   and at its theta_{n-1} (core/data.h Data::StepHistory) */

#define BIGSTEP_LM_TRAJ_PARAMS(X)                                                                      \
  X(c_perp)       /* C_perp of the rollout */                                                           \
  X(c_par)        /* C_par of the rollout */                                                            \
  X(mu)           /* mu of the rollout (contact.friction = coulomb) */                                  \
  X(weight)       /* W, the rollout's weight with its link mass scales */
// clang-format on

namespace bigstep {

#define BIGSTEP_LM_ENUM(name) name,
/// Index of each scalar in LmTraj::scal, of each int in LmTraj::ints and of each parameter in
/// LmTraj::params; count = how many.
struct LmScal {
  enum : int { BIGSTEP_LM_TRAJ_SCALARS(BIGSTEP_LM_ENUM) count };
};
struct LmInt {
  enum : int { BIGSTEP_LM_TRAJ_INTS(BIGSTEP_LM_ENUM) count };
};
struct LmParam {
  enum : int { BIGSTEP_LM_TRAJ_PARAMS(BIGSTEP_LM_ENUM) count };
};
#undef BIGSTEP_LM_ENUM

}  // namespace bigstep
