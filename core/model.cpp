// Model validation and DOF tables (spec pbfd.md §2.1).
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

int joint_dof_count(JointType t) {
  switch (t) {
    case JointType::Fixed: return 0;
    case JointType::Hinge: case JointType::Prismatic: return 1;
    case JointType::Ball: case JointType::Planar: return 3;
    case JointType::Floating: return 6;
  }
  return 0;
}

Mat3 second_moment(double m, const Vec3& c, const Mat3& I_c) {
  return 0.5 * I_c.trace() * Mat3::Identity() - I_c + m * c * c.transpose();
}

namespace {

std::string vec_str(const Vec3& v) {
  return detail::concat("[", v.x(), ", ", v.y(), ", ", v.z(), "]");
}

bool finite(const Mat3& M) { return M.allFinite(); }

// Elementary DOF sequence of a joint, parent side first (pbfd.md §2.1 table).
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

}  // namespace

Model Model::finalize(const ModelSpec& spec) {
  Model m;
  m.n_link = int(spec.links.size());
  BIGSTEP_CHECK_ARG(m.n_link > 0, "links", "[]", "a model needs at least one link");
  m.links = spec.links;
  for (int j = 0; j < m.n_link; ++j) {
    LinkSpec& l = m.links[j];
    const std::string f = detail::concat("links[", j, "] (", l.name, ")");
    BIGSTEP_CHECK_ARG(l.parent >= -1 && l.parent < j, f + ".parent", l.parent,
                      "must name an earlier link or the world (links are parent-before-child)");
    BIGSTEP_CHECK_ARG(finite(l.R_o) && (l.R_o * l.R_o.transpose() - Mat3::Identity()).norm() < 1e-9 &&
                          l.R_o.determinant() > 0,
                      f + ".R_o", "(matrix)", "must be a finite rotation matrix");
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
    m.link_S.push_back(second_moment(l.mass, l.com, l.inertia));
    m.total_mass += l.mass;

    // DOF table
    m.link_dof_adr.push_back(m.n_q);
    const auto elems = joint_elements(l);
    m.link_dof_num.push_back(int(elems.size()));
    for (size_t e = 0; e < elems.size(); ++e) {
      m.dof_link.push_back(j);
      m.dof_revolute.push_back(elems[e].revolute ? 1 : 0);
      m.dof_axis.push_back(elems[e].axis);
      m.dof_name.push_back(l.name + "." + elems[e].part);
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
    for (int a = j; a >= 0; a = m.links[a].parent)
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
  return m;
}

}  // namespace bigstep
