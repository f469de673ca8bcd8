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

bool ne_smooth_step(const Model& m, double dt, const VecX& th, const VecX& th_prev, const StepControl& u,
                    NeSmoothStep& out, uint32_t& status, VecX& th_next, const double* mass_scale) {
  const int n = m.n_q;
  const VecX& tau = u.tau;
  BIGSTEP_CHECK_ARG(th.size() == n && th_prev.size() == n && (tau.size() == 0 || tau.size() == n),
                    "theta/theta_prev/tau size", detail::concat(th.size(), "/", th_prev.size(), "/", tau.size()),
                    detail::concat("expected n_q = ", n, " (tau may be empty)"));
  const PdServo* pd = u.pd && u.pd->active() ? u.pd : nullptr;
  if (pd) validate_pd_servo(*pd, n, "control.pd");
  if (!th.allFinite() || !th_prev.allFinite() || !tau.allFinite()) {
    status |= STATUS_NONFINITE;
    th_next = th;
    return false;
  }
  const VecX v = (th - th_prev) / dt;
  crba(m, th, out.H, mass_scale);
  out.Hf.compute(out.H);
  VecX f = -nonlinear_effects(m, th, v, mass_scale);
  if (tau.size() != 0) f += tau;
  out.pd = pd != nullptr;
  out.tmp.resize(n);
  if (!pd) {
    out.Mf = out.Hf;
    out.tmp = out.Hf.solve(f);
    out.v_free = v + dt * out.tmp;
    return true;
  }
  // Tan's stable PD, targets at the end of the step (nmdp.md §8, §9)
  VecX& th_bar = out.th_bar;
  VecX& th_dot_bar = out.th_dot_bar;
  th_bar.resize(n);
  th_dot_bar.resize(n);
  pd->reference(u.t + dt, th_bar, th_dot_bar);
  BIGSTEP_CHECK_ARG(th_bar.size() == n && th_dot_bar.size() == n, "control.reference size",
                    detail::concat(th_bar.size(), "/", th_dot_bar.size()), detail::concat("expected n_q = ", n));
  f.array() -= pd->kp.array() * (th + dt * v - th_bar).array() + pd->kd.array() * (v - th_dot_bar).array();
  out.Mt = out.H;
  out.Mt.diagonal() += dt * pd->kd;
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

std::vector<ContactFrame> make_contact_buffer(const Model& m, int n_dirs) {
  std::vector<ContactFrame> buf(m.spheres.size() * m.planes.size());
  for (ContactFrame& f : buf) {
    f.t.resize(n_dirs);
    f.J.resize(3, m.n_q);
  }
  return buf;
}

int collect_contacts(const Model& m, const Kinematics& kin, double phi_max, int n_dirs, std::vector<ContactFrame>& buf) {
  int count = 0;
  for (size_t s = 0; s < m.spheres.size(); ++s) {
    const ContactSphere& sp = m.spheres[s];
    const Vec3 c = point_position(kin, sp.link, sp.centre);
    for (size_t p = 0; p < m.planes.size(); ++p) {
      const Plane& pl = m.planes[p];
      const double phi = pl.normal.dot(c) - pl.offset - sp.radius;
      if (phi > phi_max) continue;
      ContactFrame& f = buf[count++];
      f.sphere = int(s);
      f.plane = int(p);
      f.phi = phi;
      f.n = pl.normal;
      f.t.resize(n_dirs);
      tangent_directions(pl.normal, n_dirs, f.t);
      f.J.resize(3, m.n_q);
      // the contact point c - r n moves like the centre (n is constant for planes)
      point_jacobian(m, kin, sp.link, c, f.J);
    }
  }
  return count;
}

std::vector<ContactFrame> collect_contacts(const Model& m, const Kinematics& kin, double phi_max, int n_dirs) {
  std::vector<ContactFrame> buf = make_contact_buffer(m, n_dirs);
  buf.resize(size_t(collect_contacts(m, kin, phi_max, n_dirs, buf)));
  return buf;
}

}  // namespace bigstep
