// Strict YAML reading for scenes (io/yaml_cfg.h).
#include "io/yaml_cfg.h"

#include <charconv>
#include <cmath>
#include <regex>
#include <stdexcept>

namespace bigstep {

namespace {
constexpr size_t kMaxShownElements = 16;  // a container's echo clones at most this many children
}  // namespace

std::string clip(const std::string& s) {
  if (s.size() <= kMaxEcho) return s;
  return detail::concat(s.substr(0, kMaxEcho), "... (", s.size(), " chars)");
}

std::string show(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return "(empty)";
  if (n.IsScalar()) return clip(n.Scalar());
  // flow style on a clone of the first children: a node parsed in block style keeps it (messages
  // must be one line), and a million-element list must not be emitted whole
  YAML::Node c = n.IsSequence() ? YAML::Node(YAML::NodeType::Sequence) : YAML::Node(YAML::NodeType::Map);
  size_t i = 0;
  for (auto it = n.begin(); it != n.end() && i < kMaxShownElements; ++it, ++i) {
    if (n.IsSequence()) c.push_back(YAML::Clone(*it));
    else c[YAML::Clone(it->first)] = YAML::Clone(it->second);
  }
  c.SetStyle(YAML::EmitterStyle::Flow);
  YAML::Emitter e;
  e << YAML::Flow << c;
  const std::string text = e.c_str();
  if (text.size() <= kMaxEcho && n.size() <= kMaxShownElements) return text;
  return detail::concat(text.substr(0, std::min(text.size(), kMaxEcho)), "... (", n.size(), " elements)");
}

Cfg::Cfg(const YAML::Node& n, std::string path, const CfgContext& ctx) : n_(n), path_(std::move(path)), ctx_(ctx) {
  if (n_.IsDefined() && !n_.IsNull() && !n_.IsMap()) fail_text(path_, show(n_), "expected a mapping");
  // a key written as a list or map ({[0]: 0}) cannot name anything (yaml-cpp would throw on it later)
  if (n_.IsMap())
    for (const auto& kv : n_)
      if (!kv.first.IsScalar())
        fail_text(path_, show(n_), "key " + show(kv.first) + " is not a plain name (a key must be a scalar, not a list or map)");
}

void Cfg::fail_text(const std::string& key, const std::string& value, const std::string& why) const {
  throw InvalidArgument(detail::concat(ctx_.file, ": ", key.empty() ? "(top level)" : key, " = ", clip(value), ": ", why));
}

const SceneKey& Cfg::entry(const std::string& k) const {
  const SceneKey* e = find_scene_key(key(k));
  if (!e) throw std::logic_error("io/scene_keys.cpp has no entry for the key " + key(k));
  return *e;
}

YAML::Node Cfg::raw(const std::string& k) {
  entry(k);
  used_.insert(k);
  if (ctx_.keys_read) ctx_.keys_read->push_back(key(k));
  return n_.IsMap() ? n_[k] : YAML::Node();
}

YAML::Node Cfg::value_or_default(const std::string& k, bool computed) {
  const SceneKey& e = entry(k);
  // one source of defaults: a reader with a default argument exists only for keys whose table
  // default is described in words ("(first link)"), the others take the table's
  if (computed == (e.literal_default() || e.required()))
    throw std::logic_error("key " + e.key + ": the table default '" + e.def + "' and the reader disagree");
  const YAML::Node v = raw(k);
  if (v.IsDefined() && !v.IsNull()) return v;
  if (computed) return YAML::Node(YAML::NodeType::Undefined);
  if (e.required()) fail_text(key(k), "(missing)", e.type == "number" ? "required number" : "required");
  return YAML::Load(e.def);
}

double Cfg::as_num(const YAML::Node& v, const std::string& kp) const {
  double x = 0;
  try {
    if (!v.IsScalar()) throw YAML::Exception(YAML::Mark(), "");
    x = v.as<double>();
  } catch (const YAML::Exception&) {
    fail_text(kp, show(v), "expected a number");
  }
  if (!std::isfinite(x)) fail_text(kp, show(v), "must be finite");
  return x;
}

double Cfg::num(const std::string& k) { return as_num(value_or_default(k, false), key(k)); }
double Cfg::num(const std::string& k, double computed) {
  const YAML::Node v = value_or_default(k, true);
  return v.IsDefined() ? as_num(v, key(k)) : computed;
}

int Cfg::to_int(double x, const std::string& k) {
  if (x != std::floor(x) || std::abs(x) > 2147483647.0)
    fail_text(key(k), show(n_[k]), "expected an integer (|n| < 2^31)");
  return int(x);
}
int Cfg::integer(const std::string& k) { return to_int(num(k), k); }
int Cfg::integer(const std::string& k, int computed) { return to_int(num(k, computed), k); }

namespace {

// The integer that decimal text "<digits>[.<digits>][e[+]<digits>]" denotes, exactly (1e6, 1.5e3,
// 2.0); false when it is not an integer in [0, 2^64 - 1] or not such text.
bool exact_integer(const std::string& t, uint64_t& out) {
  static const std::regex re(R"(\+?([0-9]+)(?:\.([0-9]*))?(?:[eE]\+?([0-9]{1,4}))?)");
  std::smatch mm;
  if (!std::regex_match(t, mm, re)) return false;
  std::string digits = mm[1].str() + mm[2].str();
  const long shift = (mm[3].matched ? std::stol(mm[3].str()) : 0) - long(mm[2].length());
  if (shift < 0) {  // the last -shift digits are a fraction: all zeros
    const size_t cut = size_t(-shift) > digits.size() ? 0 : digits.size() - size_t(-shift);
    if (digits.find_first_not_of('0', cut) != std::string::npos) return false;
    digits.resize(cut);
  } else {
    if (digits.find_first_not_of('0') == std::string::npos) digits = "0";
    if (shift > 20) return digits == "0" ? (out = 0, true) : false;
    digits.append(size_t(shift), '0');
  }
  const size_t nz = digits.find_first_not_of('0');
  if (nz == std::string::npos) return out = 0, true;
  digits.erase(0, nz);
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
  return ec == std::errc() && end == digits.data() + digits.size();
}

}  // namespace

uint64_t Cfg::uint64(const std::string& k) {
  const YAML::Node v = value_or_default(k, false);
  uint64_t x = 0;
  // from the text, never through a double (which rounds above 2^53)
  if (!v.IsScalar() || !exact_integer(v.Scalar(), x))
    fail_text(key(k), show(v), "expected an integer in [0, 2^64 - 1 = 18446744073709551615]");
  return x;
}

bool Cfg::flag(const std::string& k) {
  const YAML::Node v = value_or_default(k, false);
  try {
    if (!v.IsScalar()) throw YAML::Exception(YAML::Mark(), "");
    return v.as<bool>();
  } catch (const YAML::Exception&) {
    fail_text(key(k), show(v), "expected true or false");
  }
}

namespace {
std::string as_str(const Cfg& c, const YAML::Node& v, const std::string& kp) {
  if (!v.IsScalar()) c.fail_text(kp, show(v), "expected a string");
  return v.Scalar();
}
}  // namespace

std::string Cfg::str(const std::string& k) { return as_str(*this, value_or_default(k, false), key(k)); }
std::string Cfg::str(const std::string& k, const std::string& computed) {
  const YAML::Node v = value_or_default(k, true);
  return v.IsDefined() ? as_str(*this, v, key(k)) : computed;
}

std::string Cfg::choice(const std::string& k) {
  const std::string s = str(k);
  const std::vector<std::string>& ok = entry(k).choices;
  for (const auto& o : ok)
    if (s == o) return s;
  std::string list;
  for (const auto& o : ok) list += (list.empty() ? "" : ", ") + o;
  fail_text(key(k), s, "expected one of: " + list);
}

VecX Cfg::as_vec(const YAML::Node& v, const std::string& kp, int n) const {
  if (!v.IsSequence()) fail_text(kp, show(v), detail::concat("expected a list of ", n, " numbers"));
  if (n >= 0 && int(v.size()) != n) fail_text(kp, show(v), detail::concat("expected ", n, " numbers, got ", v.size()));
  VecX x(v.size());
  for (size_t i = 0; i < v.size(); ++i) x[i] = as_num(v[i], detail::concat(kp, "[", i, "]"));
  return x;
}

VecX Cfg::vec(const std::string& k, int n, const VecX& computed) {
  const YAML::Node v = value_or_default(k, true);
  return v.IsDefined() ? as_vec(v, key(k), n) : computed;
}
Vec3 Cfg::v3(const std::string& k) { return as_vec(value_or_default(k, false), key(k), 3); }
Vec3 Cfg::v3(const std::string& k, const Vec3& computed) { return vec(k, 3, computed); }

void Cfg::finish() const {
  if (!n_.IsMap()) return;
  for (const auto& kv : n_) {
    const std::string k = kv.first.Scalar();  // scalar: checked at construction
    if (!used_.count(k)) fail_text(key(k), show(kv.second), "unknown key");
  }
}

}  // namespace bigstep
