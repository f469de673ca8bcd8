// PBD (Eq. 6) and PBFD (Eq. 13) on the contact set: derivatives by central
// differences on contacts between two moving links (sphere-sphere), a sphere, a capsule and a box
// on planes, joint limits, damping and armature; and the physics those terms must produce
// (docs/methods/pbfd.md §4.2-§4.6, §9 D2, D7; the agreed joint-term formulas in solvers/terms/joint_terms.h).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "solvers/pbd/pbd_objective.h"
#include "solvers/pbd/pbd_step.h"
#include "solvers/pbd/pbd_residual.h"
#include "tests/support/geom_scenes.h"
#include "tests/support/pbd_eval.h"

using namespace bigstep;
using namespace bigstep::test;

namespace {

constexpr double kDt = 0.01;
// FD step: contact depths are 4 mm .. 3 cm and slips ~1 cm, a DOF step h moves a point by < 2h,
// so h = 1e-6 keeps truncation ~ (2e-6 / 4e-3)^2 ~ 2.5e-7 on the contact part and round-off
// ~ eps |E| / h far below the 1e-6 bound (the same choice as pbd_objective_test.cpp).
constexpr double kH = 1e-6;

struct Case {
  Model m;
  VecX th, th_n, th_nm1, tau;
};

ContactParams params(double c_par) {
  ContactParams cp;
  cp.c_perp = 1e6;
  cp.c_par = c_par;
  return cp;
}

// A world plane geom through point p with unit normal n (local +z).
GeomSpec plane_geom(const Vec3& p, const Vec3& n) {
  GeomSpec g;
  g.type = GeomType::Plane;
  g.link = -1;
  g.pos = p;
  g.R = z_to(n);
  return g;
}

// theta_n, theta_{n-1} a little before th so the slip is non-zero; torques random
void finish(Case& c, Rng& rng) {
  c.th_n = c.th - uniform_vecx(rng, c.m.n_q, -0.02, 0.02);
  c.th_nm1 = c.th_n - uniform_vecx(rng, c.m.n_q, -0.02, 0.02);
  c.tau = uniform_vecx(rng, c.m.n_q, -2, 2);
}

// Every contact within 1 cm of touching is well inside (depth > 2 mm) or outside: no kink of
// d^(alpha+1) within the FD stencil. Returns the number in penetration.
int check_contacts_clear(const Model& m, const VecX& th) {
  Kinematics kin(m);
  forward_kinematics(m, th, kin);
  ContactSet cs(m);
  cs.update(m, kin, th, 0.01);
  int active = 0;
  for (int i = 0; i < cs.n_con; ++i) {
    INFO("contact " << i << " geoms " << cs.con[i].geom_a << "/" << cs.con[i].geom_b << " depth " << cs.con[i].depth);
    REQUIRE(std::abs(cs.con[i].depth) > 2e-3);
    active += cs.con[i].depth > 0;
  }
  return active;
}

// two_arm_spec (geom_scenes.h) at a random configuration th, with its kinematics there
struct TwoArm {
  Rng rng;
  ModelSpec spec;
  Model bare;
  Kinematics kin;
  Case c;
  explicit TwoArm(uint32_t seed) : rng(seed), spec(two_arm_spec(rng)), bare(Model::finalize(spec)), kin(bare) {
    c.th = random_theta(bare, rng);
    forward_kinematics(bare, c.th, kin);
  }
  // the model with these geoms, theta_n, theta_{n-1} and torques
  Case with(std::vector<GeomSpec> geoms) {
    spec.geoms = std::move(geoms);
    c.m = Model::finalize(spec);
    finish(c, rng);
    return c;
  }
};

// (a) sphere on the tip (link 3) against a sphere on the arm (link 1), both moving, overlapping
// by 10 % of their radii, and a sphere on link 2 sinking 5 mm into an oblique world plane.
Case sphere_sphere_case(uint32_t seed) {
  TwoArm t(seed);
  Rng& rng = t.rng;
  const Kinematics& kin = t.kin;
  GeomSpec ga, gb, g2;
  ga.type = gb.type = g2.type = GeomType::Sphere;
  ga.link = 3;
  gb.link = 1;
  g2.link = 2;
  ga.size[0] = uniform(rng, 0.05, 0.15);
  gb.size[0] = uniform(rng, 0.05, 0.15);
  g2.size[0] = uniform(rng, 0.05, 0.15);
  ga.pos = uniform_vec(rng, -0.2, 0.2);
  const Vec3 ca = point_position(kin, 3, ga.pos);
  const Vec3 cb = ca + 0.9 * (ga.size[0] + gb.size[0]) * random_unit(rng);
  gb.pos = kin.R[1].transpose() * (cb - kin.t[1]);
  g2.pos = uniform_vec(rng, -0.2, 0.2);
  const Vec3 c2 = point_position(kin, 2, g2.pos);
  const Vec3 n = random_oblique_unit(rng);
  const GeomSpec pl = plane_geom(c2 - (g2.size[0] - 0.005) * n, n);
  return t.with({gb, ga, g2, pl});
}

// (b) a capsule (link 1) and a box (link 3) on one oblique world plane: the capsule's lower end
// 4 mm deep, the box's lowest corner 6 mm deep (contype bits keep capsule and box apart: no pair
// function for capsule-box).
Case capsule_box_case(uint32_t seed) {
  TwoArm t(seed);
  Rng& rng = t.rng;
  const Kinematics& kin = t.kin;
  const Vec3 n = random_oblique_unit(rng);
  GeomSpec cap = random_geom(rng, GeomType::Capsule, 1), box = random_geom(rng, GeomType::Box, 3);
  cap.contype = 1, cap.conaffinity = 2;
  box.contype = 1, box.conaffinity = 4;
  cap.pos = uniform_vec(rng, -0.2, 0.2);
  box.pos = uniform_vec(rng, -0.2, 0.2);
  // lowest capsule surface point along n
  const Vec3 p = point_position(kin, 1, cap.pos);
  const Vec3 axis = kin.R[1] * cap.R.col(2) * cap.size[1];
  const double h_cap = std::min(n.dot(p + axis), n.dot(p - axis)) - cap.size[0];
  // plane 4 mm above it; the box moved along n so its lowest corner is 6 mm below the plane
  const double h = h_cap + 0.004;
  double h_box = INFINITY;
  const Vec3 pb = point_position(kin, 3, box.pos);
  const Mat3 Rb = kin.R[3] * box.R;
  for (int i = 0; i < 8; ++i) {
    const Vec3 s((i & 1) ? 1.0 : -1.0, (i & 2) ? 1.0 : -1.0, (i & 4) ? 1.0 : -1.0);
    h_box = std::min(h_box, n.dot(pb + Rb * s.cwiseProduct(box.size)));
  }
  box.pos += kin.R[3].transpose() * ((h - 0.006 - h_box) * n);
  return t.with({cap, box, plane_geom(h * n, n)});
}

// (c) a random floating-base model whose hinge / prismatic DOFs are limited around theta: past
// the lower stop, past the upper stop, or inside, in turn, with damping and armature on every
// joint, a spring on every hinge / prismatic joint (and one stop with its own limit_stiffness).
Case limit_case(uint32_t seed) {
  RandomModelOptions opt;
  opt.root = JointType::Floating;
  RandomModel rm = random_model(seed, opt);
  Rng rng(seed * 31u + 7u);
  Case c;
  c.th = random_theta(rm.model, rng);
  int turn = 0;
  for (size_t j = 0; j < rm.spec.links.size(); ++j) {
    LinkSpec& l = rm.spec.links[j];
    l.damping = uniform(rng, 0.1, 2);
    l.armature = uniform(rng, 0.01, 0.1);
    if (l.joint != JointType::Hinge && l.joint != JointType::Prismatic) continue;
    const double x = c.th[rm.model.link_dof_adr[j]], d = uniform(rng, 0.005, 0.03);
    l.limited = true;
    switch (turn++ % 3) {
      case 0: l.range[0] = x + d, l.range[1] = x + 1; break;   // past lo by d
      case 1: l.range[0] = x - 1, l.range[1] = x - d; break;   // past hi by d
      default: l.range[0] = x - 0.5, l.range[1] = x + 0.5;     // inside
    }
    if (turn == 2) l.limit_stiffness = 3e5;
    // a spring relaxed near theta (no draw from rng: the stops above stay as they were)
    l.stiffness = 0.5 + double(j);
    l.springref = x + 0.1 * double(int(j % 3) - 1);
  }
  REQUIRE(turn >= 2);
  c.m = Model::finalize(rm.spec);
  REQUIRE(c.m.has_damping_armature);
  REQUIRE(c.m.has_stiffness);
  finish(c, rng);
  return c;
}

// grad E, exact Hessian, J_r by central differences; GN matrix PSD; D7: grad E - r = -C_par sum J^T f*
void check_derivatives(const Case& c, double c_par) {
  const Model& m = c.m;
  PbdWorkspace ws(m);
  const ContactParams cp = params(c_par);
  const PbdStepInput in = make_step_input(m, c.th_n, c.th_nm1, kDt, c.tau, cp, ws);
  double E;
  VecX g;
  MatX B;
  pbd_energy_derivatives(m, in, c.th, ws, E, g, &B, HessianKind::Exact);
  CHECK(E == Approx(pbd_energy(m, in, c.th, ws)).epsilon(1e-15));

  const VecX g_fd = fd_gradient([&](const VecX& x) { return pbd_energy(m, in, x, ws); }, c.th, kH);
  const double eg = rel_err(g, g_fd);
  INFO("gradient rel err " << eg);
  CHECK(eg < fd_tol());
  const MatX B_fd = fd_jacobian([&](const VecX& x) { return energy_grad(m, in, x, ws); }, c.th, kH);
  const double eh = rel_err(B, B_fd);
  INFO("exact Hessian rel err " << eh);
  CHECK(eh < fd_tol());
  CHECK((B - B.transpose()).cwiseAbs().maxCoeff() <= tol(1e-12) * B.cwiseAbs().maxCoeff());

  MatX G;
  pbd_energy_derivatives(m, in, c.th, ws, E, g, &G, HessianKind::GaussNewton);
  Eigen::SelfAdjointEigenSolver<MatX> es(0.5 * (G + G.transpose()));
  CHECK(es.eigenvalues().minCoeff() >= -1e-9 * G.cwiseAbs().maxCoeff());

  // subtree moments == the per-link sums (two-link contacts, turning normals, limits: all kinds)
  VecX g_ref;
  MatX B_ref, G_ref;
  pbd_derivatives_per_link(m, in, c.th, ws, g_ref, B_ref, HessianKind::Exact);
  CHECK(rel_err(g, g_ref) < 1e-12);
  CHECK(rel_err(B, B_ref) < 1e-12);
  pbd_derivatives_per_link(m, in, c.th, ws, g_ref, G_ref, HessianKind::GaussNewton);
  CHECK(rel_err(G, G_ref) < 1e-12);

  VecX r;
  MatX Jr;
  pbfd_residual(m, in, c.th, ws, r, &Jr);
  const MatX Jr_fd = fd_jacobian([&](const VecX& x) { return residual(m, in, x, ws); }, c.th, kH);
  const double ej = rel_err(Jr, Jr_fd);
  INFO("J_r rel err " << ej);
  CHECK(ej < fd_tol());

  // D7 on every contact: Eq. 6's gradient minus Eq. 13's residual is the dropped normal push f*
  VecX star = VecX::Zero(m.n_q);
  forward_kinematics(m, c.th, ws.kin);
  update_contacts(m, c.th, ws);
  for_each_active_contact(m, ws, [&](const Contact& k, const Vec3& u) {
    star += ws.J.transpose() * spurious_normal_force(u, k.depth, k.n, cp);
  });
  const double scale = std::max(g.cwiseAbs().maxCoeff(), r.cwiseAbs().maxCoeff());
  CHECK(((g - r) + cp.c_par * star).cwiseAbs().maxCoeff() <= tol(1e-9) * scale);
}

// Derivatives with and without friction on seeds 1..4 of a geom scene with >= 2 active contacts.
void check_geom_scenes(Case (*make)(uint32_t)) {
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    INFO("seed " << seed);
    const Case c = make(seed);
    CHECK(check_contacts_clear(c.m, c.th) >= 2);
    for (double c_par : {0.0, 1e9}) {
      INFO("c_par " << c_par);
      check_derivatives(c, c_par);
    }
  }
}

}  // namespace

