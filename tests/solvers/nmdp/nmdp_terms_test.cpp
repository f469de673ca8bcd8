// NMDP terms vs central differences (docs/methods/nmdp.md §11 ND4): g_K, W_{k,j} (and Q_K through an
// independent point-mass quadrature), A (FO) and A-bar (ZO) vs G, grad_w G = -B, dv/dX and the
// stable-PD Jacobian, for NE-NMDP (Eq. 6) and PBD-NMDP (Eq. 12) on random floating-base models
// with penetrating, ghost and inactive contact points on an oblique plane.
#include <catch2/catch.hpp>

#include <cmath>

#include "solvers/nmdp/nmdp_terms.h"
#include "tests/support/random_models.h"

using namespace bigstep;
using namespace bigstep::test;

namespace {

// FD step: contact depths are 5..30 mm and a DOF step moves a point by up to ~2x the step, so
// the d^3 terms vary on a 5 mm scale: kH = 1e-6 keeps their truncation error near
// (2e-6 / 5e-3)^2 ~ 2e-7 relative, while round-off stays ~ eps |G| / kH ~ 1e-10 of A's scale
// (|G| ~ 1e3, |A| ~ H / h^2 ~ 1e4 here). The bound fd_tol() = 1e-6 relative to the largest entry
// keeps a margin on both; a wrong term (sign, factor, a dropped M(v)) shows at O(1e-3..1).
constexpr double kH = 1e-6;
constexpr double kStep = 0.01;  // substep h [s]

struct ContactScene {
  RandomModel rm;
  Model m;
  VecX th;         // evaluation point
  NmdpStepInput in;
  VecX w;          // random weights
  MdpPolytope poly;
  int n_pen = 0;   // candidates with d > 0 at th
  int n_ghost = 0; // candidates with d = 0 but a ghost cap
};

// k_c with k_c d^3 ~ W at d = 2 cm; ghost cap zeta_s = 0.1 (2 cm)^3; mu 0.6, V = 4
MdpPolytope fd_polytope(const Model& m) {
  NeSettings ne;
  ne.mu = 0.6;
  ne.friction_directions = 4;
  ne.d_ref = 0.02;
  ne.k_c = m.weight() / std::pow(0.02, 3);
  ne.zeta = 0.1;
  return make_mdp_polytope(m, ne);
}

ContactScene contact_scene(uint32_t seed) {
  ContactScene sc;
  RandomModelOptions opt;
  opt.root = JointType::Floating;
  sc.rm = random_model(seed, opt);
  Rng rng(seed * 104729u + 7u);
  sc.th = random_theta(sc.rm.model, rng);
  Kinematics kin(sc.rm.model);
  forward_kinematics(sc.rm.model, sc.th, kin);
  const Vec3 com = centre_of_mass(sc.rm.model, kin);
  const Vec3 n = Vec3(uniform(rng, 0.1, 0.3), -uniform(rng, 0.1, 0.3), 1).normalized();
  sc.rm.spec.planes = {{n, n.dot(com) - 0.3}};
  const int L = sc.rm.model.n_link;
  auto on_ground = [&] {
    Vec3 t = uniform_vec(rng, -0.5, 0.5);
    return Vec3(com - 0.3 * n + t - n * n.dot(t));
  };
  auto place = [&](int j, const Vec3& q, double r) {
    sc.rm.spec.spheres.push_back({j, kin.R[j].transpose() * (q - kin.t[j]), r});
  };
  for (int i = 0; i < 4; ++i) {  // penetrating by 5..30 mm, radius 0 and > 0 alternating
    const double r = i % 2 ? uniform(rng, 0.01, 0.05) : 0.0, d = uniform(rng, 0.005, 0.03);
    place((i + 1) % L, on_ground() + n * (r - d), r);
  }
  for (int i = 0; i < 2; ++i) place((i + 2) % L, on_ground() + n * uniform(rng, 0.01, 0.05), 0.0);  // ghosts
  place(3 % L, on_ground() + n * 0.5, 0.02);  // far: no force at all
  sc.m = Model::finalize(sc.rm.spec);
  const int nq = sc.m.n_q;
  // k_c with k_c d^3 ~ W at d = 2 cm; ghost cap zeta_s = 0.1 (2 cm)^3 within 10 cm of the plane
  sc.poly = fd_polytope(sc.m);
  sc.in.h = kStep;
  sc.in.dt_last = 1.5 * kStep;  // alpha = 2/3: exercises alpha != 1
  sc.in.theta_m = sc.th - uniform_vecx(rng, nq, -0.02, 0.02);
  sc.in.theta_mm = sc.in.theta_m - uniform_vecx(rng, nq, -0.02, 0.02);
  sc.in.tau = uniform_vecx(rng, nq, -2, 2);
  sc.in.kp = uniform_vecx(rng, nq, 0, 50);
  sc.in.kd = uniform_vecx(rng, nq, 0, 5);
  sc.in.theta_bar = sc.th + uniform_vecx(rng, nq, -0.1, 0.1);
  sc.in.theta_dot_bar = uniform_vecx(rng, nq, -1, 1);
  sc.w = uniform_vecx(rng, int(sc.m.spheres.size()) * sc.poly.n_dirs, 0, 0.3);
  // the intended contact classes, checked independently of the library
  forward_kinematics(sc.m, sc.th, kin);
  for (const ContactSphere& sp : sc.m.spheres) {
    const double phi = n.dot(point_position(kin, sp.link, sp.centre)) - sc.m.planes[0].offset - sp.radius;
    if (phi < 0) {
      ++sc.n_pen;
      REQUIRE(-phi >= 0.0049);
    } else if (phi < 0.1) {
      ++sc.n_ghost;
      REQUIRE(phi > 0.009);  // far from the d = 0 kink compared with the FD step
    }
  }
  REQUIRE(sc.n_pen == 4);
  REQUIRE(sc.n_ghost == 2);
  return sc;
}

NmdpProblem make_problem(const ContactScene& sc, NmdpForm form, AccelDenominator acc = AccelDenominator::Recommended) {
  // ghost_distance 0.1 m, evaluated at theta_- (points move < 5 cm between theta_- and theta)
  NmdpProblem P(sc.m, sc.poly, form, acc, 0.1);
  P.set_step(sc.in);
  return P;
}

const uint32_t kSeeds[] = {11, 23, 37};
const NmdpForm kForms[] = {NmdpForm::Ne, NmdpForm::Pbd};

}  // namespace

