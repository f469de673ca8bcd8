// NMDP terms (docs/methods/nmdp.md §3-§6): polytope (§4, Eq. 5), K, G, A and A-bar of NE-NMDP (Eq. 6,
// §5) and PBD-NMDP (Eq. 12, §6).
// cpu-only: the CUDA mirror of NMDP is future work (docs/methods/nmdp.md §7.5 describes its state machine).
#include "solvers/nmdp/nmdp_terms.h"

#include <cmath>

#include "core/error.h"
#include "core/rnea.h"
#include "solvers/terms/contact_terms.h"

namespace bigstep {

const char* nmdp_form_name(NmdpForm f) { return f == NmdpForm::Ne ? "ne" : "pbd"; }
const char* pgm_mode_name(PgmMode m) { return m == PgmMode::Fo ? "fo" : "zo"; }

// ---------------------------------------------------------------------------------------
// Polytope (§4)
// ---------------------------------------------------------------------------------------

double MdpPolytope::scale(double d, bool ghost) const {
  const double dp = d > 0 ? std::pow(d, depth_exponent) : 0.0;
  return k_c * (dp + (ghost ? zeta_s : 0.0));
}

double MdpPolytope::dscale(double d) const {
  return d > 0 ? k_c * depth_exponent * std::pow(d, depth_exponent - 1) : 0.0;
}

MdpPolytope make_mdp_polytope(const Model& m, const NeSettings& s, int depth_exponent, const double* mass_scale) {
  MdpPolytope P;
  // k_c = W / (N_s d_ref^3), N_s = half of the contact points (those expected to carry the weight).
  // Without explicit geoms the contact points are the legacy spheres (the shipped scenes' value);
  // with explicit geoms (geoms before sphere_geom_adr) it is half of max_contacts, the most
  // contacts the collision stage can report (a box face down on a plane: 8 -> N_s = 4).
  const bool legacy = m.sphere_geom_adr == 0;
  const double n_points = legacy ? double(m.spheres.size()) : double(m.max_contacts);
  const double n_s = std::max(1.0, 0.5 * n_points);
  P.k_c = s.k_c > 0 ? s.k_c : weight(m, mass_scale) / (n_s * std::pow(s.d_ref, 3));
  P.zeta_s = s.zeta * std::pow(s.d_ref, 3);
  P.mu = s.mu;
  P.n_dirs = s.friction_directions;
  P.depth_exponent = depth_exponent;
  return P;
}

void mdp_vertices(const MdpPolytope& P, double scale, const Vec3& n, const std::vector<Vec3>& t,
                  Eigen::Ref<MatX> V) {
  for (int i = 0; i < P.n_dirs; ++i) V.col(i) = scale * (n + P.mu * t[i]);
}

void mdp_columns(const MdpPolytope& P, const MatX& J, double scale, const Vec3& n, const std::vector<Vec3>& t,
                 Eigen::Ref<MatX> Bx) {
  for (int i = 0; i < P.n_dirs; ++i) Bx.col(i).noalias() = J.transpose() * (scale * (n + P.mu * t[i]));
}

// ---------------------------------------------------------------------------------------
// NmdpProblem
// ---------------------------------------------------------------------------------------

NmdpProblem::NmdpProblem(const Model& m, const MdpPolytope& poly, NmdpForm form, AccelDenominator accel,
                         double ghost_distance, double candidate_margin)
    : m_(m), poly_(poly), form_(form), accel_(accel), ghost_distance_(ghost_distance),
      candidate_margin_(candidate_margin), n_slots_(m.max_contacts + m.n_limit),
      n_w_(m.max_contacts * poly.n_dirs + m.n_limit), set_(m), kin_(m), kin_a_(m), rnea_ws_(m) {
  BIGSTEP_CHECK_ARG(std::isfinite(candidate_margin) && candidate_margin >= 0, "nmdp candidate_margin",
                    candidate_margin, "must be finite and >= 0");
  // slots: geom contacts (V weights each), then joint-limit stops (1 weight each)
  const int n = m.n_q;
  pairs_.resize(size_t(n_slots_));
  for (int x = 0; x < n_slots_; ++x) {
    NmdpContact& c = pairs_[x];
    const bool geom = x < m.max_contacts;
    c.nv = geom ? poly.n_dirs : 1;
    c.off = geom ? x * poly.n_dirs : m.max_contacts * poly.n_dirs + (x - m.max_contacts);
    if (geom) {
      c.t.assign(size_t(poly.n_dirs), Vec3::Zero());
      c.J.setZero(3, n);
      c.Ja.setZero(3, n);
      c.Jb.setZero(3, n);
    }
  }
  // scratch of G, A, K and their derivatives
  qd_.setZero(n);
  qdd_.setZero(n);
  tmp_.setZero(n);
  tmp2_.setZero(n);
  g0_.setZero(n);
  w0_.setZero(n_w_);
  theta_.setZero(n);
  A0_.setZero(n, n);
  theta_dot_m_.setZero(n);
  theta_tilde_.setZero(n);
  JtP_.setZero(n, 3);
  const size_t L = size_t(m.n_link);
  Rd_.assign(L, Mat3::Zero());
  td_.assign(L, Vec3::Zero());
  WR_.assign(L * n, Mat3::Zero());
  Wt_.assign(L * n, Vec3::Zero());
  path_.reserve(size_t(n));
  om_.reserve(size_t(n));
  for (auto* v : {&dT_, &Ud_, &Ua_, &Qd_, &Y_}) v->reserve(size_t(n));
}

void NmdpProblem::set_step(const NmdpStepInput& in) {
  const int n = m_.n_q;
  BIGSTEP_CHECK_ARG(in.theta_m.size() == n && in.theta_mm.size() == n && in.tau.size() == n, "nmdp step",
                    detail::concat(in.theta_m.size(), "/", in.theta_mm.size(), "/", in.tau.size()),
                    detail::concat("theta_-, theta_--, tau need n_q = ", n, " entries"));
  BIGSTEP_CHECK_ARG(in.h > 0 && in.dt_last > 0, "nmdp step h/dt_last", detail::concat(in.h, "/", in.dt_last),
                    "must be > 0");
  BIGSTEP_CHECK_ARG(in.kp.size() == 0 || (in.kp.size() == n && in.kd.size() == n && in.theta_bar.size() == n &&
                                          in.theta_dot_bar.size() == n),
                    "nmdp step pd", in.kp.size(), "gains and targets need n_q entries");
  in_ = in;
  theta_dot_m_ = (in.theta_m - in.theta_mm) / in.dt_last;
  const double alpha = in.h / in.dt_last;
  theta_tilde_ = (1 + alpha) * in.theta_m - alpha * in.theta_mm;
  // anchors: K pulls towards T(theta_-); I_alpha towards (1 + alpha) T(theta_-) - alpha T(theta_--)
  forward_kinematics(m_, in.theta_m, kin_a_);
  forward_kinematics(m_, in.theta_mm, kin_);
  make_inertia_anchor(kin_a_, kin_a_, 0.0, anchor_K_);
  make_inertia_anchor(kin_a_, kin_, in.h / in.dt_last, anchor_I_);
  // the candidate set C of this substep (docs/methods/nmdp.md §4): collide() and the joint limits at theta_-.
  // Cores, normals and tangents are held for the substep; depths follow theta through the cores
  // (contact_core_depth, n held: docs/methods/nmdp.md §4 "n, t frozen"). With the default margin every pair is
  // a candidate, as the legacy sphere x plane loops had (same order: sphere-major), so a point that
  // starts the substep far above the ground still stops within it. A held normal of a pair whose
  // normal follows its core line (kappa > 0: sphere-sphere, ...) is the linearization of the
  // distance at theta_-, good while the pair moves little sideways against 1/kappa within a substep.
  set_.update(m_, kin_a_, in.theta_m, candidate_margin_);
  for (NmdpContact& c : pairs_) {
    c.valid = false;
    c.d = c.s = c.ds = 0;
  }
  // ghost forces only near the surfaces at theta_- (phi = -depth <= ghost_distance), fixed for
  // this substep (see header)
  for (int i = 0; i < set_.n_con; ++i) {
    const Contact& k = set_.con[i];
    NmdpContact& c = pairs_[i];
    c.valid = true;
    c.dof = -1;
    c.n = k.n;
    tangent_directions(k.n, poly_.n_dirs, c.t);
    c.ghost = poly_.zeta_s > 0 && -k.depth <= ghost_distance_;
  }
  for (int i = 0; i < set_.n_lim; ++i) {
    const LimitContact& l = set_.lim[i];
    NmdpContact& c = pairs_[m_.max_contacts + i];
    c.valid = true;
    c.dof = l.dof;
    c.sgn = l.s;
    c.ghost = poly_.zeta_s > 0 && -l.depth <= ghost_distance_;
  }
  have_kin_ = have_deriv_ = have_A0_ = false;
}

void NmdpProblem::update(const VecX& theta, bool derivatives) {
  BIGSTEP_CHECK_ARG(theta.size() == m_.n_q, "theta size", theta.size(), detail::concat("expected n_q = ", m_.n_q));
  const bool same = have_kin_ && theta_.size() == theta.size() && theta_ == theta;
  if (same && (!derivatives || have_deriv_)) return;
  if (!same) {
    theta_ = theta;
    forward_kinematics(m_, theta, kin_);
    have_deriv_ = have_A0_ = false;
    // depth(theta) of each candidate: geom contacts through their cores (n held), limit stops
    // lo - theta_k / theta_k - hi; the cap k_c s(d) and, for geoms, J = J_a(c_a) - J_b(c_b)
    for (int x = 0; x < n_slots_; ++x) {
      NmdpContact& c = pairs_[x];
      if (!c.valid) continue;
      const bool geom = c.dof < 0;
      const double depth = geom ? contact_core_depth(kin_, set_.con[x]) : limit_depth(c, theta);
      c.d = std::max(0.0, depth);
      c.s = poly_.scale(c.d, c.ghost);
      c.ds = poly_.dscale(c.d);
      if (!geom) continue;
      if (c.s > 0) contact_core_jacobians(m_, kin_, set_.con[x], c.Ja, c.Jb, c.J);
      else c.J.setZero();
    }
    have_kin_ = true;
  }
  if (derivatives && !have_deriv_) {
    link_derivatives(m_, kin_);
    have_deriv_ = true;
  }
}

const std::vector<NmdpContact>& NmdpProblem::contacts(const VecX& theta) {
  update(theta, false);
  return pairs_;
}

double NmdpProblem::normal_force(const VecX& theta, const VecX& w) {
  update(theta, false);
  // geom slots only (dof < 0); a slot without a candidate has s = 0
  double f = 0;
  for (const NmdpContact& c : pairs_)
    if (c.dof < 0 && c.s > 0) f += mdp_normal_force(c.s, w.segment(c.off, c.nv));
  return f;
}

double NmdpProblem::limit_depth(const NmdpContact& c, const VecX& theta) const {
  // lower stop (s = +1): lo - theta_k; upper (s = -1): theta_k - hi (core/joint_limit.h)
  const int k = c.dof;
  return c.sgn > 0 ? m_.dof_range[2 * k] - theta[k] : theta[k] - m_.dof_range[2 * k + 1];
}

void NmdpProblem::B(const VecX& theta, MatX& B) {
  update(theta, false);
  const int V = poly_.n_dirs;
  B.setZero(m_.n_q, n_w());
  for (const NmdpContact& c : pairs_) {
    if (!(c.s > 0)) continue;
    if (c.dof < 0) mdp_columns(poly_, c.J, c.s, c.n, c.t, B.middleCols(c.off, V));
    else B(c.dof, c.off) = c.sgn * c.s;  // a stop's generalised force s e_k k_c s(d), frictionless
  }
}

void NmdpProblem::vertices(const VecX& theta, int x, MatX& V, std::vector<Mat3>& dV_dX) {
  update(theta, false);
  const NmdpContact& c = pairs_[x];
  BIGSTEP_CHECK_ARG(x >= 0 && x < m_.max_contacts, "vertices x", x, "must be a geom slot (< max_contacts)");
  const std::vector<Vec3>& t = c.t;
  V.resize(3, poly_.n_dirs);
  mdp_vertices(poly_, c.s, c.n, t, V);
  dV_dX.resize(poly_.n_dirs);
  // d v^i / dX = k_c s'(d) (n + mu t^i) (dd/dX),  dd/dX = -n^T where d > 0
  for (int i = 0; i < poly_.n_dirs; ++i) dV_dX[i] = -c.ds * (c.n + poly_.mu * t[i]) * c.n.transpose();
}

void NmdpProblem::add_joint_terms(const VecX& theta, VecX* G, MatX* A) const {
  // armature a_k (extra inertia on DOF k, a_k added to H_kk) and damping b_k (implicit -b_k
  // theta_dot_k at the end of the (sub)step), the agreed formulas in each form:
  //   NE  (§5): G += a theta_ddot + b theta_dot,          A += diag(a / (h hd) + b / h)
  //   PBD (§6): G += a (theta - theta~) / hd^2 + b theta_dot,  A += diag(a / hd^2 + b / h)
  // theta~ = (1 + alpha) theta_- - alpha theta_-- is I_alpha's anchor (hd = inertia_dt()), so
  // (theta - theta~)/h^2 = (theta_dot - theta_dot_-)/h: both forms apply the same a theta_ddot.
  // springs k_k: a potential 1/2 k (theta - ref)^2 beside gravity's V, taken at theta like grad V
  // (implicit) in both forms: G += k (theta - ref), A += diag(k). Why not explicit at theta_-
  // (NE-LCP's MuJoCo-Euler choice): NMDP evaluates every conservative force at the unknown theta
  // (Eq. 6 / 12), and in the PBD form G must stay the gradient of merit0's energy (§7.6).
  if (m_.has_stiffness)
    for (int k = 0; k < m_.n_q; ++k) {
      const double ks = m_.dof_stiffness[k];
      if (ks == 0) continue;
      if (G) (*G)[k] += ks * (theta[k] - m_.dof_springref[k]);
      if (A) (*A)(k, k) += ks;
    }
  if (!m_.has_damping_armature) return;
  const double h = in_.h;
  const double hd = form_ == NmdpForm::Ne ? (accel_ == AccelDenominator::Recommended ? h : in_.dt_last) : 0.0;
  const double id = inertia_dt();
  for (int k = 0; k < m_.n_q; ++k) {
    const double a = m_.dof_armature[k], b = m_.dof_damping[k];
    if (a == 0 && b == 0) continue;
    const double qd = (theta[k] - in_.theta_m[k]) / h;
    if (G) {
      const double acc = form_ == NmdpForm::Ne ? a * (qd - theta_dot_m_[k]) / hd
                                               : a * (theta[k] - theta_tilde_[k]) / (id * id);
      (*G)[k] += acc + b * qd;
    }
    if (A) (*A)(k, k) += (form_ == NmdpForm::Ne ? a / (h * hd) : a / (id * id)) + b / h;
  }
}

void NmdpProblem::sub_torque(const VecX& theta, VecX& G) const {
  // G -= tau(theta) without a temporary
  G -= in_.tau;
  if (in_.kp.size() == 0) return;
  for (int k = 0; k < m_.n_q; ++k)
    G[k] += in_.kp[k] * (theta[k] - in_.theta_bar[k]) +
            in_.kd[k] * ((theta[k] - in_.theta_m[k]) / in_.h - in_.theta_dot_bar[k]);
}

VecX NmdpProblem::torque(const VecX& theta) const {
  VecX tau = in_.tau;
  if (in_.kp.size() != 0)
    tau += -(in_.kp.array() * (theta - in_.theta_bar).array() +
             in_.kd.array() * ((theta - in_.theta_m).array() / in_.h - in_.theta_dot_bar.array()))
               .matrix();
  return tau;
}

double NmdpProblem::inertia_dt() const {
  return accel_ == AccelDenominator::Recommended ? in_.h : std::sqrt(in_.h * in_.dt_last);
}

namespace {

// A direction-like pair (M, v) of docs/methods/pbfd.md §2.3 (a pose derivative) and the operations on it.
using Pair = detail::PosePair;
inline Pair operator*(double a, const Pair& p) { return {a * p.R, a * p.t}; }
inline Pair operator+(const Pair& a, const Pair& b) { return {a.R + b.R, a.t + b.t}; }
// left action of a 3x3 matrix: a |> (M, v) = ([w_a]x M, w_a x v) is apply(skew(w_a), .)
inline Pair apply(const Mat3& L, const Pair& p) { return {L * p.R, L * p.t}; }
// the same for L = [w]x, column by column: w x (M, v)
inline Pair cross(const Vec3& w, const Pair& p) {
  Pair r;
  for (int c = 0; c < 3; ++c) r.R.col(c) = w.cross(p.R.col(c));
  r.t = w.cross(p.t);
  return r;
}

// The moment product of link j (core/inertia.h moment_product, docs/methods/pbfd.md §2.4) is bilinear:
//   <X, Y>_j = tr(X.R S_j Y.R^T) + m_j (X.t . Y.R c_j + Y.t . X.R c_j + X.t . Y.t)
//            = sum(X*.R o Y.R) + X*.t . Y.t,   X* = (X.R S_j + m_j X.t c_j^T, m_j (X.R c_j + X.t))
// (times the link's mass scale). One dual X* per pair, then each product with it is a 12-term
// dot: the O(p^2) double sums of A and Q_K below pay 12 multiply-adds per entry instead of a
// full moment_product (same value up to rounding: the terms are summed in another order).
inline Pair moment_dual(const Model& m, int j, const Mat3& R, const Vec3& t, const double* ms) {
  const double mj = m.link_mass[j];
  const Vec3& c = m.link_com[j];
  Pair d{R * m.link_S[j] + (mj * t) * c.transpose(), mj * (R * c + t)};
  if (ms) {
    d.R *= ms[j];
    d.t *= ms[j];
  }
  return d;
}
inline double dual_dot(const Pair& d, const Mat3& R, const Vec3& t) { return d.R.cwiseProduct(R).sum() + d.t.dot(t); }

}  // namespace

// ---------------------------------------------------------------------------------------
// K, g_K, Q_K
// ---------------------------------------------------------------------------------------

void NmdpProblem::link_velocity(int j, const VecX& qd, Mat3& R, Vec3& t) const {
  // T_dot_j = sum_a qd_a d_a T_j (d_a T_j = 0 off the root->j path)
  const size_t base = size_t(j) * m_.n_q;
  R.setZero();
  t.setZero();
  for (int a = 0; a < m_.n_q; ++a)
    if (m_.moves(a, j)) {
      R += qd[a] * kin_.dR[base + a];
      t += qd[a] * kin_.dt[base + a];
    }
}

void NmdpProblem::velocity_frames(const VecX& theta, std::vector<Mat3>& Rd, std::vector<Vec3>& td,
                                  std::vector<Mat3>& WR, std::vector<Vec3>& Wt) {
  update(theta, true);
  const int n = m_.n_q, L = m_.n_link;
  const double h = in_.h;
  VecX& qd = qd_;
  qd = (theta - in_.theta_m) / h;
  Rd.assign(L, Mat3::Zero());
  td.assign(L, Vec3::Zero());
  WR.assign(size_t(L) * n, Mat3::Zero());
  Wt.assign(size_t(L) * n, Vec3::Zero());
  for (int j = 0; j < L; ++j) {
    const size_t base = size_t(j) * n;
    link_velocity(j, qd, Rd[j], td[j]);
    // sum_a qd_a d_ka T_j = k |> (sum_{a >= k} qd_a d_a T_j) + [Omega_{<k}]x d_k T_j
    // (twist rule, docs/methods/pbfd.md §2.3), Omega_{<k} = sum_{a < k revolute} qd_a omega_a; a, k in anc(j)
    Mat3 UR = Mat3::Zero();
    Vec3 Ut = Vec3::Zero();
    for (int k = n - 1; k >= 0; --k) {
      if (!m_.moves(k, j)) continue;
      UR += qd[k] * kin_.dR[base + k];
      Ut += qd[k] * kin_.dt[base + k];
      Mat3 M = UR;
      Vec3 v = Ut;
      dof_act(m_, kin_, k, M, v);
      WR[base + k] = M;
      Wt[base + k] = v;
    }
    Vec3 Om = Vec3::Zero();
    for (int k = 0; k < n; ++k) {
      if (!m_.moves(k, j)) continue;
      const Mat3& dRk = kin_.dR[base + k];
      const Vec3& dtk = kin_.dt[base + k];
      WR[base + k] += skew(Om) * dRk + dRk / h;
      Wt[base + k] += Om.cross(dtk) + dtk / h;
      if (m_.dof_revolute[k]) Om += qd[k] * kin_.w[k];
    }
  }
}

double NmdpProblem::K(const VecX& theta) {
  double K = kinetic(theta);
  if (servo_metric_ && in_.kp.size() != 0) {
    // + 1/2 sum_i (K_p + K_d / h)_i (theta - theta_-)_i^2  (see set_servo_metric)
    for (int i = 0; i < m_.n_q; ++i) {
      const double d = theta[i] - in_.theta_m[i];
      K += 0.5 * (in_.kp[i] + in_.kd[i] / in_.h) * d * d;
    }
  }
  return K;
}

double NmdpProblem::kinetic(const VecX& theta) {
  // armature: 1/2 sum_k a_k theta_dot_k^2 (H + diag(a) is the mass matrix), both forms
  double Ka = 0;
  if (m_.has_damping_armature)
    for (int k = 0; k < m_.n_q; ++k) {
      const double qd = (theta[k] - in_.theta_m[k]) / in_.h;
      Ka += 0.5 * m_.dof_armature[k] * qd * qd;
    }
  if (form_ == NmdpForm::Pbd) {
    update(theta, false);
    return inertia_value(m_, kin_, anchor_K_, in_.h, ms_) + Ka;
  }
  // 1/2 sum_j <T_dot_j, T_dot_j>_j = 1/2 theta_dot^T H theta_dot
  update(theta, true);
  VecX& qd = qd_;
  qd = (theta - in_.theta_m) / in_.h;
  double K = Ka;
  Mat3 R;
  Vec3 t;
  for (int j = 0; j < m_.n_link; ++j) {
    link_velocity(j, qd, R, t);
    K += 0.5 * moment_product(m_, j, R, t, R, t, ms_);
  }
  return K;
}

void NmdpProblem::K_derivatives(const VecX& theta, VecX& g, MatX& Q) {
  kinetic_derivatives(theta, g, Q);
  // armature: g += a theta_dot / h, Q += diag(a) / h^2 (d theta_dot / d theta = I / h)
  if (m_.has_damping_armature)
    for (int k = 0; k < m_.n_q; ++k) {
      const double a = m_.dof_armature[k];
      g[k] += a * (theta[k] - in_.theta_m[k]) / (in_.h * in_.h);
      Q(k, k) += a / (in_.h * in_.h);
    }
  if (servo_metric_ && in_.kp.size() != 0) {
    for (int i = 0; i < m_.n_q; ++i) {
      const double c = in_.kp[i] + in_.kd[i] / in_.h;
      g[i] += c * (theta[i] - in_.theta_m[i]);
      Q(i, i) += c;
    }
  }
}

void NmdpProblem::kinetic_derivatives(const VecX& theta, VecX& g, MatX& Q) {
  const int n = m_.n_q;
  g.setZero(n);
  if (form_ == NmdpForm::Pbd) {
    // g_K = 1/h^2 sum_j <d_k T_j, T_j - T_j(theta_-)>_j;  Q_K = H / h^2 (exact J^T J of K)
    update(theta, true);
    add_inertia_gradient(m_, kin_, anchor_K_, in_.h, g, ms_);
    mass_matrix(m_, kin_, Q, ms_);
    Q /= in_.h * in_.h;
    return;
  }
  // g_K,k = sum_j <W_kj, T_dot_j>_j;  Q_K,kl = sum_j <W_kj, W_lj>_j  (Gauss-Newton, B11)
  std::vector<Mat3>& Rd = Rd_;
  std::vector<Mat3>& WR = WR_;
  std::vector<Vec3>& td = td_;
  std::vector<Vec3>& Wt = Wt_;
  velocity_frames(theta, Rd, td, WR, Wt);
  Q.setZero(n, n);
  // one moment dual W_kj* per (k, j), then 12-term dots (moment_dual above)
  for (int j = 0; j < m_.n_link; ++j) {
    const size_t base = size_t(j) * n;
    for (int k = 0; k < n; ++k) {
      if (!m_.moves(k, j)) continue;
      const Pair Wd = moment_dual(m_, j, WR[base + k], Wt[base + k], ms_);
      g[k] += dual_dot(Wd, Rd[j], td[j]);
      for (int l = k; l < n; ++l)
        if (m_.moves(l, j)) Q(k, l) += dual_dot(Wd, WR[base + l], Wt[base + l]);
    }
  }
  Q.triangularView<Eigen::StrictlyLower>() = Q.transpose().triangularView<Eigen::StrictlyLower>();
}

// ---------------------------------------------------------------------------------------
// G, A
// ---------------------------------------------------------------------------------------

Vec3 NmdpProblem::weighted_direction(int x, const VecX& w) const {
  const NmdpContact& c = pairs_[x];
  Vec3 u = Vec3::Zero();
  for (int i = 0; i < c.nv; ++i) u += w[c.off + i] * (c.n + poly_.mu * c.t[i]);
  return u;
}

void NmdpProblem::add_contact_force(const VecX& w, VecX& G) {
  // geom: f_x = sum_i w_x,i v_x^i = k_c s(d) u_x on a (and -f_x on b): G -= J^T f_x;
  // stop: G_k -= s k_c s(d) w_x
  for (int x = 0; x < n_slots_; ++x) {
    const NmdpContact& c = pairs_[x];
    if (!(c.s > 0)) continue;
    if (c.dof >= 0) G[c.dof] -= c.sgn * c.s * w[c.off];
    else G.noalias() -= c.J.transpose() * (c.s * weighted_direction(x, w));
  }
}

void NmdpProblem::add_dv_term(int x, const VecX& w, double sign, MatX& A) {
  // sign * J_x^T (d f_x/dX) J_x with d f_x/dX = -k_c s'(d) u_x n^T (geom, n held), and for a stop
  // d(s e_k k_c s(d) w)/d theta_k = s k_c s'(d) w (-s) = -k_c s'(d) w
  const NmdpContact& c = pairs_[x];
  if (!(c.ds > 0)) return;
  if (c.dof >= 0) {
    A(c.dof, c.dof) -= sign * c.ds * w[c.off];
    return;
  }
  tmp_.noalias() = c.J.transpose() * weighted_direction(x, w);
  tmp2_.noalias() = c.J.transpose() * c.n;
  A.noalias() -= (sign * c.ds) * tmp_ * tmp2_.transpose();
}

void NmdpProblem::add_contact_jacobian(const VecX& w, bool with_dv, MatX& A) {
  // d(B w)/dtheta = sum_x [ M(f_x) + J_x^T (d f_x/dX) J_x ]; A -= that. M(f) is the second
  // derivative of both cores (force f on a, -f on b); a stop is linear in theta (no M term)
  for (int x = 0; x < n_slots_; ++x) {
    const NmdpContact& c = pairs_[x];
    if (!(c.s > 0)) continue;
    if (c.dof < 0) {
      const Vec3 u = weighted_direction(x, w);
      if (u.isZero(0)) continue;
      add_contact_point_hessian(m_, kin_, set_.con[x], c.Ja, c.Jb, c.s * u, -1.0, A);
    }
    if (with_dv) add_dv_term(x, w, -1.0, A);
  }
}

void NmdpProblem::G(const VecX& theta, const VecX& w, VecX& G) {
  BIGSTEP_CHECK_ARG(w.size() == n_w(), "w size", w.size(), detail::concat("expected m = ", n_w()));
  const int n = m_.n_q;
  if (form_ == NmdpForm::Ne) {
    update(theta, false);
    qd_ = (theta - in_.theta_m) / in_.h;
    const double hd = accel_ == AccelDenominator::Recommended ? in_.h : in_.dt_last;
    qdd_ = (qd_ - theta_dot_m_) / hd;
    if (G.size() != n) G.resize(n);
    rnea(m_, theta, qd_, qdd_, G, rnea_ws_, ms_);  // H theta_ddot + c + grad V (caller scratch)
  } else {
    update(theta, true);
    G.setZero(n);
    add_inertia_gradient(m_, kin_, anchor_I_, inertia_dt(), G, ms_);
    add_gravity_derivatives(m_, kin_, G, nullptr, ms_);
  }
  add_joint_terms(theta, &G, nullptr);
  sub_torque(theta, G);
  add_contact_force(w, G);
}


void NmdpProblem::ne_inertial_jacobian(MatX& A) {
  // d/dtheta_l of G_k = sum_j <d_k T_j, T_ddot_j>_j + ... with theta_dot = (theta - theta_-)/h,
  // theta_ddot = (theta_dot - theta_dot_-)/hd (docs/methods/nmdp.md §5.2, moment form):
  //   A_kl = sum_j <d_k T_j, d_l T_j / (h hd) + 2/h P^l + R^l + S^l>_j + <d_kl T_j, T_ddot_j>_j
  //   T_ddot_j = sum_a qdd_a d_a T_j + sum_ab qd_a qd_b d_ab T_j,   P^l = sum_a qd_a d_al T_j,
  //   R^l = sum_a qdd_a d_al T_j,   S^l = sum_ab qd_a qd_b d_abl T_j.
  // Twist rule with Omega_a = [w_a]x (0 for prismatic a), a <= b <= c on the root->j path:
  // d_ab T = Omega_a d_b T, d_abc T = Omega_a Omega_b d_c T. Sorting the indices gives, with
  // U_{>=l} = sum_{a>=l} qd_a d_a T, Wbar_{<l} = sum_{a<l} qd_a Omega_a,
  // Q_{>=l} = sum_{a,b>=l} qd_a qd_b d_ab T, M_{<l} = sum_{a,b<l} qd_a qd_b Omega_min Omega_max:
  //   P^l = Omega_l U_{>=l} + Wbar_{<l} d_l T           (R^l likewise with qdd)
  //   S^l = Omega_l Q_{>=l} + 2 Wbar_{<l} Omega_l U_{>=l} + M_{<l} d_l T
  //   Q_{>=l} = Q_{>l} + qd_l Omega_l (U_{>l} + U_{>=l}),  M_{<l+1} = M_{<l} + qd_l (2 Wbar_{<l} + qd_l Omega_l) Omega_l
  const int n = m_.n_q;
  const double h = in_.h, hd = accel_ == AccelDenominator::Recommended ? h : in_.dt_last;
  VecX& qd = qd_;
  VecX& qdd = qdd_;
  qd = (theta_ - in_.theta_m) / h;
  qdd = (qd - theta_dot_m_) / hd;
  A.setZero(n, n);
  // scratch reserved to n_q at construction
  std::vector<int>& path = path_;
  std::vector<Pair>& dT = dT_;
  std::vector<Pair>& Ud = Ud_;
  std::vector<Pair>& Ua = Ua_;
  std::vector<Pair>& Qd = Qd_;
  std::vector<Pair>& Y = Y_;
  std::vector<Vec3>& om = om_;
  for (int j = 0; j < m_.n_link; ++j) {
    path.clear();
    for (int k = 0; k < n; ++k)
      if (m_.moves(k, j)) path.push_back(k);
    const int p = int(path.size());
    if (p == 0 || m_.link_mass[j] == 0) continue;  // a massless link adds nothing to H, c
    const size_t base = size_t(j) * n;
    dT.resize(p);
    om.resize(p);
    Ud.resize(p);  // suffix sums, every entry written below
    Ua.resize(p);
    Qd.resize(p);
    Y.resize(p);
    // Omega_l = [w_l]x is applied as cross products (cross below); w_l = 0 for a prismatic DOF
    for (int i = 0; i < p; ++i) {
      const int k = path[i];
      dT[i] = {kin_.dR[base + k], kin_.dt[base + k]};
      om[i] = m_.dof_revolute[k] ? kin_.w[k] : Vec3::Zero();
    }
    // suffix sums along the path: U_{>=l} (qd and qdd), Q_{>=l}
    Pair U_next, Ua_next, Q_next;
    for (int i = p - 1; i >= 0; --i) {
      const int l = path[i];
      Ud[i] = U_next + qd[l] * dT[i];
      Ua[i] = Ua_next + qdd[l] * dT[i];
      Qd[i] = Q_next + qd[l] * cross(om[i], U_next + Ud[i]);
      U_next = Ud[i];
      Ua_next = Ua[i];
      Q_next = Qd[i];
    }
    const Pair Tdd = Ua[0] + Qd[0];
    // prefix sums: Wbar_{<l} = [wb]x (qd), [wa]x (qdd), M_{<l}. Y^l = dT/(h hd) + 2/h P^l + R^l + S^l
    // regrouped by the linearity of cross(): with X = Omega_l U_{>=l},
    //   Y^l = dT/(h hd) + Omega_l (2/h U_{>=l} + Ua_{>=l} + Q_{>=l}) + (2/h Wbar + Wbar_a) dT
    //         + 2 Wbar X + M dT,
    //   M_{<l+1} = M_{<l} + qd_l [u]x [w_l]x = M_{<l} + qd_l (w_l u^T - (u . w_l) I),  u = 2 wb + qd_l w_l
    Vec3 wb = Vec3::Zero(), wa = Vec3::Zero();
    Mat3 M = Mat3::Zero();
    const double c_h = 2 / h;
    for (int i = 0; i < p; ++i) {
      const int l = path[i];
      const Pair X = cross(om[i], Ud[i]);
      Y[i] = (1 / (h * hd)) * dT[i] + cross(om[i], c_h * Ud[i] + Ua[i] + Qd[i]) + cross(c_h * wb + wa, dT[i]) +
             2.0 * cross(wb, X) + apply(M, dT[i]);
      const Vec3 u = 2 * wb + qd[l] * om[i];
      M.noalias() += (qd[l] * om[i]) * u.transpose();
      M.diagonal().array() -= qd[l] * u.dot(om[i]);
      wb += qd[l] * om[i];
      wa += qdd[l] * om[i];
    }
    // A_kl += <d_k T_j, Y^l>_j + <d_kl T_j, T_ddot_j>_j through moment duals (moment_dual above):
    // <d_k T, Y^l> = dual(d_k T) . Y^l and, for k <= l (d_kl T = Omega_k d_l T),
    // <Omega_k d_l T, T_ddot> = (Omega_k^T dual(T_ddot)) . d_l T, symmetric in (k, l)
    const Pair Zt = moment_dual(m_, j, Tdd.R, Tdd.t, ms_);
    for (int a = 0; a < p; ++a) {
      const int k = path[a];
      const Pair Dk = moment_dual(m_, j, dT[a].R, dT[a].t, ms_);
      const Pair Zk = cross(-om[a], Zt);  // Omega_k^T = -[w_k]x
      for (int b = 0; b < p; ++b) {
        const int l = path[b];
        A(k, l) += dual_dot(Dk, Y[b].R, Y[b].t);
        if (b >= a) {
          const double v = dual_dot(Zk, dT[b].R, dT[b].t);
          A(k, l) += v;
          if (b != a) A(l, k) += v;
        }
      }
    }
  }
}

void NmdpProblem::A(const VecX& theta, const VecX& w, PgmMode mode, MatX& A) {
  BIGSTEP_CHECK_ARG(w.size() == n_w(), "w size", w.size(), detail::concat("expected m = ", n_w()));
  const int n = m_.n_q;
  update(theta, true);
  // the part of A that does not depend on w (inertia, gravity, joint terms, servo), cached with
  // the kinematics of theta_: PGM asks for A(theta, w) and then A(theta, w') at the same theta
  // (the search-direction QP, then the first Newton step of the projection, line 6)
  if (!have_A0_) {
    if (form_ == NmdpForm::Ne) {
      ne_inertial_jacobian(A0_);
    } else {
      A0_.setZero(n, n);
      add_inertia_hessian(m_, kin_, anchor_I_, inertia_dt(), A0_, ms_);
    }
    tmp_.setZero(n);
    add_gravity_derivatives(m_, kin_, tmp_, &A0_, ms_);
    add_joint_terms(theta, nullptr, &A0_);
    // -d tau/d theta = diag(K_p + K_d / h)  (§9)
    if (in_.kp.size() != 0)
      for (int i = 0; i < n; ++i) A0_(i, i) += in_.kp[i] + in_.kd[i] / in_.h;
    have_A0_ = true;
  }
  A = A0_;
  add_contact_jacobian(w, mode == PgmMode::Fo, A);
}

void NmdpProblem::contact_dv_term(const VecX& theta, const VecX& w, MatX& T) {
  update(theta, false);
  T.setZero(m_.n_q, m_.n_q);
  for (int x = 0; x < n_slots_; ++x)
    if (pairs_[x].s > 0) add_dv_term(x, w, 1.0, T);
}

double NmdpProblem::merit0(const VecX& theta) {
  if (form_ == NmdpForm::Ne) {
    w0_.setZero(n_w());
    G(theta, w0_, g0_);
    return 0.5 * g0_.squaredNorm();
  }
  update(theta, false);
  double E = inertia_value(m_, kin_, anchor_I_, inertia_dt(), ms_) + gravity_value(m_, kin_, ms_) - theta.dot(in_.tau);
  if (m_.has_damping_armature) {
    // 1/2 sum a (theta - theta~)^2 / hd^2 + 1/2 sum b (theta - theta_-)^2 / h (gradient: add_joint_terms)
    const double id = inertia_dt();
    for (int k = 0; k < m_.n_q; ++k) {
      const double e = theta[k] - theta_tilde_[k], r = theta[k] - in_.theta_m[k];
      E += 0.5 * m_.dof_armature[k] * e * e / (id * id) + 0.5 * m_.dof_damping[k] * r * r / in_.h;
    }
  }
  if (m_.has_stiffness)
    for (int k = 0; k < m_.n_q; ++k) {
      const double e = theta[k] - m_.dof_springref[k];
      E += 0.5 * m_.dof_stiffness[k] * e * e;  // spring potential (gradient: add_joint_terms)
    }
  if (in_.kp.size() != 0) {
    // gradient K_p (theta - theta_bar) + K_d ((theta - theta_-)/h - theta_dot_bar) = -tau_pd
    VecX& e = tmp_;
    VecX& r = tmp2_;
    e = theta - in_.theta_bar;
    r = theta - in_.theta_m - in_.h * in_.theta_dot_bar;
    E += 0.5 * (in_.kp.array() * e.array().square()).sum() + 0.5 / in_.h * (in_.kd.array() * r.array().square()).sum();
  }
  return E;
}

}  // namespace bigstep