TEST_CASE("pbd contact set: two moving links in sphere-sphere contact and a sphere on a plane, with friction",
          "[objectives][contact_set][fd]") {
  // the sphere-sphere contact moves both links and its normal turns (kappa != 0)
  check_geom_scenes(sphere_sphere_case);
}

TEST_CASE("pbd contact set: a capsule and a box on a plane", "[objectives][contact_set][fd]") {
  check_geom_scenes(capsule_box_case);
}

TEST_CASE("pbd contact set: joint limits past their stops, damping, armature and springs",
          "[objectives][contact_set][fd]") {
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    INFO("seed " << seed);
    const Case c = limit_case(seed);
    PbdWorkspace ws(c.m);
    forward_kinematics(c.m, c.th, ws.kin);
    update_contacts(c.m, c.th, ws);
    int past = 0;
    for (int i = 0; i < ws.cs.n_lim; ++i) past += ws.cs.lim[size_t(i)].depth > 0;
    CHECK(past >= 2);
    check_derivatives(c, 0.0);
  }
}

namespace {

PbdSettings settings(Formulation f, Optimizer o, double c_perp) {
  PbdSettings s;
  s.formulation = f;
  s.optimizer = o;
  s.dt = kDt;
  s.contact.c_perp = c_perp;
  s.contact.c_par = 0;
  return s;
}

const std::pair<Formulation, Optimizer> kMethods[] = {
    {Formulation::Pbd, Optimizer::Lm}, {Formulation::Pbd, Optimizer::JtjLm}, {Formulation::Pbfd, Optimizer::JtjLm}};

LinkSpec body(const std::string& name, int parent, JointType j, const Vec3& axis, double mass) {
  LinkSpec l;
  l.name = name;
  l.parent = parent;
  l.joint = j;
  l.axis = axis;
  l.mass = mass;
  l.inertia = 0.004 * mass * Mat3::Identity();
  return l;
}

}  // namespace

