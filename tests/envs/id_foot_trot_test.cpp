// Issue 16, the trot at mu = 100 (spec inverse-dynamics-contact.md §9, I14): model B's physical
// impulse bound (ID_IMPULSE_BOUND, solvers/inverse_dynamics_coulomb.h) keeps id_lcp_mu's torques
// bounded on the joint-space trot, and the foot-space trot plan (envs/foot_trot.h): analytic leg
// IK against the Model's kinematics, stance feet still in the world, and the ID(t_i) controllers
// on it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/kinematics.h"
#include "envs/foot_trot.h"
#include "envs/rollout.h"
#include "envs/scene.h"
#include "solvers/inverse_dynamics.h"

using namespace bigstep;

namespace {

Scene trot(const std::vector<std::string>& sets) {
  return load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/id_quadruped_trot.yaml", sets);
}

}  // namespace

TEST_CASE("id_lcp_mu: bounded torques on the joint-space trot at mu = 100", "[id_foot_trot]") {
  // Before the bound: |tau| 1.5e3-3.6e3 N m from the first steps (friction 100 f_N against the
  // incompatible plan), the robot thrown, then 1e135 N m (bench/results/id_tables.csv, git f119422).
  // The physical scale: the torque that stops the whole robot from 3 m/s within one step through a
  // 0.7 m leg, m_total * 3 m/s / dt * 0.7 m (8.8e4 N m for the 42 kg spider).
  const Scene sc = trot({"controller.type=id_lcp_mu", "contact.mu=100", "control.reference.walk.foot_space=false",
                         "integrator.duration=1.5"});
  const Rollout r = simulate(sc);
  REQUIRE(r.steps_run == sc.steps());
  const double dt = sc.settings.dt, scale = sc.model.total_mass * 3.0 / dt * 0.7;
  int flagged = 0;
  double tmax = 0;
  for (size_t n = 0; n < r.tau.size(); ++n) {
    REQUIRE(r.tau[n].allFinite());
    tmax = std::max(tmax, r.tau[n].cwiseAbs().maxCoeff());
    if (r.id_status[n] & ID_IMPULSE_BOUND) ++flagged;
  }
  INFO("max |tau| " << tmax << " N m, scale " << scale << ", flagged " << flagged);
  CHECK(tmax < scale);
  CHECK(flagged > 0);  // the ill-posed solves were caught (the first steps at least)
  double tilt = 0;
  for (const VecX& th : r.theta) tilt = std::max({tilt, std::abs(th[4]), std::abs(th[5])});
  CHECK(tilt < 0.5);
}