TEST_CASE("ND4: g_K vs central differences of K (both forms, with and without the servo metric)",
          "[nmdp][ND4][fd]") {
  for (uint32_t seed : kSeeds)
    for (NmdpForm form : kForms)
      for (bool servo : {false, true}) {
      ContactScene sc = contact_scene(seed);
      NmdpProblem P = make_problem(sc, form);
      P.set_servo_metric(servo);
      VecX g;
      MatX Q;
      P.K_derivatives(sc.th, g, Q);
      const VecX g_fd = fd_gradient([&](const VecX& x) { return P.K(x); }, sc.th, kH);
      INFO("seed " << seed << " form " << nmdp_form_name(form) << " servo metric " << servo);
      CHECK(rel_err(g, g_fd) < fd_tol());
      // Q_K symmetric PSD
      CHECK((Q - Q.transpose()).norm() <= 1e-12 * Q.norm());
      CHECK(Eigen::SelfAdjointEigenSolver<MatX>(Q).eigenvalues().minCoeff() >= -1e-10 * Q.norm());
    }
}

TEST_CASE("ND4: W_{k,j} vs central differences of T_dot_j(theta) (NE form)", "[nmdp][ND4][fd]") {
  for (uint32_t seed : kSeeds) {
    ContactScene sc = contact_scene(seed);
    NmdpProblem P = make_problem(sc, NmdpForm::Ne);
    std::vector<Mat3> Rd, WR;
    std::vector<Vec3> td, Wt;
    P.velocity_frames(sc.th, Rd, td, WR, Wt);
    const int n = sc.m.n_q;
    for (int j = 0; j < sc.m.n_link; ++j) {
      // column k of W_j (12 x n) vs FD of the flattened T_dot_j
      MatX W(12, n);
      for (int k = 0; k < n; ++k) W.col(k) = flat(WR[size_t(j) * n + k], Wt[size_t(j) * n + k]);
      const MatX W_fd = fd_jacobian(
          [&](const VecX& x) {
            std::vector<Mat3> r, a;
            std::vector<Vec3> t, b;
            P.velocity_frames(x, r, t, a, b);
            return flat(r[j], t[j]);
          },
          sc.th, kH);
      INFO("seed " << seed << " link " << j);
      CHECK(rel_err(W, W_fd) < fd_tol());
    }
  }
}

