#include "io/chain_model.h"

#include <string>

#include "core/error.h"

namespace bigstep {

Model fixed_chain_model(int L) {
  BIGSTEP_CHECK_ARG(L >= 1, "fixed chain links", L, "must be >= 1");
  ModelSpec s;
  for (int j = 0; j < L; ++j) {
    LinkSpec l;
    l.name = std::string("l").append(std::to_string(j));
    l.parent = j - 1;
    l.joint = JointType::Hinge;
    l.axis = (j % 2) ? Vec3::UnitZ() : Vec3::UnitY();
    l.t_o = j == 0 ? Vec3(0, 0, 2.5) : Vec3(0.2, 0, 0);
    l.mass = 0.32;
    l.com = Vec3(0.1, 0, 0);
    l.inertia = Vec3(0.32 / 12 * 0.0032, 0.32 / 12 * 0.0416, 0.32 / 12 * 0.0416).asDiagonal();
    s.links.push_back(l);
  }
  return Model::finalize(s);
}

}  // namespace bigstep
