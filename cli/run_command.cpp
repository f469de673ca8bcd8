// `bigstep run`: load a scene, simulate it, write trajectory.csv, steps.csv and summary.json.
#include "cli/run_command.h"

#include "cli/compliant_counters.h"

#include "cli/commands.h"
#include "cli/render_command.h"
#include "core/chart.h"
#include "io/atomic_write.h"
#include "io/mjcf_export.h"
#include "io/mjcf_import.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <charconv>
#include <iomanip>
#include <nlohmann/json.hpp>

#include "core/backend.h"
#include "core/error.h"
#include "cli/batch_run.h"
#include "batch/penetration.h"
#include "control/control_bound.h"
#include "batch/rollout.h"
#include "io/scene_keys.h"
#include "solvers/registry.h"

namespace bigstep {

const char* run_help() {
  static const std::string help = command_usage("run") +
         "\n"
         "Simulates the scene in CONFIG (YAML, see configs/; or an MJCF / URDF file, compiled by MuJoCo)\n"
         "and writes to DIR (default out/<scene>):\n"
         "  trajectory.csv   t, then one column per generalized coordinate (theta)\n"
         "  steps.csv        per step: iterations, final residual, status bits, wall time,\n"
         "                   normal_force_N (summed normal contact force of the step [N], in the\n"
         "                   integrator's own terms: StepStats::normal_force)\n"
         "  summary.json     scene, integrator, optimizer, dt, steps, sim_time_s, wall_time_s,\n"
         "                   iterations_mean, iterations_max, converged_fraction and scene metrics\n"
         "                   (nmdp_*: substeps, halvings, frames_subdivided, substeps_max_per_frame,\n"
         "                   min_substep_s of Alg. 2)\n"
         "                   (compliant: a \"compliant\" map of per-step sweeps, nstep_iterations,\n"
         "                   qp_iterations (mean, max), fallbacks, steps_with_fallback,\n"
         "                   inexact_t_steps, steps_flagged)\n"
         "                   (sliding: sliding_distance_m; com: com_final_m; quadruped: tilt_final_rad,\n"
         "                   tilt_max_rad, distance_final_m, height_mean_m, height_min_m, height_max_m)\n"
         "  quadruped.csv    metrics.type quadruped: t, torso tilt [rad], torso COM height [m],\n"
         "                   distance along metrics.heading [m]\n"
         "  model.xml        the model as MJCF (qpos = theta; bigstep export-mjcf), for bigstep render\n"
         "Options:\n"
         "  --set key=value  override any config key (value is YAML: 0.05, pbd, [0, 1, 2]);\n"
         "                   repeatable, e.g. --set integrator.dt=0.05 --set contact.c_par=1e6\n"
         "  --out DIR        output directory (created)\n"
         "  --backend B      cpu | cuda | auto (= batch.backend). cuda steps --rollouts K\n"
         "                   on the GPU (pbfd + jtj_lm, one LM iteration per kernel launch); auto picks\n"
         "                   cuda only when built with it and a device is present, and says why in\n"
         "                   summary.json (backend_reason); a single rollout runs on the CPU reference\n"
         "  --rollouts K     (= batch.rollouts) K rollouts on the batched backend (CPU: threads over rollouts);\n"
         "                   each starts from the scene's state plus a seeded perturbation\n"
         "                   (batch.perturb_theta, batch.perturb_theta_dot); writes rollouts.csv and\n"
         "                   trajectory.csv of rollout 0, trajectory_rollouts.csv of the first 16;\n"
         "                   summary.json adds env_steps_per_s\n"
         "  --seed S         seed of the perturbations (= batch.seed; same seed -> bit-identical results)\n"
         "  --threads N      CPU threads for --rollouts (= batch.threads)\n"
         "  --quiet          no progress bar\n"
         "  --render         then draw DIR/render.gif and DIR/filmstrip.png (= bigstep render DIR)\n"
         "Exit codes: 0 ok; 1 some step did not converge, the run aborted or a body sank through the\n"
         "terrain (a contact sphere's centre more than max(0.05 m, radius) below a plane: status\n"
         "penetrated) or an ID controller's torques diverged (non-finite or beyond 100 x the model's\n"
         "weight at its full span: status control_diverged); 2 bad usage or config (one line naming\n"
         "the file, key and value).\n"
         "\n";
  return help.c_str();
}

namespace {

std::string status_text(uint32_t s) {
  if (s == 0) return "ok";
  std::string t;
  auto add = [&](uint32_t bit, const char* name) {
    if (!(s & bit)) return;
    if (!t.empty()) t += '|';
    t += name;
  };
  add(STATUS_NOT_CONVERGED, "not_converged");
  add(STATUS_NONFINITE, "nonfinite");
  add(STATUS_FACTOR_FAILED, "factor_failed");
  add(STATUS_GIMBAL_LOCK, "gimbal_lock");
  add(STATUS_RESTARTED, "restarted");
  add(STATUS_SMALL_STEP, "small_step");
  add(STATUS_PENETRATED, "penetrated");
  add(STATUS_CONTACT_OVERFLOW, "contact_overflow");
  add(STATUS_CONTROL_DIVERGED, "control_diverged");
  return t;
}

// The first step (1-based) that ended with a contact through the terrain or a body
// (STATUS_PENETRATED, the step's output check in simulate()), 0 if none.
int first_penetration(const Rollout& r) {
  for (size_t i = 0; i < r.stats.size(); ++i)
    if (r.stats[i].status & STATUS_PENETRATED) return int(i) + 1;
  return 0;
}

// Refuses a single run whose stored trajectory outgrows the machine (an allocation failure
// otherwise): per step theta (n_q doubles in a VecX), its StepStats and the wall time.
void check_run_memory(const Scene& sc) {
  const double per_step = 8.0 * sc.model.n_q + 48 + double(sizeof(StepStats)) + 8;
  const double need = double(sc.steps()) * per_step, have = machine_memory_bytes();
  if (have > 0 && need > 0.5 * have)
    throw InvalidArgument(detail::concat(sc.source, ": integrator.duration = ", sc.duration, ": with integrator.dt = ",
                                         sc.settings.dt, " the run stores ", sc.steps(), " steps, about ", need / 1e9,
                                         " GB, more than half of this machine's ", have / 1e9, " GB"));
}

}  // namespace

void write_model_xml(const Scene& sc, const std::filesystem::path& dir) {
  std::string xml, error;
  try {
    MjcfExportOptions opt;
    opt.name = sc.name;
    opt.timestep = sc.settings.dt;
    opt.friction = sc.ne.mu;
    xml = export_mjcf(sc.model, opt);
  } catch (const std::exception& e) {  // rendering needs it, the run does not
    error = e.what();
  }
  std::error_code ec;
  std::filesystem::remove(dir / "model_export_error.txt", ec);
  if (error.empty()) write_file_atomically(dir / "model.xml", xml);
  else write_file_atomically(dir / "model_export_error.txt", error + "\n");
}

void add_import_approximations(const Scene& sc, nlohmann::ordered_json& j) {
  if (sc.imported && !sc.imported->approximations.empty()) j["import_approximations"] = sc.imported->approximations;
}

namespace {

void write_outputs(const Scene& sc, const Rollout& r, const std::filesystem::path& dir,
                   const BackendChoice& bk) {
  const Model& m = sc.model;
  const double dt = sc.settings.dt;
  int it_max = 0, n_conv = 0, n_restart = 0;
  double it_sum = 0;
  for (const auto& s : r.stats) {
    it_max = std::max(it_max, s.iterations);
    it_sum += s.iterations;
    n_conv += s.converged();
    n_restart += (s.status & STATUS_RESTARTED) != 0;
  }
  const double ns = std::max<size_t>(1, r.stats.size());
  const Metrics mt = compute_metrics(sc, r);
  nlohmann::ordered_json j;
  QuadrupedSeries quad;
  j["scene"] = sc.name;
  j["config"] = sc.source;
  j["integrator"] = sc.integrator;
  const SolverEntry& method = find_solver(sc.integrator);
  j["optimizer"] = method.solver_name({sc.settings, sc.ne, sc.nmdp, sc.compliant});
  j["backend"] = "cpu";
  j["backend_reason"] = bk.reason;
  j["n_q"] = m.n_q;
  j["dt"] = dt;
  j["steps"] = r.steps_run;
  j["steps_requested"] = sc.steps();
  j["sim_time_s"] = r.steps_run * dt;
  j["wall_time_s"] = r.wall_time_s;
  j["wall_time_per_step_s"] = r.wall_time_s / ns;
  j["iterations_mean"] = it_sum / ns;
  j["iterations_max"] = it_max;
  j["converged_fraction"] = n_conv / ns;
  j["restarts"] = n_restart;
  j["aborted"] = r.aborted;
  j["penetrated"] = std::any_of(r.stats.begin(), r.stats.end(), [](const StepStats& s) { return s.status & STATUS_PENETRATED; });
  if (method.substeps) {
    // Alg. 2 (docs/methods/nmdp.md §7.4): accepted substeps, halvings (= substeps - 1 per frame), smallest substep
    int sub = 0, sub_max = 0, frames_halved = 0, halvings = 0;
    double h_min = sc.settings.dt;
    for (const auto& s : r.stats) {
      sub += s.substeps;
      halvings += std::max(0, s.substeps - 1);
      sub_max = std::max(sub_max, s.substeps);
      frames_halved += s.substeps > 1;
      if (s.substeps > 0 && s.min_substep > 0) h_min = std::min(h_min, s.min_substep);
    }
    j["substeps"] = sub;
    j["halvings"] = halvings;
    j["frames_subdivided"] = frames_halved;
    j["substeps_max_per_frame"] = sub_max;
    j["min_substep_s"] = h_min;
  }
  if (sc.integrator == "compliant") {
    CompliantCounters cc;
    for (const auto& s : r.stats) cc.add(s);
    j["compliant"] = cc.json(sc.compliant.solve);
  }
  j["contact"] = {{"c_perp", sc.settings.contact.c_perp}, {"c_par", sc.settings.contact.c_par},
                  {"mu", sc.settings.contact.mu}};
  if (sc.pd.active()) {
    // tracking of control.reference; ID controller smoothness and force prediction (batch/rollout.h)
    j["controller"] = {{"type", controller_type_name(sc.controller.type)},
                       {"track_pos_rad", mt.track_pos_rad},
                       {"track_state_pos_rad", mt.track_state_pos_rad},
                       {"track_vel_rad_s", mt.track_vel_rad_s},
                       {"dtau_mean", mt.dtau_mean},
                       {"tau_mean", mt.tau_mean},
                       {"force_err_n", mt.force_err_n},
                       {"force_err_rel", mt.force_err_rel},
                       {"steps_clamped", mt.steps_clamped},
                       {"steps_impulse_bound", mt.steps_impulse_bound}};
  }
  if (sc.hold_link >= 0) {
    j["hold_slip_max_m"] = mt.hold_slip_max_m;
    j["hold_slip_final_m"] = mt.hold_slip_final_m;
  }
  if (sc.metric == MetricKind::Sliding) {
    j["sliding_distance_m"] = mt.sliding_distance_m;
    j["stopped_at_rest"] = r.stopped_at_rest;
    j["capped"] = !r.stopped_at_rest;
    j["tipped"] = mt.tipped;
    j["max_tilt_rad"] = mt.max_tilt_rad;
  }
  if (sc.metric == MetricKind::Quadruped) {
    // docs/methods/nmdp.md §10 metrics of the torso (metrics.link); the time series are in quadruped.csv
    j["reference"] = sc.pd.active() ? reference_kind_name(sc.reference.kind) : "none";
    j["tilt_final_rad"] = mt.tilt_final_rad;
    j["tilt_max_rad"] = mt.tilt_max_rad;
    j["distance_final_m"] = mt.distance_final_m;
    j["height_mean_m"] = mt.height_mean_m;
    j["height_min_m"] = mt.height_min_m;
    j["height_max_m"] = mt.height_max_m;
    quad = quadruped_series(sc, r);
  }
  j["com_initial_m"] = {mt.com_initial.x(), mt.com_initial.y(), mt.com_initial.z()};
  j["com_final_m"] = {mt.com_final.x(), mt.com_final.y(), mt.com_final.z()};
  add_import_approximations(sc, j);
  // the summary is text before any file is opened: a value it cannot hold fails here, not halfway
  const std::string summary = j.dump(2) + "\n";
  write_model_xml(sc, dir);
  {
    AtomicFile file(dir / "trajectory.csv");
    std::ostream& f = file.out();
    f << "t";
    for (const auto& n : m.dof_name) f << "," << n;
    f << "\n";
    // %.17g by std::to_chars (the same text as the stream's setprecision(17), without printf's
    // multi-precision path: it cost ~80 K instructions per step of a 15-DOF run)
    char buf[32];
    const auto put = [&](double v) {
      f.write(buf, std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 17).ptr - buf);
    };
    // ball / floating joints: the world ZYX angles (the state's rotation charts undone, core/chart.h)
    VecX th(m.n_q);
    for (size_t i = 0; i < r.theta.size(); ++i) {
      put(double(i) * dt);
      th = r.theta[i];
      to_identity_chart(m, r.chart_of(i), th);
      for (int k = 0; k < m.n_q; ++k) {
        f << ',';
        put(th[k]);
      }
      f << '\n';
    }
    file.commit();
  }
  {
    AtomicFile file(dir / "steps.csv");
    std::ostream& f = file.out();
    f << "step,t,iterations,residual,status,wall_s,normal_force_N\n" << std::setprecision(10);
    for (size_t i = 0; i < r.stats.size(); ++i)
      f << i + 1 << "," << (i + 1) * dt << "," << r.stats[i].iterations << "," << r.stats[i].residual
        << "," << status_text(r.stats[i].status) << "," << r.step_wall_s[i] << "," << r.stats[i].normal_force << "\n";
    file.commit();
  }
  if (sc.metric == MetricKind::Quadruped) {
    AtomicFile file(dir / "quadruped.csv");
    std::ostream& f = file.out();
    f << "t,tilt_rad,height_m,distance_m\n" << std::setprecision(12);
    for (size_t i = 0; i < quad.t.size(); ++i)
      f << quad.t[i] << "," << quad.tilt_rad[i] << "," << quad.height_m[i] << "," << quad.distance_m[i] << "\n";
    file.commit();
  }
  write_file_atomically(dir / "summary.json", summary);
}

}  // namespace

