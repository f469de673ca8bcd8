// NE dry-friction LCP step (docs/methods/newton_euler.md §2 [choice]): semi-implicit Euler at velocity level
//   H (v+ - v) = h (tau - c - grad V) + sum_p J_p^T (n lambda_p + D_p beta_p)
//   (with the stable PD servo: M~ = H + h K_d replaces H and the PD torque of docs/methods/newton_euler.md §4 joins tau)
//   0 <= lambda ⊥ n^T J v+ + phi / h >= 0          (non-penetration with position correction;
//                                                   phi < 0: bounded, see below)
//   0 <= beta   ⊥ D^T J v+ + e gamma >= 0           (friction along the cone edges)
//   0 <= gamma  ⊥ mu lambda - e^T beta >= 0          (Coulomb cone)
//   theta+ = theta + h v+
// Joint springs -k (theta - ref) are explicit at theta_n in tau (MuJoCo's Euler; ne_contact.h).
// M~ = H + diag(a) + h diag(b) (+ h K_d with the servo): armature and implicit damping are part of
// the matrix through which the impulses act (ne_contact.h NeSmoothStep), so of G = J M~^-1 J^T.
// Contacts come from the contact set (core/contact_set.h): J = J_a(c_a) - J_b(c_b), so a pair of
// moving bodies gets equal and opposite impulses. Joint-limit stops (core/joint_limit.h) are
// frictionless contacts in joint space: a lambda row with normal s e_k and gap -depth (no beta,
// no gamma), the same position correction phi / h and active rule phi <= active_distance.
// Departure (docs/methods/newton_euler.md §2): a contact compliance cfm * max(diag G) is added to the Delassus
// diagonal (default cfm = 1e-6). With many coplanar contacts G is rank deficient and Lemke's
// pivoting ended in ray termination (chain on the slope, 40 contacts, dt = 1 ms). A failed solve
// is retried with 100x and 10^4 x that compliance before the step is flagged NOT_CONVERGED.
// A "solution" is accepted only when it satisfies the LCP to 1e-6 (relative) after Lemke's final
// basis is re-solved from the data: thousands of tableau pivots on a resting 40-contact chain
// used to leave round-off that was accepted as a solution and injected energy (bench Fig. 6).
// Departure from the literal -d_p / dt correction: a penetrating row asks for a separation speed
// of at most max_correction_speed (default 0.1 per second in the row's unit; ODE's "max correcting
// velocity"). The literal term restores any depth in one step, so the correction speed depth / h
// stays in the body as kinetic energy: it grows as dt shrinks and is unbounded. A contact missed
// by the active rule (approach speed x dt > active_distance: the chain dropped at 0.625 ms) came
// back at its impact speed (0.1 m bounce); gymnasium's ant starts 30 deg outside its ankle ranges
// (qpos 0, ranges [30, 70] deg), and its stops flung the ankles (armature 1) at 0.52 rad / h
// (523 rad/s at 1 ms): the ant was launched. Capped, a correction injects at most
// 1/2 G_ii^-1 max_correction_speed^2 per row; gaps (phi >= 0) keep phi / h (no energy).
// Speculative contacts (NeSettings::speculative, default on; departure from the plain active rule
// phi <= 1 mm): a pair or stop is also a row when the free velocity closes it to within
// active_distance during the step, phi + k h min(n^T J v_free, 0) <= active_distance (k = 2, the
// standard active-set rule of velocity-level time-stepping, Stewart-Trinkle / Anitescu-Potra). Its
// row is the same v_n+ >= -phi / h: the pair may approach until it touches at the end of the step,
// and no closer. Without it a corner moving more than active_distance per step crossed the floor
// before it was a row (the chain falling off the slope's edge at 0.02 s: 11 cm deep), and the
// capped correction then took many steps to lift it out. The cap now meets only penetrations
// present at the start (an initial pose like the ant's, a miss of the first-order prediction).
// Re-linearisation (NeSettings::relinearizations, default 3; departure from the plain one LCP per
// step): the row phi + h n^T J v+ >= 0 is the first-order expansion of the gap at the end of the
// step, but a contact point on a turning link moves on an arc. On the Fig. 6 slope at dt 0.02 the
// links tipping onto the ground ended steps 2-6 mm deeper than their rows predicted (measured per
// row: predicted gap 0, gap of the same material points after the step -1.4 to -5.8 mm), faster
// than the capped correction removes depth (0.1 m/s x 0.02 s = 2 mm per step): 23.6 mm. So after
// the solve each contact's cores are placed exactly at theta + h v+ and its remainder
// e_c = gap - (phi_c + h n^T J v+) (normal held fixed: exact for the terrain's planes) is put in
// its row, q_c += min(e_c, 0) / h, and the LCP is solved again (a chord iteration on the gap
// at the end of the step, the nonlinear non-penetration of Stewart-Trinkle's time-stepping), while
// some contact ends more than 0.1 active_distance short of its row's target gap. A positive
// remainder (the arc bends away from the surface) is not used: the first-order row is then the
// stricter one. Joint-limit rows are linear in theta: no remainder. It fires only on steps with
// large rotations (the slope at 0.02: 1-2 extra solves on a few dozen steps).
// Reported normal force (StepStats::normal_force): sum_p lambda_p / h of the accepted solution.
// cpu-only: the Newton-Euler baselines are CPU comparisons (their GPU form is not a goal).
#include "solvers/ne/ne_lcp.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace bigstep {

