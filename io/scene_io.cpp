// YAML -> Scene with strict key checking (docs/architecture.md §1.1): the top level, the integrator,
// contact, metrics and batch keys. The model is read by io/model_yaml.cpp, the controls by
// io/control_yaml.cpp, defaults come from io/scene_keys.cpp, the methods from
// solvers/registry.cpp. Each error names the file, the full key path and the offending value.
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "core/error.h"
#include "io/control_yaml.h"
#include "io/mjcf_scene.h"
#include "io/model_yaml.h"
#include "io/scene.h"
#include "io/utf8.h"
#include "io/yaml_cfg.h"
#include "io/yaml_override.h"
#include "solvers/compliant/compliant_step.h"
#include "solvers/registry.h"

namespace bigstep {

int Scene::steps() const { return int(std::lround(duration / settings.dt)); }

namespace {

// compliant.* (solvers/compliant/compliant_step.h), with integrator.dt and contact.mu already read
void parse_compliant(Cfg& top, Scene& sc) {
  Cfg c = top.child("compliant");
  CompliantSettings& s = sc.compliant;
  CompliantRowParams& r = s.rows;
  s.dt = sc.settings.dt;
  s.mu = sc.settings.contact.mu;
  const std::string nm = c.choice("normal_model");
  r.normal = nm == "linear" ? NormalModel::Linear : nm == "hertz_consistent" ? NormalModel::HertzConsistent : NormalModel::Hertz;
  r.youngs = c.num("youngs_modulus");
  r.k_n = c.num("normal_stiffness");
  r.b_n = c.num("normal_damping");
  r.point_radius = c.num("point_radius");
  r.b_t = c.num("friction_damping", 1e6 / s.dt);
  r.k_lim = c.num("limit_stiffness");
  r.b_lim = c.num("limit_damping");
  r.gdot = c.flag("gdot_terms");
  s.zeta = c.num("zeta", 1 / s.dt);
  s.solve = c.choice("friction_solve") == "joint" ? FrictionSolve::Joint : FrictionSolve::Staggered;
  const std::string cone = c.choice("friction_cone");
  s.cone = cone == "cone2d" ? FrictionCone::Cone2d : cone == "polyhedral" ? FrictionCone::Polyhedral : FrictionCone::Cone;
  s.cone_edges = c.integer("cone_edges");
  s.cone_inscribed = c.flag("cone_inscribed");
  s.eps = c.num("eps");
  s.max_iterations = c.integer("max_iterations");
  s.max_contacts = c.integer("max_contacts", std::min(sc.model.max_contacts, 128));
  if (s.max_contacts < 0 || s.max_contacts > kMaxCompliantContacts)
    c.fail(c.key("max_contacts"), s.max_contacts, detail::concat("must be in [0, ", kMaxCompliantContacts, "]"));
  // loop closures: link names (or world) and points in their frames
  const YAML::Node loops = c.raw("loops");
  r.loops.clear();
  if (loops.IsDefined() && !loops.IsNull()) {
    if (!loops.IsSequence())
      c.fail_text(c.key("loops"), show(loops), "expected a list of {link_a, point_a, link_b, point_b, stiffness, damping}");
    auto link = [&](Cfg& l, const char* k) {
      const std::string name = l.str(k);
      if (name == "world") return -1;
      for (int j = 0; j < sc.model.n_link; ++j)
        if (sc.model.link_name[j] == name) return j;
      l.fail(l.key(k), name, "no such link (or world)");
      return -1;
    };
    for (size_t i = 0; i < loops.size(); ++i) {
      Cfg l = c.item("loops", loops, i);
      CompliantLoop L;
      L.link_a = link(l, "link_a");
      L.p_a = l.v3("point_a");
      L.link_b = link(l, "link_b");
      L.p_b = l.v3("point_b");
      L.k = l.num("stiffness");
      L.b = l.num("damping");
      l.finish();
      r.loops.push_back(L);
    }
  }
  c.finish();
}

// integrator.* (the method, its solver settings, dt and duration) and contact.*
void parse_integrator(Cfg& top, Scene& sc) {
  Cfg integ = top.child("integrator");
  PbdSettings& s = sc.settings;
  NmdpSettings& nm = sc.nmdp;
  sc.integrator = integ.choice("type");
  const SolverEntry& method = find_solver(sc.integrator);
  s.formulation = method.formulation;
  nm.form = method.nmdp_form;
  const std::string opt = integ.choice("optimizer");
  s.optimizer = opt == "lm" ? Optimizer::Lm : opt == "lbfgs" ? Optimizer::Lbfgs : Optimizer::JtjLm;
  s.dt = sc.imported ? integ.num("dt", sc.imported->timestep) : integ.num("dt", 0.01);
  if (!(s.dt > 0)) integ.fail(integ.key("dt"), s.dt, "must be > 0");
  sc.duration = integ.num("duration");
  if (!(sc.duration > 0)) integ.fail(integ.key("duration"), sc.duration, "must be > 0");
  // a run of 0 steps does nothing; one of billions overflows the step counter or never ends
  const double steps = std::round(sc.duration / s.dt);
  if (!(steps >= 1 && steps <= kMaxSteps))
    integ.fail_text(integ.key("duration"), show(integ.node()["duration"]),
                    detail::concat("with integrator.dt = ", s.dt, " gives round(duration / dt) = ", steps,
                                   " steps; expected 1 to ", kMaxSteps));
  s.eps_r = integ.num("eps_r");
  s.eps_x = integ.num("eps_x");
  s.it_max = integ.integer("it_max");
  s.lbfgs_it_max = integ.integer("lbfgs_it_max");
  if (s.lbfgs_it_max <= 0) integ.fail(integ.key("lbfgs_it_max"), s.lbfgs_it_max, "must be > 0");
  s.restart = integ.flag("restart");
  s.warm_lambda = integ.flag("warm_lambda");
  s.order = integ.integer("order");
  if (s.order != 1 && s.order != 2) integ.fail(integ.key("order"), s.order, "must be 1 or 2");
  if (s.order != 1 && !(sc.integrator == "pbd" || sc.integrator == "pbfd"))
    integ.fail(integ.key("order"), s.order,
               "the second-order step is implemented for integrator.type pbd and pbfd only (this is " +
                   sc.integrator + ")");
  s.friction_continuation = integ.integer("friction_continuation");
  if (s.friction_continuation < 0 || s.friction_continuation > 8)
    integ.fail(integ.key("friction_continuation"), s.friction_continuation, "must be 0 to 8 (softened-friction stages)");
  // NMDP (docs/methods/nmdp.md §7): PGM variant, acceleration denominator (§3, B2), gamma carried between calls
  nm.pgm.mode = integ.choice("pgm") == "zo" ? PgmMode::Zo : PgmMode::Fo;
  nm.accel = integ.choice("accel_denominator") == "literal" ? AccelDenominator::Literal : AccelDenominator::Recommended;
  nm.carry_gamma = integ.flag("carry_gamma");
  integ.finish();

  Cfg contact = top.child("contact");
  ContactParams& cp = s.contact;
  cp.alpha = contact.num("alpha");
  cp.beta = contact.num("beta");
  cp.gamma = contact.num("gamma");
  // an imported model's defaults follow from what its file says (io/mjcf_scene.h)
  cp.damping = contact.num("damping");
  if (!(cp.damping >= 0) || !std::isfinite(cp.damping)) contact.fail(contact.key("damping"), cp.damping, "must be finite and >= 0");
  if (cp.damping != 0 && sc.integrator != "pbfd")
    contact.fail(contact.key("damping"), cp.damping,
                 "the damped normal force needs integrator.type = pbfd (Eq. 13; it has no energy for pbd): this is " + sc.integrator);
  const double slip_speed = contact.num("slip_speed");
  if (!(slip_speed > 0)) contact.fail(contact.key("slip_speed"), slip_speed, "must be > 0");
  if (sc.imported) {
    cp.mu = contact.num("mu", imported_mu(sc.model, *sc.imported));
    cp.c_perp = contact.num("c_perp", c_perp_rest_depth(sc.model.weight(), cp.alpha));
    cp.c_par = contact.num("c_par", c_par_from_mu(cp.mu, cp.c_perp, cp.beta, slip_speed, s.dt));
  } else {
    cp.mu = contact.num("mu", 0.5);
    cp.c_perp = contact.num("c_perp", 1e5);
    cp.c_par = contact.num("c_par", 0.0);
  }
  // PBFD's friction law (docs/methods/pbfd.md §4.9): Coulomb's mu f_n regularised below v_s
  cp.friction = contact.choice("friction") == "coulomb" ? FrictionLaw::Coulomb : FrictionLaw::Power;
  cp.stiction_velocity = contact.num("stiction_velocity");
  if (!(cp.stiction_velocity > 0 && std::isfinite(cp.stiction_velocity)))
    contact.fail(contact.key("stiction_velocity"), cp.stiction_velocity, "must be finite and > 0");
  NeSettings& ne = sc.ne;
  ne.dt = s.dt;
  ne.mu = cp.mu;
  ne.friction_directions = contact.integer("friction_directions");
  ne.active_distance = contact.num("active_distance");
  ne.cfm = contact.num("cfm");
  ne.max_correction_speed = contact.num("max_correction_speed");
  ne.speculative = contact.flag("speculative");
  ne.relinearizations = contact.integer("relinearizations");
  ne.k_c = contact.num("k_c");
  ne.d_ref = contact.num("d_ref");
  ne.zeta = contact.num("zeta");
  ne.mdp_effective_metric = contact.choice("mdp_metric") == "effective";
  nm.depth_exponent = contact.integer("depth_exponent");
  contact.finish();
  nm.contact = ne;
  parse_compliant(top, sc);

  // what the method supports (solvers/registry.cpp), then its own settings checks
  try {
    method.validate({sc.settings, sc.ne, sc.nmdp, sc.compliant});
    if (sc.integrator == "compliant") check_compliant_workspace(sc.model, sc.compliant);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(top.file() + ": " + e.what());
  }
  if (method.optimizers && !method.takes(s.optimizer))
    integ.fail(integ.key("optimizer"), opt,
               detail::concat("integrator.type = ", method.name, " takes ", optimizer_names(method.optimizers)));
  if (sc.pd.active() && !method.pd_servo)
    top.fail_text("control.pd", show(top.node()["control"]["pd"]),
                  detail::concat("integrator.type = ", method.name, " has no PD servo"));
}

void parse_metrics(Cfg& top, Scene& sc) {
  Cfg met = top.child("metrics");
  const std::string mtype = met.choice("type");
  sc.metric = mtype == "sliding" ? MetricKind::Sliding : mtype == "quadruped" ? MetricKind::Quadruped : MetricKind::Com;
  sc.heading = met.v3("heading");
  if (!(std::abs(sc.heading.z()) < 1e-12 && sc.heading.norm() > 0))
    met.fail_text(met.key("heading"), show(met.node()["heading"]), "must be a non-zero horizontal vector [x, y, 0]");
  sc.heading.normalize();
  sc.stop_at_rest = met.flag("stop_at_rest");
  sc.rest_speed = met.num("rest_speed");
  sc.rest_time = met.num("rest_time");
  if (!(sc.rest_speed > 0)) met.fail(met.key("rest_speed"), sc.rest_speed, "must be > 0");
  if (!(sc.rest_time > 0)) met.fail(met.key("rest_time"), sc.rest_time, "must be > 0");
  if (!(sc.rest_time / sc.settings.dt <= kMaxSteps))
    met.fail_text(met.key("rest_time"), show(met.node()["rest_time"]),
                  detail::concat("with integrator.dt = ", sc.settings.dt, " is ", sc.rest_time / sc.settings.dt,
                                 " steps; expected at most ", kMaxSteps));
  const std::string ml = met.str("link", sc.model.link_name[0]);
  sc.metric_link = -1;
  for (int j = 0; j < sc.model.n_link; ++j)
    if (sc.model.link_name[j] == ml) sc.metric_link = j;
  if (sc.metric_link < 0) met.fail(met.key("link"), ml, "no such link");
  const std::string hl = met.str("hold_link", "");
  sc.hold_link = -1;
  for (int j = 0; j < sc.model.n_link; ++j)
    if (sc.model.link_name[j] == hl) sc.hold_link = j;
  if (!hl.empty() && sc.hold_link < 0) met.fail(met.key("hold_link"), hl, "no such link");
  met.finish();
}

// controller.*: pd, or an ID controller tracking control.reference through a PID (control/inverse_dynamics/id_controller.h)
void parse_controller(Cfg& top, Scene& sc) {
  Cfg c = top.child("controller");
  IdControllerSpec& s = sc.controller;
  s.type = controller_type_from_name(c.choice("type"));
  s.kp = c.num("kp");
  s.kd = c.num("kd");
  s.ki = c.num("ki");
  s.mu = c.num("mu", sc.ne.mu);
  s.contact_distance = c.num("contact_distance");
  s.plan_unactuated = c.flag("plan_unactuated");
  s.mu_inf = c.num("mu_inf");
  s.base_kp = c.num("base_kp");
  s.base_kd = c.num("base_kd");
  s.tau_max = c.num("tau_max");
  const std::pair<const char*, double> vals[] = {{"kp", s.kp}, {"kd", s.kd}, {"ki", s.ki}, {"mu", s.mu},
                                                 {"contact_distance", s.contact_distance}, {"mu_inf", s.mu_inf},
                                                 {"base_kp", s.base_kp}, {"base_kd", s.base_kd}, {"tau_max", s.tau_max}};
  for (const auto& [k, x] : vals)
    if (!(std::isfinite(x) && x >= 0)) c.fail(c.key(k), x, "must be finite and >= 0");
  if (s.inverse_dynamics() && !sc.pd.active())
    c.fail(c.key("type"), controller_type_name(s.type), "needs control.pd and control.reference (the planned motion)");
  c.finish();
}

void parse_batch(Cfg& top, Scene& sc) {
  Cfg batch = top.child("batch");
  sc.rollouts = batch.integer("rollouts");
  if (sc.rollouts < 1) batch.fail(batch.key("rollouts"), sc.rollouts, "must be >= 1");
  if (sc.rollouts > kMaxRollouts)
    batch.fail(batch.key("rollouts"), sc.rollouts, detail::concat("at most ", kMaxRollouts, " (2^24) rollouts"));
  sc.seed = batch.uint64("seed");  // exact: 2^53 + 1 stays 2^53 + 1
  sc.threads = batch.integer("threads");
  if (sc.threads < 0 || sc.threads > kMaxThreads)
    batch.fail(batch.key("threads"), sc.threads, detail::concat("must be in [0, ", kMaxThreads, "] (0 = all cores)"));
  sc.perturb_theta = batch.num("perturb_theta");
  sc.perturb_theta_dot = batch.num("perturb_theta_dot");
  sc.randomize_friction = batch.num("randomize_friction");
  sc.randomize_stiffness = batch.num("randomize_stiffness");
  sc.randomize_mass = batch.num("randomize_mass");
  sc.randomize_limit_stiffness = batch.num("randomize_limit_stiffness");
  sc.push_speed = batch.num("push_speed");
  sc.push_prob = batch.num("push_prob");
  for (const char* k : {"perturb_theta", "perturb_theta_dot", "randomize_friction", "randomize_stiffness", "randomize_mass",
                        "push_speed", "randomize_limit_stiffness"})
    if (!(batch.num(k) >= 0)) batch.fail(batch.key(k), batch.num(k), "must be >= 0");
  // factors exp(U(-r, r)): beyond kMaxRandomizeSpread they leave any physical range (and near 745
  // reach 0 or inf in double)
  for (const char* k : {"randomize_friction", "randomize_stiffness", "randomize_mass", "randomize_limit_stiffness"})
    if (!(batch.num(k) <= kMaxRandomizeSpread))
      batch.fail(batch.key(k), batch.num(k),
                 detail::concat("must be in [0, ", kMaxRandomizeSpread, "] (factors exp(U(-r, r)) within [e^-", kMaxRandomizeSpread,
                                ", e^", kMaxRandomizeSpread, "])"));
  if (!(sc.push_prob >= 0 && sc.push_prob <= 1)) batch.fail(batch.key("push_prob"), sc.push_prob, "must be in [0, 1]");
  sc.contact_mu_min = batch.num("contact_mu_min");
  sc.contact_mu_max = batch.num("contact_mu_max");
  if (!(sc.contact_mu_min >= 0)) batch.fail(batch.key("contact_mu_min"), sc.contact_mu_min, "must be >= 0");
  if (!(sc.contact_mu_max == 0 || (std::isfinite(sc.contact_mu_max) && sc.contact_mu_max >= sc.contact_mu_min)))
    batch.fail(batch.key("contact_mu_max"), sc.contact_mu_max, "must be 0 (off) or finite and >= batch.contact_mu_min");
  sc.backend = batch.choice("backend");
  sc.engine = batch.choice("engine");
  sc.precision = batch.choice("precision");
  sc.schedule = batch.choice("schedule");
  sc.fp32_eps_r = batch.num("fp32_eps_r");
  sc.fp32_eps_x = batch.num("fp32_eps_x");
  if (!(sc.fp32_eps_r > 0)) batch.fail(batch.key("fp32_eps_r"), sc.fp32_eps_r, "must be > 0");
  if (!(sc.fp32_eps_x > 0)) batch.fail(batch.key("fp32_eps_x"), sc.fp32_eps_x, "must be > 0");
  batch.finish();
}

// A scene name that is one safe path component and JSON text.
bool is_plain_name(const std::string& s) {
  if (s.empty() || s == "." || s == ".." || !is_valid_utf8(s)) return false;
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == '/' || c == '\\' || c < 0x20 || c == 0x7F) return false;
  }
  return true;
}

