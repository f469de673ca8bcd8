// YAML -> Scene with strict key checking (design.md "configs/"). Each error names the file,
// the full key path and the offending value.
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/error.h"
#include "envs/scene.h"
#include "solvers/ne_lcp.h"
#include "solvers/ne_mdp.h"
#include "solvers/nmdp_step.h"
#include "solvers/registry.h"

namespace bigstep {

int Scene::steps() const { return int(std::lround(duration / settings.dt)); }

namespace {

std::string show(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return "(empty)";
  // flow style on a clone: a node parsed in block style keeps it, and messages must be one line
  YAML::Node c = YAML::Clone(n);
  c.SetStyle(YAML::EmitterStyle::Flow);
  YAML::Emitter e;
  e << YAML::Flow << c;
  return e.c_str();
}

// A YAML map with its key path; records which keys were read so leftovers are reported.
class Cfg {
 public:
  Cfg(const YAML::Node& n, std::string path, const std::string& file)
      : n_(n), path_(std::move(path)), file_(file) {
    if (n_.IsDefined() && !n_.IsNull() && !n_.IsMap()) fail(path_, show(n_), "expected a mapping");
  }
  template <class V>
  [[noreturn]] void fail(const std::string& key, const V& value, const std::string& why) const {
    throw InvalidArgument(detail::concat(file_, ": ", key.empty() ? "(top level)" : key, " = ", value, ": ", why));
  }
  std::string key(const std::string& k) const { return path_.empty() ? k : path_ + "." + k; }
  bool has(const std::string& k) const { return n_.IsMap() && n_[k].IsDefined() && !n_[k].IsNull(); }
  YAML::Node raw(const std::string& k) {
    used_.insert(k);
    return n_.IsMap() ? n_[k] : YAML::Node();
  }
  Cfg child(const std::string& k) { return Cfg(raw(k), key(k), file_); }

  double num(const std::string& k, double def, bool required = false) {
    if (!has(k)) {
      if (required) fail(key(k), "(missing)", "required number");
      used_.insert(k);
      return def;
    }
    return as_num(raw(k), key(k));
  }
  double as_num(const YAML::Node& v, const std::string& kp) const {
    double x;
    try {
      if (!v.IsScalar()) throw YAML::Exception(YAML::Mark(), "");
      x = v.as<double>();
    } catch (const YAML::Exception&) {
      fail(kp, show(v), "expected a number");
    }
    if (!std::isfinite(x)) fail(kp, show(v), "must be finite");
    return x;
  }
  int integer(const std::string& k, int def) {
    const double x = num(k, def);
    if (x != std::floor(x) || std::abs(x) > 2147483647.0) fail(key(k), show(raw(k)), "expected an integer (|n| < 2^31)");
    return int(x);
  }
  bool flag(const std::string& k, bool def) {
    if (!has(k)) { used_.insert(k); return def; }
    const YAML::Node v = raw(k);
    try { return v.as<bool>(); } catch (const YAML::Exception&) { fail(key(k), show(v), "expected true or false"); }
  }
  std::string str(const std::string& k, const std::string& def, bool required = false) {
    if (!has(k)) {
      if (required) fail(key(k), "(missing)", "required");
      used_.insert(k);
      return def;
    }
    const YAML::Node v = raw(k);
    if (!v.IsScalar()) fail(key(k), show(v), "expected a string");
    return v.as<std::string>();
  }
  std::string choice(const std::string& k, const std::string& def, const std::vector<std::string>& ok) {
    const std::string s = str(k, def);
    for (const auto& o : ok) if (s == o) return s;
    std::string list;
    for (const auto& o : ok) list += (list.empty() ? "" : ", ") + o;
    fail(key(k), s, "expected one of: " + list);
  }
  VecX vec(const std::string& k, int n, const VecX& def) {
    if (!has(k)) { used_.insert(k); return def; }
    return as_vec(raw(k), key(k), n);
  }
  VecX as_vec(const YAML::Node& v, const std::string& kp, int n) const {
    if (!v.IsSequence()) fail(kp, show(v), detail::concat("expected a list of ", n, " numbers"));
    if (n >= 0 && int(v.size()) != n) fail(kp, show(v), detail::concat("expected ", n, " numbers, got ", v.size()));
    VecX x(v.size());
    for (size_t i = 0; i < v.size(); ++i) x[i] = as_num(v[i], detail::concat(kp, "[", i, "]"));
    return x;
  }
  Vec3 v3(const std::string& k, const Vec3& def) { return vec(k, 3, def); }
  // Every key of the map must have been read.
  void finish() const {
    if (!n_.IsMap()) return;
    for (const auto& kv : n_) {
      const std::string k = kv.first.as<std::string>();
      if (!used_.count(k)) fail(key(k), show(kv.second), "unknown key");
    }
  }
  const YAML::Node& node() const { return n_; }
  const std::string& file() const { return file_; }

