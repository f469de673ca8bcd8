// The compliant step (docs/methods/compliant.md §3 per-step recipe, §5-§8; paper
// Appendix 0.A). With theta Euclidean (N = I) and v0 = (theta_n - theta_{n-1}) / h:
//   1. M, f at (theta_n, v0): NeSmoothStep (armature, implicit joint damping, stable PD in M and f)
//   2. rows at theta_n once (compliant_rows.h), W_x = h^2 K_x + h B_x
//   3. bilateral condensation [derived, = App. 0.A (158)-(163)]:
//        M~ = M + G_b^T W_b G_b,  c0 = -K_b phi_b0 - (h K_b + B_b)(G_b v0 + h G^dot_b v0) - M^_b G^dot_b v0,
//        f~ = f + G_b^T c0
//   4. non-bilateral rows G* = [n; u; tangents], A* = G* M~^-1 G*^T, and per row (§6, §7.1)
//        q_x = -M^_x G^dot_x v0 - K_x phi_x0 - (h K_x + B_x)(G_x v0 + h (G_x M~^-1 f~ + G^dot_x v0))   (n, u)
//        d_x = -q_x                                                                              (r, s)
//      then the frictionless QP (§6), the staggered friction solve (§7.5, default) or the paper's
//      joint program (§7.2; §7.3 2-D, §7.4 polyhedral)
//   5. v1 = v0 + h M~^-1 (f~ + G*^T lambda*),  theta_{n+1} = theta_n + h v1   (§8, (36)-(37))
//   6. lambda_b = c0 - (W_b / h) G_b (v1 - v0)
// Departures (each says why at its block): with more rows than DOFs the N-step first solves its QP
// in 2n unknowns (compliant_reduced_qp.h; exact, KKT-checked, finite; the dense QP as a safety
// net); M^_x with dependent rows is a pivoted-Cholesky "basic" solve rather than the
// pseudo-inverse (A1); M^_x of the non-bilateral groups uses M~ (after condensation M~ plays M's
// role, App. 0.A Lambda = M~^-1, errata A3); the staggered loop starts
// every step from x = 0 (no warm start carried between steps, so a step depends on theta only).
// cpu-only: no CUDA mirror yet (the programs are BIGSTEP_HD kernels, cone_qp.h).
#include "solvers/compliant/compliant_step.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/error.h"
#include "solvers/compliant/compliant_reduced_qp.h"
#include "numerics/disk_qp_ipm.h"

