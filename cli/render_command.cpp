#include "cli/render_command.h"

#include <cstdio>
#include <cstdlib>
#include <sys/wait.h>

namespace bigstep {

namespace {
// 'a' -> 'a' quoted for sh
std::string quoted(const std::string& a) {
  std::string q = "'";
  for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}
}  // namespace

int render_command(const std::vector<std::string>& args) {
  const char* py = std::getenv("PYTHON");
  std::string cmd = std::string(py && *py ? py : "python3") + " " + quoted(std::string(BIGSTEP_SOURCE_DIR) + "/tools/render.py");
  if (args.empty()) cmd += " --help";
  for (const std::string& a : args) cmd += " " + quoted(a);
  const int rc = std::system(cmd.c_str());
  if (rc == -1 || !WIFEXITED(rc)) {
    std::fprintf(stderr, "bigstep render: could not run %s\n", cmd.c_str());
    return 1;
  }
  return args.empty() ? 2 : WEXITSTATUS(rc);
}

}  // namespace bigstep
