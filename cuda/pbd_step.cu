// CUDA mirror of solvers/pbd/pbd_batch_team.h: the team-form LM iteration (solvers/pbd/pbd_step_team.h)
// with CudaTeam (a block per trajectory, launch()) or WarpTeam (a warp or half warp per
// trajectory, iterations to convergence in one launch: launch_persistent(), step_graph(); the loop
// of solvers/pbd/pbd_step_persistent.h). Trajectory state in global memory; the per-trajectory
// workspace of the warp kernel (B, J, L, g, delta, scalars, residual scratch) in shared memory.
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
#include "cuda/pbd_step.h"
#include "cuda/team_cuda.cuh"
#include "solvers/pbd/pbd_step_persistent.h"
#include "solvers/pbd/pbd_step_team.h"

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
__global__ void lm_init_kernel(const ModelView<S> m, int n_out, int order, const ScratchPlan<S> sp,
                               const int* __restrict__ idx, S* data, int* ints, int* iters, unsigned* status) {
  CudaTeam team;
  LmTraj<S> t = lm_traj_at(m, n_out, order, idx ? idx[blockIdx.x] : int(blockIdx.x), data, ints, iters, status);
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
  LmTraj<S> t = lm_traj_at(m, cfg.n_out, cfg.order, k, data, ints, iters, status);
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
  LmTraj<S> t = lm_traj_at(m, cfg.n_out, cfg.order, blockIdx.x, data, ints, iters, status);
  lm_phase_evaluate(team, m, cfg, t, dt, alpha, beta, gamma, block_scratch(sp));
}
template <class S>
__global__ void lm_take_update_kernel(const ModelView<S> m, const LmTeamSettings<S> cfg, const S* B_new,
                                      const S* g_new, const ScratchPlan<S> sp, S* data, int* ints, int* iters, unsigned* status) {
  CudaTeam team;
  const int k = blockIdx.x, D = m.n_q;
  LmTraj<S> t = lm_traj_at(m, cfg.n_out, cfg.order, k, data, ints, iters, status);
  lm_phase_normal_take(team, D, t, B_new + size_t(k) * D * D, g_new + size_t(k) * D);
  lm_phase_update(team, m, cfg, t, block_scratch(sp));
}
template <class S>
__global__ void lm_assemble_kernel(const ModelView<S> m, const LmTeamSettings<S> cfg, S* data, int* ints, int* iters,
                                   unsigned* status) {
  CudaTeam team;
  LmTraj<S> t = lm_traj_at(m, cfg.n_out, cfg.order, blockIdx.x, data, ints, iters, status);
  lm_phase_assemble(team, m.n_q, t);
}
template <class S>
__global__ void lm_factor_check_kernel(const ModelView<S> m, const LmTeamSettings<S> cfg, const int* info, int* again,
                                       S* data, int* ints, int* iters, unsigned* status) {
  CudaTeam team;
  const int k = blockIdx.x;
  LmTraj<S> t = lm_traj_at(m, cfg.n_out, cfg.order, k, data, ints, iters, status);
  const bool a = lm_phase_factor_check(team, t, info[k]);
  if (threadIdx.x == 0) again[k] = a ? 1 : 0;
}
template <class S>
__global__ void lm_candidate_kernel(const ModelView<S> m, const LmTeamSettings<S> cfg, const ScratchPlan<S> sp, S* data,
                                    int* ints, int* iters, unsigned* status) {
  CudaTeam team;
  LmTraj<S> t = lm_traj_at(m, cfg.n_out, cfg.order, blockIdx.x, data, ints, iters, status);
  lm_phase_candidate(team, m, cfg, t, block_scratch(sp));
}

template <class S>
struct ResidualOf {
  const S* data;
  size_t per, off;
  __device__ S operator()(int k) const { return data[per * k + off]; }
};

// ---- warp mapping ----
// Threads per block at most, and the resident blocks per SM the register budget is sized for
// (per precision): FP32 5 (640 threads: ptxas gives <= 96 registers, no spills; the D = 15 chain's
// shared memory holds 36 trajectories per SM, which need <= 112), FP64 2 (256 threads, <= 255
// registers: shared memory holds only 18 such trajectories per SM, which need <= 224 -- a tighter
// bound would only add spills).
constexpr int kWarpBlockMax = 128;
template <class S>
constexpr int kWarpMinBlocks = sizeof(S) == 8 ? 2 : 5;

