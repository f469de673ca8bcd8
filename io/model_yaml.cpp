// YAML `model:` -> ModelSpec (io/model_yaml.h).
#include "io/model_yaml.h"

#include <cmath>
#include <map>

namespace bigstep {

namespace {

Mat3 rpy_matrix(const Vec3& rpy) {
  return (Eigen::AngleAxisd(rpy.z(), Vec3::UnitZ()) * Eigen::AngleAxisd(rpy.y(), Vec3::UnitY()) *
          Eigen::AngleAxisd(rpy.x(), Vec3::UnitX())).toRotationMatrix();
}

JointType parse_joint(Cfg& c) {
  static const std::map<std::string, JointType> m = {
      {"fixed", JointType::Fixed}, {"hinge", JointType::Hinge}, {"prismatic", JointType::Prismatic},
      {"ball", JointType::Ball}, {"floating", JointType::Floating}, {"planar", JointType::Planar}};
  return m.at(c.choice("joint"));
}

// Inertia given as [ixx, iyy, izz] or [ixx, iyy, izz, ixy, ixz, iyz].
Mat3 parse_inertia(Cfg& c, const std::string& k) {
  const YAML::Node v = c.raw(k);
  Mat3 I = Mat3::Zero();
  if (!v.IsDefined() || v.IsNull()) return I;
  if (!v.IsSequence() || (v.size() != 3 && v.size() != 6))
    c.fail_text(c.key(k), show(v), "expected [ixx, iyy, izz] or [ixx, iyy, izz, ixy, ixz, iyz]");
  const VecX x = c.as_vec(v, c.key(k), int(v.size()));
  I.diagonal() = x.head<3>();
  if (x.size() == 6) {
    I(0, 1) = I(1, 0) = x[3];
    I(0, 2) = I(2, 0) = x[4];
    I(1, 2) = I(2, 1) = x[5];
  }
  return I;
}

// A solid box: mass, COM and inertia from its size; optional contact points on its surface.
void parse_box(Cfg& c, int link, LinkSpec& l, ModelSpec& spec) {
  Cfg b = c.child("box");
  const Vec3 size = b.v3("size");
  if (!(size.minCoeff() > 0)) b.fail_text(b.key("size"), show(b.node()["size"]), "box sides must be > 0");
  const double vol = size.prod();
  if (b.has("mass") == b.has("density")) b.fail_text(b.key("mass"), show(b.node()), "give exactly one of mass or density");
  const double mass = b.num("mass", 0.0), density = b.num("density", 0.0);
  l.mass = b.has("mass") ? mass : density * vol;
  if (!(l.mass > 0)) b.fail(b.key("mass"), l.mass, "box mass must be > 0");
  l.com = b.v3("centre");
  const Vec3 s2 = size.cwiseProduct(size);
  l.inertia = (l.mass / 12.0 * Vec3(s2.y() + s2.z(), s2.x() + s2.z(), s2.x() + s2.y())).asDiagonal();
  // contact points on the box surface: corners (grid 1) or an s x s lattice on every face
  const bool corners = b.flag("corners");
  const int grid = b.integer("contact_grid", corners ? 1 : 0);
  if (grid < 0 || grid > 16) b.fail(b.key("contact_grid"), grid, "must be in [0, 16]");
  for (int a = 0; a <= grid && grid > 0; ++a)
    for (int d = 0; d <= grid; ++d)
      for (int e = 0; e <= grid; ++e) {
        const bool surface = a == 0 || a == grid || d == 0 || d == grid || e == 0 || e == grid;
        if (!surface) continue;
        const Vec3 f(double(a) / grid - 0.5, double(d) / grid - 0.5, double(e) / grid - 0.5);
        spec.spheres.push_back({link, l.com + size.cwiseProduct(f), 0.0});
      }
  b.finish();
  for (const char* k : {"mass", "com", "inertia"})
    if (c.has(k)) c.fail_text(c.key(k), show(c.node()[k]), "give either box or mass/com/inertia");
}

void parse_links(Cfg& model, ModelSpec& spec, std::map<std::string, int>& index) {
  const YAML::Node links = model.raw("links");
  if (!links.IsSequence() || links.size() == 0)
    model.fail_text(model.key("links"), show(links), "expected a non-empty list of links");
  for (size_t i = 0; i < links.size(); ++i) {
    Cfg c = model.item("links", links, i);
    LinkSpec l;
    l.name = c.str("name");
    if (index.count(l.name)) c.fail(c.key("name"), l.name, "duplicate link name");
    const std::string parent = c.str("parent");
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
      l.axis = c.v3("axis");
    }
    l.t_o = c.v3("pos");
    l.R_o = rpy_matrix(c.v3("rpy"));
    // joint limits, damping, armature, spring (validated with the model: core/model.cpp)
    if (c.has("range")) {
      const VecX r = c.as_vec(c.raw("range"), c.key("range"), 2);
      l.limited = true;
      l.range[0] = r[0];
      l.range[1] = r[1];
      if (!(r[0] < r[1])) c.fail_text(c.key("range"), show(c.node()["range"]), "expected [lo, hi] with lo < hi");
    }
    l.limit_stiffness = c.num("limit_stiffness");
    l.damping = c.num("damping");
    l.armature = c.num("armature");
    l.stiffness = c.num("stiffness");
    l.springref = c.num("springref");
    if (c.has("box")) {
      parse_box(c, int(i), l, spec);
    } else {
      c.raw("box");
      l.mass = c.num("mass");
      l.com = c.v3("com");
      l.inertia = parse_inertia(c, "inertia");
    }
    c.finish();
    index[l.name] = int(i);
    spec.links.push_back(l);
  }
}

// An optional list under key k of `model`: an empty node when absent or null, else the list
// (anything but a list is an error naming k with `expected`).
YAML::Node optional_list(Cfg& model, const std::string& k, const char* expected) {
  const YAML::Node list = model.raw(k);
  if (!list.IsDefined() || list.IsNull()) return YAML::Node(YAML::NodeType::Sequence);
  if (!list.IsSequence()) model.fail_text(model.key(k), show(list), expected);
  return list;
}

// contacts reference links by name
void parse_contacts(Cfg& model, ModelSpec& spec, const std::map<std::string, int>& index) {
  const YAML::Node contacts = optional_list(model, "contacts", "expected a list");
  for (size_t i = 0; i < contacts.size(); ++i) {
    Cfg c = model.item("contacts", contacts, i);
    const std::string link = c.str("link");
    if (!index.count(link)) c.fail(c.key("link"), link, "no such link");
    const double r = c.num("radius");
    if (r < 0) c.fail(c.key("radius"), r, "must be >= 0");
    const YAML::Node pts = c.raw("points");
    if (!pts.IsSequence() || pts.size() == 0) c.fail_text(c.key("points"), show(pts), "expected a list of [x, y, z]");
    for (size_t p = 0; p < pts.size(); ++p)
      spec.spheres.push_back({index.at(link), c.as_vec(pts[p], detail::concat(c.key("points"), "[", p, "]"), 3), r});
    c.finish();
  }
}

// terrain[i].height_map: a seeded random height field (core/height_field.h) as a world geom
void parse_height_map(Cfg& c, size_t i, ModelSpec& spec) {
  Cfg h = c.child("height_map");
  // a pair [a, b] of key k: both finite and > 0
  auto pair = [&](const char* k) {
    if (!h.has(k)) h.fail(h.key(k), "(missing)", "expected [x, y]");
    const VecX v = h.as_vec(h.raw(k), h.key(k), 2);
    if (!(v.allFinite() && v.minCoeff() > 0)) h.fail_text(h.key(k), show(h.node()[k]), "expected [x, y], each > 0");
    return v;
  };
  const VecX size = pair("size"), cells = pair("cells");
  for (int a = 0; a < 2; ++a)
    if (!(cells[a] == std::floor(cells[a]) && cells[a] <= 4096))
      h.fail_text(h.key("cells"), show(h.node()["cells"]), "expected [nx, ny], integers in [1, 4096]");
  const double bump_max = h.num("bump_max");
  if (!(bump_max >= 0)) h.fail(h.key("bump_max"), bump_max, "must be >= 0");
  // slopes stay below ~1 and the closest point unique within a bump's radius of curvature
  if (!(bump_max <= 0.5 * std::min(size[0] / cells[0], size[1] / cells[1])))
    h.fail(h.key("bump_max"), bump_max, "must be <= half the cell size (a terrain of bumps, not spikes)");
  const int seed = h.integer("seed");
  if (seed < 0) h.fail(h.key("seed"), seed, "must be >= 0");
  GeomSpec g;
  g.name = detail::concat("terrain[", i, "].height_map");
  g.link = -1;
  g.type = GeomType::HeightField;
  g.pos = h.v3("pos");
  g.hfield = int(spec.height_fields.size());
  h.finish();
  spec.height_fields.push_back(
      height_field_random(size[0] / 2, size[1] / 2, int(cells[0]), int(cells[1]), bump_max, uint64_t(seed)));
  spec.geoms.push_back(g);
}

void parse_terrain(Cfg& model, ModelSpec& spec) {
  const YAML::Node t = optional_list(model, "terrain", "expected a list of planes");
  for (size_t i = 0; i < t.size(); ++i) {
    Cfg c = model.item("terrain", t, i);
    Plane p;
    if (c.has("height_map")) {
      parse_height_map(c, i, spec);
      c.finish();
      continue;
    }
    c.raw("height_map");
    if (c.has("slope_deg")) {
      // a slope descending along +x through `point`: n = (sin s, 0, cos s)
      const double s = c.num("slope_deg", 0.0) * M_PI / 180;
      if (!(std::abs(s) < M_PI / 2)) c.fail(c.key("slope_deg"), s * 180 / M_PI, "must be in (-90, 90)");
      p.normal = Vec3(std::sin(s), 0, std::cos(s));
      p.offset = p.normal.dot(c.v3("point"));
    } else {
      p.normal = c.v3("normal");
      if (!(p.normal.norm() > 0)) c.fail_text(c.key("normal"), show(c.node()["normal"]), "must be non-zero");
      p.normal.normalize();
      p.offset = c.num("offset");
    }
    c.finish();
    spec.planes.push_back(p);
  }
}

// a link name or "world" (-1)
int link_index(Cfg& c, const std::string& k, const std::string& name, const std::map<std::string, int>& index) {
  if (name == "world") return -1;
  const auto it = index.find(name);
  if (it == index.end()) c.fail(c.key(k), name, "no such link (or world)");
  return it->second;
}

void parse_geoms(Cfg& model, ModelSpec& spec, const std::map<std::string, int>& index) {
  const YAML::Node list = optional_list(model, "geoms", "expected a list of geoms");
  for (size_t i = 0; i < list.size(); ++i) {
    Cfg c = model.item("geoms", list, i);
    GeomSpec g;
    g.name = c.str("name", "");
    g.link = link_index(c, "link", c.str("link"), index);
    const std::string type = c.choice("type");
    g.type = type == "plane" ? GeomType::Plane : type == "sphere" ? GeomType::Sphere
           : type == "capsule" ? GeomType::Capsule : GeomType::Box;
    g.pos = c.v3("pos");
    g.R = rpy_matrix(c.v3("rpy"));
    const int n_size = g.type == GeomType::Plane ? 0 : g.type == GeomType::Sphere ? 1 : g.type == GeomType::Capsule ? 2 : 3;
    if (n_size > 0) {
      if (!c.has("size")) c.fail(c.key("size"), "(missing)", detail::concat(type, " needs ", n_size, " size value(s)"));
      g.size.head(n_size) = c.as_vec(c.raw("size"), c.key("size"), n_size);
    } else if (c.has("size")) {
      c.fail_text(c.key("size"), show(c.node()["size"]), "a plane has no size");
    }
    for (const char* k : {"contype", "conaffinity"}) {
      const int v = c.integer(k);
      if (v < 0) c.fail(c.key(k), v, "must be >= 0");
      (std::string(k) == "contype" ? g.contype : g.conaffinity) = uint32_t(v);
    }
    c.finish();
    spec.geoms.push_back(g);
  }
}

void parse_exclude(Cfg& model, ModelSpec& spec, const std::map<std::string, int>& index) {
  const YAML::Node list = optional_list(model, "exclude", "expected [[link_a, link_b], ...]");
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string k = detail::concat("exclude[", i, "]");
    const YAML::Node e = list[i];
    if (!e.IsSequence() || e.size() != 2 || !e[0].IsScalar() || !e[1].IsScalar())
      model.fail_text(model.key(k), show(e), "expected [link_a, link_b]");
    spec.exclude.emplace_back(link_index(model, k, e[0].as<std::string>(), index),
                              link_index(model, k, e[1].as<std::string>(), index));
  }
}

