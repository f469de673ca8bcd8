// `bigstep run ... --rollouts K`: K seeded rollouts on the CPU batched backend.
#pragma once
#include <filesystem>
#include <functional>

#include "core/backend.h"
#include "io/scene.h"

namespace bigstep {

/// Physical memory of this machine [bytes] (0 when unknown).
double machine_memory_bytes();

/// Steps sc.rollouts rollouts for sc.steps() steps; writes trajectory.csv (rollout 0),
/// trajectory_rollouts.csv (the first 16 rollouts, columns r<k>.<dof>), rollouts.csv (one row per
/// rollout), model.xml and summary.json into dir. Returns the exit code (1 if any rollout failed).
int run_batch(const Scene& sc, const std::filesystem::path& dir, const BackendChoice& bk,
              const std::function<void(int, int)>& progress);

}  // namespace bigstep
