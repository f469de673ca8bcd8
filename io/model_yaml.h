// YAML `model:` -> ModelSpec: links (joints, mass properties or a solid box), contact points and
// terrain planes. Keys and defaults: io/scene_keys.cpp; errors name the file and key path.
#pragma once
#include "core/model.h"
#include "io/yaml_cfg.h"

namespace bigstep {

/// Reads every key of `model` (and reports unknown ones); the result still needs Model::finalize.
ModelSpec parse_model_spec(Cfg& model);

}  // namespace bigstep
