// Stable PD servo in every CPU integrator (docs/methods/newton_euler.md §3-§4, docs/methods/pbfd.md §4.1, §4.6):
//  - derivatives vs central differences: PD torque Jacobian, the Eq. 6 PD potential (gradient,
//    exact Hessian, Gauss-Newton matrix), the Eq. 13 residual and J_r with the servo (ND4);
//  - Tan's form of the NE baselines against a hand-computed 1-DOF step;
//  - a hinge pendulum with gravity settles at the gravity-offset equilibrium
//    K_p (theta* - theta_bar) = tau_gravity(theta*) under PBD, PBFD, NE-MDP and NE-LCP;
//  - stiff gains (K_p = 1e6) at dt = 0.05: the backward-Euler forms stay bounded and settle,
//    explicit PD explodes, and Tan's form needs K_d >~ dt K_p (documented below).
#include <catch2/catch.hpp>

#include <cmath>

#include "solvers/ne/ne_lcp.h"
#include "solvers/ne/ne_mdp.h"
#include "solvers/pbd/pbd_objective.h"
#include "solvers/pbd/pbd_step.h"
#include "solvers/pbd/pbd_residual.h"
#include "tests/support/random_models.h"

using namespace bigstep;
using namespace bigstep::test;

namespace {

// Gains zero on the root's (floating-base) DOFs, random elsewhere; a smooth time-dependent
// reference so that wrong target times show up.
PdServo random_servo(const Model& m, Rng& rng, double kp_max, double kd_max) {
  PdServo pd;
  pd.kp = uniform_vecx(rng, m.n_q, 0.1 * kp_max, kp_max);
  pd.kd = uniform_vecx(rng, m.n_q, 0.1 * kd_max, kd_max);
  for (int k = 0; k < m.link_dof_num[0]; ++k) pd.kp[k] = pd.kd[k] = 0;
  const VecX a = uniform_vecx(rng, m.n_q, -1, 1), w = uniform_vecx(rng, m.n_q, 1, 5);
  pd.reference = [a, w](double t, VecX& th, VecX& thd) {
    th = (a.array() * (w.array() * t).sin()).matrix();
    thd = (a.array() * w.array() * (w.array() * t).cos()).matrix();
  };
  return pd;
}

// 1-DOF pendulum: a 1 kg, 1 m rod hanging along -z from a hinge about +y, no contacts.
// theta = 0 hangs down; V = -m g c cos(theta), tau_gravity = -m g c sin(theta), c = 0.5 m.
constexpr double kRodMass = 1, kRodCom = 0.5, kG = 9.81;
Model pendulum() {
  ModelSpec spec;
  LinkSpec l;
  l.name = "rod";
  l.joint = JointType::Hinge;
  l.axis = Vec3::UnitY();
  l.mass = kRodMass;
  l.com = Vec3(0, 0, -kRodCom);
  l.inertia = Vec3(kRodMass / 12, kRodMass / 12, 1e-4).asDiagonal();
  spec.links.push_back(l);
  return Model::finalize(spec);
}
double rod_inertia() { return kRodMass / 12 + kRodMass * kRodCom * kRodCom; }  // about the hinge
double tau_gravity(double th) { return -kRodMass * kG * kRodCom * std::sin(th); }

// theta* with K_p (theta* - theta_bar) = tau_gravity(theta*), by bisection (the left side minus
// the right side is increasing for K_p > m g c).
double equilibrium(double kp, double th_bar) {
  double lo = th_bar - M_PI / 2, hi = th_bar + M_PI / 2;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (kp * (mid - th_bar) - tau_gravity(mid) > 0 ? hi : lo) = mid;
  }
  return 0.5 * (lo + hi);
}

PdServo hold_servo(double kp, double kd, double th_bar) {
  PdServo pd;
  pd.kp = VecX::Constant(1, kp);
  pd.kd = VecX::Constant(1, kd);
  pd.reference = [th_bar](double, VecX& th, VecX& thd) {
    th = VecX::Constant(1, th_bar);
    thd = VecX::Zero(1);
  };
  return pd;
}

