// numerics/disk_qp_ipm.h: KKT conditions from the problem data on random disk / interval QPs (well
// conditioned and T-step-shaped with eigenvalues 1e-12 below the largest), agreement with ADMM
// (cone_qp.h) where ADMM converges, a hand-solved one-disk case, pinned disks, bad input, and the
// compliant T-step it rescues (the box tilted on the incline).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "numerics/cone_qp.h"
#include "numerics/disk_qp_ipm.h"

using namespace bigstep;

namespace {

struct DiskInstance {
  int n = 0;
  std::vector<double> H, g, rad;
  std::vector<int> disk;
  ConeQpProblem<double> prob() const {
    ConeQpProblem<double> p;
    p.n = n;
    p.n_disk = int(rad.size());
    p.H = H.data();
    p.g = g.data();
    p.disk = disk.data();
    p.rad = rad.data();
    return p;
  }
};

// nd disks (every third an interval) and H = eps I + B^T B with B of k <= n rows (k < n: singular
// up to eps, the T-step's shape: H = I / wmax^2 + Qs^T Qs with a rank-deficient Qs)
DiskInstance random_disks(std::mt19937& rng, int nd, int k_rows, double eps) {
  std::normal_distribution<double> N(0, 1);
  std::uniform_real_distribution<double> U(0, 1);
  DiskInstance in;
  for (int d = 0; d < nd; ++d) {
    const bool interval = d % 3 == 2;
    in.disk.insert(in.disk.end(), {in.n, interval ? -1 : in.n + 1});
    in.n += interval ? 1 : 2;
    in.rad.push_back(U(rng) < 0.1 ? 0.0 : 0.05 + U(rng));
  }
  const int n = in.n, k = std::min(k_rows, n);
  std::vector<double> B(size_t(k) * n);
  for (double& e : B) e = N(rng);
  in.H.assign(size_t(n) * n, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double a = i == j ? eps : 0.0;
      for (int r = 0; r < k; ++r) a += B[size_t(r) * n + i] * B[size_t(r) * n + j];
      in.H[size_t(i) * n + j] = a;
    }
  for (int i = 0; i < n; ++i) in.g.push_back(3 * N(rng));
  return in;
}

struct Solved {
  std::vector<double> x, y;
  DiskQpIpmResult r;
};

Solved ipm(const DiskInstance& in) {
  Solved s;
  s.x.assign(size_t(in.n), 0.0);
  s.y.assign(2 * in.rad.size(), 0.0);
  std::vector<double> work(size_t(disk_qp_ipm_scalars(in.n, int(in.rad.size()))));
  std::vector<int> iw(size_t(disk_qp_ipm_ints(in.n)));
  s.r = disk_qp_ipm_solve(in.prob(), DiskQpIpmSettings<double>{}, s.x.data(), s.y.data(), work.data(), iw.data());
  return s;
}

double objective(const DiskInstance& in, const std::vector<double>& x) {
  double f = 0;
  for (int i = 0; i < in.n; ++i) {
    f += in.g[i] * x[i];
    for (int j = 0; j < in.n; ++j) f += 0.5 * x[i] * in.H[size_t(i) * in.n + j] * x[j];
  }
  return f;
}

// KKT from the data alone, relative to max(1, |g|): feasibility, stationarity H x + g + y = 0 with
// y_i = c_i x_i, c_i >= 0 on each disk, and c_i = 0 unless x_i is on the circle
double kkt_worst(const DiskInstance& in, const std::vector<double>& x) {
  const int n = in.n;
  double gmax = 1;
  for (double v : in.g) gmax = std::max(gmax, std::abs(v));
  std::vector<double> v(size_t(n), 0.0);  // -(H x + g): what the disk must supply
  for (int i = 0; i < n; ++i) {
    double h = in.g[i];
    for (int j = 0; j < n; ++j) h += in.H[size_t(i) * n + j] * x[j];
    v[i] = -h;
  }
  double worst = 0;
  for (size_t d = 0; d < in.rad.size(); ++d) {
    const int r = in.disk[2 * d], s = in.disk[2 * d + 1];
    const double xr = x[r], xs = s >= 0 ? x[s] : 0.0, vr = v[r], vs = s >= 0 ? v[s] : 0.0;
    const double nx = std::hypot(xr, xs), rad = in.rad[d];
    worst = std::max(worst, (nx - rad) / std::max(rad, 1e-12) - 1e-12 > 0 ? (nx - rad) / std::max(rad, 1e-12) : 0.0);
    if (rad == 0) continue;  // pinned: any force holds it
    // c = v . x / |x|^2 >= 0 (within round-off) and v - c x = 0
    const double c = nx > 0 ? (vr * xr + vs * xs) / (nx * nx) : 0.0;
    worst = std::max(worst, -c * rad / gmax);
    worst = std::max(worst, std::hypot(vr - std::max(c, 0.0) * xr, vs - std::max(c, 0.0) * xs) / gmax);
    // complementarity: a force (c > 0) only on the circle
    worst = std::max(worst, std::max(c, 0.0) * rad * (rad - nx) / gmax);
  }
  return worst;
}

}  // namespace

