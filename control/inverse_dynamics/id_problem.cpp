// Shared stages of the inverse-dynamics models (docs/methods/inverse_dynamics.md §2, §3, §4.3
// repair, I10, I14): size checks, the block elimination through M_bb, the contact rows, the
// retrieval of v+ and tau, the repair QP, and the dispatch to the three model files.
#include "control/inverse_dynamics/id_problem.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "numerics/dense_small.h"
#include "control/inverse_dynamics/id_convex.h"
#include "control/inverse_dynamics/id_coulomb.h"
#include "control/inverse_dynamics/id_nslip.h"

namespace bigstep {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}

const char* id_kind_name(IdKind k) {
  switch (k) {
    case IdKind::LcpInf: return "id_lcp_inf";
    case IdKind::LcpMu: return "id_lcp_mu";
    case IdKind::QpMu: return "id_qp_mu";
    case IdKind::QpInf: return "id_qp_inf";
  }
  return "?";
}

double id_normal_force(const IdResult& r, double dt) { return r.f_n.head(r.n).sum() / dt; }

IdWorkspace::IdWorkspace(int m, std::span<const int> actuated, int n_max)
    : m_(m), nq_(int(actuated.size())), nb_(m - int(actuated.size())), n_max_(n_max), lcp(6 * n_max + 1),
      qp(int(actuated.size()) + 6 * n_max + 1, 13 * n_max + 1) {
  BIGSTEP_CHECK_ARG(m > 0, "inverse_dynamics.m", m, "expected > 0");
  BIGSTEP_CHECK_ARG(n_max >= 0, "inverse_dynamics.n_max", n_max, "expected >= 0");
  BIGSTEP_CHECK_ARG(nq_ > 0 && nq_ <= m, "inverse_dynamics.actuated (size)", nq_, "expected in [1, m]");
  std::vector<uint8_t> is_act(size_t(m), 0);
  int prev = -1;
  for (int k : actuated) {
    BIGSTEP_CHECK_ARG(k > prev && k < m, "inverse_dynamics.actuated", k, "expected strictly increasing in [0, m)");
    is_act[size_t(k)] = 1;
    prev = k;
    act_.push_back(k);
  }
  for (int k = 0; k < m; ++k)
    if (!is_act[size_t(k)]) una_.push_back(k);
  const int nb = nb_, rmax = 5 * n_max, nz = 6 * n_max, nx = nq_ + 6 * n_max + 1, mc = 8 * n_max + 1;
  L.setZero(nb, nb);
  B.setZero(nb, nq_);
  y0.setZero(nb);
  yk.setZero(nb);
  Jc.setZero(rmax, m);
  G.setZero(nb, rmax);
  jv.setZero(rmax);
  z.setZero(nz);
  vq.setZero(nq_);
  vb.setZero(nb);
  g.setZero(m);
  tmp.setZero(m);
  Q.setZero(nz, nz);
  r.setZero(nz);
  w.setZero(nz);
  qres.x.setZero(nx);
  // canonical inequalities of a QP: up to mc rows plus finite bounds (model C's Stage I: 5 n_max
  // lower bounds and 5 n_max upper bounds of the contacts it holds at zero)
  qres.u.setZero(13 * n_max + 1);
  qres.nu.setZero(1);
  qres.active.reserve(size_t(13 * n_max + 1));
  Hq.setZero(nx, nx);
  Aq.setZero(mc, nx);
  Eq.setZero(0, nx);
  cq.setZero(nx);
  bq.setZero(mc);
  eq.setZero(0);
  lbq.setZero(nx);
  ubq.setConstant(nx, kInf);
  U.setZero(nb, nb);
  R.setZero(nb, nb);
  sel.reserve(size_t(nb));
  H.setZero(nb, n_max);
  ystar.setZero(nb);
  K.setZero(nb, nb);
  S_set.reserve(size_t(n_max));
  S_tmp.reserve(size_t(n_max));
  warm.reserve(size_t(n_max));
  tmask.assign(size_t(n_max), 1);
  seen.reserve(size_t(4 * n_max + 21));
  flag.assign(size_t(n_max), 0);
  zs.setZero(nb);
  gam.setZero(nb);
  a.setZero(nb);
  ev.setZero(nb);
  uy.setZero(nb);
  yd.setZero(nb);
  Wn.setZero(rmax, rmax);
  Kt.setZero(nq_, rmax);
  hv.setZero(rmax);
  perm.reserve(size_t(nb));
  QR.setZero(rmax, nb);
  bvar.assign(size_t(rmax), 0);
  xrow.setZero(nx);
}