// Where each team's lm_local_size workspace lives: dynamic shared memory (global == nullptr),
// `teams` slices of n S; or, when one slice does not fit the device's opt-in limit, a global slice
// per trajectory. The views and the ints are in dynamic shared memory either way (WarpSmem).
template <class S>
struct LocalPlan {
  S* global = nullptr;
  int n = 0;      // lm_local_size
  int teams = 1;  // teams (trajectories) per block
};

// The warp kernel's dynamic shared memory, per block of `teams` teams, in this order: the teams'
// local views (LmTraj each: lm_local_view), their trajectories' global views (LmTraj each:
// lm_traj_at), their residuals' step constants (PbfdStepConst each: lm_step_in), the workspaces
// (teams x n S, SharedLocal only), the ints (teams x kLmInts). Sized at launch from the plan (no
// static shared array: one binary serves any n_q and teams per block). Why the global view and
// the step constants are here too: held in registers across the iteration loop (the global view
// is read again only to stage the state out; the step constants' ~12 pointers are read by the
// residual's tasks), they were the FP32 kernel's spills.
template <class S>
struct WarpSmem {
  int teams = 1;
  size_t ws = 0;  // workspace bytes per team (0: global workspace)
  __host__ __device__ size_t views() const { return size_t(teams) * (2 * sizeof(LmTraj<S>) + sizeof(PbfdStepConst<S>)); }
  __host__ __device__ size_t ints() const { return views() + size_t(teams) * ws; }
  __host__ __device__ size_t bytes() const { return ints() + size_t(teams) * kLmInts * sizeof(int); }
  /// bytes per trajectory (a block holds teams times this)
  __host__ __device__ size_t per_team() const {
    return 2 * sizeof(LmTraj<S>) + sizeof(PbfdStepConst<S>) + ws + kLmInts * sizeof(int);
  }
};

// Team t of block b runs trajectory b * teams + t to convergence (lm_team_run): W = 32 lanes (a
// warp) or 16 (half a warp, two trajectories per warp). running: incremented for every trajectory
// still RUNNING after an it_cap-limited launch (the device-side running count). SharedLocal: the
// workspace is in shared memory (lp.global unused). Why a template parameter and not a run-time
// choice: a pointer that may be shared or global is a generic one (64-bit, generic loads); derived
// from `smem` alone the compiler sees shared memory (LDS / STS, 32-bit addresses: fewer registers).
template <class S, int W, bool SharedLocal>
__global__ void __launch_bounds__(kWarpBlockMax, kWarpMinBlocks<S>)
    lm_warp_kernel(const ModelView<S> m, const LmTeamSettings<S> cfg, S dt, S alpha, S beta, S gamma, int it_cap,
                   const LocalPlan<S> lp, int K, S* data, int* ints, int* iters, unsigned* status, int* running) {
  extern __shared__ unsigned char smem[];
  const int team_id = int(threadIdx.x) / W;
  const int k = int(blockIdx.x) * lp.teams + team_id;
  if (k >= K) return;  // whole teams leave together (a team never straddles k = K)
  WarpSmem<S> ly;
  ly.teams = lp.teams;
  ly.ws = SharedLocal ? size_t(lp.n) * sizeof(S) : 0;
  // the team's views (~50 pointers) in shared memory, read where used (see WarpSmem)
  LmTraj<S>* views = reinterpret_cast<LmTraj<S>*>(smem);
  PbfdStepConst<S>* ins = reinterpret_cast<PbfdStepConst<S>*>(views + 2 * lp.teams);
  WarpTeam<W> team;
  S* scratch = nullptr;
  {
    S* local = SharedLocal ? reinterpret_cast<S*>(smem + ly.views() + ly.ws * team_id)
                           : lp.global + size_t(lp.n) * k;
    int* li = reinterpret_cast<int*>(smem + ly.ints()) + kLmInts * team_id;
    const LmTraj<S> t = lm_traj_at(m, cfg.n_out, cfg.order, k, data, ints, iters, status);
    const LmTraj<S> v = lm_local_view(m.n_q, t, local, li, &scratch);
    team.single([&] {
      views[team_id] = v;
      views[lp.teams + team_id] = t;
      ins[team_id] = lm_step_in(cfg, v, dt, alpha, beta, gamma);
    });
  }
  team.sync();
  const LmTraj<S>& tg = views[lp.teams + team_id];
  lm_team_run_view(team, m, cfg, tg, views[team_id], ins[team_id], scratch, it_cap);
  if (it_cap > 0 && team.lane == 0 && tg.status() == TRAJ_RUNNING) atomicAdd(running, 1);
}

