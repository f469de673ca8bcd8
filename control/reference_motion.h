// Periodic reference joint trajectories for the stable-PD servo (docs/methods/nmdp.md §10): hold, jump
// (all legs in phase: crouch, fast extension, flight, landing) and walk (trot), built from
// periodic monotone cubic Hermite splines so theta_dot_bar is the spline's analytic derivative;
// and move, a one-off joint-space motion (the grasping arm's lift and shake, inverse-dynamics-
// contact.md §9).
#pragma once
#include <array>
#include <string>
#include <vector>

#include "core/types.h"
#include "control/foot_trot.h"

namespace bigstep {

/// Periodic piecewise-cubic Hermite interpolant through (t_i, y_i), t_0 < ... < t_{K-1} < t_0 + T,
/// with Fritsch-Carlson (PCHIP) knot slopes: C^1, no overshoot (a knot that is a local extremum
/// gets slope 0), y(t + T) = y(t) for every t (knot K wraps to knot 0).
class PeriodicSpline {
 public:
  PeriodicSpline() = default;
  /// Throws InvalidArgument when sizes differ, K < 1, T <= 0 or the knots are not increasing
  /// inside one period.
  PeriodicSpline(std::vector<double> t, std::vector<double> y, double period);
  double value(double t) const;
  double derivative(double t) const;  ///< dy/dt

 private:
  // segment i = [t_i, t_{i+1}] containing t (reduced into [t_0, t_0 + T)), and its local s = t - t_i
  int segment(double t, double& s) const;
  std::vector<double> t_, y_, m_;  ///< (K + 1) knots incl. the wrapped one, values, slopes
  double period_ = 1;
};

/// Leg joints a reference drives (indices into theta; -1 = the leg has no such joint).
enum LegRole { kAbduction = 0, kHip = 1, kKnee = 2, kAnkle = 3, kLegRoles = 4 };
const char* leg_role_name(int role);  ///< "abduction", "hip", "knee", "ankle"

struct LegJoints {
  std::array<int, kLegRoles> dof{-1, -1, -1, -1};
  double phase = 0;       ///< walk: gait phase in [0, 1) (trot: diagonal pairs 0 and 0.5)
  double sweep_sign = 1;  ///< walk: +1 when increasing the hip angle moves the foot forward
};

enum class ReferenceKind { Hold, Jump, Walk, Move };
const char* reference_kind_name(ReferenceKind k);

/// Everything a reference needs; offsets are [rad] (or [m] for prismatic DOFs), per leg role,
/// added to the stand pose on every leg. Filled by the scene loader (control.reference.*).
struct ReferenceSpec {
  ReferenceKind kind = ReferenceKind::Hold;
  VecX stand;                     ///< (n_q) pose held by `hold` and around which jump / walk move
  std::vector<LegJoints> legs;
  double period = 2.0;            ///< [s] one cycle
  double ramp = 0;                ///< [s] offsets fade in with a smoothstep over [0, ramp] (0 = none)
  // jump keyframes, inside one period: stand at 0, crouch at crouch_time, full extension
  // extension_time later, flight pose flight_time after that, stand again landing_time later
  double crouch_time = 1.2, extension_time = 0.15, flight_time = 0.2, landing_time = 0.3;
  std::array<double, kLegRoles> crouch{}, extension{}, flight{};
  // walk (trot): per leg phase s = frac(t / period + phase); stance for s in [0, duty) sweeps the
  // hip from +A to -A (foot moves back), swing returns it and adds `lift` (peak at mid-swing);
  // A = asin(stride / (2 leg_length)) so the foot moves `stride` per stance relative to the hip
  double stride = 0.15;           ///< [m] foot travel per stance
  double leg_length = 0.4;        ///< [m] hip axis to foot distance (lever of the sweep)
  double duty = 0.5;              ///< stance fraction of the cycle
  std::array<double, kLegRoles> lift{};
  // walk.foot_space (control/foot_trot.h): the plan in the world instead (stance feet fixed, torso
  // moving at stride / (duty period), swing arcs step_height high, joints by analytic IK); `foot`
  // holds the leg geometry, set by the scene loader from the Model (abduction, hip, knee per leg)
  bool foot_space = false;
  double step_height = 0.04;      ///< [m] swing apex above the ground (foot_space)
  bool world_swing = false;       ///< foot_space: the ID controllers' plan maps swing feet into the actual torso pose
  double settle_time = 0;         ///< [s] world_swing: landed legs' angles blend from the actual to the planned torso pose
  double replan_gain = 0;         ///< [s] world_swing: landing foothold shift per torso velocity error (foot_trot.h)
  FootTrot foot;
  // move: theta_bar = stand + s(u) (offset + amplitude sin(2 pi frequency (t - start))), u = (t -
  // start) / duration clamped to [0, 1], s the quintic smoothstep 10u^3 - 15u^4 + 6u^5 (zero
  // velocity and acceleration at both ends): hold, move to stand + offset, hold (plus an optional
  // sinusoid that fades in over the same interval)
  double move_start = 0;          ///< [s]
  double move_duration = 1;       ///< [s] > 0
  VecX move_offset, move_amplitude;  ///< (n_q) each, or empty = zeros
  double move_frequency = 0;      ///< [Hz]
};

/// theta_bar(t), theta_dot_bar(t) of a ReferenceSpec; a value type usable as PdServo::reference.
class ReferenceMotion {
 public:
  ReferenceMotion() = default;
  /// Validates the spec (throws InvalidArgument "control.reference.<key> = <value>: <why>").
  explicit ReferenceMotion(const ReferenceSpec& spec);
  void operator()(double t, VecX& theta_bar, VecX& theta_dot_bar) const;
  /// The plan for a rollout at (theta, v): walk.foot_space maps the feet that swing at t_mode into
  /// the actual torso pose (foot_trot_eval_state); every other motion ignores the state and t_mode.
  /// mem: the rollout's plan memory (memory_size() doubles, zeros at t = 0; nullptr when 0).
  void at_state(double t, double t_mode, const VecX& theta, const VecX& v, double* mem, VecX& theta_bar,
                VecX& theta_dot_bar) const;
  /// Doubles of per-rollout memory at_state keeps: walk.replan_gain > 0: kFootTrotMemory per leg; else 0.
  int memory_size() const;
  /// walk.foot_space: whether a contact of geoms (a, b) belongs to the plan at t (false for a foot
  /// planned in swing, foot_trot_planned_contact); every other motion: true.
  bool planned_contact(double t, int geom_a, int geom_b) const;
  const ReferenceSpec& spec() const { return s_; }
  double sweep_amplitude() const { return sweep_amp_; }  ///< walk: A [rad]

 private:
  ReferenceSpec s_;
  std::array<PeriodicSpline, kLegRoles> jump_;  ///< jump: offset of each role vs time
  PeriodicSpline sweep_, lift_;                 ///< walk: unit profiles vs gait phase s
  FootTrotGait gait_;                           ///< walk.foot_space: timing and leg phases
  double sweep_amp_ = 0;
};

}  // namespace bigstep
