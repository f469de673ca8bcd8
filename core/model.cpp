// Model validation and DOF tables (docs/methods/pbfd.md §2.1).
#include "core/model.h"

#include <cmath>

#include "core/error.h"

namespace bigstep {

const char* joint_type_name(JointType t) {
  switch (t) {
    case JointType::Fixed: return "fixed";
    case JointType::Hinge: return "hinge";
    case JointType::Prismatic: return "prismatic";
    case JointType::Ball: return "ball";
    case JointType::Floating: return "floating";
    case JointType::Planar: return "planar";
  }
  return "?";
}

const char* geom_type_name(GeomType t) {
  switch (t) {
    case GeomType::Plane: return "plane";
    case GeomType::Sphere: return "sphere";
    case GeomType::Capsule: return "capsule";
    case GeomType::Box: return "box";
    case GeomType::HeightField: return "height field";
  }
  return "?";
}

int joint_dof_count(JointType t) {
  switch (t) {
    case JointType::Fixed: return 0;
    case JointType::Hinge: case JointType::Prismatic: return 1;
    case JointType::Ball: case JointType::Planar: return 3;
    case JointType::Floating: return 6;
  }
  return 0;
}

LinkSpec Model::link_spec(int j) const {
  LinkSpec l;
  l.name = link_name[j];
  l.parent = link_parent[j];
  l.joint = link_joint[j];
  l.R_o = link_R_o[j];
  l.t_o = link_t_o[j];
  l.axis = link_axis[j];
  l.mass = link_mass[j];
  l.com = link_com[j];
  l.inertia = link_inertia[j];
  if (link_dof_num[j] > 0) {
    const int k = link_dof_adr[j];
    l.limited = dof_limited[k] != 0;
    l.range[0] = dof_range[2 * k];
    l.range[1] = dof_range[2 * k + 1];
    l.limit_stiffness = dof_limit_k[k];
    l.damping = dof_damping[k];
    l.armature = dof_armature[k];
    l.stiffness = dof_stiffness[k];
    l.springref = dof_springref[k];
  }
  return l;
}

std::vector<LinkSpec> Model::link_specs() const {
  std::vector<LinkSpec> out;
  for (int j = 0; j < n_link; ++j) out.push_back(link_spec(j));
  return out;
}

Mat3 second_moment(double m, const Vec3& c, const Mat3& I_c) {
  return 0.5 * I_c.trace() * Mat3::Identity() - I_c + m * c * c.transpose();
}

namespace {

std::string vec_str(const Vec3& v) {
  return detail::concat("[", v.x(), ", ", v.y(), ", ", v.z(), "]");
}

bool finite(const Mat3& M) { return M.allFinite(); }

bool is_rotation(const Mat3& R) {
  return finite(R) && (R * R.transpose() - Mat3::Identity()).norm() < 1e-9 && R.determinant() > 0;
}

// A rotation whose third column is the unit vector n (the frame of a plane geom with normal n).
Mat3 frame_from_normal(const Vec3& n) {
  // start from the world axis least aligned with n, so the cross product is well conditioned
  Eigen::Index i_min;
  n.cwiseAbs().minCoeff(&i_min);
  const Vec3 x = n.cross(Vec3::Unit(i_min)).normalized();
  Mat3 R;
  R << x, n.cross(x), n;
  return R;
}

// Elementary DOF sequence of a joint, parent side first (docs/methods/pbfd.md §2.1 table).
struct Elem { bool revolute; Vec3 axis; const char* part; };
std::vector<Elem> joint_elements(const LinkSpec& l) {
  const Vec3 ex = Vec3::UnitX(), ey = Vec3::UnitY(), ez = Vec3::UnitZ();
  switch (l.joint) {
    case JointType::Fixed: return {};
    case JointType::Hinge: return {{true, l.axis, "angle"}};
    case JointType::Prismatic: return {{false, l.axis, "offset"}};
    case JointType::Ball: return {{true, ez, "rz"}, {true, ey, "ry"}, {true, ex, "rx"}};
    case JointType::Floating:
      return {{false, ex, "x"}, {false, ey, "y"}, {false, ez, "z"},
              {true, ez, "rz"}, {true, ey, "ry"}, {true, ex, "rx"}};
    case JointType::Planar: return {{false, ex, "x"}, {false, ez, "z"}, {true, ey, "ry"}};
  }
  return {};
}

void push_geom(Model& m, std::string name, GeomType type, int link, const Vec3& pos, const Mat3& R,
               const Vec3& size, uint32_t contype, uint32_t conaffinity, int hfield = -1) {
  m.geom_name.push_back(std::move(name));
  m.geom_hfield.push_back(hfield);
  m.geom_type.push_back(type);
  m.geom_link.push_back(link);
  m.geom_pos.push_back(pos);
  m.geom_R.push_back(R);
  m.geom_size.push_back(size);
  m.geom_contype.push_back(contype);
  m.geom_conaffinity.push_back(conaffinity);
  ++m.n_geom;
}

// "geoms[i] (name)", or "geoms[i]" for an unnamed geom: how errors name spec.geoms[i].
std::string geom_label(int i, const std::string& name) {
  return name.empty() ? detail::concat("geoms[", i, "]") : detail::concat("geoms[", i, "] (", name, ")");
}

// Validate spec.geoms[i]: type, link, frame, and the sizes its type reads (GeomSpec).
void check_geom(const GeomSpec& g, int i, int n_link, const std::vector<HeightField>& hfields) {
  const std::string f = geom_label(i, g.name);
  const int type = int(g.type);
  BIGSTEP_CHECK_ARG(type >= 0 && type < n_geom_type, f + ".type", type,
                    "must be plane, sphere, capsule, box or height field");
  BIGSTEP_CHECK_ARG(g.link >= -1 && g.link < n_link, f + ".link", g.link,
                    "no such link (-1 = world)");
  BIGSTEP_CHECK_ARG(g.type != GeomType::Plane || g.link == -1, f + ".link", g.link,
                    "a plane must be on the world (-1)");
  BIGSTEP_CHECK_ARG(g.type != GeomType::HeightField || g.link == -1, f + ".link", g.link,
                    "a height field must be on the world (-1)");
  BIGSTEP_CHECK_ARG(g.pos.allFinite(), f + ".pos", vec_str(g.pos), "must be finite");
  BIGSTEP_CHECK_ARG(is_rotation(g.R), f + ".R", "(matrix)", "must be a finite rotation matrix");
  const Vec3& s = g.size;
  switch (g.type) {
    case GeomType::Plane: break;  // size unused
    case GeomType::Sphere:
      BIGSTEP_CHECK_ARG(std::isfinite(s[0]) && s[0] >= 0, f + ".size[0]", s[0],
                        "sphere radius must be finite and >= 0");
      break;
    case GeomType::Capsule:
      BIGSTEP_CHECK_ARG(std::isfinite(s[0]) && s[0] > 0, f + ".size[0]", s[0],
                        "capsule radius must be finite and > 0");
      BIGSTEP_CHECK_ARG(std::isfinite(s[1]) && s[1] > 0, f + ".size[1]", s[1],
                        "capsule half-length must be finite and > 0");
      break;
    case GeomType::Box:
      BIGSTEP_CHECK_ARG(s.allFinite() && s.minCoeff() > 0, f + ".size", vec_str(s),
                        "box half-extents must be finite and > 0");
      break;
    case GeomType::HeightField: {
      BIGSTEP_CHECK_ARG(g.hfield >= 0 && g.hfield < int(hfields.size()), f + ".hfield", g.hfield,
                        detail::concat("no such height field (", hfields.size(), " given)"));
      const HeightField& h = hfields[size_t(g.hfield)];
      BIGSTEP_CHECK_ARG(h.nx >= 1 && h.ny >= 1 && h.z.size() == size_t(h.nx + 1) * size_t(h.ny + 1),
                        f + ".hfield", g.hfield, "height field needs nx, ny >= 1 and (nx+1)(ny+1) heights");
      BIGSTEP_CHECK_ARG(std::isfinite(h.hx) && h.hx > 0 && std::isfinite(h.hy) && h.hy > 0, f + ".hfield",
                        g.hfield, "height field half extents must be finite and > 0");
      for (const double zk : h.z)
        BIGSTEP_CHECK_ARG(std::isfinite(zk) && zk >= h.z_min && zk <= h.z_max, f + ".hfield", zk,
                          "height field heights must be finite and within [z_min, z_max]");
      BIGSTEP_CHECK_ARG(h.z_min <= 0 && h.z_max >= 0, f + ".hfield", g.hfield,
                        "z_min <= 0 <= z_max (the height outside the grid is 0)");
      break;
    }
  }
  BIGSTEP_CHECK_ARG(g.type == GeomType::HeightField || g.hfield == -1, f + ".hfield", g.hfield,
                    "only a height-field geom names a height field");
}

// Geom arrays: spec.geoms, then the legacy spheres and planes (order documented in model.h).
void build_geoms(const ModelSpec& spec, Model& m) {
  for (size_t i = 0; i < spec.geoms.size(); ++i) {
    const GeomSpec& g = spec.geoms[i];
    check_geom(g, int(i), m.n_link, spec.height_fields);
    // a height field's size is its half extents (GeomSpec), read from the surface
    const Vec3 size = g.type == GeomType::HeightField
                          ? Vec3(spec.height_fields[size_t(g.hfield)].hx, spec.height_fields[size_t(g.hfield)].hy, 0)
                          : g.size;
    push_geom(m, g.name, g.type, g.link, g.pos, g.R, size, g.contype, g.conaffinity, g.hfield);
  }
  m.sphere_geom_adr = m.n_geom;
  for (size_t s = 0; s < m.spheres.size(); ++s) {
    const ContactSphere& c = m.spheres[s];
    push_geom(m, detail::concat("contacts[", s, "]"), GeomType::Sphere, c.link, c.centre,
              Mat3::Identity(), Vec3(c.radius, 0, 0), 0, 1);
  }
  m.plane_geom_adr = m.n_geom;
  for (size_t p = 0; p < m.planes.size(); ++p) {
    const Plane& pl = m.planes[p];
    push_geom(m, detail::concat("terrain[", p, "]"), GeomType::Plane, -1, pl.offset * pl.normal,
              frame_from_normal(pl.normal), Vec3::Zero(), 1, 1);
  }
}

// The filter of Model::finalize (model.h), for geoms i != j.
bool may_touch(const Model& m, int i, int j) {
  if (!((m.geom_contype[i] & m.geom_conaffinity[j]) || (m.geom_contype[j] & m.geom_conaffinity[i])))
    return false;
  const int li = m.geom_link[i], lj = m.geom_link[j];
  if (li == lj) return false;  // same link, or both on the world
  // parent-child links; the world is nobody's parent here (ground contact stays)
  if (li >= 0 && lj >= 0 && (m.link_parent[li] == lj || m.link_parent[lj] == li)) return false;
  for (const auto& [e1, e2] : m.exclude)
    if ((e1 == li && e2 == lj) || (e1 == lj && e2 == li)) return false;
  return true;
}

// "geoms[i] (name)" for spec geoms, "contacts[s]" / "terrain[p]" for the converted ones.
std::string geom_field(const Model& m, int g) {
  return g >= m.sphere_geom_adr ? m.geom_name[g] : geom_label(g, m.geom_name[g]);
}

// Candidate pairs and the contact capacity; a pair without a pair function is an error.
void build_pairs(const ModelSpec& spec, Model& m) {
  for (size_t e = 0; e < spec.exclude.size(); ++e) {
    const auto [l1, l2] = spec.exclude[e];
    const std::string f = detail::concat("exclude[", e, "]");
    BIGSTEP_CHECK_ARG(l1 >= -1 && l1 < m.n_link, f + ".first", l1, "no such link (-1 = world)");
    BIGSTEP_CHECK_ARG(l2 >= -1 && l2 < m.n_link, f + ".second", l2, "no such link (-1 = world)");
    BIGSTEP_CHECK_ARG(l1 != l2, f, detail::concat("(", l1, ", ", l2, ")"),
                      "must name two different links");
  }
  m.exclude = spec.exclude;
  for (int i = 0; i < m.n_geom; ++i)
    for (int j = i + 1; j < m.n_geom; ++j) {
      if (!may_touch(m, i, j)) continue;
      // a is the geom on the higher link index, so a world geom is always b
      const int a = m.geom_link[i] > m.geom_link[j] ? i : j, b = a == i ? j : i;
      const int n_max = pair_max_contacts(m.geom_type[a], m.geom_type[b]);
      if (n_max == 0 && spec.skip_unsupported_pairs) {
        m.skipped_pairs.emplace_back(a, b);
        continue;
      }
      BIGSTEP_CHECK_ARG(n_max > 0,
                        geom_field(m, a) + " / " + geom_field(m, b),
                        detail::concat(geom_type_name(m.geom_type[a]), "-",
                                       geom_type_name(m.geom_type[b])),
                        "no collision function for this pair of types; filter it out with "
                        "contype / conaffinity or exclude");
      m.pair_geom_a.push_back(a);
      m.pair_geom_b.push_back(b);
      m.max_contacts += n_max;
      ++m.n_pair;
    }
}

// The point-plane form of the plane pairs (model.h "point cores against planes").
void build_point_planes(Model& m) {
  std::vector<int> plane_of(m.n_geom, -1), first_point(m.n_geom, -1);
  for (int g = 0; g < m.n_geom; ++g)
    if (m.geom_type[g] == GeomType::Plane) {
      plane_of[g] = m.n_plane++;
      const Vec3 n = m.geom_R[g].col(2);
      m.plane_normal.push_back(n);
      m.plane_offset.push_back(n.dot(m.geom_pos[g]));
    }
  for (int q = 0; q < m.n_pair; ++q) {
    const int a = m.pair_geom_a[q], b = m.pair_geom_b[q];
    if (plane_of[b] < 0) {  // a body pair: its core segments (model.h "body pairs")
      const GeomType ta = m.geom_type[a], tb = m.geom_type[b];
      ++m.n_body_pair;
      m.body_pair_pair.push_back(q);
      m.body_pair_con_adr.push_back(m.n_body_con);
      m.n_body_con += pair_max_contacts(ta, tb);
      for (const int g : {a, b}) {
        m.body_pair_link.push_back(m.geom_link[g]);
        m.body_pair_pos.push_back(m.geom_pos[g]);
        m.body_pair_axis.push_back(m.geom_R[g].col(2));
        const bool segment = m.geom_type[g] == GeomType::Sphere || m.geom_type[g] == GeomType::Capsule;
        m.body_pair_size.push_back(segment ? m.geom_size[g][0] : 0.0);
        m.body_pair_size.push_back(m.geom_type[g] == GeomType::Capsule ? m.geom_size[g][1] : 0.0);
      }
      continue;
    }
    if (first_point[a] < 0) {  // a's core points, as collide_*_plane visits them
      first_point[a] = m.n_point;
      const Vec3& p = m.geom_pos[a];
      const Mat3& R = m.geom_R[a];
      const Vec3& s = m.geom_size[a];
      auto add = [&](const Vec3& x, double r) {
        m.point_link.push_back(m.geom_link[a]);
        m.point_pos.push_back(x);
        m.point_radius.push_back(r);
        ++m.n_point;
      };
      switch (m.geom_type[a]) {
        case GeomType::Sphere: add(p, s[0]); break;
        case GeomType::Capsule:
          add(p + s[1] * R.col(2), s[0]);
          add(p - s[1] * R.col(2), s[0]);
          break;
        case GeomType::Box:
          for (int i = 0; i < 8; ++i)
            add(p + R * Vec3((i & 1) ? s[0] : -s[0], (i & 2) ? s[1] : -s[1], (i & 4) ? s[2] : -s[2]), 0.0);
          break;
        case GeomType::Plane:
        case GeomType::HeightField: break;  // on the world, so never a
      }
    }
    const int n_core = pair_max_contacts(m.geom_type[a], GeomType::Plane);  // one contact per core point
    for (int i = 0; i < n_core; ++i) {
      m.point_pair_point.push_back(first_point[a] + i);
      m.point_pair_plane.push_back(plane_of[b]);
      ++m.n_point_pair;
    }
  }
}

// Actuator arrays; every field checked and named actuators[i] (name).
void build_actuators(const ModelSpec& spec, Model& m) {
  for (size_t i = 0; i < spec.actuators.size(); ++i) {
    const ActuatorSpec& a = spec.actuators[i];
    const std::string f = a.name.empty() ? detail::concat("actuators[", i, "]")
                                         : detail::concat("actuators[", i, "] (", a.name, ")");
    BIGSTEP_CHECK_ARG(a.dof >= 0 && a.dof < m.n_q, f + ".dof", a.dof, detail::concat("no such DOF (n_q = ", m.n_q, ")"));
    BIGSTEP_CHECK_ARG(a.type == ActuatorType::Motor || a.type == ActuatorType::Position, f + ".type", int(a.type),
                      "must be motor or position");
    BIGSTEP_CHECK_ARG(std::isfinite(a.gear) && a.gear != 0, f + ".gear", a.gear, "must be finite and non-zero");
    if (a.ctrllimited)
      BIGSTEP_CHECK_ARG(std::isfinite(a.ctrlrange[0]) && std::isfinite(a.ctrlrange[1]) && a.ctrlrange[0] < a.ctrlrange[1],
                        f + ".ctrlrange", detail::concat("[", a.ctrlrange[0], ", ", a.ctrlrange[1], "]"),
                        "must be finite with lo < hi");
    const bool pos = a.type == ActuatorType::Position;
    BIGSTEP_CHECK_ARG(std::isfinite(a.kp) && (pos ? a.kp > 0 : a.kp == 0), f + ".kp", a.kp,
                      pos ? "a position actuator needs a finite kp > 0" : "a motor has no kp");
    BIGSTEP_CHECK_ARG(std::isfinite(a.kv) && a.kv >= 0 && (pos || a.kv == 0), f + ".kv", a.kv,
                      pos ? "must be finite and >= 0" : "a motor has no kv");
    m.actuator_name.push_back(a.name);
    m.actuator_type.push_back(a.type);
    m.actuator_dof.push_back(a.dof);
    m.actuator_gear.push_back(a.gear);
    m.actuator_ctrllimited.push_back(a.ctrllimited ? 1 : 0);
    m.actuator_ctrlrange.push_back(a.ctrllimited ? a.ctrlrange[0] : 0);
    m.actuator_ctrlrange.push_back(a.ctrllimited ? a.ctrlrange[1] : 0);
    m.actuator_kp.push_back(a.kp);
    m.actuator_kv.push_back(a.kv);
    ++m.n_u;
  }
}

}  // namespace

Model Model::finalize(const ModelSpec& spec) {
  Model m;
  m.n_link = int(spec.links.size());
  BIGSTEP_CHECK_ARG(m.n_link > 0, "links", "[]", "a model needs at least one link");
  for (int j = 0; j < m.n_link; ++j) {
    LinkSpec l = spec.links[j];
    const std::string f = detail::concat("links[", j, "] (", l.name, ")");
    BIGSTEP_CHECK_ARG(l.parent >= -1 && l.parent < j, f + ".parent", l.parent,
                      "must name an earlier link or the world (links are parent-before-child)");
    BIGSTEP_CHECK_ARG(is_rotation(l.R_o), f + ".R_o", "(matrix)", "must be a finite rotation matrix");
    BIGSTEP_CHECK_ARG(l.t_o.allFinite(), f + ".pos", vec_str(l.t_o), "must be finite");
    if (l.joint == JointType::Hinge || l.joint == JointType::Prismatic) {
      BIGSTEP_CHECK_ARG(l.axis.allFinite() && l.axis.norm() > 1e-12, f + ".axis", vec_str(l.axis),
                        "must be a finite non-zero vector");
      l.axis.normalize();
    }
    BIGSTEP_CHECK_ARG(std::isfinite(l.mass) && l.mass >= 0, f + ".mass", l.mass,
                      "must be finite and >= 0");
    BIGSTEP_CHECK_ARG(l.com.allFinite(), f + ".com", vec_str(l.com), "must be finite");
    BIGSTEP_CHECK_ARG(finite(l.inertia) && (l.inertia - l.inertia.transpose()).norm() <=
                                               1e-9 * (1 + l.inertia.norm()),
                      f + ".inertia", "(matrix)", "must be finite and symmetric");
    Eigen::SelfAdjointEigenSolver<Mat3> es(l.inertia);
    const Vec3 ev = es.eigenvalues();
    const double tol = 1e-12 * (1 + ev.cwiseAbs().maxCoeff());
    BIGSTEP_CHECK_ARG(ev.minCoeff() >= -tol, f + ".inertia", vec_str(ev),
                      "principal moments must be >= 0");
    BIGSTEP_CHECK_ARG(ev(0) + ev(1) >= ev(2) - tol, f + ".inertia", vec_str(ev),
                      "principal moments must satisfy the triangle inequality I1 + I2 >= I3");
    const bool one_dof = l.joint == JointType::Hinge || l.joint == JointType::Prismatic;
    BIGSTEP_CHECK_ARG(!l.limited || one_dof, f + ".range", joint_type_name(l.joint),
                      "joint limits exist for hinge and prismatic joints only");
    if (l.limited)
      BIGSTEP_CHECK_ARG(std::isfinite(l.range[0]) && std::isfinite(l.range[1]) && l.range[0] < l.range[1],
                        f + ".range", detail::concat("[", l.range[0], ", ", l.range[1], "]"),
                        "must be finite with lo < hi");
    BIGSTEP_CHECK_ARG(std::isfinite(l.limit_stiffness) && l.limit_stiffness >= 0, f + ".limit_stiffness",
                      l.limit_stiffness, "must be finite and >= 0 (0 = contact.c_perp)");
    BIGSTEP_CHECK_ARG(std::isfinite(l.damping) && l.damping >= 0, f + ".damping", l.damping,
                      "must be finite and >= 0");
    BIGSTEP_CHECK_ARG(std::isfinite(l.armature) && l.armature >= 0, f + ".armature", l.armature,
                      "must be finite and >= 0");
    BIGSTEP_CHECK_ARG(std::isfinite(l.stiffness) && l.stiffness >= 0, f + ".stiffness", l.stiffness,
                      "must be finite and >= 0");
    // per-coordinate springs are MuJoCo's for hinge / slide joints (planar: its x, z, ry are slide,
    // slide, hinge); on Euler angles they are not MuJoCo's ball / free spring, so refuse them
    const bool spring_joint = one_dof || l.joint == JointType::Planar;
    BIGSTEP_CHECK_ARG(l.stiffness == 0 || spring_joint, f + ".stiffness", l.stiffness,
                      detail::concat("joint springs exist for hinge, prismatic and planar joints only (this ",
                                     "joint is ", joint_type_name(l.joint),
                                     "; MuJoCo's ball / free springs are not per coordinate)"));
    BIGSTEP_CHECK_ARG(std::isfinite(l.springref), f + ".springref", l.springref, "must be finite");
    m.link_name.push_back(l.name);
    m.link_parent.push_back(l.parent);
    m.link_joint.push_back(l.joint);
    m.link_R_o.push_back(l.R_o);
    m.link_t_o.push_back(l.t_o);
    m.link_axis.push_back(l.axis);
    m.link_mass.push_back(l.mass);
    m.link_com.push_back(l.com);
    m.link_inertia.push_back(l.inertia);
    m.link_S.push_back(second_moment(l.mass, l.com, l.inertia));
    m.total_mass += l.mass;

    // DOF table
    m.link_dof_adr.push_back(m.n_q);
    m.link_chart.push_back(-1);
    if (l.joint == JointType::Ball || l.joint == JointType::Floating) {
      m.link_chart.back() = m.n_chart++;
      m.chart_link.push_back(j);
      m.chart_dof.push_back(m.n_q + (l.joint == JointType::Floating ? 3 : 0));
    }
    const auto elems = joint_elements(l);
    m.link_dof_num.push_back(int(elems.size()));
    for (size_t e = 0; e < elems.size(); ++e) {
      m.dof_link.push_back(j);
      m.dof_revolute.push_back(elems[e].revolute ? 1 : 0);
      m.dof_axis.push_back(elems[e].axis);
      m.dof_name.push_back(l.name + "." + elems[e].part);
      m.dof_damping.push_back(l.damping);
      m.dof_armature.push_back(l.armature);
      m.dof_stiffness.push_back(l.stiffness);
      m.dof_springref.push_back(l.springref);
      m.dof_limited.push_back(l.limited ? 1 : 0);
      m.dof_range.push_back(l.limited ? l.range[0] : 0);
      m.dof_range.push_back(l.limited ? l.range[1] : 0);
      m.dof_limit_k.push_back(l.limit_stiffness);
      if (l.limited) {
        m.limit_dof.push_back(m.n_q);
        ++m.n_limit;
      }
      if (l.damping > 0 || l.armature > 0) m.has_damping_armature = true;
      if (l.stiffness > 0) m.has_stiffness = true;
      // middle Euler angle (ZYX: the Ry rotation) of 3-angle joints
      if ((l.joint == JointType::Ball && e == 1) || (l.joint == JointType::Floating && e == 4))
        m.gimbal_dof.push_back(m.n_q);
      ++m.n_q;
    }
  }
  BIGSTEP_CHECK_ARG(m.n_q > 0, "links", m.n_link, "the model has no degrees of freedom");

  // ancestry: DOF k moves link j when k's link is j or an ancestor of j
  m.dof_anc.assign(size_t(m.n_q) * m.n_link, 0);
  for (int j = 0; j < m.n_link; ++j)
    for (int a = j; a >= 0; a = m.link_parent[a])
      for (int k = m.link_dof_adr[a]; k < m.link_dof_adr[a] + m.link_dof_num[a]; ++k)
        m.dof_anc[size_t(k) * m.n_link + j] = 1;

  m.spheres = spec.spheres;
  for (size_t s = 0; s < m.spheres.size(); ++s) {
    const auto& c = m.spheres[s];
    const std::string f = detail::concat("contacts[", s, "]");
    BIGSTEP_CHECK_ARG(c.link >= 0 && c.link < m.n_link, f + ".link", c.link, "no such link");
    BIGSTEP_CHECK_ARG(c.centre.allFinite(), f + ".centre", vec_str(c.centre), "must be finite");
    BIGSTEP_CHECK_ARG(std::isfinite(c.radius) && c.radius >= 0, f + ".radius", c.radius,
                      "must be finite and >= 0");
  }
  m.planes = spec.planes;
  for (size_t p = 0; p < m.planes.size(); ++p) {
    auto& pl = m.planes[p];
    const std::string f = detail::concat("terrain[", p, "]");
    BIGSTEP_CHECK_ARG(pl.normal.allFinite() && pl.normal.norm() > 1e-12, f + ".normal",
                      vec_str(pl.normal), "must be a finite non-zero vector");
    pl.normal.normalize();
    BIGSTEP_CHECK_ARG(std::isfinite(pl.offset), f + ".offset", pl.offset, "must be finite");
  }
  BIGSTEP_CHECK_ARG(spec.gravity.allFinite(), "gravity", vec_str(spec.gravity), "must be finite");
  m.gravity = spec.gravity;

  m.hfield = spec.height_fields;
  build_geoms(spec, m);
  build_pairs(spec, m);
  build_point_planes(m);
  build_actuators(spec, m);
  return m;
}

}  // namespace bigstep