TEST_CASE("ND4: Q_K = sum_j <W_j, W_j> equals the J^T J of 8-point box quadrature (NE form)", "[nmdp][ND4]") {
  // independent check of Q_K: K = 1/2 sum_p m_p |X_dot_p|^2 over the 8 Gauss points of each link's
  // box (exact for the quadratic moment integrals, docs/methods/pbfd.md §3 check 3), X_dot_p = J_p theta_dot;
  // its Gauss-Newton matrix is sum_p m_p (dX_dot_p/dtheta)^T (dX_dot_p/dtheta), differentiated here
  // by central differences of X_dot_p(theta) (kH as above; X_dot_p is smooth on a 0.1 m scale).
  for (uint32_t seed : kSeeds) {
    ContactScene sc = contact_scene(seed);
    NmdpProblem P = make_problem(sc, NmdpForm::Ne);
    VecX g;
    MatX Q;
    P.K_derivatives(sc.th, g, Q);
    const Model& m = sc.m;
    const int n = m.n_q;
    MatX Q_ref = MatX::Zero(n, n);
    Kinematics kin(m);
    MatX J(3, n);
    for (int j = 0; j < m.n_link; ++j) {
      const auto pts = box_gauss_points(sc.rm.boxes[j]);
      for (const Vec3& x : pts) {
        auto xdot = [&](const VecX& th) {
          forward_kinematics(m, th, kin);
          point_jacobian(m, kin, j, point_position(kin, j, x), J);
          return VecX(J * ((th - sc.in.theta_m) / kStep));
        };
        const MatX D = fd_jacobian(xdot, sc.th, kH);
        Q_ref += sc.rm.boxes[j].mass / 8 * D.transpose() * D;
      }
    }
    INFO("seed " << seed);
    CHECK(rel_err(Q, Q_ref) < fd_tol());
  }
}

TEST_CASE("ND4: PBD Q_K = H / h^2 and g_K = H theta_dot / h to first order", "[nmdp][ND4]") {
  ContactScene sc = contact_scene(5);
  NmdpProblem P = make_problem(sc, NmdpForm::Pbd);
  VecX g;
  MatX Q;
  P.K_derivatives(sc.th, g, Q);
  Kinematics kin(sc.m);
  forward_kinematics(sc.m, sc.th, kin);
  link_derivatives(sc.m, kin);
  MatX H;
  mass_matrix(sc.m, kin, H);
  CHECK(rel_err(Q, H / (kStep * kStep)) < 1e-14);
}

