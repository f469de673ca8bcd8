// YAML `control:` -> constant torques, stable-PD servo and reference motion (io/control_yaml.h).
#include "io/control_yaml.h"

namespace bigstep {

namespace {

// control.pd.{kp, kd}: one number for every actuated DOF or a list of n_q; floating / planar base
// DOFs are unactuated and always get 0.
VecX parse_gains(Cfg& pd, const char* k, const Model& m) {
  const int n = m.n_q;
  std::vector<bool> actuated(n, true);
  for (int i = 0; i < n; ++i) {
    const JointType jt = m.link_joint[m.dof_link[i]];
    actuated[i] = jt != JointType::Floating && jt != JointType::Planar;
  }
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
    for (int i = 0; i < n; ++i)
      if (actuated[i]) g[i] = x;
  }
  for (int i = 0; i < n; ++i)
    if (g[i] < 0) pd.fail(v.IsSequence() ? detail::concat(pd.key(k), "[", i, "]") : pd.key(k), g[i], "must be >= 0");
  return g;
}

// a DOF by its name ("fl_knee.angle") or by the name of a link with a one-DOF joint ("fl_knee")
int dof_index(const Cfg& c, const std::string& k, const std::string& name, const Model& m) {
  for (int i = 0; i < m.n_q; ++i)
    if (m.dof_name[i] == name) return i;
  for (int j = 0; j < m.n_link; ++j)
    if (m.link_name[j] == name && m.link_dof_num[j] == 1) return m.link_dof_adr[j];
  c.fail(c.key(k), name, "no such DOF (give '<link>.angle' or the name of a one-DOF link)");
}

// {abduction: x, hip: x, knee: x, ankle: x}, each optional (0)
std::array<double, kLegRoles> parse_offsets(Cfg& parent, const char* k) {
  std::array<double, kLegRoles> o{};
  Cfg c = parent.child(k);
  for (int r = 0; r < kLegRoles; ++r) o[r] = c.num(leg_role_name(r));
  c.finish();
  return o;
}

void parse_legs(Cfg& ref, const Model& m, ReferenceSpec& rs) {
  const YAML::Node legs = ref.raw("legs");
  if (!legs.IsDefined() || legs.IsNull()) return;
  if (!legs.IsSequence())
    ref.fail_text(ref.key("legs"), show(legs), "expected a list of {abduction, hip, knee, ankle, phase, sweep_sign}");
  for (size_t l = 0; l < legs.size(); ++l) {
    Cfg c = ref.item("legs", legs, l);
    LegJoints lj;
    for (int r = 0; r < kLegRoles; ++r) {
      // hip is required, the other roles are optional (no DOF)
      const char* k = leg_role_name(r);
      if (r != kHip && !c.has(k)) {
        c.raw(k);
        continue;
      }
      lj.dof[r] = dof_index(c, k, r == kHip ? c.str(k) : c.str(k, ""), m);
    }
    lj.phase = c.num("phase");
    lj.sweep_sign = c.num("sweep_sign");
    c.finish();
    rs.legs.push_back(lj);
  }
}

// control.reference.<k>: the timing both motions have (period, ramp)
Cfg motion(Cfg& ref, const char* k, ReferenceKind kind, ReferenceSpec& rs) {
  Cfg c = ref.child(k);
  rs.kind = kind;
  rs.period = c.num("period");
  rs.ramp = c.num("ramp");
  return c;
}

ReferenceSpec parse_jump(Cfg& ref, ReferenceSpec rs) {
  Cfg j = motion(ref, "jump", ReferenceKind::Jump, rs);
  rs.crouch_time = j.num("crouch_time");
  rs.extension_time = j.num("extension_time");
  rs.flight_time = j.num("flight_time");
  rs.landing_time = j.num("landing_time");
  rs.crouch = parse_offsets(j, "crouch");
  rs.extension = parse_offsets(j, "extension");
  rs.flight = parse_offsets(j, "flight");
  j.finish();
  return rs;
}

ReferenceSpec parse_walk(Cfg& ref, ReferenceSpec rs) {
  Cfg w = motion(ref, "walk", ReferenceKind::Walk, rs);
  rs.stride = w.num("stride");
  rs.leg_length = w.num("leg_length");
  rs.duty = w.num("duty");
  rs.lift = parse_offsets(w, "lift");
  rs.foot_space = w.flag("foot_space");
  rs.step_height = w.num("step_height");
  rs.world_swing = w.flag("world_swing");
  rs.settle_time = w.num("settle_time");
  rs.replan_gain = w.num("replan_gain");
  w.finish();
  return rs;
}

// control.reference.move: a one-off joint-space motion (hold, move by offset, optional sinusoid)
ReferenceSpec parse_move(Cfg& ref, ReferenceSpec rs, int n) {
  Cfg c = ref.child("move");
  rs.kind = ReferenceKind::Move;
  rs.move_start = c.num("start");
  rs.move_duration = c.num("duration");
  rs.move_offset = c.vec("offset", n, VecX::Zero(n));
  rs.move_amplitude = c.vec("amplitude", n, VecX::Zero(n));
  rs.move_frequency = c.num("frequency");
  c.finish();
  return rs;
}

// control.pd + control.reference: the servo's gains and targets (docs/methods/newton_euler.md §4, docs/methods/nmdp.md §10).
void parse_pd(Cfg& ctrl, Scene& sc) {
  const Model& m = sc.model;
  const int n = m.n_q;
  const bool has_pd = ctrl.has("pd"), has_ref = ctrl.has("reference");
  Cfg pd = ctrl.child("pd");
  Cfg ref = ctrl.child("reference");
  if (!has_pd) {
    if (has_ref) ctrl.fail_text(ctrl.key("reference"), show(ref.node()), "needs control.pd (kp, kd)");
    return;
  }
  sc.pd.kp = parse_gains(pd, "kp", m);
  sc.pd.kd = parse_gains(pd, "kd", m);
  pd.finish();

  ReferenceSpec& rs = sc.reference;
  const std::string type = ref.choice("type");
  rs.kind = type == "jump" ? ReferenceKind::Jump : type == "walk" ? ReferenceKind::Walk
          : type == "move" ? ReferenceKind::Move : ReferenceKind::Hold;
  rs.stand = ref.vec("stand", n, sc.theta0);
  // legs, jump.* and walk.* are read (and checked) whatever the type, so one config can carry
  // both motions and --set control.reference.type=... switches between them
  parse_legs(ref, m, rs);
  const ReferenceSpec jump_spec = parse_jump(ref, rs), move_spec = parse_move(ref, rs, n);
  ReferenceSpec walk_spec = parse_walk(ref, rs);
  if (rs.kind == ReferenceKind::Jump) rs = jump_spec;
  if (rs.kind == ReferenceKind::Walk) rs = walk_spec;
  if (rs.kind == ReferenceKind::Move) rs = move_spec;
  ref.finish();
  try {
    // both motions are checked when legs are given, the active one is the servo's reference
    if (walk_spec.foot_space) {  // the foot-space trot's leg geometry from the Model (control/foot_trot.h)
      std::vector<std::array<int, 3>> legs;
      for (const LegJoints& l : walk_spec.legs) legs.push_back({l.dof[kAbduction], l.dof[kHip], l.dof[kKnee]});
      walk_spec.foot = foot_trot_setup(m, walk_spec.stand, legs);
      if (rs.kind == ReferenceKind::Walk) rs = walk_spec;
    }
    if (!rs.legs.empty()) {
      ReferenceMotion check_jump(jump_spec), check_walk(walk_spec);
    }
    sc.pd.reference = ReferenceMotion(rs);
    // walk.world_swing: the ID controllers solve the foot-space trot's swing IK at the rollout's
    // torso pose (control/foot_trot.h)
    sc.controller.reference_state = nullptr;
    sc.controller.reference_memory = 0;
    if (rs.kind == ReferenceKind::Walk && rs.foot_space && rs.world_swing) {
      const ReferenceMotion rm(rs);
      sc.controller.reference_memory = rm.memory_size();  // walk.replan_gain: the footholds taken
      sc.controller.reference_state = [rm](double t, double t_mode, const VecX& th, const VecX& v, double* mem, VecX& tb,
                                           VecX& tdb) { rm.at_state(t, t_mode, th, v, mem, tb, tdb); };
    }
    // walk.foot_space: the ID controllers model the plan's contacts only (swing feet left out)
    sc.controller.planned_contact = nullptr;
    if (rs.kind == ReferenceKind::Walk && rs.foot_space)
      sc.controller.planned_contact = [rm = ReferenceMotion(rs)](double t, int a, int b) {
        return rm.planned_contact(t, a, b);
      };
    validate_pd_servo(sc.pd, n, "control.pd");
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(ctrl.file() + ": " + e.what());
  }
}

}  // namespace

void parse_control(Cfg& ctrl, Scene& sc) {
  const int n = sc.model.n_q;
  sc.tau = ctrl.vec("tau", n, VecX::Zero(n));
  parse_pd(ctrl, sc);
  // control.load: a force at a link point turning about the link z axis (control/point_load.h)
  if (ctrl.has("load")) {
    Cfg ld = ctrl.child("load");
    const std::string link = ld.str("link");
    sc.load.link = -1;
    for (int j = 0; j < sc.model.n_link; ++j)
      if (sc.model.link_name[j] == link) sc.load.link = j;
    if (sc.load.link < 0) ld.fail(ld.key("link"), link, "no such link");
    sc.load.force = ld.v3("force");
    sc.load.point = ld.v3("point");
    sc.load.spin = ld.num("spin");
    ld.finish();
  }
  ctrl.finish();
}

}  // namespace bigstep
