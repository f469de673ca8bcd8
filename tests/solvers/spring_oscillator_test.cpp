// Joint springs (Model dof_stiffness / dof_springref; MuJoCo's stiffness / springref) in every
// integrator, against the oscillator they make: a hinge about the vertical z axis carrying a
// 2 kg mass 0.3 m off the axis (I = 0.02 + 2 * 0.3^2 = 0.2 kg m^2 about the hinge), no gravity,
// spring k = 5 N m/rad relaxed at 0.1 rad: theta - ref = A cos(omega t), omega = sqrt(k / I) = 5 rad/s.
//   - every integrator's period, measured from the zero crossings of theta - ref over several
//     cycles, is 2 pi / omega within its own discretisation error at its dt;
//   - NE-LCP and NE-MDP take the spring explicitly at theta_n (MuJoCo's Euler integrator), so a
//     contact-free trajectory is the closed-form semi-implicit Euler recursion
//       v_{n+1} = v_n - dt k / I (theta_n - ref),  theta_{n+1} = theta_n + dt v_{n+1}
//     to round-off (1e-12).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "io/scene.h"
#include "solvers/integrator.h"

using namespace bigstep;

namespace {

const double kI = 0.2, kK = 5.0, kRef = 0.1, kTheta0 = 0.3;

const char* kScene = R"(scene: spring_hinge
model:
  gravity: [0, 0, 0]
  links:
    - {name: arm, joint: hinge, axis: [0, 0, 1], mass: 2, com: [0.3, 0, 0], inertia: [0.01, 0.01, 0.02],
       stiffness: 5, springref: 0.1}
initial:
  theta: [0.3]
)";

// theta_n, n = 0 .. n_steps, of integrator `type` at dt, released from rest at kTheta0.
std::vector<double> run(const std::string& type, double dt, int n_steps) {
  const Scene sc = load_scene_text(kScene, "spring_hinge.yaml",
                                   {"integrator.type=" + type, "integrator.dt=" + std::to_string(dt)});
  REQUIRE(sc.model.has_stiffness);
  const auto integ = make_integrator(sc);
  Data d = integ->make_data();
  d.theta = sc.theta0;
  d.theta_prev = sc.theta0;  // at rest
  const RolloutParams p = integ->default_params();
  StepControl u;
  std::vector<double> th{d.theta[0]};
  for (int n = 0; n < n_steps; ++n) {
    const StepStats st = integ->step(d, u, p);
    INFO(type << " step " << n << " status " << st.status);
    REQUIRE(st.converged());
    th.push_back(d.theta[0]);
  }
  return th;
}

// Period [s] from the zero crossings of theta - ref (linear interpolation between steps): twice
// the mean spacing of consecutive crossings.
double period(const std::vector<double>& th, double dt, int* crossings) {
  std::vector<double> t;
  for (size_t n = 1; n < th.size(); ++n) {
    const double a = th[n - 1] - kRef, b = th[n] - kRef;
    if ((a > 0) != (b > 0)) t.push_back(dt * (double(n - 1) + a / (a - b)));
  }
  *crossings = int(t.size());
  if (t.size() < 2) return -1;
  return 2 * (t.back() - t.front()) / double(t.size() - 1);
}

}  // namespace

TEST_CASE("spring oscillator: every integrator swings at omega = sqrt(k / I)", "[spring][physics]") {
  const double omega = std::sqrt(kK / kI), T = 2 * M_PI / omega;
  struct Method {
    const char* type;
    double dt;
    bool implicit;  // spring and inertia at the step's end (else semi-implicit Euler)
  };
  // Each scheme's own period on this linear oscillator, x = omega dt (0.05 at dt = 0.01):
  //   implicit (PBD / PBFD Eq. 6 / 13, NMDP's backward stencils): theta_{n+1} - ref =
  //     (2 e_n - e_{n-1}) / (1 + x^2) rotates by atan(x) per step: T_d = T x / atan(x), +(x^2)/3;
  //   semi-implicit Euler (NE-LCP / NE-MDP): by 2 asin(x / 2): T_d = T x / (2 asin(x / 2)), -(x^2)/24.
  // Measured against T_d within 2e-5 (zero-crossing interpolation; measured <= 1.6e-6), and
  // against T = 2 pi / omega within the scheme's leading error term plus that.
  const Method methods[] = {{"pbd", 0.01, true},     {"pbfd", 0.01, true},     {"ne_lcp", 0.01, false},
                            {"ne_mdp", 0.01, false}, {"ne_lcp", 0.002, false}, {"nmdp_ne", 0.01, true},
                            {"nmdp_pbd", 0.01, true}};
  for (const Method& me : methods) {
    const int n_steps = int(std::lround(5 * T / me.dt));  // five periods
    const std::vector<double> th = run(me.type, me.dt, n_steps);
    int crossings = 0;
    const double Tm = period(th, me.dt, &crossings);
    const double x = omega * me.dt, Td = me.implicit ? T * x / std::atan(x) : T * x / (2 * std::asin(x / 2));
    const double lead = me.implicit ? x * x / 3 : x * x / 24;
    INFO(me.type << " dt " << me.dt << ": period " << Tm << " s vs " << T << " s (scheme " << Td << " s) over "
                 << crossings << " crossings");
    CHECK(std::abs(Tm / Td - 1) < 2e-5);
    CHECK(std::abs(Tm / T - 1) < 1.1 * lead + 2e-5);
    CHECK(crossings >= 9);
    // the spring pulls towards ref: the swing stays within the release amplitude about ref
    // (implicit steps lose energy; semi-implicit Euler keeps a modified energy whose amplitude
    // exceeds the release amplitude by ~(omega dt)^2 / 8: measured 3.1e-4 at omega dt = 0.05)
    double amax = 0;
    for (double q : th) amax = std::max(amax, std::abs(q - kRef));
    CHECK(amax <= (kTheta0 - kRef) * (1 + 0.25 * (omega * me.dt) * (omega * me.dt)));
  }
}

