// NE-MDP step (spec nmdp.md §8; M~ = H + h K_d with Tan's stable PD, M~ = H without a servo):
//   v_free = v + h M~^-1 b,  b = tau - c - grad V [- K_p (theta + h v - theta_bar) - K_d (v - theta_dot_bar)]
//   B = [J_x^T v_x^i],  v_x^i = k_c (d^3 + zeta_s)(n + mu t^i)    (nmdp.md §4)
//   w* = argmin 1/2 v(w)^T H v(w),  v(w) = v_free + h M~^-1 B w,  w >= 0, per-contact sum w <= 1
//      = argmin 1/2 w^T (h^2 B^T M~^-T H M~^-1 B) w + (h B^T M~^-T H v_free)^T w
//        (without a servo H M~^-1 = I: P = h^2 B^T H^-1 B, q = h B^T v_free)
//   v+ = v(w*);  theta+ = theta + h v+
// Departure from nmdp.md §8 with the servo (default, contact.mdp_metric = effective): the QP
// minimizes 1/2 v(w)^T M~ v(w) instead of 1/2 v(w)^T H v(w), i.e. P = h^2 B^T M~^-1 B,
// q = h B^T v_free. The contact impulse acts through M~, and only with the same matrix in the
// objective is "minimal kinetic energy" the maximal dissipation of the contact power: its
// stationarity is then J v+ = 0 along the normal (the point stops), as without a servo. With H
// the QP cannot resist the servo's joint motion, which M~ prescribes: in the spider jump
// (configs/quadruped_spider.yaml, 2 ms) the extending legs pushed the feet 80 mm into the
// ground and the torso never left it; with M~ the feet stay within 9 mm and the robot jumps
// (torso +15 cm, feet 9 cm clear for 0.29 s).
// contact.mdp_metric = kinetic keeps the spec's literal form for comparisons.
// cpu-only: Newton-Euler baselines are CPU comparisons.
#include "solvers/ne_mdp.h"

#include <cmath>
#include <limits>

#include "core/error.h"
#include "solvers/nmdp_terms.h"

