// `bigstep-bench vs-mujoco`: the same scene in MuJoCo (libmujoco, mj_step with the model's own
// integrator, solver and default options) and in bigstep. For each scene and
// simulator at several dt: simulated seconds per wall second on one core and on all cores (K
// rollouts: bigstep's batched CPU engine vs K MjData on a thread pool), accuracy against the
// simulator's OWN fine-dt reference from the same initial state (COM trajectory error, largest
// penetration) and the largest stable dt (doubling until non-finite, failed or blown-up).
#ifdef BIGSTEP_WITH_MUJOCO
#include "bench/harness/bench_vs_mujoco.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "batch/batch.h"
#include "core/error.h"
#include "io/scene.h"
#include "bench/harness/bench_twin.h"

namespace bigstep {

namespace {

using namespace twin;
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

const std::vector<std::string> kScenes{"chain", "hopper", "ant", "a1"};

// Options of one invocation.
struct Options {
  bool quick = false;
  double horizon = 2.0;     // simulated seconds per run [s]
  int rollouts = 0;         // K of the all-cores rows (0 = 4 per thread; quick: 1 per thread)
  int threads = 0;          // all-cores thread count (0 = hardware)
  std::vector<std::string> scenes;
  std::string out = "bench/results";
  double min_wall = 0.5;    // a timing repeats its run until this much wall time has passed [s]
};

// The wall time of one run of f (which returns its wall time), averaged over repeats until
// min_wall has passed: short runs are dominated by timer and thread start-up noise otherwise.
template <class F>
double mean_wall(double first, double min_wall, F f) {
  double total = first;
  int reps = 1;
  while (total < min_wall) total += f(), ++reps;
  return total / reps;
}

void mj_reset_state(const MjScene& s, mjData* d, const VecX& qpos, const VecX& qvel) {
  mj_resetData(s.m.get(), d);
  mju_copy(d->qpos, qpos.data(), s.m->nq);
  mju_copy(d->qvel, qvel.data(), s.m->nv);
}

// K rollouts (qpos0 perturbed like bigstep's batch) on `threads` threads, each thread stepping its
// share of the MjData through the whole horizon. Returns the wall time.
double batch_mujoco(MjScene& s, const MujocoImport& imp, const Scene& sc, double dt, double horizon, int K, int threads) {
  mjModel* m = s.m.get();
  m->opt.timestep = dt;
  const int steps = std::max(1, int(std::lround(horizon / dt)));
  std::vector<MjDataPtr> ds;
  std::mt19937 rng(7);
  std::normal_distribution<double> N(0, sc.perturb_theta);
  for (int k = 0; k < K; ++k) {
    ds.emplace_back(mj_makeData(m));
    VecX th = sc.theta0, qpos;
    for (int i = 0; i < th.size(); ++i) th[i] += N(rng);
    qpos_from_theta(imp, th, qpos);
    mj_reset_state(s, ds.back().get(), qpos, s.qvel0);
  }
  const auto t0 = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int k = t; k < K; k += threads)
        for (int n = 0; n < steps; ++n) {
          mj_step(m, ds[k].get());
        }
    });
  for (auto& p : pool) p.join();
  return seconds_since(t0);
}

// ---------------------------------------------------------------------------------------------
// bigstep side

Scene load_bigstep(const SceneDef& s, const std::string& integrator, double dt) {
  return twin::load_bigstep(s, {"integrator.type=" + integrator}, dt);
}

// K rollouts on the batched CPU engine (batch/batch.h, threads over rollouts). Returns the wall time.
double batch_bigstep(const Scene& sc, double horizon, int K, int threads) {
  const int steps = std::max(1, int(std::lround(horizon / sc.settings.dt)));
  BatchOptions opt;
  opt.rollouts = K;
  opt.threads = threads;
  opt.seed = 7;
  opt.perturb_theta = sc.perturb_theta;
  opt.perturb_theta_dot = 0;
  StateBatch b(K, sc.model.n_q);
  RolloutParamTable p;
  init_batch(sc, opt, b, p);
  CpuBatchStepper stepper(sc, threads);
  // warm-up: the first step makes each rollout's Data (allocation, outside the timing); then the
  // same episode restarts from its initial states
  stepper.step(b, p);
  init_batch(sc, opt, b, p);
  std::vector<int> all(K);
  for (int k = 0; k < K; ++k) all[k] = k;
  stepper.reset(all);
  const auto t0 = Clock::now();
  for (int n = 0; n < steps; ++n) stepper.step(b, p);
  return seconds_since(t0);
}

// ---------------------------------------------------------------------------------------------

