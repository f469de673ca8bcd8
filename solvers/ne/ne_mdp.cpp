// NE-MDP step (docs/methods/newton_euler.md §3; M~ = H + h K_d with Tan's stable PD, M~ = H without a servo):
//   v_free = v + h M~^-1 b,  b = tau - c - grad V [- K_p (theta + h v - theta_bar) - K_d (v - theta_dot_bar)]
//   B = [J_x^T v_x^i],  v_x^i = k_c (d^3 + zeta_s)(n + mu t^i)    (docs/methods/nmdp.md §4)
//   w* = argmin 1/2 v(w)^T H v(w),  v(w) = v_free + h M~^-1 B w,  w >= 0, per-contact sum w <= 1
//      = argmin 1/2 w^T (h^2 B^T M~^-T H M~^-1 B) w + (h B^T M~^-T H v_free)^T w
//        (without a servo H M~^-1 = I: P = h^2 B^T H^-1 B, q = h B^T v_free)
//   v+ = v(w*);  theta+ = theta + h v+
// Joint springs -k (theta - ref) are explicit at theta_n in tau (MuJoCo's Euler; ne_contact.h).
// M~ = H + diag(a) + h diag(b) (+ h K_d): armature and implicit damping act like the servo's K_d
// (ne_contact.h NeSmoothStep); H in the kinetic metric includes the armature (rotor energy).
// Contacts come from the contact set (core/contact_set.h), J = J_a(c_a) - J_b(c_b); a joint-limit
// stop of DOF k is a column k_c s(depth) s e_k with weight in [0, 1]: a contact's normal part.
// Departure from docs/methods/newton_euler.md §3 with the servo (default, contact.mdp_metric = effective): the QP
// minimizes 1/2 v(w)^T M~ v(w) instead of 1/2 v(w)^T H v(w), i.e. P = h^2 B^T M~^-1 B,
// q = h B^T v_free. The contact impulse acts through M~, and only with the same matrix in the
// objective is "minimal kinetic energy" the maximal dissipation of the contact power: its
// stationarity is then J v+ = 0 along the normal (the point stops), as without a servo. With H
// the QP cannot resist the servo's joint motion, which M~ prescribes: in the spider jump
// (configs/quadruped_spider.yaml, 2 ms) the extending legs pushed the feet 80 mm into the
// ground and the torso never left it; with M~ the feet stay within 9 mm and the robot jumps
// (torso +15 cm, feet 9 cm clear for 0.29 s).
// contact.mdp_metric = kinetic keeps the paper's literal form for comparisons.
// Reported normal force (StepStats::normal_force): the normal part of B w*, sum_x k_c s(d_x) sum_i w*_x,i.
// cpu-only: Newton-Euler baselines are CPU comparisons.
#include "solvers/ne/ne_mdp.h"

#include <cmath>
#include <limits>

#include "core/error.h"
#include "solvers/nmdp/nmdp_terms.h"

