// Kinematics derivatives vs central differences on random models (docs/methods/pbfd.md §2.2-§2.3, §9 D2):
// dT/dtheta (twist rule), second and third derivatives via dof_act, point Jacobians, point
// second derivatives (add_point_hessian) and gimbal-lock detection.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "core/kinematics.h"
#include "tests/support/random_models.h"

using namespace bigstep;
using namespace bigstep::test;

namespace {

// Every root kind, so that fixed-base (hinge / prismatic / ball) and floating / planar bases are
// all exercised; the children always contain ball, hinge, prismatic, planar and fixed joints.
const JointType kRoots[] = {JointType::Floating, JointType::Hinge, JointType::Planar,
                            JointType::Ball, JointType::Prismatic};

RandomModel model_for(uint32_t seed) {
  RandomModelOptions opt;
  opt.root = kRoots[seed % 5];
  return random_model(seed, opt);
}

// Independent forward kinematics from the joint table of docs/methods/pbfd.md §2.1 with Eigen::Isometry3d composition:
// T_j = T_parent * (t_o, R_o) * elementary_1(theta) * elementary_2(theta) * ...
std::vector<Eigen::Isometry3d> reference_fk(const ModelSpec& spec, const VecX& th) {
  const Vec3 ex = Vec3::UnitX(), ey = Vec3::UnitY(), ez = Vec3::UnitZ();
  std::vector<Eigen::Isometry3d> T;
  int k = 0;
  for (const LinkSpec& l : spec.links) {
    Eigen::Isometry3d X = l.parent < 0 ? Eigen::Isometry3d::Identity() : T[l.parent];
    X = X * Eigen::Translation3d(l.t_o) * Eigen::Isometry3d(l.R_o);
    auto rot = [&](const Vec3& a) { X = X * Eigen::AngleAxisd(th[k++], a.normalized()); };
    auto tra = [&](const Vec3& a) { X = X * Eigen::Translation3d(a.normalized() * th[k++]); };
    switch (l.joint) {
      case JointType::Fixed: break;
      case JointType::Hinge: rot(l.axis); break;
      case JointType::Prismatic: tra(l.axis); break;
      case JointType::Ball: rot(ez); rot(ey); rot(ex); break;
      case JointType::Floating: tra(ex); tra(ey); tra(ez); rot(ez); rot(ey); rot(ex); break;
      case JointType::Planar: tra(ex); tra(ez); rot(ey); break;
    }
    T.push_back(X);
  }
  return T;
}

// All first link derivatives at theta, as one vector: entry block (j * n_q + k) is flat(dR, dt).
VecX all_first(const Model& m, const VecX& th) {
  Kinematics kin(m);
  forward_kinematics(m, th, kin);
  link_derivatives(m, kin);
  VecX out(12 * m.n_link * m.n_q);
  for (int j = 0; j < m.n_link; ++j)
    for (int k = 0; k < m.n_q; ++k)
      out.segment<12>(12 * (j * m.n_q + k)) = flat(kin.dR[j * m.n_q + k], kin.dt[j * m.n_q + k]);
  return out;
}

// d_{ab} T_j by the twist rule: lo |> d_hi T_j (lo <= hi on the path), zero off the path.
void second(const Model& m, const Kinematics& kin, int j, int a, int b, Mat3& M, Vec3& v) {
  if (!m.moves(a, j) || !m.moves(b, j)) {
    M.setZero();
    v.setZero();
    return;
  }
  const int lo = std::min(a, b), hi = std::max(a, b);
  M = kin.dR[j * m.n_q + hi];
  v = kin.dt[j * m.n_q + hi];
  dof_act(m, kin, lo, M, v);
}

// All second link derivatives, entry block ((j * n_q + a) * n_q + b) is flat(d_ab R_j, d_ab t_j).
VecX all_second(const Model& m, const VecX& th) {
  Kinematics kin(m);
  forward_kinematics(m, th, kin);
  link_derivatives(m, kin);
  VecX out(12 * m.n_link * m.n_q * m.n_q);
  for (int j = 0; j < m.n_link; ++j)
    for (int a = 0; a < m.n_q; ++a)
      for (int b = 0; b < m.n_q; ++b) {
        Mat3 M;
        Vec3 v;
        second(m, kin, j, a, b, M, v);
        out.segment<12>(12 * ((j * m.n_q + a) * m.n_q + b)) = flat(M, v);
      }
  return out;
}

Vec3 world_point(const Model& m, const VecX& th, int j, const Vec3& x) {
  Kinematics kin(m);
  forward_kinematics(m, th, kin);
  return point_position(kin, j, x);
}

}  // namespace