struct Row {
  std::string scene, simulator, integrator;
  double dt = 0;
  std::string role;  // run | reference
  double horizon = 0;
  int steps = 0, threads = 1, rollouts = 1;
  double wall_s = 0, iterations_per_step = 0, com_err_max = 0, com_err_rms = 0, max_pen = 0;
  double com_err_other = 0;  // max COM error against the other simulator's reference
  double cpu_s = 0;          // one-core rows: thread CPU time of the first timed run (0 = not measured)
  bool stable = true;
  std::string why;
  double sim_per_wall() const { return rollouts * horizon / wall_s; }
};

struct StabilityRow {
  std::string scene, simulator, integrator;
  double start_dt, largest_stable_dt, first_unstable_dt;
  std::string why;
};

// Largest stable dt: from dt0, doubling while stable (to at most the horizon / 4). run(dt) -> Run.
template <class F>
StabilityRow stability(const std::string& scene, const std::string& sim, const std::string& integ, double dt0,
                       double horizon, F run) {
  StabilityRow s{scene, sim, integ, dt0, 0, 0, "stable up to the largest dt tried"};
  for (double dt = dt0; dt <= horizon / 4 + 1e-12; dt *= 2) {
    const Run r = run(dt);
    std::fprintf(stderr, "  stability %s %s %s dt %g: %s\n", scene.c_str(), sim.c_str(), integ.c_str(), dt,
                 r.stable ? "stable" : r.why.c_str());
    if (!r.stable) {
      s.first_unstable_dt = dt, s.why = r.why;
      break;
    }
    s.largest_stable_dt = dt;
  }
  return s;
}

const char* kUsage =
    "usage: bigstep-bench vs-mujoco [--quick] [--out DIR] [--scenes a,b] [--horizon S] [--rollouts K] [--threads N]\n"
    "                               [--min-wall S]\n"
    "The same scene in MuJoCo (mj_step, the model's own integrator / solver / options) and bigstep,\n"
    "run from the repository root. Scenes: chain (configs/chain_floating_ground.yaml vs\n"
    "bench/models/chain_floating_ground.xml), hopper and ant (gymnasium's MJCF in both; the ant from\n"
    "gymnasium's pose with its ankles inside their ranges, +-0.6 rad, and MuJoCo's geom margin 0), a1\n"
    "(configs/a1_stand.yaml vs the same URDF with a free root and a floor, its PD hold as MuJoCo joint\n"
    "springs + damping). Runs: MuJoCo at its timestep x1, x2, x4 (reference x1/16); bigstep PBFD at dt\n"
    "0.01, 0.02, 0.05 and NE-LCP at MuJoCo's timestep (bigstep's reference: NE-LCP at min(1e-3, MuJoCo's/8)).\n"
    "Each run: simulated s per wall s on one core and, for K rollouts, on all cores (bigstep's\n"
    "batched CPU engine vs K MjData on a thread pool); COM error (max, RMS over the run's steps)\n"
    "against the simulator's own reference from the same start (and against the other's: com_err_vs_other_ref);\n"
    "largest contact depth. Then the\n"
    "largest stable dt of each (doubling). Each timing reruns until --min-wall S (default 0.5; quick 0.2)\n"
    "have passed. --quick: chain and hopper, horizon 1 s, K = threads. Default: all four, horizon 2 s,\n"
    "K = 4 x threads.\n"
    "Writes DIR/vs_mujoco.csv, DIR/vs_mujoco_stability.csv (+ .meta.json); plot: bench/plot_vs_mujoco.py.\n";

}  // namespace

