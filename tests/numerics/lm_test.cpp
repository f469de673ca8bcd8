// Levenberg-Marquardt (docs/methods/pbfd.md §5.1) and LBFGS (§5.2) on small problems with known minima,
// plus every LM exit path: converged, small step, iteration cap, lambda cap, factorization
// failure, non-finite objective, non-finite candidates and the rounding-floor acceptance rule.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "numerics/lbfgs.h"
#include "numerics/lm.h"
#include "tests/support/tol.h"

using namespace bigstep;
using bigstep::test::tol;

namespace {

// An LmObjective from lambdas that also counts accepted and rejected candidates: LM calls
// value(x_c) for each candidate and evaluate(x_c) right after when it accepts it.
struct CountingObjective final : LmObjective {
  std::function<double(const VecX&)> F;
  std::function<void(const VecX&, VecX&, MatX&)> gB;  // gradient and model matrix
  std::function<double(const VecX&, const VecX&)> res = [](const VecX&, const VecX& g) {
    return g.lpNorm<Eigen::Infinity>();
  };
  int accepted = 0, rejected = 0, n_value = 0, n_eval = 0;
  bool pending = false;
  VecX candidate;
  std::vector<double> F_accepted;  // F at the start point and at every accepted iterate

  double value(const VecX& x) override {
    ++n_value;
    if (pending) ++rejected;
    pending = true;
    candidate = x;
    return F(x);
  }
  void evaluate(const VecX& x, double& f, VecX& g, MatX& B, double& r) override {
    ++n_eval;
    if (pending && x == candidate) ++accepted;
    pending = false;
    f = F(x);
    g.resize(x.size());
    B.resize(x.size(), x.size());
    gB(x, g, B);
    r = res(x, g);
    F_accepted.push_back(f);
  }
  void finish() {
    if (pending) ++rejected;
    pending = false;
  }
};

// Rosenbrock F = (1 - x)^2 + 100 (y - x^2)^2, minimum 0 at (1, 1), with its exact Hessian
// (indefinite away from the valley, so Cholesky failures and rejections both occur).
CountingObjective rosenbrock() {
  CountingObjective f;
  f.F = [](const VecX& v) {
    const double x = v[0], y = v[1];
    return (1 - x) * (1 - x) + 100 * (y - x * x) * (y - x * x);
  };
  f.gB = [](const VecX& v, VecX& g, MatX& B) {
    const double x = v[0], y = v[1];
    g << -2 * (1 - x) - 400 * x * (y - x * x), 200 * (y - x * x);
    B << 2 - 400 * (y - x * x) + 800 * x * x, -400 * x, -400 * x, 200;
  };
  return f;
}

double rosenbrock_fg(const VecX& v, VecX& g) {
  const double x = v[0], y = v[1];
  g.resize(2);
  g << -2 * (1 - x) - 400 * x * (y - x * x), 200 * (y - x * x);
  return (1 - x) * (1 - x) + 100 * (y - x * x) * (y - x * x);
}

bool non_increasing(const std::vector<double>& F) {
  const double eps = std::numeric_limits<double>::epsilon();
  for (size_t i = 1; i < F.size(); ++i)
    // LM accepts only decreases, except below F's rounding (64 eps max(1,|F|), §5.1)
    if (F[i] > F[i - 1] + 64 * eps * std::max(1.0, std::abs(F[i - 1]))) return false;
  return true;
}

}  // namespace

TEST_CASE("lm: Rosenbrock with the exact Hessian converges to (1, 1)", "[lm]") {
  const LmSettings s;  // eps_r 1e-8, eps_x 1e-12, it_max 500, scale 1
  for (const auto& start : {Eigen::Vector2d(-1.2, 1), Eigen::Vector2d(0, 0), Eigen::Vector2d(2, 2)}) {
    INFO("start " << start.transpose());
    CountingObjective f = rosenbrock();
    VecX x = start;
    const LmResult r = levenberg_marquardt(f, x, s);
    f.finish();
    CHECK(r.outcome == LmOutcome::Converged);
    CHECK(r.converged());
    CHECK(r.residual <= s.eps_r * s.scale);
    // |g| <= 1e-8 and the Hessian at (1,1) has smallest eigenvalue 0.4: |x - x*| <~ 2.5e-8
    CHECK((x - Eigen::Vector2d(1, 1)).lpNorm<Eigen::Infinity>() < tol(1e-7));
    CHECK(r.iterations == f.accepted + f.rejected);
    CHECK(r.iterations < 100);
    CHECK(non_increasing(f.F_accepted));
  }
}

