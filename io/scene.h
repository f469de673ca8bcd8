// A scene: model + initial state + controls + integrator settings + metrics, loaded from YAML
// (configs/*.yaml). Every key is checked: unknown keys and bad values name file, key and value.
#pragma once
#include <string>
#include <vector>

#include "core/model.h"
#include <memory>

#include "control/point_load.h"
#include "control/reference_motion.h"
#include "solvers/compliant/compliant_step.h"
#include "control/inverse_dynamics/id_controller.h"
#include "solvers/terms/ne_contact.h"
#include "solvers/nmdp/nmdp_step.h"
#include "solvers/pbd/pbd_step.h"

namespace bigstep {

struct MujocoImport;  // io/mjcf_import.h

/// The batch.* block of a scene that init_batch / reset_rollouts / redraw_params read
/// (batch/batch.h): initial-state perturbation and randomisation, seeded. A Scene is one (its
/// batch.* keys); a caller that steps K rollouts of a scene takes the scene's block and sets its own
/// rollouts (and seed).
struct BatchOptions {
  int rollouts = 1;                ///< batch.rollouts
  uint64_t seed = 0;               ///< batch.seed
  int threads = 0;                 ///< batch.threads (0 = all cores)
  double perturb_theta = 0.01;     ///< batch.perturb_theta: std. dev. added to every theta(0) coordinate (rollout 0 too)
  double perturb_theta_dot = 0.01; ///< batch.perturb_theta_dot: std. dev. added to every theta_dot(0) coordinate
  double randomize_friction = 0;   ///< batch.randomize_friction: c_par and mu scaled by exp(U(-r, r)) per rollout (0 = off)
  double randomize_stiffness = 0;  ///< batch.randomize_stiffness: c_perp scaled by exp(U(-r, r)) per rollout (0 = off)
  double randomize_mass = 0;       ///< batch.randomize_mass: each link's mass and inertia times its own exp(U(-r, r)) (0 = off)
  /// batch.contact_mu_min / max: per-geom mu ~ U(min, max) (max > 0 = on)
  double contact_mu_min = 0, contact_mu_max = 0;
  double randomize_limit_stiffness = 0;  ///< batch.randomize_limit_stiffness: joint stops' own C times exp(U(-r, r)) (0 = off)
};

/// Which scene metric summary.json reports.
enum class MetricKind { Com, Sliding, Quadruped };

struct Scene : BatchOptions {
  std::string name;         ///< `scene:`
  std::string source;       ///< the YAML file it came from
  Model model;
  /// model.mjcf / model.urdf (or a bare XML file): what MuJoCo's compiler gave, with the map to
  /// MuJoCo's qpos / qvel (io/mjcf_import.h); null for a YAML model
  std::shared_ptr<const MujocoImport> imported;
  VecX theta0;              ///< initial.theta (n_q), default zeros
  VecX theta_dot0;          ///< initial.theta_dot (n_q), default zeros
  /// (n_chart, or empty = identity) the rotation charts theta0 is read in (core/chart.h): those of
  /// an MJCF keyframe that anchored a joint past 45 degrees; initial.theta is in the identity chart
  std::vector<Mat3> chart0;
  VecX tau;                 ///< control.tau (n_q), constant joint torques, default zeros
  PdServo pd;               ///< control.pd + control.reference: stable-PD servo (inactive = none)
  ReferenceSpec reference;  ///< control.reference (pd.reference evaluates it)
  PointLoad load;           ///< control.load: a (rotating) point force, added to tau at each step's start
  std::string integrator;   ///< integrator.type: a name in solvers/registry.cpp (find_solver)
  PbdSettings settings;     ///< integrator.* and contact.* (dt lives here for every type)
  NeSettings ne;            ///< Newton-Euler baseline settings (contact.mu, friction_directions, ...)
  NmdpSettings nmdp;        ///< nmdp_ne / nmdp_pbd: integrator.pgm, accel_denominator, carry_gamma + ne
  CompliantSettings compliant;  ///< compliant: compliant.* (+ integrator.dt, contact.mu)
  double duration = 1.0;    ///< integrator.duration [s]
  MetricKind metric = MetricKind::Com;
  bool stop_at_rest = false;  ///< metrics.stop_at_rest (docs/methods/pbfd.md §8.1 stopping rule)
  double rest_speed = 1e-3;   ///< metrics.rest_speed [m/s]
  double rest_time = 0.1;     ///< metrics.rest_time [s]
  int metric_link = 0;        ///< metrics.link: the link whose x is tracked (sliding); the torso (quadruped)
  int hold_link = -1;         ///< metrics.hold_link: the frame metric_link should stay fixed in (a grasp), -1 = none
  Vec3 heading = Vec3::UnitX();  ///< metrics.heading: unit horizontal direction of travel (quadruped)
  // batch.* (used when rollouts > 1): the BatchOptions block above, and the engine's keys
  double push_speed = 0;            ///< batch.push_speed: std. dev. of a push's kick on every theta_dot coordinate (VecEnv)
  double push_prob = 0;             ///< batch.push_prob: probability of a push per env and step (VecEnv)
  std::string backend = "cpu";      ///< batch.backend: cpu | cuda | auto (--backend overrides)
  std::string engine = "reference"; ///< batch.engine: reference | team (CPU emulation of the CUDA kernel)
  std::string precision = "fp64";   ///< batch.precision: fp64 | fp32 (team engines only)
  std::string schedule = "lockstep";///< batch.schedule: lockstep | rollout (team engines only)
  double fp32_eps_r = 1e-4;         ///< batch.fp32_eps_r: eps_r of FP32 engines
  double fp32_eps_x = 1e-6;         ///< batch.fp32_eps_x: eps_x of FP32 engines
  IdControllerSpec controller;      ///< controller.*: pd (control.pd's servo) or an ID controller

  int steps() const;          ///< round(duration / dt), in [1, kMaxSteps] after loading
};

/// The scene's integrator (the registry's CPU reference for sc.integrator), bound to sc.model.
std::unique_ptr<Integrator> make_integrator(const Scene& sc);

/// Loads `path`, applies `overrides` ("key.path=yaml_value", like --set) and validates.
/// Throws InvalidArgument "<path>: <key> = <value>: <expectation>".
Scene load_scene(const std::string& path, const std::vector<std::string>& overrides = {});

/// Same from YAML text (tests); `source` names it in messages. keys_read (tests): the full path of
/// every key the parser read, in order.
Scene load_scene_text(const std::string& yaml, const std::string& source,
                      const std::vector<std::string>& overrides = {},
                      std::vector<std::string>* keys_read = nullptr);

}  // namespace bigstep
