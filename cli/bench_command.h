// `bigstep bench gpu-speedup`: PBFD paper Fig. 8 — time per timestep of K trajectories vs |theta|
// and vs K, CPU batched (the team LM emulation on all cores) and, when a device is present, the
// CUDA kernel in FP64 and FP32. Writes DIR/gpu_speedup.csv; bench/plot_gpu_speedup.py draws it.
#pragma once
#include <string>
#include <vector>

namespace bigstep {
int bench_command(const std::vector<std::string>& args);
}
