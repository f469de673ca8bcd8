// MjSpecPtr: an owning pointer to a MuJoCo mjSpec (mj_deleteSpec on release), for the MJCF
// importer and exporter. Include only where MuJoCo is available (BIGSTEP_WITH_MUJOCO).
#pragma once
#include <mujoco/mujoco.h>

#include <memory>

namespace bigstep {

struct MjSpecDeleter {
  void operator()(mjSpec* s) const { mj_deleteSpec(s); }
};
using MjSpecPtr = std::unique_ptr<mjSpec, MjSpecDeleter>;

}  // namespace bigstep
