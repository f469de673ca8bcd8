// numerics/cone_qp.h: KKT conditions on random instances of every constraint kind (checked here from
// the problem data, independent of the solver's own residuals), agreement with the Goldfarb-Idnani
// QP on cone-free instances, hand-computed projections (docs/methods/compliant.md §6 scalar case, §7.2 one contact),
// infeasibility, bad input, warm start and no allocation.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "numerics/cone_qp.h"
#include "numerics/qp_dense.h"
#include "tests/support/malloc_guard.h"
#include "tests/support/tol.h"

using namespace bigstep;
using bigstep::test::tol;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// A problem owning its data; prob() views it.
struct Instance {
  int n = 0, m = 0;
  std::vector<double> H, g, A, b, lb, ub, mu, rad;
  std::vector<int> cone, disk;
  bool has_bounds = false;

  ConeQpProblem<double> prob() const {
    ConeQpProblem<double> p;
    p.n = n;
    p.m = m;
    p.n_cone = int(mu.size());
    p.n_disk = int(rad.size());
    p.H = H.data();
    p.g = g.data();
    p.A = m ? A.data() : nullptr;
    p.b = m ? b.data() : nullptr;
    p.lb = has_bounds ? lb.data() : nullptr;
    p.ub = has_bounds ? ub.data() : nullptr;
    p.cone = cone.data();
    p.mu = mu.data();
    p.disk = disk.data();
    p.rad = rad.data();
    return p;
  }
  int rows() const { return cone_qp_rows(n, m, int(mu.size()), int(rad.size())); }
};

struct Shape {
  int cones3 = 0, cones2 = 0, disks = 0, free = 0, rows = 0;
  std::vector<double> mus{0.3};  // mu drawn from this set
  bool bounds = false;           // bounds on free variables and on cone normals
};

// Random instance with a known feasible point x_f: cones and disks hold x_f inside them, the
// bounds contain it, and every A row is satisfied at x_f with a random slack.
Instance random_instance(std::mt19937& rng, const Shape& s) {
  std::normal_distribution<double> N(0, 1);
  std::uniform_real_distribution<double> U(0, 1);
  Instance in;
  in.n = 3 * s.cones3 + 2 * s.cones2 + 2 * s.disks + s.free;
  const int n = in.n;
  in.has_bounds = s.bounds;
  in.lb.assign(n, -kInf);
  in.ub.assign(n, kInf);
  std::vector<double> xf(n, 0.0);
  int v = 0;
  auto tangent = [&](int k, double len) {  // random direction of length len in k dims
    double t[2] = {N(rng), k == 2 ? N(rng) : 0.0};
    const double nt = std::hypot(t[0], t[1]) + 1e-300;
    for (int a = 0; a < k; ++a) xf[v + 1 + a] = len * t[a] / nt;
  };
  for (int c = 0; c < s.cones3 + s.cones2; ++c) {
    const bool two = c >= s.cones3;
    const double mu = s.mus[size_t(U(rng) * s.mus.size()) % s.mus.size()];
    in.mu.push_back(mu);
    in.cone.insert(in.cone.end(), {v, v + 1, two ? -1 : v + 2});
    xf[v] = 0.1 + U(rng);
    tangent(two ? 1 : 2, U(rng) * mu * xf[v]);
    if (s.bounds && U(rng) < 0.5) in.lb[v] = 0;                // redundant with the cone
    if (s.bounds && U(rng) < 0.3) in.ub[v] = xf[v] + U(rng);  // may be active
    v += two ? 2 : 3;
  }
  for (int c = 0; c < s.disks; ++c) {
    const double rad = U(rng) < 0.1 ? 0.0 : 1.5 * U(rng);
    in.rad.push_back(rad);
    in.disk.insert(in.disk.end(), {v, v + 1});
    --v;  // tangent() writes from v + 1
    tangent(2, U(rng) * rad);
    v += 3;
  }
  for (int i = 0; i < s.free; ++i, ++v) {
    if (s.bounds) {
      const double r = U(rng);
      if (r < 0.7) in.lb[v] = -U(rng);
      if (r > 0.3) in.ub[v] = U(rng);
      if (r > 0.9) in.lb[v] = in.ub[v];  // an equality through bounds
    }
    const double lo = std::isfinite(in.lb[v]) ? in.lb[v] : -1, hi = std::isfinite(in.ub[v]) ? in.ub[v] : 1;
    xf[v] = lo + U(rng) * (hi - lo);
  }
  // H = G^T G + 0.1 I, g large enough that many constraints bind
  std::vector<double> G(size_t(n) * n);
  for (double& e : G) e = N(rng);
  in.H.assign(size_t(n) * n, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double a = i == j ? 0.1 : 0.0;
      for (int k = 0; k < n; ++k) a += G[k * n + i] * G[k * n + j];
      in.H[i * n + j] = a;
    }
  for (int i = 0; i < n; ++i) in.g.push_back(3 * N(rng));
  in.m = s.rows;
  for (int j = 0; j < s.rows; ++j) {
    double ax = 0;
    for (int i = 0; i < n; ++i) {
      in.A.push_back(N(rng));
      ax += in.A.back() * xf[i];
    }
    in.b.push_back(ax - 0.3 * U(rng));
  }
  return in;
}

