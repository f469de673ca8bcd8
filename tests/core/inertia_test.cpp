// Inertia integral, mass matrix and gravity vs independent references and central differences
// on random models (docs/methods/pbfd.md §2.4, §3, §9 D1, D2).
#include <catch2/catch.hpp>

#include "core/inertia.h"
#include "tests/support/random_models.h"

using namespace bigstep;
using namespace bigstep::test;

namespace {

const JointType kRoots[] = {JointType::Floating, JointType::Hinge, JointType::Planar,
                            JointType::Ball, JointType::Prismatic};

RandomModel model_for(uint32_t seed, bool point_masses = false) {
  RandomModelOptions opt;
  opt.root = kRoots[seed % 5];
  opt.point_masses = point_masses;
  return random_model(seed, opt);
}

Kinematics fk(const Model& m, const VecX& th, bool derivatives = false) {
  Kinematics kin(m);
  forward_kinematics(m, th, kin);
  if (derivatives) link_derivatives(m, kin);
  return kin;
}

// Three configurations of one step: theta, theta_n, theta_{n-1}, far enough apart that the
// inertia residual A_j x + b_j is O(0.1..1) (the second-derivative terms of the Hessian matter).
struct StepStates {
  VecX th, th_n, th_nm1;
};
StepStates random_states(const Model& m, Rng& rng) {
  StepStates s;
  s.th = random_theta(m, rng);
  s.th_n = s.th + uniform_vecx(rng, m.n_q, -0.3, 0.3);
  s.th_nm1 = s.th_n + uniform_vecx(rng, m.n_q, -0.3, 0.3);
  return s;
}

// Gauss reference of I: sum over links and the 8 Gauss points of the link's box of
// m/8 / (2 dt^2) |X(x,th) - (1+a) X(x,th_n) + a X(x,th_nm1)|^2.
double gauss_inertia(const RandomModel& rm, const StepStates& s, double dt, double a) {
  const Model& m = rm.model;
  const Kinematics k0 = fk(m, s.th), k1 = fk(m, s.th_n), k2 = fk(m, s.th_nm1);
  double sum = 0;
  for (int j = 0; j < m.n_link; ++j)
    for (const Vec3& x : box_gauss_points(rm.boxes[j])) {
      const Vec3 r = point_position(k0, j, x) - (1 + a) * point_position(k1, j, x) +
                     a * point_position(k2, j, x);
      sum += rm.boxes[j].mass / 8 * r.squaredNorm();
    }
  return sum / (2 * dt * dt);
}

double inertia_at(const Model& m, const InertiaAnchor& an, double dt, const VecX& th) {
  return inertia_value(m, fk(m, th), an, dt);
}

VecX inertia_grad_at(const Model& m, const InertiaAnchor& an, double dt, const VecX& th) {
  VecX g = VecX::Zero(m.n_q);
  add_inertia_gradient(m, fk(m, th, true), an, dt, g);
  return g;
}

VecX gravity_grad_at(const Model& m, const VecX& th) {
  VecX g = VecX::Zero(m.n_q);
  add_gravity_derivatives(m, fk(m, th, true), g, nullptr);
  return g;
}

double min_eig(const MatX& A) {
  Eigen::SelfAdjointEigenSolver<MatX> es(A);
  return es.eigenvalues().minCoeff();
}

}  // namespace

