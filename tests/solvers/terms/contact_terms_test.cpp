// Per-point contact formulas vs central differences in the point position p
// (docs/methods/pbfd.md §4.3-§4.4, §9 D2 and D7). The slip and depth are functions of p as there:
// u = P_t (p - p_n), d = max(0, -phi(p)), phi(p) = n^T p - h0 - r, with n and p_n fixed.
#include <catch2/catch.hpp>

#include <cmath>

#include "solvers/terms/contact_terms.h"
#include "tests/support/random_models.h"

using namespace bigstep;
using namespace bigstep::test;

namespace {

// One sphere / plane pair: plane (n, h0), sphere radius r, sphere centre p_n at the step start.
struct Pair {
  Vec3 n;
  double h0 = 0, r = 0;
  Vec3 p_n;
};

double depth(const Pair& c, const Vec3& p) { return std::max(0.0, -sphere_plane_phi(p, c.r, c.n, c.h0)); }
Vec3 slip(const Pair& c, const Vec3& p) {
  const Vec3 dp = p - c.p_n;
  return dp - c.n * c.n.dot(dp);
}

// A random pair and a point p with depth d in [0.05, 0.3] m and slip |u| in [0.05, 0.5] m:
// both far from 0 compared with the FD step, so every power |u|^s, d^s is smooth there.
// Radius 0 for even `i`, > 0 for odd (the radius only shifts the depth; it must not leak into u).
void random_pair(Rng& rng, int i, Pair& c, Vec3& p) {
  c.n = random_oblique_unit(rng);
  c.r = (i % 2 == 0) ? 0.0 : uniform(rng, 0.01, 0.2);
  c.p_n = uniform_vec(rng, -1, 1);
  Vec3 t;
  do {
    t = uniform_vec(rng, -0.5, 0.5);
    t -= c.n * c.n.dot(t);
  } while (t.norm() < 0.05 || t.norm() > 0.5);
  const double dn = uniform(rng, -0.2, 0.2);  // normal motion during the step: no effect on u
  p = c.p_n + t + dn * c.n;
  const double d = uniform(rng, 0.05, 0.3);
  c.h0 = c.n.dot(p) - c.r + d;  // so that -phi(p) = d
}

VecX v3(const Vec3& v) { return VecX(v); }

// The tested (beta, gamma) sets, (0.7, 1.3) included as in docs/methods/pbfd.md §4.4.
const double kExponents[][2] = {{1, 1}, {1.5, 2}, {1.3, 1.7}, {0.7, 1.3}};

// FD step for this file: depth and slip are >= 0.05 m, so with h = 1e-6 the truncation error is
// (h / 0.05)^2 ~ 4e-10 relative and the round-off eps |e| / (h |grad e|) ~ 2e-16 * 0.3 / 1e-6
// ~ 6e-11 relative; the D2 bound 1e-6 (fd_tol) has ample margin.
constexpr double kH = 1e-6;

}  // namespace

TEST_CASE("contact_terms: tangential_energy value, gradient and Hessian vs central differences",
          "[contact][fd]") {
  for (const auto& bg : kExponents) {
    ContactParams cp;
    cp.beta = bg[0];
    cp.gamma = bg[1];
    Rng rng(uint32_t(1000 * bg[0] + 10 * bg[1]));
    for (int i = 0; i < 8; ++i) {
      Pair c;
      Vec3 p;
      random_pair(rng, i, c, p);
      const Vec3 u = slip(c, p);
      const double d = depth(c, p);
      INFO("beta " << cp.beta << " gamma " << cp.gamma << " case " << i << " |u| " << u.norm()
                   << " d " << d << " r " << c.r);
      REQUIRE(d > 0.04);
      const TangentialEnergy te = tangential_energy(u, d, c.n, cp);
      const double e_ref = std::pow(u.norm(), cp.beta + 1) * std::pow(d, cp.gamma + 1);
      CHECK(std::abs(te.e - e_ref) <= tol(1e-14) * e_ref);

      auto energy = [&](const VecX& q) {
        const Vec3 pq = q;
        return tangential_energy(slip(c, pq), depth(c, pq), c.n, cp).e;
      };
      auto grad = [&](const VecX& q) {
        const Vec3 pq = q;
        return v3(tangential_energy(slip(c, pq), depth(c, pq), c.n, cp).grad);
      };
      const double eg = rel_err(te.grad, fd_gradient(energy, v3(p), kH));
      INFO("gradient rel err " << eg);
      CHECK(eg < fd_tol());
      const double eh = rel_err(te.hess, fd_jacobian(grad, v3(p), kH));
      INFO("Hessian rel err " << eh);
      CHECK(eh < fd_tol());
      CHECK((te.hess - te.hess.transpose()).cwiseAbs().maxCoeff() <=
            tol(1e-14) * te.hess.cwiseAbs().maxCoeff());
    }
  }
}

