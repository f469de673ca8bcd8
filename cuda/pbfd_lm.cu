// CUDA mirror of solvers/pbfd_batch_team.h: the team-form LM iteration (solvers/pbfd_lm_team.h)
// with CudaTeam. Trajectory state in global memory, residual scratch in dynamic shared memory.
#include <thrust/copy.h>
#include <thrust/count.h>
#include <thrust/execution_policy.h>
#include <thrust/for_each.h>
#include <thrust/functional.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/transform_reduce.h>

#include <algorithm>
#include <limits>
#include <map>

#include "core/model_view.h"
#include "cuda/check.h"

#include <stdexcept>
#include <string>
#include "cuda/dense_batched.cuh"
#include "cuda/device_buffers.cuh"
#include "cuda/pbfd_lm.h"
#include "cuda/team_cuda.cuh"
#include "solvers/pbfd_lm_team.h"

namespace bigstep {

namespace {

// Where a block's team scratch lives (chosen on the host from the device's shared-memory limit):
// in dynamic shared memory (global == nullptr) or, when pbfd_scratch_size does not fit (long
// chains: 76 L + 18 D entries), in a global buffer with one slice per block. jl_shared: the fused
// kernel also keeps J_r and the Cholesky factor (2 D^2, produced and consumed within one
// iteration) in shared memory after the scratch; B and g persist across launches in global memory.
template <class S>
struct ScratchPlan {
  S* global = nullptr;
  int n = 0;               // scratch S per block
  bool jl_shared = false;  // fused kernel only
};
template <class S>
__device__ S* block_scratch(const ScratchPlan<S>& sp) {
  extern __shared__ unsigned char smem[];
  return sp.global ? sp.global + size_t(sp.n) * blockIdx.x : reinterpret_cast<S*>(smem);
}

// Block b (re)initialises trajectory idx[b], or b when idx is null.
template <class S>
__global__ void lm_init_kernel(const ModelView<S> m, int n_out, const ScratchPlan<S> sp, const int* __restrict__ idx,
                               S* data, int* ints, int* iters, unsigned* status) {
  CudaTeam team;
  LmTraj<S> t = lm_traj_at(m, n_out, idx ? idx[blockIdx.x] : int(blockIdx.x), data, ints, iters, status);
  lm_team_init(team, m, t, block_scratch(sp));
}

// Block b advances trajectory idx[b] (the compacted RUNNING set), or b when idx is null.
template <class S>
__global__ void lm_iteration_kernel(
    // model:
    const ModelView<S> m, const LmTeamSettings<S> cfg, S dt, S alpha, S beta, S gamma, int iterations,
    const int* __restrict__ idx, const ScratchPlan<S> sp,
    // data in/out (trajectory state):
    S* data, int* ints, int* iters, unsigned* status) {
  extern __shared__ unsigned char smem[];
  CudaTeam team;
  const int k = idx ? idx[blockIdx.x] : int(blockIdx.x);
  LmTraj<S> t = lm_traj_at(m, cfg.n_out, k, data, ints, iters, status);
  if (sp.jl_shared) {  // J_r and L live within one iteration: shared memory after the scratch
    t.J = reinterpret_cast<S*>(smem) + sp.n;
    t.Lc = t.J + m.n_q * m.n_q;
  }
  S* scratch = block_scratch(sp);
  for (int it = 0; it < iterations; ++it) lm_team_iteration(team, m, cfg, t, dt, alpha, beta, gamma, scratch);
}

// Library path (DenseAlgebra::Library): the team phases as separate kernels, one block per
// trajectory, with cuBLAS / cuSOLVER batched calls between them (see PbfdTeamBatch::library_iteration,
// the CPU emulation of the same sequence).
template <class S>
__global__ void lm_evaluate_kernel(const ModelView<S> m, const LmTeamSettings<S> cfg, S dt, S alpha, S beta, S gamma,
                                   const ScratchPlan<S> sp, S* data, int* ints, int* iters, unsigned* status) {
  CudaTeam team;
  LmTraj<S> t = lm_traj_at(m, cfg.n_out, blockIdx.x, data, ints, iters, status);
  lm_phase_evaluate(team, m, cfg, t, dt, alpha, beta, gamma, block_scratch(sp));
}
template <class S>
__global__ void lm_take_update_kernel(const ModelView<S> m, const LmTeamSettings<S> cfg, const S* B_new,
                                      const S* g_new, const ScratchPlan<S> sp, S* data, int* ints, int* iters, unsigned* status) {
  CudaTeam team;
  const int k = blockIdx.x, D = m.n_q;
  LmTraj<S> t = lm_traj_at(m, cfg.n_out, k, data, ints, iters, status);
  lm_phase_normal_take(team, D, t, B_new + size_t(k) * D * D, g_new + size_t(k) * D);
  lm_phase_update(team, m, cfg, t, block_scratch(sp));
}
template <class S>
__global__ void lm_assemble_kernel(const ModelView<S> m, const LmTeamSettings<S> cfg, S* data, int* ints, int* iters,
                                   unsigned* status) {
  CudaTeam team;
  LmTraj<S> t = lm_traj_at(m, cfg.n_out, blockIdx.x, data, ints, iters, status);
  lm_phase_assemble(team, m.n_q, t);
}
template <class S>
__global__ void lm_factor_check_kernel(const ModelView<S> m, const LmTeamSettings<S> cfg, const int* info, int* again,
                                       S* data, int* ints, int* iters, unsigned* status) {
  CudaTeam team;
  const int k = blockIdx.x;
  LmTraj<S> t = lm_traj_at(m, cfg.n_out, k, data, ints, iters, status);
  const bool a = lm_phase_factor_check(team, t, info[k]);
  if (threadIdx.x == 0) again[k] = a ? 1 : 0;
}
template <class S>
__global__ void lm_candidate_kernel(const ModelView<S> m, const LmTeamSettings<S> cfg, const ScratchPlan<S> sp, S* data,
                                    int* ints, int* iters, unsigned* status) {
  CudaTeam team;
  LmTraj<S> t = lm_traj_at(m, cfg.n_out, blockIdx.x, data, ints, iters, status);
  lm_phase_candidate(team, m, cfg, t, block_scratch(sp));
}

// Per-trajectory status predicates for Thrust (ints: kLmInts per trajectory, status first).
struct HasStatus {
  const int* ints;
  int st;
  __device__ bool operator()(int k) const { return ints[kLmInts * k] == st; }
};
// RUNNING count into *n (graph path: a kernel node, since Thrust may allocate during capture).
__global__ void count_running_kernel(const int* ints, int K, int* n) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < K && ints[kLmInts * k] == TRAJ_RUNNING) atomicAdd(n, 1);
}
template <class S>
struct ResidualOf {
  const S* data;
  size_t per, off;
  __device__ S operator()(int k) const { return data[per * k + off]; }
};
struct ReleaseWaiting {
  int* ints;
  __device__ void operator()(int k) const {
    if (ints[kLmInts * k] == TRAJ_WAITING) ints[kLmInts * k] = TRAJ_RUNNING;
  }
};

}  // namespace

