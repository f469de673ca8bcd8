// Device discovery for backend selection (core/backend.cpp). Kernels arrive with the batched
// backend (issue: CUDA kernels for PBD/PBFD JTJ-LM); this file proves the toolchain links.
#include <cuda_runtime.h>

#include <string>

namespace bigstep {

int cuda_device_count_impl(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    if (why) *why = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e);
    cudaGetLastError();  // clear the sticky error
    return 0;
  }
  if (n == 0 && why) *why = "no CUDA device present";
  return n;
}

std::string cuda_device_name_impl() {
  cudaDeviceProp p;
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return "";
  return p.name;
}

}  // namespace bigstep
