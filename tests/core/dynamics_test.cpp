// RNEA / CRBA / forward dynamics cross-checks (docs/architecture.md §9 rule 2) and FD checks of the AD
// derivatives (habit 13), on a tree with every joint type and a random state.
#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <random>

#include "core/crba.h"
#include "core/error.h"
#include "core/forward_dynamics.h"
#include "core/inertia.h"
#include "core/kinematics.h"
#include "core/rnea.h"
#include "tests/support/malloc_guard.h"
#include "tests/support/random_models.h"
#include "tests/support/tol.h"

using namespace bigstep;
using bigstep::test::tol;

namespace {

// A 7-link tree: floating base, hinge, ball, prismatic, planar-on-branch, fixed, hinge.
Model tree_model(std::mt19937& rng) {
  std::uniform_real_distribution<double> U(-1, 1);
  auto rvec = [&] {  // drawn in order (a constructor's arguments are not)
    const double x = U(rng), y = U(rng), z = U(rng);
    return Vec3(x, y, z);
  };
  const JointType types[] = {JointType::Floating, JointType::Hinge, JointType::Ball, JointType::Prismatic,
                             JointType::Planar, JointType::Fixed, JointType::Hinge};
  const int parents[] = {-1, 0, 1, 2, 0, 4, 5};
  ModelSpec s;
  for (int j = 0; j < 7; ++j) {
    LinkSpec l;
    l.name = "l" + std::to_string(j);
    l.parent = parents[j];
    l.joint = types[j];
    l.axis = rvec().normalized();
    l.t_o = 0.3 * rvec();
    l.R_o = Eigen::AngleAxisd(U(rng), rvec().normalized()).toRotationMatrix();
    l.mass = 0.5 + std::abs(U(rng));
    l.com = 0.2 * rvec();
    const Vec3 d = (0.1 + 0.2 * rvec().cwiseAbs().array()).matrix();
    const double angle = U(rng);
    const Mat3 Q = Eigen::AngleAxisd(angle, rvec().normalized()).toRotationMatrix();
    const Vec3 I = l.mass / 12 * Vec3(d.y() * d.y() + d.z() * d.z(), d.x() * d.x() + d.z() * d.z(), d.x() * d.x() + d.y() * d.y());
    l.inertia = Q * I.asDiagonal() * Q.transpose();
    s.links.push_back(l);
  }
  s.gravity = Vec3(0.3, -0.2, -9.81);
  return Model::finalize(s);
}

VecX rand_vec(std::mt19937& rng, int n, double scale) {
  std::uniform_real_distribution<double> U(-scale, scale);
  VecX v(n);
  for (int i = 0; i < n; ++i) v[i] = U(rng);
  return v;
}

}  // namespace

TEST_CASE("dynamics: CRBA equals the moment-product H and RNEA columns", "[dynamics]") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 5; ++trial) {
    const Model m = tree_model(rng);
    const VecX q = rand_vec(rng, m.n_q, 1.0);
    MatX H;
    crba(m, q, H);
    // H from the moment inner product (docs/methods/pbfd.md §2.4)
    Kinematics kin(m);
    forward_kinematics(m, q, kin);
    link_derivatives(m, kin);
    MatX H2;
    mass_matrix(m, kin, H2);
    CHECK((H - H2).norm() <= tol(1e-12) * H.norm());  // two exact formulas: round-off only
    // CRBA column i == RNEA(q, 0, e_i) - RNEA(q, 0, 0)
    const VecX z = VecX::Zero(m.n_q);
    VecX tau0, taui;
    rnea<double>(m, q, z, z, tau0);
    for (int i = 0; i < m.n_q; ++i) {
      rnea<double>(m, q, z, VecX::Unit(m.n_q, i), taui);
      CHECK((taui - tau0 - H.col(i)).norm() <= tol(1e-12) * (1 + H.norm()));
    }
    // gravity torques == grad V
    VecX gV = VecX::Zero(m.n_q);
    add_gravity_derivatives(m, kin, gV, nullptr);
    CHECK((gravity_torques(m, q) - gV).norm() <= tol(1e-12) * (1 + gV.norm()));
  }
}

