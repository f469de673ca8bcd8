// CUDA mirror of solvers/pbfd_residual_team.h: the same team code, instantiated with CudaTeam.
// One block per rollout; scratch (poses, axes, link derivatives) in dynamic shared memory.
#include "core/model_view.h"
#include "cuda/check.h"
#include "cuda/pbfd_residual.h"
#include "cuda/team_cuda.cuh"
#include "solvers/pbfd_residual_team.h"

namespace bigstep {

namespace {

// Device copy of a ModelArrays: one allocation per field, freed by the destructor.
template <class S>
struct DeviceModel {
  std::vector<void*> allocs;
  ModelView<S> view;
  template <class T>
  const T* up(const std::vector<T>& v) {
    void* p = nullptr;
    BIGSTEP_CUDA_CHECK(cudaMalloc(&p, std::max<size_t>(1, v.size() * sizeof(T))));
    if (!v.empty()) BIGSTEP_CUDA_CHECK(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
    allocs.push_back(p);
    return static_cast<const T*>(p);
  }
  explicit DeviceModel(const ModelArrays<S>& a) {
    view = a.view();
    view.link_parent = up(a.link_parent);
    view.link_Ro = up(a.link_Ro);
    view.link_to = up(a.link_to);
    view.link_mass = up(a.link_mass);
    view.link_com = up(a.link_com);
    view.link_S = up(a.link_S);
    view.link_dof_adr = up(a.link_dof_adr);
    view.link_dof_num = up(a.link_dof_num);
    view.dof_link = up(a.dof_link);
    view.dof_revolute = up(a.dof_revolute);
    view.dof_axis = up(a.dof_axis);
    view.dof_anc = up(a.dof_anc);
    view.sphere_link = up(a.sphere_link);
    view.sphere_pos = up(a.sphere_pos);
    view.sphere_radius = up(a.sphere_radius);
    view.plane_normal = up(a.plane_normal);
    view.plane_offset = up(a.plane_offset);
  }
  ~DeviceModel() {
    for (void* p : allocs) cudaFree(p);
  }
};

template <class S>
__global__ void pbfd_residual_kernel(
    // model:
    const ModelView<S> m,
    // data in:
    const S* __restrict__ anchor_R, const S* __restrict__ anchor_t, const S* __restrict__ centre_n,
    const S* __restrict__ tau, const S* __restrict__ theta, S dt, S c_perp, S c_par, S alpha, S beta, S gamma,
    // data out:
    S* __restrict__ r_out, S* __restrict__ Jr_out) {
  extern __shared__ unsigned char smem[];
  S* scratch = reinterpret_cast<S*>(smem);
  const int k = blockIdx.x, L = m.n_link, D = m.n_q;
  const PbfdStepConst<S> in{anchor_R + size_t(k) * L * 9, anchor_t + size_t(k) * L * 3,
                            centre_n + size_t(k) * m.n_sphere * 3, tau + size_t(k) * D, dt, c_perp, c_par,
                            alpha, beta, gamma};
  CudaTeam team;
  pbfd_residual_team(team, m, in, theta + size_t(k) * D, scratch, r_out + size_t(k) * D, Jr_out + size_t(k) * D * D);
}

template <class T>
T* device_copy(const std::vector<T>& v) {
  T* p = nullptr;
  BIGSTEP_CUDA_CHECK(cudaMalloc(&p, std::max<size_t>(1, v.size()) * sizeof(T)));
  if (!v.empty()) BIGSTEP_CUDA_CHECK(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return p;
}

}  // namespace

template <class S>
void pbfd_residual_cuda(const Model& m, const PbfdBatchInput<S>& in, std::vector<S>& r, std::vector<S>& Jr) {
  const ModelArrays<S> arrays(m);
  DeviceModel<S> dm(arrays);
  const int K = in.K, D = m.n_q;
  S *aR = device_copy(in.anchor_R), *at = device_copy(in.anchor_t), *cn = device_copy(in.centre_n),
    *tau = device_copy(in.tau), *th = device_copy(in.theta);
  S *dr = nullptr, *dJ = nullptr;
  BIGSTEP_CUDA_CHECK(cudaMalloc(&dr, size_t(K) * D * sizeof(S)));
  BIGSTEP_CUDA_CHECK(cudaMalloc(&dJ, size_t(K) * D * D * sizeof(S)));
  const int lanes = ((D + 31) / 32) * 32;
  const size_t shmem = size_t(pbfd_scratch_size(arrays.view())) * sizeof(S);
  if (shmem > 48 * 1024)
    BIGSTEP_CUDA_CHECK(cudaFuncSetAttribute(pbfd_residual_kernel<S>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shmem)));
  pbfd_residual_kernel<S><<<K, lanes, shmem>>>(dm.view, aR, at, cn, tau, th, in.dt, in.c_perp, in.c_par, in.alpha,
                                               in.beta, in.gamma, dr, dJ);
  BIGSTEP_CUDA_CHECK(cudaGetLastError());
  BIGSTEP_CUDA_CHECK(cudaDeviceSynchronize());
  r.resize(size_t(K) * D);
  Jr.resize(size_t(K) * D * D);
  BIGSTEP_CUDA_CHECK(cudaMemcpy(r.data(), dr, r.size() * sizeof(S), cudaMemcpyDeviceToHost));
  BIGSTEP_CUDA_CHECK(cudaMemcpy(Jr.data(), dJ, Jr.size() * sizeof(S), cudaMemcpyDeviceToHost));
  for (S* p : {aR, at, cn, tau, th, dr, dJ}) cudaFree(p);
}

template void pbfd_residual_cuda<double>(const Model&, const PbfdBatchInput<double>&, std::vector<double>&, std::vector<double>&);
template void pbfd_residual_cuda<float>(const Model&, const PbfdBatchInput<float>&, std::vector<float>&, std::vector<float>&);

}  // namespace bigstep
