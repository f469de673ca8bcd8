// `bigstep render OUTDIR [...]`: a run's model.xml + trajectory.csv as render.gif and filmstrip.png,
// through MuJoCo's offscreen renderer (tools/render.py, run by python3 or $PYTHON).
#pragma once
#include <string>
#include <vector>

namespace bigstep {

int render_command(const std::vector<std::string>& args);

}  // namespace bigstep