Scene parse(YAML::Node root, const CfgContext& ctx, const std::vector<std::string>& overrides) {
  const std::string& file = ctx.file;
  if (!root.IsMap()) throw InvalidArgument(file + ": (top level) = " + show(root) + ": expected a mapping");
  for (const auto& ov : overrides) apply_override(root, ov, file);
  Cfg top(root, "", ctx);
  Scene sc;
  sc.source = file;
  sc.name = top.str("scene");
  // the name is a folder (out/<scene>) and JSON text: one plain path component in UTF-8
  if (!is_plain_name(sc.name))
    top.fail_text("scene", escaped_bytes(sc.name),
                  "must be a plain folder name: not empty, '.' or '..', no '/', '\\' or control characters, UTF-8 "
                  "(the run writes to out/<scene>)");
  top.str("description");

  if (!top.has("model")) top.fail("model", "(missing)", "required");
  Cfg model = top.child("model");
  ModelSpec spec;
  if (model.has("mjcf") || model.has("urdf")) {
    sc.imported = import_model_keys(model, file);
    spec = sc.imported->spec;
  } else {
    spec = parse_model_spec(model);
  }
  try {
    sc.model = Model::finalize(spec);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(file + ": model." + e.what());
  }
  const int n = sc.model.n_q;

  Cfg init = top.child("initial");
  // an imported model starts at MuJoCo's qpos0, or at one of its keyframes
  VecX th0 = sc.imported ? sc.imported->theta0 : VecX::Zero(n), thd0 = VecX::Zero(n);
  const std::string key = init.str("keyframe", "");
  if (!key.empty()) {
    if (!sc.imported) init.fail(init.key("keyframe"), key, "only an MJCF / URDF model (model.mjcf) has keyframes");
    const auto& keys = sc.imported->keyframes;
    int found = -1;
    for (size_t i = 0; i < keys.size(); ++i)
      if (keys[i].name == key || std::to_string(i) == key) found = int(i);
    if (found < 0) init.fail(init.key("keyframe"), key, detail::concat("no such keyframe (", keys.size(), " in the file)"));
    th0 = keys[found].theta;
    thd0 = keys[found].theta_dot;
  }
  sc.theta0 = init.vec("theta", n, th0);
  sc.theta_dot0 = init.vec("theta_dot", n, thd0);
  // a keyframe's charts, unless initial.theta replaced its angles (those are world angles)
  if (!key.empty() && sc.theta0 == th0) {
    const auto& keys = sc.imported->keyframes;
    for (const auto& k : keys)
      if (k.theta == th0 && k.chart.size() == size_t(sc.model.n_chart)) sc.chart0 = k.chart;
  }
  init.finish();
  Cfg ctrl = top.child("control");
  parse_control(ctrl, sc);
  parse_integrator(top, sc);
  parse_metrics(top, sc);
  parse_batch(top, sc);
  parse_controller(top, sc);
  top.finish();
  return sc;
}

