#include "cli/export_command.h"

#include <cstdio>
#include <filesystem>

#include "cli/commands.h"
#include "io/atomic_write.h"
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
  // -o into a folder that does not exist, or onto a folder: a usage error, found before any work
  if (!out.empty()) {
    std::error_code ec;
    const std::filesystem::path o(out), parent = o.parent_path();
    if (std::filesystem::is_directory(o, ec) || (!parent.empty() && !std::filesystem::is_directory(parent, ec))) {
      std::fprintf(stderr, "bigstep export-mjcf: -o %s: %s\n", out.c_str(),
                   std::filesystem::is_directory(o, ec) ? "is a folder, not a file" : "its folder does not exist");
      return 2;
    }
  }
  const Scene sc = load_scene(config, sets);
  MjcfExportOptions opt;
  opt.name = sc.name;
  opt.timestep = sc.settings.dt;
  opt.friction = sc.ne.mu;
  const std::string xml = export_mjcf(sc.model, opt);
  if (out.empty()) {
    std::fputs(xml.c_str(), stdout);
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
      std::fprintf(stderr, "bigstep export-mjcf: cannot write the MJCF to stdout\n");
      return 1;
    }
    return 0;
  }
  write_file_atomically(out, xml);  // WriteError: exit 1 naming the file (cli/main.cpp)
  std::fprintf(stderr, "bigstep export-mjcf: wrote %s\n", out.c_str());
  return 0;
}

}  // namespace bigstep