// Reset of a list of rollouts in one kernel: block b writes rows[b] = [theta(0) | theta_{-1}]
// into trajectory idx[b] and starts its new episode (lm_team_init).
template <class S>
__global__ void lm_reinit_kernel(const ModelView<S> m, int n_out, int order, const ScratchPlan<S> sp, const int* __restrict__ idx,
                                 const S* __restrict__ rows, size_t per, size_t o_th_n, S* data, int* ints, int* iters,
                                 unsigned* status) {
  const int k = idx[blockIdx.x], D = m.n_q;
  for (int i = int(threadIdx.x); i < 2 * D; i += int(blockDim.x))
    data[per * k + o_th_n + i] = rows[size_t(2 * D) * blockIdx.x + i];  // th_n, th_nm1 are adjacent
  __syncthreads();
  CudaTeam team;
  LmTraj<S> t = lm_traj_at(m, n_out, order, k, data, ints, iters, status);
  lm_team_init(team, m, t, block_scratch(sp));
}

// idx[0..*n) <- the RUNNING trajectories (any order: every trajectory's result is independent of
// which block runs it), into preallocated buffers: no Thrust temporary storage per launch.
__global__ void compact_running_kernel(const int* ints, int K, int* idx, int* n) {
  const int k = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (k < K && ints[kLmInts * k + LmInt::status] == TRAJ_RUNNING) idx[atomicAdd(n, 1)] = k;
}
// How many trajectories are in state st, into *n.
__global__ void count_status_kernel(const int* ints, int K, int st, int* n) {
  const int k = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (k < K && ints[kLmInts * k + LmInt::status] == st) atomicAdd(n, 1);
}
__global__ void release_waiting_kernel(int* ints, int K) {
  const int k = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (k < K && ints[kLmInts * k + LmInt::status] == TRAJ_WAITING) ints[kLmInts * k + LmInt::status] = TRAJ_RUNNING;
}

// Page-locked host buffers (asynchronous copies, graph memcpy nodes), freed together.
class PinnedPool {
 public:
  template <class T>
  T* alloc(size_t n) {
    void* p = nullptr;
    BIGSTEP_CUDA_CHECK(cudaHostAlloc(&p, (n > 0 ? n : 1) * sizeof(T), cudaHostAllocDefault));
    held_.push_back(p);
    return static_cast<T*>(p);
  }
  ~PinnedPool() {
    for (void* p : held_) cudaFreeHost(p);
  }

 private:
  std::vector<void*> held_;
};

}  // namespace

