// libFuzzer target: the scene loader with `--set` overrides, as `bigstep run` reaches it
// (io/scene.h load_scene_text, io/yaml_override.h). The input is a YAML scene document, optionally
// followed by a line "#--set" (a YAML comment, so a plain scene file is a valid input) and one
// override "key.path=yaml_value" per line after it. A refused input is an InvalidArgument (the
// loader's named error; YAML syntax errors arrive wrapped in one) or another std::invalid_argument;
// anything else -- a crash, a sanitizer report, a leak, an exception of another type, a hang --
// is a finding.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "io/scene.h"

namespace {

const std::string kMarker = "#--set\n";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in(reinterpret_cast<const char*>(data), size);
  // the document ends at the first marker line; every non-empty line after it is one override
  std::string doc = in;
  std::vector<std::string> sets;
  size_t body = std::string::npos;
  if (in.compare(0, kMarker.size(), kMarker) == 0) {
    doc.clear();
    body = kMarker.size();
  } else if (const size_t at = in.find("\n" + kMarker); at != std::string::npos) {
    doc = in.substr(0, at + 1);
    body = at + 1 + kMarker.size();
  }
  for (size_t p = body; p < in.size();) {
    size_t e = in.find('\n', p);
    if (e == std::string::npos) e = in.size();
    if (e > p) sets.push_back(in.substr(p, e - p));
    p = e + 1;
  }
  // relative model paths resolve against the repository's configs/, as for a scene file there
  const std::string source = std::string(BIGSTEP_SOURCE_DIR) + "/configs/fuzz_input.yaml";
  try {
    (void)bigstep::load_scene_text(doc, source, sets);
  } catch (const std::invalid_argument&) {  // bigstep::InvalidArgument included: a valid refusal
  } catch (const YAML::Exception&) {        // yaml-cpp's own, should a conversion escape unwrapped
  }
  return 0;
}