template <class S>
struct PbfdTeamBatchCuda<S>::Impl {
  DevicePool pool;  // every device buffer below (first member: freed last)
  ModelArrays<S> arrays;
  ModelView<S> mv;  // device pointers
  LmTeamSettings<S> cfg;
  Model model;  // link masses and gravity for the per-rollout weights (lm_write_params)
  S p[6];
  int K, D, lanes;
  size_t per;
  size_t shmem = 0, shmem_fused = 0;  // dynamic shared memory of the phase kernels / the fused kernel
  ScratchPlan<S> sp;                 // where the team scratch lives (see ScratchPlan)
  // offsets inside one trajectory's block of `data` (carved from trajectory 0 on the host)
  size_t o_th_n = 0, o_th_nm1 = 0, o_tau = 0, o_kp = 0, o_out = 0, o_scal = 0, o_params = 0;
  // compaction of the RUNNING set (fused path): idx[0..n_active)
  int* active = nullptr;
  int n_active = 0;
  bool active_valid = false;
  // CUDA graphs: one executable graph per iterations-per-launch value
  bool graph = false;
  cudaStream_t stream = nullptr;
  int* d_count = nullptr;
  std::map<int, cudaGraphExec_t> graphs;
  DevicePool reinit_idx;  // transient index list of reinit()
  S* data = nullptr;
  int *ints = nullptr, *iters = nullptr;
  unsigned* status = nullptr;
  std::vector<S> h_out, h_scal;  // downloaded output slots (K x n_out x D) and scalars (K x 8)
  std::vector<S> h_rows;         // staging of set_controls
  std::vector<int> h_ints, h_iters;
  std::vector<unsigned> h_status;
  // library path
  DenseAlgebra algebra;
  cublasHandle_t blas = nullptr;
  cusolverDnHandle_t solver = nullptr;
  S *B_new = nullptr, *g_new = nullptr;
  S **Lc_ptr = nullptr, **r_ptr = nullptr;  // per-trajectory pointers for the *Batched calls
  int *info = nullptr, *again = nullptr, *solve_info = nullptr;