template <class S>
struct PbfdTeamBatchCuda<S>::Impl {
  DevicePool pool;  // every device buffer below (first member: freed last)
  ModelArrays<S> arrays;
  ModelView<S> mv;  // device pointers
  LmTeamSettings<S> cfg;
  Model model;  // link masses and gravity for the per-rollout weights (lm_write_params)
  LmStepScalars<S> p;
  ContactParams contact;  // the settings' contact law: every rollout's unless init() gets its own
  int K, D, lanes;
  size_t per;
  size_t shmem = 0, shmem_fused = 0;  // dynamic shared memory of the phase kernels / the fused kernel
  ScratchPlan<S> sp;                 // where the team scratch lives (see ScratchPlan)
  // offsets of the fields inside one trajectory's block of `data` (pbd_traj_fields.h)
  LmTrajOffsets off;
  // compaction of the RUNNING set (fused path): idx[0..n_active)
  int* active = nullptr;
  int n_active = 0;
  bool active_valid = false;
  // CUDA graphs: one executable graph per iterations-per-launch value
  bool graph = false;
  cudaStream_t stream = nullptr;
  int* d_count = nullptr;
  std::map<int, cudaGraphExec_t> graphs;
  S* data = nullptr;
  int *ints = nullptr, *iters = nullptr;
  unsigned* status = nullptr;
  std::vector<S> h_rows;         // staging of set_controls
  // downloaded outputs, page-locked: output slots (K x n_out x D), scalars (K x LmScal::count), ints, iterations, statuses
  PinnedPool pinned;
  S *h_out = nullptr, *h_scal = nullptr, *h_u = nullptr;  // h_u: step_graph's controls (K x 3 D)
  int *h_ints = nullptr, *h_iters = nullptr, *h_count = nullptr;
  unsigned* h_status = nullptr;
  // reinit: index list and rows, preallocated (K each) on both sides
  int *d_reinit_idx = nullptr, *h_reinit_idx = nullptr;
  S *d_reinit_rows = nullptr, *h_reinit_rows = nullptr;
  // warp mapping
  LocalPlan<S> lp;
  int warp_lanes = 32;
  size_t warp_shmem = 0;
  int warp_blocks_per_sm = 0, sm_count = 0;
  int* d_running = nullptr;
  cudaGraphExec_t env_graph = nullptr;  // step_graph's captured env step
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
    lm_set_friction(cfg, s.contact);
    contact = s.contact;
    cfg.order = s.order;
    p = {S(s.dt), S(s.contact.c_perp), S(s.contact.c_par), S(s.contact.alpha), S(s.contact.beta), S(s.contact.gamma)};
    per = size_t(lm_traj_size(arrays.view(), n_out, cfg.order));
    off = lm_traj_offsets(arrays.view(), n_out, cfg.order);
    active = pool.alloc<int>(K);
    d_count = pool.alloc<int>(1);
    BIGSTEP_CUDA_CHECK(cudaStreamCreate(&stream));
    data = pool.alloc<S>(per * K);
    ints = pool.alloc<int>(size_t(kLmInts) * K);
    iters = pool.alloc<int>(size_t(n_out) * K);
    status = pool.alloc<unsigned>(size_t(n_out) * K);
    lanes = ((D + 31) / 32) * 32;
    plan_scratch();
    d_running = pool.alloc<int>(1);
    d_reinit_idx = pool.alloc<int>(K);
    d_reinit_rows = pool.alloc<S>(size_t(K) * 2 * D);
    h_out = pinned.alloc<S>(size_t(K) * n_out * D);
    h_scal = pinned.alloc<S>(size_t(K) * LmScal::count);
    h_u = pinned.alloc<S>(size_t(K) * 3 * D);
    h_ints = pinned.alloc<int>(size_t(kLmInts) * K);
    h_iters = pinned.alloc<int>(size_t(n_out) * K);
    h_status = pinned.alloc<unsigned>(size_t(n_out) * K);
    h_count = pinned.alloc<int>(1);
    h_reinit_idx = pinned.alloc<int>(K);
    h_reinit_rows = pinned.alloc<S>(size_t(K) * 2 * D);
    plan_warp();
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
        const LmTraj<S> t = lm_traj_at(arrays.view(), n_out, cfg.order, k, data, ints, iters, status);
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
    lm_evaluate_kernel<S><<<K, lanes, shmem>>>(m, cfg, p.dt, p.alpha, p.beta, p.gamma, sp, data, ints, iters, status);
    BIGSTEP_CUDA_CHECK(cudaGetLastError());
    // J is row-major D x D per trajectory = J^T column-major (call it X): B = X X^T, g = X r
    const LmTraj<S> t0 = lm_traj_at(arrays.view(), cfg.n_out, cfg.order, 0, data, ints, iters, status);
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
  // idx <- the RUNNING trajectories; returns their number (one integer read back).
  int refresh_active() {
    BIGSTEP_CUDA_CHECK(cudaMemsetAsync(d_count, 0, sizeof(int), stream));
    compact_running_kernel<<<(K + 255) / 256, 256, 0, stream>>>(ints, K, active, d_count);
    BIGSTEP_CUDA_CHECK(cudaGetLastError());
    n_active = read_count();
    active_valid = true;
    return n_active;
  }
  // *d_count through the pinned h_count (the stream's work before it included).
  int read_count() {
    BIGSTEP_CUDA_CHECK(cudaMemcpyAsync(h_count, d_count, sizeof(int), cudaMemcpyDeviceToHost, stream));
    BIGSTEP_CUDA_CHECK(cudaStreamSynchronize(stream));
    return *h_count;
  }
  template <int W, bool SharedLocal>
  static const void* warp_kernel() {
    return reinterpret_cast<const void*>(lm_warp_kernel<S, W, SharedLocal>);
  }
  const void* warp_fn = nullptr;  // the variant plan_warp chose
  // The warp kernel's plan: W = 16 lanes when n_q <= 16 (two trajectories per warp) else 32; the
  // teams per block (1 .. kWarpBlockMax / W) whose shared memory gives the most resident
  // trajectories per SM (cudaOccupancyMaxActiveBlocksPerMultiprocessor; ties: bigger blocks).
  void plan_warp() {
    int dev = 0, optin = 48 * 1024;
    BIGSTEP_CUDA_CHECK(cudaGetDevice(&dev));
    BIGSTEP_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    BIGSTEP_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, dev));
    warp_lanes = D <= 16 ? 16 : 32;
    lp.n = lm_local_size(arrays.view());
    WarpSmem<S> ly;
    ly.ws = size_t(lp.n) * sizeof(S);
    const bool global = ly.per_team() > size_t(optin);  // very long chains: workspaces in global memory
    if (global) ly.ws = 0;
    const void* f = warp_lanes == 16 ? (global ? warp_kernel<16, false>() : warp_kernel<16, true>())
                                     : (global ? warp_kernel<32, false>() : warp_kernel<32, true>());
    warp_fn = f;
    BIGSTEP_CUDA_CHECK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
    if (global) lp.global = pool.alloc<S>(size_t(lp.n) * K);
    // every block size from the largest down (ties: the larger block), not only powers of two:
    // the per-block reservation and the register file make e.g. 3 or 5 teams win for some n_q
    int best = -1;
    for (int teams = kWarpBlockMax / warp_lanes; teams >= 1; --teams) {
      ly.teams = teams;
      const size_t bytes = ly.bytes();
      if (bytes > size_t(optin)) continue;
      int nb = 0;
      BIGSTEP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, f, teams * warp_lanes, bytes));
      if (nb * teams > best) {
        best = nb * teams;
        lp.teams = teams;
        warp_shmem = bytes;
        warp_blocks_per_sm = nb;
      }
    }
  }
  // The persistent warp kernel over all K on stream st (non-RUNNING trajectories return at once).
  void warp_launch(int it_cap, cudaStream_t st) {
    if (it_cap > 0) BIGSTEP_CUDA_CHECK(cudaMemsetAsync(d_running, 0, sizeof(int), st));
    const int grid = (K + lp.teams - 1) / lp.teams;
    const bool sh = lp.global == nullptr;
    const int threads = lp.teams * warp_lanes;
    if (warp_lanes == 16 && sh)
      lm_warp_kernel<S, 16, true><<<grid, threads, warp_shmem, st>>>(mv, cfg, p.dt, p.alpha, p.beta, p.gamma, it_cap, lp, K,
                                                                     data, ints, iters, status, d_running);
    else if (warp_lanes == 16)
      lm_warp_kernel<S, 16, false><<<grid, threads, warp_shmem, st>>>(mv, cfg, p.dt, p.alpha, p.beta, p.gamma, it_cap, lp, K,
                                                                      data, ints, iters, status, d_running);
    else if (sh)
      lm_warp_kernel<S, 32, true><<<grid, threads, warp_shmem, st>>>(mv, cfg, p.dt, p.alpha, p.beta, p.gamma, it_cap, lp, K,
                                                                     data, ints, iters, status, d_running);
    else
      lm_warp_kernel<S, 32, false><<<grid, threads, warp_shmem, st>>>(mv, cfg, p.dt, p.alpha, p.beta, p.gamma, it_cap, lp, K,
                                                                      data, ints, iters, status, d_running);
    BIGSTEP_CUDA_CHECK(cudaGetLastError());
  }
  // The outputs download_outputs() reads, asynchronously on st into the pinned buffers.
  void download_async(cudaStream_t st) {
    const size_t n_out = size_t(cfg.n_out), pitch = per * sizeof(S);
    BIGSTEP_CUDA_CHECK(cudaMemcpyAsync(h_iters, iters, n_out * K * sizeof(int), cudaMemcpyDeviceToHost, st));
    BIGSTEP_CUDA_CHECK(cudaMemcpyAsync(h_status, status, n_out * K * sizeof(unsigned), cudaMemcpyDeviceToHost, st));
    BIGSTEP_CUDA_CHECK(cudaMemcpyAsync(h_ints, ints, size_t(kLmInts) * K * sizeof(int), cudaMemcpyDeviceToHost, st));
    // the output slots and the 8 scalars of every strided trajectory block, packed
    BIGSTEP_CUDA_CHECK(cudaMemcpy2DAsync(h_out, n_out * D * sizeof(S), data + off.out_theta, pitch, n_out * D * sizeof(S), K,
                                         cudaMemcpyDeviceToHost, st));
    BIGSTEP_CUDA_CHECK(cudaMemcpy2DAsync(h_scal, LmScal::count * sizeof(S), data + off.scal, pitch, LmScal::count * sizeof(S), K,
                                         cudaMemcpyDeviceToHost, st));
  }
  void drop_graphs() {
    for (auto& g : graphs) cudaGraphExecDestroy(g.second);
    graphs.clear();
    if (env_graph) cudaGraphExecDestroy(env_graph);
    env_graph = nullptr;
  }
  // Captures `iterations` single-iteration launches over all K plus the running count.
  cudaGraphExec_t graph_for(int iterations) {
    auto it = graphs.find(iterations);
    if (it != graphs.end()) return it->second;
    cudaGraph_t g = nullptr;
    BIGSTEP_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < iterations; ++i)
      lm_iteration_kernel<S><<<K, lanes, shmem_fused, stream>>>(mv, cfg, p.dt, p.alpha, p.beta, p.gamma, 1, nullptr, sp, data,
                                                                ints, iters, status);
    cudaMemsetAsync(d_count, 0, sizeof(int), stream);
    count_status_kernel<<<(K + 255) / 256, 256, 0, stream>>>(ints, K, TRAJ_RUNNING, d_count);
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
  // gains (tau, theta_bar, theta_dot_bar, kp, kd: 5 n_q from off.tau) are set
  std::vector<S> h(I.per * I.K, std::numeric_limits<S>::quiet_NaN());
  for (int k = 0; k < I.K; ++k) {
    S* b = h.data() + I.per * k;
    std::fill(b + I.off.tau, b + I.off.tau + 5 * I.D, S(0));
    for (int i = 0; i < I.D; ++i) {
      b[I.off.th_n + i] = S(theta0[k][i]);
      b[I.off.th_nm1 + i] = S(theta_m1[k][i]);
    }
    lm_write_params<S>(I.model, b + I.off.params, contact.empty() ? I.contact : contact[k],
                       link_mass_scale.empty() ? nullptr : link_mass_scale.data() + size_t(k) * I.model.n_link);
  }
  BIGSTEP_CUDA_CHECK(cudaMemcpy(I.data, h.data(), h.size() * sizeof(S), cudaMemcpyHostToDevice));
  lm_init_kernel<S><<<I.K, I.lanes, I.shmem>>>(I.mv, I.cfg.n_out, I.cfg.order, I.sp, nullptr, I.data, I.ints, I.iters, I.status);
  BIGSTEP_CUDA_CHECK(cudaGetLastError());
  I.refresh_active();
}