namespace bigstep {

const char* friction_solve_name(FrictionSolve s) { return s == FrictionSolve::Joint ? "joint" : "staggered"; }
const char* friction_cone_name(FrictionCone c) {
  return c == FrictionCone::Cone2d ? "cone2d" : c == FrictionCone::Polyhedral ? "polyhedral" : "cone";
}

void validate_compliant_settings(const CompliantSettings& s) {
  auto nonneg = [](double v) { return std::isfinite(v) && v >= 0; };
  BIGSTEP_CHECK_ARG(std::isfinite(s.dt) && s.dt > 0, "integrator.dt", s.dt, "must be finite and > 0");
  BIGSTEP_CHECK_ARG(nonneg(s.mu), "contact.mu", s.mu, "must be finite and >= 0");
  const CompliantRowParams& r = s.rows;
  BIGSTEP_CHECK_ARG(nonneg(r.youngs), "compliant.youngs_modulus", r.youngs, "must be finite and >= 0");
  BIGSTEP_CHECK_ARG(nonneg(r.k_n), "compliant.normal_stiffness", r.k_n, "must be finite and >= 0");
  BIGSTEP_CHECK_ARG(nonneg(r.b_n), "compliant.normal_damping", r.b_n, "must be finite and >= 0");
  BIGSTEP_CHECK_ARG(std::isfinite(r.point_radius) && r.point_radius > 0, "compliant.point_radius", r.point_radius,
                    "must be finite and > 0");
  BIGSTEP_CHECK_ARG(nonneg(r.b_t), "compliant.friction_damping", r.b_t, "must be finite and >= 0 (0 = 1e6 / dt)");
  BIGSTEP_CHECK_ARG(nonneg(r.k_lim), "compliant.limit_stiffness", r.k_lim, "must be finite and >= 0");
  BIGSTEP_CHECK_ARG(nonneg(r.b_lim), "compliant.limit_damping", r.b_lim, "must be finite and >= 0");
  for (size_t l = 0; l < r.loops.size(); ++l) {
    BIGSTEP_CHECK_ARG(nonneg(r.loops[l].k), detail::concat("compliant.loops[", l, "].stiffness"), r.loops[l].k,
                      "must be finite and >= 0");
    BIGSTEP_CHECK_ARG(nonneg(r.loops[l].b), detail::concat("compliant.loops[", l, "].damping"), r.loops[l].b,
                      "must be finite and >= 0");
  }
  BIGSTEP_CHECK_ARG(nonneg(s.zeta), "compliant.zeta", s.zeta, "must be finite and >= 0 (0 = 1 / dt)");
  BIGSTEP_CHECK_ARG(s.cone_edges >= 3 && s.cone_edges <= 64, "compliant.cone_edges", s.cone_edges, "must be in [3, 64]");
  BIGSTEP_CHECK_ARG(std::isfinite(s.eps) && s.eps > 0, "compliant.eps", s.eps, "must be finite and > 0");
  BIGSTEP_CHECK_ARG(s.max_iterations >= 1, "compliant.max_iterations", s.max_iterations, "must be >= 1");
  BIGSTEP_CHECK_ARG(s.max_contacts >= 0 && s.max_contacts <= kMaxCompliantContacts, "compliant.max_contacts", s.max_contacts,
                    detail::concat("must be in [0, ", kMaxCompliantContacts, "] (0 = the model's, at most 128)"));
}

namespace {

bool all_finite(const double* a, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(a[i])) return false;
  return true;
}

int contacts_capacity(const Model& m, const CompliantSettings& s) {
  return s.max_contacts > 0 ? s.max_contacts : std::min(m.max_contacts, 128);
}
int poly_rows(const CompliantSettings& s) { return s.cone == FrictionCone::Polyhedral ? s.cone_edges : 0; }

// z = M^ b for the group `idx` of A (k rows): (A_gg)^+ b by Cholesky with diagonal pivoting,
// pivots below 1e-10 max diag dropped (their z = 0). Equals the pseudo-inverse when b lies in the
// range of A_gg, which G^T z needs only there: G^T maps the null space of A_gg = G M^-1 G^T to 0.
// (docs/methods/compliant.md §13 A1; a basic solution instead of the minimum-norm one otherwise.)
void mhat_solve(const MatX& A, const int* idx, int k, const double* b, double* z, MatX& psd_buf, int* perm) {
  if (k == 0) return;
  // why left-looking: the rank is <= n (6 for B4's 900 elements), so column j of L is
  // formed from A's column and the j columns before it, O(k rank^2) in all, where updating the
  // whole k x k trailing block after every pivot (the right-looking form) cost O(k^2 rank) and 40 %
  // of a 900-element step. Same operations on every entry in the same order: the same bits (A*
  // from a product is symmetric only to round-off, so an entry is read as the right-looking form
  // read it: row = the index at the larger position after the first pivot's swap).
  Eigen::Map<MatX> L(psd_buf.data(), k, k);
  double* d = psd_buf.data() + size_t(k) * k;  // trailing diagonal; the buffer holds R_max^2 >= k^2 + k
  double dmax = 0;
  for (int i = 0; i < k; ++i) {
    perm[i] = i;
    d[i] = A(idx[i], idx[i]);
    dmax = std::max(dmax, d[i]);
  }
  int rank = 0, p0 = 0;
  auto entry = [&](int x, int y) {  // A_xy of the group, oriented as above
    const int px = x == 0 ? p0 : x == p0 ? 0 : x, py = y == 0 ? p0 : y == p0 ? 0 : y;
    return px > py ? A(idx[x], idx[y]) : A(idx[y], idx[x]);
  };
  for (int j = 0; j < k; ++j) {
    int p = j;
    for (int i = j + 1; i < k; ++i)
      if (d[i] > d[p]) p = i;
    if (!(d[p] > 1e-10 * dmax)) break;
    if (j == 0) p0 = p;
    if (p != j) {
      std::swap(perm[j], perm[p]);
      std::swap(d[j], d[p]);
      for (int c = 0; c < j; ++c) std::swap(L(j, c), L(p, c));
    }
    const double l = std::sqrt(d[j]);
    L(j, j) = l;
    for (int i = j + 1; i < k; ++i) {
      double s = entry(perm[i], perm[j]);
      for (int c = 0; c < j; ++c) s -= L(i, c) * L(j, c);
      L(i, j) = s / l;
      d[i] -= L(i, j) * L(i, j);
    }
    rank = j + 1;
  }
  // L y = b_perm, L^T z1 = y on the leading rank pivots; the rest 0 (y in d's storage)
  for (int i = 0; i < k; ++i) z[idx[i]] = 0;
  double* y = d;
  for (int i = 0; i < rank; ++i) {
    double s = b[perm[i]];
    for (int c = 0; c < i; ++c) s -= L(i, c) * y[c];
    y[i] = s / L(i, i);
  }
  for (int i = rank - 1; i >= 0; --i) {
    double s = y[i];
    for (int c = i + 1; c < rank; ++c) s -= L(c, i) * y[c];
    y[i] = s / L(i, i);
  }
  for (int i = 0; i < rank; ++i) z[idx[perm[i]]] = y[i];
}

}  // namespace

size_t compliant_workspace_bytes(const Model& m, const CompliantSettings& s) {
  constexpr size_t kOver = SIZE_MAX;
  // a * b and a + b, saturating at kOver
  const auto mul = [](size_t a, size_t b) { return a != 0 && b > kOver / a ? kOver : a * b; };
  const auto add = [](size_t a, size_t b) { return b > kOver - a ? kOver : a + b; };
  const size_t nc = size_t(std::max(0, contacts_capacity(m, s))), nl = size_t(m.n_limit), n = size_t(m.n_q);
  const size_t nb = mul(3, s.rows.loops.size());
  const size_t R = add(mul(3, nc), nl), Rb = add(std::max(R, nb), 1);
  const size_t mc = add(mul(nc, add(1, size_t(poly_rows(s)))), nl);
  // the square buffers (A, psd, H, the cone QP's and the IPM's R x R), Ac (mc x R), G and M~^-1 G^T (n x R)
  size_t doubles = mul(5, mul(Rb, Rb));
  doubles = add(doubles, mul(mc, Rb));
  doubles = add(doubles, mul(3, mul(n, Rb)));
  doubles = add(doubles, mul(2, mul(add(nc, nl), add(nc, nl))));  // the dense QP's Q and A
  doubles = add(doubles, mul(16, add(Rb, mc)));                   // vectors
  return mul(doubles, sizeof(double));
}

void check_compliant_workspace(const Model& m, const CompliantSettings& s) {
  const size_t bytes = compliant_workspace_bytes(m, s);
  BIGSTEP_CHECK_ARG(bytes <= kCompliantWorkspaceBudget, "compliant.max_contacts", contacts_capacity(m, s),
                    detail::concat("a step's dense buffers would take ",
                                   bytes == SIZE_MAX ? std::string("more than 2^64") : detail::concat(double(bytes) / (1 << 20)),
                                   " MiB (", 3 * size_t(contacts_capacity(m, s)), " contact rows + ", m.n_limit,
                                   " limit rows), more than the ", kCompliantWorkspaceBudget >> 20, " MiB allowed"));
}