std::unique_ptr<Integrator> make(const Model& m, const std::string& kind, double dt) {
  if (kind == "ne_mdp" || kind == "ne_lcp") {
    NeSettings s;
    s.dt = dt;
    if (kind == "ne_mdp") return std::make_unique<NeMdpIntegrator>(m, s);
    return std::make_unique<NeLcpIntegrator>(m, s);
  }
  PbdSettings s;
  s.dt = dt;
  s.formulation = kind == "pbd" ? Formulation::Pbd : Formulation::Pbfd;
  s.optimizer = Optimizer::JtjLm;
  return std::make_unique<PbdIntegrator>(m, s);
}

struct Run {
  VecX th_n, th_nm1;
  double max_abs = 0;
  bool ok = true;  // every step converged and finite
};

// Steps from rest at theta0 for `steps` steps with the servo.
Run run(Integrator& integ, const PdServo& pd, double dt, double theta0, int steps) {
  Run r;
  r.th_n = r.th_nm1 = VecX::Constant(1, theta0);
  VecX next;
  for (int n = 0; n < steps; ++n) {
    const StepStats st = integ.step_controlled(r.th_n, r.th_nm1, StepControl{VecX(), &pd, n * dt}, next);
    r.ok = r.ok && st.converged() && next.allFinite();
    r.th_nm1 = r.th_n;
    r.th_n = next;
    r.max_abs = std::max(r.max_abs, std::abs(next[0]));
  }
  return r;
}

}  // namespace

TEST_CASE("stable_pd: torque Jacobian diag vs central differences", "[pd][fd]") {
  Rng rng(3);
  const Model m = random_model(11).model;
  const PdServo pd = random_servo(m, rng, 500, 30);
  const double h = 0.02;
  const VecX th_m = random_theta(m, rng), th = th_m + uniform_vecx(rng, m.n_q, -0.1, 0.1);
  VecX tb, tdb;
  pd.reference(0.37, tb, tdb);
  const auto tau = [&](const VecX& x) { return stable_pd_torque(pd, x, th_m, h, tb, tdb); };
  const MatX J_fd = fd_jacobian(tau, th);
  const MatX J = stable_pd_torque_jacobian_diag(pd, h).asDiagonal();
  // tau is affine in theta: the central difference is exact up to round-off eps |tau| / h_fd
  CHECK(rel_err(J, J_fd) < fd_tol());
  // and the gradient of the PD potential is -tau (docs/methods/newton_euler.md §4)
  CHECK(rel_err(-tau(th), pd.kp.cwiseProduct(th - tb) + pd.kd.cwiseProduct((th - th_m) / h - tdb)) < tol(1e-15));
}

