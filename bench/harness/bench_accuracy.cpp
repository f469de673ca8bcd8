// `bigstep-bench accuracy` (bench_accuracy.h): Pareto fronts of cost against error for bigstep's
// integrators and MuJoCo's, on the scenes of bench_twin.cpp.
//
// Outline, per scene:
//   1. the common reference: MuJoCo RK4 with elliptic cones and a tight solver tolerance at the
//      model's timestep / 16 (its own error estimated by the same run at twice that dt), or the
//      analytic Coulomb slide of the box;
//   2. each simulator's own reference: MuJoCo RK4 at the same fine dt with the variant's cone;
//      bigstep NE-LCP at min(1 ms, timestep / 8) (vs-mujoco's reference, whose comment says why
//      not PBFD at a fine dt);
//   3. every MuJoCo integrator x cone and every bigstep variant (a name plus --set edits) at each dt,
//      largest first: CPU time of the step loop (repeated until --min-cpu), COM errors, stability.
#ifdef BIGSTEP_WITH_MUJOCO
#include "bench/harness/bench_accuracy.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <fstream>
#include <map>

#include "bench/harness/bench_twin.h"
#include "core/crba.h"
#include "core/error.h"
#include "core/inertia.h"
#include "core/kinematics.h"

namespace bigstep {

namespace {

using namespace twin;

// bigstep's variants: NAME=EDIT,EDIT,... separated by ';', each EDIT a `--set` KEY=VALUE (or
// KEY:VALUE); empty entries are skipped. A new option is benchmarked by adding a line, e.g.
//   "pbfd_o2=integrator.type:pbfd,integrator.order:2;"
//   "pbfd_coulomb=integrator.type:pbfd,contact.friction:coulomb;"
const char* kDefaultVariants =
    "pbfd=integrator.type:pbfd;"
    "pbd=integrator.type:pbd;"
    "ne_lcp=integrator.type:ne_lcp;"
    "ne_mdp=integrator.type:ne_mdp;"
    "nmdp_ne=integrator.type:nmdp_ne;"
    "nmdp_pbd=integrator.type:nmdp_pbd;"
    "compliant=integrator.type:compliant;";

const std::vector<std::string> kDefaultScenes{"chain_fixed", "chain", "hopper_tilt", "ant", "box", "a1", "humanoid"};

struct Variant {
  std::string name;
  std::vector<std::string> set;  // KEY=VALUE
};

// "a=k:v,k2:[1, 2];b=..." -> variants; commas inside [] or {} belong to the value.
std::vector<Variant> parse_variants(const std::string& text) {
  std::vector<Variant> out;
  for (const std::string& item : split(text, ';')) {
    const size_t eq = item.find('=');
    std::string name = item.substr(0, eq);
    name.erase(0, name.find_first_not_of(' '));
    BIGSTEP_CHECK_ARG(eq != std::string::npos && !name.empty(), "--variants", item, "expected NAME=KEY:VALUE[,KEY:VALUE...]");
    Variant v{name, {}};
    std::string cur;
    int depth = 0;
    auto flush = [&] {
      cur.erase(0, cur.find_first_not_of(' '));
      if (cur.empty()) return;
      const size_t kv = cur.find_first_of("=:");
      BIGSTEP_CHECK_ARG(kv != std::string::npos && kv > 0, "--variants " + name, cur, "expected KEY:VALUE or KEY=VALUE");
      cur[kv] = '=';
      v.set.push_back(cur);
      cur.clear();
    };
    for (char c : item.substr(eq + 1)) {
      depth += (c == '[' || c == '{') - (c == ']' || c == '}');
      if (c == ',' && depth == 0) flush();
      else cur += c;
    }
    flush();
    out.push_back(v);
  }
  return out;
}

const std::map<std::string, int> kMjIntegrators{{"euler", mjINT_EULER}, {"implicitfast", mjINT_IMPLICITFAST},
                                                {"implicit", mjINT_IMPLICIT}, {"rk4", mjINT_RK4},
                                                {"discrete", mjINT_DISCRETE}};
const std::map<std::string, int> kMjCones{{"pyramidal", mjCONE_PYRAMIDAL}, {"elliptic", mjCONE_ELLIPTIC}};

// Options of one invocation.
struct Options {
  bool quick = false;
  double horizon = 2.0;  // simulated seconds per run [s]
  std::vector<std::string> scenes = kDefaultScenes;
  std::vector<Variant> variants = parse_variants(kDefaultVariants);
  std::vector<std::string> mj_integrators{"euler", "implicitfast", "implicit", "rk4", "discrete"};
  std::vector<std::string> mj_cones{"pyramidal", "elliptic"};
  std::vector<double> dts{0.1, 0.075, 0.05, 0.035, 0.025, 0.02, 0.015, 0.01, 0.0075, 0.005, 0.0025};  // bigstep [s]
  std::vector<double> mj_factors{16, 12, 8, 6, 4, 3, 2, 1.5, 1, 0.5, 0.25};  // MuJoCo: x the model's timestep
  double min_cpu = 0.2;    // a timing repeats its run until this much CPU time has passed [s]
  double max_run_cpu = 8;  // a run's CPU budget [s]; over it, that variant's smaller dt are skipped
  std::string out = "bench/results";
  std::string name = "accuracy";
};

// What a scene measures besides the COM error.
struct Measure {
  Vec3 axes = Vec3::Ones();  // COM components compared
  bool analytic_slide = false;  // common reference: x0 + v0 t - mu g t^2 / 2 until rest
  bool energy = false;          // energy drift (a model without contact, damping or actuation)
};
Measure measure_of(const std::string& scene) {
  Measure m;
  if (scene == "box") m.axes = Vec3(1, 0, 0), m.analytic_slide = true;
  if (scene == "chain_fixed") m.energy = true;
  return m;
}

// Total energy at every recorded state: 1/2 v^T H(q) v - M g . c(q), in bigstep's coordinates
// (the scenes with energy are exported models: MuJoCo's qpos, qvel ARE theta, theta_dot).
std::vector<double> energies(const Model& m, const Run& r) {
  std::vector<double> e;
  Kinematics kin(m);
  MatX H;
  for (size_t n = 0; n < r.q.size(); ++n) {
    forward_kinematics(m, r.q[n], kin);
    crba(m, r.q[n], H);
    e.push_back(0.5 * r.v[n].dot(H * r.v[n]) - m.total_mass * m.gravity.dot(centre_of_mass(m, kin)));
  }
  return e;
}
double energy_drift(const Model& m, const Run& r) {
  const std::vector<double> e = energies(m, r);
  double d = 0;
  for (double x : e) d = std::max(d, std::abs(x - e.front()));
  return std::isfinite(d) ? d : INFINITY;
}

// The analytic slide of a box pushed at v0 along x under Coulomb friction mu: x(t) = x0 + v0 t -
// mu g t^2 / 2 until it stops at t = v0 / (mu g), distance v0^2 / (2 mu g).
Run analytic_slide(const Scene& sc, double horizon) {
  Kinematics kin(sc.model);
  forward_kinematics(sc.model, sc.theta0, kin);
  const Vec3 c0 = centre_of_mass(sc.model, kin);
  const double v0 = sc.theta_dot0[0], a = sc.ne.mu * sc.model.gravity.norm(), ts = v0 / a;
  Run r;
  r.dt = 1e-4;
  r.steps = int(std::lround(horizon / r.dt));
  for (int n = 0; n <= r.steps; ++n) {
    const double t = std::min(n * r.dt, ts);
    r.com.push_back(c0 + Vec3(v0 * t - 0.5 * a * t * t, 0, 0));
  }
  return r;
}

struct Row {
  std::string scene, simulator, variant, settings, role;
  double dt = 0, default_dt = 0;
  bool model_default = false;
  int steps = 0, reps = 0;
  double cpu_s = 0, iterations_per_step = 0;
  double err_common = NAN, err_common_rms = NAN, err_own = NAN, err_own_rms = NAN, energy = NAN, max_pen = 0;
  bool stable = true;
  std::string note;
};

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}
std::string num(double x) { return std::isnan(x) ? std::string() : detail::concat(x); }

void write_csv(const std::filesystem::path& path, const std::vector<Row>& rows, double horizon) {
  std::ofstream f(path);
  f << "scene,simulator,variant,settings,role,dt,default_dt,model_default,horizon_s,steps,timing_reps,"
       "cpu_s_per_sim_s,iterations_per_step,err_common_m,err_common_rms_m,err_own_m,err_own_rms_m,energy_drift_J,"
       "max_penetration_m,stable,note\n";
  for (const Row& r : rows)
    f << r.scene << "," << r.simulator << "," << r.variant << "," << csv_field(r.settings) << "," << r.role << ","
      << r.dt << "," << r.default_dt << "," << (r.model_default ? 1 : 0) << "," << horizon << "," << r.steps << ","
      << r.reps << "," << num(r.cpu_s / horizon) << "," << num(r.iterations_per_step) << "," << num(r.err_common) << ","
      << num(r.err_common_rms) << "," << num(r.err_own) << "," << num(r.err_own_rms) << "," << num(r.energy) << ","
      << r.max_pen << "," << (r.stable ? 1 : 0) << "," << csv_field(r.note) << "\n";
}

// The median CPU time of run f (which returns a Run) over repeats until min_cpu has passed.
template <class F>
double median_cpu(double first, double min_cpu, int& reps, F f) {
  std::vector<double> t{first};
  double total = first;
  while (total < min_cpu) t.push_back(f().cpu_s), total += t.back();
  reps = int(t.size());
  std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
  return t[t.size() / 2];
}

const char* kUsage =
    "usage: bigstep-bench accuracy [--quick] [--out DIR] [--name STEM] [--scenes a,b] [--horizon S]\n"
    "                              [--variants 'NAME=KEY:VALUE,KEY:VALUE;NAME=...'] [--add-variants '...']\n"
    "                              [--mujoco euler,implicitfast,implicit,rk4,discrete] [--cones pyramidal,elliptic]\n"
    "                              [--dt 0.1,0.05,...] [--mujoco-dt-factors 16,8,...] [--min-cpu S] [--max-run-cpu S]\n"
    "Cost against accuracy of bigstep's integrators and MuJoCo's, run from the repository root. Scenes\n"
    "(default: all but hopper, in this order): chain_fixed (configs/chain_fixed.yaml, no contact; + energy\n"
    "drift), chain (the floating chain dropped, configs/chain_floating_ground.yaml and its MJCF twin),\n"
    "hopper_tilt (gymnasium's hopper tilted 0.1 rad forward; hopper: upright, an unstable balance), ant\n"
    "(gymnasium's; its ankles inside their ranges), box (configs/box_slide.yaml, error\n"
    "in x only, common reference the analytic Coulomb slide), a1 (configs/a1_stand.yaml, PD hold),\n"
    "humanoid (gymnasium's, falling from its standing qpos0; bigstep drops its tendons).\n"
    "Each run: 2 s (--horizon) from the same start, one rollout on one core; CPU seconds of the step\n"
    "loop per simulated second (median over repeats until --min-cpu S, default 0.2); largest COM distance\n"
    "from the scene's common reference (MuJoCo RK4, elliptic cones, tolerance 1e-10 at the model's\n"
    "timestep / 16; or analytic) and from the simulator's own reference (MuJoCo: RK4 with the run's cone at\n"
    "that dt; bigstep: NE-LCP at min(1 ms, timestep / 8)); stability (finite, not blown up, no solver\n"
    "failure or MuJoCo bad-qacc reset, no contact deeper than 5 cm).\n"
    "bigstep: every --variants entry (default: pbfd, pbd, ne_lcp, ne_mdp, nmdp_ne, nmdp_pbd, compliant,\n"
    "each integrator.type:NAME; a variant a scene cannot load is left out and listed) at --dt (default\n"
    "0.1, 0.075, 0.05, 0.035, 0.025, 0.02, 0.015, 0.01, 0.0075, 0.005, 0.0025). MuJoCo: each integrator x\n"
    "cone at the model's timestep x --mujoco-dt-factors (default 16, 12, 8, 6, 4, 3, 2, 1.5, 1, 0.5, 0.25;\n"
    "dt <= 0.1). dt run largest first; a run over\n"
    "--max-run-cpu S (default 8) skips that variant's smaller dt.\n"
    "--quick: chain_fixed and chain, horizon 1 s, bigstep dt 0.05, 0.01, MuJoCo x4, x1, variants pbfd,\n"
    "ne_lcp, MuJoCo euler and rk4.\n"
    "Writes DIR/STEM.csv (STEM default accuracy) and .meta.json; plot and equal-error speed-ups:\n"
    "bench/perf/accuracy_fronts.py.\n";

std::vector<double> doubles(const std::string& s, const char* flag, double least = 0) {
  std::vector<double> v;
  for (const std::string& x : split(s)) {
    char* end = nullptr;
    const double d = std::strtod(x.c_str(), &end);
    BIGSTEP_CHECK_ARG(end && *end == 0 && d > least, flag, x, "expected a comma-separated list of numbers > " + detail::concat(least));
    v.push_back(d);
  }
  BIGSTEP_CHECK_ARG(!v.empty(), flag, s, "empty list");
  return v;
}

// Runs every variant of one scene; appends its rows.
void run_scene(const SceneDef& def, const Options& o, std::vector<Row>& rows, std::vector<std::string>& left_out,
               std::map<std::string, std::string>& references) {
  const double H = o.horizon;
  const Measure me = measure_of(def.name);
  MjScene ms = make_scene(def);
  const Model& model = ms.base.model;
  const double h = ms.timestep, h_ref = h / 16;
  std::fprintf(stderr, "scene %s: MuJoCo timestep %g s\n", def.name.c_str(), h);
  MjOptions ref_opt;
  ref_opt.integrator = mjINT_RK4, ref_opt.tolerance = 1e-10, ref_opt.iterations = 1000;
  // 1. the common reference
  Run common;
  Row cr;
  cr.scene = def.name, cr.role = "common_reference", cr.default_dt = h;
  if (me.analytic_slide) {
    common = analytic_slide(ms.base, H);
    cr.simulator = "analytic", cr.variant = "coulomb", cr.dt = common.dt, cr.steps = common.steps;
    cr.settings = detail::concat("x0 + v0 t - mu g t^2 / 2, v0 = ", ms.base.theta_dot0[0], ", mu = ", ms.base.ne.mu);
    references[def.name] = "analytic Coulomb slide, distance v0^2 / (2 mu g)";
  } else {
    ref_opt.cone = mjCONE_ELLIPTIC;
    common = run_mujoco(ms, h_ref, H, ref_opt);
    const Run coarse = run_mujoco(ms, 2 * h_ref, H, ref_opt);
    cr.simulator = "mujoco", cr.variant = "rk4_elliptic", cr.dt = h_ref, cr.steps = common.steps;
    cr.settings = "integrator=rk4 cone=elliptic tolerance=1e-10 iterations=1000";
    std::tie(cr.err_common, cr.err_common_rms) = com_error(coarse, common, me.axes);
    cr.cpu_s = common.cpu_s, cr.reps = 1, cr.max_pen = common.max_penetration, cr.stable = common.stable;
    cr.note = "err_common: the same run at 2 dt against this one (the reference's own error estimate)";
    references[def.name] = detail::concat("MuJoCo RK4, elliptic cones, tolerance 1e-10, dt ", h_ref,
                                          " s; err vs the same at 2 dt ", cr.err_common, " m");
  }
  rows.push_back(cr);
  std::fprintf(stderr, "  common reference %s %s dt %g%s\n", cr.simulator.c_str(), cr.variant.c_str(), cr.dt,
               std::isnan(cr.err_common) ? "" : detail::concat(": its error estimate ", cr.err_common, " m").c_str());
  // 2. the own references: MuJoCo per cone, bigstep NE-LCP
  std::map<int, Run> mj_own;
  for (const std::string& c : o.mj_cones) {
    const int cone = kMjCones.at(c);
    ref_opt.cone = cone;
    mj_own[cone] = !me.analytic_slide && cone == mjCONE_ELLIPTIC ? common : run_mujoco(ms, h_ref, H, ref_opt);
    Row r = cr;
    r.role = "own_reference", r.simulator = "mujoco", r.variant = "rk4_" + c, r.dt = h_ref;
    r.settings = "integrator=rk4 cone=" + c + " tolerance=1e-10 iterations=1000";
    std::tie(r.err_common, r.err_common_rms) = com_error(mj_own[cone], common, me.axes);
    r.note = "err_common: this reference against the common one" +
             (mj_own[cone].stable ? "" : "; UNSTABLE (" + mj_own[cone].why + "): runs with this cone have no own error");
    r.cpu_s = mj_own[cone].cpu_s, r.stable = mj_own[cone].stable, r.max_pen = mj_own[cone].max_penetration;
    rows.push_back(r);
  }
  const double b_ref_dt = std::min(1e-3, h / 8);
  const Run bown = run_bigstep(load_bigstep(def, {"integrator.type=ne_lcp"}, b_ref_dt), H);
  {
    Row r = cr;
    r.role = "own_reference", r.simulator = "bigstep", r.variant = "ne_lcp", r.settings = "integrator.type=ne_lcp";
    r.dt = b_ref_dt, r.steps = bown.steps, r.cpu_s = bown.cpu_s, r.stable = bown.stable, r.max_pen = bown.max_penetration;
    r.iterations_per_step = bown.iterations / bown.steps;
    std::tie(r.err_common, r.err_common_rms) = com_error(bown, common, me.axes);
    r.note = "err_common: this reference against the common one" +
             (bown.stable ? "" : "; UNSTABLE (" + bown.why + "): bigstep's runs have no own error");
    rows.push_back(r);
    std::fprintf(stderr, "  bigstep's own reference NE-LCP dt %g: %.3g m from the common one%s%s\n", b_ref_dt, r.err_common,
                 bown.stable ? "" : ", UNSTABLE: ", bown.why.c_str());
  }
  // 3. the runs. One row from a run r of `make` (which reruns it for the timing).
  auto add = [&](Row row, const Run& r, const Run& own, const auto& make) {
    row.dt = r.dt, row.steps = r.steps, row.default_dt = h;
    row.cpu_s = median_cpu(r.cpu_s, o.min_cpu, row.reps, make);
    row.iterations_per_step = r.iterations / r.steps;
    std::tie(row.err_common, row.err_common_rms) = com_error(r, common, me.axes);
    if (own.stable) std::tie(row.err_own, row.err_own_rms) = com_error(r, own, me.axes);  // else: no own error
    if (me.energy) row.energy = energy_drift(model, r);
    row.max_pen = r.max_penetration, row.stable = r.stable, row.note = r.why;
    rows.push_back(row);
    std::fprintf(stderr, "  [%zu] %-7s %-20s dt %-8g %9.4g CPU s/sim s, err common %.3g m, own %.3g m%s%s\n", rows.size(),
                 row.simulator.c_str(), row.variant.c_str(), row.dt, row.cpu_s / H, row.err_common, row.err_own,
                 r.stable ? "" : ", UNSTABLE: ", r.why.c_str());
  };
  for (const std::string& in : o.mj_integrators)
    for (const std::string& c : o.mj_cones) {
      MjOptions mo;
      mo.integrator = kMjIntegrators.at(in), mo.cone = kMjCones.at(c);
      Row row;
      row.scene = def.name, row.simulator = "mujoco", row.variant = in + "_" + c, row.role = "run";
      row.settings = "integrator=" + in + " cone=" + c;
      row.model_default = mo.integrator == ms.integrator && mo.cone == ms.cone;
      for (double f : o.mj_factors) {
        const double dt = h * f;
        if (dt > 0.1 + 1e-12) continue;
        const Run r = run_mujoco(ms, dt, H, mo, me.energy);
        add(row, r, mj_own[mo.cone], [&] { return run_mujoco(ms, dt, H, mo); });
      }
    }
  for (const Variant& v : o.variants) {
    try {  // can this scene run this variant at all?
      (void)make_integrator(load_bigstep(def, v.set, o.dts.front()));
    } catch (const InvalidArgument& e) {
      left_out.push_back(def.name + " x " + v.name + ": " + e.what());
      std::fprintf(stderr, "  left out: %s: %s\n", v.name.c_str(), e.what());
      continue;
    }
    Row row;
    row.scene = def.name, row.simulator = "bigstep", row.variant = v.name, row.role = "run";
    for (const std::string& s : v.set) row.settings += (row.settings.empty() ? "" : " ") + s;
    for (double dt : o.dts) {
      const Scene sc = load_bigstep(def, v.set, dt);
      Run r;
      try {
        r = run_bigstep(sc, H, me.energy, o.max_run_cpu);
      } catch (const std::exception& e) {  // a solver that refuses a state mid-run: an unstable row
        Row bad = row;
        bad.dt = dt, bad.default_dt = h, bad.stable = false, bad.note = std::string("threw: ") + e.what();
        rows.push_back(bad);
        std::fprintf(stderr, "  [%zu] bigstep %-20s dt %-8g threw: %s\n", rows.size(), v.name.c_str(), dt, e.what());
        continue;
      }
      if (r.stable && !r.why.empty()) {  // over budget: smaller dt would cost more
        left_out.push_back(detail::concat(def.name, " x ", v.name, " at dt <= ", dt, ": ", r.why));
        std::fprintf(stderr, "  %s dt %g: %s; smaller dt skipped\n", v.name.c_str(), dt, r.why.c_str());
        break;
      }
      add(row, r, bown, [&] { return run_bigstep(sc, H); });
    }
  }
}

}  // namespace

