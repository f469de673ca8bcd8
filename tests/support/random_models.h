// Deterministic random models, states and central differences for the derivative tests
// (docs/methods/pbfd.md §9 D1, D2, D7).
//
// Everything is driven by a seeded std::mt19937 whose raw 32-bit output is fully specified by
// the standard; the std::*_distribution classes and std::shuffle are not (libstdc++ and libc++
// differ), so the helpers below map raw draws to numbers themselves. Same seed -> same model on
// every platform.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/kinematics.h"
#include "core/model.h"
#include "tests/support/tol.h"

namespace bigstep::test {

using Rng = std::mt19937;

// ---------------------------------------------------------------------------------------
// Finite-difference step and tolerance.
//
// A central difference (f(x+h) - f(x-h)) / 2h has truncation error h^2 |f'''| / 6 and
// round-off error ~ eps |f| / h. Our coordinates are angles [rad] and lengths of 0.1..1 m, so
// the derivatives of every quantity change on a scale of O(0.1..1): with h = 1e-5 the truncation
// term is ~1e-10..1e-8 relative and the round-off term ~ 2e-16 / 1e-5 ~ 2e-11 relative (times
// |f| / |f'|, O(1..10) here). The D2 bound (docs/methods/pbfd.md §9), 1e-6 relative to the largest entry of the
// analytic derivative, keeps two or more orders of margin on both, while a missing or wrong term
// (a sign, a factor 2, a dropped second-derivative term) shows up at O(1e-3..1).
// Tests whose length scale is smaller (contact depths of a few mm) pick a smaller h and say why.
// ---------------------------------------------------------------------------------------
constexpr double kFdStep = 1e-5;
inline double fd_tol() { return tol(1e-6); }

// ---------------------------------------------------------------------------------------
// Random numbers
// ---------------------------------------------------------------------------------------

/// Uniform in [lo, hi) from one raw 32-bit draw (portable, unlike std::uniform_real_distribution).
inline double uniform(Rng& rng, double lo, double hi) {
  return lo + (hi - lo) * ((double(rng()) + 0.5) / 4294967296.0);
}
/// Uniform integer in [0, n).
inline int uniform_int(Rng& rng, int n) { return int(rng() % uint32_t(n)); }

inline Vec3 uniform_vec(Rng& rng, double lo, double hi) {
  const double x = uniform(rng, lo, hi), y = uniform(rng, lo, hi), z = uniform(rng, lo, hi);
  return Vec3(x, y, z);
}

inline VecX uniform_vecx(Rng& rng, int n, double lo, double hi) {
  VecX v(n);
  for (int i = 0; i < n; ++i) v[i] = uniform(rng, lo, hi);
  return v;
}

inline MatX uniform_mat(Rng& rng, int rows, int cols, double lo, double hi) {
  MatX M(rows, cols);
  for (int c = 0; c < cols; ++c)
    for (int r = 0; r < rows; ++r) M(r, c) = uniform(rng, lo, hi);
  return M;
}

/// Random unit vector (rejection from the cube, portable).
inline Vec3 random_unit(Rng& rng) {
  for (;;) {
    const Vec3 v = uniform_vec(rng, -1, 1);
    const double n = v.norm();
    if (n > 0.2 && n <= 1) return v / n;
  }
}

/// Random unit vector with every component |n_i| >= 0.15: not aligned with any axis or
/// coordinate plane, so an axis-specific shortcut in the code under test cannot pass.
inline Vec3 random_oblique_unit(Rng& rng) {
  for (;;) {
    const Vec3 v = random_unit(rng);
    if (v.cwiseAbs().minCoeff() >= 0.15) return v;
  }
}

/// URDF rpy convention: R = Rz(yaw) Ry(pitch) Rx(roll).
inline Mat3 rpy_rotation(double roll, double pitch, double yaw) {
  return axis_rotation(Vec3::UnitZ(), yaw) * axis_rotation(Vec3::UnitY(), pitch) *
         axis_rotation(Vec3::UnitX(), roll);
}

inline Mat3 random_rotation(Rng& rng) {
  const double r = uniform(rng, -M_PI, M_PI), p = uniform(rng, -1.4, 1.4), y = uniform(rng, -M_PI, M_PI);
  return rpy_rotation(r, p, y);
}

// ---------------------------------------------------------------------------------------
// Solid boxes: physically valid inertias with an independent 8-point Gauss representation
// ---------------------------------------------------------------------------------------

/// Homogeneous solid box in a link frame: mass, centre (= COM), orientation, edge lengths.
struct Box {
  double mass = 1;
  Vec3 com = Vec3::Zero();
  Mat3 R = Mat3::Identity();
  Vec3 size = Vec3::Ones();
};

/// Inertia about the COM in link axes: R diag(m/12 (ly^2+lz^2), ...) R^T.
inline Mat3 box_inertia(const Box& b) {
  const Vec3 s2 = b.size.cwiseProduct(b.size);
  const Vec3 d = b.mass / 12.0 * Vec3(s2.y() + s2.z(), s2.x() + s2.z(), s2.x() + s2.y());
  return b.R * d.asDiagonal() * b.R.transpose();
}

/// The 2-point-per-axis Gauss nodes of the box: 8 points (link frame), each of mass m/8, at
/// c +- (l_i/2)/sqrt(3) along the box axes (docs/methods/pbfd.md §3 sanity check 3). Exact for any integrand
/// quadratic in x, which every moment integral here is.
inline std::array<Vec3, 8> box_gauss_points(const Box& b) {
  std::array<Vec3, 8> x;
  const Vec3 h = b.size / (2.0 * std::sqrt(3.0));
  for (int i = 0; i < 8; ++i) {
    const Vec3 s((i & 1) ? 1.0 : -1.0, (i & 2) ? 1.0 : -1.0, (i & 4) ? 1.0 : -1.0);
    x[i] = b.com + b.R * s.cwiseProduct(h);
  }
  return x;
}

inline Box random_box(Rng& rng) {
  Box b;
  b.mass = uniform(rng, 0.3, 3.0);
  b.com = uniform_vec(rng, -0.25, 0.25);
  b.R = random_rotation(rng);
  b.size = uniform_vec(rng, 0.05, 0.5);
  return b;
}

// ---------------------------------------------------------------------------------------
// Random models
// ---------------------------------------------------------------------------------------

struct RandomModelOptions {
  JointType root = JointType::Floating;  ///< joint of link 0 (its parent is the world)
  /// Joints of the other links, in a seed-dependent order with random parents. The default
  /// contains every joint kind (with the floating root): ball, hinge, prismatic, planar, fixed.
  std::vector<JointType> children = {JointType::Ball,   JointType::Hinge, JointType::Prismatic,
                                     JointType::Planar, JointType::Hinge, JointType::Fixed,
                                     JointType::Prismatic};
  bool point_masses = false;  ///< links are point masses (inertia 0, COM = point) instead of boxes
  int n_spheres = 0;          ///< random contact spheres; radius 0 for even indices, > 0 for odd
  int n_planes = 0;           ///< planes with random non-axis-aligned normals
};

/// A ModelSpec, its finalized Model and the box of each link (box.mass = 0 never happens).
struct RandomModel {
  ModelSpec spec;
  Model model;
  std::vector<Box> boxes;  ///< (n_link) the box each link's mass properties came from
};

inline LinkSpec random_link(Rng& rng, const std::string& name, int parent, JointType joint,
                            bool point_mass, Box& box) {
  LinkSpec l;
  l.name = name;
  l.parent = parent;
  l.joint = joint;
  l.t_o = uniform_vec(rng, -0.4, 0.4);  // non-zero joint offset "pos"
  const double r = uniform(rng, -M_PI, M_PI), p = uniform(rng, -1.4, 1.4), y = uniform(rng, -M_PI, M_PI);
  l.R_o = rpy_rotation(r, p, y);  // non-zero joint offset "rpy"
  // not unit length on purpose: Model::finalize normalizes hinge / prismatic axes. The two draws
  // are separate statements: as the operands of one `*` they are unsequenced, and gcc drew the
  // length first while clang drew the direction first, so every random model after this link
  // differed between the compilers (clang's seed 1 of pbd_contact_set_test's capsule-and-box case
  // put the capsule's far end 1.3 mm into the plane, inside the fixture's 2 mm kink clearance).
  // The length is drawn first, as gcc did, so gcc's cases stay what they were.
  const double axis_length = uniform(rng, 0.5, 2.0);
  l.axis = random_unit(rng) * axis_length;
  box = random_box(rng);
  if (point_mass) box.size.setZero();  // a box of zero size is a point mass at box.com
  l.mass = box.mass;
  l.com = box.com;
  l.inertia = box_inertia(box);
  return l;
}

inline void add_random_spheres(ModelSpec& spec, Rng& rng, int n) {
  for (int s = 0; s < n; ++s) {
    ContactSphere c;
    c.link = uniform_int(rng, int(spec.links.size()));
    c.centre = uniform_vec(rng, -0.3, 0.3);
    c.radius = (s % 2 == 0) ? 0.0 : uniform(rng, 0.01, 0.1);
    spec.spheres.push_back(c);
  }
}

inline void add_random_planes(ModelSpec& spec, Rng& rng, int n) {
  for (int p = 0; p < n; ++p) spec.planes.push_back({random_oblique_unit(rng), uniform(rng, -0.5, 0.5)});
}

/// Random valid model: link 0 with opt.root, then opt.children in a shuffled order, each with a
/// random earlier parent, random joint offsets, random axes and box (or point-mass) inertias.
inline RandomModel random_model(uint32_t seed, const RandomModelOptions& opt = {}) {
  Rng rng(seed);
  RandomModel out;
  std::vector<JointType> kinds = opt.children;
  for (int i = int(kinds.size()) - 1; i > 0; --i) std::swap(kinds[i], kinds[uniform_int(rng, i + 1)]);
  kinds.insert(kinds.begin(), opt.root);
  for (size_t i = 0; i < kinds.size(); ++i) {
    const int parent = i == 0 ? -1 : uniform_int(rng, int(i));
    Box b;
    std::string name = "l";  // (not "l" + to_string: GCC 12 -Wrestrict false positive)
    name += std::to_string(i);
    out.spec.links.push_back(random_link(rng, name, parent, kinds[i], opt.point_masses, b));
    out.boxes.push_back(b);
  }
  add_random_spheres(out.spec, rng, opt.n_spheres);
  add_random_planes(out.spec, rng, opt.n_planes);
  out.model = Model::finalize(out.spec);
  return out;
}

/// Random configuration: revolute DOFs in [-2.5, 2.5] rad except the middle Euler angles of
/// ball / floating joints, kept in [-1.2, 1.2] (|cos| >= 0.36, far from gimbal lock); prismatic
/// DOFs (and floating / planar translations) in [-0.5, 0.5] m.
inline VecX random_theta(const Model& m, Rng& rng) {
  VecX th(m.n_q);
  for (int k = 0; k < m.n_q; ++k) {
    bool gimbal = false;
    for (int g : m.gimbal_dof) gimbal = gimbal || g == k;
    th[k] = !m.dof_revolute[k] ? uniform(rng, -0.5, 0.5)
            : gimbal           ? uniform(rng, -1.2, 1.2)
                               : uniform(rng, -2.5, 2.5);
  }
  return th;
}

// ---------------------------------------------------------------------------------------
// Central differences and error measure
// ---------------------------------------------------------------------------------------

/// Central-difference Jacobian of f: R^n -> R^m (f returns a VecX): column k is
/// (f(x + h e_k) - f(x - h e_k)) / (2h).
template <class F>
MatX fd_jacobian(F&& f, const VecX& x, double h = kFdStep) {
  MatX J;
  for (int k = 0; k < x.size(); ++k) {
    VecX xp = x, xm = x;
    xp[k] += h;
    xm[k] -= h;
    const VecX d = (VecX(f(xp)) - VecX(f(xm))) / (2 * h);
    if (k == 0) J.resize(d.size(), x.size());
    J.col(k) = d;
  }
  return J;
}

/// Central-difference gradient of a scalar f: R^n -> R.
template <class F>
VecX fd_gradient(F&& f, const VecX& x, double h = kFdStep) {
  VecX g(x.size());
  for (int k = 0; k < x.size(); ++k) {
    VecX xp = x, xm = x;
    xp[k] += h;
    xm[k] -= h;
    g[k] = (double(f(xp)) - double(f(xm))) / (2 * h);
  }
  return g;
}

/// Error of `got` against the reference `ref`, relative to the largest entry of either:
/// max|got - ref| / max(max|ref|, max|got|). Entries that are zero in `ref` are checked too
/// (against the same scale), so a spurious non-zero shows up; a result off by any factor far
/// from 1 gives O(1). Sizes must agree (a mismatch returns +inf).
inline double rel_err(const MatX& got, const MatX& ref) {
  if (got.rows() != ref.rows() || got.cols() != ref.cols()) return INFINITY;
  const double scale = std::max(ref.cwiseAbs().maxCoeff(), got.cwiseAbs().maxCoeff());
  if (scale == 0) return 0;
  return (got - ref).cwiseAbs().maxCoeff() / scale;
}

/// Flatten a 3x3 matrix and a vector (a pose or pose derivative) into one 12-vector.
inline VecX flat(const Mat3& M, const Vec3& v) {
  VecX out(12);
  out << Eigen::Map<const VecX>(M.data(), 9), v;
  return out;
}

}  // namespace bigstep::test