TEST_CASE("stable_pd: Eq. 6 PD potential, gradient and Hessians vs central differences", "[pd][pbd][fd]") {
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    RandomModelOptions opt;
    opt.root = JointType::Floating;
    const Model m = random_model(seed, opt).model;
    Rng rng(seed + 100);
    const VecX th = random_theta(m, rng);
    const VecX th_n = th - uniform_vecx(rng, m.n_q, -0.05, 0.05);
    const VecX th_nm1 = th_n - uniform_vecx(rng, m.n_q, -0.05, 0.05);
    const double dt = 0.01;
    PbdWorkspace ws(m);
    ContactParams cp;
    // gains so that diag(K_p + K_d/dt) (~1e3..1e4) is comparable with H/dt^2 (~1e2..1e4)
    const PdServo pd = random_servo(m, rng, 2e3, 50);
    PbdStepInput in0 = make_step_input(m, th_n, th_nm1, dt, uniform_vecx(rng, m.n_q, -2, 2), cp, ws);
    PbdStepInput in = in0;
    set_step_pd(m, pd, th_n, 0.5 + dt, in);
    INFO("seed " << seed);
    REQUIRE(in.has_pd());
    VecX tb, tdb;
    pd.reference(0.5 + dt, tb, tdb);
    CHECK(in.theta_bar == tb);  // targets at the END of the step

    // U alone: gradient = -tau_pd, exact Hessian diag(K_p + K_d/dt)
    const VecX g_fd = fd_gradient([&](const VecX& x) { return pd_potential(in, x); }, th);
    VecX g = VecX::Zero(m.n_q);
    MatX Hd = MatX::Zero(m.n_q, m.n_q);
    add_pd_terms(in, th, g, &Hd);
    CHECK(rel_err(g, g_fd) < fd_tol());
    CHECK(rel_err(g, -stable_pd_torque(pd, th, th_n, dt, tb, tdb)) < tol(1e-14));
    const MatX Hd_fd = fd_jacobian([&](const VecX& x) {
      VecX gg = VecX::Zero(m.n_q);
      add_pd_terms(in, x, gg, nullptr);
      return gg;
    }, th);
    CHECK(rel_err(Hd, Hd_fd) < fd_tol());
    CHECK(rel_err(Hd, MatX(VecX(-stable_pd_torque_jacobian_diag(pd, dt)).asDiagonal())) < tol(1e-15));

    // the whole Eq. 6 objective with the servo: value, gradient, exact Hessian vs FD
    double E, E0;
    VecX gE, gE0;
    MatX B, B0, BG, BG0;
    pbd_energy_derivatives(m, in, th, ws, E, gE, &B, HessianKind::Exact);
    pbd_energy_derivatives(m, in0, th, ws, E0, gE0, &B0, HessianKind::Exact);
    CHECK(E - E0 == Approx(pd_potential(in, th)).epsilon(1e-12));
    const VecX gE_fd = fd_gradient([&](const VecX& x) { return pbd_energy(m, in, x, ws); }, th);
    CHECK(rel_err(gE, gE_fd) < fd_tol());
    const MatX B_fd = fd_jacobian([&](const VecX& x) {
      double e;
      VecX gg;
      pbd_energy_derivatives(m, in, x, ws, e, gg, nullptr, HessianKind::None);
      return gg;
    }, th);
    CHECK(rel_err(B, B_fd) < fd_tol());
    CHECK(rel_err(B - B0, Hd) < tol(1e-12));
    // Gauss-Newton matrix takes the same exact PD block
    pbd_energy_derivatives(m, in, th, ws, E, gE, &BG, HessianKind::GaussNewton);
    pbd_energy_derivatives(m, in0, th, ws, E0, gE0, &BG0, HessianKind::GaussNewton);
    CHECK(rel_err(BG - BG0, Hd) < tol(1e-12));
  }
}

TEST_CASE("stable_pd: Eq. 13 residual and J_r with the servo vs central differences", "[pd][pbfd][fd]") {
  for (uint32_t seed = 4; seed <= 6; ++seed) {
    RandomModelOptions opt;
    opt.root = JointType::Floating;
    opt.n_spheres = 6;
    opt.n_planes = 1;
    const Model m = random_model(seed, opt).model;
    Rng rng(seed + 200);
    const VecX th = random_theta(m, rng);
    const VecX th_n = th - uniform_vecx(rng, m.n_q, -0.05, 0.05);
    const VecX th_nm1 = th_n - uniform_vecx(rng, m.n_q, -0.05, 0.05);
    const double dt = 0.02;
    PbdWorkspace ws(m);
    ContactParams cp;
    cp.c_perp = 1e4;
    cp.c_par = 1e5;
    const PdServo pd = random_servo(m, rng, 1e3, 40);
    const PbdStepInput in0 = make_step_input(m, th_n, th_nm1, dt, VecX(), cp, ws);
    PbdStepInput in = in0;
    set_step_pd(m, pd, th_n, 1.0, in);
    INFO("seed " << seed);
    VecX r, r0;
    MatX Jr, Jr0;
    pbfd_residual(m, in, th, ws, r, &Jr);
    pbfd_residual(m, in0, th, ws, r0, &Jr0);
    // tau_pd enters exactly like tau: r = r0 - tau_pd, J_r = J_r0 + diag(K_p + K_d/dt)
    VecX tb, tdb;
    pd.reference(1.0, tb, tdb);
    const VecX tau_pd = stable_pd_torque(pd, th, th_n, dt, tb, tdb);
    const double scale = std::max(r.cwiseAbs().maxCoeff(), tau_pd.cwiseAbs().maxCoeff());
    CHECK((r - (r0 - tau_pd)).cwiseAbs().maxCoeff() <= tol(1e-12) * scale);
    CHECK(rel_err(Jr - Jr0, MatX(VecX(-stable_pd_torque_jacobian_diag(pd, dt)).asDiagonal())) < tol(1e-12));
    const MatX Jr_fd = fd_jacobian([&](const VecX& x) {
      VecX rr;
      pbfd_residual(m, in, x, ws, rr, nullptr);
      return rr;
    }, th);
    CHECK(rel_err(Jr, Jr_fd) < fd_tol());
  }
}

