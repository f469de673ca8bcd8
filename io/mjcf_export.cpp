#include "io/mjcf_export.h"

#include "core/error.h"

#ifdef BIGSTEP_WITH_MUJOCO
#include <mujoco/mujoco.h>

#include "io/mjcf_spec_ptr.h"

#include <algorithm>
#include <memory>
#include <vector>
#endif

namespace bigstep {

#ifndef BIGSTEP_WITH_MUJOCO

std::string export_mjcf(const Model&, const MjcfExportOptions&) {
  throw InvalidArgument("export-mjcf: built without MuJoCo; pip install mujoco and reconfigure");
}

#else

namespace {

void set3(double* d, const Vec3& v) {
  for (int i = 0; i < 3; ++i) d[i] = v[i];
}
void set_quat(double* q, const Mat3& R) {
  const Eigen::Quaterniond e(R);
  q[0] = e.w(), q[1] = e.x(), q[2] = e.y(), q[3] = e.z();
}

// Where link j's contents go: MuJoCo body B and the pose of the link frame (at theta = 0 of the
// link's own DOFs... and of the folded massless links' DOFs) in B's frame: x_B = R x_j + t.
struct Placement {
  mjsBody* body = nullptr;
  Mat3 R = Mat3::Identity();
  Vec3 t = Vec3::Zero();
};

}  // namespace

std::string export_mjcf(const Model& m, const MjcfExportOptions& opt) {
  MjSpecPtr spec(mj_makeSpec());
  mjSpec* s = spec.get();
  mjs_setString(s->modelname, opt.name.c_str());
  s->compiler.degree = 0;
  s->compiler.autolimits = 1;
  s->option.timestep = opt.timestep;
  set3(s->option.gravity, m.gravity);
  mjsBody* world = mjs_findBody(s, "world");
  std::vector<int> children(m.n_link, 0);
  for (int j = 0; j < m.n_link; ++j)
    if (m.link_parent[j] >= 0) ++children[m.link_parent[j]];
  std::vector<Placement> at(m.n_link);
  std::vector<std::string> body_of(m.n_link);  // the MuJoCo body name each link's contents are in
  std::vector<bool> pending(m.n_link, false);  // massless with DOFs: its only child shares its body
  for (int j = 0; j < m.n_link; ++j) {
    const int p = m.link_parent[j];
    const std::string lname = m.link_name[j].empty() ? detail::concat("link", j) : m.link_name[j];
    // the link frame in the parent's placement: parent's pose, then the joint frame R_o, t_o
    Placement& a = at[j];
    const Mat3 Rp = p < 0 ? Mat3::Identity() : at[p].R;
    const Vec3 tp = p < 0 ? Vec3::Zero() : at[p].t;
    if (p >= 0 && pending[p]) {  // fold into the massless parent's body
      a.body = at[p].body;
      body_of[j] = body_of[p];
      a.R = Rp * m.link_R_o[j];
      a.t = Rp * m.link_t_o[j] + tp;
    } else {  // a body of its own, at the joint frame
      a.body = mjs_addBody(p < 0 ? world : at[p].body, nullptr);
      mjs_setName(a.body->element, lname.c_str());
      body_of[j] = lname;
      set3(a.body->pos, Rp * m.link_t_o[j] + tp);
      set_quat(a.body->quat, Rp * m.link_R_o[j]);
    }
    // the joint's DOFs, anchored at the joint origin, axes in the frame preceding each DOF
    for (int k = m.link_dof_adr[j]; k < m.link_dof_adr[j] + m.link_dof_num[j]; ++k) {
      mjsJoint* jt = mjs_addJoint(a.body, nullptr);
      mjs_setName(jt->element, m.dof_name[k].c_str());
      jt->type = m.dof_revolute[k] ? mjJNT_HINGE : mjJNT_SLIDE;
      set3(jt->pos, a.t);
      set3(jt->axis, a.R * m.dof_axis[k]);
      if (m.dof_limited[k]) {
        jt->limited = mjLIMITED_TRUE;
        jt->range[0] = m.dof_range[2 * size_t(k)], jt->range[1] = m.dof_range[2 * size_t(k) + 1];
      }
      jt->damping[0] = m.dof_damping[k];
      jt->armature = m.dof_armature[k];
      jt->stiffness[0] = m.dof_stiffness[k];
      jt->springref = m.dof_springref[k];
    }
    const bool moving = m.link_dof_num[j] > 0;
    if (m.link_mass[j] == 0 && moving) {
      BIGSTEP_CHECK_ARG(children[j] == 1, detail::concat("links[", j, "] (", lname, ")"), "mass 0",
                        detail::concat("a massless moving link needs exactly one child to share its MuJoCo body (has ",
                                       children[j], ")"));
      pending[j] = true;
    } else if (m.link_mass[j] > 0) {  // inertial, in the body frame
      mjsBody* b = a.body;
      b->explicitinertial = 1;
      b->mass = m.link_mass[j];
      set3(b->ipos, a.R * m.link_com[j] + a.t);
      const Mat3 I = a.R * m.link_inertia[j] * a.R.transpose();
      const double full[6] = {I(0, 0), I(1, 1), I(2, 2), I(0, 1), I(0, 2), I(1, 2)};
      for (int i = 0; i < 6; ++i) b->fullinertia[i] = full[i];
    }
  }
  // geoms
  for (int g = 0; g < m.n_geom; ++g) {
    const int j = m.geom_link[g];
    mjsGeom* gs = mjs_addGeom(j < 0 ? world : at[j].body, nullptr);
    if (!m.geom_name[g].empty()) mjs_setName(gs->element, m.geom_name[g].c_str());
    const Mat3 R = j < 0 ? Mat3::Identity() : at[j].R;
    const Vec3 t = j < 0 ? Vec3::Zero() : at[j].t;
    set3(gs->pos, R * m.geom_pos[g] + t);
    set_quat(gs->quat, R * m.geom_R[g]);
    const Vec3& sz = m.geom_size[g];
    switch (m.geom_type[g]) {
      case GeomType::Plane:
        gs->type = mjGEOM_PLANE, gs->size[0] = gs->size[1] = 0, gs->size[2] = 1;
        break;
      case GeomType::Sphere: gs->type = mjGEOM_SPHERE, gs->size[0] = std::max(sz[0], 1e-6); break;
      case GeomType::Capsule: gs->type = mjGEOM_CAPSULE, gs->size[0] = sz[0], gs->size[1] = sz[1]; break;
      case GeomType::Box: gs->type = mjGEOM_BOX, set3(gs->size, sz); break;
      case GeomType::HeightField:
        // MuJoCo's hfield is piecewise linear; bigstep's is a bicubic B-spline (core/height_field.h)
        throw InvalidArgument(detail::concat("geom ", g, " (", m.geom_name[g], "): a height field has no MJCF "
                                             "form (MuJoCo's hfield is piecewise linear, bigstep's a B-spline)"));
    }
    gs->contype = int(m.geom_contype[g]);
    gs->conaffinity = int(m.geom_conaffinity[g]);
    gs->friction[0] = opt.friction;
  }
  // a light from above, for rendering (tools/render.py); no effect on the dynamics
  mjsLight* light = mjs_addLight(world, nullptr);
  light->type = mjLIGHT_DIRECTIONAL;
  light->pos[2] = 5;
  light->dir[0] = 0.3, light->dir[1] = 0.2, light->dir[2] = -1;
  light->castshadow = 0;
  // excluded link pairs (world = the world body)
  auto body_name = [&](int l) { return l < 0 ? std::string("world") : body_of[l]; };
  for (const auto& [l1, l2] : m.exclude) {
    mjsExclude* e = mjs_addExclude(s);
    mjs_setString(e->bodyname1, body_name(l1).c_str());
    mjs_setString(e->bodyname2, body_name(l2).c_str());
  }
  // actuators on the DOFs' joints
  for (int u = 0; u < m.n_u; ++u) {
    mjsActuator* act = mjs_addActuator(s, nullptr);
    if (!m.actuator_name[u].empty()) mjs_setName(act->element, m.actuator_name[u].c_str());
    if (m.actuator_type[u] == ActuatorType::Position) {
      double kv[1] = {m.actuator_kv[u]};
      mjs_setToPosition(act, m.actuator_kp[u], kv, nullptr, nullptr, 0);
    } else {
      mjs_setToMotor(act);
    }
    act->trntype = mjTRN_JOINT;
    mjs_setString(act->target, m.dof_name[m.actuator_dof[u]].c_str());
    act->gear[0] = m.actuator_gear[u];
    if (m.actuator_ctrllimited[u]) {
      act->ctrllimited = mjLIMITED_TRUE;
      act->ctrlrange[0] = m.actuator_ctrlrange[2 * size_t(u)], act->ctrlrange[1] = m.actuator_ctrlrange[2 * size_t(u) + 1];
    }
  }
  // compile (MuJoCo validates), then write
  mjModel* compiled = mj_compile(s, nullptr);
  if (!compiled) throw InvalidArgument(std::string("export-mjcf: MuJoCo refused the model: ") + mjs_getError(s));
  mj_deleteModel(compiled);
  std::vector<char> buf(1 << 20);
  char err[1024] = "";
  for (;;) {
    const int need = mj_saveXMLString(s, buf.data(), int(buf.size()), err, sizeof(err));
    if (need == 0) break;
    if (need < 0) throw InvalidArgument(std::string("export-mjcf: MuJoCo could not write the model: ") + err);
    buf.resize(size_t(need) + 1);
  }
  return std::string(buf.data());
}

#endif

}  // namespace bigstep