TEST_CASE("kinematics: forward kinematics equals an independent transform composition",
          "[kinematics]") {
  // Not a derivative test, but the FD tests below are only as good as the function they
  // differentiate: check FK against Isometry3d products of the elementary sequences.
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    const RandomModel rm = model_for(seed);
    const Model& m = rm.model;
    Rng rng(1000 + seed);
    const VecX th = random_theta(m, rng);
    Kinematics kin(m);
    forward_kinematics(m, th, kin);
    const auto T = reference_fk(rm.spec, th);
    for (int j = 0; j < m.n_link; ++j) {
      INFO("seed " << seed << " link " << j);
      // round-off of a few 3x3 products on O(1) quantities
      CHECK((kin.R[j] - T[j].linear()).cwiseAbs().maxCoeff() < tol(1e-13));
      CHECK((kin.t[j] - T[j].translation()).cwiseAbs().maxCoeff() < tol(1e-13));
    }
  }
}

TEST_CASE("kinematics: link_derivatives (twist rule) match central differences of FK",
          "[kinematics][fd]") {
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    const RandomModel rm = model_for(seed);
    const Model& m = rm.model;
    Rng rng(2000 + seed);
    const VecX th = random_theta(m, rng);
    Kinematics kin(m);
    forward_kinematics(m, th, kin);
    link_derivatives(m, kin);
    for (int j = 0; j < m.n_link; ++j) {
      MatX analytic(12, m.n_q);
      for (int k = 0; k < m.n_q; ++k) analytic.col(k) = flat(kin.dR[j * m.n_q + k], kin.dt[j * m.n_q + k]);
      const MatX fd = fd_jacobian(
          [&](const VecX& x) {
            Kinematics k2(m);
            forward_kinematics(m, x, k2);
            return flat(k2.R[j], k2.t[j]);
          },
          th);
      const double err = rel_err(analytic, fd);
      INFO("seed " << seed << " link " << j << " (" << joint_type_name(m.link_joint[j])
                   << ") rel err " << err);
      CHECK(err < fd_tol());
    }
  }
}

TEST_CASE("kinematics: second derivatives a |> d_b T_j match central differences of "
          "link_derivatives", "[kinematics][fd]") {
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    const RandomModel rm = model_for(seed);
    const Model& m = rm.model;
    Rng rng(3000 + seed);
    const VecX th = random_theta(m, rng);
    // FD column a of block (j, b) is d/dtheta_a of d_b T_j; analytic is second(j, a, b), which
    // uses the twist rule with the smaller index acting, so a > b checks the symmetry too.
    const MatX fd = fd_jacobian([&](const VecX& x) { return all_first(m, x); }, th);
    Kinematics kin(m);
    forward_kinematics(m, th, kin);
    link_derivatives(m, kin);
    for (int j = 0; j < m.n_link; ++j)
      for (int b = 0; b < m.n_q; ++b) {
        MatX analytic(12, m.n_q);
        for (int a = 0; a < m.n_q; ++a) {
          Mat3 M;
          Vec3 v;
          second(m, kin, j, a, b, M, v);
          analytic.col(a) = flat(M, v);
        }
        const MatX fd_block = fd.middleRows(12 * (j * m.n_q + b), 12);
        const double err = rel_err(analytic, fd_block);
        INFO("seed " << seed << " link " << j << " dof " << b << " (" << m.dof_name[b]
                     << ") rel err " << err);
        CHECK(err < fd_tol());
      }
  }
}

TEST_CASE("kinematics: third derivatives a |> (b |> d_c T_j) match central differences",
          "[kinematics][fd]") {
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    const RandomModel rm = model_for(seed);
    const Model& m = rm.model;
    Rng rng(4000 + seed);
    const VecX th = random_theta(m, rng);
    const MatX fd = fd_jacobian([&](const VecX& x) { return all_second(m, x); }, th);
    Kinematics kin(m);
    forward_kinematics(m, th, kin);
    link_derivatives(m, kin);
    double worst = 0;
    for (int j = 0; j < m.n_link; ++j)
      for (int a = 0; a < m.n_q; ++a)
        for (int b = 0; b < m.n_q; ++b) {
          MatX analytic(12, m.n_q);
          for (int c = 0; c < m.n_q; ++c) {
            Mat3 M = Mat3::Zero();
            Vec3 v = Vec3::Zero();
            if (m.moves(a, j) && m.moves(b, j) && m.moves(c, j)) {
              int s[3] = {a, b, c};
              std::sort(s, s + 3);
              M = kin.dR[j * m.n_q + s[2]];
              v = kin.dt[j * m.n_q + s[2]];
              dof_act(m, kin, s[1], M, v);
              dof_act(m, kin, s[0], M, v);
            }
            analytic.col(c) = flat(M, v);
          }
          const MatX fd_block = fd.middleRows(12 * ((j * m.n_q + a) * m.n_q + b), 12);
          const double err = rel_err(analytic, fd_block);
          worst = std::max(worst, err);
          if (err >= fd_tol()) {
            INFO("seed " << seed << " link " << j << " dofs " << a << "," << b << " rel err " << err);
            CHECK(err < fd_tol());
          }
        }
    INFO("seed " << seed << " worst rel err " << worst);
    CHECK(worst < fd_tol());
  }
}