/// KKT residuals of (x, y) for the sign convention of ConeQpIterate::y, from the data alone.
struct Kkt {
  double stationarity = 0, primal = 0, dual = 0, complementarity = 0;
  double worst() const { return std::max({stationarity, primal, dual, complementarity}); }
};

Kkt kkt(const Instance& in, const std::vector<double>& x, const std::vector<double>& y) {
  const int n = in.n, m = in.m, rB = m, rC = m + n, rD = m + n + 3 * int(in.mu.size());
  double xmax = 0, gmax = 0, hmax = 0;
  for (int i = 0; i < n; ++i) xmax = std::max(xmax, std::abs(x[i]));
  for (int i = 0; i < n; ++i) gmax = std::max(gmax, std::abs(in.g[i]));
  for (double h : in.H) hmax = std::max(hmax, std::abs(h));
  const double sx = 1 + xmax, sf = 1 + gmax + hmax * xmax;
  Kkt k;
  // stationarity: H x + g + C^T y over every slot of y (unused slots must be 0)
  std::vector<double> r(n);
  for (int i = 0; i < n; ++i) {
    r[i] = in.g[i] + y[rB + i];
    for (int j = 0; j < n; ++j) r[i] += in.H[i * n + j] * x[j];
    for (int j = 0; j < m; ++j) r[i] += in.A[j * n + i] * y[j];
  }
  for (size_t c = 0; c < in.mu.size(); ++c)
    for (int a = 0; a < 3; ++a) {
      const int idx = in.cone[3 * c + a];
      if (idx >= 0) r[idx] += y[rC + 3 * c + a];
      else k.stationarity = std::max(k.stationarity, std::abs(y[rC + 3 * c + a]));
    }
  for (size_t c = 0; c < in.rad.size(); ++c)
    for (int a = 0; a < 2; ++a) r[in.disk[2 * c + a]] += y[rD + 2 * c + a];
  for (int i = 0; i < n; ++i) k.stationarity = std::max(k.stationarity, std::abs(r[i]) / sf);
  // A rows: A x >= b, y <= 0, y (A x - b) = 0
  for (int j = 0; j < m; ++j) {
    double ax = 0, an = 0;
    for (int i = 0; i < n; ++i) ax += in.A[j * n + i] * x[i], an += std::abs(in.A[j * n + i]);
    const double sc = 1 + std::abs(in.b[j]) + an * xmax;
    k.primal = std::max(k.primal, (in.b[j] - ax) / sc);
    k.dual = std::max(k.dual, y[j] / sf);
    k.complementarity = std::max(k.complementarity, std::abs(y[j] * (ax - in.b[j])) / (sf * sc));
  }
  // bounds: y <= 0 only against a lower bound, >= 0 only against an upper one
  for (int i = 0; i < n; ++i) {
    const double lo = in.has_bounds ? in.lb[i] : -kInf, hi = in.has_bounds ? in.ub[i] : kInf, w = y[rB + i];
    k.primal = std::max({k.primal, (lo - x[i]) / sx, (x[i] - hi) / sx});
    if (!std::isfinite(lo)) k.dual = std::max(k.dual, -w / sf);
    if (!std::isfinite(hi)) k.dual = std::max(k.dual, w / sf);
    double c = 0;
    if (std::isfinite(lo)) c += std::abs(std::min(w, 0.0) * (x[i] - lo));
    if (std::isfinite(hi)) c += std::abs(std::max(w, 0.0) * (hi - x[i]));
    k.complementarity = std::max(k.complementarity, c / (sf * sx));
  }
  // cones: ||x_t|| <= mu x_n; w = -y in the dual cone (mu ||w_t|| <= w_n); w . x = 0
  for (size_t c = 0; c < in.mu.size(); ++c) {
    const int* id = &in.cone[3 * c];
    const double xn = x[id[0]], xr = x[id[1]], xs = id[2] >= 0 ? x[id[2]] : 0.0;
    const double wn = -y[rC + 3 * c], wr = -y[rC + 3 * c + 1], ws = -y[rC + 3 * c + 2];
    k.primal = std::max(k.primal, (std::hypot(xr, xs) - in.mu[c] * xn) / sx);
    k.dual = std::max(k.dual, (in.mu[c] * std::hypot(wr, ws) - wn) / sf);
    k.complementarity = std::max(k.complementarity, std::abs(wn * xn + wr * xr + ws * xs) / (sf * sx));
  }
  // disks: ||x_t|| <= rad; y in the normal cone <=> y . x_t = rad ||y|| (the support function)
  for (size_t c = 0; c < in.rad.size(); ++c) {
    const double xr = x[in.disk[2 * c]], xs = x[in.disk[2 * c + 1]];
    const double yr = y[rD + 2 * c], ys = y[rD + 2 * c + 1];
    k.primal = std::max(k.primal, (std::hypot(xr, xs) - in.rad[c]) / sx);
    k.complementarity = std::max(k.complementarity, std::abs(in.rad[c] * std::hypot(yr, ys) - (yr * xr + ys * xs)) / (sf * sx));
  }
  return k;
}

ConeQpSettings<double> tight() {
  ConeQpSettings<double> st;
  st.eps_abs = st.eps_rel = 1e-10;
  st.max_iter = 50000;
  return st;
}

struct Solved {
  std::vector<double> x, y;
  ConeQpResult r;
  double rho = 0;
};