template <class S>
void PbfdTeamBatchCuda<S>::reinit(const std::vector<int>& ks, const std::vector<VecX>& theta0,
                                  const std::vector<VecX>& theta_m1) {
  Impl& I = *impl_;
  if (ks.empty()) return;
  if (ks.size() > size_t(I.K) || theta0.size() != ks.size() || theta_m1.size() != ks.size())
    throw std::invalid_argument("PbfdTeamBatchCuda::reinit: " + std::to_string(ks.size()) + " trajectories, " +
                                std::to_string(theta0.size()) + " / " + std::to_string(theta_m1.size()) +
                                " states (at most K = " + std::to_string(I.K) + ", one state each)");
  const size_t D = size_t(I.D);
  for (size_t i = 0; i < ks.size(); ++i) {
    if (ks[i] < 0 || ks[i] >= I.K)
      throw std::invalid_argument("PbfdTeamBatchCuda::reinit: trajectory " + std::to_string(ks[i]) + " not in [0, K)");
    I.h_reinit_idx[i] = ks[i];
    for (size_t j = 0; j < D; ++j) {  // th_n then th_nm1: adjacent in LmTraj
      I.h_reinit_rows[2 * D * i + j] = S(theta0[i][j]);
      I.h_reinit_rows[2 * D * i + D + j] = S(theta_m1[i][j]);
    }
  }
  // two copies and one kernel for the whole list (no copy per trajectory, no allocation)
  BIGSTEP_CUDA_CHECK(cudaMemcpyAsync(I.d_reinit_idx, I.h_reinit_idx, ks.size() * sizeof(int), cudaMemcpyHostToDevice,
                                     I.stream));
  BIGSTEP_CUDA_CHECK(cudaMemcpyAsync(I.d_reinit_rows, I.h_reinit_rows, ks.size() * 2 * D * sizeof(S),
                                     cudaMemcpyHostToDevice, I.stream));
  lm_reinit_kernel<S><<<int(ks.size()), I.lanes, I.shmem, I.stream>>>(I.mv, I.cfg.n_out, I.cfg.order, I.sp, I.d_reinit_idx,
                                                                      I.d_reinit_rows, I.per, I.off.th_n, I.data, I.ints,
                                                                      I.iters, I.status);
  BIGSTEP_CUDA_CHECK(cudaGetLastError());
  BIGSTEP_CUDA_CHECK(cudaStreamSynchronize(I.stream));  // the pinned staging may be rewritten after return
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
  upload_rows(I.data, I.per, I.off.kp, I.K, 2 * I.D, rows);
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
  upload_rows(I.data, I.per, I.off.tau, I.K, 3 * I.D, I.h_rows);  // tau, theta_bar, theta_dot_bar are contiguous
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
    lm_iteration_kernel<S><<<I.n_active, I.lanes, I.shmem_fused>>>(I.mv, I.cfg, I.p.dt, I.p.alpha, I.p.beta, I.p.gamma,
                                                                   iterations, I.active, I.sp, I.data, I.ints, I.iters,
                                                                   I.status);
    BIGSTEP_CUDA_CHECK(cudaGetLastError());
  }
  return I.refresh_active();  // the new RUNNING set is also the count
}

