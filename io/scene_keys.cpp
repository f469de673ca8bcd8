// The scene key table (io/scene_keys.h) and the --help text generated from it.
#include "io/scene_keys.h"

#include <map>
#include <regex>
#include <sstream>

#include "core/error.h"
#include "control/reference_motion.h"
#include "control/inverse_dynamics/id_controller.h"
#include "solvers/compliant/compliant_step.h"
#include "solvers/registry.h"

namespace bigstep {

namespace {

std::vector<SceneKey> build_table() {
  std::vector<SceneKey> t;
  auto key = [&](std::string k, std::string type, std::string def, std::string doc) {
    t.push_back({std::move(k), std::move(type), std::move(def), std::move(doc), {}});
  };
  auto choice = [&](std::string k, std::vector<std::string> ok, std::string def, std::string doc) {
    t.push_back({std::move(k), "choice", std::move(def), std::move(doc), std::move(ok)});
  };
  // {abduction, hip, knee, ankle} offsets [rad] of a reference keyframe
  auto offsets = [&](const std::string& k, const std::string& doc) {
    key(k, "map", "(zeros)", doc + ": {abduction, hip, knee, ankle} offsets from stand [rad]");
    for (int r = 0; r < kLegRoles; ++r)
      key(k + "." + leg_role_name(r), "number", "0", std::string(leg_role_name(r)) + " offset [rad]");
  };
  std::vector<std::string> solvers;
  for (const SolverEntry& e : solver_registry()) solvers.push_back(e.name);

  key("scene", "string", "(required)",
      "scene name (default output directory out/<scene>): UTF-8, no '/', '\\' or control characters, not '.' or '..'");
  key("description", "string", "''", "free text");
  // ---- model (io/model_yaml.cpp) ----
  key("model", "map", "(required)", "the articulated body: links, contact points, terrain planes");
  key("model.mjcf", "string", "(none)",
      "an MJCF file compiled by MuJoCo (a path relative to this file, gymnasium:hopper.xml or "
      "example-robot-data:robots/...): the whole model");
  key("model.urdf", "string", "(none)", "a URDF file, likewise");
  key("model.allow", "list", "(none)",
      "MJCF/URDF features to drop instead of failing: frictionloss, tendons, joint_stiffness, geoms (all: no contact), "
      "unsupported_pairs (geom pairs without a collision function, e.g. box-box)");
  key("model.free_root", "bool", "false", "MJCF/URDF: a free joint on each jointless body attached to the world (URDF robots)");
  key("model.floor", "bool", "false", "MJCF/URDF: add a ground plane z = 0 (in MuJoCo's model too)");
  key("model.limit_stiffness", "number", "0",
      "MJCF/URDF: PBD/PBFD penalty coefficient C of every joint limit, >= 0 (0 = contact.c_perp)");
  key("model.gravity", "[x, y, z]", "[0, 0, -9.81]", "gravity [m/s^2]");
  key("model.links", "list", "(required)", "links, each parent before its children");
  key("model.links[i].name", "string", "(required)", "unique link name");
  key("model.links[i].parent", "string", "world", "an earlier link's name, or world");
  choice("model.links[i].joint", {"fixed", "hinge", "prismatic", "ball", "floating", "planar"}, "fixed",
         "joint to the parent (ball: 3 Euler angles; floating: 3 translations + 3 Euler angles)");
  key("model.links[i].axis", "[x, y, z]", "(required for hinge, prismatic)", "joint axis in the joint frame");
  key("model.links[i].pos", "[x, y, z]", "[0, 0, 0]", "joint frame origin in the parent frame [m]");
  key("model.links[i].rpy", "[x, y, z]", "[0, 0, 0]", "joint frame roll, pitch, yaw in the parent frame [rad]");
  key("model.links[i].range", "[lo, hi]", "(no limit)", "joint limits of a hinge [rad] or prismatic [m] joint");
  key("model.links[i].limit_stiffness", "number", "0",
      "PBD/PBFD penalty coefficient of the joint limits, 0 = contact.c_perp (NE and NMDP enforce them as constraints)");
  key("model.links[i].damping", "number", "0", "viscous joint damping per DOF [N m s/rad or N s/m], implicit");
  key("model.links[i].armature", "number", "0", "rotor inertia added to each DOF of the joint [kg m^2 or kg]");
  key("model.links[i].stiffness", "number", "0",
      "joint spring -k (theta - springref) per DOF of a hinge [N m/rad], prismatic [N/m] or planar joint "
      "(MuJoCo's stiffness)");
  key("model.links[i].springref", "number", "0", "joint coordinate where the spring is relaxed [rad or m]");
  key("model.links[i].mass", "number", "(required without box)", "mass [kg]");
  key("model.links[i].com", "[x, y, z]", "[0, 0, 0]", "centre of mass in the link frame [m]");
  key("model.links[i].inertia", "list", "(zeros)", "about the COM: [ixx, iyy, izz] or [ixx, iyy, izz, ixy, ixz, iyz]");
  key("model.links[i].box", "map", "(none)", "a solid box instead of mass/com/inertia");
  key("model.links[i].box.size", "[x, y, z]", "(required)", "side lengths [m], each > 0");
  key("model.links[i].box.mass", "number", "(mass or density)", "mass [kg]");
  key("model.links[i].box.density", "number", "(mass or density)", "density [kg/m^3]");
  key("model.links[i].box.centre", "[x, y, z]", "[0, 0, 0]", "box centre (= COM) in the link frame [m]");
  key("model.links[i].box.corners", "bool", "false", "a contact point at each corner (contact_grid 1)");
  key("model.links[i].box.contact_grid", "integer", "(1 with corners, else 0)",
      "s in [0, 16]: an s x s lattice of contact points on every face");
  key("model.contacts", "list", "(none)", "contact points (spheres) on links");
  key("model.contacts[i].link", "string", "(required)", "the link they move with");
  key("model.contacts[i].points", "list", "(required)", "[[x, y, z], ...] in the link frame [m]");
  key("model.contacts[i].radius", "number", "0", "sphere radius [m], >= 0");
  key("model.terrain", "list", "(none)", "ground planes (half-spaces) and height maps");
  key("model.terrain[i].normal", "[x, y, z]", "[0, 0, 1]", "outward normal (normalised)");
  key("model.terrain[i].offset", "number", "0", "plane n . x = offset [m]");
  key("model.terrain[i].slope_deg", "number", "(none)", "instead of normal/offset: slope descending along +x, in (-90, 90)");
  key("model.terrain[i].point", "[x, y, z]", "[0, 0, 0]", "slope_deg: a point on the plane [m]");
  key("model.terrain[i].height_map", "map", "(none)",
      "instead of a plane: rigid terrain z = h(x, y), a C2 bicubic B-spline of seeded control heights "
      "U(0, bump_max) over a rectangle, flat (z = pos.z) outside it (core/height_field.h); NE, NMDP, PBD/PBFD, "
      "compliant; the team / CUDA engines refuse it");
  key("model.terrain[i].height_map.size", "[x, y]", "(required)", "side lengths of the rectangle [m], each > 0");
  key("model.terrain[i].height_map.cells", "[nx, ny]", "(required)",
      "cells along x, y, integers in [1, 4096]; control heights on the nodes, the two outer rings 0");
  key("model.terrain[i].height_map.bump_max", "number", "0.03",
      "control heights ~ U(0, bump_max), so 0 <= h - pos.z <= bump_max [m]; <= half a cell; 0 = flat");
  key("model.terrain[i].height_map.seed", "integer", "0", "seed of the control heights (std::mt19937_64), >= 0");
  key("model.terrain[i].height_map.pos", "[x, y, z]", "[0, 0, 0]", "centre of the rectangle; z = height of the flat part [m]");
  key("model.geoms", "list", "(none)", "collision shapes on links or the world (core/geom.h)");
  key("model.geoms[i].name", "string", "(none)", "geom name used in errors");
  key("model.geoms[i].link", "string", "world", "the link it moves with, or world");
  choice("model.geoms[i].type", {"plane", "sphere", "capsule", "box"}, "(required)",
         "shape; a plane is the half-space below its frame's x-y plane and must be on the world");
  key("model.geoms[i].pos", "[x, y, z]", "[0, 0, 0]", "geom frame origin in the link frame [m]");
  key("model.geoms[i].rpy", "[x, y, z]", "[0, 0, 0]", "geom frame roll, pitch, yaw in the link frame [rad]");
  key("model.geoms[i].size", "list", "(required except plane)",
      "sphere [r]; capsule [r, half-length along local z]; box [half-extents x, y, z] [m]");
  key("model.geoms[i].contype", "integer", "1", "contact bits: a pair touches when contype & conaffinity of the other is non-zero");
  key("model.geoms[i].conaffinity", "integer", "1", "contact bits (see contype)");
  key("model.exclude", "list", "(none)", "[[link_a, link_b], ...]: link pairs that never touch (world allowed)");
  key("model.actuators", "list", "(none)", "controls: motors and position servos on joint DOFs");
  key("model.actuators[i].name", "string", "(none)", "actuator name used in errors");
  key("model.actuators[i].joint", "string", "(required)", "link whose joint it drives");
  key("model.actuators[i].joint_dof", "integer", "0", "which DOF of a multi-DOF joint (0-based)");
  choice("model.actuators[i].type", {"motor", "position"}, "motor",
         "motor: force gear * ctrl; position: stable PD to ctrl / gear with kp, kv");
  key("model.actuators[i].gear", "number", "1", "transmission: actuator length = gear * theta");
  key("model.actuators[i].ctrlrange", "[lo, hi]", "(unlimited)", "ctrl is clamped to this range");
  key("model.actuators[i].kp", "number", "(required for position)", "position gain, > 0");
  key("model.actuators[i].kv", "number", "0", "position actuator velocity gain, >= 0");
  // ---- initial state and controls ----
  key("initial", "map", "(zeros)", "initial state");
  key("initial.theta", "list", "(zeros)", "theta(0), n_q values (see bigstep inspect for the DOF order)");
  key("initial.theta_dot", "list", "(zeros)", "theta_dot(0), n_q values");
  key("initial.keyframe", "string", "(none)", "MJCF/URDF: start from this keyframe (name or index)");
  key("control", "map", "(none)", "controls");
  key("control.tau", "list", "(zeros)", "constant joint torques, n_q values");
  key("control.load", "map", "(none)",
      "a force at a link point that turns about the link z axis (B4's rotating load), applied from each step's start state");
  key("control.load.link", "string", "(required)", "the loaded link's name");
  key("control.load.force", "[x, y, z]", "(required)", "force, world frame [N]");
  key("control.load.point", "[x, y, z]", "[0, 0, 0]", "point at t = 0, link frame [m]");
  key("control.load.spin", "number", "0", "the point turns about the link z axis at this rate [rad/s]");
  key("control.pd", "map", "(none)", "stable-PD servo (docs/methods/newton_euler.md §4); floating-base DOFs always get 0");
  key("control.pd.kp", "number or list", "(required)", "stiffness: one value for every actuated DOF, or n_q values");
  key("control.pd.kd", "number or list", "(required)", "damping: one value for every actuated DOF, or n_q values");
  key("control.reference", "map", "(hold)", "the servo's targets (needs control.pd); jump and walk are both checked");
  choice("control.reference.type", {"hold", "jump", "walk", "move"}, "hold",
         "hold stand, a periodic jump / trot, or a one-off move");
  key("control.reference.stand", "list", "(initial.theta)", "pose held / moved around, n_q values");
  key("control.reference.legs", "list", "(none)", "legs: DOF names ('<link>.angle' or a one-DOF link) per role");
  for (int r = 0; r < kLegRoles; ++r)
    key(std::string("control.reference.legs[i].") + leg_role_name(r), "string", r == kHip ? "(required)" : "(none)",
        std::string(leg_role_name(r)) + " DOF of the leg");
  key("control.reference.legs[i].phase", "number", "0", "walk: phase in [0, 1)");
  key("control.reference.legs[i].sweep_sign", "number", "1", "walk: +1 if a larger hip angle moves the foot forward");
  key("control.reference.jump", "map", "(defaults)", "jump: keyframes of a periodic cubic spline");
  key("control.reference.jump.period", "number", "2.0", "cycle [s]");
  key("control.reference.jump.ramp", "number", "0", "offsets fade in over [0, ramp] [s]");
  key("control.reference.jump.crouch_time", "number", "1.2", "[s]");
  key("control.reference.jump.extension_time", "number", "0.15", "[s]");
  key("control.reference.jump.flight_time", "number", "0.2", "[s]");
  key("control.reference.jump.landing_time", "number", "0.3", "[s]");
  offsets("control.reference.jump.crouch", "crouch keyframe");
  offsets("control.reference.jump.extension", "extension keyframe");
  offsets("control.reference.jump.flight", "flight keyframe");
  key("control.reference.walk", "map", "(defaults)", "trot");
  key("control.reference.walk.period", "number", "0.6", "cycle [s]");
  key("control.reference.walk.ramp", "number", "0.3", "offsets fade in over [0, ramp] [s]");
  key("control.reference.walk.stride", "number", "0.15", "foot travel per stance [m]");
  key("control.reference.walk.leg_length", "number", "0.4", "hip axis to foot [m] (hip sweep asin(stride / (2 leg_length)))");
  key("control.reference.walk.duty", "number", "0.5", "stance fraction of the cycle");
  offsets("control.reference.walk.lift", "mid-swing offsets");
  key("control.reference.walk.foot_space", "bool", "false",
      "plan the trot in the world (control/foot_trot.h): stance feet fixed, torso at stride / (duty period), "
      "swing arcs, joints by analytic IK of 3-DOF legs (abduction, hip, knee); ramp: the torso's speed ramp, "
      "lift and leg_length unused");
  key("control.reference.walk.step_height", "number", "0.04", "foot_space: swing apex above the ground [m]");
  key("control.reference.walk.world_swing", "bool", "false",
      "foot_space, ID controllers: each step the swing legs' IK puts the feet on their planned world path "
      "from the torso's actual pose (control/foot_trot.h foot_trot_eval_state); stance legs keep the planned pose");
  key("control.reference.walk.settle_time", "number", "0",
      "world_swing: over this time after touchdown [s] a landed leg's angles blend from the swing IK's (actual "
      "torso pose) to the planned pose's (control/foot_trot.h foot_trot_eval_state); 0: at once");
  key("control.reference.walk.replan_gain", "number", "0",
      "world_swing: footstep re-planning, each swing's landing foothold shifted by this gain [s] times the "
      "torso's horizontal velocity error, stance targets over the footholds taken (control/foot_trot.h); 0: off");
  key("control.reference.move", "map", "(defaults)",
      "move: stand + s(u) (offset + amplitude sin(2 pi frequency (t - start))), s the quintic smoothstep of "
      "u = (t - start) / duration in [0, 1]");
  key("control.reference.move.start", "number", "0", "[s]");
  key("control.reference.move.duration", "number", "1", "[s], > 0");
  key("control.reference.move.offset", "list", "(zeros)", "n_q values: the pose after the move is stand + offset");
  key("control.reference.move.amplitude", "list", "(zeros)", "n_q values: sinusoid amplitudes (faded in with s)");
  key("control.reference.move.frequency", "number", "0", "sinusoid frequency [Hz], >= 0");
  // ---- integrator (solvers/registry.cpp lists the types) ----
  key("integrator", "map", "(defaults)", "time integrator");
  choice("integrator.type", solvers, "pbfd", "the method (solvers/registry.cpp)");
  choice("integrator.optimizer", {"lm", "jtj_lm", "lbfgs"}, "jtj_lm", "pbd / pbfd only (lm: pbd only)");
  key("integrator.dt", "number", "(0.01; MJCF/URDF: its option timestep)", "timestep [s], > 0");
  key("integrator.duration", "number",  "1.0",
      detail::concat("simulated time [s]; 1 <= round(duration / dt) <= ", kMaxSteps, " steps"));
  key("integrator.eps_r", "number", "1e-8", "residual tolerance (docs/methods/pbfd.md §5.1)");
  key("integrator.eps_x", "number", "1e-12", "step tolerance (docs/methods/pbfd.md §5.1)");
  key("integrator.it_max", "integer", "500", "LM iterations per attempt, > 0");
  key("integrator.lbfgs_it_max", "integer", "10000", "L-BFGS iterations, > 0");
  key("integrator.restart", "bool", "true", "retry once from theta_n when the predictor start fails (§5.1)");
  key("integrator.warm_lambda", "bool", "true", "PBD/PBFD LM (reference and team engines) starts each step from the last converged step's lambda (false: 1e-3 max B_ii, docs/methods/pbfd.md §5.1)");
  key("integrator.order", "integer", "1",
      "pbd / pbfd time discretisation: 1 the papers' backward-Euler form, 2 the second-order four-point "
      "backward difference (docs/methods/pbfd.md §3.1)");
  key("integrator.friction_continuation", "integer", "4",
      "PBFD JTJ-LM, reference engine: when the predictor and the restart both fail, re-solve from theta_n with "
      "C_par x 3^(-k/K), k = K..1, then C_par (mu with contact.friction = coulomb; K softened stages, 0 to 8; 0: off; "
      "solvers/pbd/pbd_step.cpp)");
  choice("integrator.pgm", {"fo", "zo"}, "fo", "nmdp_*: first- or zeroth-order PGM (docs/methods/nmdp.md §7)");
  choice("integrator.accel_denominator", {"recommended", "literal"}, "recommended",
         "nmdp_*: theta_ddot over h, or over dt_last (paper Eq. 2)");
  key("integrator.carry_gamma", "bool", "false", "nmdp_*: start each PGM call with the previous call's gamma");
  // ---- contact ----
  key("contact", "map", "(defaults)", "contact model");
  key("contact.c_perp", "number", "(1e5; MJCF/URDF: W / (4 (2 mm)^alpha))",
      "normal force coefficient C_perp (pbd, pbfd), >= 0");
  key("contact.c_par", "number", "(0; MJCF/URDF: mu C_perp / ((beta + 1) (slip_speed dt)^beta))",
      "tangential coefficient C_par (pbd, pbfd), >= 0");
  key("contact.mu", "number", "(0.5; MJCF/URDF: the largest geom friction of a pair)",
      "Coulomb coefficient (ne_*, nmdp_*, compliant; pbfd with contact.friction = coulomb), >= 0");
  choice("contact.friction", {"power", "coulomb"}, "power",
         "pbfd: friction law. power: the paper's C_par (beta+1)|u|^(beta-1) d^(gamma+1) u on the step's slip u "
         "(docs/methods/pbfd.md §4.4); coulomb: mu C_perp d^alpha u / sqrt(|u|^2 + (stiction_velocity dt)^2), "
         "dry friction whatever dt and the slip speed (§4.9; C_par, beta, gamma unused). pbd refuses coulomb "
         "(no energy for Eq. 6)");
  key("contact.stiction_velocity", "number", "0.01",
      "pbfd, contact.friction = coulomb: slip speed v_s [m/s] below which the law is viscous (delta = v_s dt); "
      "a sticking contact creeps at most ~v_s, > 0");
  key("contact.damping", "number", "0",
      "pbfd: Hunt-Crossley normal damping zeta [s/m], f_n = C_perp d^alpha max(0, 1 + zeta d_dot) (docs/methods/pbfd.md §4.2); "
      "the reference engine only");
  key("contact.slip_speed", "number", "1",
      "MJCF/URDF: slip speed [m/s] at which PBFD's friction equals mu times the normal force (the c_par rule)");
  key("contact.alpha", "number", "2", "normal force exponent, > 1");
  key("contact.beta", "number", "1", "slip exponent, >= 1");
  key("contact.gamma", "number", "1", "depth exponent of the tangential terms, >= 1");
  key("contact.friction_directions", "integer", "4", "ne_*, nmdp_*: linearised cone edges, even (2 for planar models)");
  key("contact.active_distance", "number", "1e-3", "ne_lcp: pairs with phi <= this are contacts [m]");
  key("contact.cfm", "number", "1e-6", "ne_lcp: compliance on the Delassus diagonal, relative");
  key("contact.max_correction_speed", "number", "0.1",
      "ne_lcp: largest separation speed asked of a penetrating contact [m/s] or joint stop [rad/s]; 1e9: the literal depth / dt");
  key("contact.speculative", "bool", "true",
      "ne_lcp: a pair (or stop) the free motion closes within active_distance during the step is a row too; false: phi <= active_distance only");
  key("contact.relinearizations", "integer", "3",
      "ne_lcp: extra LCP solves per step that put each contact's nonlinear gap remainder in its row; 0: first order only");
  key("contact.k_c", "number", "0", "ne_mdp, nmdp_*: polytope scale (0 = W / (N_s d_ref^3))");
  key("contact.d_ref", "number", "5e-3", "ne_mdp, nmdp_*: reference depth [m]");
  key("contact.zeta", "number", "1e-3", "ne_mdp, nmdp_*: ghost-force cap");
  choice("contact.mdp_metric", {"effective", "kinetic"}, "effective",
         "with control.pd: QP metric H + dt K_d (MDP-consistent), or H (the NMDP paper's metric, docs/methods/newton_euler.md §3)");
  key("contact.depth_exponent", "integer", "3", "nmdp_*: p in k_c (d^p + zeta d_ref^3), 3 (paper) or 4");
  // ---- compliant (solvers/compliant/compliant_step.h; docs/methods/compliant.md §10) ----
  key("compliant", "map", "(defaults)", "compliant: Drumwright's spring-damper constraints (also contact.mu, integrator.dt)");
  choice("compliant.normal_model", {"hertz", "hertz_consistent", "linear"}, "hertz",
         "contact normal: K = E* sqrt(r) on d^1.5 (paper), secant E* sqrt(r d) on d, or normal_stiffness on d");
  key("compliant.youngs_modulus", "number", "1e11", "E* of Hertz contact [Pa]");
  key("compliant.normal_stiffness", "number", "1e6", "linear normal model: K per contact [N/m]");
  key("compliant.normal_damping", "number", "1", "B of a contact normal [N s/m]");
  key("compliant.point_radius", "number", "0.01", "Hertz radius of a sharp core (box corner, radius-0 point) [m]");
  key("compliant.friction_damping", "number", "(1e6 / dt)", "B of the tangent rows (paper 1e6 / h)");
  key("compliant.limit_stiffness", "number", "1e8", "K of a joint-limit stop [N m/rad or N/m]");
  key("compliant.limit_damping", "number", "0", "B of a joint-limit stop");
  key("compliant.gdot_terms", "bool", "true", "include the M^ G^dot v terms (docs/methods/compliant.md §4)");
  key("compliant.zeta", "number", "(1 / dt)", "joint program: weight on normal / unilateral forces (paper 1 / h)");
  choice("compliant.friction_solve", {"staggered", "joint"}, "staggered",
         "block Gauss-Seidel N-step / T-step (docs/methods/compliant.md §7.5), or the paper's single program (§7.2)");
  choice("compliant.friction_cone", {"cone", "cone2d", "polyhedral"}, "cone",
         "3-D second-order cone, 2-D |lambda_r| <= mu lambda_n (x-z models), or cone_edges facets");
  key("compliant.cone_edges", "integer", "8", "polyhedral cone: facets k in [3, 64]");
  key("compliant.cone_inscribed", "bool", "true", "polyhedral cone: mu cos(pi/k) (inside the cone), else mu");
  key("compliant.eps", "number", "1e-8", "staggered stop: |dy| + |G_x^T dx| <= eps (1 + |y|)");
  key("compliant.max_iterations", "integer", "200", "staggered sweeps per step, >= 1");
  key("compliant.max_contacts", "integer", "(the model's, at most 128)",
      detail::concat("contacts one step holds (dense buffers), in [0, ", kMaxCompliantContacts, "] and within ",
                     kCompliantWorkspaceBudget >> 20, " MiB of buffers"));
  key("compliant.loops", "list", "(none)", "bilateral point-to-point loop closures (3 rows each)");
  key("compliant.loops[i].link_a", "string", "world", "link of point_a, or world");
  key("compliant.loops[i].point_a", "[x, y, z]", "[0, 0, 0]", "point in link_a's frame [m]");
  key("compliant.loops[i].link_b", "string", "world", "link of point_b, or world");
  key("compliant.loops[i].point_b", "[x, y, z]", "[0, 0, 0]", "point in link_b's frame [m]");
  key("compliant.loops[i].stiffness", "number", "(required)", "K of each row [N/m]");
  key("compliant.loops[i].damping", "number", "0", "B of each row [N s/m]");
  // ---- metrics ----
  key("metrics", "map", "(defaults)", "what summary.json reports");
  choice("metrics.type", {"com", "sliding", "quadruped"}, "com", "com_final_m | sliding_distance_m | torso metrics");
  key("metrics.link", "string", "(first link)", "tracked link (quadruped: the torso)");
  key("metrics.hold_link", "string", "(none)",
      "a link (a hand) in whose frame metrics.link (a held object) should stay: summary.json hold_slip_max_m / _final_m");
  key("metrics.heading", "[x, y, z]", "[1, 0, 0]", "quadruped: horizontal direction of travel [x, y, 0]");
  key("metrics.stop_at_rest", "bool", "false", "stop when the link's x speed stays below rest_speed for rest_time");
  key("metrics.rest_speed", "number", "1e-3", "[m/s], > 0");
  key("metrics.rest_time", "number", "0.1", detail::concat("[s], > 0; rest_time / dt <= ", kMaxSteps, " steps"));
  // ---- batch (--rollouts K) ----
  key("batch", "map", "(defaults)", "K rollouts (--rollouts, --seed, --threads, --backend override)");
  key("batch.rollouts", "integer", "1", detail::concat("K, in [1, ", kMaxRollouts, "]"));
  key("batch.seed", "integer", "0",
      "seed of the perturbations and randomisation, an integer in [0, 2^64 - 1], read exactly (1e6 too)");
  key("batch.threads", "integer", "0", detail::concat("CPU threads, in [0, ", kMaxThreads, "] (0 = all cores)"));
  key("batch.perturb_theta", "number", "0.01", "std. dev. added to theta(0), >= 0");
  key("batch.perturb_theta_dot", "number", "0.01", "std. dev. added to theta_dot(0), >= 0");
  const std::string spread = detail::concat(", r in [0, ", kMaxRandomizeSpread, "]");
  key("batch.randomize_friction", "number", "0", "c_par and mu scaled by exp(U(-r, r)) per rollout" + spread);
  key("batch.randomize_stiffness", "number", "0", "c_perp scaled by exp(U(-r, r)) per rollout" + spread);
  key("batch.randomize_mass", "number", "0",
      "each link's mass and inertia scaled by its own exp(U(-r, r)) per rollout" + spread);
  key("batch.randomize_limit_stiffness", "number", "0",
      "PBD/PBFD reference engine: the C of joint stops with their own limit_stiffness scaled by exp(U(-r, r)) per rollout" +
          spread);
  key("batch.push_speed", "number", "0", "RL envs: std. dev. of a random kick added to every theta_dot coordinate, >= 0");
  key("batch.push_prob", "number", "0", "RL envs: probability of a kick per env and step, in [0, 1]");
  key("batch.contact_mu_min", "number", "0", "per-contact Coulomb mu ~ U(contact_mu_min, contact_mu_max)");
  key("batch.contact_mu_max", "number", "0",
      "per rollout, contact geom and episode (NE-LCP and the ID controllers; 0 = off, contact.mu)");
  choice("batch.backend", {"cpu", "cuda", "auto"}, "cpu", "cuda runs the team engine on the GPU");
  choice("batch.engine", {"reference", "team"}, "reference",
         "team: the CUDA kernel's cooperative PBFD JTJ-LM iteration emulated on the CPU");
  choice("batch.precision", {"fp64", "fp32"}, "fp64", "team engines: fp32 uses fp32_eps_r / fp32_eps_x (docs/methods/pbfd.md §6)");
  choice("batch.schedule", {"lockstep", "rollout"}, "lockstep",
         "team engines: rollout = a converged rollout starts its next step while others iterate");
  key("batch.fp32_eps_r", "number", "1e-4", "eps_r of FP32 engines, > 0");
  key("batch.fp32_eps_x", "number", "1e-6", "eps_x of FP32 engines, > 0");
  // ---- controller (control/inverse_dynamics/id_controller.h; docs/methods/inverse_dynamics.md §9) ----
  key("controller", "map", "(pd)", "joint controller: the stable-PD servo of control.pd, or inverse dynamics with contact");
  choice("controller.type", controller_type_names(), "pd",
         "pd: control.pd's servo; id_lcp_inf | id_lcp_mu | id_qp_mu | id_qp_inf: ID(t_i) with the no-slip LCP, "
         "Coulomb LCP, convex QP with / without the friction pyramid; id_prev1 | id_prev2: ID with the simulator's "
         "contact impulse of step i-1 / i-2. id_*: a PID on control.reference gives qdd_des (control.pd's gains unused)");
  key("controller.kp", "number", "400", "id_*: PID proportional gain [1/s^2], >= 0");
  key("controller.kd", "number", "40", "id_*: PID derivative gain [1/s], >= 0");
  key("controller.ki", "number", "0", "id_*: PID integral gain [1/s^3], >= 0");
  key("controller.mu", "number", "(contact.mu)", "id_lcp_mu, id_qp_mu: the friction coefficient the controller assumes, >= 0");
  key("controller.contact_distance", "number", "0.001",
      "id_*: a contact pair within this distance is in the ID problem [m], >= 0 (model C can push on any pair it holds)");
  key("controller.plan_unactuated", "bool", "false",
      "id_*: the unactuated DOFs (a held object) get control.reference's planned velocity as the contacts' target "
      "(models A and B then solve as model C); false: they move freely (docs/methods/inverse_dynamics.md §3)");
  key("controller.mu_inf", "number", "0",
      "id_lcp_inf, id_qp_inf: the friction coefficient standing for mu = inf in their cone, >= 0 (0 = 1000)");
  key("controller.base_kp", "number", "0",
      "id_*: operational-space PD on the floating base's height and Euler angles toward the plan, through the "
      "stance legs (control/inverse_dynamics/id_base_feedback.h) [1/s^2], >= 0; base_kp = base_kd = 0: off");
  key("controller.base_kd", "number", "0", "id_*: its derivative gain [1/s], >= 0");
  key("controller.tau_max", "number", "0",
      "every controller (pd too): actuator limit |tau| <= tau_max [N m or N] on actuated DOFs without a limited "
      "motor (those use gear * ctrlrange); clamped steps are flagged; >= 0, 0 = unlimited");
  return t;
}

}  // namespace

const std::vector<SceneKey>& scene_keys() {
  static const std::vector<SceneKey> t = build_table();
  return t;
}

std::string generic_key(const std::string& path) {
  static const std::regex index(R"(\[[0-9]+\])");
  return std::regex_replace(path, index, "[i]");
}

const SceneKey* find_scene_key(const std::string& path) {
  static const std::map<std::string, const SceneKey*> by_key = [] {
    std::map<std::string, const SceneKey*> m;
    for (const SceneKey& k : scene_keys()) m[k.key] = &k;
    return m;
  }();
  const auto it = by_key.find(generic_key(path));
  return it == by_key.end() ? nullptr : it->second;
}

std::string scene_keys_help() {
  std::ostringstream os;
  os << "Config keys: KEY  DEFAULT  TYPE  description. Set or override any key with --set KEY=VALUE\n"
        "(VALUE is YAML; list elements as model.links[0].mass). A default in parentheses is computed,\n"
        "required or absent, as it says.\n";
  for (const SceneKey& k : scene_keys()) {
    std::string doc = k.doc;
    if (!k.choices.empty()) {
      std::string ok;
      for (const auto& c : k.choices) ok += (ok.empty() ? "" : " | ") + c;
      doc = ok + ": " + doc;
    }
    // pad to columns; a long key or default pushes the rest right (still one line)
    auto pad = [](const std::string& s, size_t w) { return s.size() < w ? s + std::string(w - s.size(), ' ') : s + " "; };
    os << "  " << pad(k.key, 42) << pad(k.def, 16) << pad(k.type, 10) << doc << "\n";
  }
  return os.str();
}

}  // namespace bigstep