int bench_accuracy(const std::vector<std::string>& args) {
  Options o;
  bool horizon_set = false, scenes_set = false, variants_set = false, mj_set = false, dts_set = false,
       factors_set = false;
  std::string added;
  try {
    for (size_t i = 0; i < args.size(); ++i) {
      const bool more = i + 1 < args.size();
      const std::string& a = args[i];
      if (a == "--quick") o.quick = true;
      else if (a == "--out" && more) o.out = args[++i];
      else if (a == "--name" && more) o.name = args[++i];
      else if (a == "--horizon" && more) o.horizon = doubles(args[++i], "--horizon").front(), horizon_set = true;
      else if (a == "--scenes" && more) o.scenes = split(args[++i]), scenes_set = true;
      else if (a == "--variants" && more) o.variants = parse_variants(args[++i]), variants_set = true;
      else if (a == "--add-variants" && more) added = args[++i];
      else if (a == "--mujoco" && more) o.mj_integrators = split(args[++i]), mj_set = true;
      else if (a == "--cones" && more) o.mj_cones = split(args[++i]);
      else if (a == "--dt" && more) o.dts = doubles(args[++i], "--dt"), dts_set = true;
      else if (a == "--mujoco-dt-factors" && more) o.mj_factors = doubles(args[++i], "--mujoco-dt-factors"), factors_set = true;
      else if (a == "--min-cpu" && more) o.min_cpu = doubles(args[++i], "--min-cpu", -1e-300).front();
      else if (a == "--max-run-cpu" && more) o.max_run_cpu = doubles(args[++i], "--max-run-cpu").front();
      else if (a == "--help") {
        std::fputs(kUsage, stdout);
        return 0;
      } else {
        std::fprintf(stderr, "bigstep-bench accuracy: bad argument '%s'\n%s", a.c_str(), kUsage);
        return 2;
      }
    }
    if (o.quick) {
      if (!horizon_set) o.horizon = 1.0;
      if (!scenes_set) o.scenes = {"chain_fixed", "chain"};
      if (!variants_set) o.variants = parse_variants("pbfd=integrator.type:pbfd;ne_lcp=integrator.type:ne_lcp");
      if (!mj_set) o.mj_integrators = {"euler", "rk4"};
      if (!dts_set) o.dts = {0.05, 0.01};
      if (!factors_set) o.mj_factors = {4, 1};
    }
    if (!added.empty())
      for (const Variant& v : parse_variants(added)) o.variants.push_back(v);
    for (const std::string& s : o.scenes)
      BIGSTEP_CHECK_ARG(find_scene(s), "--scenes", s, "unknown scene (chain_fixed, chain, hopper, hopper_tilt, ant, box, a1, humanoid)");
    for (const std::string& s : o.mj_integrators)
      BIGSTEP_CHECK_ARG(kMjIntegrators.count(s), "--mujoco", s, "unknown integrator (euler, implicitfast, implicit, rk4, discrete)");
    for (const std::string& s : o.mj_cones)
      BIGSTEP_CHECK_ARG(kMjCones.count(s), "--cones", s, "unknown cone (pyramidal, elliptic)");
    BIGSTEP_CHECK_ARG(!o.mj_cones.empty() && !o.mj_integrators.empty(), "--mujoco / --cones", "(empty)", "need at least one");
    std::sort(o.dts.rbegin(), o.dts.rend());
    std::sort(o.mj_factors.rbegin(), o.mj_factors.rend());
  } catch (const InvalidArgument& e) {
    std::fprintf(stderr, "bigstep-bench accuracy: %s\n", e.what());
    return 2;
  }
  mju_user_warning = [](const char*) {};  // a blow-up is reported per run (bad qacc), not printed
  const std::string load_before = load_average_json();
  std::vector<Row> rows;
  std::vector<std::string> left_out;
  std::map<std::string, std::string> references;
  try {
    for (const std::string& s : o.scenes) run_scene(*find_scene(s), o, rows, left_out, references);
  } catch (const InvalidArgument& e) {
    std::fprintf(stderr, "bigstep-bench accuracy: %s (run it from the repository root)\n", e.what());
    return 2;
  }
  std::filesystem::create_directories(o.out);
  const std::filesystem::path path = std::filesystem::path(o.out) / (o.name + ".csv");
  write_csv(path, rows, o.horizon);
  std::string cmd = "bigstep-bench accuracy";
  for (const std::string& a : args) cmd += " " + a;
  auto json_string = [](const std::string& s) {
    std::string q = "\"";
    for (char c : s) q += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
    return q + "\"";
  };
  std::string extra = "\"loadavg_1_5_15_before\": " + load_before + ",\n  \"common_reference\": {";
  for (auto it = references.begin(); it != references.end(); ++it)
    extra += (it == references.begin() ? "\n    " : ",\n    ") + json_string(it->first) + ": " + json_string(it->second);
  extra += "\n  },\n  \"scene_notes\": {";
  bool first = true;
  for (const std::string& s : o.scenes)
    if (!find_scene(s)->note.empty())
      extra += (first ? "\n    " : ",\n    ") + json_string(s) + ": " + json_string(find_scene(s)->note), first = false;
  extra += "\n  },\n  \"left_out\": [";
  for (size_t i = 0; i < left_out.size(); ++i) extra += (i ? ",\n    " : "\n    ") + json_string(left_out[i]);
  extra += "\n  ]";
  write_meta(path, cmd,
             "cpu_s_per_sim_s: thread CPU time of the step loop (one rollout, one core) per simulated second, median "
             "over repeats; err_*: largest COM distance over the run from the common / the simulator's own "
             "reference (box: x only); the machine is shared, so CPU times carry its load",
             extra);
  std::printf("wrote %s (%zu rows)\n", path.c_str(), rows.size());
  return 0;
}

}  // namespace bigstep

#endif
