// Physics oracles of the PBD / PBFD step (docs/methods/pbfd.md §9): free flight (D3), a small-angle
// pendulum, long-horizon energy bounds (D5), PBD == PBFD without contact (P1), rest depth (D4),
// the C_par sweeps of Fig. 5 (P3, P5), sticking in the stiff limit (P11), large-step stability on
// the §8 scenes (D6) and the per-step failure flags (non-finite input, gimbal lock).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/inertia.h"
#include "batch/rollout.h"
#include "io/scene.h"
#include "solvers/pbd/pbd_step.h"
#include "tests/support/step_scenes.h"
#include "tests/support/tol.h"

using namespace bigstep;
using bigstep::test::tol;
using bigstep::test::com;
using bigstep::test::config;
using bigstep::test::kFreeBox;
using bigstep::test::num;

namespace {

// Convergence scale of §5.1: s = max(1, W).
double scale(const Model& m) { return std::max(1.0, m.weight()); }

// Every step converged per §5.1 (OK, or OK_SMALLSTEP with res <= 100 eps_r s) and finite.
void check_all_converged(const Scene& sc, const Rollout& r) {
  const double res_max = 100 * sc.settings.eps_r * scale(sc.model);
  int bad = 0, first_bad = -1;
  for (size_t n = 0; n < r.stats.size(); ++n) {
    const StepStats& st = r.stats[n];
    if (!st.converged() || !(st.residual <= res_max) || !r.theta[n + 1].allFinite()) {
      if (first_bad < 0) first_bad = int(n);
      ++bad;
    }
  }
  INFO("first failing step " << first_bad);
  CHECK(bad == 0);
  CHECK_FALSE(r.aborted);
}

// Box pendulum: 0.04 x 0.04 x 1 m rod, 1 kg, hinge about y at its top end.
const char* kPendulum = R"(scene: pendulum
model:
  links:
    - name: rod
      joint: hinge
      axis: [0, 1, 0]
      box: {size: [0.04, 0.04, 1.0], mass: 1.0, centre: [0, 0, -0.5]}
initial:
  theta: [0.05]
integrator: {type: pbfd, dt: 0.001, duration: 8.0}
)";

// C_par grid of Fig. 5: 10^{4, 4.5, ..., 11} (15 values).
std::vector<double> c_par_grid() {
  std::vector<double> g;
  for (int i = 0; i <= 14; ++i) g.push_back(std::pow(10.0, 4 + 0.5 * i));
  return g;
}

struct SlideResult {
  double distance;
  bool at_rest, tipped;
};

// §8.1 box slide (configs/box_slide.yaml, stops at rest by itself) for one (type, dt, C_par).
SlideResult slide(const std::string& type, double dt, double c_par) {
  const Scene sc = load_scene(config("box_slide"), {"integrator.type=" + type, "integrator.dt=" + num(dt),
                                                    "contact.c_par=" + num(c_par)});
  const Rollout r = simulate(sc);
  check_all_converged(sc, r);
  const Metrics m = compute_metrics(sc, r);
  return {m.sliding_distance_m, r.stopped_at_rest, m.tipped};
}

std::string row(const std::vector<double>& v) {
  std::string s;
  char b[32];
  for (double x : v) {
    std::snprintf(b, sizeof b, "%.4g ", x);
    s += b;
  }
  return s;
}

}  // namespace

// ------------------------------------------------------------------------------------------
// D3: free body in flight
// ------------------------------------------------------------------------------------------