TEST_CASE("pbd contact set: a damped slider decays by (m + a) / (m + a + b dt) per step", "[pbd][physics]") {
  // Eq. 6 on one prismatic DOF of mass m, armature a, damping b, no gravity, no contact:
  //   E = (m + a)/(2 dt^2) (x - x~)^2 + b/(2 dt) (x - x_n)^2,  x~ = x_n + dt v_n
  // dE/dx = 0 gives (m + a)(v_{n+1} - v_n)/dt + b v_{n+1} = 0 with v_{n+1} = (x - x_n)/dt, so
  //   v_{n+1} = v_n (m + a) / (m + a + b dt)      (backward Euler; armature is inertia too)
  const double mass = 2.0, a = 0.3, b = 5.0;
  ModelSpec spec;
  spec.links.push_back(body("slider", -1, JointType::Prismatic, Vec3(1, 0, 0), mass));
  spec.links[0].armature = a;
  spec.links[0].damping = b;
  spec.gravity = Vec3::Zero();
  const Model m = Model::finalize(spec);
  const double factor = (mass + a) / (mass + a + b * kDt);
  for (const auto& [f, o] : kMethods) {
    INFO(formulation_name(f) << "+" << optimizer_name(o));
    PbdIntegrator integ(m, settings(f, o, 1e5));
    VecX th_nm1 = VecX::Constant(1, 0.0), th_n = VecX::Constant(1, 0.01), th_next;  // v_0 = 1 m/s
    double v = 1.0;
    for (int n = 0; n < 50; ++n) {
      const StepStats st = integ.step(th_n, th_nm1, VecX(), th_next);
      REQUIRE(st.converged());
      v *= factor;
      const double v_got = (th_next[0] - th_n[0]) / kDt;
      CHECK(v_got == Approx(v).epsilon(1e-8));
      th_nm1 = th_n;
      th_n = th_next;
    }
  }
}