Solved solve(ConeQp<double>& qp, const Instance& in, const ConeQpSettings<double>& st, const Solved* warm = nullptr) {
  Solved s;
  s.x.assign(in.n, 0.0);
  s.y.assign(in.rows(), 0.0);
  ConeQpIterate<double> it{s.x.data(), s.y.data(), 0.0, false};
  if (warm) {
    s.x = warm->x;
    s.y = warm->y;
    it = {s.x.data(), s.y.data(), warm->rho, true};
  }
  s.r = qp.solve(in.prob(), it, st);
  s.rho = it.rho;
  return s;
}

// Runs count instances of one shape family and checks KKT on each.
void check_family(const char* name, unsigned seed, int count, Shape (*shape)(std::mt19937&, int)) {
  std::mt19937 rng(seed);
  ConeQp<double> qp(40, 12, 8, 8);
  long iters = 0, worst_it = 0;
  double worst = 0;
  for (int t = 0; t < count; ++t) {
    const Instance in = random_instance(rng, shape(rng, t));
    const Solved s = solve(qp, in, tight());
    const Kkt k = kkt(in, s.x, s.y);
    INFO(name << " instance " << t << " n " << in.n << " m " << in.m << " iterations " << s.r.iterations
              << " stat " << k.stationarity << " prim " << k.primal << " dual " << k.dual << " comp "
              << k.complementarity);
    REQUIRE(s.r.status == ConeQpStatus::Solved);
    // the solver stops at 1e-10 absolute + relative residuals; the scaled checks here allow 1e-8
    CHECK(k.worst() <= tol(1e-8));
    if (std::getenv("BIGSTEP_CONE_QP_STATS") && s.r.iterations > 400)
      std::printf("  %s %d: n %d m %d cones %d disks %d iterations %d factorizations %d rho %g\n", name, t, in.n, in.m,
                  int(in.mu.size()), int(in.rad.size()), s.r.iterations, s.r.factorizations, s.rho);
    iters += s.r.iterations;
    worst_it = std::max(worst_it, long(s.r.iterations));
    worst = std::max(worst, k.worst());
  }
  if (std::getenv("BIGSTEP_CONE_QP_STATS"))
    std::printf("%-12s mean iterations %.1f, max %ld, worst KKT %.2e\n", name, double(iters) / count, worst_it, worst);
}

}  // namespace

TEST_CASE("cone_qp: KKT on random instances of every kind", "[cone_qp]") {
  const int kCount = 200;
  check_family("bounds", 11, kCount, [](std::mt19937& rng, int t) {
    Shape s;
    s.free = 1 + t % 10;
    s.bounds = true;
    return s;
  });
  check_family("linear", 12, kCount, [](std::mt19937& rng, int t) {
    Shape s;
    s.free = 1 + t % 10;
    s.rows = 1 + t % 8;
    s.bounds = t % 2 == 0;
    return s;
  });
  for (double mu : {0.0, 0.3, 1.0}) {
    static double mu_s;
    mu_s = mu;
    check_family(mu == 0 ? "cones mu=0" : mu == 1 ? "cones mu=1" : "cones mu=.3", 13 + unsigned(10 * mu), kCount,
                 [](std::mt19937& rng, int t) {
                   Shape s;
                   s.cones3 = 1 + t % 5;
                   s.mus = {mu_s};
                   s.bounds = t % 2 == 0;
                   return s;
                 });
  }
  check_family("cones 2-D", 14, kCount, [](std::mt19937& rng, int t) {
    Shape s;
    s.cones2 = 1 + t % 6;
    s.mus = {0.0, 0.3, 1.0};
    s.bounds = t % 2 == 0;
    return s;
  });
  check_family("disks", 15, kCount, [](std::mt19937& rng, int t) {
    Shape s;
    s.disks = 1 + t % 6;
    return s;
  });
  check_family("mixed", 16, kCount, [](std::mt19937& rng, int t) {
    Shape s;
    s.cones3 = t % 4;
    s.cones2 = t % 3;
    s.disks = t % 3;
    s.free = t % 5;
    s.rows = t % 6;
    s.mus = {0.0, 0.3, 1.0};
    s.bounds = t % 3 != 0;
    if (s.cones3 + s.cones2 + s.disks + s.free == 0) s.free = 1;
    return s;
  });
}

namespace {
// Delassus-like A = G M^-1 G^T for k rows over nv velocities (random G and SPD M); rank min(k, nv).
std::vector<double> delassus(std::mt19937& rng, int k, int nv) {
  std::normal_distribution<double> N(0, 1);
  Eigen::MatrixXd G(k, nv), F(nv, nv);
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < nv; ++j) G(i, j) = N(rng);
  for (int i = 0; i < nv; ++i)
    for (int j = 0; j < nv; ++j) F(i, j) = N(rng);
  const Eigen::MatrixXd M = F.transpose() * F + 0.5 * Eigen::MatrixXd::Identity(nv, nv);
  const Eigen::MatrixXd A = G * M.ldlt().solve(G.transpose());
  std::vector<double> a(size_t(k) * k);
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < k; ++j) a[i * k + j] = A(i, j);
  return a;
}
}  // namespace