TEST_CASE("D3: free-flying box follows the Verlet recurrence and the exact parabola", "[pbd][oracle]") {
  const Scene sc = load_scene_text(kFreeBox, "free_box.yaml");
  const Model& m = sc.model;
  const double dt = sc.settings.dt, mass = m.total_mass;
  const Vec3 g = m.gravity;
  const Vec3 v_c(1.0, 0.5, 2.0);  // COM velocity at t = 0
  struct Variant { Formulation f; Optimizer o; const char* name; };
  for (const Variant& var : {Variant{Formulation::Pbfd, Optimizer::JtjLm, "pbfd jtj_lm"},
                             Variant{Formulation::Pbd, Optimizer::JtjLm, "pbd jtj_lm"},
                             Variant{Formulation::Pbd, Optimizer::Lm, "pbd lm"}}) {
    INFO(var.name);
    PbdSettings s = sc.settings;
    s.formulation = var.f;
    s.optimizer = var.o;
    PbdIntegrator integ(m, s);
    // theta_{-1}: spinning (angular rates 0.3, -0.2, 0.5 rad/s on rz, ry, rx) and the base
    // translation placed so that the COM sits exactly on the parabola at t = -dt
    const VecX th0 = sc.theta0;
    VecX thm1 = th0;
    thm1.tail<3>() -= dt * Vec3(0.3, -0.2, 0.5);
    const Vec3 c0 = com(m, th0);
    const Vec3 c_exact_m1 = c0 - dt * v_c + 0.5 * dt * dt * g;
    thm1.head<3>().setZero();
    thm1.head<3>() = c_exact_m1 - com(m, thm1);
    REQUIRE((com(m, thm1) - c_exact_m1).norm() < 1e-14);

    VecX a = thm1, b = th0, c(m.n_q);
    double max_second_diff_err = 0, max_res = 0, max_parabola_err = 0;
    bool recurrence_ok = true;
    const int N = 100;
    for (int n = 0; n < N; ++n) {
      const StepStats st = integ.step(b, a, VecX(), c);
      REQUIRE(st.converged());
      max_res = std::max(max_res, st.residual);
      // translational residual r_k = m (c_{n+1} - 2 c_n + c_{n-1})_k / dt^2 - m g_k, so the
      // recurrence holds to dt^2 |r|_inf / m; 1e-13 covers rounding of positions ~ 2 m
      const Vec3 e = com(m, c) - 2 * com(m, b) + com(m, a) - dt * dt * g;
      const double bound = dt * dt * st.residual / mass + 1e-13;
      if (!(e.lpNorm<Eigen::Infinity>() <= bound * tol(1.0))) recurrence_ok = false;
      max_second_diff_err = std::max(max_second_diff_err, e.lpNorm<Eigen::Infinity>());
      a = b;
      b = c;
      const double t = (n + 1) * dt;
      const Vec3 exact = c0 + v_c * t + 0.5 * g * t * t;
      max_parabola_err = std::max(max_parabola_err, (com(m, b) - exact).lpNorm<Eigen::Infinity>());
    }
    INFO("max |second difference - dt^2 g| = " << max_second_diff_err << ", max residual " << max_res
                                               << ", max parabola error " << max_parabola_err);
    CHECK(recurrence_ok);
    // per-step errors e_k accumulate as sum (N - k) e_k <= N^2/2 max e_k
    CHECK(max_parabola_err <= tol(0.5 * N * N * (dt * dt * max_res / mass + 1e-13)));
    // the body really spun (the COM test is not a pure-translation special case)
    CHECK(std::abs(b[5] - th0[5]) > 0.3);
  }
}

TEST_CASE("D3: simulate() from theta_dot has the O(dt) start error g dt t / 2", "[pbd][oracle]") {
  // theta_{-1} = theta_0 - dt theta_dot (docs/methods/pbfd.md §5.3) is a first-order start: the discrete
  // parabola has initial velocity v0 + g dt / 2, so z_n - z_exact(t) = g_z dt t / 2 exactly. The
  // second-order step (integrator.order 2, §3.1) reads the same start as the velocity at t_0 and is
  // exact on a quadratic: no start error at all.
  for (int order : {1, 2}) {
    for (const char* type : {"pbfd", "pbd"}) {
      for (double dt : {0.01, 0.05}) {
        INFO(type << " order " << order << " dt " << dt);
        const Scene sc = load_scene_text(kFreeBox, "free_box.yaml",
                                         {std::string("integrator.type=") + type, "integrator.dt=" + num(dt),
                                          "integrator.order=" + std::to_string(order),
                                          "initial.theta_dot=[1.0, 0.5, 2.0, 0, 0, 0]"});
        const Rollout r = simulate(sc);
        check_all_converged(sc, r);
        const Vec3 c0 = com(sc.model, sc.theta0), v0(1.0, 0.5, 2.0), g = sc.model.gravity;
        const double start = order == 1 ? 1.0 : 0.0;  // the start error's share
        double max_dev = 0;
        for (size_t n = 0; n < r.theta.size(); ++n) {
          const double t = n * dt;
          const Vec3 exact = c0 + v0 * t + 0.5 * g * t * t;
          const Vec3 err = com(sc.model, r.theta[n]) - exact;
          // O(dt) bound: |err| <= |g| dt t / 2 (+ solver tolerance)
          CHECK(err.norm() <= 0.5 * g.norm() * dt * t + tol(1e-8));
          // and it is exactly the start error (nothing else): solver tolerance 1e-8
          max_dev = std::max(max_dev, (err - start * 0.5 * g * dt * t).lpNorm<Eigen::Infinity>());
        }
        CHECK(max_dev < tol(1e-8));
        CHECK(r.steps_run == sc.steps());
      }
    }
  }
}

