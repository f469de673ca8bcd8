#include "core/backend.h"

#include "core/error.h"

namespace bigstep {

#ifdef BIGSTEP_WITH_CUDA
int cuda_device_count_impl(std::string* why);   // cuda/device_info.cu
std::string cuda_device_name_impl();
double cuda_peak_gflops_impl(bool fp64);
bool built_with_cuda() { return true; }
double cuda_peak_gflops(bool fp64) { return cuda_peak_gflops_impl(fp64); }
int cuda_device_count(std::string* why) { return cuda_device_count_impl(why); }
std::string cuda_device_name() { return cuda_device_name_impl(); }
#else
bool built_with_cuda() { return false; }
int cuda_device_count(std::string* why) {
  if (why) *why = "built without CUDA (nvcc not found or BIGSTEP_CUDA=OFF)";
  return 0;
}
std::string cuda_device_name() { return ""; }
double cuda_peak_gflops(bool) { return 0; }
#endif

BackendChoice select_backend(const std::string& request) {
  BIGSTEP_CHECK_ARG(request == "cpu" || request == "cuda" || request == "auto", "--backend", request,
                    "expected cpu, cuda or auto");
  std::string why;
  const int n = cuda_device_count(&why);
  if (request == "cpu") return {Backend::Cpu, "requested cpu"};
  if (n > 0) return {Backend::Cuda, "CUDA device present: " + cuda_device_name()};
  BIGSTEP_CHECK_ARG(request != "cuda", "--backend", request, "no CUDA backend available: " + why);
  return {Backend::Cpu, "auto: no CUDA device (" + why + "), using cpu"};
}

}  // namespace bigstep