TEST_CASE("contact_terms: pbfd_friction df_dp vs central differences of f_par", "[contact][fd]") {
  for (const auto& bg : kExponents) {
    ContactParams cp;
    cp.beta = bg[0];
    cp.gamma = bg[1];
    Rng rng(uint32_t(2000 * bg[0] + 10 * bg[1]));
    for (int i = 0; i < 8; ++i) {
      Pair c;
      Vec3 p;
      random_pair(rng, i, c, p);
      const Vec3 u = slip(c, p);
      const double d = depth(c, p);
      INFO("beta " << cp.beta << " gamma " << cp.gamma << " case " << i << " |u| " << u.norm()
                   << " d " << d);
      const FrictionForce ff = pbfd_friction(u, d, c.n, cp);
      // tangential and opposed to the slip, magnitude (beta+1)|u|^beta d^(gamma+1) (A1 exponent)
      const double mag = (cp.beta + 1) * std::pow(u.norm(), cp.beta) * std::pow(d, cp.gamma + 1);
      CHECK(std::abs(ff.f.dot(c.n)) <= tol(1e-14) * mag);
      CHECK(ff.f.dot(u) == Approx(-mag * u.norm()).epsilon(tol(1e-13)));
      CHECK(ff.f.norm() == Approx(mag).epsilon(tol(1e-13)));

      const MatX fd = fd_jacobian(
          [&](const VecX& q) {
            const Vec3 pq = q;
            return v3(pbfd_friction(slip(c, pq), depth(c, pq), c.n, cp).f);
          },
          v3(p), kH);
      const double err = rel_err(ff.df_dp, fd);
      INFO("df_dp rel err " << err);
      CHECK(err < fd_tol());
      // not symmetric in general (f_par has no energy): the u n^T depth term breaks it
      CHECK((ff.df_dp - ff.df_dp.transpose()).norm() > 1e-3 * ff.df_dp.norm());
    }
  }
}

TEST_CASE("contact_terms: D7 -grad_p e == f_par + f_star to round-off", "[contact][D7]") {
  for (const auto& bg : kExponents) {
    ContactParams cp;
    cp.beta = bg[0];
    cp.gamma = bg[1];
    Rng rng(uint32_t(3000 * bg[0] + 10 * bg[1]));
    for (int i = 0; i < 16; ++i) {
      Pair c;
      Vec3 p;
      random_pair(rng, i, c, p);
      const Vec3 u = slip(c, p);
      const double d = depth(c, p);
      const TangentialEnergy te = tangential_energy(u, d, c.n, cp);
      const Vec3 fpar = pbfd_friction(u, d, c.n, cp).f;
      const Vec3 fstar = spurious_normal_force(u, d, c.n, cp);
      const Vec3 diff = -te.grad - (fpar + fstar);
      INFO("beta " << cp.beta << " gamma " << cp.gamma << " case " << i << " |diff| " << diff.norm()
                   << " |grad| " << te.grad.norm());
      // a few flops per component on O(|grad|) terms
      CHECK(diff.cwiseAbs().maxCoeff() <= tol(1e-14) * te.grad.norm());
      // and the split is the tangential / normal decomposition of -grad e
      CHECK(std::abs(fstar.dot(c.n) + te.grad.dot(c.n)) <= tol(1e-14) * te.grad.norm());
      CHECK(fstar.cross(c.n).norm() <= tol(1e-14) * fstar.norm());
    }
  }
}

TEST_CASE("contact_terms: zero slip is finite; for beta = gamma = 1 the FD checks hold at u = 0",
          "[contact][fd]") {
  Rng rng(4000);
  for (const auto& bg : kExponents) {
    ContactParams cp;
    cp.beta = bg[0];
    cp.gamma = bg[1];
    if (cp.beta < 1) continue;  // ContactParams documents beta >= 1 for zero slip
    Pair c;
    Vec3 p;
    random_pair(rng, 0, c, p);
    const double d = depth(c, p);
    const TangentialEnergy te = tangential_energy(Vec3::Zero(), d, c.n, cp);
    const FrictionForce ff = pbfd_friction(Vec3::Zero(), d, c.n, cp);
    INFO("beta " << cp.beta << " gamma " << cp.gamma);
    CHECK(te.e == 0);
    CHECK(te.grad.allFinite());
    CHECK(te.hess.allFinite());
    CHECK(ff.f.allFinite());
    CHECK(ff.df_dp.allFinite());
    CHECK(te.grad.norm() == 0);
    CHECK(ff.f.norm() == 0);
  }
  // beta = gamma = 1: e = |u|^2 d^2 is a polynomial in p, so the derivatives at u = 0 are the
  // ordinary ones: grad = 0, Hessian 2 d^2 P_t, df_dp = -2 d^2 P_t.
  ContactParams cp;
  for (int i = 0; i < 4; ++i) {
    Pair c;
    Vec3 p;
    random_pair(rng, i, c, p);
    c.p_n = p;  // zero slip at p
    const double d = depth(c, p);
    const TangentialEnergy te = tangential_energy(Vec3::Zero(), d, c.n, cp);
    const FrictionForce ff = pbfd_friction(Vec3::Zero(), d, c.n, cp);
    auto grad = [&](const VecX& q) {
      const Vec3 pq = q;
      return v3(tangential_energy(slip(c, pq), depth(c, pq), c.n, cp).grad);
    };
    auto force = [&](const VecX& q) {
      const Vec3 pq = q;
      return v3(pbfd_friction(slip(c, pq), depth(c, pq), c.n, cp).f);
    };
    const double eh = rel_err(te.hess, fd_jacobian(grad, v3(p), kH));
    const double ef = rel_err(ff.df_dp, fd_jacobian(force, v3(p), kH));
    INFO("case " << i << " Hessian rel err " << eh << " df_dp rel err " << ef);
    CHECK(eh < fd_tol());
    CHECK(ef < fd_tol());
  }
}