  Impl(const Model& m, const PbdSettings& s, int K_, int n_steps, bool lockstep, DenseAlgebra algebra_, int out_slots)
      : arrays(m), model(m), K(K_), D(m.n_q), algebra(algebra_) {
    mv = upload_model(arrays, pool);
    cfg.eps_r = S(s.eps_r);
    cfg.eps_x = S(s.eps_x);
    cfg.it_max = s.it_max;
    cfg.n_steps = n_steps;
    cfg.n_out = out_slots > 0 ? out_slots : n_steps;
    const int n_out = cfg.n_out;
    cfg.lockstep = lockstep;
    cfg.restart = s.restart;
    cfg.warm_lambda = s.warm_lambda;
    const S params[6] = {S(s.dt), S(s.contact.c_perp), S(s.contact.c_par), S(s.contact.alpha), S(s.contact.beta),
                         S(s.contact.gamma)};
    for (int i = 0; i < 6; ++i) p[i] = params[i];
    per = size_t(lm_traj_size(arrays.view(), n_out));
    {
      std::vector<S> probe(per);
      std::vector<int> pi(kLmInts + 2 * n_out);
      const LmTraj<S> t0 = lm_traj_at(arrays.view(), n_out, 0, probe.data(), pi.data(), pi.data() + kLmInts,
                                      reinterpret_cast<unsigned*>(pi.data() + kLmInts + n_out));
      auto off = [&](const S* q) { return size_t(q - probe.data()); };
      o_th_n = off(t0.th_n);
      o_th_nm1 = off(t0.th_nm1);
      o_tau = off(t0.tau);
      o_kp = off(t0.kp);
      o_out = off(t0.out_theta);
      o_scal = off(t0.scal);
      o_params = off(t0.params);
    }
    active = pool.alloc<int>(K);
    d_count = pool.alloc<int>(1);
    BIGSTEP_CUDA_CHECK(cudaStreamCreate(&stream));
    data = pool.alloc<S>(per * K);
    ints = pool.alloc<int>(size_t(kLmInts) * K);
    iters = pool.alloc<int>(size_t(n_out) * K);
    status = pool.alloc<unsigned>(size_t(n_out) * K);
    lanes = ((D + 31) / 32) * 32;
    plan_scratch();
    if (algebra == DenseAlgebra::Library) {
      BIGSTEP_CUBLAS_CHECK(cublasCreate(&blas));
      BIGSTEP_CUSOLVER_CHECK(cusolverDnCreate(&solver));
      B_new = pool.alloc<S>(size_t(K) * D * D);
      g_new = pool.alloc<S>(size_t(K) * D);
      info = pool.alloc<int>(K);
      again = pool.alloc<int>(K);
      solve_info = pool.alloc<int>(1);
      std::vector<S*> lc(K), r(K);
      for (int k = 0; k < K; ++k) {  // host-side pointer arithmetic on the device buffer
        const LmTraj<S> t = lm_traj_at(arrays.view(), n_out, k, data, ints, iters, status);
        lc[k] = t.Lc;
        r[k] = t.r;
      }
      Lc_ptr = pool.alloc<S*>(K);
      r_ptr = pool.alloc<S*>(K);
      BIGSTEP_CUDA_CHECK(cudaMemcpy(Lc_ptr, lc.data(), K * sizeof(S*), cudaMemcpyHostToDevice));
      BIGSTEP_CUDA_CHECK(cudaMemcpy(r_ptr, r.data(), K * sizeof(S*), cudaMemcpyHostToDevice));
    }
  }

