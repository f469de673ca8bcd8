// Rotation charts of ball and floating joints (docs/methods/orientation.md).
// A 3-angle joint's orientation is R = R_o C Rz(a) Ry(b) Rx(c): ZYX Euler angles theta = (a, b, c)
// read in a per-rollout chart C (a rotation, identity at the start). The angles stay the flat,
// elementary-axis coordinates every method's maths is written in (each DOF one revolute axis), and
// C is constant inside a step, so the twist rule and every derivative are unchanged. The angles
// are singular where cos b = 0; before b gets near there the chart is re-anchored at the current
// orientation (C <- C Rz Ry Rx, theta <- ~0) and every other configuration the step reads is
// re-expressed in the new chart, so the world pose of each is kept to rounding.
#pragma once
#include "core/data.h"
#include "core/model.h"

namespace bigstep {

/// Re-anchor a chart when |cos b| of its middle angle falls below this (b past 45 degrees): one
/// step can then turn the joint by up to 45 degrees before the chart gets near its singularity.
constexpr double kChartAnchorCos = 0.70710678118654752;

/// A solver's trial point whose middle angle is within 10 degrees of +-90 (|cos b| below this) is
/// rejected (chart_admissible): there the angles lose a direction, the residual of a force balance
/// loses that component, and an iterative solver can stop at a wrong point that looks converged
/// (a tumbling cube's PBFD step once "converged" to a 60 degree turn ending exactly at 90). With
/// charts anchored at 45 degrees a step may still turn a joint by 35 degrees.
constexpr double kChartTrialCos = 0.17364817766693033;

/// True when every chart's middle angle of theta has |cos b| >= kChartTrialCos.
bool chart_admissible(const Model& m, const VecX& theta);

/// Rz(a) Ry(b) Rx(c) of the three angles at e[0..2].
Mat3 zyx_rotation(const double* e);
/// The angles (a, b, c) with Rz(a) Ry(b) Rx(c) = R, b in [-pi/2, pi/2], a and c in (-pi, pi].
Vec3 zyx_angles(const Mat3& R);

/// World (parent-frame, without R_o) orientation of chart c's joint: C Rz Ry Rx at theta.
inline Mat3 chart_orientation(const Model& m, const Mat3* chart, int c, const VecX& theta) {
  const Mat3 R = zyx_rotation(theta.data() + m.chart_dof[c]);
  return chart ? Mat3(chart[c] * R) : R;
}

/// True when some chart of theta has its middle angle past the anchor bound.
bool chart_needs_anchor(const Model& m, const VecX& theta);

/// Re-anchors every chart of d whose middle angle in d.theta is past kChartAnchorCos: C <- C R_n
/// (re-orthonormalised) and, for each configuration the methods read (theta, the multistep
/// history, NMDP's carry), angles <- zyx_angles(R_n^T Rz Ry Rx(angles)), one function of the old
/// angles, so configurations that were bit-equal stay bit-equal and every world pose is kept.
/// theta_prev is re-expressed the same way (keep_rate false: position-based methods, which read
/// the pose at t_{n-1}), or so that the body angular velocity omega = E(theta_n) (theta_n -
/// theta_{n-1}) / dt is kept (keep_rate true: velocity-level methods, whose state is (theta_n,
/// theta_dot_n)). Returns the number of charts moved.
int anchor_charts(const Model& m, Data& d, bool keep_rate);

/// The angles of every chart of theta re-expressed in the identity chart (the world ZYX angles of
/// each joint: C Rz Ry Rx = Rz Ry Rx(new)), in place; charts equal to the identity are left as they
/// are (bit for bit, and any turns of the first and last angles kept). Exact to rounding away from
/// the singularity; where the joint's middle angle is at +-90 degrees the split of the other two is
/// arbitrary but the orientation is kept. chart nullptr: nothing to do.
void to_identity_chart(const Model& m, const Mat3* chart, VecX& theta);

/// E(e): body angular velocity = E(e) d/dt (a, b, c) of Rz(a) Ry(b) Rx(c) (columns: Rx^T Ry^T z, Rx^T y, x).
Mat3 zyx_rate_matrix(const double* e);

/// Re-expresses the angles of chart c in v by R_n^T (see anchor_charts).
void rechart_angles(const Model& m, int c, const Mat3& Rn, VecX& v);

}  // namespace bigstep
