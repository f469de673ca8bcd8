// Operational-space PD on the floating base of the ID controllers (control/inverse_dynamics/id_base_feedback.h;
// docs/methods/inverse_dynamics.md §9 "Controllers"): the correction gives the base its desired
// acceleration while the stance feet stay put, lifted feet are not stance, gains 0 change nothing,
// and in closed loop (NE-LCP, 1 ms) it brings the torso to a planned height the joint plan alone
// does not ask for.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include "batch/rollout.h"
#include "io/scene.h"
#include "control/inverse_dynamics/id_base_feedback.h"
#include "control/inverse_dynamics/id_controller.h"

using namespace bigstep;

namespace {

constexpr double kDt = 1e-3;

Scene trot_scene(std::vector<std::string> extra = {}) {
  extra.push_back("control.reference.type=hold");
  return load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/id_quadruped_trot.yaml", extra);
}

// the problem terms of the standing spider at rest, feet on the ground
struct Stand {
  Scene sc = trot_scene();
  const Model& m = sc.model;
  IdTerms terms{m};
  VecX theta = sc.theta0, v = VecX::Zero(m.n_q), zero = VecX::Zero(m.n_q);
  Stand() { terms.update(m, theta, v, kDt, 1.0, 1e-3); }
};

}  // namespace

TEST_CASE("id base feedback: the base gets its desired acceleration and the stance feet stay put", "[id][base]") {
  Stand s;
  REQUIRE(s.terms.n == 4);
  IdBaseFeedback fb(s.m, 100, 20);
  REQUIRE(fb.base == 0);
  // plan: the stand pose with the torso 1 cm higher and pitched by 0.02 rad; the state at rest
  VecX bar = s.theta;
  bar[2] += 0.01;
  bar[4] += 0.02;
  VecX qdd = VecX::Zero(s.m.n_q);
  id_base_feedback(s.terms, s.theta, s.v, bar, s.zero, s.zero, fb, qdd);
  CHECK(fb.n_stance == 4);
  const VecX& da = fb.b;  // a* (base entries included); the joint PID asked for nothing (qdd = 0)
  // a_des = kp (bar - theta): z 1 m/s^2, ry 2 rad/s^2, the other two rotations 0 (the feet's
  // weight 1e4 against the base's 1e4 and the joints' 1 leaves a 1e-3 relative compromise)
  CHECK(da[2] == Approx(1.0).epsilon(1e-2));
  CHECK(da[4] == Approx(2.0).epsilon(1e-2));
  CHECK(std::abs(da[3]) < 1e-2);
  CHECK(std::abs(da[5]) < 1e-2);
  // the stance feet do not accelerate: |J_i a*| small against the base's 1-2 m/s^2 (the 1e4 weights)
  for (int i = 0; i < 4; ++i)
    for (const MatX* J : {&s.terms.N, &s.terms.S, &s.terms.T}) CHECK(std::abs(J->row(i).dot(da)) < 5e-3);
  // qdd received the actuated part
  for (int k = 6; k < s.m.n_q; ++k) CHECK(qdd[k] == da[k]);
  // and the joints moved: it is the legs that lift the torso
  CHECK(qdd.tail(12).norm() > 0.5);
}

TEST_CASE("id base feedback: lifted or landing feet are not stance; no gains, no change", "[id][base]") {
  Stand s;
  VecX bar = s.theta;
  bar[2] += 0.01;
  // the plan lifts the front-left foot: its knee folds at 2 rad/s (foot up ~0.6 m/s)
  VecX bard = VecX::Zero(s.m.n_q);
  bard[8] = -2.0;  // fl knee (theta order: base 6, then fl abd, hip, knee)
  IdBaseFeedback fb(s.m, 100, 20);
  VecX qdd = VecX::Zero(s.m.n_q);
  int lifted = -1;
  for (int i = 0; i < 4; ++i) {
    double lift = 0;
    for (int k = 6; k < s.m.n_q; ++k) lift += s.terms.N(i, k) * bard[k];
    if (lift > kIdLiftSpeed) lifted = i;
  }
  REQUIRE(lifted >= 0);
  id_base_feedback(s.terms, s.theta, s.v, bar, bard, s.zero, fb, qdd);
  CHECK(fb.n_stance == 3);
  // a foot 1 mm up (in the ID's contact set) is landing, not standing
  s.terms.phi[0] = 1e-3;
  id_base_feedback(s.terms, s.theta, s.v, bar, s.zero, s.zero, fb, qdd);
  CHECK(fb.n_stance == 3);
  // gains 0: off
  IdBaseFeedback off(s.m, 0, 0);
  VecX q0 = VecX::Constant(s.m.n_q, 0.5), q1 = q0;
  id_base_feedback(s.terms, s.theta, s.v, bar, bard, s.zero, off, q1);
  CHECK(q1 == q0);
}

TEST_CASE("id base feedback: closed loop, the torso follows a planned height the joints do not ask for", "[id][base]") {
  // The standing spider (NE-LCP at 1 ms, mu = 1) is planned 2 cm higher than it stands, with the
  // same joint angles: only the base PD can ask for it (the joint PID holds the stand angles).
  // After 0.4 s the torso has risen most of the way with base feedback and stayed put without it.
  for (const char* type : {"id_qp_mu", "id_lcp_mu", "id_lcp_inf"}) {
    INFO(type);
    double z_end[2] = {0, 0};
    for (int on = 0; on < 2; ++on) {
      Scene sc = trot_scene({std::string("controller.type=") + type, "contact.mu=1", "integrator.duration=0.4",
                             std::string("controller.base_kp=") + (on ? "100" : "0"),
                             std::string("controller.base_kd=") + (on ? "20" : "0")});
      const VecX stand = sc.theta0;
      sc.pd.reference = [stand](double, VecX& th, VecX& thd) {
        th = stand;
        th[2] += 0.02;
        thd.setZero(stand.size());
      };
      const Rollout r = simulate(sc);
      REQUIRE(r.steps_run == sc.steps());
      z_end[on] = r.theta.back()[2] - stand[2];
      for (const VecX& th : r.theta) CHECK(std::abs(th[4]) + std::abs(th[5]) < 0.05);  // stays level
    }
    INFO("torso rise after 0.4 s: without " << z_end[0] << " m, with base feedback " << z_end[1] << " m");
    CHECK(std::abs(z_end[0]) < 2e-3);
    CHECK(z_end[1] > 0.015);
    CHECK(z_end[1] < 0.025);
  }
}