TEST_CASE("lm: a far start exercises the rejection / lambda-increase path", "[lm]") {
  CountingObjective f = rosenbrock();
  VecX x = Eigen::Vector2d(-30, 40);
  const LmResult r = levenberg_marquardt(f, x, LmSettings{});
  f.finish();
  INFO("iterations " << r.iterations << " accepted " << f.accepted << " rejected " << f.rejected);
  CHECK(r.outcome == LmOutcome::Converged);
  CHECK((x - Eigen::Vector2d(1, 1)).lpNorm<Eigen::Infinity>() < tol(1e-7));
  CHECK(f.rejected > 0);  // the Newton step from here overshoots: some candidates must be rejected
  CHECK(f.accepted > 0);
  CHECK(non_increasing(f.F_accepted));
}

TEST_CASE("lm: linear least squares reaches the normal-equation solution", "[lm]") {
  // F = 1/2 |A x - b|^2 (inconsistent 6 x 3 system), g = A^T (A x - b), B = A^T A exact.
  MatX A(6, 3);
  A << 1, 2, 0.5, -1, 0.3, 2, 0.7, -2, 1, 3, 1, -1, 0, 0.5, 0.2, 1.5, -0.7, 0.9;
  VecX b(6);
  b << 1, -2, 0.5, 3, 1, -1;
  const VecX x_star = A.colPivHouseholderQr().solve(b);  // independent reference
  CountingObjective f;
  f.F = [&](const VecX& x) { return 0.5 * (A * x - b).squaredNorm(); };
  f.gB = [&](const VecX& x, VecX& g, MatX& B) {
    g = A.transpose() * (A * x - b);
    B = A.transpose() * A;
  };
  VecX x = VecX::Constant(3, 100.0);
  const LmResult r = levenberg_marquardt(f, x, LmSettings{});
  f.finish();
  CHECK(r.outcome == LmOutcome::Converged);
  // |g|_inf <= 1e-8 and A^T A is well conditioned (min eigenvalue > 0.5): error < 1e-7
  CHECK((x - x_star).lpNorm<Eigen::Infinity>() < tol(1e-7));
  // the quadratic model is exact (rho = 1): no candidate is ever rejected
  CHECK(f.rejected == 0);
  CHECK(r.iterations <= 10);
}

TEST_CASE("lm: non-finite candidates are rejected, not accepted", "[lm]") {
  // F = x - log x (minimum at x = 1), NaN for x <= 0. From x = 3 the Newton step (-6) lands
  // at x = -3 where F is NaN: LM must reject it, raise lambda and still converge.
  CountingObjective f;
  f.F = [](const VecX& x) { return x[0] - std::log(x[0]); };
  f.gB = [](const VecX& x, VecX& g, MatX& B) {
    g[0] = 1 - 1 / x[0];
    B(0, 0) = 1 / (x[0] * x[0]);
  };
  VecX x = VecX::Constant(1, 3.0);
  const LmResult r = levenberg_marquardt(f, x, LmSettings{});
  f.finish();
  CHECK(r.outcome == LmOutcome::Converged);
  CHECK(x[0] == Approx(1.0).margin(tol(1e-7)));
  CHECK(f.rejected >= 1);
}

TEST_CASE("lm: changes below F's rounding are judged by the gradient", "[lm]") {
  // F = 1e10 + 1/2 (x - a)^T M (x - a): once |F - F_c| < 64 eps 1e10 (~1.4e-5) the ratio rho
  // is rounding noise; §5.1 then accepts when |g| decreases. Without that rule LM stalls.
  Eigen::Matrix2d M;
  M << 3, 1, 1, 2;
  const Eigen::Vector2d a(0.3, -0.7);
  CountingObjective f;
  f.F = [&](const VecX& x) { return 1e10 + 0.5 * (x - a).dot(M * (x - a)); };
  f.gB = [&](const VecX& x, VecX& g, MatX& B) {
    g = M * (x - a);
    B = M;
  };
  VecX x = Eigen::Vector2d(1.3, 0.3);
  const LmResult r = levenberg_marquardt(f, x, LmSettings{});
  f.finish();
  CHECK(r.outcome == LmOutcome::Converged);
  CHECK(r.residual <= 1e-8);
  CHECK((x - a).lpNorm<Eigen::Infinity>() < tol(1e-8));  // M's smallest eigenvalue is 1.38
}