TEST_CASE("ND4: A (FO) vs central differences of G, both forms, with contacts, ghosts and PD", "[nmdp][ND4][fd]") {
  for (uint32_t seed : kSeeds)
    for (NmdpForm form : kForms)
      for (AccelDenominator acc : {AccelDenominator::Recommended, AccelDenominator::Literal}) {
        ContactScene sc = contact_scene(seed);
        NmdpProblem P = make_problem(sc, form, acc);
        MatX A;
        P.A(sc.th, sc.w, PgmMode::Fo, A);
        const MatX A_fd = fd_jacobian(
            [&](const VecX& x) {
              VecX G;
              P.G(x, sc.w, G);
              return G;
            },
            sc.th, kH);
        INFO("seed " << seed << " form " << nmdp_form_name(form) << " literal " << (acc == AccelDenominator::Literal));
        CHECK(rel_err(A, A_fd) < fd_tol());
        // the contact part alone (G(w) - G(0) = -B w), so an error there cannot hide under H/h^2
        MatX A0;
        P.A(sc.th, VecX::Zero(P.n_w()), PgmMode::Fo, A0);
        const MatX Ac_fd = fd_jacobian(
            [&](const VecX& x) {
              VecX Gw, G0;
              P.G(x, sc.w, Gw);
              P.G(x, VecX::Zero(P.n_w()), G0);
              return VecX(Gw - G0);
            },
            sc.th, kH);
        CHECK(rel_err(A - A0, Ac_fd) < fd_tol());
      }
}

TEST_CASE("A's w-independent part is cached per theta and step: equal bit for bit to a fresh problem's A",
          "[nmdp][ND4]") {
  // PGM asks for A(theta, w) then A(theta, w') at the same theta (QP, then the projection's first
  // Newton step); the second call reuses the inertia/gravity/joint/servo part. It must equal a
  // fresh evaluation exactly, and moving theta, a new step or new mass scales must invalidate it.
  for (uint32_t seed : kSeeds)
    for (NmdpForm form : kForms) {
      INFO("seed " << seed << " form " << nmdp_form_name(form));
      ContactScene sc = contact_scene(seed);
      NmdpProblem P = make_problem(sc, form);
      const VecX w0 = VecX::Zero(P.n_w());
      MatX A, A_fresh;
      auto fresh = [&](const NmdpStepInput& in, const double* ms, const VecX& th) {
        NmdpProblem F(sc.m, sc.poly, form, AccelDenominator::Recommended, 0.1);
        if (ms) F.set_mass_scale(ms, sc.poly.k_c);
        F.set_step(in);
        F.A(th, sc.w, PgmMode::Fo, A_fresh);
      };
      P.A(sc.th, w0, PgmMode::Fo, A);  // fills the cache at th
      P.A(sc.th, sc.w, PgmMode::Fo, A);  // reuses it with other weights
      fresh(sc.in, nullptr, sc.th);
      CHECK(A == A_fresh);
      // theta moved and back
      VecX G;
      const VecX th2 = sc.th + VecX::Constant(sc.m.n_q, 1e-3);
      P.G(th2, sc.w, G);
      P.A(th2, sc.w, PgmMode::Fo, A);
      fresh(sc.in, nullptr, th2);
      CHECK(A == A_fresh);
      P.A(sc.th, sc.w, PgmMode::Fo, A);
      fresh(sc.in, nullptr, sc.th);
      CHECK(A == A_fresh);
      // new step constants at the same theta
      NmdpStepInput in2 = sc.in;
      in2.h *= 0.5;
      in2.kp *= 2;
      P.set_step(in2);
      P.A(sc.th, sc.w, PgmMode::Fo, A);
      fresh(in2, nullptr, sc.th);
      CHECK(A == A_fresh);
      // new mass scales at the same theta and step
      std::vector<double> ms(size_t(sc.m.n_link), 1.0);
      ms[1 % sc.m.n_link] = 1.7;
      P.set_mass_scale(ms.data(), sc.poly.k_c);
      P.A(sc.th, sc.w, PgmMode::Fo, A);
      fresh(in2, ms.data(), sc.th);
      CHECK(A == A_fresh);
      CHECK(A.norm() > 0);
    }
}

