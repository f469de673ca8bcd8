// The scene key table: every YAML key a scene understands, with its type, default and a one-line
// description. The parser takes its defaults from here and `bigstep run --help` prints it, so the
// two cannot disagree. Documented limits of bad input live here too.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace bigstep {

/// Limits on values whose size drives loops or memory (bad input must fail with a message, not a
/// hang, an overflow or an allocation failure).
constexpr int kMaxSteps = 100000000;          ///< round(integrator.duration / dt) and rest_time / dt (1e8)
constexpr int kMaxRollouts = 1 << 24;         ///< batch.rollouts (16777216)
constexpr int kMaxThreads = 4096;             ///< batch.threads
/// batch.randomize_*: spread r of the factors exp(U(-r, r)), at most e^5 ~ 148 times larger or smaller
constexpr double kMaxRandomizeSpread = 5;

struct SceneKey {
  std::string key;      ///< full path, list elements as [i]: "model.links[i].box.mass"
  std::string type;     ///< number | integer | bool | string | choice | [x, y, z] | list | map | number or list
  std::string def;      ///< YAML text of the default, or "(required...)", or "(...)": computed or absent
  std::string doc;      ///< one line
  std::vector<std::string> choices;  ///< type choice: the accepted values

  bool literal_default() const { return def.empty() || def[0] != '('; }
  bool required() const { return def.rfind("(required", 0) == 0; }
};

/// The table, in help order.
const std::vector<SceneKey>& scene_keys();

/// The entry of a full key path ("model.links[3].mass" finds "model.links[i].mass"), or nullptr.
const SceneKey* find_scene_key(const std::string& path);

/// "model.links[3].box.mass" -> "model.links[i].box.mass".
std::string generic_key(const std::string& path);

/// The key table as `bigstep run --help` prints it (one line per key).
std::string scene_keys_help();

}  // namespace bigstep