template <class S>
int PbfdTeamBatchCuda<S>::count(int st) const {
  Impl& I = *impl_;
  BIGSTEP_CUDA_CHECK(cudaMemsetAsync(I.d_count, 0, sizeof(int), I.stream));
  count_status_kernel<<<(I.K + 255) / 256, 256, 0, I.stream>>>(I.ints, I.K, st, I.d_count);
  BIGSTEP_CUDA_CHECK(cudaGetLastError());
  return I.read_count();
}

template <class S>
double PbfdTeamBatchCuda<S>::max_residual() const {
  const Impl& I = *impl_;
  const S r = thrust::transform_reduce(thrust::device, thrust::counting_iterator<int>(0),
                                       thrust::counting_iterator<int>(I.K),
                                       ResidualOf<S>{I.data, I.per, I.off.scal + LmScal::res}, S(0), thrust::maximum<S>());
  BIGSTEP_CUDA_CHECK(cudaGetLastError());
  return double(r);
}

template <class S>
void PbfdTeamBatchCuda<S>::release_waiting() {
  Impl& I = *impl_;
  release_waiting_kernel<<<(I.K + 255) / 256, 256, 0, I.stream>>>(I.ints, I.K);
  BIGSTEP_CUDA_CHECK(cudaGetLastError());
  I.active_valid = false;
}