 private:
  YAML::Node n_;
  std::string path_, file_;
  std::set<std::string> used_;
};

Mat3 rpy_matrix(const Vec3& rpy) {
  return (Eigen::AngleAxisd(rpy.z(), Vec3::UnitZ()) * Eigen::AngleAxisd(rpy.y(), Vec3::UnitY()) *
          Eigen::AngleAxisd(rpy.x(), Vec3::UnitX())).toRotationMatrix();
}

JointType parse_joint(Cfg& c) {
  static const std::map<std::string, JointType> m = {
      {"fixed", JointType::Fixed}, {"hinge", JointType::Hinge}, {"prismatic", JointType::Prismatic},
      {"ball", JointType::Ball}, {"floating", JointType::Floating}, {"planar", JointType::Planar}};
  return m.at(c.choice("joint", "fixed", {"fixed", "hinge", "prismatic", "ball", "floating", "planar"}));
}

// Inertia given as [ixx, iyy, izz] or [ixx, iyy, izz, ixy, ixz, iyz].
Mat3 parse_inertia(Cfg& c, const std::string& k) {
  const YAML::Node v = c.raw(k);
  if (!v.IsSequence() || (v.size() != 3 && v.size() != 6))
    c.fail(c.key(k), show(v), "expected [ixx, iyy, izz] or [ixx, iyy, izz, ixy, ixz, iyz]");
  const VecX x = c.as_vec(v, c.key(k), int(v.size()));
  Mat3 I = Mat3::Zero();
  I.diagonal() = x.head<3>();
  if (x.size() == 6) {
    I(0, 1) = I(1, 0) = x[3];
    I(0, 2) = I(2, 0) = x[4];
    I(1, 2) = I(2, 1) = x[5];
  }
  return I;
}

void parse_links(Cfg& model, ModelSpec& spec) {
  const YAML::Node links = model.raw("links");
  if (!links.IsSequence() || links.size() == 0)
    model.fail(model.key("links"), show(links), "expected a non-empty list of links");
  std::map<std::string, int> index;
  for (size_t i = 0; i < links.size(); ++i) {
    Cfg c(links[i], detail::concat(model.key("links"), "[", i, "]"), model.file());
    LinkSpec l;
    l.name = c.str("name", "", true);
    if (index.count(l.name)) c.fail(c.key("name"), l.name, "duplicate link name");
    const std::string parent = c.str("parent", "world");
    if (parent == "world") {
      l.parent = -1;
    } else if (index.count(parent)) {
      l.parent = index[parent];
    } else {
      c.fail(c.key("parent"), parent, "no earlier link has this name (links are parent-before-child)");
    }
    l.joint = parse_joint(c);
    if (l.joint == JointType::Hinge || l.joint == JointType::Prismatic) {
      if (!c.has("axis")) c.fail(c.key("axis"), "(missing)", "hinge and prismatic joints need an axis");
      l.axis = c.v3("axis", Vec3::UnitZ());
    }
    l.t_o = c.v3("pos", Vec3::Zero());
    l.R_o = rpy_matrix(c.v3("rpy", Vec3::Zero()));
    if (c.has("box")) {
      // a solid box: mass, COM and inertia from its size; optional corner contact points
      Cfg b = c.child("box");
      const Vec3 size = b.v3("size", Vec3::Zero());
      if (!(size.minCoeff() > 0)) b.fail(b.key("size"), show(b.node()["size"]), "box sides must be > 0");
      const double vol = size.prod();
      if (b.has("mass") == b.has("density")) b.fail(b.key("mass"), show(b.node()), "give exactly one of mass or density");
      l.mass = b.has("mass") ? b.num("mass", 0) : b.num("density", 0) * vol;
      b.num(b.has("mass") ? "density" : "mass", 0);  // mark the absent one as read
      if (!(l.mass > 0)) b.fail(b.key("mass"), l.mass, "box mass must be > 0");
      l.com = b.v3("centre", Vec3::Zero());
      const Vec3 s2 = size.cwiseProduct(size);
      l.inertia = (l.mass / 12.0 * Vec3(s2.y() + s2.z(), s2.x() + s2.z(), s2.x() + s2.y())).asDiagonal();
      // contact points on the box surface: corners (grid 1) or an s x s lattice on every face
      const bool corners = b.flag("corners", false);
      const int grid = b.integer("contact_grid", corners ? 1 : 0);
      if (grid < 0 || grid > 16) b.fail(b.key("contact_grid"), grid, "must be in [0, 16]");
      for (int a = 0; a <= grid && grid > 0; ++a)
        for (int c = 0; c <= grid; ++c)
          for (int e = 0; e <= grid; ++e) {
            const bool surface = a == 0 || a == grid || c == 0 || c == grid || e == 0 || e == grid;
            if (!surface) continue;
            const Vec3 f(double(a) / grid - 0.5, double(c) / grid - 0.5, double(e) / grid - 0.5);
            spec.spheres.push_back({int(i), l.com + size.cwiseProduct(f), 0.0});
          }
      b.finish();
      for (const char* k : {"mass", "com", "inertia"})
        if (c.has(k)) c.fail(c.key(k), show(c.node()[k]), "give either box or mass/com/inertia");
    } else {
      l.mass = c.num("mass", 0, true);
      l.com = c.v3("com", Vec3::Zero());
      if (c.has("inertia")) l.inertia = parse_inertia(c, "inertia");
      else c.raw("inertia");
    }
    c.finish();
    index[l.name] = int(i);
    spec.links.push_back(l);
  }
  // contacts reference links by name
  const YAML::Node contacts = model.raw("contacts");
  if (contacts.IsDefined() && !contacts.IsNull()) {
    if (!contacts.IsSequence()) model.fail(model.key("contacts"), show(contacts), "expected a list");
    for (size_t i = 0; i < contacts.size(); ++i) {
      Cfg c(contacts[i], detail::concat(model.key("contacts"), "[", i, "]"), model.file());
      const std::string link = c.str("link", "", true);
      if (!index.count(link)) c.fail(c.key("link"), link, "no such link");
      const double r = c.num("radius", 0);
      if (r < 0) c.fail(c.key("radius"), r, "must be >= 0");
      const YAML::Node pts = c.raw("points");
      if (!pts.IsSequence() || pts.size() == 0) c.fail(c.key("points"), show(pts), "expected a list of [x, y, z]");
      for (size_t p = 0; p < pts.size(); ++p)
        spec.spheres.push_back({index[link], c.as_vec(pts[p], detail::concat(c.key("points"), "[", p, "]"), 3), r});
      c.finish();
    }
  }
}

void parse_terrain(Cfg& model, ModelSpec& spec) {
  const YAML::Node t = model.raw("terrain");
  if (!t.IsDefined() || t.IsNull()) return;
  if (!t.IsSequence()) model.fail(model.key("terrain"), show(t), "expected a list of planes");
  for (size_t i = 0; i < t.size(); ++i) {
    Cfg c(t[i], detail::concat(model.key("terrain"), "[", i, "]"), model.file());
    Plane p;
    if (c.has("slope_deg")) {
      // a slope descending along +x through `point`: n = (sin s, 0, cos s)
      const double s = c.num("slope_deg", 0) * M_PI / 180;
      if (!(std::abs(s) < M_PI / 2)) c.fail(c.key("slope_deg"), s * 180 / M_PI, "must be in (-90, 90)");
      p.normal = Vec3(std::sin(s), 0, std::cos(s));
      p.offset = p.normal.dot(c.v3("point", Vec3::Zero()));
    } else {
      p.normal = c.v3("normal", Vec3::UnitZ());
      if (!(p.normal.norm() > 0)) c.fail(c.key("normal"), show(c.node()["normal"]), "must be non-zero");
      p.normal.normalize();
      p.offset = c.num("offset", 0);
    }
    c.finish();
    spec.planes.push_back(p);
  }
}

// Applies one "a.b.c=value" override onto the document, creating maps as needed.
void apply_override(YAML::Node& root, const std::string& ov, const std::string& file) {
  const size_t eq = ov.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InvalidArgument(detail::concat(file, ": --set ", ov, ": expected key.path=value"));
  const std::string key = ov.substr(0, eq), text = ov.substr(eq + 1);
  YAML::Node value;
  try {
    value = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InvalidArgument(detail::concat(file, ": --set ", key, " = ", text, ": not a YAML value (", e.msg, ")"));
  }
  std::vector<std::string> parts;
  std::stringstream ss(key);
  for (std::string p; std::getline(ss, p, '.');) parts.push_back(p);
  std::vector<YAML::Node> chain{root};
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node cur = chain.back();
    const std::string& p = parts[i];
    if (cur.IsSequence()) {
      char* end;
      const long idx = std::strtol(p.c_str(), &end, 10);
      if (*end || idx < 0 || size_t(idx) >= cur.size())
        throw InvalidArgument(detail::concat(file, ": --set ", key, " = ", text, ": '", p, "' is not an index of that list"));
      chain.push_back(cur[size_t(idx)]);
    } else {
      if (cur.IsDefined() && !cur.IsNull() && !cur.IsMap())
        throw InvalidArgument(detail::concat(file, ": --set ", key, " = ", text, ": '", p, "' is not a mapping"));
      if (!cur[p].IsDefined() || cur[p].IsNull()) cur[p] = YAML::Node(YAML::NodeType::Map);
      chain.push_back(cur[p]);
    }
  }
  YAML::Node last = chain.back();
  if (last.IsSequence()) {
    char* end;
    const long idx = std::strtol(parts.back().c_str(), &end, 10);
    if (*end || idx < 0 || size_t(idx) >= last.size())
      throw InvalidArgument(detail::concat(file, ": --set ", key, " = ", text, ": '", parts.back(), "' is not an index of that list"));
    last[size_t(idx)] = value;
  } else {
    if (last.IsDefined() && !last.IsNull() && !last.IsMap())
      throw InvalidArgument(detail::concat(file, ": --set ", key, " = ", text, ": '",
                                           parts.size() > 1 ? parts[parts.size() - 2] : std::string("(top level)"),
                                           "' is not a mapping"));
    last[parts.back()] = value;
  }
}

// control.pd.{kp, kd}: one number for every actuated DOF or a list of n_q; floating / planar base
// DOFs are unactuated and always get 0. control.reference: the servo's targets (nmdp.md §9-§10).
void parse_pd(Cfg& ctrl, Scene& sc) {
  const Model& m = sc.model;
  const int n = m.n_q;
  std::vector<bool> actuated(n, true);
  for (int k = 0; k < n; ++k) {
    const JointType jt = m.links[m.dof_link[k]].joint;
    actuated[k] = jt != JointType::Floating && jt != JointType::Planar;
  }
  const bool has_pd = ctrl.has("pd"), has_ref = ctrl.has("reference");
  Cfg pd = ctrl.child("pd");
  Cfg ref = ctrl.child("reference");
  if (!has_pd) {
    if (has_ref) ctrl.fail(ctrl.key("reference"), show(ref.node()), "needs control.pd (kp, kd)");
    return;
  }
  auto gains = [&](const char* k) {
    if (!pd.has(k)) pd.fail(pd.key(k), "(missing)", "required: one number for every actuated DOF or a list of n_q");
    const YAML::Node v = pd.raw(k);
    VecX g = VecX::Zero(n);
    if (v.IsSequence()) {
      g = pd.as_vec(v, pd.key(k), n);
      for (int i = 0; i < n; ++i)
        if (!actuated[i] && g[i] != 0)
          pd.fail(detail::concat(pd.key(k), "[", i, "]"), g[i],
                  "must be 0: " + m.dof_name[i] + " is a floating-base DOF (unactuated)");
    } else {
      const double x = pd.as_num(v, pd.key(k));
      for (int i = 0; i < n; ++i) if (actuated[i]) g[i] = x;
    }
    for (int i = 0; i < n; ++i)
      if (g[i] < 0) pd.fail(v.IsSequence() ? detail::concat(pd.key(k), "[", i, "]") : pd.key(k), g[i], "must be >= 0");
    return g;
  };
  sc.pd.kp = gains("kp");
  sc.pd.kd = gains("kd");
  pd.finish();

  ReferenceSpec& rs = sc.reference;
  const std::string type = ref.choice("type", "hold", {"hold", "jump", "walk"});
  rs.kind = type == "jump" ? ReferenceKind::Jump : type == "walk" ? ReferenceKind::Walk : ReferenceKind::Hold;
  rs.stand = ref.vec("stand", n, sc.theta0);
  // a DOF by its name ("fl_knee.angle") or by the name of a link with a one-DOF joint ("fl_knee")
  auto dof_index = [&](Cfg& c, const std::string& k) -> int {
    const std::string name = c.str(k, "", true);
    for (int i = 0; i < n; ++i) if (m.dof_name[i] == name) return i;
    for (int j = 0; j < m.n_link; ++j)
      if (m.links[j].name == name && m.link_dof_num[j] == 1) return m.link_dof_adr[j];
    c.fail(c.key(k), name, "no such DOF (give '<link>.angle' or the name of a one-DOF link)");
  };
  // {abduction: x, hip: x, knee: x, ankle: x}, each optional (0)
  auto offsets = [&](Cfg& parent, const char* k) {
    std::array<double, kLegRoles> o{};
    Cfg c = parent.child(k);
    for (int r = 0; r < kLegRoles; ++r) o[r] = c.num(leg_role_name(r), 0);
    c.finish();
    return o;
  };
  // legs, jump.* and walk.* are read (and checked) whatever the type, so one config can carry
  // both motions and --set control.reference.type=... switches between them
  const YAML::Node legs = ref.raw("legs");
  if (legs.IsDefined() && !legs.IsNull()) {
    if (!legs.IsSequence())
      ref.fail(ref.key("legs"), show(legs), "expected a list of {abduction, hip, knee, ankle, phase, sweep_sign}");
    for (size_t l = 0; l < legs.size(); ++l) {
      Cfg c(legs[l], detail::concat(ref.key("legs"), "[", l, "]"), ref.file());
      LegJoints lj;
      for (int r = 0; r < kLegRoles; ++r)
        if (c.has(leg_role_name(r)) || r == kHip) lj.dof[r] = dof_index(c, leg_role_name(r));
        else c.raw(leg_role_name(r));
      lj.phase = c.num("phase", 0);
      lj.sweep_sign = c.num("sweep_sign", 1);
      c.finish();
      rs.legs.push_back(lj);
    }
  }
  ReferenceSpec jump_spec = rs, walk_spec = rs;
  {
    Cfg j = ref.child("jump");
    jump_spec.period = j.num("period", 2.0);
    jump_spec.ramp = j.num("ramp", 0.0);
    jump_spec.crouch_time = j.num("crouch_time", rs.crouch_time);
    jump_spec.extension_time = j.num("extension_time", rs.extension_time);
    jump_spec.flight_time = j.num("flight_time", rs.flight_time);
    jump_spec.landing_time = j.num("landing_time", rs.landing_time);
    jump_spec.crouch = offsets(j, "crouch");
    jump_spec.extension = offsets(j, "extension");
    jump_spec.flight = offsets(j, "flight");
    j.finish();
    Cfg w = ref.child("walk");
    walk_spec.period = w.num("period", 0.6);
    walk_spec.ramp = w.num("ramp", 0.3);
    walk_spec.stride = w.num("stride", rs.stride);
    walk_spec.leg_length = w.num("leg_length", rs.leg_length);
    walk_spec.duty = w.num("duty", rs.duty);
    walk_spec.lift = offsets(w, "lift");
    w.finish();
  }
  jump_spec.kind = ReferenceKind::Jump;
  walk_spec.kind = ReferenceKind::Walk;
  if (rs.kind == ReferenceKind::Jump) rs = jump_spec;
  if (rs.kind == ReferenceKind::Walk) rs = walk_spec;
  ref.finish();
  try {
    // both motions are checked when legs are given, the active one is the servo's reference
    if (!rs.legs.empty()) {
      ReferenceMotion check_jump(jump_spec), check_walk(walk_spec);
    }
    sc.pd.reference = ReferenceMotion(rs);
    validate_pd_servo(sc.pd, n, "control.pd");
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(ctrl.file() + ": " + e.what());
  }
}

Scene parse(YAML::Node root, const std::string& file, const std::vector<std::string>& overrides) {
  if (!root.IsMap()) throw InvalidArgument(file + ": (top level) = " + show(root) + ": expected a mapping");
  for (const auto& ov : overrides) apply_override(root, ov, file);
  Cfg top(root, "", file);
  Scene sc;
  sc.source = file;
  sc.name = top.str("scene", "", true);
  top.str("description", "");

  Cfg model = top.child("model");
  if (!top.has("model")) top.fail("model", "(missing)", "required");
  ModelSpec spec;
  spec.gravity = model.v3("gravity", Vec3(0, 0, -9.81));
  parse_links(model, spec);
  parse_terrain(model, spec);
  model.finish();
  try {
    sc.model = Model::finalize(spec);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(file + ": model." + e.what());
  }
  const int n = sc.model.n_q;

  Cfg init = top.child("initial");
  sc.theta0 = init.vec("theta", n, VecX::Zero(n));
  sc.theta_dot0 = init.vec("theta_dot", n, VecX::Zero(n));
  init.finish();
  Cfg ctrl = top.child("control");
  sc.tau = ctrl.vec("tau", n, VecX::Zero(n));
  parse_pd(ctrl, sc);
  ctrl.finish();

  Cfg integ = top.child("integrator");
  PbdSettings& s = sc.settings;
  sc.integrator = integ.choice("type", "pbfd", {"pbd", "pbfd", "ne_lcp", "ne_mdp", "nmdp_ne", "nmdp_pbd"});
  s.formulation = sc.integrator == "pbd" ? Formulation::Pbd : Formulation::Pbfd;
  const std::string opt = integ.choice("optimizer", "jtj_lm", {"lm", "jtj_lm", "lbfgs"});
  s.optimizer = opt == "lm" ? Optimizer::Lm : opt == "lbfgs" ? Optimizer::Lbfgs : Optimizer::JtjLm;
  s.dt = integ.num("dt", 0.01);
  if (!(s.dt > 0)) integ.fail(integ.key("dt"), s.dt, "must be > 0");
  sc.duration = integ.num("duration", 1.0);
  if (!(sc.duration > 0)) integ.fail(integ.key("duration"), sc.duration, "must be > 0");
  s.eps_r = integ.num("eps_r", s.eps_r);
  s.eps_x = integ.num("eps_x", s.eps_x);
  s.it_max = integ.integer("it_max", s.it_max);
  s.lbfgs_it_max = integ.integer("lbfgs_it_max", s.lbfgs_it_max);
  if (s.lbfgs_it_max <= 0) integ.fail(integ.key("lbfgs_it_max"), s.lbfgs_it_max, "must be > 0");
  s.restart = integ.flag("restart", true);
  // NMDP (nmdp.md §7): PGM variant, acceleration denominator (§3, B2), gamma carried between calls
  NmdpSettings& nm = sc.nmdp;
  nm.form = sc.integrator == "nmdp_pbd" ? NmdpForm::Pbd : NmdpForm::Ne;
  nm.pgm.mode = integ.choice("pgm", "fo", {"fo", "zo"}) == "zo" ? PgmMode::Zo : PgmMode::Fo;
  nm.accel = integ.choice("accel_denominator", "recommended", {"recommended", "literal"}) == "literal"
                 ? AccelDenominator::Literal : AccelDenominator::Recommended;
  nm.carry_gamma = integ.flag("carry_gamma", false);
  integ.finish();

  Cfg contact = top.child("contact");
  ContactParams& cp = s.contact;
  cp.c_perp = contact.num("c_perp", cp.c_perp);
  cp.c_par = contact.num("c_par", cp.c_par);
  cp.mu = contact.num("mu", cp.mu);
  cp.alpha = contact.num("alpha", cp.alpha);
  cp.beta = contact.num("beta", cp.beta);
  cp.gamma = contact.num("gamma", cp.gamma);
  NeSettings& ne = sc.ne;
  ne.dt = s.dt;
  ne.mu = cp.mu;
  ne.friction_directions = contact.integer("friction_directions", ne.friction_directions);
  ne.active_distance = contact.num("active_distance", ne.active_distance);
  ne.cfm = contact.num("cfm", ne.cfm);
  ne.k_c = contact.num("k_c", ne.k_c);
  ne.d_ref = contact.num("d_ref", ne.d_ref);
  ne.zeta = contact.num("zeta", ne.zeta);
  ne.mdp_effective_metric = contact.choice("mdp_metric", "effective", {"effective", "kinetic"}) == "effective";
  nm.depth_exponent = contact.integer("depth_exponent", nm.depth_exponent);
  contact.finish();
  nm.contact = ne;
  try {
    if (sc.integrator == "pbd" || sc.integrator == "pbfd") {
      validate_pbd_settings(s);
    } else if (sc.integrator.rfind("nmdp_", 0) == 0) {
      validate_nmdp_settings(nm);
    } else {
      validate_ne_settings(ne);
    }
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(file + ": " + e.what());
  }

  Cfg met = top.child("metrics");
  const std::string mtype = met.choice("type", "com", {"com", "sliding", "quadruped"});
  sc.metric = mtype == "sliding" ? MetricKind::Sliding : mtype == "quadruped" ? MetricKind::Quadruped : MetricKind::Com;
  sc.heading = met.v3("heading", Vec3::UnitX());
  if (!(std::abs(sc.heading.z()) < 1e-12 && sc.heading.norm() > 0))
    met.fail(met.key("heading"), show(met.node()["heading"]), "must be a non-zero horizontal vector [x, y, 0]");
  sc.heading.normalize();
  sc.stop_at_rest = met.flag("stop_at_rest", false);
  sc.rest_speed = met.num("rest_speed", sc.rest_speed);
  sc.rest_time = met.num("rest_time", sc.rest_time);
  if (!(sc.rest_speed > 0)) met.fail(met.key("rest_speed"), sc.rest_speed, "must be > 0");
  if (!(sc.rest_time > 0)) met.fail(met.key("rest_time"), sc.rest_time, "must be > 0");
  const std::string ml = met.str("link", sc.model.links[0].name);
  sc.metric_link = -1;
  for (int j = 0; j < sc.model.n_link; ++j) if (sc.model.links[j].name == ml) sc.metric_link = j;
  if (sc.metric_link < 0) met.fail(met.key("link"), ml, "no such link");
  met.finish();
  Cfg batch = top.child("batch");
  sc.rollouts = batch.integer("rollouts", 1);
  if (sc.rollouts < 1) batch.fail(batch.key("rollouts"), sc.rollouts, "must be >= 1");
  const double seed = batch.num("seed", 0);
  if (seed < 0 || seed != std::floor(seed)) batch.fail(batch.key("seed"), seed, "must be a non-negative integer");
  sc.seed = uint64_t(seed);
  sc.threads = batch.integer("threads", 0);
  if (sc.threads < 0) batch.fail(batch.key("threads"), sc.threads, "must be >= 0 (0 = all cores)");
  sc.perturb_theta = batch.num("perturb_theta", sc.perturb_theta);
  sc.perturb_theta_dot = batch.num("perturb_theta_dot", sc.perturb_theta_dot);
  sc.randomize_friction = batch.num("randomize_friction", 0);
  sc.randomize_stiffness = batch.num("randomize_stiffness", 0);
  sc.randomize_mass = batch.num("randomize_mass", 0);
  for (const char* k : {"perturb_theta", "perturb_theta_dot", "randomize_friction", "randomize_stiffness", "randomize_mass"})
    if (batch.num(k, 0) < 0) batch.fail(batch.key(k), batch.num(k, 0), "must be >= 0");
  sc.backend = batch.choice("backend", "cpu", {"cpu", "cuda", "auto"});
  sc.engine = batch.choice("engine", "reference", {"reference", "team"});
  sc.precision = batch.choice("precision", "fp64", {"fp64", "fp32"});
  sc.schedule = batch.choice("schedule", "lockstep", {"lockstep", "rollout"});
  sc.fp32_eps_r = batch.num("fp32_eps_r", sc.fp32_eps_r);
  sc.fp32_eps_x = batch.num("fp32_eps_x", sc.fp32_eps_x);
  if (!(sc.fp32_eps_r > 0)) batch.fail(batch.key("fp32_eps_r"), sc.fp32_eps_r, "must be > 0");
  if (!(sc.fp32_eps_x > 0)) batch.fail(batch.key("fp32_eps_x"), sc.fp32_eps_x, "must be > 0");
  batch.finish();
  top.finish();
  return sc;
}

}  // namespace