TEST_CASE("inertia: D1 closed-form I equals the 8-point Gauss sum of box links", "[inertia][D1]") {
  // Both are exact (the integrand is quadratic in x), so only round-off separates them: a sum
  // of O(10) terms of O(1e2..1e4) magnitude, each with ~10 flops -> 1e-12 relative (docs/methods/pbfd.md §9 D1).
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    const RandomModel rm = model_for(seed);
    const Model& m = rm.model;
    Rng rng(100 + seed);
    const StepStates s = random_states(m, rng);
    const double dt = uniform(rng, 0.005, 0.1);
    for (double a : {1.0, 0.5}) {  // PBD anchor (a = 1) and the NMDP generalization (docs/methods/nmdp.md §6)
      const InertiaAnchor an = make_inertia_anchor(fk(m, s.th_n), fk(m, s.th_nm1), a);
      const double I = inertia_value(m, fk(m, s.th), an, dt);
      const double ref = gauss_inertia(rm, s, dt, a);
      INFO("seed " << seed << " a " << a << " closed form " << I << " Gauss " << ref);
      REQUIRE(ref > 0);
      CHECK(std::abs(I - ref) <= tol(1e-12) * ref);
    }
  }
  // The example of docs/methods/pbfd.md §3: box 0.4 x 0.2 x 0.1 m, 2.3 kg, tilted, offset COM, floating base.
  RandomModel rm;
  Box b;
  b.mass = 2.3;
  b.size = Vec3(0.4, 0.2, 0.1);
  b.com = Vec3(0.05, -0.03, 0.02);
  b.R = rpy_rotation(0.3, -0.2, 0.7);
  LinkSpec l;
  l.name = "box";
  l.joint = JointType::Floating;
  l.mass = b.mass;
  l.com = b.com;
  l.inertia = box_inertia(b);
  rm.spec.links = {l};
  rm.boxes = {b};
  rm.model = Model::finalize(rm.spec);
  Rng rng(199);
  for (int rep = 0; rep < 5; ++rep) {
    const StepStates s = random_states(rm.model, rng);
    const InertiaAnchor an = make_inertia_anchor(fk(rm.model, s.th_n), fk(rm.model, s.th_nm1));
    const double I = inertia_value(rm.model, fk(rm.model, s.th), an, 0.01);
    const double ref = gauss_inertia(rm, s, 0.01, 1.0);
    INFO("rep " << rep << " closed form " << I << " Gauss " << ref);
    CHECK(std::abs(I - ref) <= tol(1e-12) * ref);
  }
}

TEST_CASE("inertia: D1 point masses reduce to m/(2dt^2)|p - 2p_n + p_{n-1}|^2", "[inertia][D1]") {
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    const RandomModel rm = model_for(seed, /*point_masses=*/true);
    const Model& m = rm.model;
    Rng rng(200 + seed);
    const StepStates s = random_states(m, rng);
    const double dt = uniform(rng, 0.005, 0.1);
    const Kinematics k0 = fk(m, s.th), k1 = fk(m, s.th_n), k2 = fk(m, s.th_nm1);
    double ref = 0;
    for (int j = 0; j < m.n_link; ++j) {
      REQUIRE(m.link_inertia[j].norm() == 0);
      const Vec3& c = m.link_com[j];
      ref += m.link_mass[j] / (2 * dt * dt) *
             (point_position(k0, j, c) - 2 * point_position(k1, j, c) + point_position(k2, j, c))
                 .squaredNorm();
    }
    const double I = inertia_value(m, k0, make_inertia_anchor(k1, k2), dt);
    INFO("seed " << seed << " closed form " << I << " point masses " << ref);
    REQUIRE(ref > 0);
    CHECK(std::abs(I - ref) <= tol(1e-12) * ref);
  }
}

TEST_CASE("inertia: moment_product is symmetric and equals the Gauss-point integral",
          "[inertia]") {
  const RandomModel rm = model_for(3);
  const Model& m = rm.model;
  Rng rng(300);
  for (int j = 0; j < m.n_link; ++j)
    for (int rep = 0; rep < 3; ++rep) {
      // general affine maps (not rotations), as the derivative pairs d_k T_j are
      const Mat3 A = uniform_mat(rng, 3, 3, -1, 1), B = uniform_mat(rng, 3, 3, -1, 1);
      const Vec3 a = uniform_vec(rng, -1, 1), b = uniform_vec(rng, -1, 1);
      const double ab = moment_product(m, j, A, a, B, b);
      const double ba = moment_product(m, j, B, b, A, a);
      double ref = 0, scale = 0;
      for (const Vec3& x : box_gauss_points(rm.boxes[j])) {
        const double term = rm.boxes[j].mass / 8 * (A * x + a).dot(B * x + b);
        ref += term;
        scale += std::abs(term);
      }
      INFO("link " << j << " <A,B> " << ab << " <B,A> " << ba << " Gauss " << ref);
      // round-off of O(30) flops on O(scale) terms
      CHECK(std::abs(ab - ba) <= tol(1e-13) * scale);
      CHECK(std::abs(ab - ref) <= tol(1e-13) * scale);
      CHECK(moment_product(m, j, A, a, A, a) >= 0);
    }
}

