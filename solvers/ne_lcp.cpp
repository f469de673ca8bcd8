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
// and every per-step buffer, sized for all (sphere, plane) pairs in contact: a step does not allocate
struct NeLcpWorkspace : Workspace {
  NeLcpWorkspace(const Model& m, const NeSettings& s)
      : kin(m),
        lcp(int(m.spheres.size() * m.planes.size()) * (2 + s.friction_directions) + 1),
        contacts(make_contact_buffer(m, s.friction_directions)) {
    const int n = m.n_q, nd = s.friction_directions;
    const int rows = int(contacts.size()) * (1 + nd), N = int(contacts.size()) * (2 + nd);
    sm.H.resize(n, n);
    Jall.resize(rows, n);
    HinvJt.resize(n, rows);
    G.resize(rows, rows);
    M.resize(N, N);
    q.resize(N);
    z.resize(N);
    w.resize(N);
    phi.resize(int(contacts.size()));
    tmp.resize(n);
    v_plus.resize(n);
  }
  Kinematics kin;
  LcpWorkspace lcp;
  NeSmoothStep sm;
  std::vector<ContactFrame> contacts;
  MatX Jall, HinvJt, G, M;  // storage of packed (nc (1 + nd) x n), ..., (N x N) maps
  VecX q, z, w, phi, tmp, v_plus;
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
  NeSmoothStep& sm = ws.sm;
  if (!ne_smooth_step(m_, h, th, th_prev, u, sm, st.status, th_next, p.link_mass_scale)) return st;
  const Eigen::LDLT<MatX>& Hf = sm.Mf;
  const VecX& v_star = sm.v_free;
  forward_kinematics(m_, th, ws.kin);
  const int nc = collect_contacts(m_, ws.kin, s_.active_distance, s_.friction_directions, ws.contacts);
  const std::vector<ContactFrame>& contacts = ws.contacts;
  const int nd = s_.friction_directions;
  if (nc == 0) {
    th_next = th + h * v_star;
    return st;
  }
  // generalized directions: rows of Jall = [Jn (nc x n); Jd (nc nd x n)]
  const int nr = nc * (1 + nd);
  // packed maps over the max-size buffers: the memory layout of freshly sized matrices
  Eigen::Map<MatX> Jall(ws.Jall.data(), nr, n);
  auto Jn = Jall.topRows(nc);
  auto Jd = Jall.middleRows(nc, nc * nd);
  auto phi = ws.phi.head(nc);
  for (int c = 0; c < nc; ++c) {
    Jn.row(c).noalias() = contacts[c].n.transpose() * contacts[c].J;
    for (int i = 0; i < nd; ++i) Jd.row(c * nd + i).noalias() = contacts[c].t[i].transpose() * contacts[c].J;
    phi[c] = contacts[c].phi;
  }
  Eigen::Map<MatX> HinvJt(ws.HinvJt.data(), n, nr);  // n x (nc (1 + nd))
  HinvJt = Hf.solve(Jall.transpose());
  Eigen::Map<MatX> G(ws.G.data(), nr, nr);  // Delassus operator
  G.noalias() = Jall * HinvJt;
  // LCP in (lambda, beta, gamma)
  const int N = nc * (2 + nd);
  Eigen::Map<MatX> M(ws.M.data(), N, N);
  auto q = ws.q.head(N);
  M.setZero();
  q.setZero();
  M.topLeftCorner(nr, nr) = G;
  // contact compliance (CFM): many coplanar contacts make G rank deficient, and Lemke's
  // lexicographic pivoting then fails numerically; a tiny diagonal keeps it well posed
  const double gmax = G.diagonal().maxCoeff();
  M.topLeftCorner(nr, nr).diagonal().array() += s_.cfm * gmax;
  for (int c = 0; c < nc; ++c) {
    const int g = nr + c;
    for (int i = 0; i < nd; ++i) {
      M(nc + c * nd + i, g) = 1;   // D^T J v+ + gamma
      M(g, nc + c * nd + i) = -1;  // - e^T beta
    }
    M(g, c) = mu;               // mu lambda
  }
  q.head(nc).noalias() = Jn * v_star;  // + phi / h, the product first as in an expression temporary
  q.head(nc) += phi / h;
  q.segment(nc, nc * nd).noalias() = Jd * v_star;
  // Lemke; when it ends without a solution (numerical ray termination on degenerate contact sets)
  // retry twice with 100x more compliance, flagging the step as restarted
  auto z = ws.z.head(N), w = ws.w.head(N);
  int pivots = 0;
  double error = 0;
  LcpStatus ls = ws.lcp.solve(M, q, z, w, pivots, error);
  st.iterations = pivots;
  for (int retry = 1; retry <= 2 && ls != LcpStatus::Solved; ++retry) {
    M.topLeftCorner(nr, nr).diagonal().array() += (std::pow(100.0, retry) - std::pow(100.0, retry - 1)) * s_.cfm * gmax;
    ls = ws.lcp.solve(M, q, z, w, pivots, error);
    st.iterations += pivots;
    st.status |= STATUS_RESTARTED;
  }
  VecX& v_plus = ws.v_plus;
  v_plus = v_star;
  if (ls == LcpStatus::Solved) {
    ws.tmp.noalias() = HinvJt * z.head(nr);  // the product first, as in an expression temporary
    v_plus += ws.tmp;
    st.residual = error;  // relative LCP violation of the accepted solution (lcp_lemke.h)
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
