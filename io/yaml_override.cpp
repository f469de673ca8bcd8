// `--set KEY=VALUE` overrides (io/yaml_override.h).
#include "io/yaml_override.h"

#include <vector>

#include "core/error.h"
#include "io/yaml_cfg.h"

namespace bigstep {

namespace {

// One step of a key path: a map key, or a list index ([i] always; a numeric segment when the node
// it applies to is a list).
struct PathStep {
  std::string text;      ///< as written: "links", "0", "[0]"
  bool bracket = false;  ///< written as [i]: must index a list
  long index = -1;       ///< the index, or -1 when text is not one
};

long parse_index(const std::string& s) {
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stol(s);
}

// "model.links" + "box" -> "model.links.box"
std::string key_path(const std::string& at, const PathStep& st) {
  return at.empty() ? st.text : at + "." + st.text;
}

class Override {
 public:
  Override(const std::string& ov, const std::string& file) : file_(file) {
    const size_t eq = ov.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InvalidArgument(detail::concat(file, ": --set ", clip(ov), ": expected key.path=value (e.g. model.links[0].mass=2)"));
    key_ = ov.substr(0, eq);
    text_ = ov.substr(eq + 1);
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw InvalidArgument(detail::concat(file_, ": --set ", clip(key_), " = ", clip(text_), ": ", why));
  }

  // "model.links[0].box" -> links, [0], box (after model)
  std::vector<PathStep> steps() const {
    std::vector<PathStep> out;
    size_t i = 0;
    while (true) {
      const size_t end = std::min(key_.find('.', i), key_.size());
      const std::string seg = key_.substr(i, end - i);
      const size_t br = seg.find('[');
      const std::string name = seg.substr(0, br);
      if (name.empty()) fail(detail::concat("bad key path at '", clip(seg), "': expected name, name[index] or name.index"));
      out.push_back({name, false, parse_index(name)});
      // name[i][j]...
      for (size_t p = br; p != std::string::npos && p < seg.size();) {
        const size_t close = seg.find(']', p);
        const long idx = close == std::string::npos ? -1 : parse_index(seg.substr(p + 1, close - p - 1));
        if (seg[p] != '[' || idx < 0)
          fail(detail::concat("bad index in '", clip(seg), "': expected name[index] with index 0, 1, 2, ..."));
        out.push_back({seg.substr(p, close - p + 1), true, idx});
        p = close + 1;
      }
      if (end == key_.size()) break;
      i = end + 1;
    }
    return out;
  }

  void apply(YAML::Node& root) const {
    YAML::Node value;
    try {
      value = YAML::Load(text_);
    } catch (const YAML::Exception& e) {
      fail(detail::concat("not a YAML value (", e.msg, ")"));
    }
    const std::vector<PathStep> path = steps();
    // yaml-cpp nodes assign through, so the walk keeps every node it visits
    std::vector<YAML::Node> chain{root};
    std::string at;  // the path walked so far, as messages print it
    for (size_t s = 0; s < path.size(); ++s) {
      YAML::Node cur = chain.back();
      const PathStep& st = path[s];
      const bool last = s + 1 == path.size();
      if (cur.IsSequence()) {
        if (st.index < 0 || size_t(st.index) >= cur.size())
          fail(detail::concat("'", st.text, "' is not an index of that list: ", at, " has length ", cur.size()));
        if (last) cur[size_t(st.index)] = value;
        else chain.push_back(cur[size_t(st.index)]);
      } else if (st.bracket) {
        fail(detail::concat(at, " is not a list (it is ", show(cur), ")"));
      } else {
        if (cur.IsDefined() && !cur.IsNull() && !cur.IsMap())
          fail(detail::concat(at.empty() ? std::string("(top level)") : at, " is not a mapping (it is ", show(cur), ")"));
        if (last) {
          cur[st.text] = value;
        } else {
          if (!cur[st.text].IsDefined() || cur[st.text].IsNull()) {
            if (path[s + 1].bracket) fail(detail::concat(key_path(at, st), " is absent: only an existing list can be indexed"));
            cur[st.text] = YAML::Node(YAML::NodeType::Map);
          }
          chain.push_back(cur[st.text]);
        }
      }
      at = cur.IsSequence() ? detail::concat(at, "[", st.index, "]") : key_path(at, st);
    }
  }

 private:
  std::string file_, key_, text_;
};

}  // namespace

void apply_override(YAML::Node& root, const std::string& ov, const std::string& file) {
  Override(ov, file).apply(root);
}

}  // namespace bigstep
