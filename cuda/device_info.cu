// Device discovery for backend selection (core/backend.cpp). Kernels arrive with the batched
// backend (cuda/pbd_step.cu, cuda/pbd_residual.cu); this file proves the toolchain links.
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

double cuda_peak_gflops_impl(bool fp64) {
  int major = 0, minor = 0, sms = 0, khz = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) != cudaSuccess ||
      cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  // FP32 / FP64 lanes per SM (CUDA C++ Programming Guide, arithmetic instruction throughput)
  int f32 = 0, f64 = 0;
  if (major == 7) f32 = 64, f64 = minor == 0 ? 32 : 2;               // V100; T4 / Turing
  else if (major == 8) f32 = minor == 0 ? 64 : 128, f64 = minor == 0 ? 32 : 2;  // A100; Ampere/Ada
  else if (major == 9) f32 = 128, f64 = 64;                           // H100 / H200
  else if (major == 10) f32 = 128, f64 = 64;                          // B200 (datacentre Blackwell)
  else if (major == 12) f32 = 128, f64 = 2;                           // consumer Blackwell
  if (f32 == 0) return 0;
  return 2.0 * sms * (fp64 ? f64 : f32) * khz * 1e-6;
}

}  // namespace bigstep