TEST_CASE("dynamics: forward dynamics inverts RNEA", "[dynamics]") {
  std::mt19937 rng(11);
  const Model m = tree_model(rng);
  for (int trial = 0; trial < 5; ++trial) {
    const VecX q = rand_vec(rng, m.n_q, 1.0), qd = rand_vec(rng, m.n_q, 2.0), qdd = rand_vec(rng, m.n_q, 3.0);
    VecX tau;
    rnea<double>(m, q, qd, qdd, tau);
    const VecX qdd2 = forward_dynamics(m, q, qd, tau);
    CHECK((qdd2 - qdd).norm() <= tol(1e-9) * (1 + qdd.norm()));  // cond(H) ~ 1e3 on this tree
  }
}

TEST_CASE("dynamics: Coriolis term equals the Christoffel form", "[dynamics]") {
  // c_k = sum_ab (d_a H_kb - 1/2 d_k H_ab) qd_a qd_b, with dH by central differences (docs/methods/pbfd.md §2.4)
  std::mt19937 rng(3);
  const Model m = tree_model(rng);
  const VecX q = rand_vec(rng, m.n_q, 1.0), qd = rand_vec(rng, m.n_q, 1.5);
  const int n = m.n_q;
  const double h = 1e-5;
  std::vector<MatX> dH(n);
  for (int a = 0; a < n; ++a) {
    MatX Hp, Hm;
    crba(m, q + h * VecX::Unit(n, a), Hp);
    crba(m, q - h * VecX::Unit(n, a), Hm);
    dH[a] = (Hp - Hm) / (2 * h);
  }
  VecX c = VecX::Zero(n);
  for (int k = 0; k < n; ++k)
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) c[k] += (dH[a](k, b) - 0.5 * dH[k](a, b)) * qd[a] * qd[b];
  const VecX c_rnea = nonlinear_effects(m, q, qd) - gravity_torques(m, q);
  // central differences: error O(h^2) ~ 1e-10 relative, plus round-off 1e-16/h ~ 1e-11
  CHECK((c - c_rnea).norm() <= tol(1e-7) * (1 + c.norm()));
}

TEST_CASE("dynamics: AD derivatives of RNEA match central differences", "[dynamics]") {
  std::mt19937 rng(5);
  const Model m = tree_model(rng);
  const int n = m.n_q;
  const VecX q = rand_vec(rng, n, 1.0), qd = rand_vec(rng, n, 2.0), qdd = rand_vec(rng, n, 3.0);
  MatX dq, dqd;
  rnea_derivatives(m, q, qd, qdd, dq, dqd);
  const double h = 1e-6;
  MatX fq(n, n), fqd(n, n);
  for (int k = 0; k < n; ++k) {
    VecX tp, tm;
    rnea<double>(m, q + h * VecX::Unit(n, k), qd, qdd, tp);
    rnea<double>(m, q - h * VecX::Unit(n, k), qd, qdd, tm);
    fq.col(k) = (tp - tm) / (2 * h);
    rnea<double>(m, q, qd + h * VecX::Unit(n, k), qdd, tp);
    rnea<double>(m, q, qd - h * VecX::Unit(n, k), qdd, tm);
    fqd.col(k) = (tp - tm) / (2 * h);
  }
  // central differences with h = 1e-6: truncation ~1e-12 * |tau'''|, round-off ~1e-10 * |tau|
  CHECK((dq - fq).norm() <= tol(1e-6) * (1 + fq.norm()));
  CHECK((dqd - fqd).norm() <= tol(1e-6) * (1 + fqd.norm()));
}

