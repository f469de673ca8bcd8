// CUDA mirror vs CPU: the kernel's r and J_r equal the Eigen reference for K rollouts with
// different states (FP64: 1e-12 relative, as the CPU team emulation; FP32: 2e-3 relative, the
// squared-stiffness terms of J_r lose ~4 digits in float). Exits 77 (ctest: Skipped) with the
// reason when no CUDA device is present.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <random>

#include "core/backend.h"
#include "cuda/pbfd_residual.h"
#include "envs/scene.h"
#include "solvers/pbfd_residual.h"
#include "solvers/pbfd_residual_team.h"
#include "solvers/team.h"

using namespace bigstep;

#include "tests/support/cuda_main.h"

namespace {

template <class S>
void check(double tol_rel) {
  const Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/chain_floating_ground.yaml");
  const Model& m = sc.model;
  const int K = 64, D = m.n_q;
  PbdWorkspace ws(m);
  std::mt19937 rng(1);
  std::normal_distribution<double> N(0, 1);
  PbfdBatchInput<S> in;
  in.K = K;
  const ContactParams cp = sc.settings.contact;
  in.dt = S(sc.settings.dt);
  in.c_perp = S(cp.c_perp);
  in.c_par = S(cp.c_par);
  in.alpha = S(cp.alpha);
  in.beta = S(cp.beta);
  in.gamma = S(cp.gamma);
  std::vector<VecX> r_ref(K);
  std::vector<MatX> J_ref(K);
  for (int k = 0; k < K; ++k) {
    VecX q = sc.theta0;
    q[2] = 0.016 + 0.0001 * k;
    for (int i = 3; i < D; ++i) q[i] = 0.05 * N(rng);
    VecX qn = q, qnm1 = q;
    for (int i = 0; i < D; ++i) {
      qn[i] -= 0.004 * N(rng);
      qnm1[i] = qn[i] - 0.004 * N(rng);
    }
    const PbdStepInput si = make_step_input(m, qn, qnm1, sc.settings.dt, VecX::Zero(D), cp, ws);
    pbfd_residual(m, si, q, ws, r_ref[k], &J_ref[k]);
    for (int j = 0; j < m.n_link; ++j)
      for (int a = 0; a < 3; ++a) {
        in.anchor_t.push_back(S(si.anchor.t[j][a]));
        for (int b = 0; b < 3; ++b) in.anchor_R.push_back(S(si.anchor.R[j](a, b)));
      }
    for (const Vec3& c : si.centre_n)
      for (int a = 0; a < 3; ++a) in.centre_n.push_back(S(c[a]));
    for (int i = 0; i < D; ++i) in.tau.push_back(0);
    for (int i = 0; i < D; ++i) in.theta.push_back(S(q[i]));
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

// The per-DOF terms (armature, damping, joint limits; pbfd_dof_terms) on the device: the kernel
// equals the CPU team emulation of the same code (the oracle until the reference has the terms),
// on the floating chain with damping / armature / limits on its hinges and K different states.
template <class S>
void check_dof_terms(double tol_rel) {
  const Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/chain_floating_ground.yaml");
  ModelSpec spec;
  spec.links = sc.model.links;
  spec.spheres = sc.model.spheres;
  spec.planes = sc.model.planes;
  spec.gravity = sc.model.gravity;
  for (size_t j = 1; j < spec.links.size(); ++j) {
    spec.links[j].damping = 0.05 * double(j);
    spec.links[j].armature = 0.002 * double(j);
    spec.links[j].limited = j % 2 == 1;
    spec.links[j].range[0] = -0.04;
    spec.links[j].range[1] = 0.03;
    spec.links[j].limit_stiffness = j % 4 == 1 ? 0.0 : 50.0 * double(j);
  }
  const Model m = Model::finalize(spec);
  const int K = 32, D = m.n_q;
  PbdWorkspace ws(m);
  std::mt19937 rng(3);
  std::normal_distribution<double> N(0, 1);
  const ContactParams cp = sc.settings.contact;
  PbfdBatchInput<S> in;
  in.K = K;
  in.dt = S(sc.settings.dt);
  in.c_perp = S(cp.c_perp);
  in.c_par = S(cp.c_par);
  in.alpha = S(cp.alpha);
  in.beta = S(cp.beta);
  in.gamma = S(cp.gamma);
  const ModelArrays<double> arrays(m);
  const ModelView<double> mv = arrays.view();
  std::vector<double> scratch(pbfd_scratch_size(mv)), r_ref(size_t(K) * D), J_ref(size_t(K) * D * D);
  CpuTeam team;
  for (int k = 0; k < K; ++k) {
    VecX q = sc.theta0;
    q[2] = 0.016 + 0.0001 * k;
    for (int i = 3; i < D; ++i) q[i] = 0.05 * N(rng);
    VecX qn = q, qnm1 = q;
    for (int i = 0; i < D; ++i) {
      qn[i] -= 0.004 * N(rng);
      qnm1[i] = qn[i] - 0.004 * N(rng);
    }
    const PbdStepInput si = make_step_input(m, qn, qnm1, sc.settings.dt, VecX::Zero(D), cp, ws);
    std::vector<double> aR, at, cn;
    for (int j = 0; j < m.n_link; ++j)
      for (int a = 0; a < 3; ++a) {
        at.push_back(si.anchor.t[j][a]);
        for (int b = 0; b < 3; ++b) aR.push_back(si.anchor.R[j](a, b));
      }
    for (const Vec3& c : si.centre_n)
      for (int a = 0; a < 3; ++a) cn.push_back(c[a]);
    const std::vector<double> tau(D, 0.0);
    PbfdStepConst<double> c{aR.data(), at.data(), cn.data(), tau.data(), sc.settings.dt, cp.c_perp, cp.c_par,
                            cp.alpha, cp.beta, cp.gamma};
    c.theta_n = qn.data();
    c.theta_nm1 = qnm1.data();
    pbfd_residual_team(team, mv, c, q.data(), scratch.data(), r_ref.data() + size_t(k) * D,
                       J_ref.data() + size_t(k) * D * D);
    for (double x : aR) in.anchor_R.push_back(S(x));
    for (double x : at) in.anchor_t.push_back(S(x));
    for (double x : cn) in.centre_n.push_back(S(x));
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
    double er = 0, eJ = 0, nr = 0, nJ = 0;
    for (int i = 0; i < D; ++i) {
      const size_t ri = size_t(k) * D + i;
      er = std::max(er, std::abs(double(r[ri]) - r_ref[ri]));
      nr = std::max(nr, std::abs(r_ref[ri]));
      for (int l = 0; l < D; ++l) {
        eJ = std::max(eJ, std::abs(double(J[ri * D + l]) - J_ref[ri * D + l]));
        nJ = std::max(nJ, std::abs(J_ref[ri * D + l]));
      }
    }
    INFO("rollout " << k);
    CHECK(er <= tol_rel * (1 + nr + m.weight()));
    CHECK(eJ <= tol_rel * (1 + nJ));
  }
}

}  // namespace

TEST_CASE("cuda pbfd residual with armature, damping and limits equals the CPU team form (double)", "[cuda][dof]") {
  check_dof_terms<double>(1e-12);
}
TEST_CASE("cuda pbfd residual with armature, damping and limits equals the CPU team form (float)", "[cuda][dof]") {
  check_dof_terms<float>(2e-3);
}

TEST_CASE("cuda pbfd residual equals the reference (double)", "[cuda]") { check<double>(1e-12); }
TEST_CASE("cuda pbfd residual equals the reference (float)", "[cuda]") { check<float>(2e-3); }