void IdWorkspace::init_result(IdResult& res) const {
  res.tau.setZero(nq_);
  res.v_plus.setZero(m_);
  res.f_n.setZero(n_max_);
  res.f_s.setZero(n_max_);
  res.f_t.setZero(n_max_);
  res.support.assign(size_t(n_max_), 0);
  res.n_support = 0;
  res.status = 0;
  res.iterations = 0;
  res.n = 0;
}

bool IdWorkspace::check(const IdProblem& p) const {
  const int nc = int(p.N.rows());
  BIGSTEP_CHECK_ARG(p.M.rows() == m_ && p.M.cols() == m_, "inverse_dynamics.M (rows)", p.M.rows(), "expected m x m");
  BIGSTEP_CHECK_ARG(p.kappa.size() == m_, "inverse_dynamics.kappa (size)", p.kappa.size(), "expected m");
  BIGSTEP_CHECK_ARG(p.qdot_des.size() == nq_, "inverse_dynamics.qdot_des (size)", p.qdot_des.size(), "expected nq");
  BIGSTEP_CHECK_ARG(nc <= n_max_, "inverse_dynamics.contacts", nc, "expected <= n_max of the workspace");
  BIGSTEP_CHECK_ARG(p.N.cols() == m_ && p.S.rows() == nc && p.S.cols() == m_ && p.T.rows() == nc && p.T.cols() == m_,
                    "inverse_dynamics.N/S/T (shape)", p.S.rows(), "expected n x m each");
  BIGSTEP_CHECK_ARG(p.phi.size() == nc && p.mu.size() == nc, "inverse_dynamics.phi/mu (size)", p.phi.size(),
                    "expected n");
  BIGSTEP_CHECK_ARG(p.ids.empty() || int(p.ids.size()) == nc, "inverse_dynamics.ids (size)", p.ids.size(),
                    "expected n or empty");
  BIGSTEP_CHECK_ARG(p.dt > 0 && std::isfinite(p.dt), "inverse_dynamics.dt", p.dt, "expected > 0");
  BIGSTEP_CHECK_ARG(p.vb_des.empty() || int(p.vb_des.size()) == nb_, "inverse_dynamics.vb_des (size)",
                    p.vb_des.size(), "expected nb or empty");
  BIGSTEP_CHECK_ARG(p.mu_inf >= 0, "inverse_dynamics.mu_inf", p.mu_inf, "expected >= 0 (0 = kIdQpMuInf)");
  for (double x : p.vb_des)
    if (!std::isfinite(x)) return false;
  for (int i = 0; i < nc; ++i)
    BIGSTEP_CHECK_ARG(p.mu[i] >= 0, "inverse_dynamics.mu", p.mu[i], "expected >= 0 (inf allowed)");
  return p.M.allFinite() && p.kappa.allFinite() && p.qdot_des.allFinite() && p.N.allFinite() && p.S.allFinite() &&
         p.T.allFinite() && p.phi.allFinite();
}

bool IdWorkspace::begin(const IdProblem& p, IdResult& res) {
  res.status = 0;
  res.iterations = 0;
  bool ok = check(p);
  res.status = ok ? 0u : ID_NONFINITE;
  if (ok && !factor(p)) res.status = ID_FAILED | ID_NONFINITE;  // M_bb not positive definite
  if (res.status == 0) return true;
  res.tau.setZero();
  res.n = 0;
  res.n_support = 0;
  return false;
}

void IdWorkspace::fail(const IdProblem& p, IdResult& res) {
  res.status |= ID_FAILED;
  z.head(rows).setZero();
  vq = p.qdot_des;
  finish(p, z.head(rows), vq, res);
}