  // One library-path iteration of every trajectory (the sequence of PbfdTeamBatch::library_iteration).
  void library_iteration() {
    const ModelView<S> m = mv;
    lm_evaluate_kernel<S><<<K, lanes, shmem>>>(m, cfg, p[0], p[3], p[4], p[5], sp, data, ints, iters, status);
    BIGSTEP_CUDA_CHECK(cudaGetLastError());
    // J is row-major D x D per trajectory = J^T column-major (call it X): B = X X^T, g = X r
    const LmTraj<S> t0 = lm_traj_at(arrays.view(), cfg.n_out, 0, data, ints, iters, status);
    const long long sT = (long long)per;
    gemm_strided_batched(blas, CUBLAS_OP_N, CUBLAS_OP_T, D, D, D, t0.J, D, sT, t0.J, D, sT, B_new, D,
                         (long long)D * D, K);
    gemm_strided_batched(blas, CUBLAS_OP_N, CUBLAS_OP_N, D, 1, D, t0.J, D, sT, t0.r, D, sT, g_new, D, D, K);
    lm_take_update_kernel<S><<<K, lanes, shmem>>>(m, cfg, B_new, g_new, sp, data, ints, iters, status);
    BIGSTEP_CUDA_CHECK(cudaGetLastError());
    for (int round = 0; round < 31; ++round) {  // lambda growth on failed factorisations, 30 tries
      lm_assemble_kernel<S><<<K, lanes>>>(m, cfg, data, ints, iters, status);
      BIGSTEP_CUDA_CHECK(cudaGetLastError());
      potrf_batched(solver, D, Lc_ptr, D, info, K);
      lm_factor_check_kernel<S><<<K, lanes>>>(m, cfg, info, again, data, ints, iters, status);
      BIGSTEP_CUDA_CHECK(cudaGetLastError());
      if (thrust::count(thrust::device, again, again + K, 1) == 0) break;
    }
    potrs_batched(solver, D, Lc_ptr, D, r_ptr, D, solve_info, K);
    lm_candidate_kernel<S><<<K, lanes, shmem>>>(m, cfg, sp, data, ints, iters, status);
    BIGSTEP_CUDA_CHECK(cudaGetLastError());
  }
  // Shared memory if it fits the device's opt-in limit, else a global slice per block.
  void plan_scratch() {
    int dev = 0, optin = 48 * 1024;
    BIGSTEP_CUDA_CHECK(cudaGetDevice(&dev));
    BIGSTEP_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    sp.n = pbfd_scratch_size(arrays.view());
    const size_t scr = size_t(sp.n) * sizeof(S), jl = 2 * size_t(D) * D * sizeof(S);
    if (scr <= size_t(optin)) {
      shmem = scr;
      sp.jl_shared = scr + jl <= size_t(optin);
      shmem_fused = sp.jl_shared ? scr + jl : scr;
    } else {  // long chains: 76 L + 18 D scratch entries exceed shared memory
      sp.global = pool.alloc<S>(size_t(sp.n) * K);
      shmem = shmem_fused = 0;
    }
    auto allow = [](const void* f, size_t bytes) {
      if (bytes > 48 * 1024)
        BIGSTEP_CUDA_CHECK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
    };
    allow((const void*)lm_iteration_kernel<S>, shmem_fused);
    allow((const void*)lm_init_kernel<S>, shmem);
    allow((const void*)lm_evaluate_kernel<S>, shmem);
    allow((const void*)lm_take_update_kernel<S>, shmem);
    allow((const void*)lm_candidate_kernel<S>, shmem);
  }
  // idx <- the RUNNING trajectories (stable order); returns their number.
  int refresh_active() {
    int* end = thrust::copy_if(thrust::device, thrust::counting_iterator<int>(0), thrust::counting_iterator<int>(K), active,
                               HasStatus{ints, TRAJ_RUNNING});
    BIGSTEP_CUDA_CHECK(cudaGetLastError());
    n_active = int(end - active);
    active_valid = true;
    return n_active;
  }
  void drop_graphs() {
    for (auto& g : graphs) cudaGraphExecDestroy(g.second);
    graphs.clear();
  }
  // Captures `iterations` single-iteration launches over all K plus the running count.
  cudaGraphExec_t graph_for(int iterations) {
    auto it = graphs.find(iterations);
    if (it != graphs.end()) return it->second;
    cudaGraph_t g = nullptr;
    BIGSTEP_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < iterations; ++i)
      lm_iteration_kernel<S><<<K, lanes, shmem_fused, stream>>>(mv, cfg, p[0], p[3], p[4], p[5], 1, nullptr, sp, data,
                                                                ints, iters, status);
    cudaMemsetAsync(d_count, 0, sizeof(int), stream);
    count_running_kernel<<<(K + 255) / 256, 256, 0, stream>>>(ints, K, d_count);
    BIGSTEP_CUDA_CHECK(cudaStreamEndCapture(stream, &g));
    cudaGraphExec_t exec = nullptr;
    BIGSTEP_CUDA_CHECK(cudaGraphInstantiate(&exec, g, 0));
    BIGSTEP_CUDA_CHECK(cudaGraphDestroy(g));
    graphs[iterations] = exec;
    return exec;
  }
  ~Impl() {
    drop_graphs();
    if (stream) cudaStreamDestroy(stream);
    if (blas) cublasDestroy(blas);
    if (solver) cusolverDnDestroy(solver);
  }
};

