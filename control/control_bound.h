// The largest joint torque (force) a controller may ask of a model before its output counts as
// diverged (IdControllerState::status ID_DIVERGED, STATUS_CONTROL_DIVERGED). The .cpp derives it.
#pragma once
#include "core/model.h"

namespace bigstep {

/// An upper bound on the distance between any two points of the model [m]: twice the longest
/// path from a root joint through the joint offsets (plus a limited slider's travel) to a centre
/// of mass or the far side of a link's geom. Every moment arm about any joint is below it.
double model_span(const Model& m);

/// Per DOF (n_q): kControlBound m_total g0 span on a revolute DOF [N m], kControlBound m_total g0 on
/// a prismatic one [N] (g0 = 9.81 m/s^2, whatever the model's gravity).
void control_divergence_bound(const Model& m, VecX& bound);

/// The bound's multiple of the whole model's weight at its full span (see the .cpp).
inline constexpr double kControlBound = 100;

}  // namespace bigstep
