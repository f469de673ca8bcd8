#include "solvers/terms/ne_contact.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/crba.h"
#include "core/error.h"
#include "core/rnea.h"

namespace bigstep {

void validate_ne_settings(const NeSettings& s) {
  BIGSTEP_CHECK_ARG(std::isfinite(s.dt) && s.dt > 0, "integrator.dt", s.dt, "must be finite and > 0");
  BIGSTEP_CHECK_ARG(std::isfinite(s.mu) && s.mu >= 0, "contact.mu", s.mu, "must be finite and >= 0");
  BIGSTEP_CHECK_ARG(s.friction_directions >= 2 && s.friction_directions <= 16 && s.friction_directions % 2 == 0,
                    "contact.friction_directions", s.friction_directions, "must be an even number in [2, 16]");
  BIGSTEP_CHECK_ARG(std::isfinite(s.active_distance) && s.active_distance >= 0, "contact.active_distance",
                    s.active_distance, "must be finite and >= 0");
  BIGSTEP_CHECK_ARG(s.relinearizations >= 0 && s.relinearizations <= 100, "contact.relinearizations",
                    s.relinearizations, "must be in [0, 100]");
  BIGSTEP_CHECK_ARG(std::isfinite(s.cfm) && s.cfm >= 0, "contact.cfm", s.cfm, "must be finite and >= 0");
  BIGSTEP_CHECK_ARG(s.max_correction_speed > 0, "contact.max_correction_speed", s.max_correction_speed,
                    "must be > 0 (1e9: the literal depth / dt)");
  BIGSTEP_CHECK_ARG(std::isfinite(s.k_c) && s.k_c >= 0, "contact.k_c", s.k_c, "must be finite and >= 0 (0 = auto)");
  BIGSTEP_CHECK_ARG(std::isfinite(s.d_ref) && s.d_ref > 0, "contact.d_ref", s.d_ref, "must be finite and > 0");
  BIGSTEP_CHECK_ARG(std::isfinite(s.zeta) && s.zeta >= 0, "contact.zeta", s.zeta, "must be finite and >= 0");
}

NeSmoothStep::NeSmoothStep(const Model& m)
    : H(MatX::Zero(m.n_q, m.n_q)), Mt(MatX::Zero(m.n_q, m.n_q)), Mf(m.n_q), v_free(VecX::Zero(m.n_q)),
      v(VecX::Zero(m.n_q)), f(VecX::Zero(m.n_q)), th_bar(VecX::Zero(m.n_q)), th_dot_bar(VecX::Zero(m.n_q)),
      tmp(VecX::Zero(m.n_q)), crba(m), rnea(m) {}

void ne_smooth_step(const Model& m, double dt, const VecX& th, const VecX& th_prev, const StepControl& u,
                    NeSmoothStep& out, const double* mass_scale) {
  const int n = m.n_q;
  const VecX& tau = u.tau;
  BIGSTEP_CHECK_ARG(out.H.rows() == n && out.v.size() == n, "NeSmoothStep size", out.H.rows(),
                    "the NeSmoothStep must be built from this model");
  const PdServo* pd = u.pd && u.pd->active() ? u.pd : nullptr;
  if (pd) validate_pd_servo(*pd, n, "control.pd");
  VecX& v = out.v;
  VecX& f = out.f;
  v = (th - th_prev) / dt;
  // H + diag(a): armature is rotor inertia on the DOF (common.md), kinetic like the links' own
  crba(m, th, out.H, out.crba, mass_scale);
  using CMap = Eigen::Map<const VecX>;
  const CMap armature(m.dof_armature.data(), n), damping(m.dof_damping.data(), n);
  if (m.has_damping_armature) out.H.diagonal() += armature;
  nonlinear_effects(m, th, v, f, out.rnea, mass_scale);
  f = -f;
  if (tau.size() != 0) f += tau;
  out.pd = pd != nullptr;
  out.damped = m.has_damping_armature && (damping.array() > 0).any();
  // implicit damping: (H + dt diag(b)) v+ = H v + dt (f - ...) <=> v+ = v + dt M~^-1 (f - b .* v)
  if (out.damped) f.array() -= damping.array() * v.array();
  // joint spring -k (theta_n - ref), explicit at theta_n: MuJoCo's Euler integrator takes
  // qfrc_spring at qpos and only the damping implicitly, so a contact-free NE step equals its
  // Euler step at the same dt (with k = 0 nothing is added: results stay bit-identical)
  if (m.has_stiffness)
    for (int k = 0; k < n; ++k)
      if (m.dof_stiffness[k] != 0) f[k] -= m.dof_stiffness[k] * (th[k] - m.dof_springref[k]);
  if (pd) {
    // Tan's stable PD, targets at the end of the step (docs/methods/newton_euler.md §3, §4)
    VecX& th_bar = out.th_bar;
    VecX& th_dot_bar = out.th_dot_bar;
    pd->reference(u.t + dt, th_bar, th_dot_bar);
    BIGSTEP_CHECK_ARG(th_bar.size() == n && th_dot_bar.size() == n, "control.reference size",
                      detail::concat(th_bar.size(), "/", th_dot_bar.size()), detail::concat("expected n_q = ", n));
    f.array() -= pd->kp.array() * (th + dt * v - th_bar).array() + pd->kd.array() * (v - th_dot_bar).array();
  }
  // M~ = H + dt diag(b) + dt K_d: LDLT::compute on a factor already sized n_q does not allocate
  out.Mt = out.H;
  if (out.damped) out.Mt.diagonal() += dt * damping;
  if (pd) out.Mt.diagonal() += dt * pd->kd;
  out.Mf.compute(out.Mt);
  out.tmp = out.Mf.solve(f);
  out.v_free = v + dt * out.tmp;
}

void tangent_directions(const Vec3& n, int k, std::vector<Vec3>& t) {
  Vec3 t1 = Vec3::UnitX() - n * n.x();
  if (t1.norm() < 1e-6) t1 = Vec3::UnitY() - n * n.y();
  t1.normalize();
  const Vec3 t2 = n.cross(t1);
  for (int i = 0; i < k; ++i) {
    const double a = 2 * M_PI * i / k;
    t[i] = std::cos(a) * t1 + std::sin(a) * t2;
  }
}

std::vector<Vec3> tangent_directions(const Vec3& n, int k) {
  std::vector<Vec3> t(k);
  tangent_directions(n, k, t);
  return t;
}

NeContacts::NeContacts(const Model& m, int n_dirs)
    : set(m), frames(size_t(m.max_contacts)), Ja(MatX::Zero(3, m.n_q)), Jb(MatX::Zero(3, m.n_q)),
      link_reach(size_t(m.n_link), -1.0) {
  for (ContactFrame& f : frames) {
    f.t.resize(size_t(n_dirs));
    f.J.setZero(3, m.n_q);
  }
  // reach of each link's geoms from its origin: |geom origin| + the shape's extent around it
  // (-1: no geom, the link's motion cannot make a contact)
  for (int g = 0; g < m.n_geom; ++g) {
    const int j = m.geom_link[g];
    if (j < 0) continue;
    const Vec3& sz = m.geom_size[g];
    double extent = 0;
    switch (m.geom_type[g]) {
      case GeomType::Plane:
      case GeomType::HeightField: extent = std::numeric_limits<double>::infinity(); break;
      case GeomType::Sphere: extent = sz[0]; break;
      case GeomType::Capsule: extent = sz[0] + sz[1]; break;
      case GeomType::Box: extent = sz.norm(); break;
    }
    link_reach[j] = std::max(link_reach[j], m.geom_pos[g].norm() + extent);
  }
}

void NeContacts::fill_frame(const Model& m, const Kinematics& kin, int i, int n_dirs) {
  const Contact& c = set.con[i];
  ContactFrame& f = frames[i];
  f.contact = i;
  f.phi = -c.depth;
  f.n = c.n;
  tangent_directions(c.n, n_dirs, f.t);
  contact_core_jacobians(m, kin, c, Ja, Jb, f.J);  // J = J_a(c_a) - J_b(c_b)
}

void NeContacts::update(const Model& m, const Kinematics& kin, const VecX& theta, double phi_max, int n_dirs) {
  set.update(m, kin, theta, phi_max);  // depth >= -phi_max, i.e. phi <= phi_max
  n_con = set.n_con;
  n_lim = set.n_lim;
  for (int i = 0; i < n_con; ++i) fill_frame(m, kin, i, n_dirs);
}

void NeContacts::update_speculative(const Model& m, const Kinematics& kin, const Kinematics& kin_next,
                                    const VecX& theta, const VecX& v, double h, double phi_0, double k, int n_dirs) {
  // candidates: a point x of link j moves by |R'x + t' - R x - t| <= |t' - t| + |R' - R|_2 |x| over
  // the step, |R' - R|_2 = 2 sin(angle / 2) = sqrt(3 - tr(R^T R')); a pair's gap closes by at most
  // the sum of its two links' bounds d_j (a world geom does not move), so the two largest d_j
  // bound every pair. The prediction below is first order, hence the same factor k here.
  double d1 = 0, d2 = 0;
  for (int j = 0; j < m.n_link; ++j) {
    if (link_reach[size_t(j)] < 0) continue;
    const double rot = std::sqrt(std::max(0.0, 3 - (kin.R[j].transpose() * kin_next.R[j]).trace()));
    const double d = (kin_next.t[j] - kin.t[j]).norm() + rot * link_reach[size_t(j)];
    if (d > d1) d2 = d1, d1 = d;
    else if (d > d2) d2 = d;
  }
  double margin = phi_0 + k * (d1 + d2);
  if (!(margin < 1e6)) margin = 1e6;  // a plane on a moving link (infinite reach): every pair
  n_con = set.n_con = collide(m, kin, margin, set.con.data(), int(set.con.size()), set.status);
  // every limited DOF's nearer stop is a candidate: its gap and speed are one coordinate each
  n_lim = set.n_lim = joint_limits(m, theta, std::numeric_limits<double>::infinity(), set.lim.data());
  // keep the rows that are active or predicted to be within phi_0 at the end of the step,
  // compacting set.con / frames (swapped: no copy of J) and set.lim in their order
  const auto reachable = [&](double phi, double vn) { return phi <= phi_0 || phi + k * h * std::min(vn, 0.0) <= phi_0; };
  int kept = 0;
  for (int i = 0; i < n_con; ++i) {
    if (i != kept) {
      std::swap(set.con[size_t(kept)], set.con[size_t(i)]);
      std::swap(frames[size_t(kept)], frames[size_t(i)]);
    }
    fill_frame(m, kin, kept, n_dirs);
    const ContactFrame& f = frames[size_t(kept)];
    double vn = 0;  // n^T J v, by columns: no temporary
    for (int q = 0; q < m.n_q; ++q) vn += f.n.dot(f.J.col(q)) * v[q];
    if (reachable(f.phi, vn)) ++kept;
  }
  n_con = set.n_con = kept;
  kept = 0;
  for (int l = 0; l < n_lim; ++l) {
    const LimitContact lc = set.lim[size_t(l)];
    if (reachable(-lc.depth, lc.s * v[lc.dof])) set.lim[size_t(kept++)] = lc;
  }
  n_lim = set.n_lim = kept;
}

}  // namespace bigstep