TEST_CASE("pbd contact set: a pendulum released against its hinge stop stays there and comes to rest",
          "[pbd][physics]") {
  // point mass m at l = 0.5 on a hinge about x, hanging at theta = 0 (-z); the range [0.3, 2]
  // keeps it from hanging: released at 1.5 it swings down onto the lower stop at 0.3.
  // Impact energy E = m g l (cos 0.3 - cos 1.5) is absorbed by C/3 d^3 at most, so the stop is
  // never passed by more than (3 E / C)^(1/3); the rest depth balances m g l sin(lo) = C d^2.
  const double mass = 1.0, l = 0.5, lo = 0.3, C = 1e5, g = 9.81;
  ModelSpec spec;
  LinkSpec p = body("pendulum", -1, JointType::Hinge, Vec3(1, 0, 0), mass);
  p.com = Vec3(0, 0, -l);
  p.inertia.setZero();
  p.limited = true;
  p.range[0] = lo;
  p.range[1] = 2.0;
  p.damping = 0.2;
  spec.links.push_back(p);
  spec.gravity = Vec3(0, 0, -g);
  const Model m = Model::finalize(spec);
  const double d_max = std::cbrt(3 * mass * g * l * (std::cos(lo) - std::cos(1.5)) / C);
  const double d_rest = std::sqrt(mass * g * l * std::sin(lo) / C);
  for (const auto& [f, o] : kMethods) {
    INFO(formulation_name(f) << "+" << optimizer_name(o));
    PbdIntegrator integ(m, settings(f, o, C));
    VecX th_nm1 = VecX::Constant(1, 1.5), th_n = th_nm1, th_next;
    double th_min = th_n[0];
    for (int n = 0; n < 500; ++n) {
      const StepStats st = integ.step(th_n, th_nm1, VecX(), th_next);
      REQUIRE(st.converged());
      th_min = std::min(th_min, th_next[0]);
      th_nm1 = th_n;
      th_n = th_next;
    }
    INFO("min theta " << th_min << " bound " << lo - d_max << " final " << th_n[0] << " rest " << lo - d_rest);
    CHECK(th_min < lo);                 // it reached the stop
    CHECK(th_min >= lo - d_max);        // and never went further than the energy allows
    CHECK(std::abs(th_n[0] - th_nm1[0]) / kDt < 1e-3);   // at rest
    CHECK(th_n[0] == Approx(lo - d_rest).margin(2e-4));  // on the stop
  }
}

