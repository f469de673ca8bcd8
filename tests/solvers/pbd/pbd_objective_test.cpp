// PBD objective (Eq. 6) and PBFD residual (Eq. 13) derivatives vs central differences on random
// floating-base models with several penetrating contact spheres on two oblique planes
// (docs/methods/pbfd.md §4.5-§4.6, §5, §9 D2, D7).
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "solvers/pbd/pbd_objective.h"
#include "solvers/pbd/pbd_residual.h"
#include "tests/support/pbd_eval.h"
#include "tests/support/random_models.h"

using namespace bigstep;
using namespace bigstep::test;

namespace {

// A random model (floating base; ball, hinge, prismatic, planar and fixed joints below) with
// contact spheres placed at theta so that:
//  - 6 spheres penetrate the "ground" plane and 2 the "wall" plane by 2..8 mm,
//  - 3 more spheres hover 2..20 cm above the ground,
//  - every other sphere / plane pair is > 1 cm outside,
// radius 0 and > 0 alternating. Both plane normals are oblique (no axis alignment).
// theta_n and theta_{n-1} differ from theta by O(0.02) so the slip u is non-zero (>= 1 mm).
struct Scene {
  Model m;
  VecX th, th_n, th_nm1, tau;
  int n_active = 0;  // penetrating sphere / plane pairs at th
};

Scene contact_scene(uint32_t seed) {
  RandomModelOptions opt;
  opt.root = JointType::Floating;
  RandomModel rm = random_model(seed, opt);
  Rng rng(seed * 7919u + 13u);
  Scene sc;
  sc.th = random_theta(rm.model, rng);
  Kinematics kin(rm.model);
  forward_kinematics(rm.model, sc.th, kin);
  const Vec3 com = centre_of_mass(rm.model, kin);

  // ground: oblique, 0.3 m below the COM; wall: roughly perpendicular, 1.5 m from the COM
  const auto sgn = [&] { return uniform(rng, 0, 1) < 0.5 ? -1.0 : 1.0; };
  const Vec3 n1 = Vec3(sgn() * uniform(rng, 0.1, 0.3), sgn() * uniform(rng, 0.1, 0.3), 1).normalized();
  Vec3 v = random_oblique_unit(rng);
  v -= n1 * n1.dot(v);
  if (v.norm() < 0.3) v = n1.cross(Vec3::UnitX());
  const Vec3 n2 = (v.normalized() - 0.15 * n1).normalized();  // n1 . n2 < 0: the wall leans away
  const Plane ground{n1, n1.dot(com) - 0.3}, wall{n2, n2.dot(com) - 1.5};
  rm.spec.planes = {ground, wall};

  auto tangent = [&](const Vec3& n, double rmax) {
    Vec3 t;
    do {
      t = uniform_vec(rng, -rmax, rmax);
      t -= n * n.dot(t);
    } while (t.norm() > rmax);
    return t;
  };
  // sphere on link j whose centre is at world point q (at theta)
  auto place = [&](int j, const Vec3& q, double r) {
    rm.spec.spheres.push_back({j, kin.R[j].transpose() * (q - kin.t[j]), r});
  };
  int s = 0;
  auto radius = [&] { return (s++ % 2 == 0) ? 0.0 : uniform(rng, 0.01, 0.08); };
  const int L = rm.model.n_link;
  for (int i = 0; i < 6; ++i) {  // ground contacts, depth 2..8 mm
    const double r = radius(), d = uniform(rng, 0.002, 0.008);
    const Vec3 q0 = com - 0.3 * n1 + tangent(n1, 0.5);  // on the ground plane
    place((i + 1) % L, q0 + n1 * (r - d), r);
  }
  for (int i = 0; i < 2; ++i) {  // wall contacts
    const double r = radius(), d = uniform(rng, 0.002, 0.008);
    const Vec3 q0 = com - 1.5 * n2 + tangent(n2, 0.3);
    place((i + 3) % L, q0 + n2 * (r - d), r);
  }
  for (int i = 0; i < 3; ++i) {  // inactive, above the ground
    const double r = radius();
    const Vec3 q0 = com - 0.3 * n1 + tangent(n1, 0.5);
    place((i + 5) % L, q0 + n1 * (r + uniform(rng, 0.02, 0.2)), r);
  }
  sc.m = Model::finalize(rm.spec);
  sc.th_n = sc.th - uniform_vecx(rng, sc.m.n_q, -0.02, 0.02);
  sc.th_nm1 = sc.th_n - uniform_vecx(rng, sc.m.n_q, -0.02, 0.02);
  sc.tau = uniform_vecx(rng, sc.m.n_q, -2, 2);

  // the intended contact set, checked independently of the library's contact loop
  Kinematics kn(sc.m);
  forward_kinematics(sc.m, sc.th_n, kn);
  forward_kinematics(sc.m, sc.th, kin);
  for (size_t k = 0; k < sc.m.spheres.size(); ++k) {
    const ContactSphere& sp = sc.m.spheres[k];
    const Vec3 c = point_position(kin, sp.link, sp.centre);
    const Vec3 cn = point_position(kn, sp.link, sp.centre);
    for (const Plane& pl : sc.m.planes) {
      const double phi = sphere_plane_phi(c, sp.radius, pl.normal, pl.offset);
      if (phi < 0) {
        ++sc.n_active;
        REQUIRE(-phi >= 0.0019);
        REQUIRE(-phi <= 0.0081);
        const Vec3 dc = c - cn;
        REQUIRE((dc - pl.normal * pl.normal.dot(dc)).norm() > 1e-3);  // slip u != 0
      } else {
        REQUIRE(phi > 0.01);  // far from the d = 0 kink compared with the FD step
      }
    }
  }
  REQUIRE(sc.n_active == 8);
  return sc;
}

// FD step for this file: the penetration depths are only 2..8 mm and the slips are ~1 cm, and a
// DOF step h moves a contact point by up to ~2h (lever arms < 2 m), so the contact terms vary on
// a 2 mm scale: h = 1e-6 gives truncation ~ (2e-6 / 2e-3)^2 ~ 1e-6 relative on the contact part
// alone (far less on the whole, which inertia dominates) and round-off eps |E| / h ~ 1e-8 of the
// gradient scale; with h = 1e-5 the truncation term would reach 1e-4.
constexpr double kH = 1e-6;

// C_perp, C_par chosen so the normal (2 C_perp d ~ 1e4), tangential (C_par d^2 ~ 1e4..1e5 for
// beta = gamma = 1) and inertial (H / dt^2 ~ 1e4) parts of the Hessian are comparable: an error
// in any one of them is visible at O(1e-2) in the total. For other exponents C_par is rescaled by
// d^(1-gamma) |u|^(1-beta) at d = 5 mm, |u| = 1 cm to keep the tangential part at that size.
// c_par < 0 selects that default.
ContactParams params(double beta = 1, double gamma = 1, double c_par = -1) {
  ContactParams cp;
  cp.c_perp = 1e6;
  cp.c_par = c_par >= 0 ? c_par : 1e9 / (std::pow(0.005, gamma - 1) * std::pow(0.01, beta - 1));
  cp.alpha = 2;
  cp.beta = beta;
  cp.gamma = gamma;
  return cp;
}

const double kExponents[][2] = {{1, 1}, {1.5, 2}, {1.3, 1.7}};
constexpr double kDt = 0.01;

}  // namespace