template <class S>
PbfdTeamBatchCuda<S>::PbfdTeamBatchCuda(const Model& m, const PbdSettings& s, int K, int n_steps, bool lockstep,
                                        DenseAlgebra algebra, int out_slots)
    : impl_(std::make_unique<Impl>(m, s, K, n_steps, lockstep, algebra, out_slots)) {}
template <class S>
PbfdTeamBatchCuda<S>::~PbfdTeamBatchCuda() = default;

template <class S>
void PbfdTeamBatchCuda<S>::init(const std::vector<VecX>& theta0, const std::vector<VecX>& theta_m1,
                                const std::vector<ContactParams>& contact,
                                const std::vector<double>& link_mass_scale) {
  Impl& I = *impl_;
  // poisoned as the CPU emulation (read-before-write shows up as NaN); inputs, controls and
  // gains (tau, theta_bar, theta_dot_bar, kp, kd: 5 n_q from o_tau) are set
  std::vector<S> h(I.per * I.K, std::numeric_limits<S>::quiet_NaN());
  for (int k = 0; k < I.K; ++k) {
    S* b = h.data() + I.per * k;
    std::fill(b + I.o_tau, b + I.o_tau + 5 * I.D, S(0));
    for (int i = 0; i < I.D; ++i) {
      b[I.o_th_n + i] = S(theta0[k][i]);
      b[I.o_th_nm1 + i] = S(theta_m1[k][i]);
    }
    lm_write_params<S>(I.model, b + I.o_params, contact.empty() ? double(I.p[1]) : contact[k].c_perp,
                       contact.empty() ? double(I.p[2]) : contact[k].c_par,
                       link_mass_scale.empty() ? nullptr : link_mass_scale.data() + size_t(k) * I.model.n_link);
  }
  BIGSTEP_CUDA_CHECK(cudaMemcpy(I.data, h.data(), h.size() * sizeof(S), cudaMemcpyHostToDevice));
  lm_init_kernel<S><<<I.K, I.lanes, I.shmem>>>(I.mv, I.cfg.n_out, I.sp, nullptr, I.data, I.ints, I.iters, I.status);
  BIGSTEP_CUDA_CHECK(cudaGetLastError());
  I.refresh_active();
}

template <class S>
void PbfdTeamBatchCuda<S>::reinit(const std::vector<int>& ks, const std::vector<VecX>& theta0,
                                  const std::vector<VecX>& theta_m1) {
  Impl& I = *impl_;
  if (ks.empty()) return;
  std::vector<S> row(2 * size_t(I.D));  // th_n then th_nm1: adjacent in LmTraj
  for (size_t i = 0; i < ks.size(); ++i) {
    if (ks[i] < 0 || ks[i] >= I.K)
      throw std::invalid_argument("PbfdTeamBatchCuda::reinit: trajectory " + std::to_string(ks[i]) + " not in [0, K)");
    for (int j = 0; j < I.D; ++j) {
      row[j] = S(theta0[i][j]);
      row[I.D + j] = S(theta_m1[i][j]);
    }
    BIGSTEP_CUDA_CHECK(cudaMemcpy(I.data + I.per * ks[i] + I.o_th_n, row.data(), row.size() * sizeof(S),
                                  cudaMemcpyHostToDevice));
  }
  int* idx = I.reinit_idx.template alloc<int>(ks.size());
  BIGSTEP_CUDA_CHECK(cudaMemcpy(idx, ks.data(), ks.size() * sizeof(int), cudaMemcpyHostToDevice));
  lm_init_kernel<S><<<int(ks.size()), I.lanes, I.shmem>>>(I.mv, I.cfg.n_out, I.sp, idx, I.data, I.ints, I.iters,
                                                          I.status);
  BIGSTEP_CUDA_CHECK(cudaGetLastError());
  BIGSTEP_CUDA_CHECK(cudaDeviceSynchronize());
  I.reinit_idx = DevicePool();  // free the index list
  I.active_valid = false;
}

