// `bigstep-bench gpu-speedup`: PBFD paper Fig. 8 — time per timestep of K trajectories vs |theta|
// and vs K, CPU batched (the team LM emulation on all cores) and, when a device is present, the
// CUDA kernel in FP64 and FP32. Writes DIR/gpu_speedup.csv; bench/plot_gpu_speedup.py draws it.
#pragma once
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace bigstep {
int bench_command(const std::vector<std::string>& args);
/// OUT/name (OUT created) opened for writing, its path, and the UTC date for its header line.
std::ofstream bench_result_file(const std::string& out, const std::string& name, std::filesystem::path& path,
                                std::string& date);
/// The GPU work model (bench/harness/bench_work_model.cpp): prints it and writes OUT/gpu_work_model.csv.
int bench_work_model(const std::string& out, int steps, bool quick);
}
