// `bigstep export-mjcf CONFIG -o scene.xml`: any scene's model as MJCF (io/mjcf_export.h).
#pragma once
#include <string>
#include <vector>

namespace bigstep {

int export_command(const std::vector<std::string>& args);

}  // namespace bigstep
