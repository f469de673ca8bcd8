// The commands of `bigstep`, one table: name, synopsis (the options after the name) and a one-line
// summary. The top-level usage is generated from it, and each command's --help starts with
// "usage: bigstep <name> <synopsis>" from the same entry (command_usage), so they cannot disagree.
#pragma once
#include <string>

namespace bigstep {

struct CommandInfo {
  const char* name;
  const char* synopsis;
  const char* summary;
};

inline constexpr CommandInfo kCommands[] = {
    {"run", "CONFIG [--set key=value]... [--out DIR] [--backend cpu|cuda|auto] [--rollouts K] [--seed S] "
            "[--threads N] [--quiet] [--render]",
     "simulate a scene (YAML, or an MJCF / URDF file) and write its results"},
    {"inspect", "CONFIG [--set key=value]... [--states N] [--seed S]",
     "the model and CRBA / RNEA at random states as JSON (+ MuJoCo's qpos / qvel)"},
    {"export-mjcf", "CONFIG [--set key=value]... [-o FILE]", "the scene's model as MJCF (MuJoCo loads it; qpos = theta)"},
    {"render", "OUTDIR [--rollout K | --grid N] [--frames N] [--fps F] [--width W] [--height H] [--strip K]",
     "a run as render.gif + filmstrip.png through MuJoCo's offscreen renderer"},
};

/// "usage: bigstep <name> <synopsis>\n" of a table entry ("" for an unknown name).
inline std::string command_usage(const std::string& name) {
  for (const CommandInfo& c : kCommands)
    if (name == c.name) return std::string("usage: bigstep ") + c.name + " " + c.synopsis + "\n";
  return "";
}

/// The top-level usage: every command's synopsis and summary, then --version and --help.
inline std::string top_usage() {
  std::string s = "usage: bigstep <command> [options]   (bigstep <command> --help for its options)\ncommands:\n";
  for (const CommandInfo& c : kCommands) s += std::string("  ") + c.name + " " + c.synopsis + "\n      " + c.summary + "\n";
  return s + "  --version   version, commit and the optional backends\n  --help      this text\n";
}

}  // namespace bigstep