// ------------------------------------------------------------------------------------------
// Small-angle pendulum
// ------------------------------------------------------------------------------------------

TEST_CASE("pendulum: small-angle period matches 2 pi sqrt(I_pivot / (m g l))", "[pbd][oracle]") {
  // I_pivot = m (a^2 + c^2) / 12 + m l^2 for the rod about y at its end, l = 0.5 m.
  const double m = 1, l = 0.5, g = 9.81;
  const double I_pivot = m * (0.04 * 0.04 + 1.0) / 12 + m * l * l;
  const double T = 2 * M_PI * std::sqrt(I_pivot / (m * g * l));  // 1.63828 s
  // Error budget: amplitude 0.05 rad lengthens the period by theta0^2/16 = 1.6e-4; the implicit
  // step x_{n+1} - 2x_n + x_{n-1} = -h^2 w^2 x_{n+1} has period 2 pi h / atan(h w), relative
  // error (h w)^2 / 3: 5e-6 at h = 1e-3, 5e-4 at h = 1e-2 (w = 3.84 rad/s).
  struct Case { const char* type; double dt; double rel_tol; };
  for (const Case& cs : {Case{"pbfd", 1e-3, 1e-3}, Case{"pbd", 1e-3, 1e-3}, Case{"pbfd", 1e-2, 1e-2},
                         Case{"pbd", 1e-2, 1e-2}}) {
    INFO(cs.type << " dt " << cs.dt);
    const Scene sc = load_scene_text(kPendulum, "pendulum.yaml",
                                     {std::string("integrator.type=") + cs.type, "integrator.dt=" + num(cs.dt)});
    REQUIRE(sc.model.n_q == 1);
    const Rollout r = simulate(sc);
    check_all_converged(sc, r);
    // upward zero crossings of theta, linearly interpolated
    std::vector<double> up;
    for (size_t n = 1; n < r.theta.size(); ++n) {
      const double a = r.theta[n - 1][0], b = r.theta[n][0];
      if (a < 0 && b >= 0) up.push_back(cs.dt * (n - 1 + a / (a - b)));
    }
    REQUIRE(up.size() >= 4);
    const double T_num = (up.back() - up.front()) / double(up.size() - 1);
    const double rel = T_num / T - 1;
    INFO("T exact " << T << " T numerical " << T_num << " relative error " << rel);
    CHECK(std::abs(rel) < tol(cs.rel_tol));
    // the implicit step damps: amplitude decays but the pendulum keeps swinging
    double late_max = 0;
    for (size_t n = r.theta.size() - size_t(T / cs.dt); n < r.theta.size(); ++n)
      late_max = std::max(late_max, std::abs(r.theta[n][0]));
    CHECK(late_max < 0.05);
    CHECK(late_max > 0.01);
  }
}

// ------------------------------------------------------------------------------------------
// D5: long horizons without contact
// ------------------------------------------------------------------------------------------

namespace {
// Runs `steps` steps of chain_fixed and returns the largest energy rise above E_0, relative to
// the energy available to the chain, E_0 - V_min (V_min: hanging straight down).
struct EnergyRun { double E0, Emax, Efinal, Vmin; int failed; };
EnergyRun energy_run(const std::string& type, double dt, int steps) {
  const Scene sc = load_scene(config("chain_fixed"), {"integrator.type=" + type, "integrator.dt=" + num(dt)});
  const Model& m = sc.model;
  PbdIntegrator integ(m, sc.settings);
  VecX a = sc.theta0 - dt * sc.theta_dot0, b = sc.theta0, c(m.n_q);
  EnergyRun out{mechanical_energy(m, a, b, dt), 0, 0, 0, 0};
  out.Emax = out.E0;
  for (int n = 0; n < steps; ++n) {
    const StepStats st = integ.step(b, a, sc.tau, c);
    if (!st.converged() || !c.allFinite()) ++out.failed;
    a = b;
    b = c;
    out.Emax = std::max(out.Emax, mechanical_energy(m, a, b, dt));
  }
  out.Efinal = mechanical_energy(m, a, b, dt);
  // chain hanging straight down: hinge 0 at -pi/2 about y points local x down
  VecX down = VecX::Zero(m.n_q);
  down[0] = M_PI / 2;
  out.Vmin = mechanical_energy(m, down, down, dt);
  return out;
}
}  // namespace

