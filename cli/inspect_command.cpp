#include "cli/inspect_command.h"

#include "cli/commands.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>

#include "core/crba.h"
#include "core/error.h"
#include "core/rnea.h"
#include "io/mjcf_import.h"
#include "io/scene.h"

namespace bigstep {

namespace {
nlohmann::json vec(const VecX& v) { return std::vector<double>(v.data(), v.data() + v.size()); }
nlohmann::json mat(const MatX& M) {
  nlohmann::json rows = nlohmann::json::array();
  for (int i = 0; i < M.rows(); ++i) rows.push_back(vec(M.row(i).transpose()));
  return rows;
}
}  // namespace

namespace {

// Limit of --states: the JSON holds an n_q x n_q matrix per state, and 1e8 states never finish.
constexpr long kMaxStates = 10000;
constexpr int kDefaultStates = 3;
constexpr unsigned kDefaultSeed = 1;

// A whole number in [lo, hi] written in digits, or exit 2 naming the option and the range.
long parse_count(const std::string& opt, const std::string& text, long lo, long hi) {
  long v = -1;
  const bool digits = !text.empty() && text.size() <= 18 && text.find_first_not_of("0123456789") == std::string::npos;
  if (digits) v = std::stol(text);
  BIGSTEP_CHECK_ARG(digits && v >= lo && v <= hi, opt, text.substr(0, 80), detail::concat("expected an integer in [", lo, ", ", hi, "]"));
  return v;
}

}  // namespace

int inspect_command(const std::vector<std::string>& args) {
  std::string config;
  std::vector<std::string> sets;
  int states = kDefaultStates;
  unsigned seed = kDefaultSeed;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool has_value = i + 1 < args.size();
    if (a == "--help" || a == "-h") {
      std::fputs(command_usage("inspect").c_str(), stdout);
      std::printf("Prints the finalized model (links, DOFs) and CRBA H / RNEA tau at N seeded random\n"
                  "states (q, qd, qdd uniform in [-1, 1]) as JSON on stdout; for an MJCF / URDF model also\n"
                  "each state's MuJoCo qpos / qvel and the joint map. N in [0, %ld] (default %d),\n"
                  "S in [0, 2^32) (default %u).\n", kMaxStates, kDefaultStates, kDefaultSeed);
      return 0;
    } else if (a == "--set" && has_value) {
      sets.push_back(args[++i]);
    } else if (a == "--states" && has_value) {
      states = int(parse_count("--states", args[++i], 0, kMaxStates));
    } else if (a == "--seed" && has_value) {
      seed = unsigned(parse_count("--seed", args[++i], 0, 4294967295L));
    } else if (!a.empty() && a[0] != '-' && config.empty()) {
      config = a;
    } else {
      std::fprintf(stderr, "bigstep inspect: bad argument '%s' (see --help)\n", a.c_str());
      return 2;
    }
  }
  if (config.empty()) {
    std::fprintf(stderr, "bigstep inspect: missing CONFIG (see --help)\n");
    return 2;
  }
  Scene sc;
  try {
    sc = load_scene(config, sets);
  } catch (const InvalidArgument& e) {
    std::fprintf(stderr, "bigstep inspect: %s\n", e.what());
    return 2;
  }
  const Model& m = sc.model;
  nlohmann::ordered_json j;
  j["scene"] = sc.name;
  j["n_q"] = m.n_q;
  j["gravity"] = vec(m.gravity);
  for (int l = 0; l < m.n_link; ++l) {
    const LinkSpec s = m.link_spec(l);
    j["links"].push_back({{"name", s.name}, {"parent", s.parent}, {"joint", joint_type_name(s.joint)},
                          {"R_o", mat(s.R_o)}, {"t_o", vec(s.t_o)}, {"mass", s.mass}, {"com", vec(s.com)},
                          {"inertia", mat(s.inertia)}, {"dof_adr", m.link_dof_adr[l]},
                          {"dof_num", m.link_dof_num[l]}});
  }
  for (int k = 0; k < m.n_q; ++k)
    j["dofs"].push_back({{"link", m.dof_link[k]}, {"revolute", bool(m.dof_revolute[k])},
                         {"axis", vec(m.dof_axis[k])}, {"name", m.dof_name[k]}});
  if (sc.imported) {  // where each MuJoCo joint's qpos / qvel entries and bigstep DOFs are
    const MujocoImport& imp = *sc.imported;
    j["mujoco"] = {{"file", imp.path}, {"nq", imp.nq}, {"nv", imp.nv}, {"timestep", imp.timestep}};
    for (const MujocoJointMap& jm : imp.joints)
      j["mujoco"]["joints"].push_back({{"name", jm.name}, {"qpos_adr", jm.qpos_adr}, {"qvel_adr", jm.qvel_adr},
                                       {"theta_adr", jm.theta_adr}, {"link", jm.link}});
    if (!imp.approximations.empty()) j["mujoco"]["approximations"] = imp.approximations;
  }
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> U(-1, 1);
  for (int s = 0; s < states; ++s) {
    VecX q(m.n_q), qd(m.n_q), qdd(m.n_q), tau;
    for (int k = 0; k < m.n_q; ++k) q[k] = U(rng);
    for (int k = 0; k < m.n_q; ++k) qd[k] = U(rng);
    for (int k = 0; k < m.n_q; ++k) qdd[k] = U(rng);
    MatX H;
    crba(m, q, H);
    rnea<double>(m, q, qd, qdd, tau);
    nlohmann::ordered_json st{{"q", vec(q)}, {"qd", vec(qd)}, {"qdd", vec(qdd)}, {"H", mat(H)}, {"tau", vec(tau)}};
    if (sc.imported) {  // the same state in MuJoCo's coordinates (io/mjcf_import.h)
      VecX qpos, qvel;
      qpos_from_theta(*sc.imported, q, qpos);
      qvel_from_theta_dot(*sc.imported, q, qd, qvel);
      st["qpos"] = vec(qpos);
      st["qvel"] = vec(qvel);
    }
    j["states"].push_back(st);
  }
  std::puts(j.dump(1).c_str());
  return 0;
}

}  // namespace bigstep
