// `bigstep-bench vs-mujoco`: the same MJCF / URDF scene in MuJoCo and bigstep:
// simulated seconds per wall second (one core, all cores), accuracy against each simulator's own
// fine-dt reference and the largest stable dt. Writes DIR/vs_mujoco.csv and
// DIR/vs_mujoco_stability.csv; bench/plot_vs_mujoco.py draws them. Defined only in builds with MuJoCo
// (bench_command.cpp answers for the others).
#pragma once
#include <string>
#include <vector>

namespace bigstep {
/// args: what follows `bench vs-mujoco`. Returns the process exit code.
int bench_vs_mujoco(const std::vector<std::string>& args);
}