TEST_CASE("disk_qp_ipm: one disk, solved by hand", "[disk_qp_ipm]") {
  // min 1/2 |x|^2 + g.x, |x| <= 1, g = (3, 4): x = -g / |g| (on the circle), y = 2 lambda x = -(x + g)
  DiskInstance in;
  in.n = 2;
  in.H = {1, 0, 0, 1};
  in.g = {3, 4};
  in.rad = {1};
  in.disk = {0, 1};
  const Solved s = ipm(in);
  REQUIRE(s.r.status == ConeQpStatus::Solved);
  CHECK(s.x[0] == Approx(-0.6).margin(1e-11));
  CHECK(s.x[1] == Approx(-0.8).margin(1e-11));
  CHECK(s.y[0] == Approx(-(s.x[0] + 3)).margin(1e-10));
  CHECK(s.y[1] == Approx(-(s.x[1] + 4)).margin(1e-10));
  // inside: g = (0.3, 0.4) -> x = -g, no force
  in.g = {0.3, 0.4};
  const Solved t = ipm(in);
  REQUIRE(t.r.status == ConeQpStatus::Solved);
  CHECK(t.x[0] == Approx(-0.3).margin(1e-11));
  CHECK(std::abs(t.y[0]) < 1e-10);
}

TEST_CASE("disk_qp_ipm: random instances meet KKT and equal ADMM's solution", "[disk_qp_ipm]") {
  std::mt19937 rng(7);
  int compared = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const int nd = 1 + trial % 8;
    const bool singular = trial % 2 == 1;  // T-step shape: rank-deficient B, eps = 1e-12
    const DiskInstance in = random_disks(rng, nd, singular ? std::max(1, nd) : 3 * nd, singular ? 1e-12 : 0.1);
    const Solved s = ipm(in);
    INFO("trial " << trial << " n " << in.n << " singular " << singular);
    REQUIRE(s.r.status == ConeQpStatus::Solved);
    CHECK(s.r.iterations < 100);
    CHECK(kkt_worst(in, s.x) < 1e-9);
    // ADMM where it converges: same objective (the minimiser is unique: H is positive definite)
    ConeQp<double> admm(in.n, 0, 0, int(in.rad.size()));
    std::vector<double> x(size_t(in.n)), y(size_t(cone_qp_rows(in.n, 0, 0, int(in.rad.size()))));
    ConeQpIterate<double> it{x.data(), y.data(), 0.0, false};
    ConeQpSettings<double> st;
    st.eps_abs = st.eps_rel = 1e-11;
    st.max_iter = 50000;
    if (admm.solve(in.prob(), it, st).status == ConeQpStatus::Solved) {
      ++compared;
      const double f_ipm = objective(in, s.x), f_admm = objective(in, x);
      CHECK(std::abs(f_ipm - f_admm) <= 1e-9 * (1 + std::abs(f_admm)));
      CHECK(f_ipm <= f_admm + 1e-9 * (1 + std::abs(f_admm)));
      if (!singular)
        for (int i = 0; i < in.n; ++i) CHECK(s.x[i] == Approx(x[i]).margin(1e-7));
    }
  }
  CHECK(compared >= 30);
}

TEST_CASE("disk_qp_ipm: pinned disks and bad input", "[disk_qp_ipm]") {
  std::mt19937 rng(3);
  DiskInstance in = random_disks(rng, 4, 12, 0.1);
  in.rad[1] = 0;  // pinned: its variables stay at 0 and its y holds them there
  const Solved s = ipm(in);
  REQUIRE(s.r.status == ConeQpStatus::Solved);
  CHECK(s.x[in.disk[2]] == 0.0);
  CHECK(s.x[in.disk[3]] == 0.0);
  CHECK(kkt_worst(in, s.x) < 1e-9);
  in.rad[2] = -1;  // a negative radius is refused
  CHECK(ipm(in).r.status == ConeQpStatus::InvalidInput);
  in.rad[2] = 0.5;
  ConeQpProblem<double> p = in.prob();
  p.m = 1;  // general rows are ADMM's, not this method's
  std::vector<double> x(size_t(in.n)), w(size_t(disk_qp_ipm_scalars(in.n, 4)));
  std::vector<int> iw(size_t(in.n));
  CHECK(disk_qp_ipm_solve(p, DiskQpIpmSettings<double>{}, x.data(), static_cast<double*>(nullptr), w.data(), iw.data()).status ==
        ConeQpStatus::InvalidInput);
}