TEST_CASE("ND4: A-bar = A minus exactly the dv/dX term; A-bar is the Jacobian with frozen vertices",
          "[nmdp][ND4][fd]") {
  for (uint32_t seed : kSeeds)
    for (NmdpForm form : kForms) {
      ContactScene sc = contact_scene(seed);
      NmdpProblem P = make_problem(sc, form);
      MatX A, Abar, T;
      P.A(sc.th, sc.w, PgmMode::Fo, A);
      P.A(sc.th, sc.w, PgmMode::Zo, Abar);
      P.contact_dv_term(sc.th, sc.w, T);
      INFO("seed " << seed << " form " << nmdp_form_name(form));
      CHECK(T.norm() > 1e-3 * A.norm());                       // the dv term is not negligible here
      CHECK(rel_err(Abar, A + T) < 1e-13);                      // exactly that term, to round-off
      // independent: FD of G with the forces f_x frozen at th (only J_x(theta) varies)
      const int V = sc.poly.n_dirs;
      std::vector<Vec3> f0;
      const auto& cs = P.contacts(sc.th);
      for (int x = 0; x < P.n_contacts(); ++x) {
        Vec3 f = Vec3::Zero();
        for (int i = 0; i < V; ++i) f += sc.w[x * V + i] * cs[x].s * (cs[x].n + sc.poly.mu * cs[x].t[i]);
        f0.push_back(f);
      }
      const MatX Abar_fd = fd_jacobian(
          [&](const VecX& x) {
            VecX G;
            P.G(x, VecX::Zero(P.n_w()), G);
            const auto& c = P.contacts(x);
            for (int k = 0; k < P.n_contacts(); ++k)
              if (cs[k].s > 0) G -= c[k].J.transpose() * f0[k];
            return G;
          },
          sc.th, kH);
      CHECK(rel_err(Abar, Abar_fd) < fd_tol());
    }
}

TEST_CASE("ND4: grad_w G = -B and the B columns are J^T v", "[nmdp][ND4][fd]") {
  for (uint32_t seed : kSeeds)
    for (NmdpForm form : kForms) {
      ContactScene sc = contact_scene(seed);
      NmdpProblem P = make_problem(sc, form);
      MatX B;
      P.B(sc.th, B);
      // G is affine in w: any step is exact up to round-off (step 1e-3 on weights of O(0.1))
      const MatX Gw_fd = fd_jacobian(
          [&](const VecX& w) {
            VecX G;
            P.G(sc.th, w, G);
            return G;
          },
          sc.w, 1e-3);
      INFO("seed " << seed << " form " << nmdp_form_name(form));
      CHECK(rel_err(-B, Gw_fd) < 1e-9);
      // non-zero columns exactly for the penetrating and ghost candidates
      int nz = 0;
      for (int x = 0; x < P.n_contacts(); ++x) nz += B.middleCols(x * sc.poly.n_dirs, sc.poly.n_dirs).norm() > 0;
      CHECK(nz == sc.n_pen + sc.n_ghost);
    }
}

