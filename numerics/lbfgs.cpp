// LBFGS with a strong-Wolfe line search (docs/methods/pbfd.md §5.2).
// cpu-only: the paper's slowest optimizer, a CPU comparison point (docs/methods/pbfd.md §5.2 "CPU only").
#include "numerics/lbfgs.h"

#include <cmath>
#include <vector>

namespace bigstep {

namespace {

constexpr double kC1 = 1e-4, kC2 = 0.9;

// Minimizer of the cubic interpolating (a, fa, da), (b, fb, db); falls back to bisection when
// it is not finite or not safely inside the interval.
double interpolate(double a, double fa, double da, double b, double fb, double db) {
  const double d1 = da + db - 3 * (fa - fb) / (a - b);
  const double disc = d1 * d1 - da * db;
  double t = 0.5 * (a + b);
  if (disc >= 0) {
    const double d2 = std::copysign(std::sqrt(disc), b - a);
    const double c = b - (b - a) * (db + d2 - d1) / (db - da + 2 * d2);
    if (std::isfinite(c)) t = c;
  }
  const double lo = std::min(a, b), hi = std::max(a, b), w = hi - lo;
  if (!(t > lo + 0.1 * w && t < hi - 0.1 * w)) t = 0.5 * (a + b);
  return t;
}

}  // namespace

LbfgsResult lbfgs_minimize(const std::function<double(const VecX&, VecX&)>& fg,
                           const std::function<double(const VecX&, const VecX&)>& res, VecX& x,
                           const LbfgsSettings& s) {
  const int n = int(x.size()), m = s.memory;
  LbfgsResult out;
  VecX g(n), d(n), xt(n), gt(n), q(n);
  std::vector<VecX> S(m, VecX(n)), Y(m, VecX(n));
  std::vector<double> rho(m), alpha(m);
  int stored = 0, head = 0;  // ring buffer of (s, y) pairs
  double F = fg(x, g);
  ++out.evaluations;
  const double tol = s.eps_r * s.scale;
  out.residual = res(x, g);
  if (!std::isfinite(F) || !g.allFinite()) return out;
  for (int it = 0; it < s.it_max; ++it) {
    out.iterations = it;
    if (out.residual <= tol) {
      out.converged = true;
      return out;
    }
    // two-loop recursion: d = -H g
    q = g;
    for (int k = 0; k < stored; ++k) {
      const int i = (head - 1 - k + m) % m;
      alpha[i] = rho[i] * S[i].dot(q);
      q -= alpha[i] * Y[i];
    }
    if (stored > 0) {
      const int i = (head - 1 + m) % m;
      q *= S[i].dot(Y[i]) / Y[i].squaredNorm();
    } else {
      q /= std::max(1.0, g.norm());  // first step of length <= 1
    }
    for (int k = stored - 1; k >= 0; --k) {
      const int i = (head - 1 - k + m) % m;
      const double beta = rho[i] * Y[i].dot(q);
      q += (alpha[i] - beta) * S[i];
    }
    d = -q;
    double dg0 = g.dot(d);
    if (!(dg0 < 0)) {  // not a descent direction: restart from steepest descent
      stored = 0;
      d = -g / std::max(1.0, g.norm());
      dg0 = g.dot(d);
    }
    // strong-Wolfe line search: bracketing, then zoom
    auto phi = [&](double t, double& dphi) {
      xt = x + t * d;
      const double f = fg(xt, gt);
      ++out.evaluations;
      dphi = gt.dot(d);
      return (std::isfinite(f) && gt.allFinite()) ? f : std::numeric_limits<double>::infinity();
    };
    // below F's rounding the Wolfe tests are noise: accept a trial that lowers ||g||_inf
    // (the rule LM uses, docs/methods/pbfd.md §5.1)
    const double g_inf = g.lpNorm<Eigen::Infinity>();
    auto noise_accept = [&](double ft) {
      return std::abs(ft - F) <= 64 * 2.220446049250313e-16 * std::max(1.0, std::abs(F)) &&
             gt.lpNorm<Eigen::Infinity>() < g_inf;
    };
    double t_prev = 0, f_prev = F, d_prev = dg0, t = 1, t_ok = -1;
    for (int ls = 0; ls < 60 && t_ok < 0; ++ls) {
      double dt;
      const double ft = phi(t, dt);
      if (noise_accept(ft)) {
        t_ok = t;
        break;
      }
      double lo, flo, dlo, hi, fhi, dhi;
      bool zoom = false;
      if (!(ft <= F + kC1 * t * dg0) || (ls > 0 && ft >= f_prev)) {
        lo = t_prev; flo = f_prev; dlo = d_prev; hi = t; fhi = ft; dhi = dt;
        zoom = true;
      } else if (std::abs(dt) <= -kC2 * dg0) {
        t_ok = t;
        break;
      } else if (dt >= 0) {
        lo = t; flo = ft; dlo = dt; hi = t_prev; fhi = f_prev; dhi = d_prev;
        zoom = true;
      }
      if (zoom) {
        for (int z = 0; z < 40; ++z) {
          const double tj = std::isfinite(fhi) ? interpolate(lo, flo, dlo, hi, fhi, dhi) : 0.5 * (lo + hi);
          double dj;
          const double fj = phi(tj, dj);
          if (noise_accept(fj)) {
            t_ok = tj;
            break;
          }
          if (!(fj <= F + kC1 * tj * dg0) || fj >= flo) {
            hi = tj; fhi = fj; dhi = dj;
          } else {
            if (std::abs(dj) <= -kC2 * dg0) {
              t_ok = tj;
              break;
            }
            if (dj * (hi - lo) >= 0) {
              hi = lo; fhi = flo; dhi = dlo;
            }
            lo = tj; flo = fj; dlo = dj;
          }
          if (std::abs(hi - lo) <= 1e-16 * std::max(1.0, std::abs(lo))) break;
        }
        if (t_ok < 0 && lo > 0 && flo < F) t_ok = lo;  // sufficient decrease without curvature
        break;
      }
      t_prev = t; f_prev = ft; d_prev = dt;
      t *= 2;
    }
    if (t_ok < 0) return out;  // no decrease found: F is at its rounding floor; res says the rest
    // the accepted point (re-evaluated when the last trial was another one)
    xt = x + t_ok * d;
    const double Fn = fg(xt, gt);
    ++out.evaluations;
    S[head] = xt - x;
    Y[head] = gt - g;
    const double sy = S[head].dot(Y[head]);
    if (sy > 1e-10 * S[head].norm() * Y[head].norm()) {
      rho[head] = 1 / sy;
      head = (head + 1) % m;
      stored = std::min(stored + 1, m);
    }
    x = xt;
    g = gt;
    F = Fn;
    out.residual = res(x, g);
  }
  out.iterations = s.it_max;
  out.converged = out.residual <= tol;
  return out;
}

}  // namespace bigstep
