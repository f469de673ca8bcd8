// Operational-space PD on the floating base for the ID controllers (docs/methods/inverse_dynamics.md
// §9 "Controllers": "PID joint feedback (+ operational-space PD ... on the quadruped)"). The ID
// solves for joint accelerations only (P v+ = qdot_des, §2); the base is unactuated and moves as the
// contact impulses push it. A desired base acceleration therefore reaches the ID through the stance
// legs: with the stance feet held still, moving the base is moving the joints of the legs that carry
// it. Per control step, over all accelerations a (m), with qdd the joint PID's accelerations:
//
//   a* = argmin  sum_{j actuated} (a_j - qdd_j)^2 + w_b sum_{k in B_fb} (a_k - a_k^des)^2
//                + eps sum_{other k} a_k^2 + w_c sum_{i in C} |J_i a|^2     (stance feet do not accelerate)
//   a_k^des = thetadd_bar_k + base_kp (theta_bar_k - theta_k) + base_kd (thetad_bar_k - v_k)
//   qdd_j <- a*_j  (actuated j)
//
// w_b = w_c = 1e4: the base task and the stance feet win over the joint plan, which the stance legs
// follow only as far as both allow (the swing legs keep it exactly). This also projects out of the
// joint plan the stance-foot accelerations it holds (a joint-space plan is not compatible with every
// stance foot sticking); J-dot v is left out (O(dt) at 1 ms).
// B_fb = {z, rz, ry, rx} of the floating base: height and the three Euler angles of the planned
// pose; x, y are left out (eps): the planned walk holds the stand pose there and the stance legs'
// sweep moves the robot. J_i = [N_i; S_i; T_i] (3 x m) of contact i of the ID's contact set; C =
// the stance contacts: touching (phi_i <= kIdStanceGap) and not lifted by the plan
// ((N_i)_q thetad_bar_q <= kIdLiftSpeed, the planned joint motion alone moving the foot off the
// ground). With no stance contact nothing couples the base to the joints and qdd is unchanged.
#pragma once
#include "core/model.h"
#include "core/types.h"

namespace bigstep {

struct IdTerms;

/// A contact whose planned joint velocity moves it off the ground faster than this [m/s] is in
/// swing, not stance. The trot's stance sweep moves a foot by <= 0.08 m/s along the normal
/// (relative to the torso), its lift by ~1 m/s; a foot about to lift is held < 5 ms.
inline constexpr double kIdLiftSpeed = 0.2;

/// A contact farther than this from the ground [m] is landing, not standing (the ID's contact set
/// reaches controller.contact_distance = 1 mm out).
inline constexpr double kIdStanceGap = 1e-5;

/// Gains and buffers, sized at construction (no allocation per call).
struct IdBaseFeedback {
  IdBaseFeedback(const Model& m, double kp, double kd);
  double kp = 0, kd = 0;  ///< controller.base_kp [1/s^2], base_kd [1/s]
  int base = -1;          ///< first DOF of the floating base (x y z rz ry rx), -1 = none
  MatX A;                 ///< (n_q x n_q) normal equations
  VecX b, Jrow;           ///< (n_q) right-hand side, then a*; one contact row
  VecX wd;                ///< (n_q) diagonal weights (joints 1, the base's z, rz, ry, rx w_b, else eps)
  int n_stance = 0;       ///< |C| of the last call
  bool active() const { return base >= 0 && (kp > 0 || kd > 0); }
};

/// Replaces the actuated entries of qdd (n_q, the joint PID's accelerations) by a* above. terms:
/// the ID's problem terms at (theta, v) (contact rows N, S, T of terms.n contacts); theta_bar,
/// thetad_bar, thetadd_bar: the plan at t (n_q each). No-op unless fb.active().
void id_base_feedback(const IdTerms& terms, const VecX& theta, const VecX& v, const VecX& theta_bar,
                      const VecX& thetad_bar, const VecX& thetadd_bar, IdBaseFeedback& fb, VecX& qdd);

}  // namespace bigstep