bool IdWorkspace::factor(const IdProblem& p) {
  // M_bb = L L^T; y0 = L^-1 (kappa_b - M_bq qdot_des), yk = L^-1 kappa_b, B = L^-1 M_bq
  const int nb = nb_;
  for (int i = 0; i < nb; ++i)
    for (int j = 0; j < nb; ++j) L(i, j) = p.M(una_[size_t(i)], una_[size_t(j)]);
  if (!cholesky_inplace(L, nb)) return false;
  for (int i = 0; i < nb; ++i) {
    yk[i] = p.kappa[una_[size_t(i)]];
    for (int j = 0; j < nq_; ++j) B(i, j) = p.M(una_[size_t(i)], act_[size_t(j)]);
  }
  for (int j = 0; j < nq_; ++j) forward_subst(L, B.col(j), nb);
  forward_subst(L, yk, nb);
  y0.noalias() = B * p.qdot_des;
  y0 = yk - y0;
  return true;
}

void IdWorkspace::contact_rows(const IdProblem& p, bool pyramid) {
  // J_c = [N; S; T] (no-slip) or [N; S; -S; T; -T] (pyramid, direction-major, §2)
  n = int(p.N.rows());
  rows = (pyramid ? 5 : 3) * n;
  auto J = Jc.topRows(rows);
  J.topRows(n) = p.N;
  if (pyramid) {
    J.middleRows(n, n) = p.S;
    J.middleRows(2 * n, n) = -p.S;
    J.middleRows(3 * n, n) = p.T;
    J.middleRows(4 * n, n) = -p.T;
  } else {
    J.middleRows(n, n) = p.S;
    J.middleRows(2 * n, n) = p.T;
  }
  // G = L^-1 J_{c,b}^T, jv = J_{c,q} qdot_des + G^T y0 (= J_c v*)
  for (int c = 0; c < rows; ++c) {
    for (int i = 0; i < nb_; ++i) G(i, c) = J(c, una_[size_t(i)]);
    forward_subst(L, G.col(c), nb_);
    double s = 0;
    for (int j = 0; j < nq_; ++j) s += J(c, act_[size_t(j)]) * p.qdot_des[j];
    for (int i = 0; i < nb_; ++i) s += G(i, c) * y0[i];
    jv[c] = s;
  }
}

void IdWorkspace::finish(const IdProblem& p, Eigen::Ref<const VecX> zz, Eigen::Ref<const VecX> v_q, IdResult& res) {
  // v+_b = L^-T (L^-1 (kappa_b - M_bq v_q) + G z), v+_q = v_q; dt tau = (M v+ - kappa - J_c^T z)_q
  const int nb = nb_;
  vb.noalias() = B * v_q;
  vb = yk - vb;
  vb.noalias() += G.leftCols(rows) * zz.head(rows);
  backward_subst_transposed(L, vb, nb);
  for (int i = 0; i < nb; ++i) res.v_plus[una_[size_t(i)]] = vb[i];
  for (int j = 0; j < nq_; ++j) res.v_plus[act_[size_t(j)]] = v_q[j];
  g.noalias() = Jc.topRows(rows).transpose() * zz.head(rows);
  tmp.noalias() = p.M * res.v_plus;
  tmp -= p.kappa;
  tmp -= g;
  for (int j = 0; j < nq_; ++j) res.tau[j] = tmp[act_[size_t(j)]] / p.dt;
  // per-contact impulses
  res.n = n;
  const bool pyramid = rows == 5 * n;
  for (int i = 0; i < n; ++i) {
    res.f_n[i] = zz[i];
    res.f_s[i] = pyramid ? zz[n + i] - zz[2 * n + i] : zz[n + i];
    res.f_t[i] = pyramid ? zz[3 * n + i] - zz[4 * n + i] : zz[2 * n + i];
  }
}

