// NMDP frame = Alg. 2 as the explicit stack of docs/methods/nmdp.md §7.5 (resolutions of §7.4 / B3):
//   stack <- [(t_end = dt, depth 0)]
//   while stack: h = top.t_end - t_now; PGM(h / dt_last, dt_last, theta_-, theta_--)
//     ok:   theta_-- <- theta_-; theta_- <- theta; dt_last <- h; t_now <- pop
//     fail: DIVERGED if h/2 < h_min or depth(top) = depth_max; else top.depth += 1 and
//           push (t_now + h/2, top.depth)   (the second half inherits depth + 1)
// Times are integer ticks of dt / 2^depth_max, so h = dt / 2^depth exactly and the accepted
// substeps tile the frame without rounding. PD targets are taken at each substep's end (§9).
// Reported normal force (StepStats::normal_force): each accepted substep's n . (B(theta) w) at its
// solution, weighted by h / dt, i.e. the frame's normal contact impulse over dt.
// cpu-only: a batched GPU state machine of §7.5 is future work.
#include "solvers/nmdp/nmdp_step.h"

#include <cmath>

#include "core/error.h"

namespace bigstep {

void validate_nmdp_settings(const NmdpSettings& s) {
  validate_ne_settings(s.contact);
  validate_pgm_settings(s.pgm);
  BIGSTEP_CHECK_ARG(s.depth_exponent == 3 || s.depth_exponent == 4, "contact.depth_exponent", s.depth_exponent,
                    "must be 3 (paper) or 4 (C^3 at d = 0)");
  BIGSTEP_CHECK_ARG(std::isfinite(s.h_min) && s.h_min > 0, "integrator.h_min", s.h_min, "must be finite and > 0");
  BIGSTEP_CHECK_ARG(s.depth_max >= 0 && s.depth_max <= 30, "integrator.depth_max", s.depth_max, "must be in [0, 30]");
}

namespace {
// per-rollout scratch: the problem (kinematics cache, contact candidates), PGM (whose QP warm start
// carries over between this rollout's calls), the subdivision stack and iterates
struct NmdpWorkspace : Workspace {
  NmdpWorkspace(const Model& m, const NmdpSettings& s, const MdpPolytope& poly)
      : problem(m, poly, s.form, s.accel, s.contact.active_distance), pgm(problem), theta(m.n_q) {
    problem.set_servo_metric(s.contact.mdp_effective_metric);
    stack.reserve(size_t(s.depth_max) + 2);
  }
  void reset_carry() override { pgm.reset_warm_start(); }
  void bind_chart(const Mat3* chart) override { problem.bind_chart(chart); }
  NmdpProblem problem;
  Pgm pgm;
  struct Entry { int64_t t_end; int depth; };
  std::vector<Entry> stack;
  NmdpStepInput in;
  VecX theta, w, w_last, th_m, th_mm;
};
}  // namespace

NmdpIntegrator::NmdpIntegrator(const Model& m, const NmdpSettings& s)
    : Integrator(m), s_(s), poly_(make_mdp_polytope(m, s.contact, s.depth_exponent)) {
  validate_nmdp_settings(s_);
}

RolloutParams NmdpIntegrator::default_params() const {
  RolloutParams p;
  p.contact.mu = s_.contact.mu;
  return p;
}

std::unique_ptr<Workspace> NmdpIntegrator::make_workspace() const {
  return std::make_unique<NmdpWorkspace>(m_, s_, poly_);
}

const VecX& NmdpIntegrator::w_last(const Data& d) { return static_cast<const NmdpWorkspace&>(*d.ws).w_last; }

StepStats NmdpIntegrator::advance(const VecX& theta_n, const VecX& theta_nm1, const StepControl& u,
                                  const RolloutParams& p, Data& d, VecX& theta_next) const {
  NmdpWorkspace& ws = static_cast<NmdpWorkspace&>(*d.ws);
  NmdpProblem& problem_ = ws.problem;
  Data::NmdpCarry& carry = d.nmdp;
  const int n = m_.n_q;
  StepStats st;
  const bool pd = u.pd != nullptr && u.pd->active();
  if (pd) validate_pd_servo(*u.pd, n, "control.pd");
  problem_.set_mu(p.contact.mu);
  problem_.set_mass_scale(p.link_mass_scale, p.link_mass_scale
                                                 ? make_mdp_polytope(m_, s_.contact, s_.depth_exponent, p.link_mass_scale).k_c
                                                 : poly_.k_c);
  const double dt = s_.contact.dt;
  // state of §3: carried when this frame continues the rollout's last one
  VecX& th_m = ws.th_m;
  VecX& th_mm = ws.th_mm;
  th_m = theta_n;
  th_mm = theta_nm1;
  double dt_last = dt, gamma = s_.pgm.gamma0;
  if (carry.valid && carry.theta_m == theta_n && carry.frame_start == theta_nm1) {
    th_mm = carry.theta_mm;
    dt_last = carry.dt_last;
    if (s_.carry_gamma) gamma = carry.gamma;
  }
  carry.valid = false;  // consumed (or stale); set again when this frame succeeds
  NmdpStepInput& in = ws.in;
  if (u.tau.size()) in.tau = u.tau;
  else in.tau.setZero(n);  // (a conditional expression would build a temporary VecX)
  if (pd) {
    in.kp = u.pd->kp;
    in.kd = u.pd->kd;
  } else {
    in.kp.resize(0);
    in.kd.resize(0);
  }
  const int64_t T = int64_t(1) << s_.depth_max;
  using Entry = NmdpWorkspace::Entry;
  std::vector<Entry>& stack = ws.stack;
  stack.clear();
  stack.push_back({T, 0});
  int64_t t_now = 0;
  VecX& theta = ws.theta;
  VecX& w = ws.w;
  st.substeps = 0;
  st.min_substep = dt;
  double impulse_n = 0;  // sum over accepted substeps of h times their normal contact force [N s]
  while (!stack.empty()) {
    Entry& top = stack.back();
    const int64_t span = top.t_end - t_now;
    const double h = dt * double(span) / double(T);  // dt / 2^depth: exact
    in.h = h;
    in.dt_last = dt_last;
    in.theta_m = th_m;
    in.theta_mm = th_mm;
    if (pd) u.pd->reference(u.t + dt * double(top.t_end) / double(T), in.theta_bar, in.theta_dot_bar);
    problem_.set_step(in);
    // predictor theta_- + h theta_dot_- as the start of the first projection [choice: docs/methods/nmdp.md
    // §7.3 starts at theta_-; any start that converges gives the same root, this one is closer]
    theta = th_m;
    if (s_.start_at_predictor) theta += (h / dt_last) * (th_m - th_mm);
    NmdpSubstep sub;
    sub.t_begin = t_now;
    sub.t_end = top.t_end;
    sub.depth = top.depth;
    sub.h = h;
    sub.dt_last = dt_last;
    PgmResult r;
    if (fail_hook_ && fail_hook_(h, top.depth)) {
      r.outcome = PgmOutcome::MaxIterations;
    } else {
      r = ws.pgm.solve(problem_, s_.pgm, gamma, theta, w, on_iterate_);
    }
    st.iterations += r.iterations;
    sub.ok = r.ok();
    sub.outcome = r.outcome;
    sub.project = r.project;
    sub.iterations = r.iterations;
    if (on_substep_) on_substep_(sub);
    if (r.ok()) {
      th_mm.swap(th_m);
      th_m = theta;
      dt_last = h;
      t_now = top.t_end;
      stack.pop_back();
      ++st.substeps;
      st.min_substep = std::min(st.min_substep, h);
      st.residual = r.G_norm;
      impulse_n += h * problem_.normal_force(theta, w);
      ws.w_last = w;
      if (s_.carry_gamma) gamma = r.gamma;
      continue;
    }
    // DIVERGED: this rollout only; hold theta_n and forget the carried state
    if (h / 2 < s_.h_min || top.depth >= s_.depth_max) {
      st.status |= STATUS_NOT_CONVERGED;
      st.residual = r.G_norm;
      theta_next = theta_n;
      return st;
    }
    top.depth += 1;
    const Entry half{t_now + span / 2, top.depth};
    stack.push_back(half);
  }
  theta_next = th_m;
  // the frame's normal contact force: substep forces averaged over the frame (weights h / dt)
  st.normal_force = impulse_n / dt;
  // carry (theta_-, theta_--, dt_last, gamma) to this rollout's next frame; a non-finite th_m
  // (held by Integrator::step) never matches a frame's theta_n, so its carry is never used
  carry.valid = true;
  carry.frame_start = theta_n;
  carry.theta_m = th_m;
  carry.theta_mm = th_mm;
  carry.dt_last = dt_last;
  carry.gamma = gamma;
  return st;
}

}  // namespace bigstep