TEST_CASE("ND4: dv/dX vs central differences of the vertices", "[nmdp][ND4][fd]") {
  for (uint32_t seed : kSeeds) {
    ContactScene sc = contact_scene(seed);
    NmdpProblem P = make_problem(sc, NmdpForm::Ne);
    for (int x = 0; x < P.n_contacts(); ++x) {
      MatX V;
      std::vector<Mat3> dV;
      P.vertices(sc.th, x, V, dV);
      const MatX J = P.contacts(sc.th)[x].J;
      for (int i = 0; i < sc.poly.n_dirs; ++i) {
        // v depends on theta only through X: dv/dtheta = dv/dX J
        const MatX D_fd = fd_jacobian(
            [&](const VecX& th) {
              MatX Vx;
              std::vector<Mat3> d;
              P.vertices(th, x, Vx, d);
              return VecX(Vx.col(i));
            },
            sc.th, kH);
        const MatX D = dV[i] * J;
        INFO("seed " << seed << " contact " << x << " vertex " << i);
        if (D_fd.norm() == 0) CHECK(D.norm() == 0);  // ghosts and far points: constant vertices
        else CHECK(rel_err(D, D_fd) < fd_tol());
      }
      // d v^i/dX = -k_c s'(d) (n + mu t^i) n^T at d > 0 (docs/methods/nmdp.md §4, B6 exponent 3)
      const auto& c = P.contacts(sc.th)[x];
      if (c.d > 0)
        CHECK(rel_err(dV[0], -sc.poly.k_c * 3 * c.d * c.d * (c.n + sc.poly.mu * c.t[0]) * c.n.transpose()) < 1e-14);
    }
  }
}

TEST_CASE("ND4: stable-PD Jacobian -diag(K_p + K_d / h) vs central differences of tau(theta)", "[nmdp][ND4][fd]") {
  ContactScene sc = contact_scene(3);
  NmdpProblem P = make_problem(sc, NmdpForm::Pbd);
  // tau is affine in theta: the central difference is exact up to round-off
  const MatX D_fd = fd_jacobian([&](const VecX& x) { return P.torque(x); }, sc.th, 1e-4);
  PdServo pd;
  pd.kp = sc.in.kp;
  pd.kd = sc.in.kd;
  const MatX D = stable_pd_torque_jacobian_diag(pd, kStep).asDiagonal();
  CHECK(rel_err(D, D_fd) < 1e-9);
}

TEST_CASE("ND4: G = 0 at a solution of the PBD energy's stationarity; merit0 gradient is G(theta, 0)",
          "[nmdp][ND4][fd]") {
  for (uint32_t seed : kSeeds) {
    ContactScene sc = contact_scene(seed);
    NmdpProblem P = make_problem(sc, NmdpForm::Pbd);
    VecX G;
    P.G(sc.th, VecX::Zero(P.n_w()), G);
    const VecX g_fd = fd_gradient([&](const VecX& x) { return P.merit0(x); }, sc.th, kH);
    INFO("seed " << seed);
    CHECK(rel_err(G, g_fd) < fd_tol());
  }
}

TEST_CASE("polytope: k_c default W / (N_s d_ref^3) and zeta_s = zeta d_ref^3", "[nmdp]") {
  ContactScene sc = contact_scene(7);
  NeSettings ne;
  ne.k_c = 0;
  ne.d_ref = 0.005;
  ne.zeta = 1e-3;
  const MdpPolytope P = make_mdp_polytope(sc.m, ne);
  const double n_s = 0.5 * double(sc.m.spheres.size());
  CHECK(P.k_c == Approx(sc.m.weight() / (n_s * 1.25e-7)).epsilon(1e-14));
  CHECK(P.zeta_s == Approx(1e-3 * 1.25e-7).epsilon(1e-14));
  CHECK(P.scale(0.0, false) == 0.0);
  CHECK(P.scale(0.0, true) == Approx(P.k_c * P.zeta_s).epsilon(1e-15));
  CHECK(P.dscale(0.0) == 0.0);
}

// ---------------------------------------------------------------------------------------------
// Contact set candidates: two moving links, a world box, a joint stop, damping,
// armature and a spring. Every new term of G has its derivative in A; central differences check them all.
// ---------------------------------------------------------------------------------------------