TEST_CASE("objectives: pbd_energy_derivatives gradient and exact Hessian vs central differences",
          "[objectives][pbd][fd]") {
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    const Scene sc = contact_scene(seed);
    const Model& m = sc.m;
    PbdWorkspace ws(m);
    for (const auto& bg : kExponents) {
      for (double c_par : {0.0, -1.0}) {  // no friction, default C_par
        const ContactParams cp = params(bg[0], bg[1], c_par);
        const PbdStepInput in = make_step_input(m, sc.th_n, sc.th_nm1, kDt, sc.tau, cp, ws);
        INFO("seed " << seed << " beta " << cp.beta << " gamma " << cp.gamma << " c_par " << cp.c_par);
        double E;
        VecX g;
        MatX B;
        pbd_energy_derivatives(m, in, sc.th, ws, E, g, &B, HessianKind::Exact);
        CHECK(E == Approx(pbd_energy(m, in, sc.th, ws)).epsilon(1e-15));
        CHECK(energy_grad(m, in, sc.th, ws) == g);  // kind None gives the same gradient
        // the subtree moments == the per-link sums they replace (oracle: tests/support/pbd_eval.h)
        VecX g_ref;
        MatX B_ref;
        pbd_derivatives_per_link(m, in, sc.th, ws, g_ref, B_ref, HessianKind::Exact);
        CHECK(rel_err(g, g_ref) < 1e-12);
        CHECK(rel_err(B, B_ref) < 1e-12);

        const VecX g_fd = fd_gradient([&](const VecX& x) { return pbd_energy(m, in, x, ws); }, sc.th, kH);
        const double eg = rel_err(g, g_fd);
        INFO("gradient rel err " << eg);
        CHECK(eg < fd_tol());

        const MatX B_fd = fd_jacobian([&](const VecX& x) { return energy_grad(m, in, x, ws); }, sc.th, kH);
        const double eh = rel_err(B, B_fd);
        INFO("exact Hessian rel err " << eh);
        CHECK(eh < fd_tol());
        CHECK((B - B.transpose()).cwiseAbs().maxCoeff() <= tol(1e-13) * B.cwiseAbs().maxCoeff());
      }
    }
  }
}