TEST_CASE("D5: PBD and PBFD without contact stay bounded and never gain energy", "[pbd][oracle]") {
  struct Case { const char* type; double dt; int steps; };
  for (const Case& cs : {Case{"pbd", 0.05, 10000}, Case{"pbfd", 0.1, 1000}, Case{"pbd", 0.1, 1000}}) {
    INFO(cs.type << " dt " << cs.dt << " steps " << cs.steps);
    const EnergyRun e = energy_run(cs.type, cs.dt, cs.steps);
    INFO("E0 " << e.E0 << " Emax " << e.Emax << " Efinal " << e.Efinal << " Vmin " << e.Vmin);
    CHECK(e.failed == 0);
    CHECK(std::isfinite(e.Efinal));
    // docs/methods/pbfd.md §9 D5: energy never exceeds 1.05 E0 (E0 = 78.48 J with the world z = 0 datum)
    CHECK(e.Emax <= 1.05 * e.E0);
    // datum-free form: no more than 5% of the available energy E0 - V_min (31.4 J) is gained
    CHECK(e.Emax - e.E0 <= 0.05 * (e.E0 - e.Vmin));
    // the implicit step dissipates: the chain ends near its lowest energy, never below it
    CHECK(e.Efinal >= e.Vmin - 1e-6);
    CHECK(e.Efinal < e.E0);
  }
}

// ------------------------------------------------------------------------------------------
// P1: without contact PBD (Eq. 6) and PBFD (Eq. 13) solve the same equations
// ------------------------------------------------------------------------------------------

TEST_CASE("P1: PBD and PBFD agree without contact", "[pbd][oracle]") {
  const Scene pbfd = load_scene(config("chain_fixed"), {"integrator.type=pbfd"});
  const Scene pbd = load_scene(config("chain_fixed"), {"integrator.type=pbd"});
  const Model& m = pbfd.model;
  PbdIntegrator A(m, pbfd.settings), B(pbd.model, pbd.settings);
  VecX a = pbfd.theta0, b = a, next_pbfd(m.n_q), next_pbd(m.n_q);
  VecX pa = a, pb = a, pnext(m.n_q);  // independent PBD trajectory
  double max_step_diff = 0, max_traj_diff = 0;
  for (int n = 0; n < 200; ++n) {
    // same (theta_n, theta_{n-1}) for both
    REQUIRE(A.step(b, a, VecX(), next_pbfd).converged());
    REQUIRE(B.step(b, a, VecX(), next_pbd).converged());
    max_step_diff = std::max(max_step_diff, (next_pbfd - next_pbd).lpNorm<Eigen::Infinity>());
    REQUIRE(B.step(pb, pa, VecX(), pnext).converged());
    a = b;
    b = next_pbfd;
    pa = pb;
    pb = pnext;
    max_traj_diff = std::max(max_traj_diff, (b - pb).lpNorm<Eigen::Infinity>());
  }
  INFO("max per-step difference " << max_step_diff << ", max trajectory difference " << max_traj_diff);
  CHECK(max_step_diff < tol(1e-6));   // docs/methods/pbfd.md §9 P1: the solver tolerance allows no tighter
  CHECK(max_traj_diff < tol(1e-4));   // docs/methods/pbfd.md §9 P1: chaotic chain, loose bound
  CHECK((b - pbfd.theta0).lpNorm<Eigen::Infinity>() > 0.5);  // the chain really moved
}

// ------------------------------------------------------------------------------------------
// D4: rest depth
// ------------------------------------------------------------------------------------------

