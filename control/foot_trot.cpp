// Foot-space trot plan (control/foot_trot.h): leg geometry from the Model, the analytic IK of a 3-DOF
// leg, and the torso's travel.
#include "control/foot_trot.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/kinematics.h"

namespace bigstep {

namespace {

const char* kFootSpaceKey = "control.reference.walk.foot_space";


// rotation by angle about the unit axis w
Mat3 rot(const Vec3& w, double angle) { return Eigen::AngleAxisd(angle, w).toRotationMatrix(); }

// the quintic smoothstep h(x) = 10 x^3 - 15 x^4 + 6 x^5 and its time rate h' xd
void smoothstep5(double x, double xd, double& h, double& hd) {
  h = x * x * x * (10 + x * (-15 + 6 * x));
  hd = 30 * x * x * (1 - x) * (1 - x) * xd;
}

// x + 2 pi k nearest to ref
double wrap_near(double x, double ref) { return x - 2 * M_PI * std::round((x - ref) / (2 * M_PI)); }

// the leg in the plane perpendicular to h, coordinates (x, y) along (e1 = a x h, a): hip offset c
// (o_h - o_a), thigh u (o_k - o_h) and shank w (f - o_k) at zero angles; the h components sum to d
struct Planar {
  Vec3 e1;
  double cx, cy, ux, uy, wx, wy, d;
};

Planar planar(const FootLeg& g) {
  Planar P;
  P.e1 = g.a.cross(g.h);
  const Vec3 c = g.o_h - g.o_a, u = g.o_k - g.o_h, w = g.f - g.o_k;
  P.cx = c.dot(P.e1);
  P.cy = c.dot(g.a);
  P.ux = u.dot(P.e1);
  P.uy = u.dot(g.a);
  P.wx = w.dot(P.e1);
  P.wy = w.dot(g.a);
  P.d = (c + u + w).dot(g.h);
  return P;
}

}  // namespace

Vec3 foot_leg_position(const FootLeg& g, const std::array<double, 3>& q, Mat3* J) {
  // product of exponentials about the zero-angle axes: p = o_a + R_a (o_h - o_a + R_h (o_k - o_h + R_k (f - o_k)))
  const Mat3 Ra = rot(g.a, q[0]), Rh = rot(g.h, q[1]), Rk = rot(g.s_k * g.h, q[2]);
  const Vec3 p = g.o_a + Ra * (g.o_h - g.o_a + Rh * (g.o_k - g.o_h + Rk * (g.f - g.o_k)));
  if (J) {
    // columns: current axis x (p - point on the current axis)
    const Vec3 oh = g.o_a + Ra * (g.o_h - g.o_a), ok = g.o_a + Ra * (g.o_h - g.o_a + Rh * (g.o_k - g.o_h));
    const Vec3 wh = Ra * g.h;
    J->col(0) = g.a.cross(p - g.o_a);
    J->col(1) = wh.cross(p - oh);
    J->col(2) = (g.s_k * wh).cross(p - ok);
  }
  return p;
}

bool foot_leg_ik(const FootLeg& g, const Vec3& p, std::array<double, 3>& q) {
  const Planar P = planar(g);
  bool reached = true;
  // abduction: rotating about a keeps q.a and |q_(e1,h)|; the leg at abduction 0 has h component d
  // and e1 component L_e = +-sqrt(|q_(e1,h)|^2 - d^2) (the stand pose's sign)
  const Vec3 r = p - g.o_a;
  const double qa = r.dot(g.a), qh = r.dot(g.h), qe = r.dot(P.e1);
  double rad = qe * qe + qh * qh - P.d * P.d;
  if (rad < 0) {
    rad = 0;
    reached = false;
  }
  const double Le = g.sign_e * std::sqrt(rad);
  // R(a, alpha) maps (L_e, d) in the (e1, h) coordinates to (qe, qh): a rotation by -alpha there
  q[0] = wrap_near(std::atan2(P.d, Le) - std::atan2(qh, qe), g.q_stand[0]);
  // hip and knee: the planar two-link chain c + Rot(beta) (u + Rot(s_k gamma) w) = (L_e, qa)
  const double tx = Le - P.cx, ty = qa - P.cy;
  const double nu = std::hypot(P.ux, P.uy), nw = std::hypot(P.wx, P.wy), nt2 = tx * tx + ty * ty;
  double c = (nt2 - nu * nu - nw * nw) / (2 * nu * nw);
  if (c > 1 || c < -1) {
    c = std::clamp(c, -1.0, 1.0);
    reached = false;
  }
  const double theta = g.sign_k * std::acos(c) - std::atan2(P.wy, P.wx) + std::atan2(P.uy, P.ux);
  q[2] = wrap_near(g.s_k * theta, g.q_stand[2]);
  const double vx = P.ux + std::cos(theta) * P.wx - std::sin(theta) * P.wy,
               vy = P.uy + std::sin(theta) * P.wx + std::cos(theta) * P.wy;
  q[1] = wrap_near(std::atan2(ty, tx) - std::atan2(vy, vx), g.q_stand[1]);
  return reached;
}

FootTrot foot_trot_setup(const Model& m, const VecX& stand, const std::vector<std::array<int, 3>>& legs) {
  FootTrot ft;
  for (int j = 0; j < m.n_link; ++j)
    if (m.link_joint[size_t(j)] == JointType::Floating && ft.base < 0) ft.base = m.link_dof_adr[size_t(j)];
  BIGSTEP_CHECK_ARG(ft.base >= 0, kFootSpaceKey, "true", "needs a floating base (the torso moves with the plan)");
  BIGSTEP_CHECK_ARG(stand.size() == m.n_q, kFootSpaceKey, stand.size(), "stand pose needs n_q values");
  const int torso = m.dof_link[size_t(ft.base)];
  Kinematics kin(m);
  // the torso at the stand pose: R0, and the world axis of the first translation DOF (u) and up
  forward_kinematics(m, stand, kin);
  const Mat3 R0 = kin.R[size_t(torso)];
  const Vec3 u = kin.w[size_t(ft.base)];
  const Vec3 g = m.gravity.norm() > 0 ? Vec3(-m.gravity.normalized()) : Vec3::UnitZ();
  ft.e = R0.transpose() * u;
  ft.R0 = R0;
  for (int k = 0; k < 3; ++k) ft.w_t[size_t(k)] = kin.w[size_t(ft.base + k)];
  ft.up = R0.transpose() * g;
  // zero base: the world frame is the torso frame
  VecX th = stand;
  th.segment(ft.base, 6).setZero();
  for (size_t l = 0; l < legs.size(); ++l) {
    const std::string lk = detail::concat("control.reference.legs[", l, "]");
    FootLeg L;
    L.dof = legs[l];
    for (int r = 0; r < 3; ++r)
      BIGSTEP_CHECK_ARG(L.dof[size_t(r)] >= 0, lk + (r == 0 ? ".abduction" : r == 1 ? ".hip" : ".knee"), "(missing)",
                        "foot_space needs abduction, hip and knee on every leg");
    // the foot: the first sphere geom (contact point) on the knee's link
    const int knee_link = m.dof_link[size_t(L.dof[2])];
    int geom = -1;
    for (int k = 0; k < int(m.geom_type.size()) && geom < 0; ++k)
      if (m.geom_link[size_t(k)] == knee_link && m.geom_type[size_t(k)] == GeomType::Sphere) geom = k;
    BIGSTEP_CHECK_ARG(geom >= 0, lk + ".knee", m.link_name[size_t(knee_link)], "foot_space needs a contact point on the knee's link");
    for (int r = 0; r < 3; ++r) L.q_stand[size_t(r)] = stand[L.dof[size_t(r)]];
    // geometry at zero leg angles
    VecX z = th;
    for (int r = 0; r < 3; ++r) z[L.dof[size_t(r)]] = 0;
    forward_kinematics(m, z, kin);
    L.o_a = kin.o[size_t(L.dof[0])];
    L.a = kin.w[size_t(L.dof[0])];
    L.o_h = kin.o[size_t(L.dof[1])];
    L.h = kin.w[size_t(L.dof[1])];
    L.o_k = kin.o[size_t(L.dof[2])];
    const Vec3 hk = kin.w[size_t(L.dof[2])];
    L.f = point_position(kin, knee_link, m.geom_pos[size_t(geom)]);
    L.geom = geom;
    for (int r = 0; r < 3; ++r)
      BIGSTEP_CHECK_ARG(m.dof_revolute[size_t(L.dof[size_t(r)])], lk, m.dof_name[size_t(L.dof[size_t(r)])],
                        "foot_space needs hinge joints");
    BIGSTEP_CHECK_ARG(std::abs(L.a.dot(L.h)) < 1e-9, lk + ".hip", L.a.dot(L.h), "hip axis must be perpendicular to the abduction axis");
    BIGSTEP_CHECK_ARG(hk.cross(L.h).norm() < 1e-9, lk + ".knee", hk.cross(L.h).norm(), "knee axis must be parallel to the hip axis");
    L.s_k = hk.dot(L.h) > 0 ? 1 : -1;
    // the stand pose's IK branches: sign of the leg's e1 component at abduction 0, knee bend side
    const Planar P = planar(L);
    const double c1 = std::cos(L.q_stand[1]), s1 = std::sin(L.q_stand[1]);
    const double theta = L.s_k * L.q_stand[2];
    const double vx = P.ux + std::cos(theta) * P.wx - std::sin(theta) * P.wy,
                 vy = P.uy + std::sin(theta) * P.wx + std::cos(theta) * P.wy;
    L.sign_e = P.cx + c1 * vx - s1 * vy >= 0 ? 1 : -1;
    const double psi = wrap_near(theta + std::atan2(P.wy, P.wx) - std::atan2(P.uy, P.ux), 0);
    L.sign_k = psi >= 0 ? 1 : -1;
    L.p_stand = foot_leg_position(L, L.q_stand);
    ft.legs.push_back(L);
  }
  return ft;
}

void foot_trot_base(double t, double v, double ramp, double& X, double& Xd) {
  // speed v r(t), r the smoothstep 3x^2 - 2x^3 over [0, ramp]; X = its integral from 0
  if (t <= 0) {
    X = Xd = 0;
  } else if (ramp <= 0 || t >= ramp) {
    X = v * (t - 0.5 * std::max(ramp, 0.0));
    Xd = v;
  } else {
    const double x = t / ramp;
    X = v * ramp * (x * x * x - 0.5 * x * x * x * x);
    Xd = v * x * x * (3 - 2 * x);
  }
}

double FootTrotGait::start() const {
  double t0 = 0;
  for (double ph : phase)
    if (ph < duty) t0 = std::max(t0, (0.5 * duty - ph) * period);
  return t0;
}

void foot_trot_foot(const FootTrot& ft, const FootTrotGait& gait, int l, double t, Vec3& p, Vec3& pd, bool& stance) {
  const FootLeg& L = ft.legs[size_t(l)];
  const double P = gait.period, D = gait.duty, v = gait.speed(), t0 = gait.start();
  double X, Xd;
  foot_trot_base(t - t0, v, gait.ramp, X, Xd);
  // gait cycle c and phase s; stance c is [t_s, t_s + D P), its foothold the travel at mid-stance
  const double ph = t / P + gait.phase[size_t(l)], c = std::floor(ph), s = ph - c;
  auto foothold = [&](double cycle) {
    double Xm, Xdm;
    foot_trot_base((cycle - gait.phase[size_t(l)] + 0.5 * D) * P - t0, v, gait.ramp, Xm, Xdm);
    return Xm;
  };
  const double F0 = foothold(c);
  // torso frame: p_T = p_stand + e (foot travel - X) + up height
  stance = s < D;
  if (stance) {
    p = L.p_stand + ft.e * (F0 - X);
    pd = -Xd * ft.e;
    return;
  }
  const double F1 = foothold(c + 1), sd = 1 / ((1 - D) * P), sg = (s - D) / (1 - D);
  double h, hd;
  smoothstep5(sg, sd, h, hd);
  const double om = 1 - sg, b = 64 * sg * sg * sg * om * om * om, bd = 192 * sg * sg * om * om * (om - sg) * sd;
  p = L.p_stand + ft.e * (F0 + (F1 - F0) * h - X) + ft.up * (gait.step_height * b);
  pd = ft.e * ((F1 - F0) * hd - Xd) + ft.up * (gait.step_height * bd);
}

namespace {

// the floating base's Euler rotation E = Rz(a) Ry(b) Rx(c) (rz, ry, rx, parent side first) and, for
// rates (ad, bd, cd), its body-frame angular velocity: E^T dE/dt = skew(om)
Mat3 euler(double a, double b, double c) {
  return (Eigen::AngleAxisd(a, Vec3::UnitZ()) * Eigen::AngleAxisd(b, Vec3::UnitY()) * Eigen::AngleAxisd(c, Vec3::UnitX()))
      .toRotationMatrix();
}

Vec3 euler_body_rate(double b, double c, double ad, double bd, double cd) {
  const Mat3 Rx = Eigen::AngleAxisd(c, Vec3::UnitX()).toRotationMatrix();
  const Mat3 Ry = Eigen::AngleAxisd(b, Vec3::UnitY()).toRotationMatrix();
  return Rx.transpose() * (Ry.transpose() * Vec3::UnitZ() * ad + Vec3::UnitY() * bd) + Vec3::UnitX() * cd;
}

// one leg's angles q and rates qd = J^-1 pd for a foot at p with velocity pd (torso frame)
void leg_ik_rates(const FootLeg& L, const Vec3& p, const Vec3& pd, std::array<double, 3>& q, Vec3& qd) {
  foot_leg_ik(L, p, q);
  Mat3 J;
  foot_leg_position(L, q, &J);
  qd = J.partialPivLu().solve(pd);
}

// the same into th, thd
void leg_to_joints(const FootLeg& L, const Vec3& p, const Vec3& pd, VecX& th, VecX& thd) {
  std::array<double, 3> q;
  Vec3 qd;
  leg_ik_rates(L, p, pd, q, qd);
  for (int r = 0; r < 3; ++r) {
    th[L.dof[size_t(r)]] = q[size_t(r)];
    thd[L.dof[size_t(r)]] = qd[r];
  }
}

}  // namespace

void foot_trot_eval_state(const FootTrot& ft, const FootTrotGait& gait, double t, double t_mode, const VecX& theta,
                          const VecX& v, double* mem, VecX& th, VecX& thd) {
  foot_trot_eval(ft, gait, t, th, thd);
  // actual torso relative to the planned one (the plan keeps the stand orientation R0):
  // R0^T R = E(stand)^T E(theta); body rate om; d = o_plan - o, dd its rate (world)
  const int b = ft.base;
  const Mat3 Rrel = euler(th[b + 3], th[b + 4], th[b + 5]).transpose() * euler(theta[b + 3], theta[b + 4], theta[b + 5]);
  const Mat3 R = ft.R0 * Rrel;
  const Vec3 om = euler_body_rate(theta[b + 4], theta[b + 5], v[b + 3], v[b + 4], v[b + 5]);
  Vec3 d = Vec3::Zero(), dd = Vec3::Zero();
  for (int k = 0; k < 3; ++k) {
    d += ft.w_t[size_t(k)] * (th[b + k] - theta[b + k]);
    dd += ft.w_t[size_t(k)] * (thd[b + k] - v[b + k]);
  }
  // a torso-frame foot (p, pd) of the plan mapped into the actual torso pose:
  // p_A = R^T (d + R0 p), p_A_dot = R^T (dd + R0 pd) - om x p_A
  auto to_actual = [&](const Vec3& p, const Vec3& pd, Vec3& pa, Vec3& pad) {
    pa = R.transpose() * (d + ft.R0 * p);
    pad = R.transpose() * (dd + ft.R0 * pd) - om.cross(pa);
  };
  // re-planning (head comment): the landing shift Delta = k (v_T - v_plan) on the horizontal, from
  // t_mode and v only (the calls at t and t + dt of a step update mem alike)
  const bool replan = gait.replan > 0 && mem != nullptr;
  Vec3 shift = Vec3::Zero();
  if (replan) {
    double X, Xd;
    foot_trot_base(t_mode - gait.start(), gait.speed(), gait.ramp, X, Xd);
    Vec3 ve = -Xd * ft.w_t[0];
    for (int k = 0; k < 3; ++k) ve += ft.w_t[size_t(k)] * v[b + k];
    const Vec3 up = ft.R0 * ft.up;
    shift = gait.replan * (ve - up * up.dot(ve));
  }
  // leg l's foothold offset at time tt (world) and its rate: D in stance (D' from the step that
  // lands), D + (D' - D) h(sigma) in swing
  auto offset = [&](int l, double tt, Vec3& Dw, Vec3& Dwd) {
    const double* m = mem + kFootTrotMemory * l;
    const Vec3 D(m[0], m[1], m[2]), Dn(m[3], m[4], m[5]);
    const double ph = tt / gait.period + gait.phase[size_t(l)], c = std::floor(ph), s = ph - c;
    Dwd.setZero();
    if (s < gait.duty) {
      Dw = c == m[6] ? D : Dn;
      return;
    }
    double h, hd;
    smoothstep5((s - gait.duty) / (1 - gait.duty), 1 / ((1 - gait.duty) * gait.period), h, hd);
    Dw = D + (Dn - D) * h;
    Dwd = (Dn - D) * hd;
  };
  for (int l = 0; l < int(ft.legs.size()); ++l) {
    const FootLeg& L = ft.legs[size_t(l)];
    Vec3 p, pd, pa, pad, Dw = Vec3::Zero(), Dwd = Vec3::Zero();
    bool stance;
    foot_trot_foot(ft, gait, l, t_mode, p, pd, stance);
    if (replan) {
      // memory: a stance that began takes the last swing's landing offset; a swing tracks Delta
      double* m = mem + kFootTrotMemory * l;
      const double c = std::floor(t_mode / gait.period + gait.phase[size_t(l)]);
      if (stance && c != m[6]) {
        for (int k = 0; k < 3; ++k) m[k] = m[3 + k];
        m[6] = c;
      }
      if (!stance)
        for (int k = 0; k < 3; ++k) m[3 + k] = shift[k];
      offset(l, t, Dw, Dwd);
      Dw = ft.R0.transpose() * Dw;  // into the planned torso frame
      Dwd = ft.R0.transpose() * Dwd;
    }
    if (stance) {
      // settle (gait.settle): time into the stance at t (the phase at t_mode says stance)
      const double ph = t / gait.period + gait.phase[size_t(l)], tau = (ph - std::floor(ph)) * gait.period;
      if (!(gait.settle > 0) || tau >= gait.settle || tau >= gait.duty * gait.period) {
        if (replan) {  // the planned torso pose over the foothold taken
          foot_trot_foot(ft, gait, l, t, p, pd, stance);
          leg_to_joints(L, p + Dw, pd + Dwd, th, thd);
        }
        continue;
      }
      const double x = tau / gait.settle, w = 1 - x * x * x * (10 + x * (-15 + 6 * x));
      const double wd = -30 * x * x * (1 - x) * (1 - x) / gait.settle;
      foot_trot_foot(ft, gait, l, t, p, pd, stance);
      if (replan) {  // both poses over the foothold taken
        p += Dw;
        pd += Dwd;
        leg_to_joints(L, p, pd, th, thd);
      }
      to_actual(p, pd, pa, pad);
      std::array<double, 3> q;
      Vec3 qd;
      leg_ik_rates(L, pa, pad, q, qd);
      for (int r = 0; r < 3; ++r) {
        const int k = L.dof[size_t(r)];
        const double dq = q[size_t(r)] - th[k];
        th[k] += w * dq;
        thd[k] += w * (qd[r] - thd[k]) + wd * dq;
      }
      continue;
    }
    foot_trot_foot(ft, gait, l, t, p, pd, stance);
    if (replan) {  // the path between the footholds taken and to be taken
      p += Dw;
      pd += Dwd;
    }
    to_actual(p, pd, pa, pad);
    leg_to_joints(L, pa, pad, th, thd);
  }
}

bool foot_trot_planned_contact(const FootTrot& ft, const FootTrotGait& gait, double t, int geom_a, int geom_b) {
  for (size_t l = 0; l < ft.legs.size(); ++l) {
    const int g = ft.legs[l].geom;
    if (g != geom_a && g != geom_b) continue;
    // stance: gait phase s = frac(t / P + phase) in [0, duty) (foot_trot_foot)
    const double ph = t / gait.period + gait.phase[l];
    return ph - std::floor(ph) < gait.duty;
  }
  return true;
}

void foot_trot_eval(const FootTrot& ft, const FootTrotGait& gait, double t, VecX& th, VecX& thd) {
  double X, Xd;
  foot_trot_base(t - gait.start(), gait.speed(), gait.ramp, X, Xd);
  th[ft.base] += X;
  thd[ft.base] = Xd;
  for (int l = 0; l < int(ft.legs.size()); ++l) {
    const FootLeg& L = ft.legs[size_t(l)];
    Vec3 p, pd;
    bool stance;
    foot_trot_foot(ft, gait, l, t, p, pd, stance);
    leg_to_joints(L, p, pd, th, thd);
  }
}

}  // namespace bigstep