TEST_CASE("objectives: pbd Gauss-Newton matrix is symmetric PSD and = H/dt^2 + PSD contact part",
          "[objectives][pbd]") {
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    const Scene sc = contact_scene(seed);
    const Model& m = sc.m;
    PbdWorkspace ws(m);
    for (const auto& bg : kExponents) {
      const ContactParams cp = params(bg[0], bg[1]);
      const PbdStepInput in = make_step_input(m, sc.th_n, sc.th_nm1, kDt, sc.tau, cp, ws);
      INFO("seed " << seed << " beta " << cp.beta << " gamma " << cp.gamma);
      double E;
      VecX g, g_exact;
      MatX B, B_exact;
      pbd_energy_derivatives(m, in, sc.th, ws, E, g, &B, HessianKind::GaussNewton);
      pbd_energy_derivatives(m, in, sc.th, ws, E, g_exact, &B_exact, HessianKind::Exact);
      CHECK(g == g_exact);
      MatX B_ref;  // the per-link form (oracle: tests/support/pbd_eval.h)
      pbd_derivatives_per_link(m, in, sc.th, ws, g_exact, B_ref, HessianKind::GaussNewton);
      CHECK(rel_err(B, B_ref) < 1e-12);
      const double scale = B.cwiseAbs().maxCoeff();
      CHECK((B - B.transpose()).cwiseAbs().maxCoeff() <= tol(1e-13) * scale);
      Eigen::SelfAdjointEigenSolver<MatX> es(0.5 * (B + B.transpose()));
      INFO("min eigenvalue " << es.eigenvalues().minCoeff() << " scale " << scale);
      CHECK(es.eigenvalues().minCoeff() >= -1e-9 * scale);

      // B - H/dt^2 is the contact part C_perp alpha d^(alpha-1) J^T n n^T J + C_par J^T [hess e]_+ J
      forward_kinematics(m, sc.th, ws.kin);
      link_derivatives(m, ws.kin);
      MatX H;
      mass_matrix(m, ws.kin, H);
      const MatX C = B - H / (kDt * kDt);
      Eigen::SelfAdjointEigenSolver<MatX> ec(0.5 * (C + C.transpose()));
      INFO("contact part: min eigenvalue " << ec.eigenvalues().minCoeff() << " max |C| "
                                            << C.cwiseAbs().maxCoeff());
      CHECK(ec.eigenvalues().minCoeff() >= -1e-9 * scale);
      CHECK(C.cwiseAbs().maxCoeff() > 1e-3 * scale);  // contacts are active and visible
      // and it is not the exact Hessian (which has the indefinite / second-derivative terms)
      CHECK(rel_err(B, B_exact) > 1e-3);
    }
  }
  // no contact: exactly the mass matrix over dt^2
  const Model m = random_model(5).model;  // no spheres, no planes
  Rng rng(55);
  const VecX th = random_theta(m, rng);
  const VecX th_n = th + uniform_vecx(rng, m.n_q, -0.1, 0.1);
  const VecX th_nm1 = th_n + uniform_vecx(rng, m.n_q, -0.1, 0.1);
  PbdWorkspace ws(m);
  const PbdStepInput in = make_step_input(m, th_n, th_nm1, kDt, VecX(), params(), ws);
  double E;
  VecX g;
  MatX B, H;
  pbd_energy_derivatives(m, in, th, ws, E, g, &B, HessianKind::GaussNewton);
  forward_kinematics(m, th, ws.kin);
  link_derivatives(m, ws.kin);
  mass_matrix(m, ws.kin, H);
  CHECK(rel_err(B, H / (kDt * kDt)) < tol(1e-14));
}

