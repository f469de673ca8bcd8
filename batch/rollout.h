// Simulates one scene rollout on the CPU reference integrator and computes its metrics.
#pragma once
#include <functional>
#include <vector>

#include "io/scene.h"

namespace bigstep {

struct Rollout {
  std::vector<VecX> theta;            ///< (steps_run + 1) configurations, theta[0] = initial
  /// (steps_run + 1, empty without ball / floating joints) the rotation charts theta[i] is read in
  /// (core/chart.h); chart_of(i) gives the pointer the kinematics take
  std::vector<std::vector<Mat3>> chart;
  const Mat3* chart_of(size_t i) const { return chart.empty() ? nullptr : chart[i].data(); }
  std::vector<StepStats> stats;       ///< (steps_run) per step
  std::vector<double> step_wall_s;    ///< (steps_run) wall time per step [s]
  int steps_run = 0;
  bool stopped_at_rest = false;       ///< the §8.1 stopping rule ended the run
  bool aborted = false;               ///< a non-recoverable status (non-finite, factorisation) ended it
  double wall_time_s = 0;
  // controller.type = id_*: per step the controller's torques (n_q), predicted total normal force
  // [N] and IdResult status (| ID_TORQUE_CLAMPED); pd under actuator limits (control/pd_limit.h): the
  // servo's torques and ID_TORQUE_CLAMPED or 0 (no force_pred); else empty
  std::vector<VecX> tau;
  std::vector<double> force_pred;
  std::vector<uint32_t> id_status;
  // an ID controller whose output diverged (ID_DIVERGED) ended the run: the last step is held and
  // flagged STATUS_CONTROL_DIVERGED; the DOF, the torque it was asked and that DOF's bound
  int diverged_dof = -1;
  double diverged_tau = 0, diverged_bound = 0;
};

/// Runs scene.steps() steps (fewer if the stopping rule or a failure ends it).
/// progress(step, total) is called after each step when set.
Rollout simulate(const Scene& sc, const std::function<void(int, int)>& progress = {});

/// Scene metrics for summary.json.
struct Metrics {
  // sliding (docs/methods/pbfd.md §8.1)
  double sliding_distance_m = 0;  ///< x of the metric link at the stop step minus x at t = 0
  double max_tilt_rad = 0;        ///< largest rotation of the metric link from its initial pose
  bool tipped = false;            ///< max_tilt_rad > 30 degrees
  // com
  Vec3 com_final = Vec3::Zero();  ///< whole-model centre of mass at the last step [m]
  Vec3 com_initial = Vec3::Zero();
  // quadruped (docs/methods/nmdp.md §10), torso = metrics.link; set when sc.metric == Quadruped
  double tilt_final_rad = 0;      ///< angle between the torso up-axis (link z) and world z, last step
  double tilt_max_rad = 0;        ///< its maximum over the run
  double distance_final_m = 0;    ///< torso COM displacement along metrics.heading, last step
  double height_mean_m = 0;       ///< torso COM z averaged over the recorded states
  double height_min_m = 0, height_max_m = 0;
  // tracking of control.reference (docs/methods/inverse_dynamics.md §9 Table 3): mean over steps and
  // actuated (non-floating) DOFs of |theta - theta_bar(t)| and |theta_dot - theta_dot_bar(t)|,
  // theta_dot = (theta_n - theta_{n-1}) / dt; set when control.pd (the reference) is active
  double track_pos_rad = 0, track_vel_rad_s = 0;
  /// mean |joint error| [rad] against the ID controllers' own targets (controller.reference_state at
  /// the rollout's states, replayed with its memory: world_swing's swing IK, replan_gain's footholds
  /// taken); without reference_state: track_pos_rad
  double track_state_pos_rad = 0;
  // controller.type = id_* (§9 Tables 4, 5): E|dtau| = mean |tau_n - tau_{n-1}| / dt [N m/s] and
  // E|tau| [N m] over steps and actuated DOFs; summed normal force error of the controller's
  // prediction vs the simulator's StepStats::normal_force in the same step: sum |F_pred - F_sim|
  // [N, per step mean] and relative to sum F_sim (ID(t_i) controllers only, else 0), over the
  // steps whose torques were not clamped to controller.tau_max (ID_TORQUE_CLAMPED)
  double dtau_mean = 0, tau_mean = 0, force_err_n = 0, force_err_rel = 0;
  // steps flagged ID_TORQUE_CLAMPED (actuator limit) and ID_IMPULSE_BOUND (Rollout::id_status)
  int steps_clamped = 0, steps_impulse_bound = 0;
  // metrics.hold_link (a grasp): displacement of metrics.link's origin in the hold link's frame from
  // its initial place, largest over the run and at the last step [m]
  double hold_slip_max_m = 0, hold_slip_final_m = 0;
};

Metrics compute_metrics(const Scene& sc, const Rollout& r);

/// Quadruped time series (docs/methods/nmdp.md §10 metrics), one entry per recorded state (t = i dt):
/// torso tilt, torso COM height and distance along the heading (written to quadruped.csv).
struct QuadrupedSeries {
  std::vector<double> t, tilt_rad, height_m, distance_m;
};
QuadrupedSeries quadruped_series(const Scene& sc, const Rollout& r);

/// Mechanical energy 1/2 v^T H(theta_b) v + V(theta_b) with v = (theta_b - theta_a)/dt.
double mechanical_energy(const Model& m, const VecX& theta_a, const VecX& theta_b, double dt);

}  // namespace bigstep
