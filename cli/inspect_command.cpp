#include "cli/inspect_command.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>

#include "core/crba.h"
#include "core/error.h"
#include "core/rnea.h"
#include "envs/scene.h"

namespace bigstep {

namespace {
nlohmann::json vec(const VecX& v) { return std::vector<double>(v.data(), v.data() + v.size()); }
nlohmann::json mat(const MatX& M) {
  nlohmann::json rows = nlohmann::json::array();
  for (int i = 0; i < M.rows(); ++i) rows.push_back(vec(M.row(i).transpose()));
  return rows;
}
}  // namespace

int inspect_command(const std::vector<std::string>& args) {
  std::string config;
  std::vector<std::string> sets;
  int states = 3;
  unsigned seed = 1;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool has_value = i + 1 < args.size();
    if (a == "--help" || a == "-h") {
      std::puts("usage: bigstep inspect CONFIG [--set key=value]... [--states N] [--seed S]\n"
                "Prints the finalized model (links, DOFs) and CRBA H / RNEA tau at N seeded random\n"
                "states (q, qd, qdd uniform in [-1, 1]) as JSON on stdout.");
      return 0;
    } else if (a == "--set" && has_value) {
      sets.push_back(args[++i]);
    } else if (a == "--states" && has_value) {
      states = std::atoi(args[++i].c_str());
    } else if (a == "--seed" && has_value) {
      seed = unsigned(std::atoi(args[++i].c_str()));
    } else if (!a.empty() && a[0] != '-' && config.empty()) {
      config = a;
    } else {
      std::fprintf(stderr, "bigstep inspect: bad argument '%s' (see --help)\n", a.c_str());
      return 2;
    }
  }
  if (config.empty() || states < 0) {
    std::fprintf(stderr, "bigstep inspect: missing CONFIG or bad --states\n");
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
    const LinkSpec& s = m.links[l];
    j["links"].push_back({{"name", s.name}, {"parent", s.parent}, {"joint", joint_type_name(s.joint)},
                          {"R_o", mat(s.R_o)}, {"t_o", vec(s.t_o)}, {"mass", s.mass}, {"com", vec(s.com)},
                          {"inertia", mat(s.inertia)}, {"dof_adr", m.link_dof_adr[l]},
                          {"dof_num", m.link_dof_num[l]}});
  }
  for (int k = 0; k < m.n_q; ++k)
    j["dofs"].push_back({{"link", m.dof_link[k]}, {"revolute", bool(m.dof_revolute[k])},
                         {"axis", vec(m.dof_axis[k])}, {"name", m.dof_name[k]}});
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
    j["states"].push_back({{"q", vec(q)}, {"qd", vec(qd)}, {"qdd", vec(qdd)}, {"H", mat(H)}, {"tau", vec(tau)}});
  }
  std::puts(j.dump(1).c_str());
  return 0;
}

}  // namespace bigstep