TEST_CASE("lm: exit paths other than convergence", "[lm]") {
  SECTION("iteration cap") {
    CountingObjective f = rosenbrock();
    VecX x = Eigen::Vector2d(-1.2, 1);
    LmSettings s;
    s.it_max = 3;
    const LmResult r = levenberg_marquardt(f, x, s);
    CHECK(r.outcome == LmOutcome::NotConverged);
    CHECK_FALSE(r.converged());
    CHECK(r.iterations == 3);
    CHECK(r.residual > s.eps_r);
    CHECK(x.allFinite());
  }
  SECTION("lambda cap: every candidate rejected") {
    // value() never decreases: lambda grows by nu = 2, 4, 8, ... until it exceeds 1e16 max(1, B_ii)
    CountingObjective f;
    f.F = [](const VecX& x) { return x.squaredNorm(); };
    f.gB = [](const VecX& x, VecX& g, MatX& B) {
      g = 2 * x;
      B = 2 * MatX::Identity(x.size(), x.size());
    };
    struct Liar final : LmObjective {
      CountingObjective& inner;
      explicit Liar(CountingObjective& i) : inner(i) {}
      double value(const VecX& x) override { return inner.value(x) + 1e3; }  // always worse
      void evaluate(const VecX& x, double& F, VecX& g, MatX& B, double& r) override {
        inner.evaluate(x, F, g, B, r);
      }
    } liar(f);
    VecX x = Eigen::Vector2d(1, -2);
    const VecX x0 = x;
    const LmResult r = levenberg_marquardt(liar, x, LmSettings{});
    f.finish();
    CHECK(r.outcome == LmOutcome::NotConverged);
    CHECK(r.iterations < 500);  // stopped by the lambda cap, not by it_max
    CHECK(f.accepted == 0);
    CHECK(f.rejected == r.iterations);
    CHECK(x == x0);  // nothing accepted: x is unchanged
  }
  SECTION("factorization never succeeds") {
    // B = -1e200 I: B + lambda I is not PD for any lambda reachable in 30 doublings
    CountingObjective f;
    f.F = [](const VecX& x) { return x.sum(); };
    f.gB = [](const VecX& x, VecX& g, MatX& B) {
      g.setOnes();
      B = -1e200 * MatX::Identity(x.size(), x.size());
    };
    VecX x = Eigen::Vector3d(1, 2, 3);
    const VecX x0 = x;
    const LmResult r = levenberg_marquardt(f, x, LmSettings{});
    CHECK(r.outcome == LmOutcome::FactorFailed);
    CHECK_FALSE(r.converged());
    CHECK(x == x0);
  }
  SECTION("non-finite objective at the start") {
    CountingObjective f;
    f.F = [](const VecX&) { return std::numeric_limits<double>::quiet_NaN(); };
    f.gB = [](const VecX& x, VecX& g, MatX& B) {
      g.setOnes();
      B.setIdentity();
    };
    VecX x = Eigen::Vector2d(1, 2);
    const LmResult r = levenberg_marquardt(f, x, LmSettings{});
    CHECK(r.outcome == LmOutcome::NonFinite);
    CHECK(r.iterations == 0);
    CHECK(x == Eigen::Vector2d(1, 2));
  }
  SECTION("non-finite gradient at the start") {
    CountingObjective f;
    f.F = [](const VecX& x) { return x.squaredNorm(); };
    f.gB = [](const VecX& x, VecX& g, MatX& B) {
      g.setConstant(std::numeric_limits<double>::infinity());
      B.setIdentity();
    };
    VecX x = Eigen::Vector2d(1, 2);
    CHECK(levenberg_marquardt(f, x, LmSettings{}).outcome == LmOutcome::NonFinite);
  }
}

TEST_CASE("lm: the small-step exit counts as converged only near the tolerance", "[lm]") {
  // F = 1/2 |x|^2 (B = I): the first step is -x/(1 + lambda). A large eps_x makes the
  // small-step test fire on it; §5.1: SmallStep only if res <= 100 eps_r s, else NotConverged.
  auto quadratic = [] {
    CountingObjective f;
    f.F = [](const VecX& x) { return 0.5 * x.squaredNorm(); };
    f.gB = [](const VecX& x, VecX& g, MatX& B) {
      g = x;
      B.setIdentity();
    };
    return f;
  };
  LmSettings s;
  s.eps_r = 1e-8;
  SECTION("residual within 100 eps_r: SmallStep (converged)") {
    CountingObjective f = quadratic();
    s.eps_x = 1e-3;  // threshold 1e-3 (1e-3 + |x|) ~ 1e-6 >= |delta| = 5e-8
    VecX x = VecX::Constant(1, 5e-8);
    const LmResult r = levenberg_marquardt(f, x, s);
    CHECK(r.outcome == LmOutcome::SmallStep);
    CHECK(r.converged());
    CHECK(x[0] == 5e-8);  // the small step is not taken
  }
  SECTION("residual above 100 eps_r: NotConverged") {
    CountingObjective f = quadratic();
    s.eps_x = 1e-2;  // threshold ~ 1e-4 >= |delta| = 5e-6, but res = 5e-6 > 100 eps_r = 1e-6
    VecX x = VecX::Constant(1, 5e-6);
    const LmResult r = levenberg_marquardt(f, x, s);
    CHECK(r.outcome == LmOutcome::NotConverged);
    CHECK_FALSE(r.converged());
  }
  SECTION("already converged: zero iterations") {
    CountingObjective f = quadratic();
    VecX x = VecX::Constant(2, 1e-9);
    const LmResult r = levenberg_marquardt(f, x, s);
    CHECK(r.outcome == LmOutcome::Converged);
    CHECK(r.iterations == 0);
  }
}

