#include "cli/batch_run.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iomanip>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include "cli/compliant_counters.h"
#include "cli/run_command.h"
#include "batch/batch_engines.h"
#include "batch/penetration.h"
#include "core/error.h"
#include "io/atomic_write.h"
#include "solvers/registry.h"

namespace bigstep {

double machine_memory_bytes() { return double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE)); }

namespace {

// Refuses a batch whose state alone outgrows the machine (an allocation failure or the OOM killer
// otherwise): K x n_q doubles in about 8 arrays (theta, theta_prev, the engines' copies).
void check_batch_memory(const Scene& sc) {
  const double need = double(sc.rollouts) * (8.0 * 8.0 * sc.model.n_q + 64.0);
  const double have = machine_memory_bytes();
  BIGSTEP_CHECK_ARG(!(have > 0 && need > have), "batch.rollouts", sc.rollouts,
                    detail::concat("needs about ", need / 1e9, " GB for K x n_q = ", sc.rollouts, " x ", sc.model.n_q,
                                   " states, more than this machine's ", have / 1e9, " GB"));
}

}  // namespace

int run_batch(const Scene& sc, const std::filesystem::path& dir, const BackendChoice& bk,
              const std::function<void(int, int)>& progress) {
  constexpr int kSavedRollouts = 16;
  const Model& m = sc.model;
  const int K = sc.rollouts, n = m.n_q, steps = sc.steps();
  const double dt = sc.settings.dt;
  check_batch_memory(sc);
  const BatchOptions& opt = sc;  // the scene's batch.* block
  StateBatch b(K, n);
  RolloutParamTable p;
  init_batch(sc, opt, b, p);
  std::unique_ptr<BatchEngine> stepper;
  try {
    stepper = make_batch_engine(sc, bk, b, p);
    stepper->check_penetration(true);
  } catch (const InvalidArgument& e) {
    std::fprintf(stderr, "bigstep run: %s: %s\n", sc.source.c_str(), e.what());
    return 2;
  }
  std::vector<double> it_sum(K, 0);
  std::vector<int> it_max(K, 0), n_bad(K, 0), steps_done(K, 0), pen_step(K, 0);
  CompliantCounters compliant;  // over every rollout's steps (the reference engine's b.stats)
  AtomicFile traj_file(dir / "trajectory.csv");
  std::ostream& traj = traj_file.out();
  traj << "t";
  for (const auto& name : m.dof_name) traj << "," << name;
  traj << "\n" << std::setprecision(17);
  // and the first kSavedRollouts rollouts side by side (bigstep render --rollout K / --grid N)
  const int saved = std::min(K, kSavedRollouts);
  AtomicFile trajs_file(dir / "trajectory_rollouts.csv");
  std::ostream& trajs = trajs_file.out();
  trajs << "t";
  for (int k = 0; k < saved; ++k)
    for (const auto& name : m.dof_name) trajs << ",r" << k << "." << name;
  trajs << "\n" << std::setprecision(17);
  auto write_row0 = [&](int s) {
    traj << s * dt;
    for (int i = 0; i < n; ++i) traj << "," << b.theta[i];
    traj << "\n";
    trajs << s * dt;
    for (int i = 0; i < saved * n; ++i) trajs << "," << b.theta[i];
    trajs << "\n";
  };
  write_row0(0);
  const auto t0 = std::chrono::steady_clock::now();
  for (int s = 0; s < steps; ++s) {
    stepper->step(b, p);
    for (int k = 0; k < K; ++k) {
      // the first step whose state went through the terrain or a body (the step's output check)
      if (!pen_step[k] && (b.status[k] & STATUS_PENETRATED)) pen_step[k] = s + 1;
      if (status_failed(b.status[k]) &&
          (b.status[k] & (STATUS_NONFINITE | STATUS_GIMBAL_LOCK | STATUS_FACTOR_FAILED | STATUS_CONTROL_DIVERGED)) &&
          steps_done[k] < s)
        continue;  // held since an earlier step
      ++steps_done[k];
      it_sum[k] += b.iterations[k];
      it_max[k] = std::max(it_max[k], b.iterations[k]);
      n_bad[k] += status_failed(b.status[k]);
      if (sc.integrator == "compliant") compliant.add(b.stats[k]);
    }
    write_row0(s + 1);
    if (progress) progress(s + 1, steps);
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // per-rollout table
  AtomicFile rows_file(dir / "rollouts.csv");
  std::ostream& rows = rows_file.out();
  rows << "rollout,steps,iterations_mean,iterations_max,converged_fraction,status,c_par,mu,c_perp,mass_scale";
  for (const auto& name : m.dof_name) rows << "," << name;
  rows << "\n" << std::setprecision(12);
  int failed = 0, penetrated = 0;
  double conv_sum = 0, it_all = 0;
  // per-rollout statistics, also in summary.json (arrays indexed by rollout)
  nlohmann::ordered_json per;
  for (const char* key : {"steps", "iterations_mean", "iterations_max", "converged_fraction", "status", "residual"})
    per[key] = nlohmann::json::array();
  int it_all_max = 0;
  for (int k = 0; k < K; ++k) {
    const double ns = std::max(1, steps_done[k]);
    const double conv = (steps_done[k] - n_bad[k]) / ns;
    conv_sum += conv;
    it_all += it_sum[k];
    it_all_max = std::max(it_all_max, it_max[k]);
    failed += n_bad[k] > 0 || steps_done[k] < steps || pen_step[k] > 0;
    penetrated += pen_step[k] > 0;
    const uint32_t status = b.status[k] | (pen_step[k] ? uint32_t(STATUS_PENETRATED) : 0u);
    per["steps"].push_back(steps_done[k]);
    per["iterations_mean"].push_back(it_sum[k] / ns);
    per["iterations_max"].push_back(it_max[k]);
    per["converged_fraction"].push_back(conv);
    per["status"].push_back(status);
    per["residual"].push_back(b.residual[k]);
    per["mass_scale"].push_back(p.mass_ratio(m, k));  // total-mass ratio sum_j s_kj m_j / sum_j m_j
    if (!p.link_mass_scale.empty()) {  // (K x n_link) per-link factors (batch.randomize_mass)
      const double* s = p.mass_scale_row(k, m.n_link);
      per["link_mass_scale"].push_back(std::vector<double>(s, s + m.n_link));
    }
    const ContactParams& cp = p.contact.empty() ? sc.settings.contact : p.contact[k];
    rows << k << "," << steps_done[k] << "," << it_sum[k] / ns << "," << it_max[k] << "," << conv << ","
         << status << "," << cp.c_par << "," << cp.mu << "," << cp.c_perp << ","
         << p.mass_ratio(m, k);  // total-mass ratio; the per-link factors are in summary.json
    for (int i = 0; i < n; ++i) rows << "," << b.theta[size_t(k) * n + i];
    rows << "\n";
  }
  nlohmann::ordered_json j;
  j["scene"] = sc.name;
  j["config"] = sc.source;
  j["integrator"] = sc.integrator;
  j["optimizer"] = find_solver(sc.integrator).solver_name({sc.settings, sc.ne, sc.nmdp, sc.compliant});
  j["backend"] = stepper->name();
  j["backend_reason"] = bk.reason;
  j["precision"] = sc.precision;
  j["schedule"] = sc.schedule;
  j["threads"] = stepper->threads();
  j["rollouts"] = K;
  j["seed"] = sc.seed;
  j["n_q"] = n;
  j["dt"] = dt;
  j["steps"] = steps;
  j["sim_time_s"] = steps * dt;
  j["wall_time_s"] = wall;
  j["env_steps_per_s"] = wall > 0 ? double(K) * steps / wall : 0.0;
  j["iterations_mean"] = it_all / std::max(1.0, double(K) * steps);
  j["iterations_max"] = it_all_max;
  j["converged_fraction"] = conv_sum / K;
  j["rollouts_failed"] = failed;
  j["rollouts_penetrated"] = penetrated;
  if (sc.integrator == "compliant") j["compliant"] = compliant.json(sc.compliant.solve);
  j["per_rollout_csv"] = "rollouts.csv";  // with parameters and final states
  j["per_rollout"] = per;
  add_import_approximations(sc, j);
  // the summary is text before it is written; the files go in place once all are complete
  const std::string summary = j.dump(2) + "\n";
  write_model_xml(sc, dir);
  traj_file.commit();
  trajs_file.commit();
  rows_file.commit();
  write_file_atomically(dir / "summary.json", summary);
  std::printf("%s: %d rollouts x %d steps (%s, dt=%g) in %.3f s wall on %d threads (%.0f env-steps/s); "
              "%d rollouts with failures; wrote %s\n",
              sc.name.c_str(), K, steps, sc.integrator.c_str(), dt, wall, stepper->threads(),
              double(K) * steps / std::max(wall, 1e-12), failed, (dir / "summary.json").c_str());
  for (int k = 0; k < K && penetrated; ++k)
    if (pen_step[k]) {
      PenetrationCheck check(m);
      const Penetration now = check.find(m, b.row(b.theta, k));
      std::fprintf(stderr, "bigstep run: %s: %d of %d rollouts sank through the terrain (status penetrated), e.g. "
                   "rollout %d from step %d; at the end %s (contact.c_perp = %g)\n", sc.name.c_str(), penetrated, K, k,
                   pen_step[k], now.found() ? describe(m, now).c_str() : "it is back above the terrain",
                   sc.settings.contact.c_perp);
      break;
    }
  return failed ? 1 : 0;
}

}  // namespace bigstep