TEST_CASE("stable_pd: NE baselines take one step of Tan's form", "[pd][ne]") {
  // 1 DOF, no contact: M~ = I + h K_d, b = tau_g - K_p (th + h v - th_bar) - K_d (v - thd_bar),
  // v+ = v + h b / M~, th+ = th + h v+; the targets are read at t + h
  const Model m = pendulum();
  const double h = 0.004, kp = 300, kd = 7, th = 0.3, v = -1.2, t = 0.25;
  PdServo pd;
  pd.kp = VecX::Constant(1, kp);
  pd.kd = VecX::Constant(1, kd);
  pd.reference = [](double tt, VecX& a, VecX& b) {
    a = VecX::Constant(1, std::sin(tt));
    b = VecX::Constant(1, std::cos(tt));
  };
  const double tb = std::sin(t + h), tdb = std::cos(t + h);
  const double b = tau_gravity(th) - kp * (th + h * v - tb) - kd * (v - tdb);
  const double v_plus = v + h * b / (rod_inertia() + h * kd);
  for (const char* kind : {"ne_mdp", "ne_lcp"}) {
    INFO(kind);
    auto integ = make(m, kind, h);
    VecX next;
    const StepStats st = integ->step_controlled(VecX::Constant(1, th), VecX::Constant(1, th - h * v),
                                                StepControl{VecX(), &pd, t}, next);
    CHECK(st.converged());
    CHECK(next[0] == Approx(th + h * v_plus).epsilon(1e-12));
    // zero gains: the plain step (ND8)
    PdServo zero = pd;
    zero.kp.setZero();
    zero.kd.setZero();
    VecX a, c;
    integ->step_controlled(VecX::Constant(1, th), VecX::Constant(1, th - h * v), StepControl{VecX(), &zero, t}, a);
    integ->step(VecX::Constant(1, th), VecX::Constant(1, th - h * v), VecX(), c);
    CHECK(a[0] == Approx(c[0]).epsilon(1e-14));
  }
}

TEST_CASE("stable_pd: pendulum settles at the gravity-offset equilibrium", "[pd][physics]") {
  // K_p = 50 N m/rad against m g c = 4.9 N m: theta* = 0.4569 for theta_bar = 0.5. Natural
  // frequency sqrt((K_p + m g c)/I) ~ 13 rad/s, damping ratio K_d / (2 sqrt(K I)) ~ 0.6 with
  // K_d = 5: settled to < 1e-6 rad well within 4 s.
  const Model m = pendulum();
  const double kp = 50, kd = 5, th_bar = 0.5;
  const double th_star = equilibrium(kp, th_bar);
  REQUIRE(std::abs(kp * (th_star - th_bar) - tau_gravity(th_star)) < 1e-12);
  const PdServo pd = hold_servo(kp, kd, th_bar);
  struct Case { const char* kind; double dt; };
  for (const Case c : {Case{"pbd", 0.01}, Case{"pbd", 0.05}, Case{"pbfd", 0.01}, Case{"pbfd", 0.05},
                       Case{"ne_mdp", 0.002}, Case{"ne_mdp", 0.005}, Case{"ne_lcp", 0.005}}) {
    INFO(c.kind << " dt " << c.dt);
    auto integ = make(m, c.kind, c.dt);
    const Run r = run(*integ, pd, c.dt, 0.0, int(std::lround(4.0 / c.dt)));
    CHECK(r.ok);
    // the fixed point of both discretizations is exactly K_p (theta - theta_bar) = tau_g(theta);
    // the remaining error is the decay of the transient and the solver tolerance eps_r W
    CHECK(r.th_n[0] == Approx(th_star).margin(1e-6));
    CHECK(std::abs(r.th_n[0] - r.th_nm1[0]) / c.dt < 1e-5);
    // and not at theta_bar: gravity visibly offsets it
    CHECK(std::abs(th_star - th_bar) > 0.04);
  }
}