bool IdWorkspace::repair(const IdProblem& p, bool pyramid, bool bounded, IdResult& res) {
  // x = [u = v+_q (nq); z (rows); s (n)]. With y = yk - B u + G z = L^T v+_b:
  //   N v+ = N_q u + G_N^T y,  tangential velocity A v+ = A_q u + G_A^T y  (A = S, T rows)
  // objective 1/2 |u - qdot_des|^2 + rho/2 |s|^2 + eps/2 |z|^2 (+ rho/2 |A v+|^2 without a pyramid)
  // constraints -(N v+) - s <= phi/dt, x_z >= 0 on normal / pyramid impulses, s >= 0, pyramid rows.
  const int nq = nq_, nz = rows, nx = nq + nz + n, nb = nb_;
  const double rho = 1e6, eps = 1e-8;
  auto Hh = Hq.topLeftCorner(nx, nx);
  auto c = cq.head(nx);
  Hh.setZero();
  c.setZero();
  Hh.topLeftCorner(nq, nq).diagonal().setOnes();
  c.head(nq) = -p.qdot_des;
  Hh.diagonal().segment(nq, nz).setConstant(eps);
  Hh.diagonal().tail(n).setConstant(rho);
  // rows of a contact velocity as a map of x: d(row v+)/dx = [J_q - G_c^T B, G_c^T G, 0], offset G_c^T yk
  auto vel_row = [&](int cr, Eigen::Ref<VecX> out) -> double {
    out.setZero();
    for (int j = 0; j < nq; ++j) out[j] = Jc(cr, act_[size_t(j)]);
    for (int i = 0; i < nb; ++i) {
      const double gi = G(i, cr);
      if (gi == 0) continue;
      for (int j = 0; j < nq; ++j) out[j] -= gi * B(i, j);
      for (int k = 0; k < nz; ++k) out[nq + k] += gi * G(i, k);
    }
    return G.col(cr).head(nb).dot(yk.head(nb));
  };
  // a planned unactuated velocity with friction tied to load: QP,inf's cone at mu_inf here too (else
  // the repair carries the object on friction without squeeze, which no simulator delivers)
  const bool cone = pyramid && (bounded || (!p.vb_des.empty() && p.friction_needs_load));
  const double mu_unb = p.mu_inf > 0 ? p.mu_inf : kIdQpMuInf;
  const int n_ineq = n + (cone ? n : 0);
  auto A = Aq.topLeftCorner(n_ineq, nx);
  auto b = bq.head(n_ineq);
  A.setZero();
  for (int i = 0; i < n; ++i) {
    auto xr = xrow.head(nx);
    const double off = vel_row(i, xr);
    A.row(i) = -xr.transpose();
    A(i, nq + nz + i) = -1;
    b[i] = off + p.phi[i] / p.dt;
  }
  if (!pyramid) {
    // penalty on the no-slip rows: rho/2 |a^T x + off|^2 for each tangential row
    auto arow = xrow.head(nx);
    for (int cr = n; cr < 3 * n; ++cr) {
      const double off = vel_row(cr, arow);
      Hh.noalias() += rho * arow * arow.transpose();
      c += rho * off * arow;
    }
  }
  if (!p.vb_des.empty()) {
    // the planned unactuated velocity (IdProblem::vb_des) as in Stage I: + 1/2 |y - L^T vb_des|^2,
    // y = yk - B u + G z. Without it a penetrating grasp (phi < 0 on opposite fingers: no object
    // velocity leaves both, I14) is repaired with the least impulse and the object drops.
    auto arow = xrow.head(nx);
    for (int i = 0; i < nb; ++i) {
      arow.setZero();
      for (int j = 0; j < nq; ++j) arow[j] = -B(i, j);
      for (int k = 0; k < nz; ++k) arow[nq + k] = G(i, k);
      double off = yk[i];
      for (int j = i; j < nb; ++j) off -= L(j, i) * p.vb_des[size_t(j)];
      Hh.noalias() += arow * arow.transpose();
      c += off * arow;
    }
  }
  if (cone) {
    for (int i = 0; i < n; ++i) {
      const double mu = bounded ? p.mu[i] : mu_unb;
      if (!std::isfinite(mu)) continue;  // row 0 <= 0 (no bound)
      A(n + i, nq + i) = -mu;
      for (int d = 1; d <= 4; ++d) A(n + i, nq + d * n + i) = 1;
    }
  }
  auto lb = lbq.head(nx), ub = ubq.head(nx);
  lb.setConstant(-kInf);
  ub.setConstant(kInf);
  lb.segment(nq, pyramid ? nz : n).setZero();  // f_N (and pyramid impulses) >= 0; no-slip f_S, f_T free
  lb.tail(n).setZero();
  DenseQpRef qp_ref{Hh, c, Eq.topLeftCorner(0, nx), eq.head(0), A, b, lb, ub, {}};
  const QpStatus st = qp.solve(qp_ref, qres, nullptr, 2000);
  res.iterations += qres.iterations;
  if (st != QpStatus::Solved) return false;
  vq = qres.x.head(nq);
  z.head(nz) = qres.x.segment(nq, nz);
  finish(p, z.head(nz), vq, res);
  return true;
}