TEST_CASE("cone_qp: spec-shaped programs (§6 N-step, §7.5 T-step with B = 1e6/h, §7.2 joint)", "[cone_qp]") {
  std::mt19937 rng(71);
  std::uniform_real_distribution<double> U(0, 1);
  std::normal_distribution<double> N(0, 1);
  ConeQp<double> qp(24, 8, 8, 8);
  const double h = 0.01, B = 1e6 / h;
  long iters[3] = {0, 0, 0};
  for (int t = 0; t < 200; ++t) {
    const int nc = 1 + t % 4, nv = 6;  // four contacts over six velocities: A is singular
    // N-step (§6): minimize 1/2 |y|^2 s.t. (I + W A) y >= q, y >= 0, W = h^2 K + h B_n per row
    {
      Instance in;
      in.n = in.m = nc;
      const std::vector<double> A = delassus(rng, nc, nv);
      in.H.assign(size_t(nc) * nc, 0.0);
      in.has_bounds = true;
      for (int i = 0; i < nc; ++i) {
        in.H[i * nc + i] = 1;
        in.g.push_back(0);
        in.lb.push_back(0);
        in.ub.push_back(kInf);
        const double e1 = U(rng), e2 = U(rng);  // drawn in order (the operands of '+' are unsequenced)
        const double W = h * h * std::pow(10.0, 4 + 4 * e1) + h * std::pow(10.0, 1 + 2 * e2);
        for (int j = 0; j < nc; ++j) in.A.push_back((i == j) + W * A[i * nc + j]);
        in.b.push_back(W * N(rng));
      }
      const Solved s = solve(qp, in, tight());
      const Kkt kn = kkt(in, s.x, s.y);
      INFO("N-step " << t << " iterations " << s.r.iterations << " stat " << kn.stationarity << " prim " << kn.primal << " dual " << kn.dual << " comp " << kn.complementarity);
      REQUIRE(s.r.status == ConeQpStatus::Solved);
      CHECK(kkt(in, s.x, s.y).worst() <= tol(1e-8));
      iters[0] += s.r.iterations;
    }
    // T-step (§7.5): minimize 1/2 |x|^2 + 1/2 |(I + W A) x + c|^2 over disks ||x_i|| <= mu_i y_n,i,
    // W = h B, divided by B^2 as docs/methods/compliant.md §7.5 prescribes
    {
      Instance in;
      in.n = 2 * nc;
      const int n = in.n;
      const std::vector<double> A = delassus(rng, n, nv);
      std::vector<double> J(size_t(n) * n), c(n);
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) J[i * n + j] = ((i == j) + h * B * A[i * n + j]) / B;
      for (int i = 0; i < n; ++i) c[i] = B * 0.1 * N(rng) / B;  // slip velocity ~0.1 m/s times B, / B
      in.H.assign(size_t(n) * n, 0.0);
      in.g.assign(n, 0.0);
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          double a = (i == j) / (B * B);
          for (int k = 0; k < n; ++k) a += J[k * n + i] * J[k * n + j];
          in.H[i * n + j] = a;
        }
      for (int i = 0; i < n; ++i)
        for (int k = 0; k < n; ++k) in.g[i] += J[k * n + i] * c[k];
      for (int i = 0; i < nc; ++i) {
        in.disk.insert(in.disk.end(), {2 * i, 2 * i + 1});
        in.rad.push_back(0.375 * 10 * U(rng));
      }
      const Solved s = solve(qp, in, tight());
      INFO("T-step " << t << " iterations " << s.r.iterations << " kkt " << kkt(in, s.x, s.y).worst());
      REQUIRE(s.r.status == ConeQpStatus::Solved);
      CHECK(kkt(in, s.x, s.y).worst() <= tol(1e-8));
      iters[1] += s.r.iterations;
    }
    // joint program (§7.2) with zeta = 1/h and a moderate friction damper B_r = 100 (a stress
    // value of the prototype): variables [n; r; s] per contact, cones, normal rows, lambda_n >= 0
    {
      Instance in;
      in.n = 3 * nc;
      in.m = nc;
      const int n = in.n;
      const std::vector<double> A = delassus(rng, n, nv);  // rows ordered (n_i, r_i, s_i) per contact
      const double Br = 100, zeta = 1 / h;
      std::vector<double> J(size_t(n) * n, 0.0), c(n, 0.0);  // beta = J lambda + c on tangential rows
      for (int i = 0; i < nc; ++i)
        for (int a = 1; a < 3; ++a) {
          const int row = 3 * i + a;
          for (int j = 0; j < n; ++j) J[row * n + j] = (row == j) + h * Br * A[row * n + j];
          c[row] = Br * 0.1 * N(rng);
        }
      in.H.assign(size_t(n) * n, 0.0);
      in.g.assign(n, 0.0);
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          double a = i == j ? (i % 3 == 0 ? zeta : 1.0) : 0.0;
          for (int k = 0; k < n; ++k) a += J[k * n + i] * J[k * n + j];
          in.H[i * n + j] = a;
        }
      for (int i = 0; i < n; ++i)
        for (int k = 0; k < n; ++k) in.g[i] += J[k * n + i] * c[k];
      in.has_bounds = true;
      in.lb.assign(n, -kInf);
      in.ub.assign(n, kInf);
      for (int i = 0; i < nc; ++i) {
        in.cone.insert(in.cone.end(), {3 * i, 3 * i + 1, 3 * i + 2});
        in.mu.push_back(0.125 * (t % 4));
        in.lb[3 * i] = 0;
        const double W = h * h * 1e5 + h * 1e2;
        for (int j = 0; j < n; ++j) in.A.push_back((3 * i == j) + W * A[3 * i * n + j]);
        in.b.push_back(W * (10 + N(rng)));
      }
      const Solved s = solve(qp, in, tight());
      INFO("joint " << t << " iterations " << s.r.iterations << " kkt " << kkt(in, s.x, s.y).worst());
      REQUIRE(s.r.status == ConeQpStatus::Solved);
      CHECK(kkt(in, s.x, s.y).worst() <= tol(1e-8));
      iters[2] += s.r.iterations;
    }
  }
  if (std::getenv("BIGSTEP_CONE_QP_STATS"))
    std::printf("spec-shaped mean iterations: N-step %.1f, T-step %.1f, joint %.1f\n", iters[0] / 200.0,
                iters[1] / 200.0, iters[2] / 200.0);
}

