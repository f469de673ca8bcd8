// Strict YAML reading for scenes: a map with its key path that takes defaults from the key table
// (io/scene_keys.h), records which keys were read and reports the rest as unknown. Every error is
// one line "<file>: <key> = <value>: <expectation>" with the value's echo capped.
#pragma once
#include <yaml-cpp/yaml.h>

#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/types.h"
#include "io/scene_keys.h"

namespace bigstep {

/// Longest echo of a value in a message; longer ones end in "... (N elements)" or "... (N chars)".
constexpr size_t kMaxEcho = 80;

/// s, cut to kMaxEcho characters with "... (<size> chars)" when longer.
std::string clip(const std::string& s);

/// A node on one line (flow style), "(empty)" when absent, capped at about kMaxEcho characters.
std::string show(const YAML::Node& n);

/// What every Cfg of one parse shares: the file named in messages and, for tests, the key log.
struct CfgContext {
  std::string file;
  std::vector<std::string>* keys_read = nullptr;  ///< full key paths read, in order (or null)
};

class Cfg {
 public:
  /// n must be a mapping (or absent/null = empty); every key of it must be a plain scalar.
  Cfg(const YAML::Node& n, std::string path, const CfgContext& ctx);

  /// Throws InvalidArgument "<file>: <key> = <value>: <why>" (value capped).
  template <class V>
  [[noreturn]] void fail(const std::string& key, const V& value, const std::string& why) const {
    fail_text(key, detail::concat(value), why);
  }
  [[noreturn]] void fail_text(const std::string& key, const std::string& value, const std::string& why) const;

  std::string key(const std::string& k) const { return path_.empty() ? k : path_ + "." + k; }
  bool has(const std::string& k) const { return n_.IsMap() && n_[k].IsDefined() && !n_[k].IsNull(); }
  /// The node of k (marked as read; k must be in the key table).
  YAML::Node raw(const std::string& k);
  Cfg child(const std::string& k) { return Cfg(raw(k), key(k), ctx_); }
  /// Element i of list node `list` read from key k (path "k[i]").
  Cfg item(const std::string& k, const YAML::Node& list, size_t i) const {
    return Cfg(list[i], detail::concat(key(k), "[", i, "]"), ctx_);
  }

  // Readers: without a default argument the default comes from the key table (or the key is
  // required there); with one, the table must describe that default in words ("(first link)").
  double num(const std::string& k);
  double num(const std::string& k, double computed);
  int integer(const std::string& k);
  int integer(const std::string& k, int computed);
  /// A non-negative integer up to 2^64 - 1 read exactly from its decimal text (digits, or float
  /// notation such as 1e6 or 1.5e3 that denotes an integer), never rounded through a double.
  uint64_t uint64(const std::string& k);
  bool flag(const std::string& k);
  std::string str(const std::string& k);
  std::string str(const std::string& k, const std::string& computed);
  std::string choice(const std::string& k);  ///< one of the table's choices
  VecX vec(const std::string& k, int n, const VecX& computed);
  Vec3 v3(const std::string& k);
  Vec3 v3(const std::string& k, const Vec3& computed);

  double as_num(const YAML::Node& v, const std::string& kp) const;
  VecX as_vec(const YAML::Node& v, const std::string& kp, int n) const;
  /// Every key of the map must have been read.
  void finish() const;
  const YAML::Node& node() const { return n_; }
  const std::string& file() const { return ctx_.file; }
  const CfgContext& context() const { return ctx_; }

 private:
  const SceneKey& entry(const std::string& k) const;
  // the node of k, or the table default (nullopt-like: undefined node when the caller computes it)
  YAML::Node value_or_default(const std::string& k, bool computed);
  int to_int(double x, const std::string& k);

  YAML::Node n_;
  std::string path_;
  const CfgContext& ctx_;
  std::set<std::string> used_;
};

}  // namespace bigstep
