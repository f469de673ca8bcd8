// What the benchmarks against MuJoCo share (`bigstep-bench vs-mujoco`, `bigstep-bench accuracy`):
// the scenes, each built once for MuJoCo (libmujoco) and once for bigstep from the same model; one
// timed rollout on one core in either simulator with its COM trajectory; the COM error between two
// runs; the stability rule; the result file's .meta.json. Only in builds with MuJoCo.
#pragma once
#ifdef BIGSTEP_WITH_MUJOCO
#include <mujoco/mujoco.h>

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "io/mjcf_import.h"
#include "io/scene.h"

namespace bigstep::twin {

/// CPU time of the calling thread [s]: on a shared machine other processes stretch the wall time
/// of a run far more than this.
double thread_cpu_s();

/// One benchmarked scene: bigstep's scene file and the model MuJoCo compiles.
struct SceneDef {
  std::string name;
  std::string bigstep_file;      ///< YAML scene or MJCF / URDF (package paths allowed)
  std::string mujoco_file;       ///< what mj_parseXML reads; empty = bigstep's model exported (io/mjcf_export.h)
  bool free_root_floor = false;  ///< MuJoCo side: a free root and a floor added (a1_stand.yaml's model edits)
  double c_par_dt = 0;           ///< > 0: contact.c_par = c_par_dt / dt (the file's calibration kept at every dt)
  std::vector<std::string> overrides = {};  ///< bigstep --set edits; initial.theta also sets MuJoCo's qpos0
  bool zero_margin = false;      ///< MuJoCo side: geom_margin = 0 (bigstep's contacts have no margin)
  std::string note = {};         ///< what differs between the two sides, for the result files
};

/// Every scene of the MuJoCo benchmarks (bench_twin.cpp says why each is built as it is).
const std::vector<SceneDef>& scenes();
/// The scene called name, or nullptr.
const SceneDef* find_scene(const std::string& name);

struct MjModelDeleter {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
};
struct MjDataDeleter {
  void operator()(mjData* d) const { mj_deleteData(d); }
};
using MjModelPtr = std::unique_ptr<mjModel, MjModelDeleter>;
using MjDataPtr = std::unique_ptr<mjData, MjDataDeleter>;

/// bigstep's scene at dt with the edits `set` (integrator.type=..., KEY=VALUE as `--set` takes them),
/// applied after the scene's own rules.
Scene load_bigstep(const SceneDef& s, const std::vector<std::string>& set, double dt);

/// Both sides of a scene: MuJoCo's model with bigstep's start state as qpos0 / qvel0, and bigstep's
/// scene (PBFD at 10 ms) with the map from its theta to MuJoCo's qpos.
struct MjScene {
  MjModelPtr m;
  VecX qpos0, qvel0;
  double timestep = 0;  ///< the model file's own timestep
  int integrator = 0;   ///< the model file's own integrator (mjtIntegrator)
  int cone = 0;         ///< the model file's own friction cone (mjtCone)
  Scene base;
  std::shared_ptr<const MujocoImport> imp;
};
/// Throws InvalidArgument for a missing or unparsable file, or a MuJoCo twin that is not bigstep's
/// model (mass matrices differ).
MjScene make_scene(const SceneDef& s);

/// MuJoCo's options for a run: -1 = the model's own.
struct MjOptions {
  int integrator = -1, cone = -1;
  double tolerance = -1;  ///< opt.tolerance; a reference run sets it tight
  int iterations = -1;    ///< opt.iterations
};

/// A recorded trajectory: the COM at every step, the largest contact depth, timing.
struct Run {
  double dt = 0;
  int steps = 0;
  double wall_s = 0;
  double cpu_s = 0;            ///< thread CPU time of the timed loop
  double iterations = 0;       ///< summed solver iterations (bigstep)
  std::vector<Vec3> com;       ///< (steps + 1), com[n] at t = n dt
  std::vector<VecX> q, v;      ///< (steps + 1) generalized positions / velocities, when asked for
  double max_penetration = 0;  ///< [m], largest contact depth over the run
  bool stable = true;
  std::string why;             ///< why not stable
};

/// One MuJoCo rollout on one core, mj_step alone timed (qpos, and qvel with keep_state, copied
/// each step; COM and contacts evaluated afterwards). keep_state: q = qpos, v = qvel per step.
Run run_mujoco(MjScene& s, double dt, double horizon, const MjOptions& o = {}, bool keep_state = false);
/// One rollout of bigstep's CPU reference integrator on one core (theta copied each step, COM and
/// contacts evaluated afterwards). keep_state: q = theta_n, v = (theta_n - theta_{n-1}) / dt.
/// max_cpu_s > 0: stops once the timed loop has used that much CPU time (stable, why = "over budget").
Run run_bigstep(const Scene& sc, double horizon, bool keep_state = false, double max_cpu_s = 0);

/// Linear interpolation of a run's COM at time t.
Vec3 com_at(const Run& r, double t);
/// Max and RMS over the run's step times of |COM - ref(t)| (axes: the components compared, x y z).
std::pair<double, double> com_error(const Run& r, const Run& ref, const Vec3& axes = Vec3::Ones());

/// Marks a run unstable when its state went non-finite, a contact sank through (deeper than
/// kPenetrationDepth), the COM left a 5 m ball around its start or rose 0.5 m above it (every scene
/// starts at rest or sliding under gravity).
void judge(Run& r);

/// Comma-separated names ("a,b"); empty entries dropped.
std::vector<std::string> split(const std::string& list, char sep = ',');

/// The 1, 5 and 15 minute load averages as a JSON list.
std::string load_average_json();
/// csv's .meta.json: command, machine (cores, CPU model, MuJoCo version), date, commit, note, the
/// load average now, and `extra` (further "key": value members, comma-separated, or empty).
void write_meta(const std::filesystem::path& csv, const std::string& command, const std::string& note,
                const std::string& extra = "");

}  // namespace bigstep::twin

#endif
