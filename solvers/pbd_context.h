// What one PBD/PBFD timestep holds constant (theta_n, theta_{n-1}, tau, dt) and the
// per-rollout scratch the objectives reuse (spec pbfd.md §3, §4).
#pragma once
#include <vector>

#include "core/data.h"
#include "core/inertia.h"
#include "solvers/lm.h"
#include "solvers/contact_terms.h"
#include "solvers/stable_pd.h"

namespace bigstep {

/// Constants of one step. Built by make_step_input() from theta_n and theta_{n-1}.
struct PbdStepInput {
  double dt = 0.01;
  VecX tau;                       ///< (n_q) joint torques, constant over the step
  ContactParams cp;
  const double* mass_scale = nullptr;  ///< (n_link) the rollout's link mass scales (core/inertia.h), null = 1
  InertiaAnchor anchor;           ///< 2 T(theta_n) - T(theta_{n-1}) per link
  std::vector<Vec3> centre_n;     ///< (n_sphere) sphere centres at theta_n (p_n)
  // backward-Euler stable PD (nmdp.md §9, pbfd.md §4.1): tau_pd(theta) = -K_p (theta - theta_bar)
  // - K_d ((theta - theta_n)/dt - theta_dot_bar), targets at t_{n+1}; pd = false: no servo
  VecX kp, kd;                    ///< (n_q) gains
  VecX theta_bar, theta_dot_bar;  ///< (n_q) targets at the end of the step
  VecX theta_n;                   ///< (n_q) configuration at the start of the step
  bool pd = false;                ///< the servo is active this step (set_step_pd)
  bool has_pd() const { return pd; }
};

/// Per-rollout scratch sized from the Model (lives in the rollout's Data): nothing in a step
/// allocates once it exists.
struct PbdWorkspace : Workspace {
  explicit PbdWorkspace(const Model& m)
      : kin(m), kin_a(m), J(3, m.n_q), Jt_n(m.n_q), JtH(m.n_q, 3), r(m.n_q), Jr(m.n_q, m.n_q), lm(m.n_q) {
    in.anchor.R.resize(m.n_link);
    in.anchor.t.resize(m.n_link);
    in.centre_n.resize(m.spheres.size());
    in.tau.resize(m.n_q);
  }
  Kinematics kin;    ///< at the current iterate
  Kinematics kin_a;  ///< scratch for theta_n / theta_{n-1}
  MatX J;            ///< (3 x n_q) point Jacobian
  VecX Jt_n;         ///< (n_q) J^T n of a contact
  MatX JtH;          ///< (n_q x 3) J^T times a 3 x 3 contact matrix
  VecX r;            ///< (n_q) PBFD residual (Eq. 13)
  MatX Jr;           ///< (n_q x n_q) its Jacobian
  LmWorkspace lm;    ///< LM's iterates and matrices
  PbdStepInput in;   ///< the current step's constants
};

PbdStepInput make_step_input(const Model& m, const VecX& theta_n, const VecX& theta_nm1,
                             double dt, const VecX& tau, const ContactParams& cp, PbdWorkspace& ws);
/// Same into in (ws.in in a step: no allocation once sized); tau may be empty (= 0).
void make_step_input(const Model& m, const VecX& theta_n, const VecX& theta_nm1, double dt, const VecX& tau,
                     const ContactParams& cp, PbdWorkspace& ws, PbdStepInput& in);

/// Adds the stable-PD servo `pd` (validated against n_q, throws InvalidArgument) to a step input:
/// gains, theta_n and the targets at t_end (the step's end time); an inactive servo clears it.
void set_step_pd(const Model& m, const PdServo& pd, const VecX& theta_n, double t_end, PbdStepInput& in);

/// Calls f(c, d, n, u) for every (sphere, plane) pair in penetration (d > 0), with ws.J set to
/// the Jacobian of the sphere centre c. u = P_t (c - c_n). Needs forward_kinematics in ws.kin.
template <class F>
void for_each_active_contact(const Model& m, const PbdStepInput& in, PbdWorkspace& ws, F&& f) {
  for (size_t s = 0; s < m.spheres.size(); ++s) {
    const ContactSphere& sp = m.spheres[s];
    const Vec3 c = point_position(ws.kin, sp.link, sp.centre);
    bool have_J = false;
    for (const Plane& pl : m.planes) {
      const double d = -sphere_plane_phi(c, sp.radius, pl.normal, pl.offset);
      if (!(d > 0)) continue;
      if (!have_J) {
        point_jacobian(m, ws.kin, sp.link, c, ws.J);
        have_J = true;
      }
      const Vec3& n = pl.normal;
      const Vec3 dc = c - in.centre_n[s];
      const Vec3 u = dc - n * n.dot(dc);
      f(sp.link, c, d, n, u);
    }
  }
}

}  // namespace bigstep