template <class S>
void PbfdTeamBatchCuda<S>::download_outputs() {
  Impl& I = *impl_;
  I.download_async(I.stream);
  BIGSTEP_CUDA_CHECK(cudaStreamSynchronize(I.stream));
}

template <class S>
void PbfdTeamBatchCuda<S>::download() { download_outputs(); }

template <class S>
int PbfdTeamBatchCuda<S>::status(int k) const { return impl_->h_ints[kLmInts * k + LmInt::status]; }
template <class S>
int PbfdTeamBatchCuda<S>::steps_done(int k) const { return impl_->h_ints[kLmInts * k + LmInt::step]; }

template <class S>
void PbfdTeamBatchCuda<S>::theta_into(int k, int n, double* out) const {
  const Impl& I = *impl_;
  const S* row = I.h_out + (size_t(k) * I.cfg.n_out + size_t(n % I.cfg.n_out)) * I.D;
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
  return double(impl_->h_scal[size_t(k) * LmScal::count + LmScal::res]);
}

template <class S>
int PbfdTeamBatchCuda<S>::launch_persistent(int it_cap) {
  Impl& I = *impl_;
  I.warp_launch(it_cap, I.stream);
  I.active_valid = false;
  if (it_cap <= 0) return 0;  // nothing stays RUNNING (see the header): no read-back
  BIGSTEP_CUDA_CHECK(cudaMemcpyAsync(I.h_count, I.d_running, sizeof(int), cudaMemcpyDeviceToHost, I.stream));
  BIGSTEP_CUDA_CHECK(cudaStreamSynchronize(I.stream));
  return *I.h_count;
}

