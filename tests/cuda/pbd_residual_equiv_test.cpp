// CUDA mirror vs CPU: the kernel's r and J_r equal the Eigen reference for K rollouts with
// different states (FP64: 1e-12 relative, as the CPU team emulation; FP32: 2e-3 relative, the
// squared-stiffness terms of J_r lose ~4 digits in float), and the CPU team emulation on the chain
// with armature, damping, springs and joint limits (same tolerances). Exits 77 (ctest: Skipped) with the
// reason when no CUDA device is present. The hopper cases add body pairs (capsule-capsule contacts
// between its links, found in the kernel), the a1_walk cases sphere-box pairs (a foot in another
// leg's or the trunk's box).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <functional>
#include <random>

#include "core/backend.h"
#include "cuda/pbd_residual.h"
#include "io/scene.h"
#include "envs/tasks.h"
#include "solvers/pbd/pbd_residual.h"
#include "solvers/pbd/pbd_residual_team.h"
#include "solvers/team/team.h"

using namespace bigstep;

#include "tests/support/cuda_main.h"

namespace {

// The floating chain with damping, armature, springs and limits on its hinges (some limits take
// c_perp; every third hinge without a spring).
Model chain_with_dof_terms(const Model& chain) {
  ModelSpec spec;
  spec.links = chain.link_specs();
  spec.spheres = chain.spheres;
  spec.planes = chain.planes;
  spec.gravity = chain.gravity;
  for (size_t j = 1; j < spec.links.size(); ++j) {
    spec.links[j].damping = 0.05 * double(j);
    spec.links[j].armature = 0.002 * double(j);
    spec.links[j].limited = j % 2 == 1;
    spec.links[j].range[0] = -0.04;
    spec.links[j].range[1] = 0.03;
    spec.links[j].limit_stiffness = j % 4 == 1 ? 0.0 : 50.0 * double(j);
    spec.links[j].stiffness = j % 3 == 2 ? 0.0 : 0.8 * double(j);
    spec.links[j].springref = 0.01 * double(j % 5) - 0.02;
  }
  return Model::finalize(spec);
}

// K rollouts of model m (the chain scene's settings) in different states, corners a few mm deep:
// the kernel's r and J_r against an oracle, the Eigen reference or (team_oracle) the CPU team
// emulation of the same code (the oracle for the per-DOF terms until the reference has them).
// state(k, rng): rollout k's configuration; null: the chain's (base 16 mm up, hinges ~0.05 rad)
template <class S>
void check(const Scene& sc, const Model& m, int K, uint32_t seed, bool team_oracle, double tol_rel,
           const std::function<VecX(int, std::mt19937&)>& state = nullptr) {
  const int D = m.n_q;
  PbdWorkspace ws(m);
  std::mt19937 rng(seed);
  std::normal_distribution<double> N(0, 1);
  PbfdBatchInput<S> in;
  in.K = K;
  const ContactParams cp = sc.settings.contact;
  const double dt = sc.settings.dt;
  in.dt = S(dt);
  in.c_perp = S(cp.c_perp);
  in.c_par = S(cp.c_par);
  in.alpha = S(cp.alpha);
  in.beta = S(cp.beta);
  in.gamma = S(cp.gamma);
  const ModelArrays<double> arrays(m);
  const ModelView<double> mv = arrays.view();
  std::vector<double> scratch(pbfd_scratch_size(mv));
  CpuTeam team;
  std::vector<VecX> r_ref(K);
  std::vector<MatX> J_ref(K);
  for (int k = 0; k < K; ++k) {
    VecX q = sc.theta0;
    if (state) {
      q = state(k, rng);
    } else {
      q[2] = 0.016 + 0.0001 * k;
      for (int i = 3; i < D; ++i) q[i] = 0.05 * N(rng);
    }
    VecX qn = q, qnm1 = q;
    for (int i = 0; i < D; ++i) {
      qn[i] -= 0.004 * N(rng);
      qnm1[i] = qn[i] - 0.004 * N(rng);
    }
    const PbdStepInput si = make_step_input(m, qn, qnm1, dt, VecX::Zero(D), cp, ws);
    std::vector<double> aR, at, cn;
    for (int j = 0; j < m.n_link; ++j)
      for (int a = 0; a < 3; ++a) {
        at.push_back(si.anchor.t[j][a]);
        for (int b = 0; b < 3; ++b) aR.push_back(si.anchor.R[j](a, b));
      }
    for (const Vec3& c : si.centre_n)
      for (int a = 0; a < 3; ++a) cn.push_back(c[a]);
    std::vector<double> pR, pt;  // link poses at theta_n (the body pairs' slip)
    for (int j = 0; j < m.n_link; ++j)
      for (int a = 0; a < 3; ++a) {
        pt.push_back(ws.kin_n.t[j][a]);
        for (int b = 0; b < 3; ++b) pR.push_back(ws.kin_n.R[j](a, b));
      }
    if (team_oracle) {
      const std::vector<double> tau(D, 0.0);
      PbfdStepConst<double> c{aR.data(), at.data(), cn.data(), tau.data(), dt, cp.c_perp, cp.c_par,
                              cp.alpha, cp.beta, cp.gamma};
      c.theta_n = qn.data();
      c.theta_nm1 = qnm1.data();
      c.dt_a = c.dt_v = dt;
      c.theta_v = qn.data();
      c.pose_n_R = pR.data();
      c.pose_n_t = pt.data();
      std::vector<double> r(D), J(size_t(D) * D);
      pbfd_residual_team(team, mv, c, q.data(), scratch.data(), r.data(), J.data());
      r_ref[k] = Eigen::Map<VecX>(r.data(), D);
      J_ref[k] = Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(J.data(), D, D);
    } else {
      pbfd_residual(m, si, q, ws, r_ref[k], &J_ref[k]);
    }
    for (double x : aR) in.anchor_R.push_back(S(x));
    for (double x : at) in.anchor_t.push_back(S(x));
    for (double x : cn) in.centre_n.push_back(S(x));
    for (double x : pR) in.pose_n_R.push_back(S(x));
    for (double x : pt) in.pose_n_t.push_back(S(x));
    for (int i = 0; i < D; ++i) {
      in.tau.push_back(0);
      in.theta.push_back(S(q[i]));
      in.theta_n.push_back(S(qn[i]));
      in.theta_nm1.push_back(S(qnm1[i]));
    }
  }
  std::vector<S> r, J;
  pbfd_residual_cuda(m, in, r, J);
  for (int k = 0; k < K; ++k) {
    double er = 0, eJ = 0;
    for (int i = 0; i < D; ++i) {
      er = std::max(er, std::abs(double(r[size_t(k) * D + i]) - r_ref[k][i]));
      for (int l = 0; l < D; ++l) eJ = std::max(eJ, std::abs(double(J[(size_t(k) * D + i) * D + l]) - J_ref[k](i, l)));
    }
    INFO("rollout " << k);
    CHECK(er <= tol_rel * (1 + r_ref[k].lpNorm<Eigen::Infinity>() + m.weight()));
    CHECK(eJ <= tol_rel * (1 + J_ref[k].lpNorm<Eigen::Infinity>()));
  }
}

// Gymnasium's hopper (three capsule-capsule body pairs) in random states with the leg folded until
// a body pair is in contact (the reference's contact set), friction on.
std::function<VecX(int, std::mt19937&)> hopper_states(const Model& m) {
  return [&m](int, std::mt19937& rng) {
    std::uniform_real_distribution<double> U(0, 1);
    const double lo[6] = {-0.1, 0.0, -0.3, -2.6, -2.6, -0.8}, hi[6] = {0.1, 0.3, 0.3, 0.0, 0.0, 0.8};
    PbdWorkspace ws(m);
    for (;;) {
      VecX q(6);
      for (int i = 0; i < 6; ++i) q[i] = lo[i] + (hi[i] - lo[i]) * U(rng);
      forward_kinematics(m, q, ws.kin);
      update_contacts(m, q, ws);
      for (int c = 0; c < ws.cs.n_con; ++c)
        if (ws.cs.con[size_t(c)].depth > 0 && ws.cs.con[size_t(c)].link_b >= 0) return q;
    }
  };
}

// configs/tasks/a1_walk.yaml's A1 in random leg poses (base lifted) until a foot (sphere) is a few
// mm into another link's box (a sphere-box body pair, the reference's contact set), friction on.
std::function<VecX(int, std::mt19937&)> a1_box_states(const Scene& sc) {
  return [&sc](int, std::mt19937& rng) {
    const Model& m = sc.model;
    std::uniform_real_distribution<double> U(0, 1);
    PbdWorkspace ws(m);
    for (;;) {
      VecX q = sc.theta0;
      q[2] = 0.6;
      for (int i = 6; i < m.n_q; ++i) q[i] = m.dof_range[2 * i] + (m.dof_range[2 * i + 1] - m.dof_range[2 * i]) * U(rng);
      forward_kinematics(m, q, ws.kin);
      update_contacts(m, q, ws);
      for (int c = 0; c < ws.cs.n_con; ++c) {
        const Contact& con = ws.cs.con[size_t(c)];
        const bool box = m.geom_type[con.geom_a] == GeomType::Box || m.geom_type[con.geom_b] == GeomType::Box;
        if (box && con.link_a >= 0 && con.link_b >= 0 && con.depth > 0.0005 && con.depth < 0.01) return q;
      }
    }
  };
}

Scene a1_scene() {
  return load_task(std::string(BIGSTEP_SOURCE_DIR) + "/configs/tasks/a1_walk.yaml", {"contact.c_par=1e5"}).scene;
}

Scene chain_scene() { return load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/chain_floating_ground.yaml"); }

}  // namespace

TEST_CASE("cuda pbfd residual with armature, damping, springs and limits equals the CPU team form (double)", "[cuda][dof]") {
  const Scene sc = chain_scene();
  check<double>(sc, chain_with_dof_terms(sc.model), 32, 3, true, 1e-12);
}
TEST_CASE("cuda pbfd residual with armature, damping, springs and limits equals the CPU team form (float)", "[cuda][dof]") {
  const Scene sc = chain_scene();
  check<float>(sc, chain_with_dof_terms(sc.model), 32, 3, true, 2e-3);
}
TEST_CASE("cuda pbfd residual equals the reference (double)", "[cuda]") {
  const Scene sc = chain_scene();
  check<double>(sc, sc.model, 64, 1, false, 1e-12);
}
TEST_CASE("cuda pbfd residual equals the reference (float)", "[cuda]") {
  const Scene sc = chain_scene();
  check<float>(sc, sc.model, 64, 1, false, 2e-3);
}
TEST_CASE("cuda pbfd residual with body pairs (gymnasium hopper) equals the reference (double)", "[cuda][body]") {
  const Scene sc = load_scene("gymnasium:hopper.xml", {"integrator.type=pbfd", "contact.c_par=1e5"});
  check<double>(sc, sc.model, 16, 4, false, 1e-12, hopper_states(sc.model));
}
TEST_CASE("cuda pbfd residual with body pairs (gymnasium hopper) equals the reference (float)", "[cuda][body]") {
  const Scene sc = load_scene("gymnasium:hopper.xml", {"integrator.type=pbfd", "contact.c_par=1e5"});
  check<float>(sc, sc.model, 16, 4, false, 2e-3, hopper_states(sc.model));
}
TEST_CASE("cuda pbfd residual with sphere-box pairs (a1_walk) equals the reference (double)", "[cuda][body][box]") {
  const Scene sc = a1_scene();
  check<double>(sc, sc.model, 16, 5, false, 1e-12, a1_box_states(sc));
}
TEST_CASE("cuda pbfd residual with sphere-box pairs (a1_walk) equals the reference (float)", "[cuda][body][box]") {
  const Scene sc = a1_scene();
  check<float>(sc, sc.model, 16, 5, false, 2e-3, a1_box_states(sc));
}