TEST_CASE("spring oscillator: NE-LCP and NE-MDP equal the semi-implicit Euler recursion", "[spring][ne]") {
  // the spring explicit at theta_n, exactly MuJoCo's Euler step without damping
  const double dt = 0.01;
  const int n_steps = 400;
  std::vector<double> x{kTheta0};
  double v = 0;
  for (int n = 0; n < n_steps; ++n) {
    v -= dt * kK / kI * (x.back() - kRef);
    x.push_back(x.back() + dt * v);
  }
  for (const char* type : {"ne_lcp", "ne_mdp"}) {
    const std::vector<double> th = run(type, dt, n_steps);
    double err = 0;
    for (int n = 0; n <= n_steps; ++n) err = std::max(err, std::abs(th[size_t(n)] - x[size_t(n)]));
    INFO(type << ": max |theta - recursion| " << err);
    CHECK(err < 1e-12);
  }
}

TEST_CASE("spring oscillator: PBD and PBFD take the spring at theta_{n+1} (the implicit recursion)", "[spring][pbd]") {
  // a 2 kg slider (no rotation: Eq. 6's inertia is exactly m (x - x~)^2 / (2 dt^2), x~ = 2 x_n -
  // x_{n-1}) on a spring k = 50 N/m relaxed at 0.1 m: dE/dx = 0 at the step's end gives
  //   m (x_{n+1} - 2 x_n + x_{n-1}) / dt^2 + k (x_{n+1} - ref) = 0
  //   x_{n+1} = (m (2 x_n - x_{n-1}) / dt^2 + k ref) / (m / dt^2 + k)
  const char* slider = R"(scene: spring_slider
model:
  gravity: [0, 0, 0]
  links:
    - {name: s, joint: prismatic, axis: [1, 0, 0], mass: 2, inertia: [0.01, 0.01, 0.01], stiffness: 50, springref: 0.1}
initial:
  theta: [0.3]
)";
  const double mass = 2, k = 50, ref = 0.1, dt = 0.01;
  for (const char* type : {"pbd", "pbfd"}) {
    const Scene sc = load_scene_text(slider, "spring_slider.yaml", {std::string("integrator.type=") + type,
                                                                    "integrator.dt=0.01", "integrator.eps_r=1e-10"});
    const auto integ = make_integrator(sc);
    Data d = integ->make_data();
    d.theta = sc.theta0;
    d.theta_prev = sc.theta0;
    const RolloutParams p = integ->default_params();
    StepControl u;
    double x = 0.3, x_prev = 0.3, err = 0;
    for (int n = 0; n < 200; ++n) {
      REQUIRE(integ->step(d, u, p).converged());
      const double x_next = (mass * (2 * x - x_prev) / (dt * dt) + k * ref) / (mass / (dt * dt) + k);
      x_prev = x;
      x = x_next;
      err = std::max(err, std::abs(d.theta[0] - x));
    }
    INFO(type << ": max |x - recursion| " << err);
    CHECK(err < 1e-9);
  }
}

TEST_CASE("spring oscillator: stiffness 0 leaves every integrator bit-identical", "[spring]") {
  // springref without stiffness adds nothing (the terms run only where k != 0): the fixed chain's
  // trajectory with springref set on every hinge equals the plain one bit for bit
  const std::string chain = std::string(BIGSTEP_SOURCE_DIR) + "/configs/chain_fixed.yaml";
  for (const char* type : {"pbd", "pbfd", "ne_lcp", "ne_mdp", "nmdp_ne", "nmdp_pbd"}) {
    std::vector<VecX> runs[2];
    for (int with_ref = 0; with_ref < 2; ++with_ref) {
      std::vector<std::string> ov{std::string("integrator.type=") + type, "integrator.dt=0.01"};
      if (with_ref)
        for (int j = 0; j < 4; ++j) ov.push_back("model.links[" + std::to_string(j) + "].springref=0.3");
      const Scene sc = load_scene(chain, ov);
      REQUIRE_FALSE(sc.model.has_stiffness);
      const auto integ = make_integrator(sc);
      Data d = integ->make_data();
      d.theta = sc.theta0;
      d.theta_prev = sc.theta0 - sc.settings.dt * sc.theta_dot0;
      const RolloutParams p = integ->default_params();
      StepControl u{sc.tau, nullptr, 0.0};
      for (int n = 0; n < 20; ++n) {
        integ->step(d, u, p);
        runs[with_ref].push_back(d.theta);
      }
    }
    INFO(type);
    CHECK(runs[0] == runs[1]);
  }
}
