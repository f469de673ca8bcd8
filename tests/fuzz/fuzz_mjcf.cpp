// libFuzzer target: the MJCF converter (io/mjcf_import.h). The input is an MJCF (or URDF) document;
// it goes where a user's file goes: written to a file, compiled by MuJoCo (mj_loadXML) and
// converted to a bigstep Model by import_mujoco, then once more with the options that edit the
// parsed model first (free_root, floor: mj_parseXML + mj_compile). MuJoCo's refusal and the
// converter's are InvalidArgument (a valid refusal); a crash, a sanitizer report, a leak, an
// exception of another type or a hang is a finding. MuJoCo's own code is not instrumented; what
// it hands the converter is.
#include <mujoco/mujoco.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "io/mjcf_import.h"

namespace {

// one file per fuzzing process (libFuzzer's -fork / -jobs workers each have their own)
const std::string& input_path() {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/bigstep_fuzz_mjcf_" + std::to_string(getpid()) + ".xml";
  }();
  return path;
}

void convert(const std::string& path, const bigstep::MujocoImportOptions& opt) {
  try {
    (void)bigstep::import_mujoco(path, opt);
  } catch (const std::invalid_argument&) {  // bigstep::InvalidArgument included: a valid refusal
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  mju_user_warning = [](const char*) {};  // MuJoCo's compiler warnings are not findings
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = input_path();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();  // the harness itself failed, not the converter
  const bool ok = std::fwrite(data, 1, size, f) == size;
  if (std::fclose(f) != 0 || !ok) std::abort();
  convert(path, {});
  bigstep::MujocoImportOptions edit;
  edit.free_root = true;
  edit.floor = true;
  convert(path, edit);
  std::remove(path.c_str());
  return 0;
}
