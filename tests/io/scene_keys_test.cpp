// The scene key table (io/scene_keys.cpp) against the parser and `bigstep run --help`: every key
// the parser reads is in the table and in the help, every table key is read by some scene, and the
// defaults the help prints are the values a scene gets when it leaves the key out.
#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <variant>

#include "io/scene.h"
#include "io/scene_keys.h"

using namespace bigstep;

namespace {

// The smallest scene that reads every defaulted key: a fixed box link (joint, pos, rpy, box.*), a
// hinge link (com, inertia), a contact point (radius), a plane (normal, offset) and a one-leg PD
// servo (reference, legs, jump, walk). Variants pick the reference type or a sloped plane.
const char* kMinimal = R"(scene: m
model:
  links:
    - {name: a, box: {size: [0.2, 0.2, 0.2], mass: 1}}
    - {name: b, parent: a, joint: hinge, axis: [0, 1, 0], mass: 1}
  contacts:
    - {link: b, points: [[0, 0, 0]]}
  terrain:
    - {}
control:
  pd: {kp: 1, kd: 1}
  reference: {legs: [{hip: b}]}
)";

using Value = std::variant<double, std::string, Vec3>;

// A table default as the Scene holds it (numbers and bools as double, vectors as Vec3).
Value table_value(const SceneKey& k) {
  const YAML::Node n = YAML::Load(k.def);
  if (k.type == "number" || k.type == "integer") return n.as<double>();
  if (k.type == "bool") return n.as<bool>() ? 1.0 : 0.0;
  if (k.type == "[x, y, z]") return Vec3(n[0].as<double>(), n[1].as<double>(), n[2].as<double>());
  return n.as<std::string>();
}

Vec3 rpy(const Mat3& R) { return Vec3(std::atan2(R(2, 1), R(2, 2)), -std::asin(R(2, 0)), std::atan2(R(1, 0), R(0, 0))); }

struct Probe {
  std::vector<std::string> overrides;  ///< on kMinimal
  std::function<Value(const Scene&)> get;
};

const char* kBall = "model.geoms=[{type: sphere, link: b, size: [0.1]}]";
const char* kMotor = "model.actuators=[{joint: b}]";
const char* kHeightMap = "model.terrain[0]={height_map: {size: [2, 1], cells: [20, 10]}}";

