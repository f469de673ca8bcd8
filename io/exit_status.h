// The exit status of a front end (bigstep, bigstep-bench) for the exception it is handling:
// bad input (bigstep::InvalidArgument, std::invalid_argument, a YAML error the scene reader did not
// name) is exit 2; an output file that could not be written (io/atomic_write.h) and anything else
// that stops a run are exit 1; each with one line on stderr naming the command. Nothing escapes as
// an abort (exit 134).
#pragma once
#include <string>

namespace bigstep {

/// Call inside a catch (...) block: prints "<cmd>: <what>" on stderr and returns 2 or 1.
int exit_status_of_current_exception(const std::string& cmd);

}  // namespace bigstep
