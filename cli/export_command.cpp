#include "cli/export_command.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "cli/commands.h"
#include "io/mjcf_export.h"
#include "io/scene.h"

namespace bigstep {

namespace {
const std::string kHelp = command_usage("export-mjcf") +
    "Writes the scene's model (a YAML scene or an MJCF / URDF file) as an MJCF that MuJoCo loads, to FILE\n"
    "(default: stdout). Every DOF is a hinge or slide joint with qpos0 = 0 in bigstep's DOF order, so\n"
    "MuJoCo's qpos / qvel are theta / theta_dot; option timestep = integrator.dt, geom friction = contact.mu.\n"
    "Rules: docs/model_data.md \"Exporting MJCF\".\n";
}

int export_command(const std::vector<std::string>& args) {
  std::string config, out;
  std::vector<std::string> sets;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool has_value = i + 1 < args.size();
    if (a == "--help" || a == "-h") {
      std::fputs(kHelp.c_str(), stdout);
      return 0;
    } else if (a == "--set" && has_value) {
      sets.push_back(args[++i]);
    } else if ((a == "-o" || a == "--out") && has_value) {
      out = args[++i];
    } else if (!a.empty() && a[0] != '-' && config.empty()) {
      config = a;
    } else {
      std::fprintf(stderr, "bigstep export-mjcf: bad argument '%s'\n%s", a.c_str(), kHelp.c_str());
      return 2;
    }
  }
  if (config.empty()) {
    std::fprintf(stderr, "bigstep export-mjcf: missing CONFIG\n%s", kHelp.c_str());
    return 2;
  }
  const Scene sc = load_scene(config, sets);
  MjcfExportOptions opt;
  opt.name = sc.name;
  opt.timestep = sc.settings.dt;
  opt.friction = sc.ne.mu;
  const std::string xml = export_mjcf(sc.model, opt);
  if (out.empty()) {
    std::fputs(xml.c_str(), stdout);
    return 0;
  }
  std::ofstream f(out);
  if (!(f << xml)) {
    std::fprintf(stderr, "bigstep export-mjcf: cannot write %s\n", out.c_str());
    return 1;
  }
  std::fprintf(stderr, "bigstep export-mjcf: wrote %s\n", out.c_str());
  return 0;
}

}  // namespace bigstep