// Where each defaulted key lands in the Scene, read back by hand (independent of the parser).
std::map<std::string, Probe> probes() {
  auto d = [](double x) { return Value(x); };
  const std::vector<std::string> jump{"control.reference.type=jump"}, walk{"control.reference.type=walk"},
      move{"control.reference.type=move"};
  std::map<std::string, Probe> p = {
      {"description", {{}, [](const Scene&) { return Value(std::string()); }}},  // free text, not stored
      {"model.gravity", {{}, [](const Scene& s) { return Value(s.model.gravity); }}},
      {"model.links[i].parent", {{}, [](const Scene& s) { return Value(std::string(s.model.link_parent[0] < 0 ? "world" : "?")); }}},
      {"model.links[i].joint", {{}, [](const Scene& s) { return Value(std::string(joint_type_name(s.model.link_joint[0]))); }}},
      {"model.links[i].pos", {{}, [](const Scene& s) { return Value(s.model.link_t_o[0]); }}},
      {"model.links[i].rpy", {{}, [](const Scene& s) { return Value(rpy(s.model.link_R_o[0])); }}},
      {"model.links[i].com", {{}, [](const Scene& s) { return Value(s.model.link_com[1]); }}},
      {"model.links[i].limit_stiffness", {{}, [](const Scene& s) { return Value(s.model.dof_limit_k[s.model.link_dof_adr[1]]); }}},
      {"model.geoms[i].link", {{"model.geoms=[{type: plane}]"},
                               [](const Scene& s) { return Value(std::string(s.model.geom_link[0] < 0 ? "world" : "?")); }}},
      {"model.geoms[i].pos", {{kBall}, [](const Scene& s) { return Value(s.model.geom_pos[0]); }}},
      {"model.geoms[i].rpy", {{kBall}, [](const Scene& s) { return Value(rpy(s.model.geom_R[0])); }}},
      {"model.geoms[i].contype", {{kBall}, [d](const Scene& s) { return d(s.model.geom_contype[0]); }}},
      {"model.geoms[i].conaffinity", {{kBall}, [d](const Scene& s) { return d(s.model.geom_conaffinity[0]); }}},
      {"model.actuators[i].joint_dof", {{kMotor}, [d](const Scene& s) { return d(s.model.actuator_dof[0] - s.model.link_dof_adr[1]); }}},
      {"model.actuators[i].type", {{kMotor}, [](const Scene& s) {
         return Value(std::string(s.model.actuator_type[0] == ActuatorType::Motor ? "motor" : "position")); }}},
      {"model.actuators[i].gear", {{kMotor}, [d](const Scene& s) { return d(s.model.actuator_gear[0]); }}},
      {"model.actuators[i].kv", {{"model.actuators=[{joint: b, type: position, kp: 2}]"},
                                 [d](const Scene& s) { return d(s.model.actuator_kv[0]); }}},
      {"model.links[i].damping", {{}, [](const Scene& s) { return Value(s.model.dof_damping[s.model.link_dof_adr[1]]); }}},
      {"model.links[i].armature", {{}, [](const Scene& s) { return Value(s.model.dof_armature[s.model.link_dof_adr[1]]); }}},
      {"model.links[i].stiffness", {{}, [](const Scene& s) { return Value(s.model.dof_stiffness[s.model.link_dof_adr[1]]); }}},
      {"model.links[i].springref", {{}, [](const Scene& s) { return Value(s.model.dof_springref[s.model.link_dof_adr[1]]); }}},
      {"model.links[i].box.centre", {{}, [](const Scene& s) { return Value(s.model.link_com[0]); }}},
      {"model.links[i].box.corners", {{}, [d](const Scene& s) { return d(s.model.spheres.size() > 1); }}},
      {"model.contacts[i].radius", {{}, [](const Scene& s) { return Value(s.model.spheres.back().radius); }}},
      {"model.terrain[i].normal", {{}, [](const Scene& s) { return Value(s.model.planes[0].normal); }}},
      {"model.terrain[i].offset", {{}, [](const Scene& s) { return Value(s.model.planes[0].offset); }}},
      // the point on a sloped plane closest to the origin is the default point [0, 0, 0]
      {"model.terrain[i].point", {{"model.terrain[0]={slope_deg: 10}"},
                                  [](const Scene& s) { return Value(Vec3(s.model.planes[0].offset * s.model.planes[0].normal)); }}},
      {"model.terrain[i].height_map.bump_max",
       {{kHeightMap}, [](const Scene& s) { return Value(s.model.hfield[0].z_max); }}},
      // the seed: the heights are those height_field_random draws with seed 0
      {"model.terrain[i].height_map.seed",
       {{kHeightMap}, [d](const Scene& s) {
          const HeightField& h = s.model.hfield[0];
          return d(h.z == height_field_random(h.hx, h.hy, h.nx, h.ny, h.z_max, 0).z ? 0.0 : -1.0);
        }}},
      {"model.terrain[i].height_map.pos", {{kHeightMap}, [](const Scene& s) { return Value(s.model.geom_pos[0]); }}},
      {"control.load.point", {{"control.load={link: b, force: [0, 0, -1]}"}, [](const Scene& s) { return Value(s.load.point); }}},
      {"control.load.spin", {{"control.load={link: b, force: [0, 0, -1]}"}, [](const Scene& s) { return Value(s.load.spin); }}},
      {"control.reference.type", {{}, [](const Scene& s) { return Value(std::string(reference_kind_name(s.reference.kind))); }}},
      {"control.reference.legs[i].phase", {{}, [](const Scene& s) { return Value(s.reference.legs[0].phase); }}},
      {"control.reference.legs[i].sweep_sign", {{}, [](const Scene& s) { return Value(s.reference.legs[0].sweep_sign); }}},
      {"control.reference.jump.period", {jump, [](const Scene& s) { return Value(s.reference.period); }}},
      {"control.reference.jump.ramp", {jump, [](const Scene& s) { return Value(s.reference.ramp); }}},
      {"control.reference.jump.crouch_time", {jump, [](const Scene& s) { return Value(s.reference.crouch_time); }}},
      {"control.reference.jump.extension_time", {jump, [](const Scene& s) { return Value(s.reference.extension_time); }}},
      {"control.reference.jump.flight_time", {jump, [](const Scene& s) { return Value(s.reference.flight_time); }}},
      {"control.reference.jump.landing_time", {jump, [](const Scene& s) { return Value(s.reference.landing_time); }}},
      {"control.reference.walk.period", {walk, [](const Scene& s) { return Value(s.reference.period); }}},
      {"control.reference.walk.ramp", {walk, [](const Scene& s) { return Value(s.reference.ramp); }}},
      {"control.reference.walk.stride", {walk, [](const Scene& s) { return Value(s.reference.stride); }}},
      {"control.reference.walk.leg_length", {walk, [](const Scene& s) { return Value(s.reference.leg_length); }}},
      {"control.reference.walk.duty", {walk, [](const Scene& s) { return Value(s.reference.duty); }}},
      {"control.reference.walk.foot_space", {walk, [](const Scene& s) { return Value(s.reference.foot_space ? 1.0 : 0.0); }}},
      {"control.reference.walk.step_height", {walk, [](const Scene& s) { return Value(s.reference.step_height); }}},
      {"control.reference.walk.world_swing", {walk, [](const Scene& s) { return Value(s.reference.world_swing ? 1.0 : 0.0); }}},
      {"control.reference.walk.settle_time", {walk, [](const Scene& s) { return Value(s.reference.settle_time); }}},
      {"control.reference.walk.replan_gain", {walk, [](const Scene& s) { return Value(s.reference.replan_gain); }}},
      {"integrator.type", {{}, [](const Scene& s) { return Value(s.integrator); }}},
      {"integrator.optimizer", {{}, [](const Scene& s) { return Value(std::string(optimizer_name(s.settings.optimizer))); }}},
      {"integrator.dt", {{}, [](const Scene& s) { return Value(s.settings.dt); }}},
      {"integrator.duration", {{}, [](const Scene& s) { return Value(s.duration); }}},
      {"integrator.eps_r", {{}, [](const Scene& s) { return Value(s.settings.eps_r); }}},
      {"integrator.eps_x", {{}, [](const Scene& s) { return Value(s.settings.eps_x); }}},
      {"integrator.it_max", {{}, [d](const Scene& s) { return d(s.settings.it_max); }}},
      {"integrator.lbfgs_it_max", {{}, [d](const Scene& s) { return d(s.settings.lbfgs_it_max); }}},
      {"integrator.restart", {{}, [d](const Scene& s) { return d(s.settings.restart); }}},
      {"integrator.warm_lambda", {{}, [d](const Scene& s) { return d(s.settings.warm_lambda); }}},
      {"integrator.friction_continuation", {{}, [d](const Scene& s) { return d(s.settings.friction_continuation); }}},
      {"integrator.order", {{}, [d](const Scene& s) { return d(s.settings.order); }}},
      {"contact.damping", {{}, [d](const Scene& s) { return d(s.settings.contact.damping); }}},
      {"integrator.pgm", {{}, [](const Scene& s) { return Value(std::string(s.nmdp.pgm.mode == PgmMode::Zo ? "zo" : "fo")); }}},
      {"integrator.accel_denominator", {{}, [](const Scene& s) {
         return Value(std::string(s.nmdp.accel == AccelDenominator::Literal ? "literal" : "recommended")); }}},
      {"integrator.carry_gamma", {{}, [d](const Scene& s) { return d(s.nmdp.carry_gamma); }}},
      {"contact.c_perp", {{}, [](const Scene& s) { return Value(s.settings.contact.c_perp); }}},
      {"contact.c_par", {{}, [](const Scene& s) { return Value(s.settings.contact.c_par); }}},
      {"contact.mu", {{}, [](const Scene& s) { return Value(s.ne.mu); }}},
      {"contact.friction", {{}, [](const Scene& s) {
         return Value(std::string(s.settings.contact.friction == FrictionLaw::Coulomb ? "coulomb" : "power")); }}},
      {"contact.stiction_velocity", {{}, [](const Scene& s) { return Value(s.settings.contact.stiction_velocity); }}},
      // two_link.xml: 8 DOFs (2 hinges, the ball's free joint), one plane of its own
      {"model.free_root", {{"model={mjcf: " BIGSTEP_SOURCE_DIR "/tests/data/two_link.xml}", "control={}"},
                           [](const Scene& s) { return Value(s.model.n_q == 8 ? 0.0 : 1.0); }}},
      {"model.floor", {{"model={mjcf: " BIGSTEP_SOURCE_DIR "/tests/data/two_link.xml}", "control={}"},
                       [](const Scene& s) { return Value(s.model.n_plane == 1 ? 0.0 : 1.0); }}},
      {"model.limit_stiffness", {{"model={mjcf: " BIGSTEP_SOURCE_DIR "/tests/data/two_link.xml}", "control={}"},
                                 [](const Scene& s) { return Value(s.model.dof_limit_k[0]); }}},
      {"contact.slip_speed", {{"model={mjcf: " BIGSTEP_SOURCE_DIR "/tests/data/two_link.xml}", "control={}"},
                              [](const Scene& s) {  // read back through the c_par rule it sets
                                const ContactParams& c = s.settings.contact;
                                const double v = c.mu * c.c_perp / ((c.beta + 1) * c.c_par * s.settings.dt);
                                return Value(std::round(v * 1e12) / 1e12);
                              }}},
      {"contact.alpha", {{}, [](const Scene& s) { return Value(s.settings.contact.alpha); }}},
      {"contact.beta", {{}, [](const Scene& s) { return Value(s.settings.contact.beta); }}},
      {"contact.gamma", {{}, [](const Scene& s) { return Value(s.settings.contact.gamma); }}},
      {"contact.friction_directions", {{}, [d](const Scene& s) { return d(s.nmdp.contact.friction_directions); }}},
      {"contact.active_distance", {{}, [](const Scene& s) { return Value(s.ne.active_distance); }}},
      {"contact.cfm", {{}, [](const Scene& s) { return Value(s.ne.cfm); }}},
      {"contact.max_correction_speed", {{}, [](const Scene& s) { return Value(s.ne.max_correction_speed); }}},
      {"contact.speculative", {{}, [d](const Scene& s) { return d(s.ne.speculative); }}},
      {"contact.relinearizations", {{}, [d](const Scene& s) { return d(s.ne.relinearizations); }}},
      {"contact.k_c", {{}, [](const Scene& s) { return Value(s.ne.k_c); }}},
      {"contact.d_ref", {{}, [](const Scene& s) { return Value(s.ne.d_ref); }}},
      {"contact.zeta", {{}, [](const Scene& s) { return Value(s.ne.zeta); }}},
      {"contact.mdp_metric", {{}, [](const Scene& s) { return Value(std::string(s.ne.mdp_effective_metric ? "effective" : "kinetic")); }}},
      {"contact.depth_exponent", {{}, [d](const Scene& s) { return d(s.nmdp.depth_exponent); }}},
      {"compliant.normal_model", {{}, [](const Scene& s) { return Value(std::string(normal_model_name(s.compliant.rows.normal))); }}},
      {"compliant.youngs_modulus", {{}, [](const Scene& s) { return Value(s.compliant.rows.youngs); }}},
      {"compliant.normal_stiffness", {{}, [](const Scene& s) { return Value(s.compliant.rows.k_n); }}},
      {"compliant.normal_damping", {{}, [](const Scene& s) { return Value(s.compliant.rows.b_n); }}},
      {"compliant.point_radius", {{}, [](const Scene& s) { return Value(s.compliant.rows.point_radius); }}},
      {"compliant.limit_stiffness", {{}, [](const Scene& s) { return Value(s.compliant.rows.k_lim); }}},
      {"compliant.limit_damping", {{}, [](const Scene& s) { return Value(s.compliant.rows.b_lim); }}},
      {"compliant.gdot_terms", {{}, [d](const Scene& s) { return d(s.compliant.rows.gdot); }}},
      {"compliant.friction_solve", {{}, [](const Scene& s) { return Value(std::string(friction_solve_name(s.compliant.solve))); }}},
      {"compliant.friction_cone", {{}, [](const Scene& s) { return Value(std::string(friction_cone_name(s.compliant.cone))); }}},
      {"compliant.cone_edges", {{}, [d](const Scene& s) { return d(s.compliant.cone_edges); }}},
      {"compliant.cone_inscribed", {{}, [d](const Scene& s) { return d(s.compliant.cone_inscribed); }}},
      {"compliant.eps", {{}, [](const Scene& s) { return Value(s.compliant.eps); }}},
      {"compliant.max_iterations", {{}, [d](const Scene& s) { return d(s.compliant.max_iterations); }}},
      {"compliant.loops[i].link_a", {{"compliant.loops=[{stiffness: 1}]"}, [](const Scene& s) {
         return Value(std::string(s.compliant.rows.loops.at(0).link_a < 0 ? "world" : "?")); }}},
      {"compliant.loops[i].point_a", {{"compliant.loops=[{stiffness: 1}]"}, [](const Scene& s) { return Value(s.compliant.rows.loops.at(0).p_a); }}},
      {"compliant.loops[i].link_b", {{"compliant.loops=[{stiffness: 1}]"}, [](const Scene& s) {
         return Value(std::string(s.compliant.rows.loops.at(0).link_b < 0 ? "world" : "?")); }}},
      {"compliant.loops[i].point_b", {{"compliant.loops=[{stiffness: 1}]"}, [](const Scene& s) { return Value(s.compliant.rows.loops.at(0).p_b); }}},
      {"compliant.loops[i].damping", {{"compliant.loops=[{stiffness: 1}]"}, [](const Scene& s) { return Value(s.compliant.rows.loops.at(0).b); }}},
      {"metrics.type", {{}, [](const Scene& s) {
         return Value(std::string(s.metric == MetricKind::Sliding ? "sliding" : s.metric == MetricKind::Quadruped ? "quadruped" : "com")); }}},
      {"metrics.heading", {{}, [](const Scene& s) { return Value(s.heading); }}},
      {"metrics.stop_at_rest", {{}, [d](const Scene& s) { return d(s.stop_at_rest); }}},
      {"metrics.rest_speed", {{}, [](const Scene& s) { return Value(s.rest_speed); }}},
      {"metrics.rest_time", {{}, [](const Scene& s) { return Value(s.rest_time); }}},
      {"batch.rollouts", {{}, [d](const Scene& s) { return d(s.rollouts); }}},
      {"batch.seed", {{}, [d](const Scene& s) { return d(double(s.seed)); }}},
      {"batch.threads", {{}, [d](const Scene& s) { return d(s.threads); }}},
      {"batch.perturb_theta", {{}, [](const Scene& s) { return Value(s.perturb_theta); }}},
      {"batch.perturb_theta_dot", {{}, [](const Scene& s) { return Value(s.perturb_theta_dot); }}},
      {"batch.randomize_friction", {{}, [](const Scene& s) { return Value(s.randomize_friction); }}},
      {"batch.randomize_stiffness", {{}, [](const Scene& s) { return Value(s.randomize_stiffness); }}},
      {"batch.randomize_mass", {{}, [](const Scene& s) { return Value(s.randomize_mass); }}},
      {"batch.randomize_limit_stiffness", {{}, [](const Scene& s) { return Value(s.randomize_limit_stiffness); }}},
      {"batch.push_speed", {{}, [](const Scene& s) { return Value(s.push_speed); }}},
      {"batch.push_prob", {{}, [](const Scene& s) { return Value(s.push_prob); }}},
      {"batch.contact_mu_min", {{}, [](const Scene& s) { return Value(s.contact_mu_min); }}},
      {"batch.contact_mu_max", {{}, [](const Scene& s) { return Value(s.contact_mu_max); }}},
      {"batch.backend", {{}, [](const Scene& s) { return Value(s.backend); }}},
      {"batch.engine", {{}, [](const Scene& s) { return Value(s.engine); }}},
      {"batch.precision", {{}, [](const Scene& s) { return Value(s.precision); }}},
      {"batch.schedule", {{}, [](const Scene& s) { return Value(s.schedule); }}},
      {"batch.fp32_eps_r", {{}, [](const Scene& s) { return Value(s.fp32_eps_r); }}},
      {"batch.fp32_eps_x", {{}, [](const Scene& s) { return Value(s.fp32_eps_x); }}},
      {"controller.type", {{}, [](const Scene& s) { return Value(std::string(controller_type_name(s.controller.type))); }}},
      {"controller.kp", {{}, [](const Scene& s) { return Value(s.controller.kp); }}},
      {"controller.kd", {{}, [](const Scene& s) { return Value(s.controller.kd); }}},
      {"controller.ki", {{}, [](const Scene& s) { return Value(s.controller.ki); }}},
      {"controller.contact_distance", {{}, [](const Scene& s) { return Value(s.controller.contact_distance); }}},
      {"controller.plan_unactuated", {{}, [d](const Scene& s) { return d(s.controller.plan_unactuated); }}},
      {"controller.mu_inf", {{}, [](const Scene& s) { return Value(s.controller.mu_inf); }}},
      {"control.reference.move.start", {move, [](const Scene& s) { return Value(s.reference.move_start); }}},
      {"control.reference.move.duration", {move, [](const Scene& s) { return Value(s.reference.move_duration); }}},
      {"control.reference.move.frequency", {move, [](const Scene& s) { return Value(s.reference.move_frequency); }}},
      {"controller.base_kp", {{}, [](const Scene& s) { return Value(s.controller.base_kp); }}},
      {"controller.base_kd", {{}, [](const Scene& s) { return Value(s.controller.base_kd); }}},
      {"controller.tau_max", {{}, [](const Scene& s) { return Value(s.controller.tau_max); }}},
  };
  // keyframe offsets {abduction, hip, knee, ankle}: all 0
  const std::vector<std::pair<std::string, std::vector<std::string>>> frames = {
      {"jump.crouch", jump}, {"jump.extension", jump}, {"jump.flight", jump}, {"walk.lift", walk}};
  for (const auto& [frame, ov] : frames)
    for (int r = 0; r < kLegRoles; ++r) {
      const std::string f = frame;
      p["control.reference." + frame + "." + leg_role_name(r)] = {ov, [f, r](const Scene& s) {
        const ReferenceSpec& rs = s.reference;
        const auto& a = f == "jump.crouch" ? rs.crouch : f == "jump.extension" ? rs.extension
                      : f == "jump.flight" ? rs.flight : rs.lift;
        return Value(a[r]);
      }};
    }
  return p;
}