namespace {

// A floating ball (r 0.1) resting in the crook of a hinge pendulum's sphere (r 0.1, two moving
// links, normal along the centre line: kappa > 0) and on a world box (sphere-box face), the
// pendulum 0.02 rad past its upper stop and its sphere 0.02 m into the box; damping, armature
// and a spring (relaxed at 0.1 rad) on the hinge. Depths 0.02: far from the d = 0 kink compared with the FD step.
struct GeomScene {
  Model m;
  VecX th;
  NmdpStepInput in;
  MdpPolytope poly;
};

GeomScene geom_scene(uint32_t seed) {
  GeomScene sc;
  ModelSpec spec;
  LinkSpec ball;
  ball.name = "ball";
  ball.joint = JointType::Floating;
  ball.mass = 1.0;
  ball.inertia = Vec3::Constant(0.004).asDiagonal();
  LinkSpec pend;
  pend.name = "pendulum";
  pend.joint = JointType::Hinge;
  pend.axis = Vec3::UnitY();
  pend.mass = 2.0;
  pend.com = Vec3(0, 0, -0.5);
  pend.inertia = Vec3::Constant(0.01).asDiagonal();
  pend.limited = true;
  pend.range[0] = -0.5;
  pend.range[1] = 0.5;
  pend.damping = 0.7;
  pend.armature = 0.3;
  pend.stiffness = 4.0;
  pend.springref = 0.1;
  spec.links = {ball, pend};
  GeomSpec gb;
  gb.link = 0;
  gb.type = GeomType::Sphere;
  gb.size = Vec3(0.1, 0, 0);
  GeomSpec gp = gb;
  gp.link = 1;
  gp.pos = Vec3(0, 0, -0.5);
  const double q = 0.52;  // 0.02 past the upper stop
  const Vec3 P(-0.5 * std::sin(q), 0, -0.5 * std::cos(q));   // R_y(q) (0, 0, -0.5)
  const Vec3 B = P + Vec3(0.18, 0, 0);  // ball centre: 0.02 into the pendulum sphere and the box
  GeomSpec box;
  box.link = -1;
  box.type = GeomType::Box;
  box.size = Vec3(1, 1, 0.2);
  box.pos = Vec3(0, 0, P.z() - 0.08 - 0.2);  // top 0.02 above the pendulum sphere's bottom
  spec.geoms = {gb, gp, box};
  spec.gravity = Vec3(0, 0, -9.81);
  sc.m = Model::finalize(spec);
  REQUIRE(sc.m.n_q == 7);
  REQUIRE(sc.m.n_limit == 1);
  Rng rng(seed);
  sc.th = VecX::Zero(7);
  sc.th.head(3) = B;
  sc.th.segment(3, 3) = uniform_vecx(rng, 3, -0.3, 0.3);
  sc.th[6] = q;
  sc.poly = fd_polytope(sc.m);
  const int nq = sc.m.n_q;
  sc.in.h = kStep;
  sc.in.dt_last = 1.5 * kStep;
  sc.in.theta_m = sc.th - uniform_vecx(rng, nq, -0.002, 0.002);
  sc.in.theta_mm = sc.in.theta_m - uniform_vecx(rng, nq, -0.02, 0.02);
  sc.in.tau = uniform_vecx(rng, nq, -2, 2);
  return sc;
}

}  // namespace