CompliantWorkspace::CompliantWorkspace(const Model& m, const CompliantSettings& s)
    : nc_max(contacts_capacity(m, s)),
      rows(m, contacts_capacity(m, s), int(s.rows.loops.size())),
      kin(m),
      kin_p(m),
      kin_m(m),
      sm(m),
      Mt(MatX::Zero(m.n_q, m.n_q)),
      Mtf(m.n_q),
      rqp(m.n_q, contacts_capacity(m, s) + m.n_limit),
      qp(std::max(1, contacts_capacity(m, s) + m.n_limit), std::max(1, 2 * (contacts_capacity(m, s) + m.n_limit))),
      cqp(std::max(1, 3 * contacts_capacity(m, s) + m.n_limit),
          std::max(1, contacts_capacity(m, s) * (1 + poly_rows(s)) + m.n_limit), contacts_capacity(m, s),
          contacts_capacity(m, s)) {
  const int n = m.n_q, nb = 3 * int(s.rows.loops.size());
  const int ny = nc_max + m.n_limit, R = 3 * nc_max + m.n_limit, Rb = std::max(R, nb) + 1;
  const int mc = nc_max * (1 + poly_rows(s)) + m.n_limit;
  ft.setZero(n);
  WGb.setZero(nb, n);
  c0.setZero(nb);
  lam_b.setZero(nb);
  tmp_n.setZero(n);
  v1.setZero(n);
  MinvGt.setZero(n, Rb);
  A.setZero(Rb, Rb);
  u_free.setZero(Rb);
  z.setZero(Rb);
  qd.setZero(Rb);
  lam.setZero(Rb);
  lam_prev.setZero(Rb);
  lam_best.setZero(Rb);
  psd.setZero(Rb, Rb + 1);
  perm.resize(size_t(Rb));
  idx.resize(size_t(Rb));
  const int nyq = std::max(1, ny);
  qp_Q.setZero(nyq, nyq);
  qp_A.setZero(nyq, nyq);
  qp_E.setZero(0, nyq);
  qp_c.setZero(nyq);
  qp_b.setZero(nyq);
  qp_e.setZero(0);
  qp_lb.setZero(nyq);
  qp_ub.setZero(0);
  qp_res.x.setZero(nyq);
  qp_res.u.setZero(2 * nyq);
  qp_res.nu.setZero(0);
  qp_res.active.reserve(size_t(2 * nyq));
  H.assign(size_t(R) * R + 1, 0.0);
  g.assign(size_t(R) + 1, 0.0);
  Ac.assign(size_t(mc) * R + 1, 0.0);
  bc.assign(size_t(mc) + 1, 0.0);
  lb.assign(size_t(R) + 1, 0.0);
  mu_c.assign(size_t(nc_max) + 1, 0.0);
  rad.assign(size_t(nc_max) + 1, 0.0);
  cx.assign(size_t(R) + 1, 0.0);
  cy.assign(size_t(cone_qp_rows(R, mc, nc_max, nc_max)) + 1, 0.0);
  ipm_s.assign(size_t(3 * R + disk_qp_ipm_scalars(R, nc_max)) + 1, 0.0);  // x, y (2 nc <= 2 R), work
  ipm_i.assign(size_t(disk_qp_ipm_ints(R)) + 1, 0);
  cone.assign(size_t(3 * nc_max) + 1, 0);
  disk.assign(size_t(2 * nc_max) + 1, 0);
}

CompliantIntegrator::CompliantIntegrator(const Model& m, const CompliantSettings& s) : Integrator(m), s_(s) {
  validate_compliant_settings(s_);
  check_compliant_workspace(m, s_);
  for (size_t l = 0; l < s_.rows.loops.size(); ++l) {
    const CompliantLoop& L = s_.rows.loops[l];
    BIGSTEP_CHECK_ARG(L.link_a >= -1 && L.link_a < m.n_link, detail::concat("compliant.loops[", l, "].link_a"), L.link_a,
                      "a link index or -1 (world)");
    BIGSTEP_CHECK_ARG(L.link_b >= -1 && L.link_b < m.n_link, detail::concat("compliant.loops[", l, "].link_b"), L.link_b,
                      "a link index or -1 (world)");
  }
}

RolloutParams CompliantIntegrator::default_params() const {
  RolloutParams p;
  p.contact.mu = s_.mu;
  return p;
}

std::unique_ptr<Workspace> CompliantIntegrator::make_workspace() const {
  return std::make_unique<CompliantWorkspace>(m_, s_);
}