std::vector<int> id_actuated_dofs(const Model& m) {
  std::vector<int> act;
  for (int k = 0; k < m.n_q; ++k) {
    const JointType jt = m.link_joint[size_t(m.dof_link[size_t(k)])];
    if (jt != JointType::Floating && jt != JointType::Planar) act.push_back(k);
  }
  return act;
}

IdTerms::IdTerms(const Model& m)
    : kin(m), con(m, 4), crba(m), rnea(m), M(m.n_q, m.n_q), kappa(m.n_q), bias(m.n_q),
      N(m.max_contacts, m.n_q), S(m.max_contacts, m.n_q), T(m.max_contacts, m.n_q), phi(m.max_contacts),
      mu(m.max_contacts), ids(size_t(m.max_contacts), 0) {}

void IdTerms::update(const Model& m, const VecX& theta, const VecX& v, double dt, double mu_all, double phi_max,
                     const double* mass_scale, const double* geom_mu) {
  ::bigstep::crba(m, theta, M, crba, mass_scale);  // core/crba.h (the member of the same name is its scratch)
  for (int k = 0; k < m.n_q; ++k) M(k, k) += m.dof_armature[size_t(k)];
  nonlinear_effects(m, theta, v, bias, rnea, mass_scale);
  for (int k = 0; k < m.n_q; ++k) bias[k] += m.dof_damping[size_t(k)] * v[k];
  kappa.noalias() = M * v;
  kappa -= dt * bias;
  forward_kinematics(m, theta, kin);
  con.update(m, kin, theta, phi_max, 4);
  n = con.n_con;
  for (int i = 0; i < n; ++i) {
    const ContactFrame& f = con.frames[size_t(i)];
    N.row(i).noalias() = f.n.transpose() * f.J;
    S.row(i).noalias() = f.t[0].transpose() * f.J;
    T.row(i).noalias() = f.t[1].transpose() * f.J;
    phi[i] = f.phi;
    const Contact& c = con.set.con[size_t(i)];
    mu[i] = geom_mu ? geom_mu[c.geom_a] : mu_all;
    ids[size_t(i)] = c.geom_a * m.n_geom + c.geom_b;
  }
}

IdProblem IdTerms::problem(const VecX& qdot_des, double dt) const {
  return IdProblem{M, kappa, qdot_des, N.topRows(n), S.topRows(n), T.topRows(n), phi.head(n), mu.head(n), dt,
                   std::span<const int>(ids.data(), size_t(n))};
}

double lcp_violation(Eigen::Ref<const MatX> Q, Eigen::Ref<const VecX> r, Eigen::Ref<const VecX> z, Eigen::Ref<VecX> w) {
  w.noalias() = Q * z;
  w += r;
  double v = std::max(0.0, std::max(-z.minCoeff(), -w.minCoeff()));
  for (Eigen::Index i = 0; i < z.size(); ++i) v = std::max(v, std::abs(z[i] * w[i]));
  return v;
}

// The physical bound (ID_IMPULSE_BOUND) [ours; docs/methods/inverse_dynamics.md §11 I14's "detect, then repair and flag"]. With the
// joints prescribed (P v+ = qdot_des) the contact impulses act on the unactuated block only, as on
// one rigid body of mass m_b (the largest diagonal entry of M_bb: the whole robot for a floating
// base, the object for a grasp). Bringing it to rest (or out of penetration) from the contacts'
// no-impulse speeds u = max |J_c v* (+ phi/dt)| (the offsets of every model's LCP / QP rows) takes
// at most m_b u per contact, n m_b u in all, normal or tangential; the weight's impulse m_b g dt is
// inside (v* holds g dt). A squeeze (opposite contacts pushing against each other, a grasp) moves
// nothing: what bounds it is the friction it has to supply, f_N <= f_F / mu, so models A and C hold
// the normal impulses to n m_b u / min(1, mu_min) (mu = inf: 1). Model B, measured first, keeps
// its tighter factors: kIdImpulseBound = 1 on the normal impulses and kIdFrictionBound = 0.25 on
// the friction (standing on 4 / 2 feet the normal impulses sum to 0.25 / 0.5 of n m_b u and the
// friction to ~0.1, while on the joint-space trot at mu = 100 the steps the plan makes incompatible
// reach 2-20 in friction; 1 let a step with 1.5 through that threw the robot).
// A solution beyond the bound is the model's answer to an ill-posed plan, not a force any actuator
// or contact delivers: on the trot at mu = 100 model B pulled stance feet with 100 f_N (1e4-1e5 N,
// |tau| to 7e5 N m), and fed back into 1e135 N m.
double id_impulse_bound(const IdProblem& p, const IdWorkspace& ws) {
  const int n = ws.n, nb = ws.nb();
  double mb = 0;
  for (int i = 0; i < nb; ++i) mb = std::max(mb, ws.L.row(i).head(i + 1).squaredNorm());  // M_bb(i, i)
  double u = 0;
  for (int c = 0; c < ws.rows; ++c) u = std::max(u, std::abs(ws.jv[c] + (c < n ? p.phi[c] / p.dt : 0.0)));
  return n * mb * u;
}

