// A scene and K perturbed initial states (theta(0), theta_{-1}) for the team-form LM tests:
// theta(0) = the scene's + 0.02 N(0, 1), theta_dot(0) = the scene's + 0.1 N(0, 1), seeded.
#pragma once
#include <random>
#include <string>
#include <vector>

#include "io/scene.h"

namespace bigstep::test {

struct TeamCase {
  Scene sc;
  std::vector<VecX> th0, thm1;
};

inline TeamCase make_team_case(const std::string& cfg, int K, const std::vector<std::string>& ov, unsigned seed) {
  TeamCase c{load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/" + cfg, ov), {}, {}};
  std::mt19937 rng(seed);
  std::normal_distribution<double> N(0, 1);
  for (int k = 0; k < K; ++k) {
    VecX q = c.sc.theta0, v = c.sc.theta_dot0;
    for (int i = 0; i < q.size(); ++i) q[i] += 0.02 * N(rng);
    for (int i = 0; i < q.size(); ++i) v[i] += 0.1 * N(rng);
    c.th0.push_back(q);
    c.thm1.push_back(q - c.sc.settings.dt * v);
  }
  return c;
}

}  // namespace bigstep::test