TEST_CASE("cone_qp: the KKT check rejects perturbed solutions", "[cone_qp]") {
  // the oracle above must be able to fail: each kind of error in (x, y) shows up in its term
  std::mt19937 rng(81);
  const Shape sh{.cones3 = 2, .disks = 1, .free = 2, .rows = 3, .mus = {0.3}, .bounds = true};
  ConeQp<double> qp(20, 4, 4, 4);
  for (int t = 0; t < 20; ++t) {
    const Instance in = random_instance(rng, sh);
    const Solved s = solve(qp, in, tight());
    REQUIRE(kkt(in, s.x, s.y).worst() <= tol(1e-8));
    std::vector<double> x = s.x, y = s.y;
    x[0] += 1e-5;  // stationarity (H is positive definite)
    CHECK(kkt(in, x, s.y).stationarity > 1e-7);
    // the largest multiplier of each block flipped: dual feasibility or stationarity breaks
    int jmax = 0;
    for (int j = 0; j < in.rows(); ++j)
      if (std::abs(y[j]) > std::abs(y[jmax])) jmax = j;
    y[jmax] = -y[jmax];
    const Kkt k = kkt(in, s.x, y);
    CHECK(std::max(k.dual, std::max(k.stationarity, k.complementarity)) > 1e-7);
    // a point outside a cone: move x_r of cone 0 past mu x_n
    x = s.x;
    x[1] = 0.3 * std::abs(x[0]) + 1e-5 + std::abs(x[2]);
    CHECK(kkt(in, x, s.y).primal > 1e-7);
  }
}

TEST_CASE("cone_qp: agrees with Goldfarb-Idnani (qp_dense) on cone-free instances", "[cone_qp]") {
  std::mt19937 rng(21);
  ConeQp<double> qp(12, 10, 0, 0);
  QpWorkspace gi(12, 40);
  for (int t = 0; t < 200; ++t) {
    Shape sh;
    sh.free = 1 + t % 10;
    sh.rows = t % 9;
    sh.bounds = t % 3 != 0;
    const Instance in = random_instance(rng, sh);
    const int n = in.n, m = in.m;
    DenseQp d;
    d.Q = Eigen::Map<const Eigen::Matrix<double, -1, -1, Eigen::RowMajor>>(in.H.data(), n, n);
    d.c = Eigen::Map<const VecX>(in.g.data(), n);
    d.A = -Eigen::Map<const Eigen::Matrix<double, -1, -1, Eigen::RowMajor>>(in.A.data(), m, n);  // A x >= b as -A x <= -b
    d.b = -Eigen::Map<const VecX>(in.b.data(), m);
    if (in.has_bounds) {
      d.lb = Eigen::Map<const VecX>(in.lb.data(), n);
      d.ub = Eigen::Map<const VecX>(in.ub.data(), n);
    }
    QpResult ref;
    REQUIRE(gi.solve(d, ref) == QpStatus::Solved);
    const Solved s = solve(qp, in, tight());
    REQUIRE(s.r.status == ConeQpStatus::Solved);
    const double sx = 1 + ref.x.cwiseAbs().maxCoeff(), su = 1 + (ref.u.size() ? ref.u.cwiseAbs().maxCoeff() : 0.0);
    double dx = 0, du = 0;
    for (int i = 0; i < n; ++i) dx = std::max(dx, std::abs(s.x[i] - ref.x[i]));
    // multipliers, canonical order of QpResult: A rows, finite lb, finite ub (ours: y = -u, +u)
    int c = m;
    for (int j = 0; j < m; ++j) du = std::max(du, std::abs(s.y[j] + ref.u[j]));
    std::vector<double> yb(n, 0.0);
    for (int i = 0; i < n && in.has_bounds; ++i)
      if (std::isfinite(in.lb[i])) yb[i] -= ref.u[c++];
    for (int i = 0; i < n && in.has_bounds; ++i)
      if (std::isfinite(in.ub[i])) yb[i] += ref.u[c++];
    for (int i = 0; i < n; ++i) du = std::max(du, std::abs(s.y[m + i] - yb[i]));
    INFO("instance " << t << " n " << n << " m " << m << " |dx| " << dx << " |du| " << du);
    CHECK(dx <= tol(1e-8) * sx);  // both solvers to ~1e-10 residuals; x is well conditioned (H >= 0.1 I)
    CHECK(du <= tol(1e-6) * su);  // multipliers of nearly degenerate rows are less well determined
  }
}