namespace bigstep {

namespace {
int max_pairs(const Model& m) { return int(m.spheres.size() * m.planes.size()); }
}  // namespace

namespace {
// per-rollout scratch: kinematics at theta_n and the QP solver's workspace
// and every per-step buffer, sized for all (sphere, plane) pairs in contact: a step does not allocate
struct NeMdpWorkspace : Workspace {
  NeMdpWorkspace(const Model& m, const NeSettings& s)
      : kin(m), qp(std::max(1, max_pairs(m) * s.friction_directions),
                   std::max(1, max_pairs(m) * (s.friction_directions + 1))),
        contacts(make_contact_buffer(m, s.friction_directions)) {
    const int n = m.n_q, k = std::max(1, max_pairs(m) * s.friction_directions);
    const int m_max = std::max(1, max_pairs(m) * (s.friction_directions + 1));
    sm.H.resize(n, n);
    used.reserve(contacts.size());
    groups.resize(contacts.size());
    B.resize(n, k);
    HinvB.resize(n, k);
    HMB.resize(n, k);
    Q.resize(k, k);
    c.resize(k);
    lb.resize(k);
    tmp.resize(n);
    v_plus.resize(n);
    r.x.resize(k);
    r.u.resize(m_max);
    r.active.reserve(m_max);
    active_capacity = m_max;
  }
  Kinematics kin;
  QpWorkspace qp;
  NeSmoothStep sm;
  std::vector<ContactFrame> contacts;
  std::vector<const ContactFrame*> used;
  std::vector<DenseQp::Group> groups;
  MatX B, HinvB, HMB, Q;  // storage of packed (n x nx nd), ..., (nx nd x nx nd) maps
  VecX c, lb, tmp, v_plus;
  QpResult r;
  int active_capacity = 0;
};
}  // namespace

NeMdpIntegrator::NeMdpIntegrator(const Model& m, const NeSettings& s) : Integrator(m), s_(s) {
  validate_ne_settings(s_);
  // k_c = W / (N_s d_ref^3), zeta_s = zeta d_ref^3: the polytope shared with NMDP (nmdp_terms.h)
  const MdpPolytope P = make_mdp_polytope(m, s_);
  k_c_ = P.k_c;
  zeta_s_ = P.zeta_s;
}

RolloutParams NeMdpIntegrator::default_params() const {
  RolloutParams p;
  p.contact.mu = s_.mu;
  return p;
}

std::unique_ptr<Workspace> NeMdpIntegrator::make_workspace() const {
  return std::make_unique<NeMdpWorkspace>(m_, s_);
}

StepStats NeMdpIntegrator::advance(const VecX& th, const VecX& th_prev, const StepControl& u, const RolloutParams& rp,
                                   Data& d, VecX& th_next) const {
  NeMdpWorkspace& ws = static_cast<NeMdpWorkspace&>(*d.ws);
  StepStats st;
  const int n = m_.n_q;
  const double h = s_.dt;
  NeSmoothStep& sm = ws.sm;
  if (!ne_smooth_step(m_, h, th, th_prev, u, sm, st.status, th_next, rp.link_mass_scale)) return st;
  const Eigen::LDLT<MatX>& Mf = sm.Mf;
  const VecX& v_free = sm.v_free;
  forward_kinematics(m_, th, ws.kin);
  // candidate points: penetrating, plus (when zeta_s > 0) those within active_distance of a
  // surface. Departure from nmdp.md §4, where ghost forces act at any distance: they made every
  // point of a body in flight a QP variable (320 for the 10-link chain, minutes per step) while
  // the spec itself calls the far-field ghost force an artefact to avoid.
  const double phi_max = zeta_s_ > 0 ? s_.active_distance : 0.0;
  const int n_cand = collect_contacts(m_, ws.kin, phi_max, s_.friction_directions, ws.contacts);
  const int nd = s_.friction_directions;
  std::vector<const ContactFrame*>& used = ws.used;
  used.clear();
  for (int i = 0; i < n_cand; ++i) {
    const ContactFrame& c = ws.contacts[i];
    const double d = std::max(0.0, -c.phi);
    if (d > 0 || zeta_s_ > 0) used.push_back(&c);
  }
  const int nx = int(used.size());
  if (nx == 0) {
    th_next = th + h * v_free;
    return st;
  }
  const int k = nx * nd;
  // packed maps over the max-size buffers: the memory layout of freshly sized matrices
  Eigen::Map<MatX> B(ws.B.data(), n, k);
  NeSettings s_mu = s_;
  s_mu.mu = rp.contact.mu;
  const MdpPolytope P = make_mdp_polytope(m_, s_mu, 3, rp.link_mass_scale);  // the rollout's mu and weight
  for (int x = 0; x < nx; ++x) {
    const ContactFrame& c = *used[x];
    const double d = std::max(0.0, -c.phi);
    mdp_columns(P, c.J, P.scale(d, true), c.n, c.t, B.middleCols(x * nd, nd));  // every used point has the ghost cap
  }
  Eigen::Map<MatX> HinvB(ws.HinvB.data(), n, k);
  HinvB = Mf.solve(B);  // M~^-1 B
  Eigen::Map<MatX> Q(ws.Q.data(), k, k);
  auto c = ws.c.head(k);
  if (sm.pd && !s_.mdp_effective_metric) {
    Eigen::Map<MatX> HMB(ws.HMB.data(), n, k);
    HMB.noalias() = sm.H * HinvB;  // H M~^-1 B
    Q.noalias() = h * h * (HinvB.transpose() * HMB);
    c.noalias() = h * HMB.transpose() * v_free;
  } else {
    Q.noalias() = h * h * (B.transpose() * HinvB);
    c.noalias() = h * B.transpose() * v_free;
  }
  Q = 0.5 * (Q + Q.transpose());
  auto lb = ws.lb.head(k);
  lb.setZero();
  for (int x = 0; x < nx; ++x) ws.groups[x] = {x * nd, nd};
  static const MatX kNoRows;
  static const VecX kEmpty;
  const DenseQpRef p{Q, c, kNoRows, kEmpty, kNoRows, kEmpty, lb, kEmpty,
                     std::span<const DenseQp::Group>(ws.groups.data(), size_t(nx))};
  QpResult& r = ws.r;
  const QpStatus qs = ws.qp.solve(p, r, d.qp_active.empty() ? nullptr : &d.qp_active);
  st.iterations = r.iterations;
  VecX& v_plus = ws.v_plus;
  v_plus = v_free;
  if (qs == QpStatus::Solved) {
    ws.tmp.noalias() = h * HinvB * r.x.head(k);  // the product first, as in an expression temporary
    v_plus += ws.tmp;
    if (int(d.qp_active.capacity()) < ws.active_capacity) d.qp_active.reserve(size_t(ws.active_capacity));
    d.qp_active = r.active;
  } else {
    st.status |= STATUS_NOT_CONVERGED;
    d.qp_active.clear();
  }
  th_next = th + h * v_plus;
  if (!th_next.allFinite()) {
    st.status |= STATUS_NONFINITE;
    th_next = th;
  }
  return st;
}

}  // namespace bigstep