// Host rows of w S each into every trajectory's block at offset o: one strided copy.
template <class S>
static void upload_rows(S* data, size_t per, size_t o, int K, int w, const std::vector<S>& rows) {
  BIGSTEP_CUDA_CHECK(cudaMemcpy2D(data + o, per * sizeof(S), rows.data(), size_t(w) * sizeof(S), size_t(w) * sizeof(S),
                                  size_t(K), cudaMemcpyHostToDevice));
}

template <class S>
void PbfdTeamBatchCuda<S>::set_gains(const VecX& kp, const VecX& kd) {
  Impl& I = *impl_;
  std::vector<S> rows(size_t(I.K) * 2 * I.D);  // [kp | kd] per trajectory, contiguous in LmTraj
  for (int k = 0; k < I.K; ++k)
    for (int i = 0; i < I.D; ++i) {
      rows[size_t(k) * 2 * I.D + i] = S(kp[i]);
      rows[size_t(k) * 2 * I.D + I.D + i] = S(kd[i]);
    }
  upload_rows(I.data, I.per, I.o_kp, I.K, 2 * I.D, rows);
  I.cfg.pd = true;
  I.drop_graphs();  // captured with the old settings
}

template <class S>
void PbfdTeamBatchCuda<S>::set_controls(const std::vector<double>& u) {
  Impl& I = *impl_;
  if (u.size() != size_t(I.K) * 3 * I.D)
    throw std::invalid_argument("PbfdTeamBatchCuda::set_controls: u.size() = " + std::to_string(u.size()) +
                                ", expected K x 3 n_q = " + std::to_string(size_t(I.K) * 3 * I.D));
  I.h_rows.assign(u.begin(), u.end());  // reused buffer: no allocation per step
  upload_rows(I.data, I.per, I.o_tau, I.K, 3 * I.D, I.h_rows);  // tau, theta_bar, theta_dot_bar are contiguous
}

template <class S>
void PbfdTeamBatchCuda<S>::use_graph(bool on) { impl_->graph = on; }

template <class S>
int PbfdTeamBatchCuda<S>::launch(int iterations) {
  Impl& I = *impl_;
  if (I.algebra == DenseAlgebra::Library) {
    for (int it = 0; it < iterations; ++it) I.library_iteration();
    return count(TRAJ_RUNNING);
  }
  if (I.graph) {
    BIGSTEP_CUDA_CHECK(cudaGraphLaunch(I.graph_for(iterations), I.stream));
    int n = 0;
    BIGSTEP_CUDA_CHECK(cudaMemcpyAsync(&n, I.d_count, sizeof(int), cudaMemcpyDeviceToHost, I.stream));
    BIGSTEP_CUDA_CHECK(cudaStreamSynchronize(I.stream));
    I.active_valid = false;
    return n;
  }
  if (!I.active_valid) I.refresh_active();
  if (I.n_active > 0) {
    lm_iteration_kernel<S><<<I.n_active, I.lanes, I.shmem_fused>>>(I.mv, I.cfg, I.p[0], I.p[3], I.p[4], I.p[5],
                                                                   iterations, I.active, I.sp, I.data, I.ints, I.iters,
                                                                   I.status);
    BIGSTEP_CUDA_CHECK(cudaGetLastError());
  }
  return I.refresh_active();  // the new RUNNING set is also the count
}

template <class S>
int PbfdTeamBatchCuda<S>::count(int st) const {
  const Impl& I = *impl_;
  const long n = thrust::count_if(thrust::device, thrust::counting_iterator<int>(0), thrust::counting_iterator<int>(I.K),
                                  HasStatus{I.ints, st});
  BIGSTEP_CUDA_CHECK(cudaGetLastError());
  return int(n);
}

