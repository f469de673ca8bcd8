// Host launcher of the CUDA mirror of solvers/pbd/pbd_residual_team.h (cuda/pbd_residual.cu).
#pragma once
#include <string>
#include <vector>

#include "core/model.h"

namespace bigstep {

/// Inputs of K rollouts, flat host arrays (row k = rollout k), laid out as PbfdStepConst.
template <class S>
struct PbfdBatchInput {
  int K = 0;
  std::vector<S> anchor_R;  // (K x n_link x 9)
  std::vector<S> anchor_t;  // (K x n_link x 3)
  std::vector<S> centre_n;  // (K x n_point x 3)
  std::vector<S> tau;       // (K x n_q)
  std::vector<S> theta;     // (K x n_q)
  // (K x n_q) theta_n and theta_{n-1} of each rollout's step: read by the armature / damping terms
  // (PbfdStepConst::theta_n, theta_nm1); may stay empty for a model without them
  std::vector<S> theta_n, theta_nm1;
  // (K x n_link x 9), (K x n_link x 3) link poses at theta_n: the body pairs' slip reference
  // (PbfdStepConst::pose_n_*); may stay empty for a model without body pairs or without friction
  std::vector<S> pose_n_R, pose_n_t;
  // (K x n_q) the second-order step's theta~ and theta_v (PbfdStepConst::theta_tilde, theta_v,
  // docs/methods/pbfd.md §3.1); empty: the first order's 2 theta_n - theta_{n-1} and theta_n
  std::vector<S> theta_tilde, theta_v;
  S dt, c_perp, c_par, alpha, beta, gamma;
  // the friction law (PbfdStepConst::coulomb, mu, delta = v_s dt): Coulomb in place of C_par f_par
  bool coulomb = false;
  S mu = S(0), delta = S(0);
  S dt_a = 0, dt_v = 0;  ///< the inertia / velocity terms' steps (PbfdStepConst); 0: dt (first order)
};

/// r (K x n_q) and J_r (K x n_q x n_q, rows) on device 0: one block per rollout, n_q lanes
/// rounded up to a warp. Throws std::runtime_error naming the failing CUDA call.
template <class S>
void pbfd_residual_cuda(const Model& m, const PbfdBatchInput<S>& in, std::vector<S>& r, std::vector<S>& Jr);

}  // namespace bigstep
