// `bigstep run CONFIG [--set key=value]... [--out DIR] [--backend cpu|cuda|auto] [--quiet]`
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace bigstep {

struct Scene;

/// DIR/model.xml: the scene's model as MJCF (io/mjcf_export.h), what `bigstep render` draws; when
/// the export is impossible (built without MuJoCo, a branching massless link) DIR/model_export_error.txt
/// says why instead, and the run goes on. Throws WriteError (io/atomic_write.h) when it cannot write.
void write_model_xml(const Scene& sc, const std::filesystem::path& dir);

/// summary.json's "import_approximations": what the MJCF / URDF import approximated (absent when nothing).
void add_import_approximations(const Scene& sc, nlohmann::ordered_json& j);

/// Returns the process exit code: 0 ok, 1 simulation failure (a step failed), 2 bad usage/config.
int run_command(const std::vector<std::string>& args);
const char* run_help();

}  // namespace bigstep