TEST_CASE("cone_qp: docs/methods/compliant.md §6 scalar case lambda = max(0, q / (1 + W A))", "[cone_qp]") {
  // minimize 1/2 lambda^2 s.t. (1 + W A) lambda >= q, lambda >= 0
  std::mt19937 rng(31);
  std::uniform_real_distribution<double> U(0, 1);
  std::normal_distribution<double> N(0, 2);
  ConeQp<double> qp(1, 1, 0, 0);
  for (int t = 0; t < 200; ++t) {
    const double q = N(rng), W = 10 * U(rng), Au = 0.1 + 5 * U(rng);
    Instance in;
    in.n = 1;
    in.m = 1;
    in.H = {1};
    in.g = {0};
    in.A = {1 + W * Au};
    in.b = {q};
    in.has_bounds = true;
    in.lb = {0};
    in.ub = {kInf};
    const Solved s = solve(qp, in, tight());
    REQUIRE(s.r.status == ConeQpStatus::Solved);
    INFO("q " << q << " W " << W << " A " << Au);
    CHECK(s.x[0] == Approx(std::max(0.0, q / (1 + W * Au))).margin(1e-9));
  }
}

namespace {
// minimize 1/2 c ||x - p||^2 over one cone (n, r, s) (s = -1: 2-D): the scaled projection of p.
Instance projection_instance(std::vector<double> p, double mu, double c = 1) {
  Instance in;
  in.n = int(p.size());
  in.H.assign(size_t(in.n) * in.n, 0.0);
  for (int i = 0; i < in.n; ++i) in.H[i * in.n + i] = c, in.g.push_back(-c * p[i]);
  in.mu = {mu};
  in.cone = {0, 1, in.n == 3 ? 2 : -1};
  return in;
}
}  // namespace

TEST_CASE("cone_qp: one 3-D contact, projections computed by hand", "[cone_qp]") {
  ConeQp<double> qp(3, 0, 1, 1);
  auto x_of = [&](const Instance& in) {
    const Solved s = solve(qp, in, tight());
    REQUIRE(s.r.status == ConeQpStatus::Solved);
    return s.x;
  };
  // p = (1, 3, 4), mu = 1/2: ||p_t|| = 5 > mu p_n, not in the polar cone (mu 5 > -1), so
  // x_n = (p_n + mu ||p_t||) / (1 + mu^2) = 3.5 / 1.25 = 2.8, x_t = mu x_n p_t / 5 = 1.4 (0.6, 0.8)
  for (double c : {1.0, 1e-3, 1e4}) {  // any multiple of the identity has the same minimizer
    const std::vector<double> x = x_of(projection_instance({1, 3, 4}, 0.5, c));
    CHECK(x[0] == Approx(2.8).margin(1e-9));
    CHECK(x[1] == Approx(0.84).margin(1e-9));
    CHECK(x[2] == Approx(1.12).margin(1e-9));
  }
  // inside the polar cone (mu ||p_t|| <= -p_n): the apex
  for (double v : x_of(projection_instance({-5, 1, 0}, 0.5))) CHECK(std::abs(v) <= 1e-9);
  // inside the cone: p itself
  const std::vector<double> xin = x_of(projection_instance({2, 0.3, -0.4}, 0.5));
  CHECK(xin[0] == Approx(2).margin(1e-9));
  CHECK(xin[1] == Approx(0.3).margin(1e-9));
  CHECK(xin[2] == Approx(-0.4).margin(1e-9));
  // mu = 0: no tangential component, x = (max(p_n, 0), 0, 0)
  const std::vector<double> x0 = x_of(projection_instance({1, 3, 4}, 0.0));
  CHECK(x0[0] == Approx(1).margin(1e-9));
  CHECK(std::abs(x0[1]) <= 1e-9);
  CHECK(std::abs(x0[2]) <= 1e-9);
  // 2-D cone, p = (1, 3), mu = 1/2: x_n = (1 + 1.5) / 1.25 = 2, x_r = mu x_n = 1
  const std::vector<double> x2 = x_of(projection_instance({1, 3}, 0.5));
  CHECK(x2[0] == Approx(2).margin(1e-9));
  CHECK(x2[1] == Approx(1).margin(1e-9));
  // disk of radius 1 around p_t = (3, 4): (0.6, 0.8)
  Instance d;
  d.n = 2;
  d.H = {1, 0, 0, 1};
  d.g = {-3, -4};
  d.rad = {1};
  d.disk = {0, 1};
  const std::vector<double> xd = x_of(d);
  CHECK(xd[0] == Approx(0.6).margin(1e-9));
  CHECK(xd[1] == Approx(0.8).margin(1e-9));
}