std::string show(const Value& v) {
  std::ostringstream os;
  if (auto* x = std::get_if<double>(&v)) os << *x;
  if (auto* s = std::get_if<std::string>(&v)) os << *s;
  if (auto* w = std::get_if<Vec3>(&v)) os << "[" << w->transpose() << "]";
  return os.str();
}

bool same(const Value& a, const Value& b) {
  if (a.index() != b.index()) return false;
  if (auto* w = std::get_if<Vec3>(&a)) return (*w - std::get<Vec3>(b)).norm() < 1e-12;
  return a == b;
}

}  // namespace

TEST_CASE("scene_keys: every key the parser reads is in the table and the help, and every table key is read",
          "[scene_keys]") {
  const std::string help = scene_keys_help();
  std::set<std::string> read;
  auto load = [&](const std::string& yaml, const std::string& src, const std::vector<std::string>& ov) {
    std::vector<std::string> keys;
    REQUIRE_NOTHROW(load_scene_text(yaml, src, ov, &keys));
    for (const auto& k : keys) read.insert(generic_key(k));
  };
  for (const auto& e : std::filesystem::directory_iterator(std::string(BIGSTEP_SOURCE_DIR) + "/configs")) {
    if (e.path().extension() != ".yaml") continue;
    std::ifstream f(e.path());
    std::stringstream ss;
    ss << f.rdbuf();
    load(ss.str(), e.path().string(), {});
  }
  for (const auto& [key, probe] : probes()) load(kMinimal, "minimal.yaml", probe.overrides);
  // the conditional keys: a box given by density, inertia, description
  load(kMinimal, "minimal.yaml", {"model.links[0].box={size: [1, 1, 1], density: 2, contact_grid: 2}",
                                  "model.links[1].inertia=[1, 1, 1]", "description=x"});
  load(kMinimal, "minimal.yaml", {"model.links[1].range=[-1, 1]"});
  // an imported model (tests/data/two_link.xml): its file, allow list and keyframes
  load(kMinimal, "minimal.yaml",
       {"model={mjcf: " BIGSTEP_SOURCE_DIR "/tests/data/two_link.xml, allow: [frictionloss]}", "control={}",
        "initial={keyframe: lifted}"});
  load(kMinimal, "minimal.yaml", {"model={urdf: " BIGSTEP_SOURCE_DIR "/tests/data/two_link.xml, free_root: true, "
                                  "floor: true, allow: [unsupported_pairs]}", "control={}"});
  load(kMinimal, "minimal.yaml", {"model.geoms=[{name: g, type: sphere, link: b, size: [0.1]}]", "model.exclude=[[a, b]]",
                                  "model.actuators=[{name: m, joint: b, type: position, kp: 1, ctrlrange: [-1, 1]}]"});
  for (const auto& k : read) {
    INFO("key read by the parser: " << k);
    CHECK(find_scene_key(k) != nullptr);
    CHECK(help.find("\n  " + k + " ") != std::string::npos);
  }
  for (const SceneKey& k : scene_keys()) {
    INFO("table key: " << k.key);
    CHECK(read.count(k.key) == 1);
  }
}

