#include "solvers/ne_contact.h"

#include <cmath>

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
  BIGSTEP_CHECK_ARG(std::isfinite(s.cfm) && s.cfm >= 0, "contact.cfm", s.cfm, "must be finite and >= 0");
  BIGSTEP_CHECK_ARG(s.max_correction_speed > 0, "contact.max_correction_speed", s.max_correction_speed,
                    "must be > 0 (1e9: the spec's depth / dt)");
  BIGSTEP_CHECK_ARG(std::isfinite(s.k_c) && s.k_c >= 0, "contact.k_c", s.k_c, "must be finite and >= 0 (0 = auto)");
  BIGSTEP_CHECK_ARG(std::isfinite(s.d_ref) && s.d_ref > 0, "contact.d_ref", s.d_ref, "must be finite and > 0");
  BIGSTEP_CHECK_ARG(std::isfinite(s.zeta) && s.zeta >= 0, "contact.zeta", s.zeta, "must be finite and >= 0");
}

bool ne_smooth_step(const Model& m, double dt, const VecX& th, const VecX& th_prev, const VecX& tau,
                    NeSmoothStep& out, uint32_t& status, VecX& th_next) {
  StepControl u;
  u.tau = tau;
  return ne_smooth_step(m, dt, th, th_prev, u, out, status, th_next);
}

NeSmoothStep::NeSmoothStep(const Model& m)
    : H(MatX::Zero(m.n_q, m.n_q)), Mt(MatX::Zero(m.n_q, m.n_q)), Mf(m.n_q), v_free(VecX::Zero(m.n_q)),
      v(VecX::Zero(m.n_q)), f(VecX::Zero(m.n_q)), th_bar(VecX::Zero(m.n_q)), th_dot_bar(VecX::Zero(m.n_q)),
      tmp(VecX::Zero(m.n_q)), crba(m), rnea(m) {}

bool ne_smooth_step(const Model& m, double dt, const VecX& th, const VecX& th_prev, const StepControl& u,
                    NeSmoothStep& out, uint32_t& status, VecX& th_next, const double* mass_scale) {
  const int n = m.n_q;
  const VecX& tau = u.tau;
  BIGSTEP_CHECK_ARG(th.size() == n && th_prev.size() == n && (tau.size() == 0 || tau.size() == n),
                    "theta/theta_prev/tau size", detail::concat(th.size(), "/", th_prev.size(), "/", tau.size()),
                    detail::concat("expected n_q = ", n, " (tau may be empty)"));
  BIGSTEP_CHECK_ARG(out.H.rows() == n && out.v.size() == n, "NeSmoothStep size", out.H.rows(),
                    "the NeSmoothStep must be built from this model");
  const PdServo* pd = u.pd && u.pd->active() ? u.pd : nullptr;
  if (pd) validate_pd_servo(*pd, n, "control.pd");
  if (!th.allFinite() || !th_prev.allFinite() || !tau.allFinite()) {
    status |= STATUS_NONFINITE;
    th_next = th;
    return false;
  }
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
    // Tan's stable PD, targets at the end of the step (nmdp.md §8, §9)
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
  return true;
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
    : set(m), frames(size_t(m.max_contacts)), Ja(MatX::Zero(3, m.n_q)), Jb(MatX::Zero(3, m.n_q)) {
  for (ContactFrame& f : frames) {
    f.t.resize(size_t(n_dirs));
    f.J.setZero(3, m.n_q);
  }
}

void NeContacts::update(const Model& m, const Kinematics& kin, const VecX& theta, double phi_max, int n_dirs) {
  set.update(m, kin, theta, phi_max);  // depth >= -phi_max, i.e. phi <= phi_max
  n_con = set.n_con;
  n_lim = set.n_lim;
  for (int i = 0; i < n_con; ++i) {
    const Contact& c = set.con[i];
    ContactFrame& f = frames[i];
    f.contact = i;
    f.phi = -c.depth;
    f.n = c.n;
    tangent_directions(c.n, n_dirs, f.t);
    contact_core_jacobians(m, kin, c, Ja, Jb, f.J);  // J = J_a(c_a) - J_b(c_b)
  }
}

}  // namespace bigstep
