// Data: one rollout's state and everything it carries between steps and iterations (docs/architecture.md
// §4). Built from the Model by an integrator (Integrator::make_data), so
// its workspace fits that integrator; integrators themselves hold no per-rollout state, which makes
// a batch bit-identical for any thread count and any assignment of rollouts to threads.
#pragma once
#include <memory>
#include <vector>

#include "core/model.h"

namespace bigstep {

/// An integrator's per-rollout scratch (kinematics, Jacobians, solver workspaces). What outlives
/// a step is a named field of Data, except solver warm starts that only speed a solve up (NMDP's
/// PGM keeps its QP active set here); reset_carry() drops those.
struct Workspace {
  virtual ~Workspace() = default;
  virtual void reset_carry() {}
};

struct Data {
  explicit Data(const Model& m);
  Data(Data&&) noexcept = default;
  Data& operator=(Data&&) noexcept = default;

  // state: Integrator::step reads (theta, theta_prev) and advances both
  VecX theta;        ///< (n_q) theta_n
  VecX theta_prev;   ///< (n_q) theta_{n-1}
  VecX theta_next;   ///< (n_q) output buffer of a step, swapped into theta (no allocation)

  // carried by NMDP (docs/methods/nmdp.md §3, Alg. 2): after a subdivided frame the state (theta_-, theta_--,
  // dt_last) is not what (theta_n, theta_{n-1}, dt) gives; it is kept here for the next frame and
  // used only when that frame starts where this one ended (frame_start = theta_{n-1}, theta_m = theta_n)
  struct NmdpCarry {
    bool valid = false;
    VecX frame_start;    ///< (n_q) theta_n of the frame that produced the carry
    VecX theta_m;        ///< (n_q) theta_- after it (= that frame's theta_{n+1})
    VecX theta_mm;       ///< (n_q) theta_-- after it (start of its last accepted substep)
    double dt_last = 0;  ///< length of its last accepted substep [s]
    double gamma = 1;    ///< PGM's final gamma (integrator.carry_gamma)
  } nmdp;

  // carried by NE-MDP and the compliant N-step: the active set of the last contact QP (warm start of the next one)
  std::vector<int> qp_active;

  // the integrator's scratch (created by Integrator::make_data)
  std::unique_ptr<Workspace> ws;

  /// Forget everything carried between steps (a new episode from (theta, theta_prev)).
  void reset_carry() {
    nmdp.valid = false;
    qp_active.clear();
    if (ws) ws->reset_carry();
  }
};

inline Data::Data(const Model& m)
    : theta(VecX::Zero(m.n_q)), theta_prev(VecX::Zero(m.n_q)), theta_next(VecX::Zero(m.n_q)) {
  nmdp.frame_start = nmdp.theta_m = nmdp.theta_mm = VecX::Zero(m.n_q);
}

}  // namespace bigstep
