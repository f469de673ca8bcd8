// `bigstep run CONFIG [--set key=value]... [--out DIR] [--backend cpu|cuda|auto] [--quiet]`
#pragma once
#include <string>
#include <vector>

namespace bigstep {

/// Returns the process exit code: 0 ok, 1 simulation failure (a step failed), 2 bad usage/config.
int run_command(const std::vector<std::string>& args);
const char* run_help();

}  // namespace bigstep
