// `bigstep-bench vs-mujoco`: the same scene in MuJoCo (libmujoco, mj_step with the model's own
// integrator, solver and default options) and in bigstep (issue 12 item 6). For each scene and
// simulator at several dt: simulated seconds per wall second on one core and on all cores (K
// rollouts: bigstep's batched CPU engine vs K MjData on a thread pool), accuracy against the
// simulator's OWN fine-dt reference from the same initial state (COM trajectory error, largest
// penetration) and the largest stable dt (doubling until non-finite, failed or blown-up).
#include "bench/harness/bench_vs_mujoco.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <thread>

#include "core/collision.h"
#include "core/crba.h"
#include "core/error.h"
#include "core/inertia.h"
#include "core/kinematics.h"
#include "batch/batch.h"
#include "io/mjcf_scene.h"
#include "io/mjcf_import.h"
#include "batch/penetration.h"
#include "io/scene.h"

#ifdef BIGSTEP_WITH_MUJOCO
#include <mujoco/mujoco.h>
#endif

namespace bigstep {

#ifndef BIGSTEP_WITH_MUJOCO

int bench_vs_mujoco(const std::vector<std::string>&) {
  std::fprintf(stderr, "bigstep-bench vs-mujoco: built without MuJoCo (pip install mujoco and reconfigure)\n");
  return 2;
}

#else

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
// CPU time of the calling thread [s]: the one-core rows report it beside the wall time, since on a
// shared machine other processes stretch the wall time but not this.
double thread_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// One benchmarked scene: bigstep's scene file and the file MuJoCo compiles.
struct SceneDef {
  std::string name;
  std::string bigstep_file;  // YAML scene or MJCF / URDF (package paths allowed)
  std::string mujoco_file;   // what mj_parseXML reads (package paths allowed)
  bool free_root_floor;      // MuJoCo side: a free root and a floor added (a1_stand.yaml's model edits)
  bool chain_c_par;          // contact.c_par = 5e4 / dt (chain_floating_ground.yaml's rule)
  std::vector<std::string> overrides = {};  // bigstep --set edits; initial.theta also sets MuJoCo's qpos0
  bool zero_margin = false;  // MuJoCo side: geom_margin = 0 (bigstep's contacts have no margin)
};

// The ant's start: gymnasium's qpos0 (torso at 0.75 m, joints 0) puts every ankle 0.52 rad outside
// its range ([30, 70] deg and mirrored), and each simulator resolves that violation its own way
// (MuJoCo's soft limits push the ankles in within ~0.1 s, NE-LCP's capped correction at 0.1 rad/s,
// PBFD's limit penalty): the rows compared how, not the dynamics. The same pose with the ankles
// inside their ranges (+-0.6 rad, bench/ant_rest_height.py) starts both simulators from a valid
// state. ant.xml's geom margin 0.01 makes MuJoCo's foot contacts act from 2 cm (the ant rests 2 cm
// higher); bigstep has no contact margin, so MuJoCo runs the ant with margin 0.
const std::string kAntInside = "initial.theta=[0, 0, 0.75, 0, 0, 0, 0, 0.6, 0, -0.6, 0, -0.6, 0, 0.6]";

const std::vector<SceneDef>& all_scenes() {
  static const std::vector<SceneDef> s{
      {"chain", "configs/chain_floating_ground.yaml", "bench/models/chain_floating_ground.xml", false, true},
      {"hopper", "gymnasium:hopper.xml", "gymnasium:hopper.xml", false, false},
      {"ant", "gymnasium:ant.xml", "gymnasium:ant.xml", false, false, {kAntInside}, true},
      {"a1", "configs/a1_stand.yaml", "example-robot-data:robots/a1_description/urdf/a1.urdf", true, false}};
  return s;
}

std::string resolve(const std::string& f) { return f.find(':') != std::string::npos ? resolve_model_path(f, "") : f; }

struct MjModelDeleter {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
};
struct MjDataDeleter {
  void operator()(mjData* d) const { mj_deleteData(d); }
};
struct MjSpecDeleter {
  void operator()(mjSpec* s) const { mj_deleteSpec(s); }
};
using MjModelPtr = std::unique_ptr<mjModel, MjModelDeleter>;
using MjDataPtr = std::unique_ptr<mjData, MjDataDeleter>;

// MuJoCo's model of a scene. With free_root_floor: parse, add a free joint to every jointless
// child of the world and an infinite plane at z = 0, compile -- the edits import_mujoco makes for
// model.free_root / model.floor, so both simulators run the same model.
MjModelPtr load_mujoco(const SceneDef& s) {
  const std::string path = resolve(s.mujoco_file);
  char err[1024] = "";
  std::unique_ptr<mjSpec, MjSpecDeleter> spec(mj_parseXML(path.c_str(), nullptr, err, sizeof(err)));
  BIGSTEP_CHECK_ARG(spec != nullptr, "scene " + s.name + " (MuJoCo)", path, err);
  if (s.free_root_floor) {
    MujocoImportOptions edits;
    edits.free_root = edits.floor = true;
    edit_mujoco_spec(spec.get(), edits);
  }
  MjModelPtr m(mj_compile(spec.get(), nullptr));
  BIGSTEP_CHECK_ARG(m != nullptr, "scene " + s.name + " (MuJoCo)", path, mjs_getError(spec.get()));
  if (s.zero_margin)
    for (int g = 0; g < m->ngeom; ++g) m->geom_margin[g] = 0;
  return m;
}

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

// A recorded trajectory: the COM at every step and the largest penetration, plus timing.
struct Run {
  double dt = 0;
  int steps = 0;
  double wall_s = 0;
  double cpu_s = 0;              // thread CPU time of the timed loop
  double iterations = 0;         // summed solver iterations (bigstep)
  std::vector<Vec3> com;         // (steps + 1), com[n] at t = n dt
  double max_penetration = 0;    // [m], largest contact depth over the run
  bool stable = true;
  std::string why;               // why not stable
};

// Linear interpolation of a run's COM at time t.
Vec3 com_at(const Run& r, double t) {
  const double x = std::clamp(t / r.dt, 0.0, double(r.steps));
  const int n = std::min(int(x), r.steps - 1);
  const double a = x - n;
  return (1 - a) * r.com[n] + a * r.com[n + 1];
}

// Max and RMS over the coarse run's step times of |COM - COM_ref|.
std::pair<double, double> com_error(const Run& r, const Run& ref) {
  double mx = 0, ss = 0;
  for (int n = 0; n <= r.steps; ++n) {
    const double e = (r.com[n] - com_at(ref, n * r.dt)).norm();
    mx = std::max(mx, e);
    ss += e * e;
  }
  return {mx, std::sqrt(ss / (r.steps + 1))};
}

// A run is unstable when its state went non-finite, a contact sank through (deeper than
// kPenetrationDepth, the run loop's penetration rule), the COM left a 5 m ball around its start or
// rose 0.5 m above it (every scene starts at rest under gravity).
void judge(Run& r) {
  if (!r.stable) return;
  for (const Vec3& c : r.com)
    if (!c.allFinite()) {
      r.stable = false, r.why = "non-finite";
      return;
    } else if ((c - r.com[0]).norm() > 5) {
      r.stable = false, r.why = "blow-up (COM moved > 5 m)";
      return;
    } else if (c.z() > r.com[0].z() + 0.5) {  // every scene starts at rest and falls or stands
      r.stable = false, r.why = "launched (COM rose > 0.5 m)";
      return;
    }
  if (r.max_penetration > kPenetrationDepth) r.stable = false, r.why = "penetration > 5 cm";
}

// ---------------------------------------------------------------------------------------------
// MuJoCo side

struct MjScene {
  MjModelPtr m;
  VecX qpos0, qvel0;
  double timestep = 0;
};

// The hold servo of a1_stand.yaml (control.pd, reference: hold) on MuJoCo's side, as MuJoCo
// models it: a joint spring kp to qref (jnt_stiffness, qpos_spring) and joint damping kd added to
// dof_damping, on the hinge / slide DOFs. Why not qfrc_applied: MuJoCo's Euler integrator treats
// joint damping implicitly (bigstep's stable PD does both terms implicitly); an explicit kd
// would make MuJoCo's stability limit the servo's, not the simulator's.
void add_hold_servo(mjModel* m, const VecX& kp, const VecX& kd, const VecX& qref) {
  for (int i = 0; i < m->nv; ++i) {
    const int j = m->dof_jntid[i];
    if (kp[i] == 0 && kd[i] == 0) continue;
    BIGSTEP_CHECK_ARG(m->jnt_type[j] == mjJNT_HINGE || m->jnt_type[j] == mjJNT_SLIDE, detail::concat("control.pd.kp[", i, "]"),
                      kp[i], "the MuJoCo side carries servos on hinge / slide joints only");
    m->jnt_stiffness[j] = kp[i];
    m->qpos_spring[m->jnt_qposadr[j]] = qref[i];
    m->dof_damping[i] += kd[i];
  }
}

void mj_reset_state(const MjScene& s, mjData* d, const VecX& qpos, const VecX& qvel) {
  mj_resetData(s.m.get(), d);
  mju_copy(d->qpos, qpos.data(), s.m->nq);
  mju_copy(d->qvel, qvel.data(), s.m->nv);
}

// One rollout on one core; qpos recorded each step (a copy), COM and contacts evaluated afterwards
// so that the timed loop is mj_step alone.
Run run_mujoco(MjScene& s, double dt, double horizon) {
  mjModel* m = s.m.get();
  m->opt.timestep = dt;
  Run r;
  r.dt = dt;
  r.steps = std::max(1, int(std::lround(horizon / dt)));
  MjDataPtr d(mj_makeData(m));
  mj_reset_state(s, d.get(), s.qpos0, s.qvel0);
  std::vector<double> qs(size_t(r.steps + 1) * m->nq);
  mju_copy(qs.data(), d->qpos, m->nq);
  const auto t0 = Clock::now();
  const double c0 = thread_cpu_s();
  for (int n = 0; n < r.steps; ++n) {
    mj_step(m, d.get());
    mju_copy(qs.data() + size_t(n + 1) * m->nq, d->qpos, m->nq);
  }
  r.wall_s = seconds_since(t0);
  r.cpu_s = thread_cpu_s() - c0;
  if (d->warning[mjWARN_BADQACC].number > 0) r.stable = false, r.why = "MuJoCo bad qacc (reset)";
  // COM (subtree_com of the world) and contact depths at every recorded qpos
  r.com.resize(r.steps + 1);
  for (int n = 0; n <= r.steps; ++n) {
    mju_copy(d->qpos, qs.data() + size_t(n) * m->nq, m->nq);
    mj_fwdPosition(m, d.get());
    r.com[n] = Vec3(d->subtree_com[0], d->subtree_com[1], d->subtree_com[2]);
    for (int c = 0; c < d->ncon; ++c) r.max_penetration = std::max(r.max_penetration, -d->contact[c].dist);
  }
  judge(r);
  return r;
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
  std::vector<std::string> ov{"integrator.type=" + integrator, detail::concat("integrator.dt=", dt)};
  if (s.chain_c_par) ov.push_back(detail::concat("contact.c_par=", 5e4 / dt));
  ov.insert(ov.end(), s.overrides.begin(), s.overrides.end());
  return load_scene(resolve(s.bigstep_file), ov);
}

// One rollout of the CPU reference integrator on one core; theta recorded each step (a copy), COM
// and contact depths evaluated afterwards.
Run run_bigstep(const Scene& sc, double horizon) {
  const Model& m = sc.model;
  Run r;
  r.dt = sc.settings.dt;
  r.steps = std::max(1, int(std::lround(horizon / r.dt)));
  const std::unique_ptr<Integrator> integ = make_integrator(sc);
  Data d = integ->make_data();
  d.theta = sc.theta0;
  d.theta_prev = sc.theta0 - r.dt * sc.theta_dot0;
  const RolloutParams p = integ->default_params();
  StepControl u;
  u.tau = sc.tau;
  u.pd = sc.pd.active() ? &sc.pd : nullptr;
  std::vector<VecX> th(r.steps + 1, d.theta);
  int done = r.steps;
  const auto t0 = Clock::now();
  const double c0 = thread_cpu_s();
  for (int n = 0; n < r.steps; ++n) {
    u.t = n * r.dt;
    const StepStats st = integ->step(d, u, p);
    r.iterations += st.iterations;
    th[n + 1] = d.theta;
    if (!st.converged()) {
      r.stable = false;
      r.why = detail::concat("solver failed at step ", n, " (status ", st.status, ")");
      done = n + 1;
      break;
    }
  }
  r.wall_s = seconds_since(t0);
  r.cpu_s = thread_cpu_s() - c0;
  Kinematics kin(m);
  std::vector<Contact> con(size_t(std::max(1, m.max_contacts)));
  r.com.resize(r.steps + 1);
  for (int n = 0; n <= r.steps; ++n) {
    forward_kinematics(m, th[std::min(n, done)], kin);
    r.com[n] = centre_of_mass(m, kin);
    uint32_t status = 0;
    const int nc = collide(m, kin, 0.0, con.data(), int(con.size()), status);
    for (int c = 0; c < nc; ++c) r.max_penetration = std::max(r.max_penetration, con[c].depth);
  }
  judge(r);
  return r;
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

// The YAML chain and its MJCF, imported by bigstep, must be one model: same mass matrix at a few
// random states (CRBA, to 1e-9 relative). Returns the largest relative difference.
double chain_mass_matrix_check(const Scene& yaml, const MujocoImport& imp) {
  const Model mj = Model::finalize(imp.spec);
  BIGSTEP_CHECK_ARG(mj.n_q == yaml.model.n_q, "bench/models/chain_floating_ground.xml n_q", mj.n_q,
                    detail::concat("must equal the YAML chain's ", yaml.model.n_q));
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> U(-1, 1);
  double worst = 0;
  for (int trial = 0; trial < 4; ++trial) {
    VecX q(mj.n_q);
    for (int i = 0; i < q.size(); ++i) q[i] = trial == 0 ? yaml.theta0[i] : U(rng);
    MatX Ha, Hb;
    crba(yaml.model, q, Ha);
    crba(mj, q, Hb);
    worst = std::max(worst, (Ha - Hb).cwiseAbs().maxCoeff() / Ha.cwiseAbs().maxCoeff());
  }
  return worst;
}

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

void write_meta(const std::filesystem::path& csv, const std::string& command, const std::string& note) {
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  std::string commit;
  if (FILE* f = popen("git rev-parse --short HEAD 2>/dev/null", "r")) {
    char buf[64];
    if (fgets(buf, sizeof buf, f)) commit = buf;
    pclose(f);
  }
  while (!commit.empty() && (commit.back() == '\n')) commit.pop_back();
  std::ofstream m(std::filesystem::path(csv).replace_extension(".meta.json"));
  m << "{\n  \"file\": \"" << csv.filename().string() << "\",\n  \"command\": \"" << command << "\",\n"
    << "  \"machine\": \"" << std::thread::hardware_concurrency() << " hardware threads; MuJoCo " << mj_versionString()
    << "\",\n  \"date\": \"" << date << "\",\n  \"commit\": \"" << commit << "\",\n  \"note\": \"" << note << "\"\n}\n";
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
    const auto it = std::find_if(all_scenes().begin(), all_scenes().end(), [&](const SceneDef& s) { return s.name == n; });
    if (it == all_scenes().end()) {
      std::fprintf(stderr, "bigstep-bench vs-mujoco: --scenes: unknown scene '%s' (chain, hopper, ant, a1)\n", n.c_str());
      return 2;
    }
    defs.push_back(&*it);
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
      MjScene ms;
      ms.m = load_mujoco(*def);
      ms.timestep = ms.m->opt.timestep;
      const Scene base = load_bigstep(*def, "pbfd", 0.01);
      std::shared_ptr<const MujocoImport> imp = base.imported;
      if (!imp) {  // the YAML chain: its MJCF twin gives the map, and must be the same model
        MujocoImportOptions io;
        imp = std::make_shared<const MujocoImport>(import_mujoco(resolve(def->mujoco_file), io));
        const double e = chain_mass_matrix_check(base, *imp);
        std::fprintf(stderr, "  mass matrix, YAML vs MJCF import: max relative difference %.3g\n", e);
        if (!(e < 1e-9)) {
          std::fprintf(stderr, "bigstep-bench vs-mujoco: %s is not the YAML chain (mass matrices differ by %g)\n",
                       def->mujoco_file.c_str(), e);
          return 1;
        }
      }
      BIGSTEP_CHECK_ARG(imp->nq == ms.m->nq && imp->nv == ms.m->nv, "scene " + def->name + " nq / nv", ms.m->nq,
                        "MuJoCo's model and bigstep's map differ");
      qpos_from_theta(*imp, base.theta0, ms.qpos0);
      qvel_from_theta_dot(*imp, base.theta0, base.theta_dot0, ms.qvel0);
      if (base.pd.active()) {
        VecX qref, td;
        base.pd.reference(0.0, qref, td);
        add_hold_servo(ms.m.get(), base.pd.kp, base.pd.kd, qref);
      }
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

#endif

}  // namespace bigstep