TEST_CASE("lm: the convergence test is scaled by s", "[lm]") {
  // res <= eps_r * scale: with scale = 1e6 a start with |g| = 1e-3 is already converged
  CountingObjective f;
  f.F = [](const VecX& x) { return 0.5 * x.squaredNorm(); };
  f.gB = [](const VecX& x, VecX& g, MatX& B) {
    g = x;
    B.setIdentity();
  };
  VecX x = VecX::Constant(1, 1e-3);
  LmSettings s;
  s.scale = 1e6;
  CHECK(levenberg_marquardt(f, x, s).iterations == 0);
  s.scale = 1;
  const LmResult r = levenberg_marquardt(f, x, s);
  CHECK(r.iterations > 0);
  CHECK(r.outcome == LmOutcome::Converged);
  CHECK(std::abs(x[0]) <= 1e-8);
}

TEST_CASE("lbfgs: Rosenbrock and an SPD quadratic", "[lbfgs]") {
  const LbfgsSettings s;  // eps_r 1e-8, scale 1, memory 10
  SECTION("Rosenbrock from (-1.2, 1)") {
    VecX x = Eigen::Vector2d(-1.2, 1);
    const LbfgsResult r = lbfgs_minimize(rosenbrock_fg,
                                         [](const VecX&, const VecX& g) { return g.lpNorm<Eigen::Infinity>(); },
                                         x, s);
    INFO("iterations " << r.iterations << " residual " << r.residual);
    CHECK(r.converged);
    CHECK(r.residual <= 100 * s.eps_r);  // a stalled line search is accepted up to 100 eps_r
    CHECK(r.iterations > 0);
    // |g| <= 1e-6 at worst and the smallest Hessian eigenvalue at (1,1) is 0.4
    CHECK((x - Eigen::Vector2d(1, 1)).lpNorm<Eigen::Infinity>() < tol(1e-5));
  }
  SECTION("quadratic 1/2 x^T A x - b^T x") {
    MatX A(4, 4);
    A << 4, 1, 0, 0.5, 1, 3, 0.2, 0, 0, 0.2, 2, 0.1, 0.5, 0, 0.1, 1;
    VecX b(4);
    b << 1, -2, 0.5, 3;
    const VecX x_star = A.llt().solve(b);
    VecX x = VecX::Zero(4);
    auto fg = [&](const VecX& v, VecX& g) {
      g = A * v - b;
      return 0.5 * v.dot(A * v) - b.dot(v);
    };
    const LbfgsResult r = lbfgs_minimize(
        fg, [&](const VecX& v, const VecX&) { return (A * v - b).lpNorm<Eigen::Infinity>(); }, x, s);
    CHECK(r.converged);
    // |g| <= 1e-6 (stall allowance) and A's smallest eigenvalue is > 0.5: error < 2e-6
    CHECK((x - x_star).lpNorm<Eigen::Infinity>() < tol(2e-6));
    CHECK(r.iterations > 0);
    CHECK(r.iterations < 50);
  }
}

TEST_CASE("lbfgs: the iteration cap reports not converged", "[lbfgs]") {
  const LbfgsSettings s;
  {
    VecX x = Eigen::Vector2d(-1.2, 1);
    LbfgsSettings s2 = s;
    s2.it_max = 2;
    const LbfgsResult r = lbfgs_minimize(rosenbrock_fg,
                                         [](const VecX&, const VecX& g) { return g.lpNorm<Eigen::Infinity>(); },
                                         x, s2);
    CHECK_FALSE(r.converged);
    CHECK(r.residual > 100 * s.eps_r);
    CHECK(x.allFinite());
  }
}