namespace {

// The frictionless QP of §6 (the N-step of §7.5 with the tangential forces x held):
//   y = argmin 1/2 y^T y  s.t.  (I + W_y A_yy) y >= q_y - W_y A_yx x,  y >= 0,
// each row scaled by 1/max(1, W_ii) (positive: same feasible set; for stiff rows the scaled row
// is (W^-1 + A) y >= W^-1 q, which stays well conditioned as K grows). Dual active set: exact.
// warm: the active set of the previous N-step (this rollout's, carried in Data::qp_active across
// sweeps and steps; only speeds the dual active-set method up, the solution is unique), updated.
//
// Rows >> DOFs first (ours, exact): the same QP in 2n unknowns (compliant_reduced_qp.h), an
// active-set iteration over per-row regions that stops when the KKT conditions hold, O(ny n^2 + n^3)
// per iteration instead of the dense method's O(ny^3) (B4's 900-element foundation: seconds per
// step with 50 N, when elements lift off). It starts from the previous N-step's active set (warm);
// block pivoting gets at most kReducedMaxIter pieces (~0.1 ms each at 900 rows) before its finite
// phase 2 (a dual active set, same pieces) finishes; the dense QP (seconds at 900 rows) runs only if
// phase 2 hits its safety cap (never seen). Tried only when there are more rows
// than DOFs (ny > n): else the dense QP is the smaller one (a sphere stack has n = 6 ny); and only
// for rows with W_i A_ii <= 1e5 (see n_step).
constexpr int kReducedMaxIter = 100;

bool n_step(CompliantWorkspace& ws, int ny, int nx, const VecX& W, const double* x, double* y, int& iters,
            std::vector<int>& warm) {
  // right-hand side r = q_y - W_y A_yx x (unscaled), in qp_c's storage
  double* rhs = ws.qp_c.data();
  for (int i = 0; i < ny; ++i) {
    double v = ws.qd[i];
    for (int j = 0; j < nx; ++j) v -= W[i] * ws.A(i, ny + j) * x[j];
    rhs[i] = v;
  }
  // why the reduced QP is limited to max W_i A_ii <= 1e5: y_i = t_i = r_i - W_i G_i p cancels
  // (relative round-off ~ eps W A); beyond that (Hertz feet of a legged robot: W A ~ 1e8) the scaled QP is the accurate one
  double wa = 0;
  for (int i = 0; i < ny; ++i) wa = std::max(wa, W[i] * ws.A(i, i));
  if (ny > ws.Mt.rows() && wa <= 1e5) {
    const ReducedQpResult rr = reduced_unilateral_qp(ws.Mt, ws.rows.G, ny, W.data(), rhs, warm, kReducedMaxIter, ws.rqp, y);
    iters += rr.iterations;
    ws.n_step_iterations += rr.iterations;
    if (rr.solved) return true;
    ++ws.fallbacks;  // the dense QP decides (warm untouched: still the previous active set)
  }
  Eigen::Map<MatX> Q(ws.qp_Q.data(), ny, ny), Ai(ws.qp_A.data(), ny, ny);
  Q.setIdentity();
  for (int i = 0; i < ny; ++i) {
    const double s = 1 / std::max(1.0, W[i]);
    // A y <= b form of the qp solver: -s (I + W A_yy) y <= -s rhs
    for (int j = 0; j < ny; ++j) Ai(i, j) = -s * ((i == j ? 1.0 : 0.0) + W[i] * ws.A(i, j));
    ws.qp_b[i] = -s * rhs[i];
  }
  const DenseQpRef p{Q, ws.qp_c.head(ny).setZero(), ws.qp_E.leftCols(ny), ws.qp_e, Ai, ws.qp_b.head(ny),
                     ws.qp_lb.head(ny).setZero(), ws.qp_ub, {}};
  const QpStatus qs = ws.qp.solve(p, ws.qp_res, warm.empty() ? nullptr : &warm);
  iters += ws.qp_res.iterations;
  ws.n_step_iterations += ws.qp_res.iterations;
  if (qs != QpStatus::Solved) {
    warm.clear();
    return false;
  }
  warm.assign(ws.qp_res.active.begin(), ws.qp_res.active.end());  // capacity reserved: no allocation
  for (int i = 0; i < ny; ++i) y[i] = std::max(0.0, ws.qp_res.x[i]);
  return true;
}

// The friction set of contact i on the tangential variables at (r, s) of the cone QP, for a fixed
// normal force yn (T-step: disks / intervals / polyhedral rows) or the variable n (joint program).
struct FrictionSet {
  FrictionCone cone;
  int edges;
  double mu_eff_factor;  // cos(pi/k) inscribed, 1 circumscribed
};

// T-step of §7.5 for y fixed:
//   x = argmin 1/2 ||x||^2 + 1/2 ||(I + W_x A_xx) x + W_x A_xy y + d_x||^2  s.t. friction sets of radius mu y_n,i
// objective divided by max(1, max W_x)^2 (argmin unchanged; makes B_x = 1e6/h harmless).
bool t_step(CompliantWorkspace& ws, const CompliantRows& R, const VecX& W, double mu, const FrictionSet& fs,
            const double* y, double* x, bool warm, int& iters) {
  const int ny = R.ny, nx = R.nx, nc = R.nc, td = R.tdim;
  double wmax = 1;
  for (int i = 0; i < nx; ++i) wmax = std::max(wmax, W[ny + i]);
  const double sc = 1 / wmax;
  // Q / wmax = (I + W A_xx) / wmax, c / wmax; scaled objective 1/2 ||x||^2 / wmax^2 + 1/2 ||Qs x + cs||^2
  double* Qs = ws.psd.data();  // nx x nx row-major
  for (int i = 0; i < nx; ++i) {
    const int ri = ny + i;
    double c = ws.qd[ri];
    for (int j = 0; j < ny; ++j) c += W[ri] * ws.A(ri, j) * y[j];
    ws.g[i] = c * sc;  // cs_i, turned into Qs^T cs below
    for (int j = 0; j < nx; ++j) Qs[size_t(i) * nx + j] = ((i == j ? 1.0 : 0.0) + W[ri] * ws.A(ri, ny + j)) * sc;
  }
  // H = I / wmax^2 + Qs^T Qs, g = Qs^T cs (lower triangle read)
  double* gt = ws.lb.data();  // scratch for Qs^T cs (lb is not used by the T-step)
  for (int a = 0; a < nx; ++a) {
    double s = 0;
    for (int i = 0; i < nx; ++i) s += Qs[size_t(i) * nx + a] * ws.g[i];
    gt[a] = s;
    for (int b = 0; b <= a; ++b) {
      double h = 0;
      for (int i = 0; i < nx; ++i) h += Qs[size_t(i) * nx + a] * Qs[size_t(i) * nx + b];
      ws.H[size_t(a) * nx + b] = h + (a == b ? sc * sc : 0.0);
      ws.H[size_t(b) * nx + a] = ws.H[size_t(a) * nx + b];
    }
  }
  for (int a = 0; a < nx; ++a) ws.g[a] = gt[a];
  ConeQpProblem<double> p;
  p.n = nx;
  p.H = ws.H.data();
  p.g = ws.g.data();
  int m_rows = 0;
  if (fs.cone == FrictionCone::Polyhedral) {
    // cos th_j x_r + sin th_j x_s <= mu_eff y_n  <=>  -cos x_r - sin x_s >= -mu_eff y_n
    const double th_off = M_PI / fs.edges;  // edges symmetric about t1 (k = 4: |x_r| + |x_s| pyramid)
    for (int i = 0; i < nc; ++i)
      for (int j = 0; j < fs.edges; ++j) {
        double* row = ws.Ac.data() + size_t(m_rows) * nx;
        std::fill(row, row + nx, 0.0);
        const double th = 2 * M_PI * j / fs.edges + th_off;
        row[td * i] = -std::cos(th);
        row[td * i + 1] = -std::sin(th);
        ws.bc[m_rows++] = -mu * fs.mu_eff_factor * std::max(0.0, y[i]);
      }
    p.m = m_rows;
    p.A = ws.Ac.data();
    p.b = ws.bc.data();
  } else {
    for (int i = 0; i < nc; ++i) {
      ws.disk[2 * i] = td * i;
      ws.disk[2 * i + 1] = td == 2 ? td * i + 1 : -1;
      ws.rad[i] = mu * std::max(0.0, y[i]);
    }
    p.n_disk = nc;
    p.disk = ws.disk.data();
    p.rad = ws.rad.data();
  }
  if (!all_finite(ws.H.data(), size_t(nx) * nx) || !all_finite(ws.g.data(), size_t(nx)) ||
      !all_finite(ws.bc.data(), size_t(m_rows)) || !all_finite(ws.rad.data(), size_t(nc)))
    return false;
  ConeQpIterate<double> it{ws.cx.data(), ws.cy.data(), ws.cqp_rho, warm};
  ConeQpSettings<double> st;
  st.eps_abs = st.eps_rel = 1e-11;
  // ADMM first (warm-started from the last sweep, ~80 iterations); on disks, the interior-point
  // method when ADMM has not settled after 2000 (ill-conditioned H, see disk_qp_ipm.h). Once ADMM
  // ran out in this step, the interior point serves the step's remaining sweeps, so that every sweep
  // maps y -> x with one method and the staggered loop can settle (alternating the two, whose answers
  // differ along H's flat directions, kept it from settling in 200 sweeps)
  st.max_iter = m_rows == 0 ? 2000 : 20000;
  auto admm = [&] {
    const ConeQpResult ra = ws.cqp.solve(p, it, st);
    ws.cqp_rho = it.rho;
    iters += ra.iterations;
    return ra;
  };
  const bool ipm_first = ws.tstep_ipm && m_rows == 0;
  ConeQpResult r;
  r.status = ConeQpStatus::MaxIterations;
  if (!ipm_first) r = admm();
  if (r.status == ConeQpStatus::MaxIterations && m_rows == 0) {
    ws.tstep_ipm = true;
    // its x, and its multipliers in ADMM's layout ([n bound slots, all 0][2 per disk]), are the
    // next warm start; when it fails, ADMM's iterate stays (run now if it was skipped)
    const DiskQpIpmResult ri = disk_qp_ipm_solve(p, DiskQpIpmSettings<double>{}, ws.ipm_s.data(), ws.ipm_s.data() + nx,
                                                 ws.ipm_s.data() + 3 * nx, ws.ipm_i.data());
    iters += ri.iterations;
    if (ri.status == ConeQpStatus::Solved) {
      std::copy_n(ws.ipm_s.data(), nx, ws.cx.data());
      std::fill_n(ws.cy.data(), nx, 0.0);
      std::copy_n(ws.ipm_s.data() + nx, 2 * nc, ws.cy.data() + nx);
      r.status = ConeQpStatus::Solved;
    } else if (ipm_first) {
      r = admm();
    }
  }
  if (!all_finite(ws.cx.data(), size_t(nx))) return false;
  if (r.status != ConeQpStatus::Solved) {
    // why an unfinished T-step may still be used: with feet off the symmetric rest pose (a tilted
    // box on the incline, the batch's perturbed starts) H = I / wmax^2 + Qs^T Qs is singular up to
    // 1e-12 along the tangential directions the body cannot move in, and ADMM ends at max_iter with
    // residuals ~1e-9 of |g| instead of 1e-11. Such an iterate (residuals <= 1e-6 relative), put
    // back onto its disks, is taken and counted (inexact); anything worse fails the step as before.
    double gmax = 0, xmax = 0;
    for (int i = 0; i < nx; ++i) {
      gmax = std::max(gmax, std::abs(ws.g[i]));
      xmax = std::max(xmax, std::abs(ws.cx[i]));
    }
    if (r.status != ConeQpStatus::MaxIterations || !(r.prim_res <= 1e-6 * (1 + xmax)) ||
        !(r.dual_res <= 1e-6 * (1 + gmax)))
      return false;
    ++ws.inexact;
    if (fs.cone != FrictionCone::Polyhedral)
      for (int i = 0; i < nc; ++i) {
        double* xi = ws.cx.data() + td * i;
        const double norm = td == 2 ? std::hypot(xi[0], xi[1]) : std::abs(xi[0]);
        if (norm > ws.rad[i]) {
          const double f = norm > 0 ? ws.rad[i] / norm : 0.0;
          for (int k = 0; k < td; ++k) xi[k] *= f;
        }
      }
  }
  for (int i = 0; i < nx; ++i) x[i] = ws.cx[i];
  return true;
}

// The paper's joint program (§7.2, App. 0.A (181)-(198)) over lambda* = [y; x]:
//   min 1/2 lambda^T H lambda + g^T lambda,  H = diag(zeta I_y, I_x) + Qt^T Qt,  g = Qt^T d_x,
//   Qt = [0 | I_x] + W_x A_x.   (beta_x = Qt lambda + d_x)
//   s.t. (P_y^T + W_y A_y.) lambda >= q_y (rows scaled by 1/max(1, W)),  y >= 0,  friction cones.
bool joint_program(CompliantWorkspace& ws, const CompliantRows& R, const VecX& W, double mu, double zeta,
                   const FrictionSet& fs, double* lam, int& iters) {
  const int ny = R.ny, nx = R.nx, nc = R.nc, td = R.tdim, n = R.R;
  // Qt (nx x n) row-major in psd
  double* Qt = ws.psd.data();
  for (int i = 0; i < nx; ++i) {
    const int ri = ny + i;
    for (int j = 0; j < n; ++j) Qt[size_t(i) * n + j] = (j == ri ? 1.0 : 0.0) + W[ri] * ws.A(ri, j);
  }
  for (int a = 0; a < n; ++a) {
    double s = 0;
    for (int i = 0; i < nx; ++i) s += Qt[size_t(i) * n + a] * ws.qd[ny + i];
    ws.g[a] = s;
    for (int b = 0; b <= a; ++b) {
      double h = 0;
      for (int i = 0; i < nx; ++i) h += Qt[size_t(i) * n + a] * Qt[size_t(i) * n + b];
      if (a == b) h += a < ny ? zeta : 1.0;
      ws.H[size_t(a) * n + b] = ws.H[size_t(b) * n + a] = h;
    }
  }
  // normal / unilateral spring-damper rows and the bounds
  int m_rows = 0;
  for (int i = 0; i < ny; ++i) {
    const double s = 1 / std::max(1.0, W[i]);
    double* row = ws.Ac.data() + size_t(m_rows) * n;
    for (int j = 0; j < n; ++j) row[j] = s * ((i == j ? 1.0 : 0.0) + W[i] * ws.A(i, j));
    ws.bc[m_rows++] = s * ws.qd[i];
  }
  for (int j = 0; j < n; ++j) ws.lb[j] = j < ny ? 0.0 : -INFINITY;
  ConeQpProblem<double> p;
  p.n = n;
  p.H = ws.H.data();
  p.g = ws.g.data();
  p.lb = ws.lb.data();
  if (fs.cone == FrictionCone::Polyhedral) {
    const double th_off = M_PI / fs.edges;
    for (int i = 0; i < nc; ++i)
      for (int j = 0; j < fs.edges; ++j) {
        double* row = ws.Ac.data() + size_t(m_rows) * n;
        std::fill(row, row + n, 0.0);
        const double th = 2 * M_PI * j / fs.edges + th_off;
        row[i] = mu * fs.mu_eff_factor;
        row[ny + td * i] = -std::cos(th);
        row[ny + td * i + 1] = -std::sin(th);
        ws.bc[m_rows++] = 0;
      }
  } else {
    for (int i = 0; i < nc; ++i) {
      ws.cone[3 * i] = i;
      ws.cone[3 * i + 1] = ny + td * i;
      ws.cone[3 * i + 2] = td == 2 ? ny + td * i + 1 : -1;
      ws.mu_c[i] = mu;
    }
    p.n_cone = nc;
    p.cone = ws.cone.data();
    p.mu = ws.mu_c.data();
  }
  p.m = m_rows;
  p.A = ws.Ac.data();
  p.b = ws.bc.data();
  // a state thrown far by an earlier failed step gives non-finite data: flag, do not throw
  if (!all_finite(ws.H.data(), size_t(n) * n) || !all_finite(ws.g.data(), size_t(n)) ||
      !all_finite(ws.Ac.data(), size_t(m_rows) * n) || !all_finite(ws.bc.data(), size_t(m_rows)))
    return false;
  ConeQpIterate<double> it{ws.cx.data(), ws.cy.data(), 0.0, false};
  ConeQpSettings<double> st;
  st.eps_abs = st.eps_rel = 1e-10;
  st.max_iter = 50000;
  const ConeQpResult r = ws.cqp.solve(p, it, st);
  iters += r.iterations;
  if (r.status != ConeQpStatus::Solved || !all_finite(ws.cx.data(), size_t(n))) return false;
  for (int i = 0; i < n; ++i) lam[i] = ws.cx[i];
  for (int i = 0; i < ny; ++i) lam[i] = std::max(0.0, lam[i]);
  return true;
}

}  // namespace