TEST_CASE("stable_pd: K_p = 1e6 at dt = 0.05 is stable in the backward forms, explicit PD explodes",
          "[pd][physics][stiff]") {
  const Model m = pendulum();
  const double dt = 0.05, kp = 1e6, th_bar = 0.5;
  const double th_star = equilibrium(kp, th_bar);
  const int steps = 40;  // 2 s
  // backward Euler (PBD / PBFD): unconditionally stable for any K_p, K_d >= 0
  for (const char* kind : {"pbd", "pbfd"}) {
    INFO(kind);
    auto integ = make(m, kind, dt);
    const Run r = run(*integ, hold_servo(kp, 10, th_bar), dt, 0.0, steps);
    CHECK(r.ok);
    CHECK(r.max_abs < 0.51);  // no overshoot beyond theta_bar: backward Euler damps numerically
    CHECK(r.th_n[0] == Approx(th_star).margin(1e-6));
  }
  // Tan's form (NE-MDP): the 1-DOF step matrix has determinant (I - h^2 K_p) / (I + h K_d), so it
  // is stable when h K_d >~ h^2 K_p, i.e. K_d >~ h K_p = 5e4 here; with K_d = 1e5 it settles
  {
    auto integ = make(m, "ne_mdp", dt);
    const Run r = run(*integ, hold_servo(kp, 1e5, th_bar), dt, 0.0, steps);
    CHECK(r.ok);
    CHECK(r.max_abs < 0.6);
    CHECK(r.th_n[0] == Approx(th_star).margin(1e-4));
  }
  // ... and with K_d = 10 it diverges (documents the K_d >~ h K_p condition)
  {
    auto integ = make(m, "ne_mdp", dt);
    const Run r = run(*integ, hold_servo(kp, 10, th_bar), dt, 0.0, 10);
    CHECK((!r.ok || r.max_abs > 1e3));
  }
  // explicit PD: tau = -K_p (theta_n - theta_bar) - K_d v_n held constant over the step
  {
    auto integ = make(m, "ne_mdp", dt);
    VecX th_n = VecX::Zero(1), th_nm1 = th_n, next;
    double max_abs = 0;
    for (int n = 0; n < 10; ++n) {
      const VecX tau = VecX::Constant(1, -kp * (th_n[0] - th_bar) - 10 * (th_n[0] - th_nm1[0]) / dt);
      integ->step(th_n, th_nm1, tau, next);
      th_nm1 = th_n;
      th_n = next;
      max_abs = std::max(max_abs, std::isfinite(next[0]) ? std::abs(next[0]) : 1e300);
    }
    CHECK(max_abs > 1e6);
  }
}

TEST_CASE("stable_pd: gains of the wrong size and a missing reference are named", "[pd]") {
  const Model m = pendulum();
  PdServo pd = hold_servo(10, 1, 0);
  pd.kp = VecX::Constant(2, 10);
  VecX next;
  for (const char* kind : {"pbd", "ne_mdp"}) {
    auto integ = make(m, kind, 0.01);
    CHECK_THROWS_WITH(integ->step_controlled(VecX::Zero(1), VecX::Zero(1), StepControl{VecX(), &pd, 0}, next),
                      Catch::Contains("control.pd") && Catch::Contains("n_q = 1"));
  }
  PdServo noref;
  noref.kp = noref.kd = VecX::Constant(1, 1);
  auto integ = make(m, "pbfd", 0.01);
  CHECK_THROWS_WITH(integ->step_controlled(VecX::Zero(1), VecX::Zero(1), StepControl{VecX(), &noref, 0}, next),
                    Catch::Contains("reference"));
}
