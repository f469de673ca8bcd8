#include "io/mjcf_scene.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>

namespace bigstep {

namespace {

// The installed folder a package prefix names (python3 finds it), or "" when it is not installed.
std::string package_folder_uncached(const std::string& prefix) {
  const char* code = prefix == "gymnasium"
                         ? "import gymnasium, os; print(os.path.join(os.path.dirname(gymnasium.__file__), 'envs', "
                           "'mujoco', 'assets'))"
                         : "import cmeel, os; print(os.path.join(os.path.dirname(os.path.dirname(cmeel.__file__)), "
                           "'cmeel.prefix', 'share', 'example-robot-data'))";
  const char* py = std::getenv("PYTHON");
  const std::string cmd = detail::concat(py && *py ? py : "python3", " -c \"", code, "\" 2>/dev/null");
  std::string out;
  if (FILE* f = popen(cmd.c_str(), "r")) {
    char buf[1024];
    while (fgets(buf, sizeof(buf), f)) out += buf;
    pclose(f);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// Asked once per process and prefix: spawning python3 costs ~0.3 s, and benches and batched
// engines load the same gymnasium model many times (bench vs-mujoco loaded it per row).
std::string package_folder(const std::string& prefix) {
  static std::mutex mu;
  static std::map<std::string, std::string> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(prefix);
  if (it == cache.end()) it = cache.emplace(prefix, package_folder_uncached(prefix)).first;
  return it->second;
}

}  // namespace

std::string resolve_model_path(const std::string& text, const std::string& scene_file) {
  // installed packages: gymnasium:<file in its MuJoCo assets>, example-robot-data:<path under share/>
  for (const char* prefix : {"gymnasium", "example-robot-data"}) {
    const std::string tag = std::string(prefix) + ":";
    if (text.rfind(tag, 0) != 0) continue;
    const std::string dir = package_folder(prefix);
    if (dir.empty())
      throw InvalidArgument(detail::concat(text, ": the Python package ", prefix,
                                           " is not installed (pip install ", prefix, "; scripts/setup.sh does)"));
    return (std::filesystem::path(dir) / text.substr(tag.size())).lexically_normal().string();
  }
  // relative to the scene file's folder (a bare XML file names itself)
  std::filesystem::path p(text);
  if (p.is_relative() && !scene_file.empty()) p = std::filesystem::path(scene_file).parent_path() / p;
  return p.lexically_normal().string();
}

std::shared_ptr<const MujocoImport> import_model_keys(Cfg& model, const std::string& scene_file) {
  const bool mjcf = model.has("mjcf"), urdf = model.has("urdf");
  if (mjcf && urdf) model.fail_text(model.key("urdf"), show(model.node()["urdf"]), "give one of mjcf or urdf");
  const char* k = mjcf ? "mjcf" : "urdf";
  std::string path;
  try {
    path = resolve_model_path(model.str(k, ""), scene_file);
  } catch (const InvalidArgument& e) {
    model.fail_text(model.key(k), show(model.node()[k]), e.what());
  }
  const std::filesystem::path p(path);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(p, ec)) model.fail(model.key(k), path, "no such file");
  // what may be dropped instead of failing, each named
  MujocoImportOptions opt;
  const YAML::Node allow = model.raw("allow");
  if (allow.IsDefined() && !allow.IsNull()) {
    if (!allow.IsSequence()) model.fail_text(model.key("allow"), show(allow), "expected a list");
    for (size_t i = 0; i < allow.size(); ++i) {
      const std::string a = allow[i].IsScalar() ? allow[i].as<std::string>() : show(allow[i]);
      if (a == "frictionloss") opt.drop_frictionloss = true;
      else if (a == "tendons") opt.drop_tendons = true;
      else if (a == "joint_stiffness") opt.drop_joint_stiffness = true;
      else if (a == "geoms") opt.drop_geoms = true;
      else if (a == "unsupported_pairs") opt.drop_unsupported_pairs = true;
      else
        model.fail(detail::concat(model.key("allow"), "[", i, "]"), a,
                   "expected one of: frictionloss, tendons, joint_stiffness, geoms, unsupported_pairs");
    }
  }
  opt.free_root = model.flag("free_root");
  opt.floor = model.flag("floor");
  // PBD/PBFD limit penalty C of every imported joint (0 keeps contact.c_perp): MuJoCo's limits are
  // soft constraints (solreflimit / solimplimit), which a stiff c_perp-sized stop does not reproduce
  const double limit_k = model.num("limit_stiffness");
  if (!(limit_k >= 0) || !std::isfinite(limit_k)) model.fail(model.key("limit_stiffness"), limit_k, "must be finite and >= 0");
  model.finish();
  auto imp = std::make_shared<MujocoImport>(import_mujoco(path, opt));
  if (limit_k > 0)
    for (LinkSpec& l : imp->spec.links) l.limit_stiffness = limit_k;
  return imp;
}

double imported_mu(const Model& m, const MujocoImport& imp) {
  double mu = -1;
  for (int q = 0; q < m.n_pair; ++q) {
    double f = 0;
    for (int g : {m.pair_geom_a[q], m.pair_geom_b[q]})
      if (g < int(imp.geom_friction.size())) f = std::max(f, imp.geom_friction[g]);
    mu = std::max(mu, f);
  }
  return mu < 0 ? 0.5 : mu;
}

double c_par_from_mu(double mu, double c_perp, double beta, double slip_speed, double dt) {
  return mu * c_perp / ((beta + 1) * std::pow(slip_speed * dt, beta));
}

double c_perp_rest_depth(double weight, double alpha) { return weight / (4 * std::pow(2e-3, alpha)); }

std::string imported_scene_name(const std::string& path) { return std::filesystem::path(path).stem().string(); }

}  // namespace bigstep
