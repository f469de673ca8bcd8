// `--set KEY=VALUE` overrides on a scene document before it is parsed. KEY is the path the help and
// the error messages print: names separated by '.', list elements as [i] (model.links[0].box.mass)
// or as a numeric segment (model.links.0.box.mass).
#pragma once
#include <yaml-cpp/yaml.h>

#include <string>

namespace bigstep {

/// Applies one "key.path=yaml_value" onto root (a mapping), creating maps as needed. Throws
/// InvalidArgument "<file>: --set <key> = <value>: <why>" (bad syntax, an index out of range with
/// the list's length, a path through a scalar).
void apply_override(YAML::Node& root, const std::string& ov, const std::string& file);

}  // namespace bigstep
