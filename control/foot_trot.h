// Foot-space trot plan (docs/methods/inverse_dynamics.md §9 "Quadruped task": a planner
// gives foot trajectories, joint targets via IK, I14: a plan must be compatible with the contacts).
// The `walk` reference's joint-space sweep moves the stance feet against each other (the legs
// swing about fixed hips while the torso stands still), so no sticking contact set can follow it.
// This plan works in the world instead:
//   torso: the stand pose moving along the first translation DOF of the floating base (its world
//     axis u) at v = stride / (duty period) after a smoothstep speed ramp over [t0, t0 + ramp]:
//     X = v ramp (x^3 - x^4 / 2), x = (t - t0) / ramp, then v (t - t0 - ramp / 2); t0: the latest
//     mid-stance of the stances under way at t = 0 (FootTrotGait::start);
//   stance foot (gait phase s in [0, duty)): fixed in the world at its foothold, the stand foot
//     position moved by X(t_mid) (t_mid: mid-stance; X = 0 for the stances under way at t = 0, so
//     the plan starts at the stand pose, and the torso is over the middle of each diagonal pair
//     halfway through its two-leg support);
//   swing foot (s in [duty, 1), sigma = (s - duty) / (1 - duty)): from foothold to the next along u
//     by the quintic smoothstep h(sigma) = 10 sigma^3 - 15 sigma^4 + 6 sigma^5, lifted along the
//     world up by step_height b(sigma), b = 64 sigma^3 (1 - sigma)^3 (zero velocity and acceleration
//     at lift-off and touch-down);
//   joints: analytic IK of each 3-DOF leg (abduction axis a, hip axis h perpendicular to a, knee
//     axis parallel to h) for the foot position in the torso frame, p_T = R0^T (p_W - t0 - u X);
//     theta_dot = J_leg^-1 p_T_dot (analytic), so the planned stance feet have zero world velocity.
// At the rollout's state (foot_trot_eval_state, the ID controllers' reference): the paper's planner
// solves the IK "at each controller cycle" (§7.2.1): a swing foot's world path is mapped into the
// torso's actual pose, p_A = R^T (p_W - o), so a torso that rolled about the support diagonal (the
// two-leg phase's unactuated DOF: neither stance leg's joints see it) does not drive the swing foot
// into the ground early; stance legs keep the planned torso pose (their joint PID is the base PD).
// Footstep re-planning (walk.replan_gain k [s], §7.2.1 "replanned during that swing phase as
// necessary"): in the diagonal two-leg support every contact force acts on the support line, so
// nothing the stance legs do acts on the torso's roll about it (bench/experiments/notes/inverse_dynamics.md "Settle"); the next
// foothold can. Each step of a swing the landing foothold is the plan's plus
//   Delta = k (v_T - v_plan)_horizontal      (Raibert / capture-point placement: a torso falling
//                                             sideways at 0.27 omega, omega its roll rate about the
//                                             line, is caught by a foothold on the side it falls to;
//                                             k ~ sqrt(z / g) = 0.17 s for the capture point),
// v_T the torso's world velocity (base translation rates), v_plan the plan's; the swing path blends
// from the lift-off foothold to the moving landing one by h(sigma) (continuous at both ends), the
// shift in effect at touchdown is kept for that stance (stance targets follow the footholds taken).
// The footholds live in a per-rollout memory (kFootTrotMemory doubles per leg, IdControllerState).
#pragma once
#include <array>
#include <vector>

#include "core/model.h"
#include "core/types.h"