TEST_CASE("dynamics: per-link mass scales equal the same functions on the scaled model", "[dynamics][mass]") {
  // mass_scale (core/inertia.h): link j's mass and inertia times s_j, COM unchanged, no Model copy.
  // The oracle is a Model whose link masses and inertias are scaled; only rounding differs.
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> U(-0.7, 0.7);
  for (int trial = 0; trial < 3; ++trial) {
    const Model m = tree_model(rng);
    std::vector<double> s(m.n_link);
    ModelSpec spec{m.link_specs(), {}, {}, m.gravity, {}, {}};
    for (int j = 0; j < m.n_link; ++j) {
      s[j] = std::exp(U(rng));
      spec.links[j].mass *= s[j];
      spec.links[j].inertia *= s[j];
    }
    const Model ms = Model::finalize(spec);
    CHECK(total_mass(m, s.data()) == ms.total_mass);
    CHECK(weight(m, s.data()) == ms.weight());
    const VecX q = rand_vec(rng, m.n_q, 1.0), qd = rand_vec(rng, m.n_q, 1.0), qdd = rand_vec(rng, m.n_q, 1.0);
    auto close = [](const auto& a, const auto& b) { return (a - b).norm() <= 1e-12 * (1 + b.norm()); };
    MatX H, Hs;
    crba(m, q, H, s.data());
    crba(ms, q, Hs);
    CHECK(close(H, Hs));
    VecX tau, taus;
    rnea<double>(m, q, qd, qdd, tau, s.data());
    rnea<double>(ms, q, qd, qdd, taus);
    CHECK(close(tau, taus));
    CHECK(close(forward_dynamics(m, q, qd, tau, s.data()), forward_dynamics(ms, q, qd, tau)));
    Kinematics kin(m), kin_a(m), kin_b(m);
    forward_kinematics(m, q, kin);
    link_derivatives(m, kin);
    forward_kinematics(m, q + 0.01 * qd, kin_a);
    forward_kinematics(m, q - 0.02 * qd, kin_b);
    const InertiaAnchor an = make_inertia_anchor(kin_a, kin_b);
    mass_matrix(m, kin, H, s.data());
    mass_matrix(ms, kin, Hs);
    CHECK(close(H, Hs));
    const double dt = 0.01;
    CHECK(inertia_value(m, kin, an, dt, s.data()) == Approx(inertia_value(ms, kin, an, dt)).epsilon(1e-12));
    CHECK(gravity_value(m, kin, s.data()) == Approx(gravity_value(ms, kin)).epsilon(1e-12));
    VecX g = VecX::Zero(m.n_q), gs = VecX::Zero(m.n_q);
    MatX A = MatX::Zero(m.n_q, m.n_q), As = MatX::Zero(m.n_q, m.n_q);
    add_inertia_gradient(m, kin, an, dt, g, s.data());
    add_inertia_gradient(ms, kin, an, dt, gs);
    add_inertia_hessian(m, kin, an, dt, A, s.data());
    add_inertia_hessian(ms, kin, an, dt, As);
    add_gravity_derivatives(m, kin, g, &A, s.data());
    add_gravity_derivatives(ms, kin, gs, &As);
    CHECK(close(g, gs));
    CHECK(close(A, As));
    CHECK(close(centre_of_mass(m, kin, s.data()), centre_of_mass(ms, kin)));
    // and the scales matter
    CHECK(!close(H, (crba(m, q, Hs), Hs)));
  }
}

TEST_CASE("dynamics: crba / rnea / nonlinear_effects with caller scratch are bit-identical and allocate nothing",
          "[dynamics][alloc]") {
  std::mt19937 rng(11);
  const Model m = tree_model(rng);
  const int n = m.n_q;
  const VecX q = rand_vec(rng, n, 1.0), qd = rand_vec(rng, n, 2.0), qdd = rand_vec(rng, n, 3.0);
  std::vector<double> scale(size_t(m.n_link));
  for (double& s : scale) s = 0.5 + std::uniform_real_distribution<double>(0, 1)(rng);
  CrbaScratch cs(m);
  RneaScratch rs(m);
  MatX H(n, n);
  VecX tau(n), nle(n);
  for (const double* ms : {static_cast<const double*>(nullptr), static_cast<const double*>(scale.data())}) {
    MatX H_ref;
    crba(m, q, H_ref, ms);
    VecX tau_ref;
    rnea<double>(m, q, qd, qdd, tau_ref, ms);
    const VecX nle_ref = nonlinear_effects(m, q, qd, ms);
    test::MallocCounter mc;
    crba(m, q, H, cs, ms);
    rnea(m, q, qd, qdd, tau, rs, ms);
    nonlinear_effects(m, q, qd, nle, rs, ms);
    const long allocations = mc.count();
    CHECK(allocations == 0);
    CHECK(H == H_ref);
    CHECK(tau == tau_ref);
    CHECK(nle == nle_ref);
  }
  // scratch of another model is refused
  ModelSpec one;
  LinkSpec l;
  l.name = "a";
  l.joint = JointType::Hinge;
  l.mass = 1;
  l.inertia = Mat3::Identity();
  one.links.push_back(l);
  const Model small = Model::finalize(one);
  CHECK_THROWS_AS(crba(m, q, H, *std::make_unique<CrbaScratch>(small)), InvalidArgument);
  CHECK_THROWS_AS(rnea(m, q, qd, qdd, tau, *std::make_unique<RneaScratch>(small)), InvalidArgument);
}