TEST_CASE("cone_qp: mu = 0 cones give zero tangential forces on random instances", "[cone_qp]") {
  std::mt19937 rng(41);
  ConeQp<double> qp(20, 4, 6, 0);
  for (int t = 0; t < 50; ++t) {
    Shape sh;
    sh.cones3 = 1 + t % 4;
    sh.cones2 = t % 2;
    sh.mus = {0.0};
    sh.rows = t % 4;
    const Instance in = random_instance(rng, sh);
    const Solved s = solve(qp, in, tight());
    REQUIRE(s.r.status == ConeQpStatus::Solved);
    for (size_t c = 0; c < in.mu.size(); ++c)
      for (int a = 1; a < 3; ++a)
        if (in.cone[3 * c + a] >= 0) CHECK(std::abs(s.x[in.cone[3 * c + a]]) <= 1e-9);
  }
}

TEST_CASE("cone_qp: infeasible problems are detected", "[cone_qp]") {
  ConeQp<double> qp(3, 2, 1, 1);
  // x0 >= 1 and -x0 >= 0
  Instance a;
  a.n = 1;
  a.m = 2;
  a.H = {1};
  a.g = {0};
  a.A = {1, -1};
  a.b = {1, 0};
  CHECK(solve(qp, a, tight()).r.status == ConeQpStatus::PrimalInfeasible);
  // cone with x_n <= 1, mu = 1/2, and the row x_r >= 2
  Instance c = projection_instance({0, 0, 0}, 0.5);
  c.has_bounds = true;
  c.lb = {-kInf, -kInf, -kInf};
  c.ub = {1, kInf, kInf};
  c.m = 1;
  c.A = {0, 1, 0};
  c.b = {2};
  CHECK(solve(qp, c, tight()).r.status == ConeQpStatus::PrimalInfeasible);
  // disk of radius 1 and x_r + x_s >= 2 (the disk reaches sqrt 2 only)
  Instance d;
  d.n = 2;
  d.H = {1, 0, 0, 1};
  d.g = {0, 0};
  d.rad = {1};
  d.disk = {0, 1};
  d.m = 1;
  d.A = {1, 1};
  d.b = {2};
  CHECK(solve(qp, d, tight()).r.status == ConeQpStatus::PrimalInfeasible);
  // ... and radius 1.5 makes it feasible
  d.rad = {1.5};
  CHECK(solve(qp, d, tight()).r.status == ConeQpStatus::Solved);
}

TEST_CASE("cone_qp: bad input is named (host) and reported without throwing (kernel)", "[cone_qp]") {
  ConeQp<double> qp(3, 1, 1, 1);
  auto message = [&](const Instance& in) -> std::string {
    try {
      solve(qp, in, tight());
    } catch (const InvalidArgument& e) {
      return e.what();
    }
    return "no throw";
  };
  Instance c = projection_instance({1, 3, 4}, -0.5);
  CHECK(message(c) == "cone_qp.mu[0] = -0.5: finite and >= 0");
  c.mu = {0.5};
  c.rad = {1};
  c.disk = {2, -1};  // variable 2 is already the cone's s
  CHECK(message(c).find("cone_qp.disk[0] = 2") == 0);
  Instance h = projection_instance({1, 3, 4}, 0.5);
  h.H[1] = h.H[3] = 2;  // [[1 2 0] [2 1 0] [0 0 1]] is indefinite
  // an indefinite H is the state's, not the caller's: reported (a step flags its rollout), not thrown
  CHECK(message(h) == "no throw");
  {
    const auto out = solve(qp, h, tight());
    CHECK(out.r.status == ConeQpStatus::InvalidInput);
    CHECK(out.r.bad_field == ConeQpField::HNotPositiveDefinite);
    CHECK(cone_qp_input_error(out.r).find("cone_qp.H") == 0);
  }
  h = projection_instance({1, 3, 4}, 0.5);
  h.g[1] = std::nan("");
  CHECK(message(h).find("cone_qp.g[1] = nan") == 0);
  h.g[1] = 0;
  h.has_bounds = true;
  h.lb = {0, 1, 0};
  h.ub = {1, 0, 1};
  CHECK(message(h).find("cone_qp.lb - ub[1] = 1") == 0);
  ConeQpSettings<double> st = tight();
  st.alpha = 2;
  std::vector<double> x3(3), y3(c.rows());
  ConeQpIterate<double> it3{x3.data(), y3.data(), 0.0, false};
  c.disk.clear();
  c.rad.clear();
  CHECK_THROWS_WITH(qp.solve(c.prob(), it3, st), Catch::Contains("cone_qp.settings"));
  Instance big = projection_instance({1, 3, 4, 5}, 0.5);
  CHECK(message(big).find("cone_qp.sizes") == 0);
  // the kernel entry point reports InvalidInput with the field instead of throwing
  std::vector<double> x(3), y(c.rows());
  ConeQpIterate<double> it{x.data(), y.data(), 0.0, false};
  c.mu = {-1};
  c.rad.clear();
  c.disk.clear();
  const ConeQpResult r = cone_qp_solve(c.prob(), tight(), it, qp.workspace());
  CHECK(r.status == ConeQpStatus::InvalidInput);
  CHECK(r.bad_field == ConeQpField::Mu);
  CHECK(r.bad_index == 0);
}

