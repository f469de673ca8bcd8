// NE-MDP step (spec nmdp.md §8, no PD gains here: M~ = H):
//   v_free = v + h H^-1 (tau - c - grad V)
//   B = [J_x^T v_x^i],  v_x^i = k_c (d^3 + zeta_s)(n + mu t^i)    (nmdp.md §4)
//   w* = argmin 1/2 v(w)^T H v(w),  v(w) = v_free + h H^-1 B w,  w >= 0, per-contact sum w <= 1
//      = argmin 1/2 w^T (h^2 B^T H^-1 B) w + (h B^T v_free)^T w
//   v+ = v(w*);  theta+ = theta + h v+
// cpu-only: Newton-Euler baselines are CPU comparisons.
#include "solvers/ne_mdp.h"

#include <cmath>
#include <limits>

#include "core/error.h"

namespace bigstep {

namespace {
int max_pairs(const Model& m) { return int(m.spheres.size() * m.planes.size()); }
}  // namespace

NeMdpIntegrator::NeMdpIntegrator(const Model& m, const NeSettings& s)
    : m_(m), s_(s), kin_(m),
      qp_(std::max(1, max_pairs(m) * s.friction_directions), std::max(1, max_pairs(m) * (s.friction_directions + 1))) {
  validate_ne_settings(s_);
  // k_c = W / (N_s d_ref^3), N_s = half of the contact points (those expected to carry the weight)
  const double n_s = std::max(1.0, 0.5 * double(m.spheres.size()));
  k_c_ = s_.k_c > 0 ? s_.k_c : m.weight() / (n_s * std::pow(s_.d_ref, 3));
  zeta_s_ = s_.zeta * std::pow(s_.d_ref, 3);
}

StepStats NeMdpIntegrator::step(const VecX& th, const VecX& th_prev, const VecX& tau, VecX& th_next) {
  StepStats st;
  const int n = m_.n_q;
  const double h = s_.dt;
  NeSmoothStep sm;
  if (!ne_smooth_step(m_, h, th, th_prev, tau, sm, st.status, th_next)) return st;
  const Eigen::LDLT<MatX>& Hf = sm.Hf;
  const VecX& v_free = sm.v_free;
  forward_kinematics(m_, th, kin_);
  // candidate points: penetrating, plus (when zeta_s > 0) those within active_distance of a
  // surface. Departure from nmdp.md §4, where ghost forces act at any distance: they made every
  // point of a body in flight a QP variable (320 for the 10-link chain, minutes per step) while
  // the spec itself calls the far-field ghost force an artefact to avoid.
  const double phi_max = zeta_s_ > 0 ? s_.active_distance : 0.0;
  const auto contacts = collect_contacts(m_, kin_, phi_max, s_.friction_directions);
  const int nd = s_.friction_directions;
  std::vector<const ContactFrame*> used;
  for (const auto& c : contacts) {
    const double d = std::max(0.0, -c.phi);
    if (d > 0 || zeta_s_ > 0) used.push_back(&c);
  }
  const int nx = int(used.size());
  if (nx == 0) {
    th_next = th + h * v_free;
    return st;
  }
  MatX B(n, nx * nd);
  for (int x = 0; x < nx; ++x) {
    const ContactFrame& c = *used[x];
    const double d = std::max(0.0, -c.phi);
    const double s = k_c_ * (d * d * d + zeta_s_);
    for (int i = 0; i < nd; ++i) B.col(x * nd + i) = c.J.transpose() * (s * (c.n + s_.mu * c.t[i]));
  }
  const MatX HinvB = Hf.solve(B);
  DenseQp p;
  p.Q = h * h * (B.transpose() * HinvB);
  p.Q = 0.5 * (p.Q + p.Q.transpose());
  p.c = h * B.transpose() * v_free;
  p.lb = VecX::Zero(nx * nd);
  for (int x = 0; x < nx; ++x) p.simplex.push_back({x * nd, nd});
  QpResult r;
  const QpStatus qs = qp_.solve(p, r, warm_.empty() ? nullptr : &warm_);
  st.iterations = r.iterations;
  VecX v_plus = v_free;
  if (qs == QpStatus::Solved) {
    v_plus += h * HinvB * r.x;
    warm_ = r.active;
  } else {
    st.status |= STATUS_NOT_CONVERGED;
    warm_.clear();
  }
  th_next = th + h * v_plus;
  if (!th_next.allFinite()) {
    st.status |= STATUS_NONFINITE;
    th_next = th;
  }
  return st;
}

}  // namespace bigstep
