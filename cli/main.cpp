// bigstep command-line entry: dispatches sub-commands.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "cli/bench_command.h"
#include "cli/commands.h"
#include "cli/export_command.h"
#include "cli/render_command.h"
#include "cli/inspect_command.h"
#include "cli/omp_wait.h"
#include "cli/run_command.h"
#include "io/atomic_write.h"

#ifdef BIGSTEP_WITH_MUJOCO
#define BIGSTEP_WITH_MUJOCO_TEXT "on"
#else
#define BIGSTEP_WITH_MUJOCO_TEXT "off"
#endif
#ifdef BIGSTEP_HAVE_CUDA_BUILD
#define BIGSTEP_WITH_CUDA_TEXT "built"
#else
#define BIGSTEP_WITH_CUDA_TEXT "not built"
#endif


namespace {

int dispatch(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::fputs(bigstep::top_usage().c_str(), args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version" || args[0] == "version") {
    std::printf("bigstep %s (commit %s; CUDA %s, MuJoCo import %s)\n", BIGSTEP_VERSION, BIGSTEP_GIT_COMMIT,
                BIGSTEP_WITH_CUDA_TEXT, BIGSTEP_WITH_MUJOCO_TEXT);
    const char* wait = std::getenv("OMP_WAIT_POLICY");
    std::printf("OpenMP wait policy: %s\n", wait ? wait : "unset (the OpenMP runtime's default)");
    return 0;
  }
  if (args[0] == "run") return bigstep::run_command({args.begin() + 1, args.end()});
  if (args[0] == "bench") return bigstep::bench_command({args.begin() + 1, args.end()});
  if (args[0] == "inspect") return bigstep::inspect_command({args.begin() + 1, args.end()});
  if (args[0] == "export-mjcf") return bigstep::export_command({args.begin() + 1, args.end()});
  if (args[0] == "render") return bigstep::render_command({args.begin() + 1, args.end()});
  std::fprintf(stderr, "bigstep: unknown command '%s'\n%s", args[0].c_str(), bigstep::top_usage().c_str());
  return 2;
}

}  // namespace

// Nothing escapes as an abort (exit 134): bad input is exit 2, anything else that stops a run exit 1,
// each with one line on stderr.
int main(int argc, char** argv) {
  bigstep::prefer_passive_omp_wait(argv);  // may re-execute this program once (see omp_wait.h)
  const std::vector<std::string> args(argv + 1, argv + argc);
  const std::string cmd = args.empty() ? "bigstep" : "bigstep " + args[0];
  try {
    return dispatch(args);
  } catch (const std::invalid_argument& e) {  // bigstep::InvalidArgument and other bad input
    std::fprintf(stderr, "%s: %s\n", cmd.c_str(), e.what());
    return 2;
  } catch (const YAML::Exception& e) {  // a YAML error the scene reader did not name (a bug; still input)
    std::fprintf(stderr, "%s: YAML: %s\n", cmd.c_str(), e.what());
    return 2;
  } catch (const bigstep::WriteError& e) {  // an output file (io/atomic_write.h): "cannot write PATH: why"
    std::fprintf(stderr, "%s: %s\n", cmd.c_str(), e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: out of memory (try fewer --rollouts or a shorter integrator.duration)\n", cmd.c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: failed: %s\n", cmd.c_str(), e.what());
    return 1;
  } catch (...) {
    std::fprintf(stderr, "%s: failed with an unknown exception\n", cmd.c_str());
    return 1;
  }
}