TEST_CASE("D4: a box dropped onto the ground settles at sqrt(W / (2 C_perp)) per corner", "[pbd][oracle]") {
  // box_slide at rest, released 0.5 mm above the ground (bottom at z = +0.5 mm); 2 s
  for (const char* type : {"pbfd", "pbd"}) {
    for (double dt : {0.01, 0.001}) {
      INFO(type << " dt " << dt);
      const Scene sc = load_scene(config("box_slide"),
                                  {std::string("integrator.type=") + type, "integrator.dt=" + num(dt),
                                   "initial.theta_dot=[0, 0, 0]", "initial.theta=[0, 0.1005, 0]",
                                   "integrator.duration=2", "metrics.stop_at_rest=false"});
      const Rollout r = simulate(sc);
      check_all_converged(sc, r);
      const double d_star = std::sqrt(sc.model.weight() / (2 * sc.settings.contact.c_perp));  // 1.99695 mm
      Kinematics k(sc.model);
      forward_kinematics(sc.model, r.theta.back(), k);
      int n_support = 0;
      for (const ContactSphere& sp : sc.model.spheres) {
        const double depth = -point_position(k, sp.link, sp.centre).z();
        if (sp.centre.z() > 0) {
          CHECK(depth < 0);  // top corners stay in the air
          continue;
        }
        ++n_support;
        INFO("corner " << sp.centre.transpose() << " depth " << depth << " expected " << d_star);
        CHECK(std::abs(depth / d_star - 1) < tol(0.01));  // docs/methods/pbfd.md §9 D4: 1%
      }
      CHECK(n_support == 2);
      // at rest, level, not drifting
      const VecX v = (r.theta.back() - r.theta[r.theta.size() - 2]) / dt;
      CHECK(v.lpNorm<Eigen::Infinity>() < 1e-3);
      CHECK(std::abs(r.theta.back()[2]) < 1e-6);
      CHECK(std::abs(r.theta.back()[0]) < 1e-6);
    }
  }
}

// ------------------------------------------------------------------------------------------
// P3 / P5: sliding distance vs C_par (Fig. 5)
// ------------------------------------------------------------------------------------------

TEST_CASE("P3: PBFD sliding distance strictly decreases as C_par grows, at every dt", "[pbd][oracle][paper]") {
  // full half-decade grid 10^{4..11} at every dt of §8.1 (dt = 0.001 takes < 1 s: the runs stop
  // at rest by themselves or after 10 s)
  const std::vector<double> grid = c_par_grid();
  for (double dt : {0.001, 0.01, 0.03, 0.1}) {
    std::vector<double> dist;
    bool tipped = false;
    for (double c : grid) {
      const SlideResult s = slide("pbfd", dt, c);
      dist.push_back(s.distance);
      tipped = tipped || s.tipped;
    }
    INFO("dt " << dt << " distances [m] " << row(dist));
    for (size_t i = 1; i < dist.size(); ++i) {
      INFO("C_par 10^" << 4 + 0.5 * (i - 1) << " -> 10^" << 4 + 0.5 * i);
      CHECK(dist[i] < dist[i - 1]);
    }
    CHECK_FALSE(tipped);
    // the sweep spans free sliding (most of v T = 10 m) to sticking (< 1 mm)
    CHECK(dist.front() > 9.0);
    CHECK(std::abs(dist.back()) < 1e-3);
  }
}

TEST_CASE("P5: PBD sliding distance first decreases, then increases beyond a threshold C_par", "[pbd][oracle][paper]") {
  // The spurious normal push f* of the PBD energy lifts the box out of the ground at large C_par,
  // so friction vanishes again. The turn shows on the half-decade grid; it moves to smaller C_par
  // and its minimum distance grows with dt (observed: 10^7.5 / 0.53 m at dt = 0.01,
  // 10^6.5 / 1.63 m at 0.03, 10^5.5 / 5.29 m at 0.1).
  const std::vector<double> grid = c_par_grid();
  std::vector<size_t> turn;
  std::vector<double> min_dist;
  for (double dt : {0.01, 0.03, 0.1}) {
    std::vector<double> dist;
    for (double c : grid) dist.push_back(slide("pbd", dt, c).distance);
    INFO("dt " << dt << " distances [m] " << row(dist));
    const size_t k = size_t(std::min_element(dist.begin(), dist.end()) - dist.begin());
    INFO("minimum at C_par = 10^" << 4 + 0.5 * k);
    CHECK(k > 0);                // it first decreases ...
    CHECK(k + 1 < dist.size());  // ... and the turn is inside the grid
    for (size_t i = 1; i <= k; ++i) CHECK(dist[i] < dist[i - 1]);
    // ... then increases right after the threshold, far beyond the minimum
    if (k + 1 < dist.size()) CHECK(dist[k + 1] > dist[k]);
    CHECK(dist.back() > 1.5 * dist[k]);
    turn.push_back(k);
    min_dist.push_back(dist[k]);
  }
  // the effect grows with dt: earlier turn, larger minimum distance
  CHECK(turn[0] > turn[1]);
  CHECK(turn[1] > turn[2]);
  CHECK(min_dist[0] < min_dist[1]);
  CHECK(min_dist[1] < min_dist[2]);
}

