// Backend selection (docs/architecture.md §1): CUDA only when built with it AND a device is present.
#pragma once
#include <string>

namespace bigstep {

enum class Backend { Cpu, Cuda };

struct BackendChoice {
  Backend backend = Backend::Cpu;
  std::string reason;  ///< one line: why this backend was chosen
};

/// True when this binary was compiled with the CUDA backend.
bool built_with_cuda();
/// Number of CUDA devices visible (0 without CUDA or without a driver); `why` explains a 0.
int cuda_device_count(std::string* why = nullptr);
/// Name of device 0, or "" when none.
std::string cuda_device_name();
/// Theoretical peak of device 0 in GFLOP/s (FMA = 2 FLOP: SMs x FP32 or FP64 lanes per SM x
/// 2 x boost clock), 0 when none or the architecture's lane counts are not known here.
double cuda_peak_gflops(bool fp64);

/// Resolves "cpu" | "cuda" | "auto". Throws InvalidArgument for "cuda" when unavailable.
BackendChoice select_backend(const std::string& request);

}  // namespace bigstep
