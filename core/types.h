// Scalar and small fixed-size types shared by every module (CPU reference: double).
#pragma once
#include <Eigen/Dense>
#include <cstdint>

namespace bigstep {

using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;
using VecX = Eigen::VectorXd;
using MatX = Eigen::MatrixXd;

/// [w]x : the cross-product matrix, skew(w) * v == w.cross(v).
inline Mat3 skew(const Vec3& w) {
  Mat3 S;
  S << 0, -w.z(), w.y(), w.z(), 0, -w.x(), -w.y(), w.x(), 0;
  return S;
}

/// Rodrigues rotation about unit axis a by angle q.
inline Mat3 axis_rotation(const Vec3& a, double q) {
  return Eigen::AngleAxisd(q, a).toRotationMatrix();
}

/// Per-step / per-rollout status bits (docs/architecture.md §6).
enum StatusBits : uint32_t {
  STATUS_OK = 0,
  STATUS_NOT_CONVERGED = 1u << 0,  ///< hit it_max or lambda cap, after the restart rule
  STATUS_NONFINITE = 1u << 1,      ///< non-finite state, objective or input
  STATUS_FACTOR_FAILED = 1u << 2,  ///< Cholesky of B + lambda I never succeeded
  STATUS_GIMBAL_LOCK = 1u << 3,    ///< a middle Euler angle reached |cos| < 1e-6
  STATUS_RESTARTED = 1u << 4,      ///< informational: the restart from theta_n was used
  STATUS_SMALL_STEP = 1u << 5,     ///< informational: ended on the small-step test
  STATUS_PENETRATED = 1u << 6,     ///< a contact sphere sank through the terrain (batch/penetration.h; set by the run loop)
  STATUS_CONTACT_OVERFLOW = 1u << 7,  ///< collide() found more contacts than its capacity
  /// the controller's output was non-finite or beyond the model's physical range (an ID controller:
  /// control/control_bound.h; set by the run loops, which stop the rollout there)
  STATUS_CONTROL_DIVERGED = 1u << 8,
};

/// True when a status word carries a failure bit (informational bits excluded).
inline bool status_failed(uint32_t s) {
  return (s & (STATUS_NOT_CONVERGED | STATUS_NONFINITE | STATUS_FACTOR_FAILED | STATUS_GIMBAL_LOCK |
               STATUS_CONTACT_OVERFLOW | STATUS_CONTROL_DIVERGED)) != 0;
}

}  // namespace bigstep