TEST_CASE("contact set candidates: two moving links, a world box, a joint stop, damping, armature, spring: A vs FD of G",
          "[nmdp][ND4][fd][contact]") {
  for (uint32_t seed : kSeeds)
    for (NmdpForm form : kForms)
      for (AccelDenominator acc : {AccelDenominator::Recommended, AccelDenominator::Literal}) {
        GeomScene sc = geom_scene(seed);
        NmdpProblem P(sc.m, sc.poly, form, acc, 0.1);
        P.set_step(sc.in);
        // ball-box, pendulum-box (world b), ball-pendulum (two links), the pendulum's upper stop
        REQUIRE(P.n_geom_candidates() == 3);
        REQUIRE(P.n_limit_candidates() == 1);
        const auto& cs = P.contacts(sc.th);
        int n_pen = 0, n_two = 0;
        for (int x = 0; x < P.n_contacts(); ++x) n_pen += cs[x].valid && cs[x].d > 0.019;
        for (int i = 0; i < P.n_geom_candidates(); ++i) n_two += P.contact_set().con[i].link_b >= 0;
        CHECK(n_pen == 4);
        CHECK(n_two == 1);
        Rng rng(seed + 5);
        const VecX w = uniform_vecx(rng, P.n_w(), 0, 0.3);
        MatX A, A0, Abar, T;
        P.A(sc.th, w, PgmMode::Fo, A);
        auto G_of = [&](const VecX& ww) {
          return [&P, ww](const VecX& x) {
            VecX G;
            P.G(x, ww, G);
            return G;
          };
        };
        INFO("seed " << seed << " form " << nmdp_form_name(form) << " literal " << (acc == AccelDenominator::Literal));
        CHECK(rel_err(A, fd_jacobian(G_of(w), sc.th, kH)) < fd_tol());
        // the contact part alone, and the joint terms alone (w = 0 against a model without them)
        P.A(sc.th, VecX::Zero(P.n_w()), PgmMode::Fo, A0);
        const MatX Ac_fd = fd_jacobian(
            [&](const VecX& x) {
              VecX Gw, G0;
              P.G(x, w, Gw);
              P.G(x, VecX::Zero(P.n_w()), G0);
              return VecX(Gw - G0);
            },
            sc.th, kH);
        CHECK(rel_err(A - A0, Ac_fd) < fd_tol());
        CHECK(rel_err(A0, fd_jacobian(G_of(VecX::Zero(P.n_w())), sc.th, kH)) < fd_tol());
        // ZO drops exactly the dv/dX terms (geoms and the stop)
        P.A(sc.th, w, PgmMode::Zo, Abar);
        P.contact_dv_term(sc.th, w, T);
        CHECK(T.norm() > 1e-3 * A.norm());
        CHECK(rel_err(Abar, A + T) < 1e-13);
        // grad_w G = -B (G is affine in w)
        MatX B;
        P.B(sc.th, B);
        CHECK(rel_err(-B, fd_jacobian(
                              [&](const VecX& ww) {
                                VecX G;
                                P.G(sc.th, ww, G);
                                return G;
                              },
                              w, 1e-3)) < 1e-9);
        // g_K, with the armature's 1/2 a theta_dot^2
        VecX g;
        MatX Q;
        P.K_derivatives(sc.th, g, Q);
        CHECK(rel_err(g, fd_gradient([&](const VecX& x) { return P.K(x); }, sc.th, kH)) < fd_tol());
        if (form == NmdpForm::Pbd) {
          // merit0's gradient is G(theta, 0), with the armature, damping and spring energies
          VecX G0;
          P.G(sc.th, VecX::Zero(P.n_w()), G0);
          CHECK(rel_err(G0, fd_gradient([&](const VecX& x) { return P.merit0(x); }, sc.th, kH)) < fd_tol());
        }
      }
}

TEST_CASE("contact set candidates: a joint stop pushes along s e_k; damping and armature in G", "[nmdp][contact]") {
  GeomScene sc = geom_scene(11);
  for (NmdpForm form : kForms) {
    NmdpProblem P(sc.m, sc.poly, form, AccelDenominator::Recommended, 0.1);
    P.set_step(sc.in);
    // the stop's column: only DOF 6 (the hinge), along s = -1 (upper stop), k_c s(d) long
    MatX B;
    P.B(sc.th, B);
    const NmdpContact& stop = P.contacts(sc.th)[sc.m.max_contacts];
    REQUIRE(stop.dof == 6);
    CHECK(stop.sgn == -1.0);
    CHECK(stop.d == Approx(0.02).epsilon(1e-12));
    VecX col = VecX::Zero(sc.m.n_q);
    col[6] = -sc.poly.k_c * (std::pow(0.02, 3) + sc.poly.zeta_s);
    CHECK(rel_err(B.col(stop.off), col) < 1e-12);
  }
}