// ------------------------------------------------------------------------------------------
// P11: stiff limit -> sticking
// ------------------------------------------------------------------------------------------

TEST_CASE("P11: with C_perp, C_par -> infinity the per-step slip goes to 0", "[pbd][oracle][paper]") {
  // PBFD friction is C_par d^2 u with d = sqrt(W / (2 C_perp)) at rest, i.e. ~ (C_par / C_perp) u:
  // scaling C_perp by 10 and C_par by 100 per stage should cut the slip ~10x per stage.
  const double dt = 0.01;
  std::vector<double> max_slip;
  for (int k = 0; k <= 4; ++k) {
    const double c_perp = 1.23e6 * std::pow(10.0, k), c_par = 1e8 * std::pow(100.0, k);
    const double z0 = 0.1 - std::sqrt(9.81 / (2 * c_perp));  // start at this C_perp's rest depth
    const Scene sc = load_scene(config("box_slide"),
                                {"contact.c_perp=" + num(c_perp), "contact.c_par=" + num(c_par),
                                 "initial.theta=[0, " + num(z0) + ", 0]", "integrator.dt=" + num(dt),
                                 "integrator.duration=1", "metrics.stop_at_rest=false"});
    const Rollout r = simulate(sc);
    check_all_converged(sc, r);
    Kinematics ka(sc.model), kb(sc.model);
    double slip = 0;
    for (size_t n = 1; n < r.theta.size(); ++n) {
      forward_kinematics(sc.model, r.theta[n - 1], ka);
      forward_kinematics(sc.model, r.theta[n], kb);
      for (const ContactSphere& sp : sc.model.spheres) {
        const Vec3 p = point_position(kb, sp.link, sp.centre), p_n = point_position(ka, sp.link, sp.centre);
        if (p.z() < 0) slip = std::max(slip, std::abs(p.x() - p_n.x()));  // ground: u = x-component
      }
    }
    max_slip.push_back(slip);
  }
  INFO("max per-step slip of a touching corner [m], v dt = 1e-2: " << max_slip[0] << " " << max_slip[1]
       << " " << max_slip[2] << " " << max_slip[3] << " " << max_slip[4]);
  for (size_t i = 1; i < max_slip.size(); ++i) CHECK(max_slip[i] < max_slip[i - 1] / 5);  // ~10x expected
  CHECK(max_slip.back() < 1e-4 * 1.0 * dt);  // < 1e-4 of the free slip v dt per step
}

// ------------------------------------------------------------------------------------------
// D6: large steps on the contact scenes
// ------------------------------------------------------------------------------------------

TEST_CASE("D6: PBFD at dt = 0.1 s on the chain scenes converges every step and lands", "[pbd][oracle]") {
  // C_par = 5e4 / dt keeps mu_eff = 0.5 at 1 m/s (config comments)
  for (const char* name : {"chain_floating_ground", "chain_slope"}) {
    INFO(name);
    const Scene sc = load_scene(config(name), {"integrator.dt=0.1", "contact.c_par=5e5"});
    const Rollout r = simulate(sc);
    REQUIRE(r.steps_run == sc.steps());
    check_all_converged(sc, r);
    double z_min = 1e9, z_max = -1e9, x_abs = 0;
    for (const VecX& th : r.theta) {
      const Vec3 c = com(sc.model, th);
      z_min = std::min(z_min, c.z());
      z_max = std::max(z_max, c.z());
      x_abs = std::max(x_abs, std::abs(c.x()));
    }
    const Vec3 c_end = com(sc.model, r.theta.back());
    INFO("COM z range [" << z_min << ", " << z_max << "], final COM " << c_end.transpose());
    // bounded: never above the start, never through the ground, no horizontal fly-away
    CHECK(z_max <= com(sc.model, r.theta.front()).z() + 1e-9);
    CHECK(z_min > 0);
    CHECK(x_abs < 5);
    // ends lying on the ground: link half-height 0.02 m minus the ~mm rest depth
    CHECK(c_end.z() > 0.01);
    CHECK(c_end.z() < 0.03);
    if (std::string(name) == "chain_slope") CHECK(c_end.x() > 0);  // slid off the ramp (x < 0)
  }
}

