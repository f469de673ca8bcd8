// CUDA mirror of solvers/pbd/pbd_residual_team.h: the same team code, instantiated with CudaTeam.
// One block per rollout; scratch (poses, DOF twists, subtree moments) in dynamic shared memory.
#include "core/model_view.h"
#include "cuda/check.h"
#include "cuda/device_buffers.cuh"
#include "cuda/pbd_residual.h"
#include "cuda/team_cuda.cuh"
#include "solvers/pbd/pbd_residual_team.h"

namespace bigstep {

namespace {

template <class S>
__global__ void pbfd_residual_kernel(
    // model:
    const ModelView<S> m,
    // data in:
    const S* __restrict__ anchor_R, const S* __restrict__ anchor_t, const S* __restrict__ centre_n,
    const S* __restrict__ tau, const S* __restrict__ theta, const S* __restrict__ theta_n,
    const S* __restrict__ theta_nm1, const S* __restrict__ pose_n_R, const S* __restrict__ pose_n_t,
    const S* __restrict__ theta_tilde, const S* __restrict__ theta_v, S dt, S dt_a, S dt_v, S c_perp, S c_par,
    S alpha, S beta, S gamma, bool coulomb, S mu, S delta,
    // data out:
    S* __restrict__ r_out, S* __restrict__ Jr_out) {
  extern __shared__ unsigned char smem[];
  S* scratch = reinterpret_cast<S*>(smem);
  const int k = blockIdx.x, L = m.n_link, D = m.n_q;
  PbfdStepConst<S> in{anchor_R + size_t(k) * L * 9, anchor_t + size_t(k) * L * 3,
                      centre_n + size_t(k) * m.n_point * 3, tau + size_t(k) * D, dt, c_perp, c_par,
                      alpha, beta, gamma};
  in.coulomb = coulomb;
  in.mu = mu;
  in.delta = delta;
  if (theta_n) in.theta_n = theta_n + size_t(k) * D;
  if (theta_nm1) in.theta_nm1 = theta_nm1 + size_t(k) * D;
  in.dt_a = dt_a;
  in.dt_v = dt_v;
  in.theta_v = theta_v ? theta_v + size_t(k) * D : in.theta_n;
  if (theta_tilde) in.theta_tilde = theta_tilde + size_t(k) * D;
  if (pose_n_R) {
    in.pose_n_R = pose_n_R + size_t(k) * L * 9;
    in.pose_n_t = pose_n_t + size_t(k) * L * 3;
  }
  CudaTeam team;
  pbfd_residual_team(team, m, in, theta + size_t(k) * D, scratch, r_out + size_t(k) * D, Jr_out + size_t(k) * D * D);
}

}  // namespace

template <class S>
void pbfd_residual_cuda(const Model& m, const PbfdBatchInput<S>& in, std::vector<S>& r, std::vector<S>& Jr) {
  const ModelArrays<S> arrays(m);
  DevicePool pool;  // frees everything on return or throw
  const ModelView<S> view = upload_model(arrays, pool);
  const int K = in.K, D = m.n_q;
  S *aR = pool.copy(in.anchor_R), *at = pool.copy(in.anchor_t), *cn = pool.copy(in.centre_n), *tau = pool.copy(in.tau),
    *th = pool.copy(in.theta);
  S* thn = in.theta_n.empty() ? nullptr : pool.copy(in.theta_n);
  S* thnm1 = in.theta_nm1.empty() ? nullptr : pool.copy(in.theta_nm1);
  S* pnR = in.pose_n_R.empty() ? nullptr : pool.copy(in.pose_n_R);
  S* pnt = in.pose_n_t.empty() ? nullptr : pool.copy(in.pose_n_t);
  S* tht = in.theta_tilde.empty() ? nullptr : pool.copy(in.theta_tilde);
  S* thv = in.theta_v.empty() ? nullptr : pool.copy(in.theta_v);
  S *dr = pool.alloc<S>(size_t(K) * D), *dJ = pool.alloc<S>(size_t(K) * D * D);
  const int lanes = ((D + 31) / 32) * 32;
  const size_t shmem = size_t(pbfd_scratch_size(arrays.view())) * sizeof(S);
  if (shmem > 48 * 1024)
    BIGSTEP_CUDA_CHECK(cudaFuncSetAttribute(pbfd_residual_kernel<S>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shmem)));
  pbfd_residual_kernel<S><<<K, lanes, shmem>>>(view, aR, at, cn, tau, th, thn, thnm1, pnR, pnt, tht, thv, in.dt,
                                               in.dt_a > S(0) ? in.dt_a : in.dt, in.dt_v > S(0) ? in.dt_v : in.dt,
                                               in.c_perp, in.c_par, in.alpha, in.beta, in.gamma, in.coulomb, in.mu,
                                               in.delta, dr, dJ);
  BIGSTEP_CUDA_CHECK(cudaGetLastError());
  BIGSTEP_CUDA_CHECK(cudaDeviceSynchronize());
  r.resize(size_t(K) * D);
  Jr.resize(size_t(K) * D * D);
  BIGSTEP_CUDA_CHECK(cudaMemcpy(r.data(), dr, r.size() * sizeof(S), cudaMemcpyDeviceToHost));
  BIGSTEP_CUDA_CHECK(cudaMemcpy(Jr.data(), dJ, Jr.size() * sizeof(S), cudaMemcpyDeviceToHost));
}

template void pbfd_residual_cuda<double>(const Model&, const PbfdBatchInput<double>&, std::vector<double>&, std::vector<double>&);
template void pbfd_residual_cuda<float>(const Model&, const PbfdBatchInput<float>&, std::vector<float>&, std::vector<float>&);

}  // namespace bigstep