TEST_CASE("scene_keys: the help prints each key's type and default on its line", "[scene_keys]") {
  const std::string help = scene_keys_help();
  for (const SceneKey& k : scene_keys()) {
    INFO(k.key);
    const size_t at = help.find("\n  " + k.key + " ");
    REQUIRE(at != std::string::npos);
    const std::string line = help.substr(at + 1, help.find('\n', at + 1) - at - 1);
    CHECK(line.find(" " + k.def + " ") != std::string::npos);
    CHECK(line.find(" " + k.type + " ") != std::string::npos);
    for (const auto& c : k.choices) CHECK(line.find(c) != std::string::npos);
  }
  // the choices of integrator.type are the registry's names
  CHECK(help.find("pbd | pbfd | ne_lcp | ne_mdp | nmdp_ne | nmdp_pbd") != std::string::npos);
}

TEST_CASE("scene_keys: the printed defaults are the values a scene gets without the key", "[scene_keys]") {
  const std::map<std::string, Probe> p = probes();
  for (const SceneKey& k : scene_keys()) {
    if (!k.literal_default() || k.type == "map") continue;
    INFO(k.key << " (help default " << k.def << ")");
    const auto it = p.find(k.key);
    REQUIRE(it != p.end());  // a new key with a default needs a probe here
    const Scene sc = load_scene_text(kMinimal, "minimal.yaml", it->second.overrides);
    const Value got = it->second.get(sc), want = table_value(k);
    INFO("scene value " << show(got));
    CHECK(same(got, want));
  }
}

