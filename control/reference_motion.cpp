// Reference joint trajectories (docs/methods/nmdp.md §10 [choice]: cubic-spline joint targets, jump =
// all legs in phase with a 2 s period, walk = trot with a 0.6 s cycle and 0.15 m stride).
#include "control/reference_motion.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.h"

namespace bigstep {

// ---------------------------------------------------------------------------------------
// PeriodicSpline
// ---------------------------------------------------------------------------------------

PeriodicSpline::PeriodicSpline(std::vector<double> t, std::vector<double> y, double period)
    : t_(std::move(t)), y_(std::move(y)), period_(period) {
  const int K = int(t_.size());
  BIGSTEP_CHECK_ARG(K >= 1 && int(y_.size()) == K, "spline knots", detail::concat(K, "/", y_.size()),
                    "need at least one knot and as many values as times");
  BIGSTEP_CHECK_ARG(std::isfinite(period) && period > 0, "spline period", period, "must be finite and > 0");
  for (int i = 0; i < K; ++i)
    BIGSTEP_CHECK_ARG(std::isfinite(t_[i]) && std::isfinite(y_[i]), "spline knot", i, "must be finite");
  for (int i = 0; i + 1 < K; ++i)
    BIGSTEP_CHECK_ARG(t_[i + 1] > t_[i], "spline knot times", detail::concat(t_[i], " then ", t_[i + 1]),
                      "must increase");
  BIGSTEP_CHECK_ARG(t_[K - 1] < t_[0] + period, "spline knot times", t_[K - 1] - t_[0],
                    detail::concat("must span less than one period (", period, ")"));
  // wrap: knot K is knot 0 one period later
  t_.push_back(t_[0] + period);
  y_.push_back(y_[0]);
  std::vector<double> h(K), d(K);  // segment lengths and secants
  for (int i = 0; i < K; ++i) {
    h[i] = t_[i + 1] - t_[i];
    d[i] = (y_[i + 1] - y_[i]) / h[i];
  }
  // Fritsch-Carlson slopes: 0 at local extrema and flat segments, else the weighted harmonic
  // mean of the neighbouring secants (keeps each segment monotone: no overshoot)
  m_.assign(K + 1, 0.0);
  for (int i = 0; i < K; ++i) {
    const int p = (i + K - 1) % K;
    if (d[p] * d[i] <= 0) continue;
    const double w1 = 2 * h[i] + h[p], w2 = h[i] + 2 * h[p];
    m_[i] = (w1 + w2) / (w1 / d[p] + w2 / d[i]);
  }
  m_[K] = m_[0];
}

int PeriodicSpline::segment(double t, double& s) const {
  double tau = std::fmod(t - t_[0], period_);
  if (tau < 0) tau += period_;
  if (tau >= period_) tau = 0;  // fmod round-off
  const double tt = t_[0] + tau;
  // last knot <= tt among the K real knots
  const int K = int(t_.size()) - 1;
  int i = int(std::upper_bound(t_.begin(), t_.begin() + K, tt) - t_.begin()) - 1;
  i = std::clamp(i, 0, K - 1);
  s = tt - t_[i];
  return i;
}

double PeriodicSpline::value(double t) const {
  double s;
  const int i = segment(t, s);
  const double h = t_[i + 1] - t_[i], u = s / h, u2 = u * u, u3 = u2 * u;
  return (2 * u3 - 3 * u2 + 1) * y_[i] + (u3 - 2 * u2 + u) * h * m_[i] + (-2 * u3 + 3 * u2) * y_[i + 1] +
         (u3 - u2) * h * m_[i + 1];
}

double PeriodicSpline::derivative(double t) const {
  double s;
  const int i = segment(t, s);
  const double h = t_[i + 1] - t_[i], u = s / h, u2 = u * u;
  return ((6 * u2 - 6 * u) * y_[i] + (3 * u2 - 4 * u + 1) * h * m_[i] + (-6 * u2 + 6 * u) * y_[i + 1] +
          (3 * u2 - 2 * u) * h * m_[i + 1]) / h;
}

// ---------------------------------------------------------------------------------------
// ReferenceMotion
// ---------------------------------------------------------------------------------------

const char* leg_role_name(int role) {
  static const char* names[kLegRoles] = {"abduction", "hip", "knee", "ankle"};
  return role >= 0 && role < kLegRoles ? names[role] : "?";
}

const char* reference_kind_name(ReferenceKind k) {
  switch (k) {
    case ReferenceKind::Hold: return "hold";
    case ReferenceKind::Jump: return "jump";
    case ReferenceKind::Walk: return "walk";
    case ReferenceKind::Move: return "move";
  }
  return "?";
}

namespace {

const std::string kReferenceKey = "control.reference.";

void check_positive(double x, const std::string& key) {
  BIGSTEP_CHECK_ARG(std::isfinite(x) && x > 0, key, x, "must be finite and > 0");
}

// smoothstep fade-in over [0, ramp] and its time derivative
void ramp_factor(double t, double ramp, double& r, double& rd) {
  if (ramp <= 0 || t >= ramp) {
    r = 1;
    rd = 0;
  } else if (t <= 0) {
    r = rd = 0;
  } else {
    const double x = t / ramp;
    r = x * x * (3 - 2 * x);
    rd = 6 * x * (1 - x) / ramp;
  }
}

}  // namespace

ReferenceMotion::ReferenceMotion(const ReferenceSpec& spec) : s_(spec) {
  const int n = int(s_.stand.size());
  BIGSTEP_CHECK_ARG(n > 0 && s_.stand.allFinite(), kReferenceKey + "stand", n, "needs n_q finite values");
  if (s_.kind == ReferenceKind::Hold) return;
  if (s_.kind == ReferenceKind::Move) {
    const std::string mk = kReferenceKey + "move.";
    BIGSTEP_CHECK_ARG(std::isfinite(s_.move_start), mk + "start", s_.move_start, "must be finite");
    check_positive(s_.move_duration, mk + "duration");
    BIGSTEP_CHECK_ARG(std::isfinite(s_.move_frequency) && s_.move_frequency >= 0, mk + "frequency",
                      s_.move_frequency, "must be finite and >= 0");
    for (auto [v, k] : {std::pair{&s_.move_offset, "offset"}, std::pair{&s_.move_amplitude, "amplitude"}}) {
      if (v->size() == 0) v->setZero(n);
      BIGSTEP_CHECK_ARG(v->size() == n && v->allFinite(), mk + k, v->size(), "needs n_q finite values");
    }
    return;
  }
  // keys of the motion's own section: control.reference.jump.* / control.reference.walk.*
  const std::string mk = kReferenceKey + reference_kind_name(s_.kind) + ".";
  BIGSTEP_CHECK_ARG(std::isfinite(s_.ramp) && s_.ramp >= 0, mk + "ramp", s_.ramp, "must be finite and >= 0");
  check_positive(s_.period, mk + "period");
  BIGSTEP_CHECK_ARG(!s_.legs.empty(), kReferenceKey + "legs", "[]", "jump and walk need at least one leg");
  std::set<int> used;
  for (size_t l = 0; l < s_.legs.size(); ++l) {
    const LegJoints& leg = s_.legs[l];
    const std::string lk = detail::concat(kReferenceKey, "legs[", l, "]");
    BIGSTEP_CHECK_ARG(leg.dof[kHip] >= 0, lk + ".hip", "(missing)", "every leg needs a hip joint");
    for (int r = 0; r < kLegRoles; ++r) {
      const int k = leg.dof[r];
      if (k < 0) continue;
      BIGSTEP_CHECK_ARG(k < n, lk + "." + leg_role_name(r), k, detail::concat("DOF index must be < n_q = ", n));
      BIGSTEP_CHECK_ARG(used.insert(k).second, lk + "." + leg_role_name(r), k,
                        "this DOF already belongs to another leg joint");
    }
    BIGSTEP_CHECK_ARG(std::isfinite(leg.phase) && leg.phase >= 0 && leg.phase < 1, lk + ".phase", leg.phase,
                      "must be in [0, 1)");
    BIGSTEP_CHECK_ARG(leg.sweep_sign == 1 || leg.sweep_sign == -1, lk + ".sweep_sign", leg.sweep_sign,
                      "must be 1 or -1");
  }
  for (int r = 0; r < kLegRoles; ++r)
    for (const auto* a : {&s_.crouch, &s_.extension, &s_.flight, &s_.lift})
      BIGSTEP_CHECK_ARG(std::isfinite((*a)[r]), mk + leg_role_name(r), (*a)[r], "offsets must be finite");

  if (s_.kind == ReferenceKind::Jump) {
    check_positive(s_.crouch_time, mk + "crouch_time");
    check_positive(s_.extension_time, mk + "extension_time");
    check_positive(s_.flight_time, mk + "flight_time");
    check_positive(s_.landing_time, mk + "landing_time");
    const double t1 = s_.crouch_time, t2 = t1 + s_.extension_time, t3 = t2 + s_.flight_time,
                 t4 = t3 + s_.landing_time;
    BIGSTEP_CHECK_ARG(t4 <= s_.period * (1 + 1e-12), mk + "period", s_.period,
                      detail::concat("must be >= crouch_time + extension_time + flight_time + landing_time = ", t4));
    // knots: stand (offset 0) at 0, crouch, extension, flight, stand again at t4 (dropped when it
    // coincides with the next period's first knot)
    for (int r = 0; r < kLegRoles; ++r) {
      std::vector<double> t{0, t1, t2, t3}, y{0, s_.crouch[r], s_.extension[r], s_.flight[r]};
      if (t4 < s_.period * (1 - 1e-12)) {
        t.push_back(t4);
        y.push_back(0);
      }
      jump_[r] = PeriodicSpline(t, y, s_.period);
    }
  } else {
    check_positive(s_.leg_length, mk + "leg_length");
    BIGSTEP_CHECK_ARG(std::isfinite(s_.stride) && s_.stride >= 0 && s_.stride < 2 * s_.leg_length,
                      mk + "stride", s_.stride, "must be in [0, 2 leg_length)");
    BIGSTEP_CHECK_ARG(std::isfinite(s_.duty) && s_.duty > 0 && s_.duty < 1, mk + "duty", s_.duty,
                      "must be in (0, 1)");
    sweep_amp_ = std::asin(s_.stride / (2 * s_.leg_length));
    BIGSTEP_CHECK_ARG(std::isfinite(s_.replan_gain) && s_.replan_gain >= 0, mk + "replan_gain", s_.replan_gain,
                      "must be finite and >= 0");
    BIGSTEP_CHECK_ARG(s_.replan_gain == 0 || (s_.foot_space && s_.world_swing), mk + "replan_gain", s_.replan_gain,
                      "needs walk.foot_space and walk.world_swing (the plan at the rollout's state)");
    if (s_.foot_space) {
      BIGSTEP_CHECK_ARG(std::isfinite(s_.step_height) && s_.step_height >= 0, mk + "step_height", s_.step_height,
                        "must be finite and >= 0");
      BIGSTEP_CHECK_ARG(s_.foot.legs.size() == s_.legs.size(), mk + "foot_space", s_.foot.legs.size(),
                        "needs the legs' geometry from the Model (foot_trot_setup)");
      BIGSTEP_CHECK_ARG(std::isfinite(s_.settle_time) && s_.settle_time >= 0, mk + "settle_time", s_.settle_time,
                        "must be >= 0");
      gait_ = FootTrotGait{s_.period, s_.duty, s_.stride, s_.step_height, s_.ramp, {}};
      gait_.settle = s_.settle_time;
      gait_.replan = s_.replan_gain;
      for (const LegJoints& leg : s_.legs) gait_.phase.push_back(leg.phase);
    }
    const double d = s_.duty, sw = 0.5 * (1 - d);
    // unit profiles over the gait phase s in [0, 1): sweep +1 -> -1 in stance (through 0 at
    // mid-stance, nearly linear there), back to +1 in swing; lift 0 in stance, 1 at mid-swing
    sweep_ = PeriodicSpline({0, 0.5 * d, d, d + sw}, {1, 0, -1, 0}, 1.0);
    lift_ = PeriodicSpline({0, d, d + sw}, {0, 0, 1}, 1.0);
  }
}

void ReferenceMotion::at_state(double t, double t_mode, const VecX& theta, const VecX& v, double* mem, VecX& th,
                               VecX& thd) const {
  if (s_.kind != ReferenceKind::Walk || !s_.foot_space) return (*this)(t, th, thd);
  th = s_.stand;
  thd = VecX::Zero(s_.stand.size());
  foot_trot_eval_state(s_.foot, gait_, t, t_mode, theta, v, mem, th, thd);
}

int ReferenceMotion::memory_size() const {
  const bool replan = s_.kind == ReferenceKind::Walk && s_.foot_space && s_.replan_gain > 0;
  return replan ? kFootTrotMemory * int(s_.foot.legs.size()) : 0;
}

bool ReferenceMotion::planned_contact(double t, int geom_a, int geom_b) const {
  if (s_.kind != ReferenceKind::Walk || !s_.foot_space) return true;
  return foot_trot_planned_contact(s_.foot, gait_, t, geom_a, geom_b);
}

void ReferenceMotion::operator()(double t, VecX& th, VecX& thd) const {
  th = s_.stand;
  thd = VecX::Zero(s_.stand.size());
  if (s_.kind == ReferenceKind::Hold) return;
  if (s_.kind == ReferenceKind::Move) {
    // quintic smoothstep s(u) of u = (t - start) / duration, times offset + amplitude sin(w tau)
    const double T = s_.move_duration, tau = t - s_.move_start, u = std::clamp(tau / T, 0.0, 1.0);
    const double s = u * u * u * (10 + u * (-15 + 6 * u));
    const double sd = (u > 0 && u < 1) ? 30 * u * u * (1 - u) * (1 - u) / T : 0;
    const double w = 2 * M_PI * s_.move_frequency, sn = tau > 0 ? std::sin(w * tau) : 0,
                 cs = tau > 0 ? w * std::cos(w * tau) : 0;
    th.noalias() += s * s_.move_offset + (s * sn) * s_.move_amplitude;
    thd.noalias() += sd * s_.move_offset + (sd * sn + s * cs) * s_.move_amplitude;
    return;
  }
  double r, rd;
  ramp_factor(t, s_.ramp, r, rd);
  if (s_.kind == ReferenceKind::Jump) {
    for (int role = 0; role < kLegRoles; ++role) {
      const double o = jump_[role].value(t), od = jump_[role].derivative(t);
      for (const LegJoints& leg : s_.legs) {
        const int k = leg.dof[role];
        if (k < 0) continue;
        th[k] += r * o;
        thd[k] += r * od + rd * o;
      }
    }
    return;
  }
  if (s_.foot_space) {
    foot_trot_eval(s_.foot, gait_, t, th, thd);
    return;
  }
  const double P = s_.period;
  for (const LegJoints& leg : s_.legs) {
    double s = t / P + leg.phase;
    s -= std::floor(s);
    const double sw = sweep_.value(s), swd = sweep_.derivative(s) / P;
    const double lf = lift_.value(s), lfd = lift_.derivative(s) / P;
    for (int role = 0; role < kLegRoles; ++role) {
      const int k = leg.dof[role];
      if (k < 0) continue;
      double o = s_.lift[role] * lf, od = s_.lift[role] * lfd;
      if (role == kHip) {
        o += leg.sweep_sign * sweep_amp_ * sw;
        od += leg.sweep_sign * sweep_amp_ * swd;
      }
      th[k] += r * o;
      thd[k] += r * od + rd * o;
    }
  }
}

}  // namespace bigstep
