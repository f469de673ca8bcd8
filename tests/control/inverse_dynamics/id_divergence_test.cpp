// A diverging controller is flagged when it diverges (ID_DIVERGED, STATUS_CONTROL_DIVERGED;
// control/control_bound.h): id_lcp_mu without actuator limits on the foot-space, world-swing trot
// of configs/id_quadruped_trot.yaml feeds its own torques back until they leave the physical range
// (1e16 N m, then the foot 1e28 m through the ground at 1.47 s when only the penetration guard
// watched). The flag stops the run at the step whose torque passes the bound, while every contact
// is still above the penetration guard's limit; the shipped ID scenes stay far below the bound.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/kinematics.h"
#include "batch/penetration.h"
#include "batch/rollout.h"
#include "control/control_bound.h"
#include "control/inverse_dynamics/id_problem.h"
#include "io/scene.h"

using namespace bigstep;

namespace {

Scene trot(const std::vector<std::string>& sets) {
  return load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/id_quadruped_trot.yaml", sets);
}

// largest |tau_k| / bound_k over the run's steps
double worst_ratio(const Scene& sc, const Rollout& r) {
  VecX bound;
  control_divergence_bound(sc.model, bound);
  double w = 0;
  for (const VecX& t : r.tau)
    for (int k = 0; k < sc.model.n_q; ++k) w = std::max(w, std::abs(t[k]) / bound[k]);
  return w;
}

}  // namespace

TEST_CASE("control bound: the span bounds every point's distance, the bound scales with weight x span",
          "[id_divergence]") {
  const Scene sc = trot({});
  const Model& m = sc.model;
  const double span = model_span(m);
  // two feet of the quadruped: their distance at the initial pose is below the span
  PenetrationCheck pc(m);
  forward_kinematics(m, sc.theta0, pc.kin);
  double far = 0;
  for (int a = 0; a < m.n_geom; ++a)
    for (int b = 0; b < m.n_geom; ++b)
      if (m.geom_link[size_t(a)] >= 0 && m.geom_link[size_t(b)] >= 0)
        far = std::max(far, (pc.kin.t[m.geom_link[size_t(a)]] - pc.kin.t[m.geom_link[size_t(b)]]).norm());
  CHECK(far > 0.3);
  CHECK(far < span);
  CHECK(span < 10);  // a quadruped, not a bound that admits anything
  VecX bound;
  control_divergence_bound(m, bound);
  for (int k = 0; k < m.n_q; ++k)
    CHECK(bound[k] == Approx(kControlBound * m.total_mass * 9.81 * (m.dof_revolute[size_t(k)] ? span : 1.0)));
}

TEST_CASE("id_lcp_mu without limits on the foot-space trot: flagged at the divergence, before any penetration",
          "[id_divergence]") {
  const Scene sc = trot({"controller.type=id_lcp_mu", "controller.tau_max=0", "control.reference.walk.foot_space=true",
                         "control.reference.walk.world_swing=true"});
  const Rollout r = simulate(sc);
  const double dt = sc.settings.dt;
  REQUIRE(r.aborted);
  REQUIRE(r.diverged_dof >= 0);
  REQUIRE(r.steps_run >= 2);
  const int last = r.steps_run - 1;
  INFO("flagged at t = " << last * dt << " s on " << sc.model.dof_name[size_t(r.diverged_dof)] << ": " << r.diverged_tau);
  // the flag is the last step's, held (theta_{n+1} = theta_n) and the only one
  CHECK(r.stats[size_t(last)].status == STATUS_CONTROL_DIVERGED);
  CHECK(r.theta[size_t(last) + 1] == r.theta[size_t(last)]);
  CHECK(r.id_status[size_t(last)] & ID_DIVERGED);
  for (int n = 0; n < last; ++n) CHECK_FALSE(r.id_status[size_t(n)] & ID_DIVERGED);
  // at the divergence: the asked torque is past the bound, every earlier one within it
  CHECK(std::abs(r.diverged_tau) > r.diverged_bound);
  CHECK(r.diverged_bound == Approx(kControlBound * sc.model.total_mass * 9.81 * model_span(sc.model)));
  // ... every earlier one within it, the step before far inside it: the flag comes with the jump
  // out of the physical range (3e2 N m, then 1.5e5 N m, then 1e16 N m the step after), not later
  VecX bound;
  control_divergence_bound(sc.model, bound);
  double before = 0;
  for (int n = 0; n < last; ++n)
    for (int k = 0; k < sc.model.n_q; ++k) before = std::max(before, std::abs(r.tau[size_t(n)][k]) / bound[k]);
  CHECK(before <= 1);
  const double prev = (r.tau[size_t(last) - 1].cwiseAbs().array() / bound.array()).maxCoeff();
  INFO("the step before, relative to the bound: " << prev);
  CHECK(prev < 0.05);
  // earlier than the penetration guard: unflagged, the run went on to 1.47 s and sank a foot
  CHECK(last * dt < 1.47);
  PenetrationCheck pc(sc.model);
  for (const VecX& th : r.theta) CHECK_FALSE(pc.find(sc.model, th).found());
}

TEST_CASE("control bound: the shipped ID scenes stay far below it", "[id_divergence]") {
  // the trot at its defaults (joint-space and foot-space plans) and the grasping arm: no flag, and
  // the largest torque well inside the bound (a margin for plans that ask more)
  struct Run {
    std::string config;
    std::vector<std::string> sets;
  };
  const std::string dir = std::string(BIGSTEP_SOURCE_DIR) + "/configs/";
  for (const Run& run : {Run{"id_quadruped_trot.yaml", {"integrator.duration=1"}},
                         Run{"id_quadruped_trot.yaml", {"integrator.duration=1", "control.reference.walk.foot_space=true"}},
                         Run{"id_arm_grasp.yaml", {}}}) {
    const Scene sc = load_scene(dir + run.config, run.sets);
    const Rollout r = simulate(sc);
    const double w = worst_ratio(sc, r);
    INFO(run.config << (run.sets.size() > 1 ? " (foot space)" : "") << ": max |tau| / bound = " << w);
    CHECK_FALSE(r.aborted);
    CHECK(r.diverged_dof < 0);
    CHECK(w < 0.1);
  }
}