TEST_CASE("scene_keys: generic keys", "[scene_keys]") {
  CHECK(generic_key("model.links[12].box.mass") == "model.links[i].box.mass");
  CHECK(generic_key("control.reference.legs[0].hip") == "control.reference.legs[i].hip");
  CHECK(find_scene_key("model.links[3].mass") == find_scene_key("model.links[i].mass"));
  CHECK(find_scene_key("integrator.bogus") == nullptr);
}

TEST_CASE("scene_keys: model.limit_stiffness sets C of every imported joint's limit, 0 keeps c_perp", "[scene_keys]") {
  const std::string xml = "model={mjcf: " BIGSTEP_SOURCE_DIR "/tests/data/two_link.xml}";
  const Scene soft = load_scene_text(kMinimal, "minimal.yaml", {xml, "control={}", "model.limit_stiffness=2.5e4"});
  REQUIRE(soft.model.n_q > 0);
  for (double c : soft.model.dof_limit_k) CHECK(c == 2.5e4);
  const Scene def = load_scene_text(kMinimal, "minimal.yaml", {xml, "control={}"});
  for (double c : def.model.dof_limit_k) CHECK(c == 0.0);
  try {
    load_scene_text(kMinimal, "minimal.yaml", {xml, "control={}", "model.limit_stiffness=-1"});
    FAIL("a negative limit_stiffness was accepted");
  } catch (const std::exception& e) {
    CHECK(std::string(e.what()).find("model.limit_stiffness") != std::string::npos);
  }
}