TEST_CASE("cone_qp: warm start from a nearby solution takes no more iterations", "[cone_qp]") {
  std::mt19937 rng(51);
  std::normal_distribution<double> N(0, 1);
  ConeQp<double> qp(40, 12, 8, 8);
  long cold_total = 0, warm_total = 0;
  for (int t = 0; t < 40; ++t) {
    Shape sh;
    sh.cones3 = 1 + t % 3;
    sh.disks = t % 2;
    sh.free = t % 4;
    sh.rows = t % 5;
    sh.mus = {0.0, 0.3, 1.0};
    sh.bounds = true;
    Instance in = random_instance(rng, sh);
    const Solved first = solve(qp, in, tight());
    REQUIRE(first.r.status == ConeQpStatus::Solved);
    // the same problem again: a handful of iterations (the returned x is the over-relaxed
    // average and z is rebuilt from it, so the start sits at, not below, the 1e-10 tolerance)
    CHECK(solve(qp, in, tight(), &first).r.iterations <= 5);
    for (double& g : in.g) g += 1e-3 * N(rng);  // the next step's slightly different problem
    const Solved cold = solve(qp, in, tight());
    const Solved warm = solve(qp, in, tight(), &first);
    REQUIRE(warm.r.status == ConeQpStatus::Solved);
    INFO("instance " << t << " cold " << cold.r.iterations << " warm " << warm.r.iterations);
    CHECK(warm.r.iterations <= cold.r.iterations);
    CHECK(kkt(in, warm.x, warm.y).worst() <= tol(1e-8));
    cold_total += cold.r.iterations;
    warm_total += warm.r.iterations;
  }
  if (std::getenv("BIGSTEP_CONE_QP_STATS"))
    std::printf("warm start: %ld iterations cold, %ld warm (40 instances)\n", cold_total, warm_total);
}

TEST_CASE("cone_qp: a solve allocates nothing", "[cone_qp][alloc]") {
  std::mt19937 rng(61);
  const Shape sh{.cones3 = 3, .cones2 = 1, .disks = 2, .free = 3, .rows = 4, .bounds = true};
  const Instance in = random_instance(rng, sh);
  ConeQp<double> qp(in.n, in.m, 4, 2);
  std::vector<double> x(in.n), y(in.rows());
  ConeQpIterate<double> it{x.data(), y.data(), 0.0, false};
  const ConeQpProblem<double> p = in.prob();
  const ConeQpSettings<double> st = tight();
  ConeQpResult r;
  {
    test::MallocCounter mc;
    r = qp.solve(p, it, st);
    CHECK(mc.count() == 0);
  }
  CHECK(r.status == ConeQpStatus::Solved);
}

TEST_CASE("cone_qp: deterministic and independent of the workspace's previous contents", "[cone_qp]") {
  // bit-identical results from a zeroed and a NaN-poisoned workspace (no scratch is read before
  // it is written) and on a repeat (no hidden state)
  std::mt19937 rng(91);
  for (int t = 0; t < 20; ++t) {
    const Shape sh{.cones3 = 1 + t % 3, .cones2 = t % 2, .disks = t % 3, .free = t % 4, .rows = t % 5,
                   .mus = {0.0, 0.3, 1.0}, .bounds = true};
    const Instance in = random_instance(rng, sh);
    const int n_s = int(cone_qp_scalars(in.n, in.m, int(in.mu.size()), int(in.rad.size())));
    std::vector<double> s0(n_s, 0.0), s1(n_s, std::nan("")), x0(in.n), y0(in.rows()), x1(in.n), y1(in.rows());
    std::vector<int> i0(in.n, 0), i1(in.n, -7);
    ConeQpIterate<double> it0{x0.data(), y0.data(), 0.0, false}, it1{x1.data(), y1.data(), 0.0, false};
    const ConeQpResult r0 = cone_qp_solve(in.prob(), tight(), it0, ConeQpWorkspace<double>{s0.data(), n_s, i0.data(), in.n});
    const ConeQpResult r1 = cone_qp_solve(in.prob(), tight(), it1, ConeQpWorkspace<double>{s1.data(), n_s, i1.data(), in.n});
    REQUIRE(r0.status == ConeQpStatus::Solved);
    CHECK(r1.iterations == r0.iterations);
    CHECK(x1 == x0);
    CHECK(y1 == y0);
    it1 = {x1.data(), y1.data(), 0.0, false};
    cone_qp_solve(in.prob(), tight(), it1, ConeQpWorkspace<double>{s1.data(), n_s, i1.data(), in.n});
    CHECK(x1 == x0);
  }
}

TEST_CASE("cone_qp: float instantiation solves the one-contact case", "[cone_qp]") {
  // float carries ~1e-7 relative precision: stop at 1e-5 residuals, compare to 1e-4
  const float H[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, g[3] = {-1, -3, -4}, mu[1] = {0.5f};
  const int cone[3] = {0, 1, 2};
  ConeQpProblem<float> p;
  p.n = 3;
  p.n_cone = 1;
  p.H = H;
  p.g = g;
  p.cone = cone;
  p.mu = mu;
  ConeQpSettings<float> st;
  st.eps_abs = st.eps_rel = 1e-5f;
  float x[3], y[cone_qp_rows(3, 0, 1, 0)];
  ConeQpIterate<float> it{x, y, 0.f, false};
  ConeQp<float> qp(3, 0, 1, 0);
  REQUIRE(qp.solve(p, it, st).status == ConeQpStatus::Solved);
  CHECK(x[0] == Approx(2.8).margin(1e-4));
  CHECK(x[1] == Approx(0.84).margin(1e-4));
  CHECK(x[2] == Approx(1.12).margin(1e-4));
}
