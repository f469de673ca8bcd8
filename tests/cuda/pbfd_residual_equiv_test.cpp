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

}  // namespace

TEST_CASE("cuda pbfd residual equals the reference (double)", "[cuda]") { check<double>(1e-12); }
TEST_CASE("cuda pbfd residual equals the reference (float)", "[cuda]") { check<float>(2e-3); }