int run_command(const std::vector<std::string>& args) {
  std::string config, out;
  std::vector<std::string> sets;
  bool quiet = false, render = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const char* opt) -> std::string {
      if (i + 1 >= args.size()) {
        std::fprintf(stderr, "bigstep run: %s needs a value\n", opt);
        std::exit(2);
      }
      return args[++i];
    };
    if (a == "--help" || a == "-h") {
      std::fputs(run_help(), stdout);
      std::fputs(scene_keys_help().c_str(), stdout);
      return 0;
    } else if (a == "--set") {
      sets.push_back(value("--set"));
    } else if (a.rfind("--set=", 0) == 0) {
      sets.push_back(a.substr(6));
    } else if (a == "--out") {
      out = value("--out");
    } else if (a == "--backend") {
      sets.push_back("batch.backend=" + value("--backend"));
    } else if (a == "--rollouts") {
      sets.push_back("batch.rollouts=" + value("--rollouts"));
    } else if (a == "--seed") {
      sets.push_back("batch.seed=" + value("--seed"));
    } else if (a == "--threads") {
      sets.push_back("batch.threads=" + value("--threads"));
    } else if (a == "--quiet") {
      quiet = true;
    } else if (a == "--render") {
      render = true;
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "bigstep run: unknown option '%s' (see bigstep run --help)\n", a.c_str());
      return 2;
    } else if (config.empty()) {
      config = a;
    } else {
      std::fprintf(stderr, "bigstep run: unexpected argument '%s' (one CONFIG only)\n", a.c_str());
      return 2;
    }
  }
  if (config.empty()) {
    std::fprintf(stderr, "bigstep run: missing CONFIG\n%s", run_help());
    return 2;
  }
  Scene sc;
  BackendChoice bk;
  try {
    sc = load_scene(config, sets);
    bk = select_backend(sc.backend);
  } catch (const InvalidArgument& e) {
    std::fprintf(stderr, "bigstep run: %s\n", e.what());
    return 2;
  }
  // the import's approximations, once (they are in summary.json too)
  if (sc.imported)
    for (const std::string& a : sc.imported->approximations)
      std::fprintf(stderr, "bigstep run: %s: approximated: %s\n", sc.imported->path.c_str(), a.c_str());
  if (bk.backend == Backend::Cuda) {
    if (sc.rollouts == 1) bk.reason += " (a single rollout runs on the CPU reference; --rollouts K uses the GPU)";
  }
  const std::filesystem::path dir = out.empty() ? std::filesystem::path("out") / sc.name : std::filesystem::path(out);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    std::fprintf(stderr, "bigstep run: --out %s: cannot create directory (%s)\n", dir.c_str(), ec.message().c_str());
    return 2;
  }
  // progress bar on a TTY only
  const bool bar = !quiet && isatty(STDERR_FILENO);
  int last_pct = -1;
  const auto t0 = std::chrono::steady_clock::now();
  // [#####.....]  45% step 450/1000  812 steps/s  ETA 0.7 s   (rate and ETA from the wall time so far)
  auto progress = [&](int n, int total) {
    const int pct = int(100.0 * n / total);
    if (pct == last_pct) return;
    last_pct = pct;
    const int w = 30, fill = w * n / total;
    const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double rate = el > 0 ? n / el : 0;
    std::fprintf(stderr, "\r[%s%s] %3d%% step %d/%d  %.0f steps/s  ETA %.1f s   ", std::string(fill, '#').c_str(),
                 std::string(w - fill, '.').c_str(), pct, n, total, rate, rate > 0 ? (total - n) / rate : 0.0);
    std::fflush(stderr);
  };
  // the bar's line is cleared before the summary line is printed
  auto end_bar = [&] { std::fputs("\r\033[K", stderr); };
  // --render: the run's render.gif + filmstrip.png after it (cli/render_command.h); a render that
  // fails is an error of its own (exit 1) but never hides the run's code
  auto finish = [&](int rc) {
    if (!render) return rc;
    std::fflush(stdout);
    const int rr = render_command({dir.string()});
    return rc != 0 ? rc : (rr != 0 ? 1 : 0);
  };
  if (sc.rollouts > 1) {
    const int rc = run_batch(sc, dir, bk, bar ? std::function<void(int, int)>(progress) : nullptr);
    if (bar) end_bar();
    return finish(rc);
  }
  try {
    check_run_memory(sc);
  } catch (const InvalidArgument& e) {
    std::fprintf(stderr, "bigstep run: %s\n", e.what());
    return 2;
  }
  Rollout r = simulate(sc, bar ? std::function<void(int, int)>(progress) : nullptr);
  if (bar) end_bar();
  const int sank = first_penetration(r);
  write_outputs(sc, r, dir, bk);
  int failed = 0;
  for (const auto& s : r.stats) failed += !s.converged();
  std::printf("%s: %s dt=%g, %d steps in %.3f s wall; %d non-converged; wrote %s\n", sc.name.c_str(),
              sc.integrator.c_str(), sc.settings.dt, r.steps_run,
              r.wall_time_s, failed, (dir / "summary.json").c_str());
  if (r.diverged_dof >= 0)
    std::fprintf(stderr, "bigstep run: %s: at t = %g s (step %d) the controller (%s) diverged: %s asked %g, beyond "
                 "%g (%g x the model's weight at its full span; control/control_bound.h); the run stopped there\n",
                 sc.name.c_str(), (r.steps_run - 1) * sc.settings.dt, r.steps_run, controller_type_name(sc.controller.type),
                 sc.model.dof_name[size_t(r.diverged_dof)].c_str(), r.diverged_tau, r.diverged_bound, kControlBound);
  if (sank > 0) {
    PenetrationCheck check(sc.model);
    std::fprintf(stderr, "bigstep run: %s: at t = %g s (step %d) %s: the body sank through the terrain (contact.c_perp = %g)\n",
                 sc.name.c_str(), sank * sc.settings.dt, sank,
                 describe(sc.model, check.find(sc.model, r.theta[sank], r.chart_of(size_t(sank)))).c_str(), sc.settings.contact.c_perp);
  }
  return finish((failed || r.aborted || sank > 0) ? 1 : 0);
}

}  // namespace bigstep
