// `bigstep-bench id-runtime`: inverse-dynamics solve time vs number of contacts
// (docs/methods/inverse_dynamics.md §10 oracle 9, the paper's Fig. 19). Writes DIR/id_runtime.csv;
// bench/paper/id_runtime.py draws it.
#pragma once
#include <string>
#include <vector>

namespace bigstep {
/// args: what follows `bench id-runtime`. Returns the process exit code.
int bench_id_runtime(const std::vector<std::string>& args);
}