namespace bigstep {

/// Geometry of one 3-DOF leg in the torso frame (base DOFs zero, all leg angles zero), from the
/// Model's forward kinematics, and its stand pose.
struct FootLeg {
  std::array<int, 3> dof{-1, -1, -1};  ///< abduction, hip, knee DOF indices
  Vec3 o_a, a;                         ///< abduction axis: a point on it, unit direction
  Vec3 o_h, h;                         ///< hip axis (abduction at 0)
  Vec3 o_k;                            ///< knee axis point (abduction, hip at 0); axis = s_k h
  double s_k = 1;
  Vec3 f;                              ///< foot point (leg angles 0)
  Vec3 p_stand;                        ///< foot at the stand angles, torso frame
  std::array<double, 3> q_stand{};     ///< stand angles (IK branch and 2 pi wrap)
  double sign_e = 1, sign_k = 1;       ///< IK branches of the stand pose (leg below / knee bend side)
  int geom = -1;                       ///< the foot's contact geom (sphere on the knee's link)
};

/// The plan's constants, filled from a Model by foot_trot_setup.
struct FootTrot {
  std::vector<FootLeg> legs;  ///< in ReferenceSpec::legs order
  int base = -1;              ///< first DOF of the floating base (translation along u)
  Vec3 e = Vec3::UnitX();     ///< u in the torso frame (R0^T u)
  Vec3 up = Vec3::UnitZ();    ///< world up (against gravity) in the torso frame
  Mat3 R0 = Mat3::Identity();  ///< torso orientation at the stand pose (world)
  std::array<Vec3, 3> w_t{};   ///< world axes of the base's translation DOFs (w_t[0] = u)
};

/// Leg geometry from the Model: each leg's abduction, hip and knee DOFs (legs[i], -1 = missing)
/// and the contact point (sphere geom) on the knee's link. stand: the pose the plan starts from
/// (n_q). Throws InvalidArgument ("control.reference.walk.foot_space: ...") when the model has no
/// floating base, a leg lacks a joint or foot, or the axes are not abduction-perpendicular-to-hip,
/// hip-parallel-to-knee.
FootTrot foot_trot_setup(const Model& m, const VecX& stand, const std::vector<std::array<int, 3>>& legs);

/// Foot position in the torso frame at leg angles q (abduction, hip, knee); J (optional): d p / d q.
Vec3 foot_leg_position(const FootLeg& g, const std::array<double, 3>& q, Mat3* J = nullptr);

/// Analytic IK: the leg angles on the stand pose's branch (each within pi of its stand angle) that
/// put the foot at p (torso frame); unreachable targets are clamped to the reach (returns false).
bool foot_leg_ik(const FootLeg& g, const Vec3& p, std::array<double, 3>& q);

/// Gait timing of the plan (control.reference.walk.*); phase: one per leg, in [0, 1).
struct FootTrotGait {
  double period = 0.6, duty = 0.75, stride = 0.15, step_height = 0.04, ramp = 0.3;
  std::vector<double> phase;
  /// walk.settle_time [s]: a landed leg's stance angles blend from the actual torso pose to the
  /// planned one over this time after touchdown (foot_trot_eval_state); 0: planned pose at once.
  double settle = 0;
  /// walk.replan_gain [s]: landing foothold shift per unit torso velocity error (0: off)
  double replan = 0;
  double speed() const { return stride / (duty * period); }  ///< v [m/s]
  /// The torso starts moving (its ramp begins) at the latest mid-stance of the stances under way
  /// at t = 0, so that every foothold is X(t_mid) (the initial feet: X = 0) and the torso passes
  /// over the middle of each diagonal support pair halfway through its two-leg phase.
  double start() const;
};

/// Per-rollout foothold memory of the re-planning (gait.replan > 0), per leg: the world offset D of
/// its present (or last) stance's foothold from the plan's (3), the landing offset D' of the swing
/// under way (3) and the gait cycle of D (1); zeros at t = 0.
constexpr int kFootTrotMemory = 7;

/// Foot of leg l at time t in the torso frame (p) and its velocity there (pd); stance: whether
/// the foot is planned on the ground.
void foot_trot_foot(const FootTrot& ft, const FootTrotGait& gait, int l, double t, Vec3& p, Vec3& pd, bool& stance);

/// The plan at time t: th, thd enter as the stand pose and zeros (n_q) and leave with the torso's
/// travel on the base DOF and the legs' IK angles and rates (theta_dot = J_leg^-1 p_T_dot).
void foot_trot_eval(const FootTrot& ft, const FootTrotGait& gait, double t, VecX& th, VecX& thd);

/// The plan at time t for a rollout at (theta, v) (n_q each): as foot_trot_eval, but each leg in
/// swing at t_mode has angles and rates that put its foot on the planned world path seen from the
/// actual torso pose (base DOFs of theta: translations along w_t, Euler angles rz, ry, rx) moving at
/// v. t_mode (usually t) picks stance or swing, so that the plan at t and t + dt of one control step
/// use the same mode (a switch between the two would put a step into their rate difference).
/// gait.settle > 0: a leg tau = s P into its stance (s the gait phase at t_mode) with tau < settle
/// gets q = q_P + w (q_A - q_P), q_A the angles that put its foothold where it is from the actual
/// torso pose, q_P those of the planned pose, w = 1 - h(tau / settle) (h the quintic smoothstep),
/// and the rates blended likewise plus w_dot (q_A - q_P): the landing pair's targets continue
/// the swing IK's instead of jumping to the planned torso pose (bench/experiments/notes/inverse_dynamics.md "Settle").
/// gait.replan > 0 with mem (kFootTrotMemory x legs doubles of the rollout, updated from t_mode and
/// v only, so the calls at t and t + dt of one step agree): every foot target moves by its foothold's
/// offset (head comment); mem = nullptr: no re-planning.
void foot_trot_eval_state(const FootTrot& ft, const FootTrotGait& gait, double t, double t_mode, const VecX& theta,
                          const VecX& v, double* mem, VecX& th, VecX& thd);

/// The plan's contact set at time t (the ID controllers' contacts with walk.foot_space): false for
/// a contact of geoms (a, b) that involves the foot of a leg planned in swing at t, true otherwise.
/// Why: a swing foot that touches down a few ms early arrives at the plan's descent
/// speed (0.1-0.3 m/s over the last mm of b(sigma)); in the rigid model with every joint acceleration
/// prescribed, stopping it in one step takes an impulse through the whole robot (4-7 kN predicted,
/// the robot lifted off its stance feet). Left out of the ID's model, the touch is what it is for a
/// torque-controlled leg: the simulator stops the foot against the leg's actual torques. The paper's
/// planner makes a foot stance at touchdown (§7.2.1); this one waits for the planned touchdown.
bool foot_trot_planned_contact(const FootTrot& ft, const FootTrotGait& gait, double t, int geom_a, int geom_b);

/// Base travel X(t) and speed X_dot(t) along u of the plan (speed v reached `ramp` s after t = 0;
/// foot_trot_foot / _eval shift t by gait.start()).
void foot_trot_base(double t, double v, double ramp, double& X, double& Xd);

}  // namespace bigstep
