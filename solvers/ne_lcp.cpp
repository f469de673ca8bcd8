// NE dry-friction LCP step (spec pbfd.md §7 [choice]): semi-implicit Euler at velocity level
//   H (v+ - v) = h (tau - c - grad V) + sum_p J_p^T (n lambda_p + D_p beta_p)
//   (with the stable PD servo: M~ = H + h K_d replaces H and the PD torque of nmdp.md §8 joins tau)
//   0 <= lambda ⊥ n^T J v+ + phi / h >= 0          (non-penetration with position correction)
//   0 <= beta   ⊥ D^T J v+ + e gamma >= 0           (friction along the cone edges)
//   0 <= gamma  ⊥ mu lambda - e^T beta >= 0          (Coulomb cone)
//   theta+ = theta + h v+
// Departure from the spec: a contact compliance cfm * max(diag G) is added to the Delassus
// diagonal (default cfm = 1e-6). With many coplanar contacts G is rank deficient and Lemke's
// pivoting ended in ray termination (chain on the slope, 40 contacts, dt = 1 ms). A failed solve
// is retried with 100x and 10^4 x that compliance before the step is flagged NOT_CONVERGED.
// A "solution" is accepted only when it satisfies the LCP to 1e-6 (relative) after Lemke's final
// basis is re-solved from the data: thousands of tableau pivots on a resting 40-contact chain
// used to leave round-off that was accepted as a solution and injected energy (bench Fig. 6).
// cpu-only: the Newton-Euler baselines are CPU comparisons (their GPU form is not a goal).
#include "solvers/ne_lcp.h"

#include <cmath>

#include "core/error.h"

namespace bigstep {

namespace {
// per-rollout scratch: kinematics at theta_n and Lemke's tableau
struct NeLcpWorkspace : Workspace {
  NeLcpWorkspace(const Model& m, const NeSettings& s)
      : kin(m), lcp(int(m.spheres.size() * m.planes.size()) * (2 + s.friction_directions) + 1) {}
  Kinematics kin;
  LcpWorkspace lcp;
};
}  // namespace

NeLcpIntegrator::NeLcpIntegrator(const Model& m, const NeSettings& s) : Integrator(m), s_(s) {
  validate_ne_settings(s_);
}

RolloutParams NeLcpIntegrator::default_params() const {
  RolloutParams p;
  p.contact.mu = s_.mu;
  return p;
}

std::unique_ptr<Workspace> NeLcpIntegrator::make_workspace() const {
  return std::make_unique<NeLcpWorkspace>(m_, s_);
}

StepStats NeLcpIntegrator::advance(const VecX& th, const VecX& th_prev, const StepControl& u, const RolloutParams& p,
                                   Data& d, VecX& th_next) const {
  NeLcpWorkspace& ws = static_cast<NeLcpWorkspace&>(*d.ws);
  const double mu = p.contact.mu;
  StepStats st;
  const int n = m_.n_q;
  const double h = s_.dt;
  // smooth dynamics at the start of the step; with Tan's stable PD the impulse acts through
  // M~ = H + h K_d (nmdp.md §8): M~ (v+ - v_free) = sum_p J_p^T (n lambda_p + D_p beta_p)
  NeSmoothStep sm;
  if (!ne_smooth_step(m_, h, th, th_prev, u, sm, st.status, th_next, p.link_mass_scale)) return st;
  const Eigen::LDLT<MatX>& Hf = sm.Mf;
  const VecX& v_star = sm.v_free;
  forward_kinematics(m_, th, ws.kin);
  const auto contacts = collect_contacts(m_, ws.kin, s_.active_distance, s_.friction_directions);
  const int nc = int(contacts.size()), nd = s_.friction_directions;
  if (nc == 0) {
    th_next = th + h * v_star;
    return st;
  }
  // generalized directions: rows of Jn (nc x n) and Jd (nc nd x n)
  MatX Jn(nc, n), Jd(nc * nd, n);
  VecX phi(nc);
  for (int c = 0; c < nc; ++c) {
    Jn.row(c) = contacts[c].n.transpose() * contacts[c].J;
    for (int i = 0; i < nd; ++i) Jd.row(c * nd + i) = contacts[c].t[i].transpose() * contacts[c].J;
    phi[c] = contacts[c].phi;
  }
  MatX Jall(nc * (1 + nd), n);
  Jall << Jn, Jd;
  const MatX HinvJt = Hf.solve(Jall.transpose());  // n x (nc (1 + nd))
  const MatX G = Jall * HinvJt;                     // Delassus operator
  // LCP in (lambda, beta, gamma)
  const int N = nc * (2 + nd);
  MatX M = MatX::Zero(N, N);
  VecX q = VecX::Zero(N);
  M.topLeftCorner(nc * (1 + nd), nc * (1 + nd)) = G;
  // contact compliance (CFM): many coplanar contacts make G rank deficient, and Lemke's
  // lexicographic pivoting then fails numerically; a tiny diagonal keeps it well posed
  const double gmax = G.diagonal().maxCoeff();
  M.topLeftCorner(nc * (1 + nd), nc * (1 + nd)).diagonal().array() += s_.cfm * gmax;
  for (int c = 0; c < nc; ++c) {
    const int g = nc * (1 + nd) + c;
    for (int i = 0; i < nd; ++i) {
      M(nc + c * nd + i, g) = 1;   // D^T J v+ + gamma
      M(g, nc + c * nd + i) = -1;  // - e^T beta
    }
    M(g, c) = mu;               // mu lambda
  }
  q.head(nc) = Jn * v_star + phi / h;
  q.segment(nc, nc * nd) = Jd * v_star;
  // Lemke; when it ends without a solution (numerical ray termination on degenerate contact sets)
  // retry twice with 100x more compliance, flagging the step as restarted
  LcpResult r;
  LcpStatus ls = ws.lcp.solve(M, q, r);
  st.iterations = r.pivots;
  for (int retry = 1; retry <= 2 && ls != LcpStatus::Solved; ++retry) {
    M.topLeftCorner(nc * (1 + nd), nc * (1 + nd)).diagonal().array() += (std::pow(100.0, retry) - std::pow(100.0, retry - 1)) * s_.cfm * gmax;
    ls = ws.lcp.solve(M, q, r);
    st.iterations += r.pivots;
    st.status |= STATUS_RESTARTED;
  }
  VecX v_plus = v_star;
  if (ls == LcpStatus::Solved) {
    v_plus += HinvJt * r.z.head(nc * (1 + nd));
    st.residual = r.error;  // relative LCP violation of the accepted solution (lcp_lemke.h)
  } else {
    st.status |= STATUS_NOT_CONVERGED;  // no contact impulse found: the step is flagged
  }
  th_next = th + h * v_plus;
  if (!th_next.allFinite()) {
    st.status |= STATUS_NONFINITE;
    th_next = th;
  }
  return st;
}

}  // namespace bigstep