TEST_CASE("objectives: pbfd_residual equals grad E without friction (Eq. 13 vs Eq. 6)",
          "[objectives][pbfd]") {
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    const Scene sc = contact_scene(seed);
    const Model& m = sc.m;
    PbdWorkspace ws(m);
    const ContactParams cp = params(1, 1, 0.0);  // c_par = 0; normal contacts stay active
    const PbdStepInput in = make_step_input(m, sc.th_n, sc.th_nm1, kDt, sc.tau, cp, ws);
    for (const VecX& th : {sc.th, sc.th_n, VecX(2 * sc.th_n - sc.th_nm1)}) {
      VecX r, g;
      MatX Jr, B;
      double E;
      pbfd_residual(m, in, th, ws, r, &Jr);
      pbd_energy_derivatives(m, in, th, ws, E, g, &B, HessianKind::Exact);
      const double er = rel_err(r, g), eJ = rel_err(Jr, B);
      INFO("seed " << seed << " r vs grad E rel err " << er << ", J_r vs exact Hessian " << eJ);
      CHECK(er < tol(1e-9));
      CHECK(eJ < tol(1e-9));
      VecX r_only;
      pbfd_residual(m, in, th, ws, r_only, nullptr);
      CHECK(r_only == r);
    }
  }
}

TEST_CASE("objectives: with friction, grad E - r = -C_par sum_p J_p^T f*_p (D7 in theta)",
          "[objectives][pbfd][D7]") {
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    const Scene sc = contact_scene(seed);
    const Model& m = sc.m;
    PbdWorkspace ws(m);
    for (const auto& bg : kExponents) {
      const ContactParams cp = params(bg[0], bg[1]);
      const PbdStepInput in = make_step_input(m, sc.th_n, sc.th_nm1, kDt, sc.tau, cp, ws);
      VecX r, g;
      double E;
      pbfd_residual(m, in, sc.th, ws, r, nullptr);
      pbd_energy_derivatives(m, in, sc.th, ws, E, g, nullptr, HessianKind::None);
      // reference: own loop over sphere / plane pairs and the spurious normal push f*
      Kinematics kin(m), kn(m);
      forward_kinematics(m, sc.th, kin);
      forward_kinematics(m, sc.th_n, kn);
      VecX star = VecX::Zero(m.n_q);
      MatX J(3, m.n_q);
      for (const ContactSphere& sp : m.spheres) {
        const Vec3 c = point_position(kin, sp.link, sp.centre);
        const Vec3 cn = point_position(kn, sp.link, sp.centre);
        for (const Plane& pl : m.planes) {
          const double d = -sphere_plane_phi(c, sp.radius, pl.normal, pl.offset);
          if (d <= 0) continue;
          const Vec3 u = (Mat3::Identity() - pl.normal * pl.normal.transpose()) * (c - cn);
          point_jacobian(m, kin, sp.link, c, J);
          star += J.transpose() * spurious_normal_force(u, d, pl.normal, cp);
        }
      }
      const VecX diff = g - r;
      const VecX ref = -cp.c_par * star;
      const double scale = std::max({g.cwiseAbs().maxCoeff(), r.cwiseAbs().maxCoeff(), ref.cwiseAbs().maxCoeff()});
      INFO("seed " << seed << " beta " << cp.beta << " gamma " << cp.gamma << " |ref| "
                   << ref.cwiseAbs().maxCoeff() << " scale " << scale);
      CHECK(ref.cwiseAbs().maxCoeff() > 1e-3 * scale);  // the f* term is not negligible here
      CHECK((diff - ref).cwiseAbs().maxCoeff() <= tol(1e-9) * scale);
    }
  }
}

TEST_CASE("objectives: pbfd_residual J_r vs central differences of r (friction, contacts active)",
          "[objectives][pbfd][fd][coulomb]") {
  // the power law at each exponent set, and the Coulomb law (docs/methods/pbfd.md §4.9, C_par unused):
  // slips >= 1 mm against delta = v_s dt, v_s = 0.5 m/s gives delta = 5 mm (the law's curved core;
  // FD truncation (1e-6 / 5e-3)^2 ~ 4e-8) and 0.02 m/s gives 0.2 mm (saturated)
  std::vector<ContactParams> laws;
  for (const auto& bg : kExponents) laws.push_back(params(bg[0], bg[1]));
  for (const double v_s : {0.5, 0.02}) {
    ContactParams cp = params(1, 1, 0.0);
    cp.friction = FrictionLaw::Coulomb;
    cp.mu = 0.8;
    cp.stiction_velocity = v_s;
    laws.push_back(cp);
  }
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    const Scene sc = contact_scene(seed);
    const Model& m = sc.m;
    PbdWorkspace ws(m);
    for (const ContactParams& cp : laws) {
      const PbdStepInput in = make_step_input(m, sc.th_n, sc.th_nm1, kDt, sc.tau, cp, ws);
      INFO("seed " << seed << " beta " << cp.beta << " gamma " << cp.gamma << " coulomb "
                   << (cp.friction == FrictionLaw::Coulomb) << " v_s " << cp.stiction_velocity);
      VecX r;
      MatX Jr;
      pbfd_residual(m, in, sc.th, ws, r, &Jr);
      const MatX Jr_fd = fd_jacobian([&](const VecX& x) { return residual(m, in, x, ws); }, sc.th, kH);
      const double err = rel_err(Jr, Jr_fd);
      INFO("J_r rel err " << err);
      CHECK(err < fd_tol());
      // friction makes J_r non-symmetric, visibly so at this C_par (and mu)
      CHECK((Jr - Jr.transpose()).cwiseAbs().maxCoeff() > 1e-3 * Jr.cwiseAbs().maxCoeff());
    }
  }
}

