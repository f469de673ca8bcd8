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
  /// Points every kinematics scratch of the workspace at the rollout's charts (Data::chart,
  /// core/chart.h); Integrator::make_data calls it once, as the charts never move.
  virtual void bind_chart(const Mat3* chart) = 0;
  /// A chart was re-anchored: whatever the workspace caches by theta alone is stale.
  virtual void charts_moved() {}
};

struct Data {
  explicit Data(const Model& m);
  Data(Data&&) noexcept = default;
  Data& operator=(Data&&) noexcept = default;

  // state: Integrator::step reads (theta, theta_prev) and advances both
  VecX theta;        ///< (n_q) theta_n
  VecX theta_prev;   ///< (n_q) theta_{n-1}
  VecX theta_next;   ///< (n_q) output buffer of a step, swapped into theta (no allocation)
  /// (n_chart) the chart of each ball / floating joint's Euler angles (core/chart.h), identity at
  /// the start; part of the state: theta, theta_prev and everything carried are in these charts.
  /// Sized once, so its buffer (which the workspace points at) never moves.
  std::vector<Mat3> chart;

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

  // carried by multistep integrators (PBD / PBFD at integrator.order 2, docs/methods/pbfd.md §3.1): the
  // last step's (theta_n, theta_{n-1}) as given, the theta_{n-2} it used, its result and the number
  // of active contacts at the last three configurations, so that the next step finds its
  // theta_{n-2} and knows whether a contact event lies inside its window. Checked bit for bit, so a
  // state written from outside (a reset) is never mistaken for a continuation.
  struct StepHistory {
    /// How a step is discretised: Fresh = no history (the start formulas), Event = a contact was
    /// made or broken inside [t_{n-2}, t_n] (the first-order step: a multistep memory of the
    /// velocity before an impact would throw the body back off), History = the four-point step.
    enum Kind { Fresh, Event, History };
    enum Match { None, Continues, Repeats };
    bool valid = false;
    Kind kind = Fresh;    ///< of the recorded step
    Match match = None;   ///< how the current step relates to the recorded one (find)
    VecX theta_n, theta_nm1, theta_nm2, theta_next;  ///< (n_q) each
    VecX nm2;             ///< (n_q) the current step's theta_{n-2} (find)
    int c_next = 0, c_n = 0, c_nm1 = 0;  ///< active contacts at the recorded theta_next, theta_n, theta_{n-1}

    /// The current step's kind from (theta_n, theta_{n-1}), with its theta_{n-2} in nm2 for History.
    /// A step that continues the recorded one reads its theta_{n-1}; after a Fresh step that point
    /// encodes the start velocity, not the trajectory, so the quadratic through (theta_{n-1}, its
    /// velocity, theta_n) is read at t_{n-2} instead: theta_next - 2 theta_n + 2 theta_{n-1}. A
    /// repeated step (the re-step at an actuator limit) is what the recorded one was.
    Kind find(const VecX& theta_n_, const VecX& theta_nm1_) {
      match = None;
      if (valid && theta_n_ == theta_next && theta_nm1_ == theta_n) {
        match = Continues;
        if (!(c_nm1 == c_n && c_n == c_next)) return Event;
        if (kind == Fresh) nm2 = theta_next - 2 * theta_n + 2 * theta_nm1;
        else nm2 = theta_nm1;
        return History;
      }
      if (valid && theta_n_ == theta_n && theta_nm1_ == theta_nm1) {
        match = Repeats;
        nm2 = theta_nm2;
        return kind;
      }
      return Fresh;
    }
    /// Records the step just taken from (theta_n, theta_{n-1}) to theta_next, of kind k (find's),
    /// with `contacts` active contacts at theta_next.
    void record(const VecX& theta_n_, const VecX& theta_nm1_, const VecX& theta_next_, Kind k, int contacts) {
      if (match == Continues) {
        c_nm1 = c_n;
        c_n = c_next;
      } else if (match == None) {
        c_nm1 = c_n = contacts;  // a start: its contacts taken as those at the end of its first step
      }
      c_next = contacts;
      theta_nm2 = nm2;
      theta_nm1 = theta_nm1_;
      theta_n = theta_n_;
      theta_next = theta_next_;
      kind = k;
      valid = true;
    }
  } history;

  // carried by NE-MDP and the compliant N-step: the active set of the last contact QP (warm start of the next one)
  std::vector<int> qp_active;

  // the integrator's scratch (created by Integrator::make_data)
  std::unique_ptr<Workspace> ws;

  /// Forget everything carried between steps (a new episode from (theta, theta_prev)).
  void reset_carry() {
    nmdp.valid = false;
    history.valid = false;
    qp_active.clear();
    if (ws) ws->reset_carry();
  }
};

inline Data::Data(const Model& m)
    : theta(VecX::Zero(m.n_q)), theta_prev(VecX::Zero(m.n_q)), theta_next(VecX::Zero(m.n_q)),
      chart(size_t(m.n_chart), Mat3::Identity()) {
  nmdp.frame_start = nmdp.theta_m = nmdp.theta_mm = VecX::Zero(m.n_q);
  history.theta_n = history.theta_nm1 = history.theta_nm2 = history.theta_next = history.nm2 = VecX::Zero(m.n_q);
}

}  // namespace bigstep