StepStats CompliantIntegrator::advance(const VecX& th, const VecX& th_prev, const StepControl& u, const RolloutParams& p,
                                       Data& d, VecX& th_next) const {
  CompliantWorkspace& ws = static_cast<CompliantWorkspace&>(*d.ws);
  StepStats st;
  const int n = m_.n_q;
  const double h = s_.dt;
  // ---- 1. M, f at (theta_n, v0) ----
  NeSmoothStep& sm = ws.sm;
  ne_smooth_step(m_, h, th, th_prev, u, sm, p.link_mass_scale);
  const VecX& v0 = sm.v;
  const double mu = p.contact.mu;
  // the N-step warm start lives in the rollout's Data (sized once, on its first step)
  if (d.qp_active.capacity() < ws.qp_res.active.capacity()) d.qp_active.reserve(ws.qp_res.active.capacity());
  BIGSTEP_CHECK_ARG(std::isfinite(mu) && mu >= 0, "contact.mu", mu, "must be finite and >= 0");

  // ---- 2. rows at theta_n; G^dot v0 by central differences along v0 (displacement 1e-5) ----
  forward_kinematics(m_, th, ws.kin);
  const Kinematics *kp = nullptr, *km = nullptr;
  double eps = 0;
  const double vmax = v0.lpNorm<Eigen::Infinity>();
  if (s_.rows.gdot && vmax > 0) {
    eps = 1e-5 / vmax;
    ws.tmp_n = th + eps * v0;
    forward_kinematics(m_, ws.tmp_n, ws.kin_p);
    ws.tmp_n = th - eps * v0;
    forward_kinematics(m_, ws.tmp_n, ws.kin_m);
    kp = &ws.kin_p;
    km = &ws.kin_m;
  }
  // mu = 0: no tangent rows at all, so exactly no friction force (§7.5)
  const int tdim = mu > 0 ? (s_.cone == FrictionCone::Cone2d ? 1 : 2) : 0;
  CompliantRows& R = ws.rows;
  BIGSTEP_CHECK_ARG(std::isfinite(p.stiffness_scale) && p.stiffness_scale > 0, "stiffness_scale", p.stiffness_scale,
                    "must be finite and > 0");
  assemble_rows(m_, ws.kin, kp, km, eps, th, v0, s_.rows, h, tdim, p.stiffness_scale, R, st.status);

  // ---- 3. bilateral condensation: M~ = M + G_b^T W_b G_b, f~ = f + G_b^T c0 ----
  ws.Mt = sm.Mt;
  ws.ft = sm.f;
  const int nb = R.nb;
  if (nb > 0) {
    const auto Gb = R.Gb.topRows(nb);
    Eigen::Map<MatX> MinvGbt(ws.MinvGt.data(), n, nb);
    MinvGbt = sm.Mf.solve(Gb.transpose());
    ws.A.topLeftCorner(nb, nb).noalias() = Gb * MinvGbt;
    for (int i = 0; i < nb; ++i) ws.idx[size_t(i)] = i;
    // M^_b G^dot_b v0 with the smooth-step M (before condensation, docs/methods/compliant.md §3)
    ws.z.head(nb).setZero();
    if (s_.rows.gdot) mhat_solve(ws.A, ws.idx.data(), nb, R.gdb.data(), ws.z.data(), ws.psd, ws.perm.data());
    ws.u_free.head(nb).noalias() = Gb * v0;  // phi_dot_b0
    for (int i = 0; i < nb; ++i) {
      const double K = R.Kb[i], B = R.Bb[i], W = h * h * K + h * B;
      ws.c0[i] = -K * R.phib[i] - (h * K + B) * (ws.u_free[i] + h * R.gdb[i]) - ws.z[i];
      ws.qd[i] = W;
    }
    Eigen::Map<MatX> WGb(ws.WGb.data(), nb, n);
    WGb = ws.qd.head(nb).asDiagonal() * Gb;
    ws.Mt.noalias() += Gb.transpose() * WGb;
    ws.ft.noalias() += Gb.transpose() * ws.c0;
  }
  ws.Mtf.compute(ws.Mt);
  if (ws.Mtf.info() != Eigen::Success) {
    st.status |= STATUS_FACTOR_FAILED;
    th_next = th;
    return st;
  }

  // ---- 4. non-bilateral rows: A*, q / d, and the program ----
  const int Rn = R.R, ny = R.ny, nx = R.nx, nc = R.nc;
  auto lam = ws.lam.head(Rn);
  lam.setZero();
  ws.iterations = 0;
  ws.qp_iterations = 0;
  ws.n_step_iterations = 0;
  ws.fallbacks = 0;
  ws.inexact = 0;
  ws.tstep_ipm = false;
  if (Rn > 0) {
    const auto G = R.G.topRows(Rn);
    Eigen::Map<MatX> MinvGt(ws.MinvGt.data(), n, Rn);
    MinvGt = ws.Mtf.solve(G.transpose());
    ws.A.topLeftCorner(Rn, Rn).noalias() = G * MinvGt;
    ws.tmp_n = ws.Mtf.solve(ws.ft);
    ws.u_free.head(Rn).noalias() = G * ws.tmp_n;  // G M~^-1 f~
    // M^_x G^dot_x v0 per group x in {n, u, r, s} (docs/methods/compliant.md §13 A1: per group)
    ws.z.head(Rn).setZero();
    if (s_.rows.gdot) {
      auto group = [&](int first, int count, int stride) {
        for (int i = 0; i < count; ++i) ws.idx[size_t(i)] = first + i * stride;
        mhat_solve(ws.A, ws.idx.data(), count, R.gd.data(), ws.z.data(), ws.psd, ws.perm.data());
      };
      group(0, nc, 1);
      group(nc, R.nl, 1);
      for (int k = 0; k < R.tdim; ++k) group(ny + k, nc, R.tdim);
    }
    // q_x (n, u) and d_x = -q_x (r, s; K = 0), W_x = h^2 K + h B
    VecX& W = ws.lam_prev;  // W in lam_prev's storage until the staggered loop (which does not use it then)
    for (int i = 0; i < Rn; ++i) {
      const double K = R.K[i], B = R.B[i];
      const double base = G.row(i).dot(v0) + h * (ws.u_free[i] + R.gd[i]);
      const double q = -ws.z[i] - K * R.phi[i] - (h * K + B) * base;
      ws.qd[i] = i < ny ? q : -q;
      W[i] = h * h * K + h * B;
    }
    const FrictionSet fs{s_.cone, s_.cone_edges, s_.cone_inscribed ? std::cos(M_PI / s_.cone_edges) : 1.0};
    double* y = ws.lam.data();
    double* x = ws.lam.data() + ny;
    bool ok = true;
    if (nx == 0) {
      // frictionless: the QP of §6 once
      ok = n_step(ws, ny, 0, W, x, y, ws.qp_iterations, d.qp_active);
      ws.iterations = 1;
    } else if (s_.solve == FrictionSolve::Joint) {
      const double zeta = s_.zeta > 0 ? s_.zeta : 1 / h;
      ok = joint_program(ws, R, W, mu, zeta, fs, ws.lam.data(), ws.qp_iterations);
      ws.iterations = 1;
    } else {
      // staggered (§7.5): N-step with x held, T-step with y held, until the forces stop changing.
      // W lives in lam_prev's storage, so the previous iterate is kept in u_free (no longer needed)
      double* prev = ws.u_free.data();
      bool converged = false;
      // why the best sweep is kept: on a legged robot (gymnasium ant) the sweep has an unstable mode
      // (growth ~1.3 per sweep) that the first sweeps hide: the change falls to ~1e-8, then grows.
      // The loop returns the sweep with the smallest change and flags the step only when even that
      // one is above sqrt(eps).
      // why the sweep may be under-relaxed: at a leg's touchdown the plain block Gauss-Seidel can
      // settle into a 2-cycle; when a sweep does not shrink the change by 1 % (twice in a row) the update
      // becomes lambda <- prev + omega (lambda_new - prev), omega halved each time (down to 1/16).
      // A convex combination of feasible (y, x) pairs stays inside the friction cones.
      double best = INFINITY, last = INFINITY, omega = 1;
      int stuck = 0;
      for (int k = 1; k <= s_.max_iterations && ok; ++k) {
        for (int i = 0; i < Rn; ++i) prev[i] = ws.lam[i];
        ok = n_step(ws, ny, nx, W, x, y, ws.qp_iterations, d.qp_active) && t_step(ws, R, W, mu, fs, y, x, k > 1, ws.qp_iterations);
        ws.iterations = k;
        double dy = 0, ny2 = 0;
        for (int i = 0; i < ny; ++i) {
          dy += (y[i] - prev[i]) * (y[i] - prev[i]);
          ny2 += y[i] * y[i];
        }
        // why friction is measured as G_x^T dx, the generalised force it exerts, and not dx: the next
        // N-step and the motion see x only through G_x^T x. On a tilted box x has directions that
        // exert nothing (corners squeezing each other, where H = I / wmax^2 + Qs^T Qs is flat to
        // 1e-12); the T-step leaves ~1e-7 of solver noise along them every sweep, so |dx| stalled at
        // 1e-7 while G_x^T dx kept falling geometrically, and the loop ran to its cap of 200
        ws.tmp_n.setZero();
        for (int i = ny; i < Rn; ++i) ws.tmp_n += (ws.lam[i] - prev[i]) * G.row(i).transpose();
        const double change = (std::sqrt(dy) + ws.tmp_n.norm()) / (1 + std::sqrt(ny2));
        if (change <= s_.eps) {
          converged = true;
          break;
        }
        if (omega < 1)
          for (int i = 0; i < Rn; ++i) ws.lam[i] = prev[i] + omega * (ws.lam[i] - prev[i]);
        if (change < best) {
          best = change;
          ws.lam_best.head(Rn) = ws.lam.head(Rn);
        } else if (best <= std::sqrt(s_.eps) && change > 100 * best) {
          break;  // left a good point: an unstable mode of the sweep (see above)
        }
        stuck = change >= 0.99 * last ? stuck + 1 : 0;
        if (stuck >= 2 && omega > 1.0 / 16) {
          omega /= 2;
          stuck = 0;
        }
        last = change;
      }
      if (!converged && ok && best < INFINITY) {
        ws.lam.head(Rn) = ws.lam_best.head(Rn);
        converged = best <= std::sqrt(s_.eps);
      }
      if (!converged) st.status |= STATUS_NOT_CONVERGED;
    }
    if (!ok) {
      // no solution of the program: the step goes on without constraint forces, flagged
      st.status |= STATUS_NOT_CONVERGED;
      lam.setZero();
    }
    st.iterations = ws.iterations;
    st.nstep_iterations = ws.n_step_iterations;
    st.qp_iterations = ws.qp_iterations;
    st.fallbacks = ws.fallbacks;
    st.inexact = ws.inexact;
    for (int i = 0; i < nc; ++i) st.normal_force += ws.lam[i];
    ws.ft.noalias() += G.transpose() * lam;
  }

  // ---- 5. v1 = v0 + h M~^-1 (f~ + G*^T lambda*), theta_{n+1} = theta_n + h v1 ----
  ws.tmp_n = ws.Mtf.solve(ws.ft);
  ws.v1 = v0 + h * ws.tmp_n;
  th_next = th + h * ws.v1;
  // ---- 6. bilateral forces lambda_b = c0 - (W_b / h) G_b (v1 - v0) ----
  if (nb > 0) {
    ws.tmp_n = ws.v1 - v0;
    ws.lam_b.noalias() = R.Gb.topRows(nb) * ws.tmp_n;
    for (int i = 0; i < nb; ++i) ws.lam_b[i] = ws.c0[i] - (h * R.Kb[i] + R.Bb[i]) * ws.lam_b[i];
  }
  return st;
}

}  // namespace bigstep