TEST_CASE("objectives: second-order step constants keep grad E and J_r the central differences",
          "[objectives][pbfd][fd][order2]") {
  // integrator.order 2 changes only the anchor, theta~, theta_v and the steps dt_a, dt_v
  // (docs/methods/pbfd.md §3.1): the derivatives must follow, and r must differ from the first order's
  for (uint32_t seed = 1; seed <= 2; ++seed) {
    const Scene sc = contact_scene(seed);
    const Model& m = sc.m;
    PbdWorkspace ws(m);
    const ContactParams cp = params();
    const VecX th_nm2 = sc.th_nm1 - 0.5 * (sc.th_n - sc.th_nm1) + 0.01 * VecX::Ones(m.n_q);
    PbdStepInput in1 = make_step_input(m, sc.th_n, sc.th_nm1, kDt, sc.tau, cp, ws);
    PbdStepInput in2 = in1;
    make_step_input(m, sc.th_n, sc.th_nm1, kDt, sc.tau, cp, ws, in2, 2, &th_nm2);
    CHECK(in2.dt_a == Approx(kDt / std::sqrt(2.0)));
    CHECK(in2.dt_v == Approx(2 * kDt / 3));
    VecX r, r1;
    MatX Jr;
    pbfd_residual(m, in2, sc.th, ws, r, &Jr);
    pbfd_residual(m, in1, sc.th, ws, r1, nullptr);
    CHECK((r - r1).norm() > 1e-3 * r1.norm());
    const MatX Jr_fd = fd_jacobian([&](const VecX& x) { return residual(m, in2, x, ws); }, sc.th, kH);
    CHECK(rel_err(Jr, Jr_fd) < fd_tol());
    double E;
    VecX g;
    MatX H;
    pbd_energy_derivatives(m, in2, sc.th, ws, E, g, &H, HessianKind::Exact);
    const VecX g_fd = fd_gradient([&](const VecX& x) { return pbd_energy(m, in2, x, ws); }, sc.th, kH);
    CHECK(rel_err(g, g_fd) < fd_tol());
    const MatX H_fd = fd_jacobian([&](const VecX& x) { return energy_grad(m, in2, x, ws); }, sc.th, kH);
    CHECK(rel_err(H, H_fd) < fd_tol());
  }
}

TEST_CASE("objectives: the damped normal force keeps J_r the central differences of r",
          "[objectives][pbfd][fd][damping]") {
  // f_n = C_perp d^alpha max(0, 1 - zeta eta / dt) (docs/methods/pbfd.md §4.2): zeta large enough that
  // the factor differs from 1 by O(1) on the test's contacts, but stays > 0 on every one of them
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    const Scene sc = contact_scene(seed);
    const Model& m = sc.m;
    PbdWorkspace ws(m);
    ContactParams cp = params();
    VecX r0, r;
    MatX Jr;
    const PbdStepInput in0 = make_step_input(m, sc.th_n, sc.th_nm1, kDt, sc.tau, cp, ws);
    pbfd_residual(m, in0, sc.th, ws, r0, nullptr);
    cp.damping = 0.05;
    const PbdStepInput in = make_step_input(m, sc.th_n, sc.th_nm1, kDt, sc.tau, cp, ws);
    pbfd_residual(m, in, sc.th, ws, r, &Jr);
    CHECK((r - r0).norm() > 1e-4 * r0.norm());  // ~ 10 % of the contact forces; inertia dominates r
    const MatX Jr_fd = fd_jacobian([&](const VecX& x) { return residual(m, in, x, ws); }, sc.th, kH);
    INFO("seed " << seed << " J_r rel err " << rel_err(Jr, Jr_fd));
    CHECK(rel_err(Jr, Jr_fd) < fd_tol());
  }
}