TEST_CASE("kinematics: point_jacobian matches central differences of point_position",
          "[kinematics][fd]") {
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    const RandomModel rm = model_for(seed);
    const Model& m = rm.model;
    Rng rng(5000 + seed);
    const VecX th = random_theta(m, rng);
    Kinematics kin(m);
    forward_kinematics(m, th, kin);
    for (int j = 0; j < m.n_link; ++j)
      for (int rep = 0; rep < 2; ++rep) {
        const Vec3 x = uniform_vec(rng, -0.5, 0.5);
        MatX J(3, m.n_q);
        point_jacobian(m, kin, j, point_position(kin, j, x), J);
        const MatX fd = fd_jacobian([&](const VecX& q) { return VecX(world_point(m, q, j, x)); }, th);
        const double err = rel_err(J, fd);
        INFO("seed " << seed << " link " << j << " rel err " << err);
        CHECK(err < fd_tol());
      }
  }
}

TEST_CASE("kinematics: add_point_hessian matches central differences of w^T J",
          "[kinematics][fd]") {
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    const RandomModel rm = model_for(seed);
    const Model& m = rm.model;
    Rng rng(6000 + seed);
    const VecX th = random_theta(m, rng);
    Kinematics kin(m);
    forward_kinematics(m, th, kin);
    for (int j = 0; j < m.n_link; ++j) {
      const Vec3 x = uniform_vec(rng, -0.5, 0.5);
      const Vec3 w = uniform_vec(rng, -2, 2);
      const double scale = uniform(rng, 0.5, 3.0) * (j % 2 ? -1 : 1);
      MatX J(3, m.n_q);
      point_jacobian(m, kin, j, point_position(kin, j, x), J);
      // start from a random matrix: add_point_hessian must accumulate (+=), not overwrite
      const MatX H0 = uniform_mat(rng, m.n_q, m.n_q, -1, 1);
      MatX H = H0;
      add_point_hessian(m, kin, j, J, w, scale, H);
      const MatX analytic = (H - H0) / scale;
      const MatX fd = fd_jacobian(
          [&](const VecX& q) {
            Kinematics k2(m);
            forward_kinematics(m, q, k2);
            MatX Jq(3, m.n_q);
            point_jacobian(m, k2, j, point_position(k2, j, x), Jq);
            return VecX(Jq.transpose() * w);
          },
          th);
      const double err = rel_err(analytic, fd);
      INFO("seed " << seed << " link " << j << " rel err " << err);
      CHECK(err < fd_tol());
    }
  }
}

TEST_CASE("kinematics: gimbal_locked flags |cos(middle Euler angle)| < 1e-6 only",
          "[kinematics]") {
  RandomModelOptions opt;
  opt.root = JointType::Floating;
  opt.children = {JointType::Hinge, JointType::Ball, JointType::Planar};
  const Model m = random_model(7, opt).model;
  REQUIRE(m.gimbal_dof.size() == 2);  // floating ry and ball ry
  Rng rng(7000);
  const VecX th0 = random_theta(m, rng);
  CHECK_FALSE(gimbal_locked(m, th0));
  for (int g : m.gimbal_dof) {
    INFO("gimbal dof " << g << " (" << m.dof_name[g] << ")");
    for (double q : {M_PI / 2, -M_PI / 2, 3 * M_PI / 2, M_PI / 2 + 5e-7, -M_PI / 2 - 5e-7}) {
      VecX th = th0;
      th[g] = q;
      INFO("angle " << q);
      CHECK(gimbal_locked(m, th));
    }
    for (double q : {M_PI / 2 - 2e-6, -M_PI / 2 + 2e-6, 0.0, M_PI, 1.5}) {
      VecX th = th0;
      th[g] = q;
      INFO("angle " << q);
      CHECK_FALSE(gimbal_locked(m, th));
    }
  }
  // pi/2 on any other revolute DOF (first / last Euler angles, hinges, planar ry) is harmless
  for (int k = 0; k < m.n_q; ++k) {
    if (std::find(m.gimbal_dof.begin(), m.gimbal_dof.end(), k) != m.gimbal_dof.end()) continue;
    VecX th = th0;
    th[k] = M_PI / 2;
    INFO("dof " << k << " (" << m.dof_name[k] << ")");
    CHECK_FALSE(gimbal_locked(m, th));
  }
}
