// YAML `control:` -> Scene::tau, the stable-PD servo (control.pd) and its reference motion
// (control.reference: hold, jump, walk; docs/methods/newton_euler.md §4, docs/methods/nmdp.md §10). Keys and defaults: io/scene_keys.cpp.
#pragma once
#include "io/scene.h"
#include "io/yaml_cfg.h"

namespace bigstep {

/// Reads control.* into sc (sc.model and sc.theta0 must be set); reports unknown keys.
void parse_control(Cfg& ctrl, Scene& sc);

}  // namespace bigstep