void parse_actuators(Cfg& model, ModelSpec& spec, const std::map<std::string, int>& index) {
  const YAML::Node list = optional_list(model, "actuators", "expected a list of actuators");
  for (size_t i = 0; i < list.size(); ++i) {
    Cfg c = model.item("actuators", list, i);
    ActuatorSpec a;
    a.name = c.str("name", "");
    const std::string joint = c.str("joint");
    const auto it = index.find(joint);
    if (it == index.end()) c.fail(c.key("joint"), joint, "no such link");
    // the DOF address of that link's joint: DOFs are numbered link by link
    int adr = 0;
    for (int j = 0; j < it->second; ++j) adr += joint_dof_count(spec.links[j].joint);
    const int n_dof = joint_dof_count(spec.links[it->second].joint);
    const int part = c.integer("joint_dof");
    if (n_dof == 0) c.fail(c.key("joint"), joint, "a fixed joint has no DOF to drive");
    if (part < 0 || part >= n_dof) c.fail(c.key("joint_dof"), part, detail::concat("must be in [0, ", n_dof, ")"));
    a.dof = adr + part;
    a.type = c.choice("type") == "position" ? ActuatorType::Position : ActuatorType::Motor;
    a.gear = c.num("gear");
    if (c.has("ctrlrange")) {
      const VecX r = c.as_vec(c.raw("ctrlrange"), c.key("ctrlrange"), 2);
      a.ctrllimited = true;
      a.ctrlrange[0] = r[0];
      a.ctrlrange[1] = r[1];
    } else {
      c.raw("ctrlrange");
    }
    if (a.type == ActuatorType::Position) {
      if (!c.has("kp")) c.fail(c.key("kp"), "(missing)", "a position actuator needs kp > 0");
      a.kp = c.num("kp");
      a.kv = c.num("kv");
    } else {
      for (const char* k : {"kp", "kv"})
        if (c.has(k)) c.fail_text(c.key(k), show(c.node()[k]), "a motor has no gains (type: position has)");
    }
    c.finish();
    spec.actuators.push_back(a);
  }
}

}  // namespace

ModelSpec parse_model_spec(Cfg& model) {
  ModelSpec spec;
  spec.gravity = model.v3("gravity");
  std::map<std::string, int> index;  // link name -> index
  parse_links(model, spec, index);
  parse_contacts(model, spec, index);
  parse_terrain(model, spec);
  parse_geoms(model, spec, index);
  parse_exclude(model, spec, index);
  parse_actuators(model, spec, index);
  model.finish();
  return spec;
}

}  // namespace bigstep