TEST_CASE("inertia: mass_matrix is symmetric PD and equals sum_j <d_k T_j, d_l T_j> (FD)",
          "[inertia][fd]") {
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    const RandomModel rm = model_for(seed);
    const Model& m = rm.model;
    Rng rng(400 + seed);
    const VecX th = random_theta(m, rng);
    MatX H;
    mass_matrix(m, fk(m, th, true), H);
    REQUIRE(H.rows() == m.n_q);
    REQUIRE(H.cols() == m.n_q);
    INFO("seed " << seed);
    CHECK((H - H.transpose()).cwiseAbs().maxCoeff() == 0);  // filled by mirroring: exact
    // PD: every DOF moves some box of positive mass and non-degenerate shape
    CHECK(min_eig(H) > 1e-8 * H.cwiseAbs().maxCoeff());
    CHECK(H.llt().info() == Eigen::Success);

    // the definition with pose derivatives from central differences of FK (not the twist rule)
    std::vector<MatX> dT(m.n_link);  // 12 x n_q per link: flat(dR, dt) columns
    for (int j = 0; j < m.n_link; ++j)
      dT[j] = fd_jacobian(
          [&](const VecX& x) {
            const Kinematics k = fk(m, x);
            return flat(k.R[j], k.t[j]);
          },
          th);
    auto unflat = [](const VecX& c, Mat3& M, Vec3& v) {
      M = Eigen::Map<const Mat3>(c.data());
      v = c.tail<3>();
    };
    MatX Hfd = MatX::Zero(m.n_q, m.n_q);
    for (int j = 0; j < m.n_link; ++j)
      for (int k = 0; k < m.n_q; ++k)
        for (int l = 0; l < m.n_q; ++l) {
          Mat3 A, B;
          Vec3 a, b;
          unflat(dT[j].col(k), A, a);
          unflat(dT[j].col(l), B, b);
          Hfd(k, l) += moment_product(m, j, A, a, B, b);
        }
    const double err = rel_err(H, Hfd);
    INFO("H vs FD definition: rel err " << err);
    CHECK(err < fd_tol());

    // kinetic energy 1/2 v^T H v = sum over the 8 Gauss points of each box of 1/2 m/8 |J_i v|^2
    const Kinematics kin = fk(m, th);
    MatX J(3, m.n_q);
    for (int rep = 0; rep < 3; ++rep) {
      const VecX v = uniform_vecx(rng, m.n_q, -1, 1);
      double ke = 0;
      for (int j = 0; j < m.n_link; ++j)
        for (const Vec3& x : box_gauss_points(rm.boxes[j])) {
          point_jacobian(m, kin, j, point_position(kin, j, x), J);
          ke += 0.5 * rm.boxes[j].mass / 8 * (J * v).squaredNorm();
        }
      const double ke_H = 0.5 * v.dot(H * v);
      INFO("KE from H " << ke_H << " from Gauss points " << ke);
      CHECK(std::abs(ke_H - ke) <= tol(1e-12) * ke);  // both exact: round-off only
    }
  }
}

TEST_CASE("inertia: Gauss-Newton matrix H/dt^2 equals the exact Hessian at zero residual",
          "[inertia]") {
  // With theta_n = theta_{n-1} = theta, A_j = b_j = 0 and the second-derivative term vanishes.
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    const Model m = model_for(seed).model;
    Rng rng(450 + seed);
    const VecX th = random_theta(m, rng);
    const Kinematics kin = fk(m, th, true);
    const InertiaAnchor an = make_inertia_anchor(kin, kin);
    const double dt = 0.02;
    MatX H, Hess = MatX::Zero(m.n_q, m.n_q);
    mass_matrix(m, kin, H);
    add_inertia_hessian(m, kin, an, dt, Hess);
    INFO("seed " << seed);
    CHECK(rel_err(Hess, H / (dt * dt)) < tol(1e-13));
    VecX g = VecX::Zero(m.n_q);
    add_inertia_gradient(m, kin, an, dt, g);
    CHECK(g.cwiseAbs().maxCoeff() <= tol(1e-13) * Hess.cwiseAbs().maxCoeff());
  }
}