// True when the text is XML (an MJCF or URDF file) rather than YAML.
bool is_xml(const std::string& text) {
  size_t i = text.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;  // UTF-8 byte order mark
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  return i < text.size() && text[i] == '<';
}

// XML text without its file (the compiler needs the file for includes and meshes): say how to load it.
void reject_xml(const std::string& text, const std::string& source) {
  if (is_xml(text))
    throw InvalidArgument(source +
                          ": (top level) = an XML file (MJCF or URDF?), not a YAML scene: load the file itself "
                          "(bigstep run model.xml, load_scene(path)) or name it in a scene as model: {mjcf: path}");
}

}  // namespace

std::unique_ptr<Integrator> make_integrator(const Scene& sc) {
  return find_solver(sc.integrator).make(sc.model, {sc.settings, sc.ne, sc.nmdp, sc.compliant});
}

Scene load_scene_text(const std::string& yaml, const std::string& source, const std::vector<std::string>& overrides,
                      std::vector<std::string>* keys_read) {
  reject_xml(yaml, source);
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    throw InvalidArgument(detail::concat(source, ": line ", e.mark.line + 1, ": YAML syntax error: ", e.msg));
  }
  const CfgContext ctx{source, keys_read};
  return parse(root, ctx, overrides);
}

Scene load_scene(const std::string& given, const std::vector<std::string>& overrides) {
  // gymnasium:hopper.xml, example-robot-data:robots/... name installed files (io/mjcf_scene.h)
  const std::string path = given.find(':') != std::string::npos ? resolve_model_path(given, "") : given;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InvalidArgument(path + ": is a directory, not a YAML scene");
  std::ifstream f(path);
  if (!f) throw InvalidArgument(path + ": cannot open file");
  std::stringstream ss;
  ss << f.rdbuf();
  if (is_xml(ss.str())) {  // an MJCF / URDF file: the scene {scene: <stem>, model: {mjcf: <file>}}
    YAML::Node root;
    root["scene"] = imported_scene_name(path);
    root["model"]["mjcf"] = std::filesystem::path(path).filename().string();
    return parse(root, CfgContext{path, nullptr}, overrides);
  }
  return load_scene_text(ss.str(), path, overrides);
}

}  // namespace bigstep
