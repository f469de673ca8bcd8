// One LM iteration of one PBFD trajectory per call (docs/methods/pbfd.md §6 "Batched GPU scheduling"),
// written once against the team interface: the CPU emulation loops it over rollouts, the CUDA
// kernel runs one block per rollout, so every launch advances every running trajectory by exactly
// one LM iteration and a converged trajectory moves on to its next timestep (Fig. 3).
// Same decisions as the Eigen reference (numerics/lm.cpp + solvers/pbd/pbd_step.cpp): predictor start,
// Nielsen lambda schedule, rounding rule for 1/2|r|^2, small-step test, one restart from theta_n.
#pragma once
#include "core/types.h"
#include "numerics/lm.h"  // kLambdaFloor
#include "solvers/pbd/pbd_residual_team.h"
#include "solvers/pbd/pbd_traj_fields.h"

// The second-order step's extra work (lm_step_constants_order2, lm_commit_order2) is its own call on
// the device: why -- inlined, it raised the first-order FP32 warp kernel's spill loads (bench/perf/ptxas_plan.sh).
#ifdef __CUDACC__
#define BIGSTEP_ORDER2_FN __host__ __device__ __noinline__
#else
#define BIGSTEP_ORDER2_FN inline
#endif

namespace bigstep {

/// Where the LM iteration's dense algebra runs: inside the team code (one fused kernel) or in
/// batched library calls between team phases (cuBLAS / cuSOLVER on the GPU).
enum class DenseAlgebra { Fused, Library };

enum TrajStatus : int { TRAJ_RUNNING = 0, TRAJ_WAITING = 1, TRAJ_DONE = 2, TRAJ_FAILED = 3 };

/// Solver settings shared by all trajectories.
template <class S>
struct LmTeamSettings {
  S eps_r = S(1e-8), eps_x = S(1e-12);
  int it_max = 500;
  int n_steps = 1;        ///< timesteps per trajectory (DONE after the last)
  int n_out = 1;          ///< output slots: committed step s lands in slot s % n_out (n_steps keeps all)
  bool lockstep = false;  ///< WAITING after each committed step (an RL step()); else free-running
  bool restart = true;
  bool warm_lambda = true;  ///< lambda starts from the last converged step's (lm.cpp, LmSettings::lambda0)
  bool pd = false;        ///< stable-PD servo on: gains kp, kd and targets per trajectory (lockstep)
  bool coulomb = false;   ///< contact.friction = coulomb (docs/methods/pbfd.md §4.9): mu f_n, not C_par f_par
  S stiction_velocity = S(0);  ///< contact.stiction_velocity v_s of the Coulomb law (delta = v_s dt)
  /// time discretisation (PbdSettings::order, docs/methods/pbfd.md §3.1): 2 carves the trajectory's
  /// theta_{n-2}, theta~ and theta_v (pbd_traj_fields.h), whose presence the step code tests
  int order = 1;
};

/// The friction law of the settings' contact into cfg (host side).
template <class S>
inline void lm_set_friction(LmTeamSettings<S>& cfg, const ContactParams& c) {
  cfg.coulomb = c.friction == FrictionLaw::Coulomb;
  cfg.stiction_velocity = S(c.stiction_velocity);
}

/// Ints per trajectory (BIGSTEP_LM_TRAJ_INTS), parameters at the head of LmTraj::params
/// (BIGSTEP_LM_TRAJ_PARAMS: C_perp, C_par, W -- the n_link link mass scales follow).
constexpr int kLmInts = LmInt::count;
constexpr int kLmParams = LmParam::count;
template <class S>
BIGSTEP_HD int lm_params_size(const ModelView<S>& m) { return kLmParams + m.n_link; }

/// Per-trajectory state (global memory), laid out by the field table solvers/pbd/pbd_traj_fields.h:
/// a pointer per array field (one block of `data` per trajectory), the trajectory's row of the
/// `ints` buffer and its output slots (buffers of their own); the scalars, ints and parameters by
/// name through the accessors.
template <class S>
struct LmTraj {
#define BIGSTEP_LM_POINTER(name, present, sz) S* name;
  BIGSTEP_LM_TRAJ_ARRAYS(BIGSTEP_LM_POINTER)
#undef BIGSTEP_LM_POINTER
  int* ints;             // (LmInt::count)
  int* out_iters;        // (n_out) iterations of each committed step
  unsigned* out_status;  // (n_out) StatusBits of each committed step
#define BIGSTEP_LM_SCALAR(name) \
  BIGSTEP_HD S& name() const { return scal[LmScal::name]; }
  BIGSTEP_LM_TRAJ_SCALARS(BIGSTEP_LM_SCALAR)
#undef BIGSTEP_LM_SCALAR
#define BIGSTEP_LM_INT(name) \
  BIGSTEP_HD int& name() const { return ints[LmInt::name]; }
  BIGSTEP_LM_TRAJ_INTS(BIGSTEP_LM_INT)
#undef BIGSTEP_LM_INT
#define BIGSTEP_LM_PARAM(name) \
  BIGSTEP_HD S& name() const { return params[LmParam::name]; }
  BIGSTEP_LM_TRAJ_PARAMS(BIGSTEP_LM_PARAM)
#undef BIGSTEP_LM_PARAM
  BIGSTEP_HD S* mass_scale() const { return params + LmParam::count; }  // (n_link)
};

/// Offset of each array field inside one trajectory's block of `data` (number of S), and the
/// block's size: the same carving as lm_traj_at, for the host side of the CUDA engine.
struct LmTrajOffsets {
#define BIGSTEP_LM_OFFSET(name, present, sz) size_t name = 0;
  BIGSTEP_LM_TRAJ_ARRAYS(BIGSTEP_LM_OFFSET)
#undef BIGSTEP_LM_OFFSET
  size_t size = 0;
};
template <class S>
BIGSTEP_HD LmTrajOffsets lm_traj_offsets(const ModelView<S>& m, int n_out, int order) {
  const int D = m.n_q, L = m.n_link, P = m.n_point;
  LmTrajOffsets o;
#define BIGSTEP_LM_OFFSET(name, present, sz) \
  o.name = o.size;                             \
  if (present) o.size += size_t(sz);
  BIGSTEP_LM_TRAJ_ARRAYS(BIGSTEP_LM_OFFSET)
#undef BIGSTEP_LM_OFFSET
  return o;
}

/// Number of S per trajectory for LmTraj storage (the caller carves the pointers).
template <class S>
BIGSTEP_HD int lm_traj_size(const ModelView<S>& m, int n_out, int order) {
  return int(lm_traj_offsets(m, n_out, order).size);
}

/// Carves trajectory k's LmTraj out of flat buffers: data (K x lm_traj_size S), ints (K x kLmInts),
/// iters and status (K x n_out). Used by the CPU emulation and the CUDA kernels alike. order:
/// LmTeamSettings::order.
template <class S>
BIGSTEP_HD LmTraj<S> lm_traj_at(const ModelView<S>& m, int n_out, int order, int k, S* data, int* ints, int* iters,
                                unsigned* status) {
  const int D = m.n_q, L = m.n_link, P = m.n_point;
  S* p = data + size_t(lm_traj_size(m, n_out, order)) * k;
  LmTraj<S> t;
#define BIGSTEP_LM_CARVE(name, present, sz) \
  t.name = nullptr;                           \
  if (present) t.name = p, p += sz;
  BIGSTEP_LM_TRAJ_ARRAYS(BIGSTEP_LM_CARVE)
#undef BIGSTEP_LM_CARVE
  t.ints = ints + kLmInts * k;
  t.out_iters = iters + size_t(k) * n_out;
  t.out_status = status + size_t(k) * n_out;
  return t;
}

/// The scalars every trajectory's step shares (PbdSettings): the timestep, the contact law's default
/// C_perp, C_par (lm_write_params; a rollout may carry its own) and its exponents. Host side.
template <class S>
struct LmStepScalars {
  S dt, c_perp, c_par, alpha, beta, gamma;
};

/// Host side, shared by the CPU emulation and the CUDA upload: one rollout's parameters (its contact
/// C_perp, C_par and mu) into params (lm_params_size entries). link_scale: n_link mass factors
/// (RolloutParams::link_mass_scale) or nullptr = 1; W is the scaled weight computed in double as the
/// reference does (core/model.h).
template <class S>
inline void lm_write_params(const Model& m, S* params, const ContactParams& c, const double* link_scale) {
  params[LmParam::c_perp] = S(c.c_perp);
  params[LmParam::c_par] = S(c.c_par);
  params[LmParam::mu] = S(c.mu);
  params[LmParam::weight] = S(weight(m, link_scale));
  for (int j = 0; j < m.n_link; ++j) params[LmParam::count + j] = S(bigstep::link_scale(link_scale, j));
}

namespace team_detail {
// s = max(1, W) with W this rollout's weight (numerics/lm.h): the residual's natural scale.
template <class S>
BIGSTEP_HD S lm_scale(const ModelView<S>&, const LmTraj<S>& t) {
  const S W = t.weight();
  return W > S(1) ? W : S(1);
}
constexpr unsigned kFailBits = STATUS_NOT_CONVERGED | STATUS_NONFINITE | STATUS_FACTOR_FAILED | STATUS_GIMBAL_LOCK;

// Order 2's part of the step constants (docs/methods/pbfd.md §3.1; solvers/pbd/pbd_context.cpp
// make_step_input), after lm_step_constants left T(theta_n) in the scratch. With theta_{n-2} the
// anchor gains (T_n - 2 T_{n-1} + T_{n-2}) / 2, summed in the reference's order (+ T_n / 2,
// - T_{n-1}, + T_{n-2} / 2; FK at theta_{n-1} once more), theta~ = 2 theta_n - theta_{n-1} +
// (theta_n - 2 theta_{n-1} + theta_{n-2}) / 2 and theta_v = (4 theta_n - theta_{n-1}) / 3; on a fresh
// step the first-order anchor and theta~, theta_v = (3 theta_n - theta_{n-1}) / 2; across a contact
// event (kStepEvent) the first-order step: its anchor and theta~, theta_v = theta_n.
template <class S, class Team>
BIGSTEP_ORDER2_FN void lm_step_constants_order2(Team& team, const ModelView<S>& m, LmTraj<S>& t, S* scratch) {
  const int L = m.n_link;
  Scratch<S> sh(scratch, m);
  const int kind = t.kind();
  const bool nm2 = kind == kStepHistory;
  for (int pass = 0; nm2 && pass < 3; ++pass) {
    if (pass > 0) team_fk(team, m, pass == 1 ? t.th_nm1 : t.th_nm2, sh.R, sh.t, static_cast<S*>(nullptr), sh.u, sh.mom);
    const S coef = pass == 1 ? S(-1) : S(0.5);
    team.for_each_lane(12 * L, [&](int e) {
      if (e < 9 * L) t.anchor_R[e] += coef * sh.R[e];
      else t.anchor_t[e - 9 * L] += coef * sh.t[e - 9 * L];
    });
    team.sync();
  }
  team.for_each_lane(m.n_q, [&](int i) {
    const S pred = 2 * t.th_n[i] - t.th_nm1[i];
    t.th_tilde[i] = nm2 ? pred + S(0.5) * (t.th_n[i] - 2 * t.th_nm1[i] + t.th_nm2[i]) : pred;
    t.th_v[i] = nm2 ? (4 * t.th_n[i] - t.th_nm1[i]) / 3 : kind == kStepFresh ? (3 * t.th_n[i] - t.th_nm1[i]) / 2 : t.th_n[i];
  });
  team.sync();
}

// Order 2, before a commit shifts theta_n, theta_{n-1} (core/data.h Data::StepHistory,
// docs/methods/pbfd.md §3.1 "Contact events"):
//   - the active contacts at the accepted theta (pbd_active_contacts: FK there, a lane per link,
//     body pair and DOF, summed by team_reduce), shifted into c_next, c_n, c_nm1 as
//     StepHistory::record does (after a fresh step all three are its count);
//   - the next step's theta_{n-2}: this step's theta_{n-1}; after a fresh step that point encodes
//     the start velocity, so it is the quadratic through it read at t_{n-2} instead,
//     theta_{n+1} - 2 theta_n + 2 theta_{n-1};
//   - the next step's kind: first order (kStepEvent) when the count changed inside its window
//     [t_{n-2}, t_n], else the four-point step.
template <class S, class Team>
BIGSTEP_ORDER2_FN void lm_commit_order2(Team& team, const ModelView<S>& m, LmTraj<S>& t, S* scratch) {
  using namespace team_detail;
  const int D = m.n_q;
  Scratch<S> sh(scratch, m);
  team_fk(team, m, t.th, sh.R, sh.t, static_cast<S*>(nullptr), sh.u, sh.mom);
  const auto red = team_reduce<1>(
      team, m.n_link + m.n_body_pair + D, sh.mom,
      [&](int task, S* v) { v[0] = S(active_contacts_task(m, sh, t.th, task)); },
      [](S* x, const S* y) { x[0] += y[0]; });
  const int c = int(red[0]);
  const bool fresh = t.kind() == kStepFresh;
  team.for_each_lane(D, [&](int i) { t.th_nm2[i] = fresh ? t.th[i] - 2 * t.th_n[i] + 2 * t.th_nm1[i] : t.th_nm1[i]; });
  team.sync();  // every lane has read KIND and the reduction before lane 0 rewrites them
  team.single([&] {
    if (fresh) {
      t.c_nm1() = c;
      t.c_n() = c;
    } else {
      t.c_nm1() = t.c_n();
      t.c_n() = t.c_next();
    }
    t.c_next() = c;
    t.kind() = t.c_nm1() == t.c_n() && t.c_n() == t.c_next() ? kStepHistory : kStepEvent;
  });
  team.sync();
}

// Step constants from theta_n, theta_{n-1}: anchor 2T(theta_n) - T(theta_{n-1}), centres at theta_n
// and, with body pairs, the link poses T(theta_n). FK lane-parallel inside each link (team_fk), then
// lane per anchor entry and per core point. Order 2 (t.th_nm2 carved): lm_step_constants_order2.
template <class S, class Team>
BIGSTEP_HD void lm_step_constants(Team& team, const ModelView<S>& m, LmTraj<S>& t, S* scratch) {
  const int L = m.n_link;
  Scratch<S> sh(scratch, m);
  // FK at theta_{n-1} into anchor (as -T), then at theta_n (as +2T)
  for (int pass = 0; pass < 2; ++pass) {
    const S* th = pass == 0 ? t.th_nm1 : t.th_n;
    const S coef = pass == 0 ? S(-1) : S(2);
    team_fk(team, m, th, sh.R, sh.t, static_cast<S*>(nullptr), sh.u, sh.mom);
    team.for_each_lane(12 * L, [&](int e) {
      if (e < 9 * L) t.anchor_R[e] = (pass == 0 ? S(0) : t.anchor_R[e]) + coef * sh.R[e];
      else t.anchor_t[e - 9 * L] = (pass == 0 ? S(0) : t.anchor_t[e - 9 * L]) + coef * sh.t[e - 9 * L];
      if (pass == 1 && t.pose_n_R) {
        if (e < 9 * L) t.pose_n_R[e] = sh.R[e];
        else t.pose_n_t[e - 9 * L] = sh.t[e - 9 * L];
      }
    });
    if (pass == 1)
      team.for_each_lane(m.n_point, [&](int s) {
        const int j = m.point_link[s];
        const hd::V3<S> c = ld9(sh.R + 9 * j) * m.v3(m.point_pos, s) + ld3(sh.t + 3 * j);
        st3(t.centre_n + 3 * s, c);
      });
    team.sync();
  }
  if (t.th_nm2) lm_step_constants_order2(team, m, t, scratch);
}

// Commits theta as the step's result and prepares the next step (predictor 2 theta_n - theta_{n-1}).
template <class S, class Team>
BIGSTEP_HD void lm_commit(Team& team, const ModelView<S>& m, const LmTeamSettings<S>& cfg, LmTraj<S>& t,
                          unsigned status_bits, S* scratch) {
  const int D = m.n_q;
  const int step = t.step(), slot = step % cfg.n_out;
  if (t.th_nm2) lm_commit_order2(team, m, t, scratch);
  team.for_each_lane(D, [&](int i) {
    t.out_theta[slot * D + i] = t.th[i];
    t.th_nm1[i] = t.th_n[i];
    t.th_n[i] = t.th[i];
  });
  team.sync();
  team.single([&] {
    t.out_iters[slot] = t.it_total() + t.it();
    t.it_total() = 0;
    t.out_status[slot] = status_bits;
    // the next step's warm start: this step's final lambda when it converged (pbd_step.cpp)
    t.lambda_last() = (status_bits & kFailBits) ? S(0) : t.lambda();
    t.step() = step + 1;
    t.it() = 0;
    t.first() = 1;
    t.attempt() = 0;
    if (step + 1 == cfg.n_steps) t.status() = TRAJ_DONE;
    else if (cfg.lockstep) t.status() = TRAJ_WAITING;
  });
  team.sync();
  if (t.status() == TRAJ_DONE) return;
  team.for_each_lane(D, [&](int i) { t.th_c[i] = 2 * t.th_n[i] - t.th_nm1[i]; });
  team.sync();
  lm_step_constants(team, m, t, scratch);
}

}  // namespace team_detail

/// Prepares trajectory t for step 0 from theta(0) (in t.th_n) and theta_{-1} (in t.th_nm1): a
/// fresh start (order 2: no theta_{n-2}).
template <class S, class Team>
BIGSTEP_HD void lm_team_init(Team& team, const ModelView<S>& m, LmTraj<S>& t, S* scratch) {
  using namespace team_detail;
  team.single([&] {
    t.kind() = kStepFresh;
    t.status() = TRAJ_RUNNING;
    t.step() = 0;
    t.it() = 0;
    t.first() = 1;
    t.attempt() = 0;
    t.it_total() = 0;
    t.lambda_last() = 0;  // a new episode starts cold
  });
  team.for_each_lane(m.n_q, [&](int i) { t.th_c[i] = 2 * t.th_n[i] - t.th_nm1[i]; });
  team.sync();
  lm_step_constants(team, m, t, scratch);
}

// The iteration is split into phases so that the library path (cuBLAS J^T J, cuSOLVER Cholesky;
// docs/methods/pbfd.md §6 "library path") can replace the dense algebra between them while the decisions
// stay written once. Each phase is a no-op for a trajectory whose iteration is over (over()).
//   evaluate -> normal equations -> update -> factor -> solve -> candidate
// Fused: lm_team_iteration() runs all six with the team's own J^T J / Cholesky / substitutions.

/// The residual's step constants of trajectory t (pbfd_residual_team's PbfdStepConst): pointers
/// into t, its rollout's C_perp, C_par (mu with the Coulomb law) and mass scales, and the step's scalars. The same for every
/// iteration of a launch (t's pointers and parameters do not change), so lm_team_run builds it once.
template <class S>
BIGSTEP_HD PbfdStepConst<S> lm_step_in(const LmTeamSettings<S>& cfg, const LmTraj<S>& t, S dt, S alpha, S beta,
                                       S gamma) {
  using std::sqrt;
  PbfdStepConst<S> in{t.anchor_R, t.anchor_t, t.centre_n, t.tau, dt, t.c_perp(), t.c_par(), alpha, beta, gamma};
  in.mass_scale = t.mass_scale();
  if (cfg.coulomb) {  // the Coulomb law's mu and delta = v_s dt (docs/methods/pbfd.md §4.9)
    in.coulomb = true;
    in.mu = t.mu();
    in.delta = cfg.stiction_velocity * dt;
  }
  in.theta_n = t.th_n;  // the step's theta_n, theta_{n-1}: armature, damping and the servo read them
  in.theta_nm1 = t.th_nm1;
  in.dt_a = in.dt_v = dt;
  in.theta_v = t.th_n;
  if (t.th_nm2) {  // order 2 (lm_step_constants; the reference's make_step_input)
    in.dt_a = dt / sqrt(S(2));
    in.dt_v = 2 * dt / 3;
    in.dt_v_fresh = dt / 2;
    in.kind = t.ints + LmInt::kind;
    in.theta_v = t.th_v;
    in.theta_tilde = t.th_tilde;
  }
  in.pose_n_R = t.pose_n_R;  // null without body pairs
  in.pose_n_t = t.pose_n_t;
  if (cfg.pd) {
    in.kp = t.kp;
    in.kd = t.kd;
    in.theta_bar = t.theta_bar;
    in.theta_dot_bar = t.theta_dot_bar;
  }
  return in;
}

/// Phase 1: r and J_r at th_c (the only evaluation of the iteration), accept or reject.
/// in = lm_step_in(cfg, t, ...) (the CUDA warp kernel keeps it in shared memory: see lm_team_run_view).
template <class S, class Team>
BIGSTEP_HD void lm_phase_evaluate(Team& team, const ModelView<S>& m, const LmTeamSettings<S>& cfg, LmTraj<S>& t,
                                  const PbfdStepConst<S>& in, S* scratch) {
  using namespace team_detail;
  using std::abs;
  using std::isfinite;
  using std::pow;
  if (t.status() != TRAJ_RUNNING) {
    team.sync();  // every lane has read OVER (last phase's entry tests) before lane 0 rewrites it
    team.single([&] { t.over() = 1; });
    team.sync();
    return;
  }
  const int D = m.n_q;
  const S eps = sizeof(S) == 8 ? S(2.220446049250313e-16) : S(1.1920929e-7);
  const S scale = lm_scale(m, t);
  pbfd_residual_team(team, m, in, t.th_c, scratch, t.r, t.J);
  // F_c = 1/2 |r|^2, |r|_inf and finiteness: lane-parallel, a tree over the DOFs (fixed order:
  // deterministic); the residual's scratch is free once r and J_r are out
  const auto red = team_reduce<3>(
      team, D, scratch,
      [&](int i, S* v) {
        v[0] = t.r[i] * t.r[i];
        v[1] = abs(t.r[i]);
        v[2] = isfinite(t.r[i]) ? S(0) : S(1);
      },
      [](S* x, const S* y) {
        x[0] += y[0];
        x[1] = y[1] > x[1] ? y[1] : x[1];
        x[2] = y[2] > x[2] ? y[2] : x[2];
      });
  // every lane decides (the same values: no broadcast); lane 0 writes after a sync
  const S Fc = S(0.5) * red[0], rc = red[1];
  const bool finite = !(red[2] > S(0));
  bool accept = false;
  S rho = 0;
  if (t.first()) {
    accept = finite;
  } else if (finite) {
    const S F = t.F();
    const S sqrt2F = pow(S(2) * abs(F), S(0.5));
    const S rounding = 64 * eps * (abs(F) > sqrt2F * scale ? abs(F) : sqrt2F * scale);
    if (abs(F - Fc) <= rounding) {  // below F's rounding: compare ||g||_inf = max_i |(J^T r)_i| instead
      const auto red2 = team_reduce<1>(
          team, D, scratch + 3 * D,
          [&](int i, S* v) {
            S gi = 0;
            for (int k = 0; k < D; ++k) gi += t.J[k * D + i] * t.r[k];
            v[0] = abs(gi);
          },
          [](S* x, const S* y) { x[0] = y[0] > x[0] ? y[0] : x[0]; });
      accept = red2[0] < t.gmax();
      rho = S(0.5);
    } else {
      rho = (F - Fc) / t.pred();
      accept = rho > 0;
    }
  }
  team.sync();  // every lane has read FIRST, F, PRED, GMAX and red before lane 0 rewrites them
  team.single([&] {
    t.over() = 0;
    t.accept() = accept ? S(1) : S(0);
    t.rho() = rho;
    if (accept) {
      t.F() = Fc;
      t.res() = rc;
    }
  });
  team.sync();
}

/// Phase 1 with the step constants built here (the library path and the one-iteration launches).
template <class S, class Team>
BIGSTEP_HD void lm_phase_evaluate(Team& team, const ModelView<S>& m, const LmTeamSettings<S>& cfg, LmTraj<S>& t,
                                  S dt, S alpha, S beta, S gamma, S* scratch) {
  lm_phase_evaluate(team, m, cfg, t, lm_step_in(cfg, t, dt, alpha, beta, gamma), scratch);
}

/// Phase 2 (fused): on acceptance g = J^T r, B = J^T J (lane i: entry i and row i), th = th_c.
template <class S, class Team>
BIGSTEP_HD void lm_phase_normal_fused(Team& team, int D, LmTraj<S>& t) {
  using namespace team_detail;
  if (t.over() || t.accept() == S(0)) return;
  team.for_each_lane(D, [&](int i) {
    S gi = 0;
    for (int k = 0; k < D; ++k) gi += t.J[k * D + i] * t.r[k];
    t.g[i] = gi;
    for (int l = 0; l < D; ++l) {
      S b = 0;
      for (int k = 0; k < D; ++k) b += t.J[k * D + i] * t.J[k * D + l];
      t.B[i * D + l] = b;
    }
    t.th[i] = t.th_c[i];
  });
  team.sync();
}

/// Phase 2 (library): on acceptance take B, g computed for every trajectory by batched GEMMs.
template <class S, class Team>
BIGSTEP_HD void lm_phase_normal_take(Team& team, int D, LmTraj<S>& t, const S* B_new, const S* g_new) {
  using namespace team_detail;
  if (t.over() || t.accept() == S(0)) return;
  team.for_each_lane(D, [&](int i) {
    t.g[i] = g_new[i];
    for (int l = 0; l < D; ++l) t.B[i * D + l] = B_new[i * D + l];
    t.th[i] = t.th_c[i];
  });
  team.sync();
}

/// Ends the current attempt: restart once from theta_n on failure, else commit the step.
template <class S, class Team>
BIGSTEP_HD void lm_end_attempt(Team& team, const ModelView<S>& m, const LmTeamSettings<S>& cfg, LmTraj<S>& t,
                               unsigned bits, S* scratch) {
  using namespace team_detail;
  const int D = m.n_q;
  if ((bits & kFailBits) && cfg.restart && t.attempt() == 0) {
    team.for_each_lane(D, [&](int i) { t.th_c[i] = t.th_n[i]; });
    team.sync();  // every lane has read ATTEMPT (above) and IT (the caller's cap test) before lane 0 rewrites them
    team.single([&] {
      t.attempt() = 1;
      t.first() = 1;
      t.it_total() += t.it();
      t.it() = 0;
    });
    team.sync();
  } else {
    lm_commit(team, m, cfg, t, bits | (t.attempt() ? unsigned(STATUS_RESTARTED) : 0u), scratch);
  }
  team.single([&] { t.over() = 1; });
  team.sync();
}

/// Phase 3: lambda schedule, convergence test (commit), iteration / lambda caps (restart, commit).
template <class S, class Team>
BIGSTEP_HD void lm_phase_update(Team& team, const ModelView<S>& m, const LmTeamSettings<S>& cfg, LmTraj<S>& t,
                                S* scratch) {
  using namespace team_detail;
  using std::abs;
  if (t.over()) return;
  const int D = m.n_q;
  const bool accept = t.accept() != S(0), first = t.first() != 0;
  team.sync();  // every lane has read OVER, ACCEPT and FIRST before lane 0 rewrites OVER or FIRST below
  if (!accept && first) {  // non-finite at the predictor: the trajectory fails
    team.single([&] {
      t.status() = TRAJ_FAILED;
      t.over() = 1;
    });
    team.sync();
    return;
  }
  // max_i B_ii and |g|_inf: a tree over the DOFs, read by every lane
  const auto red = team_reduce<2>(
      team, D, scratch,
      [&](int i, S* v) {
        v[0] = t.B[i * D + i];
        v[1] = abs(t.g[i]);
      },
      [](S* x, const S* y) {
        x[0] = y[0] > x[0] ? y[0] : x[0];
        x[1] = y[1] > x[1] ? y[1] : x[1];
      });
  const S bmax = red[0] > S(0) ? red[0] : S(0), gmax = red[1];
  team.single([&] {
    if (accept) {
      t.gmax() = gmax;
      if (t.first()) {
        // warm start from the last converged step (the restart starts cold), as lm.cpp; FP32's
        // floor sits near its epsilon (B + lambda I must stay factorable in single precision)
        const S ll = t.lambda_last(), lo = S(sizeof(S) == 4 ? 1e-6 : kLambdaFloor) * (bmax > S(1) ? bmax : S(1));
        if (cfg.warm_lambda && t.attempt() == 0 && ll > S(0)) t.lambda() = ll > lo ? ll : lo;
        else t.lambda() = S(1e-3) * bmax > S(1e-12) ? S(1e-3) * bmax : S(1e-12);
      } else {
        const S x = 2 * t.rho() - 1, f = 1 - x * x * x;
        t.lambda() *= f > S(1) / 3 ? f : S(1) / 3;
      }
      t.nu() = 2;
    } else {
      t.lambda() *= t.nu();
      t.nu() *= 2;
    }
    t.first() = 0;
    t.tries() = 0;
  });
  team.sync();
  const S tol = cfg.eps_r * lm_scale(m, t);
  if (t.res() <= tol) {
    lm_end_attempt(team, m, cfg, t, STATUS_OK, scratch);
    return;
  }
  if (t.it() >= cfg.it_max || t.lambda() > S(1e16) * (bmax > 1 ? bmax : S(1))) {
    lm_end_attempt(team, m, cfg, t, STATUS_NOT_CONVERGED, scratch);
  }
}

/// Phase 4 (fused): Cholesky of B + lambda I into Lc, right-looking in place (lanes over the
/// lower triangle): per column j the pivot (every lane computes it from the updated diagonal), the
/// column below it scaled (lane per row), then the trailing triangle A_il -= L_ij L_lj (lane per
/// entry). Each entry sees the left-looking sums' operations in the same order (k = 0..j-1), so L
/// is the same bits. On a non-positive pivot lambda grows (x nu, nu x 2) and the factorisation is
/// retried, 30 tries.
template <class S, class Team>
BIGSTEP_HD void lm_phase_factor_fused(Team& team, int D, LmTraj<S>& t) {
  using namespace team_detail;
  using std::isfinite;
  using std::pow;
  if (t.over()) return;
  for (int tries = 0;; ++tries) {
    // A = lower triangle of B + lambda I, lane per entry
    team.for_each_lane(D * (D + 1) / 2, [&](int q) {
      int i, l;
      tri_index(q, i, l);
      t.Lc[i * D + l] = i == l ? t.B[i * D + i] + t.lambda() : t.B[i * D + l];
    });
    team.sync();
    bool ok = true;
    for (int j = 0; j < D && ok; ++j) {
      const S d = t.Lc[j * D + j];
      const S piv = d > 0 && isfinite(d) ? pow(d, S(0.5)) : S(0);
      ok = piv > 0;
      if (!ok) break;
      team.for_each_lane(D - j - 1, [&](int q) { t.Lc[(j + 1 + q) * D + j] /= piv; });
      team.sync();  // every lane has read A_jj; column j is final
      const int n = D - j - 1;
      team.for_each_lane(n * (n + 1) / 2, [&](int q) {
        int a, b;
        tri_index(q, a, b);
        const int i = j + 1 + a, l = j + 1 + b;
        t.Lc[i * D + l] -= t.Lc[i * D + j] * t.Lc[l * D + j];
      });
      team.single([&] { t.Lc[j * D + j] = piv; });
      team.sync();
    }
    if (ok) return;
    if (tries >= 29) {
      team.single([&] {
        t.status() = TRAJ_FAILED;
        t.over() = 1;
      });
      team.sync();
      return;
    }
    team.single([&] {
      t.lambda() *= t.nu();
      t.nu() *= 2;
    });
    team.sync();
  }
}

/// Phase 4 (library), before the batched factorisation: Lc = B + lambda I and r = -g for the
/// trajectories that factor this iteration; identity and 0 for the others (so a batched call
/// over all K is harmless for them).
template <class S, class Team>
BIGSTEP_HD void lm_phase_assemble(Team& team, int D, LmTraj<S>& t) {
  using namespace team_detail;
  const bool active = !t.over();
  team.for_each_lane(D, [&](int i) {
    for (int l = 0; l < D; ++l)
      t.Lc[i * D + l] = active ? t.B[i * D + l] + (i == l ? t.lambda() : S(0)) : S(i == l ? 1 : 0);
    t.r[i] = active ? -t.g[i] : S(0);
  });
  team.sync();
}

/// Phase 4 (library), after the batched factorisation reported `info` (0 = success): on failure
/// lambda grows as in the fused path and the caller re-assembles and re-factors (30 tries).
/// Returns true when this trajectory needs another factorisation.
template <class S, class Team>
BIGSTEP_HD bool lm_phase_factor_check(Team& team, LmTraj<S>& t, int info) {
  using namespace team_detail;
  if (t.over() || info == 0) return false;
  const bool give_up = t.tries() >= 29;
  team.sync();  // every lane has read TRIES before lane 0 changes it
  team.single([&] {
    if (give_up) {
      t.status() = TRAJ_FAILED;
      t.over() = 1;
    } else {
      t.tries() += 1;
      t.lambda() *= t.nu();
      t.nu() *= 2;
    }
  });
  team.sync();
  return !give_up;
}

/// Phase 5 (fused): delta = -(L L^T)^-1 g kept in r, both substitutions column by column across
/// lanes (warp-synchronous): every lane divides by the pivot (y_j = delta_j / L_jj, the same value on
/// each), the lanes update the remaining rows, one sync per column; lane 0 stores y_j during the next
/// column (when no lane reads delta_j any more), so the division needs no barrier of its own.
/// Forward: r_i -= L_ij y_j for j = 0..i-1 in order, the row-oriented sums' order. Backward: why
/// descending k in r_q -= L_kq x_k: ascending order (row-oriented) would serialise every row.
template <class S, class Team>
BIGSTEP_HD void lm_phase_solve_fused(Team& team, int D, LmTraj<S>& t) {
  using namespace team_detail;
  if (t.over()) return;
  S* delta = t.r;
  team.for_each_lane(D, [&](int i) { delta[i] = -t.g[i]; });
  team.sync();
  S prev = 0;
  for (int j = 0; j < D; ++j) {  // L y = -g
    const S yj = delta[j] / t.Lc[j * D + j];
    team.for_each_lane(D - j - 1, [&](int q) { delta[j + 1 + q] -= t.Lc[(j + 1 + q) * D + j] * yj; });
    if (j > 0) team.single([&] { delta[j - 1] = prev; });
    prev = yj;
    team.sync();
  }
  team.single([&] { delta[D - 1] = prev; });
  team.sync();
  for (int i = D - 1; i >= 0; --i) {  // L^T x = y
    const S xi = delta[i] / t.Lc[i * D + i];
    team.for_each_lane(i, [&](int q) { delta[q] -= t.Lc[i * D + q] * xi; });
    if (i < D - 1) team.single([&] { delta[i + 1] = prev; });
    prev = xi;
    team.sync();
  }
  team.single([&] { delta[0] = prev; });
  team.sync();
}

/// Phase 6: predicted decrease, small-step test (ends the attempt), next candidate th + delta.
template <class S, class Team>
BIGSTEP_HD void lm_phase_candidate(Team& team, const ModelView<S>& m, const LmTeamSettings<S>& cfg, LmTraj<S>& t,
                                   S* scratch) {
  using namespace team_detail;
  using std::abs;
  if (t.over()) return;
  const int D = m.n_q;
  // |delta|_inf, |theta|_inf and the predicted decrease: a tree over the DOFs
  const S* delta = t.r;
  const auto red = team_reduce<3>(
      team, D, scratch,
      [&](int i, S* v) {
        v[0] = abs(delta[i]);
        v[1] = abs(t.th[i]);
        v[2] = delta[i] * (t.lambda() * delta[i] - t.g[i]);
      },
      [](S* x, const S* y) {
        x[0] = y[0] > x[0] ? y[0] : x[0];
        x[1] = y[1] > x[1] ? y[1] : x[1];
        x[2] += y[2];
      });
  // every lane has the reduction, so every lane decides: no shared slot and no barrier between
  // lane 0's writes and the branch (the next reads of PRED and ACCEPT follow later barriers)
  const bool small = red[0] <= cfg.eps_x * (cfg.eps_x + red[1]);
  team.single([&] {
    t.pred() = S(0.5) * red[2];
    t.accept() = small ? S(1) : S(0);  // reused: small step
  });
  if (small) {
    const S tol = cfg.eps_r * lm_scale(m, t);
    lm_end_attempt(team, m, cfg, t, t.res() <= 100 * tol ? unsigned(STATUS_SMALL_STEP) : unsigned(STATUS_NOT_CONVERGED),
                   scratch);
    return;
  }
  team.for_each_lane(D, [&](int i) { t.th_c[i] = t.th[i] + t.r[i]; });
  team.single([&] { t.it() += 1; });
  team.sync();
}

/// One LM iteration of trajectory t (a no-op unless RUNNING), fused: every phase with the team's
/// own dense algebra. in: lm_step_in(cfg, t, ...). scratch: pbfd_scratch_size(m) S.
template <class S, class Team>
BIGSTEP_HD void lm_team_iteration(Team& team, const ModelView<S>& m, const LmTeamSettings<S>& cfg, LmTraj<S>& t,
                                  const PbfdStepConst<S>& in, S* scratch) {
  lm_phase_evaluate(team, m, cfg, t, in, scratch);
  lm_phase_normal_fused(team, m.n_q, t);
  lm_phase_update(team, m, cfg, t, scratch);
  lm_phase_factor_fused(team, m.n_q, t);
  lm_phase_solve_fused(team, m.n_q, t);
  lm_phase_candidate(team, m, cfg, t, scratch);
}

/// The same with the step constants built here (C_perp, C_par and the mass scale from t.params).
template <class S, class Team>
BIGSTEP_HD void lm_team_iteration(Team& team, const ModelView<S>& m, const LmTeamSettings<S>& cfg, LmTraj<S>& t,
                                  S dt, S alpha, S beta, S gamma, S* scratch) {
  lm_team_iteration(team, m, cfg, t, lm_step_in(cfg, t, dt, alpha, beta, gamma), scratch);
}

}  // namespace bigstep