int bench_vs_mujoco(const std::vector<std::string>& args) {
  Options o;
  bool horizon_set = false, min_wall_set = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const bool more = i + 1 < args.size();
    if (args[i] == "--quick") o.quick = true;
    else if (args[i] == "--out" && more) o.out = args[++i];
    else if (args[i] == "--horizon" && more) o.horizon = std::atof(args[++i].c_str()), horizon_set = true;
    else if (args[i] == "--rollouts" && more) o.rollouts = std::atoi(args[++i].c_str());
    else if (args[i] == "--min-wall" && more) o.min_wall = std::atof(args[++i].c_str()), min_wall_set = true;
    else if (args[i] == "--threads" && more) o.threads = std::atoi(args[++i].c_str());
    else if (args[i] == "--scenes" && more) {
      const std::string l = args[++i];
      for (size_t a = 0; a <= l.size();) {
        const size_t b = std::min(l.find(',', a), l.size());
        o.scenes.push_back(l.substr(a, b - a));
        a = b + 1;
      }
    } else if (args[i] == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else {
      std::fprintf(stderr, "bigstep-bench vs-mujoco: bad argument '%s'\n%s", args[i].c_str(), kUsage);
      return 2;
    }
  }
  if (!horizon_set && o.quick) o.horizon = 1.0;
  if (!min_wall_set && o.quick) o.min_wall = 0.2;
  if (o.threads <= 0) o.threads = std::max(1, int(std::thread::hardware_concurrency()));
  if (o.rollouts <= 0) o.rollouts = o.quick ? o.threads : 4 * o.threads;
  if (o.scenes.empty()) o.scenes = o.quick ? std::vector<std::string>{"chain", "hopper"}
                                           : std::vector<std::string>{"chain", "hopper", "ant", "a1"};
  if (!(o.horizon > 0)) {
    std::fprintf(stderr, "bigstep-bench vs-mujoco: --horizon must be > 0\n");
    return 2;
  }
  std::vector<const SceneDef*> defs;
  for (const std::string& n : o.scenes) {
    const SceneDef* it = std::find(kScenes.begin(), kScenes.end(), n) != kScenes.end() ? find_scene(n) : nullptr;
    if (!it) {
      std::fprintf(stderr, "bigstep-bench vs-mujoco: --scenes: unknown scene '%s' (chain, hopper, ant, a1)\n", n.c_str());
      return 2;
    }
    defs.push_back(it);
  }
  mju_user_warning = [](const char*) {};  // a blow-up is reported per run (bad qacc), not printed
  std::vector<Row> rows;
  std::vector<StabilityRow> stab;
  const double H = o.horizon;
  const int T = o.threads, K = o.rollouts;
  try {
    for (const SceneDef* def : defs) {
      std::fprintf(stderr, "scene %s\n", def->name.c_str());
      // MuJoCo's model, and the coordinate map from bigstep's theta to its qpos
      MjScene ms = make_scene(*def);
      const Scene& base = ms.base;
      const MujocoImport* imp = ms.imp.get();
      const double h = ms.timestep;
      // each simulator's own fine-dt reference from the same start: MuJoCo at its timestep / 16;
      // bigstep NE-LCP at min(1e-3, MuJoCo's timestep / 8). Why not PBFD at 1e-3: PBFD's contact
      // is a potential (docs/methods/pbfd.md §4.2) that dissipates only through the implicit step, so at 1e-3
      // the dropped chain bounces back ~0.3 m where every run at the bench's dt (and both
      // rigid-contact methods) lands and stays: a different motion, not a finer one.
      const Run mref = run_mujoco(ms, h / 16, H);
      const Run bref = run_bigstep(load_bigstep(*def, "ne_lcp", std::min(1e-3, h / 8)), H);
      // one run's rows: one core (timing repeated to min_wall by rerunning it) and, for a run
      // (not a reference), K rollouts on all cores (batch() returns one batch's wall time)
      auto add_rows = [&](const std::string& sim, const std::string& integ, const Run& r, const Run* ref,
                          const std::string& role, const auto& batch) {
        Row row;
        row.scene = def->name, row.simulator = sim, row.integrator = integ, row.role = role;
        row.dt = r.dt, row.horizon = H, row.steps = r.steps, row.threads = 1, row.rollouts = 1;
        row.wall_s = role == "reference" ? r.wall_s : mean_wall(r.wall_s, o.min_wall, [&] {
          return sim == "mujoco" ? run_mujoco(ms, r.dt, H).wall_s : run_bigstep(load_bigstep(*def, integ, r.dt), H).wall_s;
        });
        row.cpu_s = r.cpu_s;
        row.iterations_per_step = r.iterations / r.steps;
        if (ref) std::tie(row.com_err_max, row.com_err_rms) = com_error(r, *ref);
        // against the other simulator's reference: the same model, so the same motion up to the contact models
        row.com_err_other = com_error(r, sim == "mujoco" ? bref : mref).first;
        row.max_pen = r.max_penetration;
        row.stable = r.stable;
        row.why = r.why;
        rows.push_back(row);
        std::fprintf(stderr, "  %-7s %-7s dt %-8g %-9s 1 core: %8.1f sim s/wall s, COM err %.3g m, depth %.3g m%s%s\n",
                     sim.c_str(), integ.c_str(), r.dt, role.c_str(), row.sim_per_wall(), row.com_err_max, row.max_pen,
                     r.stable ? "" : ", UNSTABLE: ", r.why.c_str());
        if (role != "reference") {
          Row b = row;
          b.threads = T, b.rollouts = K, b.cpu_s = 0, b.wall_s = mean_wall(batch(), o.min_wall, batch);
          rows.push_back(b);
          std::fprintf(stderr, "  %-7s %-7s dt %-8g %d rollouts, %d threads: %8.1f sim s/wall s\n", sim.c_str(),
                       integ.c_str(), r.dt, K, T, b.sim_per_wall());
        }
      };
      // MuJoCo: its timestep x1, x2, x4 against x1/16
      add_rows("mujoco", "default", mref, nullptr, "reference", [] { return 0.0; });
      for (double f : {1.0, 2.0, 4.0})
        add_rows("mujoco", "default", run_mujoco(ms, h * f, H), &mref, "run",
                 [&] { return batch_mujoco(ms, *imp, base, h * f, H, K, T); });
      add_rows("bigstep", "ne_lcp", bref, nullptr, "reference", [] { return 0.0; });
      // bigstep PBFD at 0.01, 0.02, 0.05 and NE-LCP at MuJoCo's timestep
      for (double dt : {0.01, 0.02, 0.05, -1.0}) {
        const bool pbfd = dt > 0;
        const Scene sc = load_bigstep(*def, pbfd ? "pbfd" : "ne_lcp", pbfd ? dt : h);
        add_rows("bigstep", pbfd ? "pbfd" : "ne_lcp", run_bigstep(sc, H), &bref, "run",
                 [&] { return batch_bigstep(sc, H, K, T); });
      }
      // largest stable dt of each
      stab.push_back(stability(def->name, "mujoco", "default", h, H, [&](double dt) { return run_mujoco(ms, dt, H); }));
      stab.push_back(stability(def->name, "bigstep", "pbfd", 0.01, H,
                               [&](double dt) { return run_bigstep(load_bigstep(*def, "pbfd", dt), H); }));
      stab.push_back(stability(def->name, "bigstep", "ne_lcp", h, H,
                               [&](double dt) { return run_bigstep(load_bigstep(*def, "ne_lcp", dt), H); }));
    }
  } catch (const InvalidArgument& e) {
    std::fprintf(stderr, "bigstep-bench vs-mujoco: %s (run it from the repository root)\n", e.what());
    return 2;
  }
  std::filesystem::create_directories(o.out);
  std::string cmd = "bigstep-bench vs-mujoco";
  for (const std::string& a : args) cmd += " " + a;
  const std::filesystem::path path = std::filesystem::path(o.out) / "vs_mujoco.csv";
  {
    std::ofstream f(path);
    f << "scene,simulator,integrator,dt,role,horizon_s,steps,threads,rollouts,wall_s,sim_s_per_wall_s,sim_s_per_cpu_s,"
         "iterations_per_step,com_err_max_m,com_err_rms_m,com_err_vs_other_ref_m,max_penetration_m,stable,note\n";
    for (const Row& r : rows) {
      f << r.scene << "," << r.simulator << "," << r.integrator << "," << r.dt << "," << r.role << "," << r.horizon << ","
        << r.steps << "," << r.threads << "," << r.rollouts << "," << r.wall_s << "," << r.sim_per_wall() << ",";
      if (r.cpu_s > 0) f << r.horizon / r.cpu_s;
      f << ","
        << r.iterations_per_step << "," << r.com_err_max << "," << r.com_err_rms << "," << r.com_err_other << "," << r.max_pen << ","
        << (r.stable ? 1 : 0) << "," << r.why << "\n";
    }
  }
  write_meta(path, cmd,
             "sim_s_per_wall_s = rollouts * horizon / wall (timed loop only: the step calls and a state copy); "
             "com_err against the same simulator's reference row; threads > 1 rows: bigstep CpuBatchStepper vs "
             "K MjData on std::thread, theta(0) perturbed by batch.perturb_theta");
  const std::filesystem::path spath = std::filesystem::path(o.out) / "vs_mujoco_stability.csv";
  {
    std::ofstream f(spath);
    f << "scene,simulator,integrator,start_dt,largest_stable_dt,first_unstable_dt,why\n";
    for (const StabilityRow& s : stab)
      f << s.scene << "," << s.simulator << "," << s.integrator << "," << s.start_dt << "," << s.largest_stable_dt << ","
        << s.first_unstable_dt << "," << s.why << "\n";
  }
  write_meta(spath, cmd,
             "dt doubled from start_dt up to horizon/4; unstable = non-finite, solver failure (bigstep status), "
             "MuJoCo bad-qacc reset, penetration > 5 cm or COM > 5 m from its start; 0 = none tried stable");
  std::printf("wrote %s and %s\n", path.c_str(), spath.c_str());
  return 0;
}

}  // namespace bigstep

#endif
