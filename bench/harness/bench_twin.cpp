// The scenes and rollouts the MuJoCo benchmarks share (bench_twin.h).
#ifdef BIGSTEP_WITH_MUJOCO
#include "bench/harness/bench_twin.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <random>
#include <thread>

#include "batch/penetration.h"
#include "core/collision.h"
#include "core/crba.h"
#include "core/error.h"
#include "core/inertia.h"
#include "core/kinematics.h"
#include "io/mjcf_export.h"
#include "io/mjcf_scene.h"

namespace bigstep::twin {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct MjSpecDeleter {
  void operator()(mjSpec* s) const { mj_deleteSpec(s); }
};

// The ant's start: gymnasium's qpos0 (torso at 0.75 m, joints 0) puts every ankle 0.52 rad outside
// its range ([30, 70] deg and mirrored), and each simulator resolves that violation its own way
// (MuJoCo's soft limits push the ankles in within ~0.1 s, NE-LCP's capped correction at 0.1 rad/s,
// PBFD's limit penalty): the rows compared how, not the dynamics. The same pose with the ankles
// inside their ranges (+-0.6 rad, bench/ant_rest_height.py) starts both simulators from a valid
// state. ant.xml's geom margin 0.01 makes MuJoCo's foot contacts act from 2 cm (the ant rests 2 cm
// higher); bigstep has no contact margin, so MuJoCo runs the ant with margin 0.
const std::string kAntInside = "initial.theta=[0, 0, 0.75, 0, 0, 0, 0, 0.6, 0, -0.6, 0, -0.6, 0, 0.6]";

std::string resolve(const std::string& f) { return f.find(':') != std::string::npos ? resolve_model_path(f, "") : f; }

// A YAML model and its MJCF, imported by bigstep, must be one model: same mass matrix at a few
// random states (CRBA). Returns the largest relative difference.
double mass_matrix_difference(const Scene& yaml, const MujocoImport& imp, const std::string& file) {
  const Model mj = Model::finalize(imp.spec);
  BIGSTEP_CHECK_ARG(mj.n_q == yaml.model.n_q, file + " n_q", mj.n_q, detail::concat("must equal the YAML model's ", yaml.model.n_q));
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

// MuJoCo's model of a scene from `path`. With free_root_floor: parse, add a free joint to every
// jointless child of the world and an infinite plane at z = 0, compile -- the edits import_mujoco
// makes for model.free_root / model.floor, so both simulators run the same model.
MjModelPtr load_mujoco(const SceneDef& s, const std::string& path) {
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

}  // namespace

double thread_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

const std::vector<SceneDef>& scenes() {
  static const std::vector<SceneDef> s{
      // the floating chain dropped on the ground and its hand-written MJCF twin (mass matrix checked)
      {"chain", "configs/chain_floating_ground.yaml", "bench/models/chain_floating_ground.xml", false, 5e4},
      {"hopper", "gymnasium:hopper.xml", "gymnasium:hopper.xml"},
      {"ant", "gymnasium:ant.xml", "gymnasium:ant.xml", false, 0, {kAntInside}, true,
       "ankles start inside their ranges (+-0.6 rad); MuJoCo geom margin 0"},
      {"a1", "configs/a1_stand.yaml", "example-robot-data:robots/a1_description/urdf/a1.urdf", true, 0, {}, false,
       "PD hold as MuJoCo joint springs + damping"},
      // the hopper tilted 0.1 rad about rooty and raised 3 cm (rootz 1.28; its toe 1 cm above the floor): upright
      // at rest it balances on an unstable equilibrium, and which way and when it falls depends on
      // each contact model's round-off (two MuJoCo cones' fine references end 0.3 m apart)
      {"hopper_tilt", "gymnasium:hopper.xml", "gymnasium:hopper.xml", false, 0, {"initial.theta=[0, 1.28, 0.1, 0, 0, 0]"},
       false, "started tilted 0.1 rad about rooty, 3 cm up (toe 1 cm above the floor)"},
      // the 10-link chain hanging from a hinge, no contact: MuJoCo runs bigstep's model exported
      {"chain_fixed", "configs/chain_fixed.yaml", ""},
      // the sliding box: contact.c_par = 3e5 / dt keeps the file's mu_eff = 0.5 at 1 m/s at every dt
      // (box_slide.yaml calibrates C_par at dt = 0.01); MuJoCo runs the exported model, the four
      // corner points as 1e-6 m spheres with friction contact.mu
      {"box", "configs/box_slide.yaml", "", false, 3e5, {}, false,
       "MuJoCo: bigstep's model exported (corner points as 1e-6 m spheres, friction 0.5)"},
      // gymnasium's humanoid standing at its qpos0 (feet on the floor) and falling; bigstep loads
      // it without its tendons (model.allow), MuJoCo keeps them
      {"humanoid", "gymnasium:humanoid.xml", "gymnasium:humanoid.xml", false, 0, {"model.allow=[tendons]"}, true,
       "bigstep drops the model's tendons (model.allow: [tendons]); MuJoCo keeps them; MuJoCo geom margin 0"},
  };
  return s;
}

const SceneDef* find_scene(const std::string& name) {
  for (const SceneDef& s : scenes())
    if (s.name == name) return &s;
  return nullptr;
}

Scene load_bigstep(const SceneDef& s, const std::vector<std::string>& set, double dt) {
  std::vector<std::string> ov{detail::concat("integrator.dt=", dt)};
  if (s.c_par_dt > 0) ov.push_back(detail::concat("contact.c_par=", s.c_par_dt / dt));
  ov.insert(ov.end(), s.overrides.begin(), s.overrides.end());
  ov.insert(ov.end(), set.begin(), set.end());
  return load_scene(resolve(s.bigstep_file), ov);
}

MjScene make_scene(const SceneDef& def) {
  MjScene ms;
  ms.base = load_bigstep(def, {"integrator.type=pbfd"}, 0.01);
  std::string path = def.mujoco_file.empty() ? std::string() : resolve(def.mujoco_file);
  std::filesystem::path exported;
  if (def.mujoco_file.empty()) {  // bigstep's model as MJCF: qpos and qvel ARE theta and theta_dot
    MjcfExportOptions eo;
    eo.name = def.name;
    eo.friction = ms.base.ne.mu;
    exported = std::filesystem::temp_directory_path() / detail::concat("bigstep_bench_", def.name, "_", getpid(), ".xml");
    std::ofstream(exported) << export_mjcf(ms.base.model, eo);
    path = exported.string();
  }
  ms.m = load_mujoco(def, path);
  ms.imp = ms.base.imported;
  if (!ms.imp) {  // a YAML scene: its MJCF twin gives the map, and must be the same model
    MujocoImportOptions io;
    ms.imp = std::make_shared<const MujocoImport>(import_mujoco(path, io));
    const double e = mass_matrix_difference(ms.base, *ms.imp, path);
    // 1e-6: an exported MJCF's numbers are text with 6 significant digits
    BIGSTEP_CHECK_ARG(e < 1e-6, "scene " + def.name + ": " + path, e,
                      "is not the YAML model (largest relative difference of the mass matrices)");
  }
  if (!exported.empty()) std::filesystem::remove(exported);
  BIGSTEP_CHECK_ARG(ms.imp->nq == ms.m->nq && ms.imp->nv == ms.m->nv, "scene " + def.name + " nq / nv", ms.m->nq,
                    "MuJoCo's model and bigstep's map differ");
  ms.timestep = ms.m->opt.timestep;
  ms.integrator = ms.m->opt.integrator;
  ms.cone = ms.m->opt.cone;
  qpos_from_theta(*ms.imp, ms.base.theta0, ms.qpos0);
  qvel_from_theta_dot(*ms.imp, ms.base.theta0, ms.base.theta_dot0, ms.qvel0);
  if (ms.base.pd.active()) {
    VecX qref, td;
    ms.base.pd.reference(0.0, qref, td);
    add_hold_servo(ms.m.get(), ms.base.pd.kp, ms.base.pd.kd, qref);
  }
  return ms;
}

Run run_mujoco(MjScene& s, double dt, double horizon, const MjOptions& o, bool keep_state) {
  mjModel* m = s.m.get();
  const mjOption saved = m->opt;
  m->opt.timestep = dt;
  if (o.integrator >= 0) m->opt.integrator = o.integrator;
  if (o.cone >= 0) m->opt.cone = o.cone;
  if (o.tolerance >= 0) m->opt.tolerance = o.tolerance;
  if (o.iterations > 0) m->opt.iterations = o.iterations;
  Run r;
  r.dt = dt;
  r.steps = std::max(1, int(std::lround(horizon / dt)));
  MjDataPtr d(mj_makeData(m));
  mj_resetData(m, d.get());
  mju_copy(d->qpos, s.qpos0.data(), m->nq);
  mju_copy(d->qvel, s.qvel0.data(), m->nv);
  const size_t nv = keep_state ? size_t(m->nv) : 0;
  std::vector<double> qs(size_t(r.steps + 1) * m->nq), vs(size_t(r.steps + 1) * nv);
  mju_copy(qs.data(), d->qpos, m->nq);
  if (nv) mju_copy(vs.data(), d->qvel, m->nv);
  const auto t0 = Clock::now();
  const double c0 = thread_cpu_s();
  for (int n = 0; n < r.steps; ++n) {
    mj_step(m, d.get());
    mju_copy(qs.data() + size_t(n + 1) * m->nq, d->qpos, m->nq);
    if (nv) mju_copy(vs.data() + size_t(n + 1) * nv, d->qvel, m->nv);
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
    if (keep_state) {
      r.q.push_back(Eigen::Map<const VecX>(qs.data() + size_t(n) * m->nq, m->nq));
      r.v.push_back(Eigen::Map<const VecX>(vs.data() + size_t(n) * nv, m->nv));
    }
  }
  m->opt = saved;
  judge(r);
  return r;
}

Run run_bigstep(const Scene& sc, double horizon, bool keep_state, double max_cpu_s) {
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
  std::vector<VecX> th(r.steps + 2, d.theta);
  th[0] = d.theta_prev;  // th[n + 1] = theta_n
  int done = r.steps;
  const auto t0 = Clock::now();
  const double c0 = thread_cpu_s();
  for (int n = 0; n < r.steps; ++n) {
    u.t = n * r.dt;
    const StepStats st = integ->step(d, u, p);
    r.iterations += st.iterations;
    th[n + 2] = d.theta;
    if (!st.converged()) {
      r.stable = false;
      r.why = detail::concat("solver failed at step ", n, " (status ", st.status, ")");
      done = n + 1;
      break;
    }
    if (max_cpu_s > 0 && n % 16 == 15 && thread_cpu_s() - c0 > max_cpu_s) {
      r.why = detail::concat("over budget (", max_cpu_s, " CPU s) at step ", n);
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
    const int k = std::min(n, done);
    forward_kinematics(m, th[k + 1], kin);
    r.com[n] = centre_of_mass(m, kin);
    uint32_t status = 0;
    const int nc = collide(m, kin, 0.0, con.data(), int(con.size()), status);
    for (int c = 0; c < nc; ++c) r.max_penetration = std::max(r.max_penetration, con[c].depth);
    if (keep_state) {
      r.q.push_back(th[k + 1]);
      r.v.push_back((th[k + 1] - th[k]) / r.dt);
    }
  }
  judge(r);
  return r;
}

Vec3 com_at(const Run& r, double t) {
  const double x = std::clamp(t / r.dt, 0.0, double(r.steps));
  const int n = std::min(int(x), r.steps - 1);
  const double a = x - n;
  return (1 - a) * r.com[n] + a * r.com[n + 1];
}

std::pair<double, double> com_error(const Run& r, const Run& ref, const Vec3& axes) {
  double mx = 0, ss = 0;
  for (int n = 0; n <= r.steps; ++n) {
    const double e = (r.com[n] - com_at(ref, n * r.dt)).cwiseProduct(axes).norm();
    mx = std::max(mx, e);
    ss += e * e;
  }
  return {mx, std::sqrt(ss / (r.steps + 1))};
}

void judge(Run& r) {
  if (!r.stable) return;
  for (const Vec3& c : r.com)
    if (!c.allFinite()) {
      r.stable = false, r.why = "non-finite";
      return;
    } else if ((c - r.com[0]).norm() > 5) {
      r.stable = false, r.why = "blow-up (COM moved > 5 m)";
      return;
    } else if (c.z() > r.com[0].z() + 0.5) {  // every scene starts at rest (or sliding) and falls or stands
      r.stable = false, r.why = "launched (COM rose > 0.5 m)";
      return;
    }
  if (r.max_penetration > kPenetrationDepth) r.stable = false, r.why = "penetration > 5 cm";
}

std::vector<std::string> split(const std::string& l, char sep) {
  std::vector<std::string> v;
  for (size_t a = 0; a <= l.size();) {
    const size_t b = std::min(l.find(sep, a), l.size());
    if (b > a) v.push_back(l.substr(a, b - a));
    a = b + 1;
  }
  return v;
}

std::string load_average_json() {
  double la[3] = {0, 0, 0};
  if (getloadavg(la, 3) != 3) return "null";
  return detail::concat("[", la[0], ", ", la[1], ", ", la[2], "]");
}

void write_meta(const std::filesystem::path& csv, const std::string& command, const std::string& note,
                const std::string& extra) {
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  auto first_line = [](const char* cmd) {
    std::string s;
    if (FILE* f = popen(cmd, "r")) {
      char buf[256];
      if (fgets(buf, sizeof buf, f)) s = buf;
      pclose(f);
    }
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
  };
  const std::string commit = first_line("git rev-parse --short HEAD 2>/dev/null");
  const std::string cpu = first_line("sed -n 's/^model name[^:]*: *//p' /proc/cpuinfo 2>/dev/null | head -1");
  std::ofstream m(std::filesystem::path(csv).replace_extension(".meta.json"));
  m << "{\n  \"file\": \"" << csv.filename().string() << "\",\n  \"command\": \"" << command << "\",\n"
    << "  \"machine\": \"" << std::thread::hardware_concurrency() << " hardware threads, " << cpu << "; MuJoCo "
    << mj_versionString() << "\",\n  \"date\": \"" << date << "\",\n  \"commit\": \"" << commit << "\",\n"
    << "  \"loadavg_1_5_15_after\": " << load_average_json() << ",\n  \"note\": \"" << note << "\"";
  if (!extra.empty()) m << ",\n  " << extra;
  m << "\n}\n";
}

}  // namespace bigstep::twin

#endif
