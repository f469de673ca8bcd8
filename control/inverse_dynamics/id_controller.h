// Controllers built on inverse dynamics with contact (docs/methods/inverse_dynamics.md §9
// "Controllers"): a PID on the joint tracking error of a planned motion gives the
// desired accelerations qdd_des, and one of
//   id_lcp_inf, id_lcp_mu, id_qp_mu, id_qp_inf   ID(t_i) with model A, B, C (mu), C (inf)
//   id_prev1, id_prev2                            ID with the simulator's contact impulse of the
//                                                 previous (t_{i-1}) or the one before (t_{i-2}) step
// turns them into joint torques applied for the next step. (`pd`, the stable-PD servo of
// solvers/terms/stable_pd.h, is the scene's control.pd and needs no controller object.)
// The simulator's generalized contact impulse of step i-1 is recovered from the motion it produced,
//   g_{i-1} = M_{i-1} v_i - kappa_{i-1} - dt P^T tau_{i-1}      (§3's discrete dynamics solved for g),
// so ID(t_{i-1}) / ID(t_{i-2}) work with every integrator ("exact simulator forces", §9).
#pragma once
#include <functional>
#include <string>

#include "control/inverse_dynamics/id_base_feedback.h"
#include "control/inverse_dynamics/id_problem.h"

namespace bigstep {

enum class ControllerType { Pd, IdLcpInf, IdLcpMu, IdQpMu, IdQpInf, IdPrev1, IdPrev2 };
const char* controller_type_name(ControllerType t);
/// "pd", "id_lcp_inf", ... -> type; InvalidArgument naming controller.type otherwise.
ControllerType controller_type_from_name(const std::string& s);
/// Every name, in enum order (the scene key table's choices).
const std::vector<std::string>& controller_type_names();

/// `controller:` of a scene.
struct IdControllerSpec {
  ControllerType type = ControllerType::Pd;
  double kp = 400;             ///< PID proportional gain on joint error [1/s^2]
  double kd = 40;              ///< derivative gain [1/s]
  double ki = 0;               ///< integral gain [1/s^3]
  double mu = 0.7;             ///< friction coefficient the ID model assumes (models B, C with mu)
  double contact_distance = 0.001;  ///< a pair within this distance is a contact [m] (NE-LCP's active_distance)
  /// The unactuated DOFs' planned velocity (the PID on their reference entries, same gains) is the
  /// ID's IdProblem::vb_des: a held object follows its plan (the grasping arm). false: the paper's
  /// free unactuated block.
  bool plan_unactuated = false;
  double mu_inf = 0;  ///< IdProblem::mu_inf (0 = kIdQpMuInf): mu = inf of id_qp_inf / id_lcp_inf's cone
  double base_kp = 0;          ///< operational-space PD on the floating base (id_base_feedback.h) [1/s^2]; 0 and
  double base_kd = 0;          ///< base_kd = 0 [1/s]: off (the joint PID alone)
  /// Actuator limit [N m or N] of every actuated DOF without a limited motor (dof_torque_range,
  /// solvers/terms/actuation.h): the torques of every controller (pd's servo too, control/pd_limit.h) are
  /// clamped to +-tau_max and the step flagged ID_TORQUE_CLAMPED. 0: unlimited.
  double tau_max = 0;
  /// The plan at the rollout's state (t, t_mode, theta, v) -> theta_bar, theta_dot_bar, used instead
  /// of id_control's `reference` when set; t_mode: the time whose gait phase applies (id_control
  /// passes t for both t and t + dt). The scene loader sets it for the foot-space trot with
  /// control.reference.walk.world_swing (IK at the actual torso pose each step, control/foot_trot.h).
  /// Its 5th argument: the rollout's plan memory (IdControllerState::plan_mem, reference_memory
  /// doubles, zeros at t = 0; nullptr when 0): walk.replan_gain's footholds taken.
  std::function<void(double, double, const VecX&, const VecX&, double*, VecX&, VecX&)> reference_state;
  int reference_memory = 0;
  /// The plan's contact set (t, geom_a, geom_b) -> whether the contact enters the ID's model; unset:
  /// every contact within contact_distance. The scene loader sets it for the foot-space trot (a foot
  /// planned in swing is left to the simulator, control/foot_trot.h foot_trot_planned_contact).
  std::function<bool(double, int, int)> planned_contact;
  bool inverse_dynamics() const { return type != ControllerType::Pd; }
};

/// Per-rollout state of an ID controller: the problem terms, the solver workspace and result
/// (warm start), the PID integral and the previous steps' data for id_prev1/2, sized at
/// construction (the solves are malloc-guard tested; the reference motion's callback is not).
struct IdControllerState {
  IdControllerState(const Model& m, const IdControllerSpec& s);
  IdTerms terms;
  IdWorkspace ws;
  IdResult res;
  VecX theta_bar, theta_dot_bar, theta_dot_bar_next, e_int, qdd, qdot_des, v, tau_full;  // (n_q)
  MatX M_prev;                      ///< M of the previous control step
  VecX kappa_prev, tau_prev;        ///< its kappa and P^T tau (n_q)
  VecX g1, g2;                      ///< simulator contact impulse of steps i-1 and i-2 (n_q)
  VecX vb_des;                      ///< (nb) planned unactuated velocity (spec.plan_unactuated)
  VecX plan_mem;                    ///< (spec.reference_memory) the plan's per-rollout memory
  VecX qdd_bar;                     ///< planned acceleration (n_q)
  VecX tau_lo, tau_hi;              ///< (n_q) actuator limits (dof_torque_range of spec.tau_max)
  IdBaseFeedback base_fb;           ///< controller.base_kp / base_kd and their buffers
  int calls = 0;
  double force_pred = 0;            ///< predicted total normal force of the last call [N]
  uint32_t status = 0;              ///< IdResult status of the last call (| ID_TORQUE_CLAMPED, ID_DIVERGED)
  VecX tau_bound;                   ///< (n_q) divergence bound per DOF (control_divergence_bound)
  int diverged_dof = -1;            ///< with ID_DIVERGED: the first DOF past its bound (or non-finite)
  double diverged_tau = 0;          ///< and the torque it was asked (NaN / inf when non-finite)
};

/// One control step at time t (state theta_n, theta_{n-1}, step dt): the torques (n_q, zero on
/// unactuated DOFs) into tau. reference(t, theta_bar, theta_dot_bar) is the planned motion.
/// mu: the ID model's friction coefficient (controller.mu, or the rollout's); geom_mu (n_geom, or
/// nullptr): per-contact values instead (RolloutParams::geom_mu: contact (a, b) uses geom_mu[a]).
void id_control(const Model& m, const IdControllerSpec& s,
                const std::function<void(double, VecX&, VecX&)>& reference, double t, const VecX& theta,
                const VecX& theta_prev, double dt, double mu, IdControllerState& st, VecX& tau,
                const double* geom_mu = nullptr);

}  // namespace bigstep
