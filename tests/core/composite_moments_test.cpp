// Composite (subtree) moments vs the per-link sums they replace (core/composite_moments.h, spec
// docs/methods/pbfd.md §2.3-§2.4, §3): the inertia and gravity gradient / Hessian of add_inertia_* and
// add_gravity_derivatives, and a point force / stiffness vs the dense point Jacobian and
// add_point_hessian, on random branched models with every joint kind and mass scales.
#include <catch2/catch.hpp>

#include "core/composite_moments.h"
#include "tests/support/random_models.h"

using namespace bigstep;
using namespace bigstep::test;

namespace {

const JointType kRoots[] = {JointType::Floating, JointType::Hinge, JointType::Planar,
                            JointType::Ball, JointType::Prismatic};

Kinematics fk(const Model& m, const VecX& th) {
  Kinematics kin(m);
  forward_kinematics(m, th, kin);
  link_derivatives(m, kin);
  return kin;
}

}  // namespace

TEST_CASE("composite_moments: inertia, gravity, point forces and stiffnesses equal the per-link sums",
          "[inertia][composite]") {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    RandomModelOptions opt;
    opt.root = kRoots[seed % 5];
    const RandomModel rm = random_model(seed, opt);
    const Model& m = rm.model;
    Rng rng(seed + 100);
    const VecX th = random_theta(m, rng);
    const VecX th_n = th + uniform_vecx(rng, m.n_q, -0.3, 0.3);
    const VecX th_nm1 = th_n + uniform_vecx(rng, m.n_q, -0.3, 0.3);
    const Kinematics kin = fk(m, th), k1 = fk(m, th_n), k2 = fk(m, th_nm1);
    const InertiaAnchor an = make_inertia_anchor(k1, k2);
    const double dt = 0.03;
    std::vector<double> scale(size_t(m.n_link));
    for (double& s : scale) s = 0.5 + std::uniform_real_distribution<double>(0, 1)(rng);
    const double* ms = (seed % 2) ? scale.data() : nullptr;

    // oracle: the per-link sums, plus one force and one stiffness per link through dense J_x
    VecX g_ref = VecX::Zero(m.n_q);
    MatX H_ref = MatX::Zero(m.n_q, m.n_q);
    add_inertia_gradient(m, kin, an, dt, g_ref, ms);
    add_inertia_hessian(m, kin, an, dt, H_ref, ms);
    add_gravity_derivatives(m, kin, g_ref, &H_ref, ms);
    CompositeMoments cm(m);
    begin_moments(m, kin, an, dt, ms, true, cm);
    MatX J(3, m.n_q);
    for (int j = 0; j < m.n_link; ++j) {
      const Vec3 x = uniform_vec(rng, -1, 1), f = uniform_vec(rng, -2, 2);
      Mat3 K;
      for (int a = 0; a < 3; ++a) K.col(a) = uniform_vec(rng, -3, 3);  // not symmetric
      point_jacobian(m, kin, j, x, J);
      g_ref += J.transpose() * f;
      H_ref += J.transpose() * K * J;
      add_point_hessian(m, kin, j, J, f, 1.0, H_ref);
      add_point_force(cm, j, x, f);
      add_point_stiffness(cm, j, x, K);
    }
    VecX g = VecX::Zero(m.n_q);
    MatX H = MatX::Zero(m.n_q, m.n_q);
    finish_moments(m, kin, cm, g, &H);
    INFO("seed " << seed);
    CHECK(rel_err(g, g_ref) < 1e-12);
    CHECK(rel_err(H, H_ref) < 1e-12);

    // without force_curvature: the mass matrix / dt^2 and the stiffnesses only (no f . d^2x)
    MatX Hm;
    mass_matrix(m, kin, Hm, ms);
    MatX H_gn = Hm / (dt * dt);
    begin_moments(m, kin, an, dt, ms, true, cm);
    Rng rk(seed + 100);
    for (int j = 0; j < m.n_link; ++j) {
      const Vec3 x = uniform_vec(rk, -1, 1);
      Mat3 K;
      for (int a = 0; a < 3; ++a) K.col(a) = uniform_vec(rk, -3, 3);
      point_jacobian(m, kin, j, x, J);
      H_gn += J.transpose() * K * J;
      add_point_force(cm, j, x, uniform_vec(rk, -2, 2));  // enters r only
      add_point_stiffness(cm, j, x, K);
    }
    VecX g_gn = VecX::Zero(m.n_q);
    MatX H2 = MatX::Zero(m.n_q, m.n_q);
    finish_moments(m, kin, cm, g_gn, &H2, false);
    CHECK(rel_err(H2, H_gn) < 1e-12);

    // r alone (no Jacobian moments) gives the same r
    begin_moments(m, kin, an, dt, ms, false, cm);
    VecX g0 = VecX::Zero(m.n_q);
    add_inertia_gradient(m, kin, an, dt, g0, ms);
    add_gravity_derivatives(m, kin, g0, nullptr, ms);
    VecX g1 = VecX::Zero(m.n_q);
    finish_moments(m, kin, cm, g1, nullptr);
    CHECK(rel_err(g1, g0) < 1e-12);
  }
}