TEST_CASE("dynamics: forward dynamics adds armature to H and the damping force", "[dynamics]") {
  // a 1 kg, 1 m rod on a hinge about y, hanging at angle q from -z: I = 1/3 kg m^2 about the hinge,
  // gravity torque -m g (l/2) sin q; with armature a and damping b,
  // qdd = (tau - m g (l/2) sin q - b qd) / (I + a)
  ModelSpec s;
  LinkSpec l;
  l.name = "rod";
  l.joint = JointType::Hinge;
  l.axis = Vec3::UnitY();
  l.mass = 1;
  l.com = Vec3(0, 0, -0.5);
  l.inertia = Vec3(1.0 / 12, 1.0 / 12, 0).asDiagonal();
  l.armature = 0.2;
  l.damping = 0.7;
  s.links.push_back(l);
  const Model m = Model::finalize(s);
  VecX q(1), qd(1), tau(1);
  q << 0.4;
  qd << -1.3;
  tau << 0.25;
  const double expect = (0.25 - 9.81 * 0.5 * std::sin(0.4) - 0.7 * -1.3) / (1.0 / 3 + 0.2);
  CHECK(std::abs(forward_dynamics(m, q, qd, tau)[0] - expect) < 1e-12);
}

TEST_CASE("dynamics: forward dynamics adds the joint spring force -k (q - ref)", "[dynamics][spring]") {
  using namespace bigstep::test;
  // a random floating-base tree with springs on its hinge / prismatic DOFs (MuJoCo's qfrc_spring):
  // qdd solves (H + diag(a)) qdd = tau - c - b o qd - k o (q - ref), with H and c from CRBA and RNEA
  RandomModelOptions opt;
  opt.root = JointType::Floating;
  RandomModel rm = random_model(7, opt);
  Rng rng(17);
  int springs = 0;
  for (LinkSpec& l : rm.spec.links) {
    l.armature = uniform(rng, 0, 0.05);
    l.damping = uniform(rng, 0, 0.5);
    if (l.joint != JointType::Hinge && l.joint != JointType::Prismatic) continue;
    l.stiffness = uniform(rng, 1, 20);
    l.springref = uniform(rng, -0.5, 0.5);
    ++springs;
  }
  REQUIRE(springs >= 2);
  const Model m = Model::finalize(rm.spec);
  const VecX q = random_theta(m, rng), qd = uniform_vecx(rng, m.n_q, -1, 1), tau = uniform_vecx(rng, m.n_q, -2, 2);
  MatX H;
  crba(m, q, H);
  VecX f = tau - nonlinear_effects(m, q, qd);
  for (int k = 0; k < m.n_q; ++k) {
    H(k, k) += m.dof_armature[k];
    f[k] -= m.dof_damping[k] * qd[k] + m.dof_stiffness[k] * (q[k] - m.dof_springref[k]);
  }
  const VecX expect = H.ldlt().solve(f);
  const VecX got = forward_dynamics(m, q, qd, tau);
  CHECK((got - expect).lpNorm<Eigen::Infinity>() < 1e-12 * (1 + expect.lpNorm<Eigen::Infinity>()));
  // and the spring moves qdd: without it the answer differs by (H + diag(a))^-1 k o (q - ref)
  ModelSpec free_spec = rm.spec;
  for (LinkSpec& l : free_spec.links) l.stiffness = 0;
  const VecX no_spring = forward_dynamics(Model::finalize(free_spec), q, qd, tau);
  VecX ks(m.n_q);
  for (int k = 0; k < m.n_q; ++k) ks[k] = m.dof_stiffness[k] * (q[k] - m.dof_springref[k]);
  CHECK(ks.norm() > 0.1);
  CHECK((no_spring - got - H.ldlt().solve(ks)).lpNorm<Eigen::Infinity>() < 1e-12 * (1 + got.lpNorm<Eigen::Infinity>()));
}