TEST_CASE("inertia: add_inertia_gradient and add_inertia_hessian match central differences",
          "[inertia][fd]") {
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    const Model m = model_for(seed).model;
    Rng rng(500 + seed);
    const StepStates s = random_states(m, rng);
    const double dt = uniform(rng, 0.005, 0.1);
    for (double a : {1.0, 0.5}) {
      const InertiaAnchor an = make_inertia_anchor(fk(m, s.th_n), fk(m, s.th_nm1), a);
      const Kinematics kin = fk(m, s.th, true);
      INFO("seed " << seed << " a " << a << " dt " << dt);

      // gradient; start from a non-zero vector: the function accumulates (+=)
      const VecX g0 = uniform_vecx(rng, m.n_q, -1, 1);
      VecX g = g0;
      add_inertia_gradient(m, kin, an, dt, g);
      g -= g0;
      const VecX g_fd = fd_gradient([&](const VecX& x) { return inertia_at(m, an, dt, x); }, s.th);
      const double eg = rel_err(g, g_fd);
      INFO("gradient rel err " << eg);
      CHECK(eg < fd_tol());

      // exact Hessian
      const MatX H0 = uniform_mat(rng, m.n_q, m.n_q, -1, 1);
      MatX Hess = H0;
      add_inertia_hessian(m, kin, an, dt, Hess);
      Hess -= H0;
      const MatX H_fd = fd_jacobian([&](const VecX& x) { return inertia_grad_at(m, an, dt, x); }, s.th);
      const double eh = rel_err(Hess, H_fd);
      INFO("Hessian rel err " << eh);
      CHECK(eh < fd_tol());
      CHECK((Hess - Hess.transpose()).cwiseAbs().maxCoeff() <= tol(1e-13) * Hess.cwiseAbs().maxCoeff());

      // guard against a vacuous pass: these states must make the second-derivative term
      // <d_kl T, (A,b)> visible, i.e. the exact Hessian differ from H/dt^2
      MatX Hm;
      mass_matrix(m, kin, Hm);
      CHECK(rel_err(Hess, Hm / (dt * dt)) > 1e-3);
    }
  }
}

TEST_CASE("inertia: gravity gradient and Hessian match central differences of gravity_value",
          "[inertia][gravity][fd]") {
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    RandomModel rm = model_for(seed);
    // arbitrary gravity directions too, so an axis-specific shortcut cannot pass
    if (seed % 2 == 0) {
      Rng grng(600 + seed);
      rm.spec.gravity = 9.81 * random_oblique_unit(grng);
      rm.model = Model::finalize(rm.spec);
    }
    const Model& m = rm.model;
    Rng rng(650 + seed);
    const VecX th = random_theta(m, rng);
    const Kinematics kin = fk(m, th, true);
    INFO("seed " << seed << " gravity " << m.gravity.transpose());

    // V = -M g . COM (the COM from centre_of_mass)
    const double V = gravity_value(m, kin);
    const double V_com = -m.total_mass * m.gravity.dot(centre_of_mass(m, kin));
    // round-off of a sum of L terms of size W |x|, |x| = O(1) m
    CHECK(std::abs(V - V_com) <= tol(1e-13) * m.weight() * (1 + centre_of_mass(m, kin).norm()));

    const VecX g0 = uniform_vecx(rng, m.n_q, -1, 1);
    const MatX H0 = uniform_mat(rng, m.n_q, m.n_q, -1, 1);
    VecX g = g0;
    MatX H = H0;
    add_gravity_derivatives(m, kin, g, &H);
    g -= g0;
    H -= H0;
    VecX g_only = VecX::Zero(m.n_q);
    add_gravity_derivatives(m, kin, g_only, nullptr);
    CHECK(rel_err(g_only, g) < tol(1e-14));

    const VecX g_fd = fd_gradient(
        [&](const VecX& x) {
          return gravity_value(m, fk(m, x));
        },
        th);
    const double eg = rel_err(g, g_fd);
    INFO("gradient rel err " << eg);
    CHECK(eg < fd_tol());
    const MatX H_fd = fd_jacobian([&](const VecX& x) { return gravity_grad_at(m, x); }, th);
    const double eh = rel_err(H, H_fd);
    INFO("Hessian rel err " << eh);
    CHECK(eh < fd_tol());
    CHECK((H - H.transpose()).cwiseAbs().maxCoeff() <= tol(1e-13) * H.cwiseAbs().maxCoeff());
  }
}