bool id_exceeds_impulse_bound(const IdWorkspace& ws, Eigen::Ref<const VecX> z, double bound_n, double bound_f) {
  const int n = ws.n;
  const double fn = z.head(n).sum();
  const double ff = ws.rows == 5 * n ? z.segment(n, 4 * n).sum() : z.segment(n, 2 * n).cwiseAbs().sum();
  return fn > bound_n || ff > bound_f;
}

void id_given_impulse(const IdProblem& p, Eigen::Ref<const VecX> gi, IdWorkspace& ws, IdResult& r) {
  if (!ws.begin(p, r)) return;
  // kappa + g plays kappa's role with no contact rows
  ws.tmp = p.kappa + gi;
  const int nb = ws.nb_;
  for (int i = 0; i < nb; ++i) ws.vb[i] = ws.tmp[ws.una_[size_t(i)]];
  forward_subst(ws.L, ws.vb, nb);
  ws.vb.noalias() -= ws.B * p.qdot_des;
  backward_subst_transposed(ws.L, ws.vb, nb);
  for (int i = 0; i < nb; ++i) r.v_plus[ws.una_[size_t(i)]] = ws.vb[i];
  for (int j = 0; j < ws.nq_; ++j) r.v_plus[ws.act_[size_t(j)]] = p.qdot_des[j];
  ws.g.noalias() = p.M * r.v_plus;
  ws.g -= ws.tmp;
  for (int j = 0; j < ws.nq_; ++j) r.tau[j] = ws.g[ws.act_[size_t(j)]] / p.dt;
  r.n = 0;
}

void id_solve(IdKind kind, const IdProblem& p, IdWorkspace& ws, IdResult& r) {
  // A planned unactuated velocity (IdProblem::vb_des) prescribes all of v+. Then, for a plan whose
  // contacts stick and touch (N v+ + phi/dt = 0, S v+ = T v+ = 0: the object follows the fingers),
  // every complementarity condition of models A and B holds for any impulse of the model's friction
  // set (f_N >= 0 with w_N = 0; lambda = 0, w_F = 0, the pyramid), and what is left is the object's
  // momentum balance J_{c,b}^T z = M_b v_d - kappa_b [derived]: model C's Stage I with the target,
  // at mu (B) or at mu = inf as the cone's limit (A, with friction_needs_load); Stage II then picks
  // the minimum-norm torques among the impulses that balance it (the grasp's squeeze). The
  // pivoting / Lemke solvers would instead return the zero internal force and drop the object.
  if (!p.vb_des.empty() && (kind == IdKind::LcpInf || kind == IdKind::LcpMu)) {
    id_convex(p, ws, r, kind == IdKind::LcpMu);
    r.status |= ID_PLANNED_UNACTUATED;
    return;
  }
  switch (kind) {
    case IdKind::LcpInf: id_no_slip(p, ws, r); return;
    case IdKind::LcpMu: id_coulomb(p, ws, r); return;
    case IdKind::QpMu: id_convex(p, ws, r, true, true, IdStage1::Rest); return;
    case IdKind::QpInf: id_convex(p, ws, r, false, true, IdStage1::Rest); return;
  }
}

}  // namespace bigstep