template <class S>
void PbfdTeamBatchCuda<S>::step_graph(const std::vector<double>& u) {
  Impl& I = *impl_;
  const size_t w = 3 * size_t(I.D);
  if (u.size() != size_t(I.K) * w)
    throw std::invalid_argument("PbfdTeamBatchCuda::step_graph: u.size() = " + std::to_string(u.size()) +
                                ", expected K x 3 n_q = " + std::to_string(size_t(I.K) * w));
  for (size_t e = 0; e < u.size(); ++e) I.h_u[e] = S(u[e]);  // the graph's memcpy node reads h_u
  if (!I.env_graph) {
    cudaGraph_t g = nullptr;
    BIGSTEP_CUDA_CHECK(cudaStreamBeginCapture(I.stream, cudaStreamCaptureModeThreadLocal));
    BIGSTEP_CUDA_CHECK(cudaMemcpy2DAsync(I.data + I.off.tau, I.per * sizeof(S), I.h_u, w * sizeof(S), w * sizeof(S),
                                         size_t(I.K), cudaMemcpyHostToDevice, I.stream));
    release_waiting_kernel<<<(I.K + 255) / 256, 256, 0, I.stream>>>(I.ints, I.K);
    I.warp_launch(0, I.stream);
    I.download_async(I.stream);
    BIGSTEP_CUDA_CHECK(cudaStreamEndCapture(I.stream, &g));
    BIGSTEP_CUDA_CHECK(cudaGraphInstantiate(&I.env_graph, g, 0));
    BIGSTEP_CUDA_CHECK(cudaGraphDestroy(g));
  }
  BIGSTEP_CUDA_CHECK(cudaGraphLaunch(I.env_graph, I.stream));
  BIGSTEP_CUDA_CHECK(cudaStreamSynchronize(I.stream));
  I.active_valid = false;
}

template <class S>
typename PbfdTeamBatchCuda<S>::WarpPlan PbfdTeamBatchCuda<S>::warp_plan() const {
  const Impl& I = *impl_;
  cudaFuncAttributes a{};
  BIGSTEP_CUDA_CHECK(cudaFuncGetAttributes(&a, I.warp_fn));
  WarpPlan w;
  w.lanes = I.warp_lanes;
  WarpSmem<S> ly;
  ly.ws = I.lp.global ? 0 : size_t(I.lp.n) * sizeof(S);
  w.bytes_per_traj = int(ly.per_team());  // views + workspace (when in shared memory) + ints
  w.traj_per_block = I.lp.teams;
  w.blocks_per_sm = I.warp_blocks_per_sm;
  w.regs_per_thread = a.numRegs;
  w.local_bytes = int(a.localSizeBytes);
  w.sm_count = I.sm_count;
  return w;
}

template class PbfdTeamBatchCuda<double>;
template class PbfdTeamBatchCuda<float>;

}  // namespace bigstep
