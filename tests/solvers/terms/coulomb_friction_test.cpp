// The regularised Coulomb law of PBFD (docs/methods/pbfd.md §4.9, solvers/terms/contact_terms.h
// coulomb_friction) vs central differences: a point against a fixed plane (du/dp = P_t, dd/dp = -n^T)
// and a core line whose normal turns (x = c_a - c_b, n = x / |x|, kappa = 1 / |x|); and its
// friction / normal ratio against mu.
#include <catch2/catch.hpp>

#include <cmath>

#include "solvers/terms/contact_terms.h"
#include "tests/support/random_models.h"

using namespace bigstep;
using namespace bigstep::test;

namespace {

VecX v3(const Vec3& v) { return VecX(v); }

// FD step: depth >= 0.05 m, slip >= delta / 4 with delta >= 0.01 m, so every scale of the law is
// >= 2.5e-3 m; with h = 1e-7 the truncation (h / 2.5e-3)^2 ~ 2e-9 and the round-off ~1e-9 relative
// stay well inside fd_tol() = 1e-6.
constexpr double kH = 1e-7;

ContactParams params(double mu) {
  ContactParams cp;
  cp.c_perp = 1e5;
  cp.alpha = 2;
  cp.mu = mu;
  cp.friction = FrictionLaw::Coulomb;
  return cp;
}

}  // namespace

TEST_CASE("coulomb_friction: df/dp vs central differences, point on a fixed plane", "[contact][fd][coulomb]") {
  Rng rng(35);
  for (double alpha : {2.0, 1.5}) {
    for (int i = 0; i < 12; ++i) {
      ContactParams cp = params(uniform(rng, 0.1, 1.2));
      cp.alpha = alpha;
      const Vec3 n = random_oblique_unit(rng), p_n = uniform_vec(rng, -1, 1);
      const double delta = uniform(rng, 0.01, 0.05);
      Vec3 t = uniform_vec(rng, -1, 1);
      t -= n * n.dot(t);
      // slips from a quarter of delta (the regularised core) to 20 delta (saturated)
      t *= delta * std::pow(80.0, uniform(rng, 0, 1)) / 4 / t.norm();
      const Vec3 p = p_n + t + uniform(rng, -0.1, 0.1) * n;
      const double h0 = n.dot(p) + uniform(rng, 0.05, 0.3);  // depth d = h0 - n . p
      auto u_of = [&](const Vec3& q) { return Vec3((q - p_n) - n * n.dot(q - p_n)); };
      auto d_of = [&](const Vec3& q) { return h0 - n.dot(q); };
      const FrictionForce ff = coulomb_friction(u_of(p), d_of(p), n, cp, delta);
      const MatX fd = fd_jacobian(
          [&](const VecX& q) { return v3(coulomb_friction(u_of(Vec3(q)), d_of(Vec3(q)), n, cp, delta).f); }, v3(p), kH);
      INFO("case " << i << " alpha " << alpha << " |u| / delta " << u_of(p).norm() / delta);
      CHECK(rel_err(ff.df_dp, fd) < fd_tol());
      // tangential, against the slip
      CHECK(std::abs(ff.f.dot(n)) <= 1e-12 * ff.f.norm());
      CHECK(ff.f.dot(u_of(p)) < 0);
    }
  }
}

TEST_CASE("coulomb_friction: df/dx vs central differences with a turning normal (core line)",
          "[contact][fd][coulomb]") {
  // two spheres' centres: x = c_a - c_b, n = x / |x|, d = r_a + r_b - |x|, y = x - x_n, u = P_t y
  Rng rng(36);
  for (int i = 0; i < 16; ++i) {
    const ContactParams cp = params(uniform(rng, 0.1, 1.2));
    const double delta = uniform(rng, 0.01, 0.05);
    const Vec3 x_n = uniform_vec(rng, -1, 1).normalized() * uniform(rng, 0.5, 1.0);
    const Vec3 x = x_n + uniform_vec(rng, -0.2, 0.2);
    const double radii = x.norm() + uniform(rng, 0.05, 0.2);
    auto eval = [&](const Vec3& xq, double* kappa, double* eta_out) {
      const double l = xq.norm();
      const Vec3 n = xq / l, y = xq - x_n;
      const double eta = n.dot(y);
      if (kappa) *kappa = 1 / l;
      if (eta_out) *eta_out = eta;
      return std::make_pair(n, Vec3(y - n * eta));
    };
    double kappa, eta;
    const auto [n, u] = eval(x, &kappa, &eta);
    const double d = radii - x.norm();
    const FrictionForce ff = coulomb_friction(u, d, n, cp, delta, kappa, eta);
    const MatX fd = fd_jacobian(
        [&](const VecX& q) {
          const Vec3 xq = q;
          const auto [nq, uq] = eval(xq, nullptr, nullptr);
          return v3(coulomb_friction(uq, radii - xq.norm(), nq, cp, delta).f);
        },
        v3(x), kH);
    INFO("case " << i << " |u| / delta " << u.norm() / delta << " kappa " << kappa << " eta " << eta);
    CHECK(rel_err(ff.df_dp, fd) < fd_tol());
    // without the turning terms the Jacobian is off by O(kappa |u|): the variant is needed
    const FrictionForce fixed = coulomb_friction(u, d, n, cp, delta);
    CHECK(rel_err(fixed.df_dp, fd) > 1e-4);
  }
}

TEST_CASE("coulomb_friction: |F_t| / f_n -> mu once the slip speed is far above v_s, at every dt", "[contact][coulomb]") {
  const Vec3 n(0, 0, 1);
  const double v_s = 1e-2;
  for (double mu : {0.1, 0.5, 1.0}) {
    const ContactParams cp = params(mu);
    for (double dt : {0.001, 0.01, 0.1}) {
      for (double v : {0.1, 1.0, 10.0}) {  // slip speeds 10 to 1000 v_s
        const Vec3 u = Vec3(0.6, 0.8, 0) * (v * dt);
        const double d = 2e-3, fn = cp.c_perp * d * d;
        const double ratio = coulomb_friction(u, d, n, cp, v_s * dt).f.norm() / fn;
        INFO("mu " << mu << " dt " << dt << " v " << v);
        // exactly mu v / sqrt(v^2 + v_s^2): within v_s^2 / (2 v^2) of mu, whatever dt
        CHECK(std::abs(ratio - mu * v / std::hypot(v, v_s)) <= 1e-14 * mu);
        CHECK(std::abs(ratio / mu - 1) <= 0.5 * (v_s / v) * (v_s / v) * 1.0001);
      }
    }
  }
  // below v_s the law is viscous: |F_t| / f_n ~ mu v / v_s, and 0 without slip
  const ContactParams cp = params(0.5);
  CHECK(coulomb_friction(Vec3::Zero(), 2e-3, n, cp, 1e-4).f.norm() == 0);
  const double r = coulomb_friction(Vec3(1e-7, 0, 0), 2e-3, n, cp, 1e-4).f.norm() / (cp.c_perp * 4e-6);
  CHECK(r == Approx(0.5 * 1e-3).epsilon(1e-6));
}