// ------------------------------------------------------------------------------------------
// Per-step failure flags
// ------------------------------------------------------------------------------------------

TEST_CASE("step: non-finite input returns STATUS_NONFINITE and holds theta", "[pbd]") {
  const Scene sc = load_scene(config("chain_fixed"));
  PbdIntegrator integ(sc.model, sc.settings);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const VecX th = VecX::LinSpaced(sc.model.n_q, 0.1, 0.5);
  VecX out = VecX::Constant(sc.model.n_q, 123.0);
  SECTION("NaN in theta_{n-1}") {
    VecX bad = th;
    bad[3] = nan;
    const StepStats st = integ.step(th, bad, VecX(), out);
    CHECK((st.status & STATUS_NONFINITE) != 0);
    CHECK_FALSE(st.converged());
    CHECK(out == th);
  }
  SECTION("NaN in theta_n") {
    VecX bad = th;
    bad[0] = nan;
    const StepStats st = integ.step(bad, th, VecX(), out);
    CHECK((st.status & STATUS_NONFINITE) != 0);
    CHECK(std::isnan(out[0]));  // held: theta_next = theta_n
    CHECK(out.tail(sc.model.n_q - 1) == th.tail(sc.model.n_q - 1));
  }
  SECTION("inf in tau") {
    VecX tau = VecX::Zero(sc.model.n_q);
    tau[2] = std::numeric_limits<double>::infinity();
    const StepStats st = integ.step(th, th, tau, out);
    CHECK((st.status & STATUS_NONFINITE) != 0);
    CHECK(out == th);
  }
  SECTION("wrong sizes throw InvalidArgument") {
    CHECK_THROWS_AS(integ.step(VecX::Zero(3), th, VecX(), out), InvalidArgument);
    CHECK_THROWS_AS(integ.step(th, th, VecX::Zero(2), out), InvalidArgument);
  }
  SECTION("a finite step afterwards is fine (no poisoned scratch)") {
    VecX bad = th;
    bad[0] = nan;
    integ.step(bad, th, VecX(), out);
    const StepStats st = integ.step(th, th, VecX(), out);
    CHECK(st.converged());
    CHECK(out.allFinite());
  }
}

TEST_CASE("step: a floating base at its Euler singularity is stepped through in a new chart", "[pbd][chart]") {
  // the middle angle at +-pi/2 (once STATUS_GIMBAL_LOCK, held): the step re-anchors the base's
  // rotation chart (core/chart.h) and solves there; the lone path hands back world angles
  const Scene sc = load_scene(config("chain_floating_ground"));
  REQUIRE(sc.model.gimbal_dof == std::vector<int>{4});
  REQUIRE(sc.model.n_chart == 1);
  PbdIntegrator integ(sc.model, sc.settings);
  for (double pitch : {M_PI / 2, -M_PI / 2}) {
    VecX th = sc.theta0;
    th[4] = pitch;
    VecX out(sc.model.n_q);
    const StepStats st = integ.step(th, th, VecX(), out);
    INFO("pitch " << pitch);
    CHECK((st.status & STATUS_GIMBAL_LOCK) == 0);
    CHECK(st.converged());
    CHECK(out.allFinite());
    // it fell (gravity) without turning over: the base's orientation moved by less than a step's worth
    Kinematics k0(sc.model), k1(sc.model);
    forward_kinematics(sc.model, th, k0);
    forward_kinematics(sc.model, out, k1);
    CHECK((k1.R[0] - k0.R[0]).norm() < 0.1);
  }
  // simulate() runs the whole rollout
  const Scene locked = load_scene(config("chain_floating_ground"), {"initial.theta.4=" + num(M_PI / 2)});
  const Rollout r = simulate(locked);
  CHECK_FALSE(r.aborted);
  CHECK(r.steps_run == locked.steps());
  for (const StepStats& st : r.stats) CHECK((st.status & (STATUS_GIMBAL_LOCK | STATUS_NONFINITE)) == 0);
}

// ------------------------------------------------------------------------------------------
// LBFGS optimizer inside the step
// ------------------------------------------------------------------------------------------