template <class S>
double PbfdTeamBatchCuda<S>::max_residual() const {
  const Impl& I = *impl_;
  const S r = thrust::transform_reduce(thrust::device, thrust::counting_iterator<int>(0),
                                       thrust::counting_iterator<int>(I.K),
                                       ResidualOf<S>{I.data, I.per, I.o_scal + team_detail::RES}, S(0), thrust::maximum<S>());
  BIGSTEP_CUDA_CHECK(cudaGetLastError());
  return double(r);
}

template <class S>
void PbfdTeamBatchCuda<S>::release_waiting() {
  Impl& I = *impl_;
  thrust::for_each(thrust::device, thrust::counting_iterator<int>(0), thrust::counting_iterator<int>(I.K),
                   ReleaseWaiting{I.ints});
  BIGSTEP_CUDA_CHECK(cudaGetLastError());
  I.active_valid = false;
}

template <class S>
void PbfdTeamBatchCuda<S>::download_outputs() {
  Impl& I = *impl_;
  const size_t K = size_t(I.K), n_out = size_t(I.cfg.n_out), D = size_t(I.D);
  I.h_iters.resize(n_out * K);
  I.h_status.resize(n_out * K);
  I.h_ints.resize(size_t(kLmInts) * K);
  I.h_out.resize(K * n_out * D);
  I.h_scal.resize(K * 8);
  BIGSTEP_CUDA_CHECK(cudaMemcpy(I.h_iters.data(), I.iters, I.h_iters.size() * sizeof(int), cudaMemcpyDeviceToHost));
  BIGSTEP_CUDA_CHECK(cudaMemcpy(I.h_status.data(), I.status, I.h_status.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  BIGSTEP_CUDA_CHECK(cudaMemcpy(I.h_ints.data(), I.ints, I.h_ints.size() * sizeof(int), cudaMemcpyDeviceToHost));
  // the output slots and the 8 scalars of every strided trajectory block, packed on the host
  const size_t pitch = I.per * sizeof(S);
  BIGSTEP_CUDA_CHECK(cudaMemcpy2D(I.h_out.data(), n_out * D * sizeof(S), I.data + I.o_out, pitch, n_out * D * sizeof(S), K,
                                  cudaMemcpyDeviceToHost));
  BIGSTEP_CUDA_CHECK(cudaMemcpy2D(I.h_scal.data(), 8 * sizeof(S), I.data + I.o_scal, pitch, 8 * sizeof(S), K,
                                  cudaMemcpyDeviceToHost));
}

template <class S>
void PbfdTeamBatchCuda<S>::download() { download_outputs(); }

template <class S>
int PbfdTeamBatchCuda<S>::status(int k) const { return impl_->h_ints[kLmInts * k]; }
template <class S>
int PbfdTeamBatchCuda<S>::steps_done(int k) const { return impl_->h_ints[kLmInts * k + team_detail::STEP]; }

template <class S>
void PbfdTeamBatchCuda<S>::theta_into(int k, int n, double* out) const {
  const Impl& I = *impl_;
  const S* row = I.h_out.data() + (size_t(k) * I.cfg.n_out + size_t(n % I.cfg.n_out)) * I.D;
  for (int i = 0; i < I.D; ++i) out[i] = double(row[i]);
}
template <class S>
VecX PbfdTeamBatchCuda<S>::theta(int k, int n) const {
  VecX v(impl_->D);
  theta_into(k, n, v.data());
  return v;
}
template <class S>
int PbfdTeamBatchCuda<S>::iterations(int k, int n) const {
  return impl_->h_iters[size_t(k) * impl_->cfg.n_out + n % impl_->cfg.n_out];
}
template <class S>
unsigned PbfdTeamBatchCuda<S>::step_status(int k, int n) const {
  return impl_->h_status[size_t(k) * impl_->cfg.n_out + n % impl_->cfg.n_out];
}
template <class S>
double PbfdTeamBatchCuda<S>::residual(int k) const {
  return double(impl_->h_scal[size_t(k) * 8 + team_detail::RES]);
}

template class PbfdTeamBatchCuda<double>;
template class PbfdTeamBatchCuda<float>;

}  // namespace bigstep