namespace {
// safety factor of the speculative prediction phi + k h n^T J v_free: v_free leaves out the
// impulses of the other contacts, which can speed a point's approach up (a free rod landing on
// one end: its other end 1.5x); a row that stays inactive costs only LCP size
constexpr double kSpeculativeSafety = 2.0;
// re-linearisation: triggered when a contact ends the step more than kRelinTolerance x
// active_distance (at least kRelinToleranceMin m) short of its row's target gap
constexpr double kRelinTolerance = 0.1;
constexpr double kRelinToleranceMin = 1e-6;
}  // namespace

NeLcpWorkspace::NeLcpWorkspace(const Model& m, const NeSettings& s)
    : kin(m),
      kin_next(m),
      lcp((m.max_contacts * (2 + s.friction_directions) + m.n_limit) + 1),
      sm(m),
      contacts(m, s.friction_directions) {
  const int n = m.n_q, nd = s.friction_directions, mc = m.max_contacts, ml = m.n_limit;
  const int rows = mc * (1 + nd) + ml, N_max = mc * (2 + nd) + ml;
  Jall.resize(rows, n);
  HinvJt.resize(n, rows);
  G.resize(rows, rows);
  M.resize(N_max, N_max);
  q.resize(N_max);
  z.resize(N_max);
  w.resize(N_max);
  phi.resize(mc + ml);
  tmp.resize(n);
  v_plus.resize(n);
  th_free.resize(n);
  z_keep.resize(N_max);
  q_base.resize(mc + ml);
  e_lin.resize(mc);
}

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
  // M~ = H + h K_d (docs/methods/newton_euler.md §1): M~ (v+ - v_free) = sum_p J_p^T (n lambda_p + D_p beta_p)
  NeSmoothStep& sm = ws.sm;
  ne_smooth_step(m_, h, th, th_prev, u, sm, p.link_mass_scale);
  const Eigen::LDLT<MatX>& Hf = sm.Mf;
  const VecX& v_star = sm.v_free;
  forward_kinematics(m_, th, ws.kin);
  NeContacts& con = ws.contacts;
  const int nd = s_.friction_directions;
  // active set: phi <= active_distance (docs/methods/newton_euler.md §2), and with speculative contacts also the pairs
  // and stops that the free motion closes to within it during the step (see the file comment)
  if (s_.speculative) {
    ws.th_free = th + h * v_star;
    forward_kinematics(m_, ws.th_free, ws.kin_next);
    con.update_speculative(m_, ws.kin, ws.kin_next, th, v_star, h, s_.active_distance, kSpeculativeSafety, nd);
  } else {
    con.update(m_, ws.kin, th, s_.active_distance, nd);
  }
  const int nc = con.n_con, nl = con.n_lim;
  ws.nc = nc;
  ws.nl = nl;
  ws.N = 0;
  if (nc + nl == 0) {
    th_next = th + h * v_star;
    return st;
  }
  // generalized directions: rows of Jall = [Jn (nc + nl normal rows: contacts, then joint-limit
  // stops); Jd (nc nd x n)]. A stop of DOF k is a frictionless contact in joint space: normal row
  // s e_k^T, gap phi = -depth, the same Baumgarte term phi / h and active rule as a contact
  const int nn = nc + nl;
  const int nr = nn + nc * nd;
  // packed maps over the max-size buffers: the memory layout of freshly sized matrices
  Eigen::Map<MatX> Jall(ws.Jall.data(), nr, n);
  auto Jn = Jall.topRows(nn);
  auto Jd = Jall.middleRows(nn, nc * nd);
  auto phi = ws.phi.head(nn);
  for (int c = 0; c < nc; ++c) {
    const ContactFrame& f = con.frames[c];
    Jn.row(c).noalias() = f.n.transpose() * f.J;
    for (int i = 0; i < nd; ++i) Jd.row(c * nd + i).noalias() = f.t[i].transpose() * f.J;
    phi[c] = f.phi;
  }
  for (int l = 0; l < nl; ++l) {
    const LimitContact& lc = con.set.lim[l];
    Jn.row(nc + l).setZero();
    Jn(nc + l, lc.dof) = lc.s;
    phi[nc + l] = -lc.depth;
  }
  Eigen::Map<MatX> HinvJt(ws.HinvJt.data(), n, nr);  // n x nr
  HinvJt = Hf.solve(Jall.transpose());
  Eigen::Map<MatX> G(ws.G.data(), nr, nr);  // Delassus operator
  G.noalias() = Jall * HinvJt;
  // LCP in (lambda, beta, gamma)
  const int N = nr + nc;
  ws.N = N;
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
      M(nn + c * nd + i, g) = 1;   // D^T J v+ + gamma
      M(g, nn + c * nd + i) = -1;  // - e^T beta
    }
    M(g, c) = p.geom_mu ? p.geom_mu[con.set.con[size_t(c)].geom_a] : mu;  // mu lambda (per contact: RolloutParams::geom_mu)
  }
  q.head(nn).noalias() = Jn * v_star;  // + the correction, the product first as in an expression temporary
  // position correction: a gap phi >= 0 enters as phi / h (the pair may close exactly within the
  // step: no impulse, no energy); a penetration asks for a separation speed min(depth / h,
  // max_correction_speed) (departure from -d_p / dt, see the file comment)
  const double v_max = s_.max_correction_speed;
  for (int i = 0; i < nn; ++i) q[i] += phi[i] >= 0 ? phi[i] / h : std::max(phi[i] / h, -v_max);
  ws.q_base.head(nn) = q.head(nn);
  q.segment(nn, nc * nd).noalias() = Jd * v_star;
  // Lemke; when it ends without a solution (numerical ray termination on degenerate contact sets)
  // retry twice with 100x more compliance, flagging the step as restarted (the compliance raised
  // stays raised for the re-linearised solves below)
  auto z = ws.z.head(N), w = ws.w.head(N);
  int pivots = 0, level = 0;
  double error = 0;
  const auto solve_lcp = [&]() {
    LcpStatus r = ws.lcp.solve(M, q, z, w, pivots, error);
    st.iterations += pivots;
    while (r != LcpStatus::Solved && level < 2) {
      ++level;
      M.topLeftCorner(nr, nr).diagonal().array() += (std::pow(100.0, level) - std::pow(100.0, level - 1)) * s_.cfm * gmax;
      r = ws.lcp.solve(M, q, z, w, pivots, error);
      st.iterations += pivots;
      st.status |= STATUS_RESTARTED;
    }
    return r;
  };
  const LcpStatus ls = solve_lcp();
  VecX& v_plus = ws.v_plus;
  v_plus = v_star;
  if (ls == LcpStatus::Solved) {
    ws.tmp.noalias() = HinvJt * z.head(nr);  // the product first, as in an expression temporary
    v_plus += ws.tmp;
    // re-linearisation (departure, see the file comment): while some contact's material points end
    // the step more than the tolerance short of the gap its row asked for, freeze the nonlinear
    // remainder e_c = gap(theta + h v+) - (phi_c + h n^T J v+) in the row and solve again
    const double tol = std::max(kRelinTolerance * s_.active_distance, kRelinToleranceMin);
    for (int pass = 0; pass < s_.relinearizations && nc > 0; ++pass) {
      ws.th_free = th + h * v_plus;  // (th_free: scratch once the active set is built)
      forward_kinematics(m_, ws.th_free, ws.kin_next);
      double short_by = 0;
      for (int c = 0; c < nc; ++c) {
        const Contact& ct = con.set.con[size_t(c)];
        const ContactFrame& f = con.frames[size_t(c)];
        Vec3 d = Vec3::Zero();  // exact motion of c_a relative to c_b over the step
        if (ct.link_a >= 0)
          d += point_position(ws.kin_next, ct.link_a, ct.ca_local) - point_position(ws.kin, ct.link_a, ct.ca_local);
        if (ct.link_b >= 0)
          d -= point_position(ws.kin_next, ct.link_b, ct.cb_local) - point_position(ws.kin, ct.link_b, ct.cb_local);
        const double gap = f.phi + f.n.dot(d);
        const double vn = Jn.row(c).dot(v_plus);
        // the row's target gap phi - h q_c (q_c = n^T J v_free + correction, before any remainder)
        const double target = f.phi - h * (ws.q_base[c] - Jn.row(c).dot(v_star));
        ws.e_lin[c] = std::min(gap - (f.phi + h * vn), 0.0);
        short_by = std::max(short_by, target - gap);
      }
      if (short_by <= tol) break;
      for (int c = 0; c < nc; ++c) q[c] = ws.q_base[c] + ws.e_lin[c] / h;
      ws.z_keep.head(N) = z;
      const double error_keep = error;
      if (solve_lcp() != LcpStatus::Solved) {  // keep the previous pass's solution
        z = ws.z_keep.head(N);
        error = error_keep;
        break;
      }
      v_plus = v_star;
      ws.tmp.noalias() = HinvJt * z.head(nr);
      v_plus += ws.tmp;
    }
    st.residual = error;  // relative LCP violation of the accepted solution (lcp_lemke.h)
    // normal force: the contacts' normal impulses lambda (rows 0 .. nc; the stops' rows after
    // them are not contact forces) over the step; the cone edges D beta are tangential
    st.normal_force = z.head(nc).sum() / h;
  } else {
    st.status |= STATUS_NOT_CONVERGED;  // no contact impulse found: the step is flagged
  }
  th_next = th + h * v_plus;
  return st;
}

}  // namespace bigstep
