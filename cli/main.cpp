// bigstep command-line entry: dispatches sub-commands.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/bench_command.h"
#include "cli/inspect_command.h"
#include "cli/run_command.h"

static const char* kUsage =
    "usage: bigstep <command> [options]\n"
    "commands:\n"
    "  run CONFIG [--set key=value]... [--out DIR]   simulate a scene (see: bigstep run --help)\n"
    "  inspect CONFIG [--states N] [--seed S]         model + CRBA/RNEA at random states as JSON\n"
    "  bench gpu-speedup [--quick] [--out DIR]        Fig. 8: batched PBFD time per step, CPU vs CUDA\n"
    "  --help                                         this text\n";

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "run") return bigstep::run_command({args.begin() + 1, args.end()});
  if (args[0] == "bench") return bigstep::bench_command({args.begin() + 1, args.end()});
  if (args[0] == "inspect") return bigstep::inspect_command({args.begin() + 1, args.end()});
  std::fprintf(stderr, "bigstep: unknown command '%s'\n%s", args[0].c_str(), kUsage);
  return 2;
}