std::unique_ptr<Integrator> make_integrator(const Scene& sc) {
  return find_solver(sc.integrator).make(sc.model, {sc.settings, sc.ne, sc.nmdp});
}

Scene load_scene_text(const std::string& yaml, const std::string& source,
                      const std::vector<std::string>& overrides) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    throw InvalidArgument(detail::concat(source, ": line ", e.mark.line + 1, ": YAML syntax error: ", e.msg));
  }
  return parse(root, source, overrides);
}

Scene load_scene(const std::string& path, const std::vector<std::string>& overrides) {
  std::ifstream f(path);
  if (!f) throw InvalidArgument(path + ": cannot open file");
  std::stringstream ss;
  ss << f.rdbuf();
  return load_scene_text(ss.str(), path, overrides);
}

std::string scene_keys_help() {
  return R"(Config keys (any of them can be given or overridden with --set key=value):
  scene                     scene name (required)
  model.gravity             [gx, gy, gz] m/s^2 (default [0, 0, -9.81])
  model.links[i].name|parent|joint|axis|pos|rpy|mass|com|inertia|box
                            joint: fixed|hinge|prismatic|ball|floating|planar;
                            box: {size, mass|density, centre, corners, contact_grid}
                            (contact_grid s: an s x s lattice of points on every face)
  model.contacts[i]         {link, points: [[x,y,z]...], radius}
  model.terrain[i]          {normal, offset} or {slope_deg, point}
  initial.theta, initial.theta_dot    initial state (n_q values each)
  control.tau               constant joint torques (n_q values)
  control.pd.kp, control.pd.kd        stable-PD gains (nmdp.md 9): one number for every actuated DOF
                            or a list of n_q; floating-base DOFs always get 0
  control.reference.type    hold | jump | walk   targets of the PD servo (needs control.pd)
  control.reference.stand   pose held / moved around (n_q values, default initial.theta)
  control.reference.legs[i] {abduction, hip, knee, ankle: DOF name ('<link>.angle' or a one-DOF link;
                            hip required), phase (walk, [0, 1)), sweep_sign (walk, +1 if a larger
                            hip angle moves the foot forward)}; offsets are per leg role, on every leg
  control.reference.jump    period 2.0, ramp 0, crouch_time 1.2, extension_time 0.15, flight_time 0.2,
                            landing_time 0.3 [s]; crouch, extension, flight: {abduction, hip, knee,
                            ankle} offsets [rad] from stand (keyframes of a periodic cubic spline)
  control.reference.walk    trot: period 0.6, ramp 0.3 [s] (offsets fade in), stride 0.15 [m],
                            leg_length 0.4 [m] (hip sweep asin(stride/(2 leg_length))), duty 0.5,
                            lift: {abduction, hip, knee, ankle} offsets at mid-swing [rad]
                            (jump and walk are both read whatever the type, so one config can hold both)
  integrator.type           pbd | pbfd | ne_lcp | ne_mdp | nmdp_ne | nmdp_pbd
  integrator.pgm            nmdp_*: fo | zo  first- or zeroth-order PGM (nmdp.md 7; default fo)
  integrator.accel_denominator        nmdp_*: recommended (h) | literal (paper Eq. 2, dt_last)
  integrator.carry_gamma    nmdp_*: start each PGM call with the previous call's gamma (false)
  integrator.optimizer      lm | jtj_lm | lbfgs   (lm is pbd only; pbd/pbfd only)
  integrator.dt, integrator.duration  timestep and simulated time [s]
  integrator.eps_r, eps_x, it_max, lbfgs_it_max, restart   solver tolerances (pbfd.md 5.1)
  contact.c_perp, contact.c_par       normal / tangential force coefficients
  contact.mu                Coulomb coefficient (Newton-Euler baselines)
  contact.friction_directions         linearized cone edges, even (ne_*; 2 for planar models)
  contact.active_distance   ne_lcp: pairs with phi <= this are contacts [m] (1e-3)
  contact.cfm               ne_lcp: compliance on the Delassus diagonal, relative (1e-6)
  contact.k_c, d_ref, zeta  ne_mdp / nmdp_* polytope scale (0 = W/(N_s d_ref^3)), reference depth, ghost cap
  contact.mdp_metric        ne_mdp with control.pd: effective (QP minimizes 1/2 v^T (H + dt K_d) v, the
                            default, MDP-consistent) | kinetic (1/2 v^T H v, nmdp.md 8 literally);
                            nmdp_*: effective adds 1/2 sum (K_p + K_d/h)(theta - theta_-)^2 to K (h^2 A's
                            metric), kinetic keeps K of nmdp.md 5-6
  contact.depth_exponent    nmdp_*: p in v = k_c (d^p + zeta d_ref^3)(n + mu t), 3 (paper) or 4
  contact.alpha, beta, gamma          force exponents (2, 1, 1)
  metrics.type              com | sliding | quadruped;  metrics.link, stop_at_rest, rest_speed, rest_time
  metrics.heading           quadruped: horizontal direction of travel [x, y, 0] (default [1, 0, 0]);
                            metrics.link is the torso (tilt, COM height, distance; quadruped.csv)
  batch.rollouts, seed, threads       K rollouts on the CPU batched backend (also --rollouts/--seed/--threads)
  batch.perturb_theta, perturb_theta_dot   std. dev. of the seeded initial-state perturbation (0.01)
  batch.randomize_friction  per-rollout c_par and mu scaled by exp(U(-r, r)) (0 = off)
  batch.randomize_stiffness per-rollout c_perp scaled by exp(U(-r, r)) (0 = off)
  batch.randomize_mass      per-rollout link masses and inertias scaled by exp(U(-r, r)) (0 = off)
  batch.backend             cpu | cuda | auto (cpu; --backend overrides): cuda runs the team engine on the GPU
  batch.engine              reference | team (reference): team = the CUDA kernel's cooperative PBFD JTJ-LM
                            iteration emulated on the CPU (pbfd + jtj_lm, control.tau and control.pd,
                            per-rollout randomisation)
  batch.precision           fp64 | fp32 (fp64): fp32 runs the team engine in single precision (CPU
                            emulation or CUDA) with batch.fp32_eps_r / fp32_eps_x (1e-4 / 1e-6, spec
                            pbfd.md §6: FP32 cannot reach the FP64 tolerances)
  batch.schedule            lockstep | rollout (lockstep): team engine scheduling (pbfd.md §6); rollout =
                            free-running, a converged rollout starts its next step while others iterate
                            (all steps in one go; not with control.pd, whose targets are set per step)
)";
}

}  // namespace bigstep