TEST_CASE("pbd contact set: a ball dropped onto a box fixed on the world rests on its top", "[pbd][physics]") {
  // sphere r = 0.1 on a floating link (1 kg) from 0.5 m onto a world box of half-height 0.1 at
  // the origin: it rests with its centre at 0.2 - d, C d^alpha = m g (alpha = 2)
  const double r = 0.1, mass = 1.0, C = 1e5, g = 9.81;
  ModelSpec spec;
  spec.links.push_back(body("ball", -1, JointType::Floating, Vec3::UnitZ(), mass));
  GeomSpec ball, box;
  ball.type = GeomType::Sphere;
  ball.link = 0;
  ball.size[0] = r;
  box.type = GeomType::Box;
  box.link = -1;
  box.size = Vec3(0.5, 0.5, 0.1);
  spec.geoms = {ball, box};
  spec.gravity = Vec3(0, 0, -g);
  const Model m = Model::finalize(spec);
  const double d_eq = std::sqrt(mass * g / C);
  for (const auto& [f, o] : kMethods) {
    INFO(formulation_name(f) << "+" << optimizer_name(o));
    PbdIntegrator integ(m, settings(f, o, C));
    VecX th_n = VecX::Zero(6);
    th_n[0] = 0.05, th_n[1] = -0.1, th_n[2] = 0.5;
    VecX th_nm1 = th_n, th_next;
    double z_min = th_n[2];
    for (int n = 0; n < 300; ++n) {
      const StepStats st = integ.step(th_n, th_nm1, VecX(), th_next);
      REQUIRE(st.converged());
      z_min = std::min(z_min, th_next[2]);
      th_nm1 = th_n;
      th_n = th_next;
    }
    INFO("z " << th_n[2] << " min " << z_min << " d_eq " << d_eq);
    CHECK(z_min > 0.2 - 0.05);                          // never through the top
    CHECK(th_n[2] == Approx(0.2 - d_eq).margin(1e-4));  // resting on it, C_perp-equilibrium depth
    CHECK((th_n - th_nm1).norm() / kDt < 1e-3);
    CHECK(std::abs(th_n[0] - 0.05) < 1e-6);             // no sideways push from a flat top
  }
}