namespace bigstep {

namespace {
// per-rollout scratch: kinematics at theta_n, the contacts and the QP solver's workspace, and
// every per-step buffer at its largest size (m.max_contacts contacts with nd columns each, plus
// one column per joint-limit stop): a step does not allocate
struct NeMdpWorkspace : Workspace {
  NeMdpWorkspace(const Model& m, const NeSettings& s)
      : kin(m),
        qp(std::max(1, m.max_contacts * s.friction_directions + m.n_limit),
           std::max(1, m.max_contacts * (s.friction_directions + 1) + 2 * m.n_limit)),
        sm(m),
        contacts(m, s.friction_directions) {
    const int n = m.n_q, k = std::max(1, m.max_contacts * s.friction_directions + m.n_limit);
    const int m_max = std::max(1, m.max_contacts * (s.friction_directions + 1) + 2 * m.n_limit);
    used.reserve(size_t(m.max_contacts));
    used_lim.reserve(size_t(m.n_limit));
    groups.resize(size_t(m.max_contacts + m.n_limit));
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
    r.active.reserve(size_t(m_max));
    active_capacity = m_max;
  }
  Kinematics kin;
  QpWorkspace qp;
  NeSmoothStep sm;
  NeContacts contacts;
  std::vector<const ContactFrame*> used;
  std::vector<const LimitContact*> used_lim;
  std::vector<DenseQp::Group> groups;
  MatX B, HinvB, HMB, Q;  // storage of packed (n x k), ..., (k x k) maps, k = nx nd + n_lim
  VecX c, lb, tmp, v_plus;
  QpResult r;
  int active_capacity = 0;
  void bind_chart(const Mat3* chart) override {
    kin.chart = chart;
    sm.bind_chart(chart);
  }
};

// The rollout's polytope: make_mdp_polytope (shared with NMDP, which holds the automatic k_c rule)
// with the rollout's mu and weight.
MdpPolytope ne_mdp_polytope(const Model& m, const NeSettings& s, double mu, const double* mass_scale) {
  NeSettings s_mu = s;
  s_mu.mu = mu;
  return make_mdp_polytope(m, s_mu, 3, mass_scale);
}
}  // namespace

NeMdpIntegrator::NeMdpIntegrator(const Model& m, const NeSettings& s) : Integrator(m), s_(s) {
  validate_ne_settings(s_);
  // k_c = W / (N_s d_ref^3), zeta_s = zeta d_ref^3: the polytope shared with NMDP (nmdp_terms.h)
  const MdpPolytope P = ne_mdp_polytope(m, s_, s_.mu, nullptr);
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
  ne_smooth_step(m_, h, th, th_prev, u, sm, rp.link_mass_scale);
  const Eigen::LDLT<MatX>& Mf = sm.Mf;
  const VecX& v_free = sm.v_free;
  forward_kinematics(m_, th, ws.kin);
  // candidate points: penetrating, plus (when zeta_s > 0) those within active_distance of a
  // surface. Departure from docs/methods/nmdp.md §4, where ghost forces act at any distance: they made every
  // point of a body in flight a QP variable (320 for the 10-link chain, minutes per step) while
  // docs/methods/nmdp.md §4 itself calls the far-field ghost force an artefact to avoid.
  const double phi_max = zeta_s_ > 0 ? s_.active_distance : 0.0;
  NeContacts& con = ws.contacts;
  const int nd = s_.friction_directions;
  con.update(m_, ws.kin, th, phi_max, nd);
  std::vector<const ContactFrame*>& used = ws.used;
  used.clear();
  for (int i = 0; i < con.n_con; ++i) {
    const ContactFrame& c = con.frames[i];
    const double d = std::max(0.0, -c.phi);
    if (d > 0 || zeta_s_ > 0) used.push_back(&c);
  }
  // joint-limit stops: the same rule; each is a contact's normal part only (no friction polytope)
  std::vector<const LimitContact*>& used_lim = ws.used_lim;
  used_lim.clear();
  for (int i = 0; i < con.n_lim; ++i) {
    const LimitContact& lc = con.set.lim[i];
    if (std::max(0.0, lc.depth) > 0 || zeta_s_ > 0) used_lim.push_back(&lc);
  }
  const int nx = int(used.size()), nl = int(used_lim.size());
  if (nx + nl == 0) {
    th_next = th + h * v_free;
    return st;
  }
  const int k = nx * nd + nl;
  // packed maps over the max-size buffers: the memory layout of freshly sized matrices
  Eigen::Map<MatX> B(ws.B.data(), n, k);
  const MdpPolytope P = ne_mdp_polytope(m_, s_, rp.contact.mu, rp.link_mass_scale);  // the rollout's mu and weight
  for (int x = 0; x < nx; ++x) {
    const ContactFrame& c = *used[x];
    const double d = std::max(0.0, -c.phi);
    mdp_columns(P, c.J, P.scale(d, true), c.n, c.t, B.middleCols(x * nd, nd));  // every used point has the ghost cap
  }
  // a stop of DOF k: the single column k_c s(d) s e_k, weight in [0, 1] (a group of one)
  for (int l = 0; l < nl; ++l) {
    const LimitContact& lc = *used_lim[l];
    B.col(nx * nd + l).setZero();
    B(lc.dof, nx * nd + l) = P.scale(std::max(0.0, lc.depth), true) * lc.s;
  }
  Eigen::Map<MatX> HinvB(ws.HinvB.data(), n, k);
  HinvB = Mf.solve(B);  // M~^-1 B
  Eigen::Map<MatX> Q(ws.Q.data(), k, k);
  auto c = ws.c.head(k);
  if ((sm.pd || sm.damped) && !s_.mdp_effective_metric) {
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
  for (int l = 0; l < nl; ++l) ws.groups[nx + l] = {nx * nd + l, 1};
  static const MatX kNoRows;
  static const VecX kEmpty;
  const DenseQpRef p{Q, c, kNoRows, kEmpty, kNoRows, kEmpty, lb, kEmpty,
                     std::span<const DenseQp::Group>(ws.groups.data(), size_t(nx + nl))};
  QpResult& r = ws.r;
  const QpStatus qs = ws.qp.solve(p, r, d.qp_active.empty() ? nullptr : &d.qp_active);
  st.iterations = r.iterations;
  VecX& v_plus = ws.v_plus;
  v_plus = v_free;
  if (qs == QpStatus::Solved) {
    ws.tmp.noalias() = h * HinvB * r.x.head(k);  // the product first, as in an expression temporary
    v_plus += ws.tmp;
    // normal force: the impulse is h B w, so the force B w; its normal part per contact
    // (limit stops excluded) is k_c s(d) sum_i w_i
    for (int x = 0; x < nx; ++x)
      st.normal_force += mdp_normal_force(P.scale(std::max(0.0, -used[x]->phi), true), r.x.segment(x * nd, nd));
    if (int(d.qp_active.capacity()) < ws.active_capacity) d.qp_active.reserve(size_t(ws.active_capacity));
    d.qp_active = r.active;
  } else {
    st.status |= STATUS_NOT_CONVERGED;
    d.qp_active.clear();
  }
  th_next = th + h * v_plus;
  return st;
}

}  // namespace bigstep