TEST_CASE("step: the LBFGS optimizer converges and agrees with JTJ-LM", "[pbd][lbfgs]") {
  // Without contact every optimizer solves the same equations (P1): LBFGS (Eq. 6 on E, Eq. 13 on
  // 1/2|r|^2) must reach the same theta_{n+1} as JTJ-LM. lbfgs_it_max = 300 keeps a regression
  // (e.g. a line search that stalls and runs to it_max) from making this case slow.
  for (const char* type : {"pbd", "pbfd"}) {
    INFO(type);
    const Scene sc = load_scene(config("chain_fixed"), {std::string("integrator.type=") + type,
                                                        "integrator.optimizer=lbfgs", "integrator.lbfgs_it_max=300"});
    const Scene ref = load_scene(config("chain_fixed"), {std::string("integrator.type=") + type});
    PbdIntegrator lb(sc.model, sc.settings), lm(ref.model, ref.settings);
    VecX a = sc.theta0, b = a, c(sc.model.n_q), c_ref(sc.model.n_q);
    for (int n = 0; n < 5; ++n) {
      const StepStats st = lb.step(b, a, VecX(), c);
      INFO("step " << n << " status " << st.status << " iterations " << st.iterations << " residual " << st.residual);
      CHECK(st.converged());
      REQUIRE(lm.step(b, a, VecX(), c_ref).converged());
      CHECK((c - c_ref).lpNorm<Eigen::Infinity>() < tol(1e-6));
      a = b;
      b = c_ref;
    }
  }
}

// ------------------------------------------------------------------------------------------
// Warm-started LM damping (departure from docs/methods/pbfd.md §5.1's fresh 1e-3 max B_ii)
// ------------------------------------------------------------------------------------------

TEST_CASE("warm lambda: free fall takes Newton's few iterations, results agree within tolerance, a reset starts cold",
          "[pbd][lm]") {
  // The floating chain falls for 8 steps at dt 0.05 before landing. B = J_r^T J_r is badly
  // conditioned (whole-body translation vs the last link's rotation), so a cold lambda damps the
  // small directions for ~12 iterations per step; the last step's lambda needs 1-2.
  const std::vector<std::string> base = {"integrator.dt=0.05", "contact.c_par=1e6", "integrator.duration=1.5",
                                         "metrics.stop_at_rest=false"};
  std::vector<std::string> cold_o = base;
  cold_o.push_back("integrator.warm_lambda=false");
  const Scene warm = load_scene(config("chain_floating_ground"), base);
  const Scene cold = load_scene(config("chain_floating_ground"), cold_o);
  REQUIRE(warm.settings.warm_lambda);
  REQUIRE_FALSE(cold.settings.warm_lambda);
  const Rollout rw = simulate(warm), rc = simulate(cold);
  check_all_converged(warm, rw);
  check_all_converged(cold, rc);
  int it_w = 0, it_c = 0;
  for (size_t n = 0; n < rw.stats.size(); ++n) {
    INFO("step " << n);
    it_w += rw.stats[n].iterations;
    it_c += rc.stats[n].iterations;
    if (n < 7) CHECK(rc.stats[n].iterations >= 10);  // free fall, cold
    if (n >= 1 && n < 7) CHECK(rw.stats[n].iterations <= 3);  // free fall, warm after the first
  }
  INFO("LM iterations warm " << it_w << ", cold " << it_c);
  CHECK(rw.stats[0].iterations == rc.stats[0].iterations);  // nothing to warm the first step from
  CHECK(2 * it_w < it_c);
  // both are roots of Eq. 13 to eps_r s = 3e-7 N; through M / dt^2 ~ 1e3 kg/s^2 that is ~1e-9 m per
  // step, accumulated over the landing: the trajectories agree far below the discretisation error
  double dmax = 0;
  for (size_t n = 0; n < rw.theta.size(); ++n) dmax = std::max(dmax, (rw.theta[n] - rc.theta[n]).lpNorm<Eigen::Infinity>());
  INFO("max |theta_warm - theta_cold| " << dmax);
  CHECK(dmax < 1e-6);
  // a new episode (Data::reset_carry) starts cold again: the first step's count
  PbdIntegrator integ(warm.model, warm.settings);
  Data d = integ.make_data();
  d.theta = d.theta_prev = warm.theta0;
  StepControl u;
  u.tau = VecX::Zero(warm.model.n_q);
  const RolloutParams p = integ.default_params();
  const int first = integ.step(d, u, p).iterations;
  CHECK(first == rc.stats[0].iterations);
  CHECK(integ.step(d, u, p).iterations <= 3);
  d.theta = d.theta_prev = warm.theta0;
  d.reset_carry();
  CHECK(integ.step(d, u, p).iterations == first);
}
