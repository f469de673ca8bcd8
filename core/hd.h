// BIGSTEP_HD marks functions compiled for host and device; tiny fixed-size vector / matrix types
// usable inside CUDA kernels (Eigen stays on the host side).
#pragma once
#include <cmath>

#if defined(__CUDACC__)
#define BIGSTEP_HD __host__ __device__ inline
#else
#define BIGSTEP_HD inline
#endif

namespace bigstep::hd {

template <class S>
struct V3 {
  S x, y, z;
  BIGSTEP_HD S& operator[](int i) { return i == 0 ? x : (i == 1 ? y : z); }
  BIGSTEP_HD S operator[](int i) const { return i == 0 ? x : (i == 1 ? y : z); }
};
template <class S> BIGSTEP_HD V3<S> operator+(V3<S> a, V3<S> b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
template <class S> BIGSTEP_HD V3<S> operator-(V3<S> a, V3<S> b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
template <class S> BIGSTEP_HD V3<S> operator*(S s, V3<S> a) { return {s * a.x, s * a.y, s * a.z}; }
template <class S> BIGSTEP_HD S dot(V3<S> a, V3<S> b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
template <class S> BIGSTEP_HD V3<S> cross(V3<S> a, V3<S> b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
template <class S> BIGSTEP_HD S norm(V3<S> a) { using std::sqrt; return sqrt(dot(a, a)); }

/// Row-major 3x3.
template <class S>
struct M3 {
  S a[9];
  BIGSTEP_HD S& operator()(int i, int j) { return a[3 * i + j]; }
  BIGSTEP_HD S operator()(int i, int j) const { return a[3 * i + j]; }
  BIGSTEP_HD static M3 identity() { return {{1, 0, 0, 0, 1, 0, 0, 0, 1}}; }
  BIGSTEP_HD static M3 zero() { return {{0, 0, 0, 0, 0, 0, 0, 0, 0}}; }
};
template <class S> BIGSTEP_HD M3<S> operator*(const M3<S>& A, const M3<S>& B) {
  M3<S> C;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) C(i, j) = A(i, 0) * B(0, j) + A(i, 1) * B(1, j) + A(i, 2) * B(2, j);
  return C;
}
template <class S> BIGSTEP_HD V3<S> operator*(const M3<S>& A, V3<S> v) {
  return {A(0, 0) * v.x + A(0, 1) * v.y + A(0, 2) * v.z, A(1, 0) * v.x + A(1, 1) * v.y + A(1, 2) * v.z,
          A(2, 0) * v.x + A(2, 1) * v.y + A(2, 2) * v.z};
}
template <class S> BIGSTEP_HD M3<S> operator+(const M3<S>& A, const M3<S>& B) {
  M3<S> C;
  for (int i = 0; i < 9; ++i) C.a[i] = A.a[i] + B.a[i];
  return C;
}
template <class S> BIGSTEP_HD M3<S> operator-(const M3<S>& A, const M3<S>& B) {
  M3<S> C;
  for (int i = 0; i < 9; ++i) C.a[i] = A.a[i] - B.a[i];
  return C;
}
template <class S> BIGSTEP_HD M3<S> operator*(S s, const M3<S>& A) {
  M3<S> C;
  for (int i = 0; i < 9; ++i) C.a[i] = s * A.a[i];
  return C;
}
/// [w]x M: rows of M rotated by the angular velocity w (columns crossed with w).
template <class S> BIGSTEP_HD M3<S> skew_mul(V3<S> w, const M3<S>& M) {
  M3<S> C;
  for (int j = 0; j < 3; ++j) {
    const V3<S> c = cross(w, V3<S>{M(0, j), M(1, j), M(2, j)});
    C(0, j) = c.x;
    C(1, j) = c.y;
    C(2, j) = c.z;
  }
  return C;
}
/// Rodrigues rotation about unit axis a by angle q.
template <class S> BIGSTEP_HD M3<S> axis_rotation(V3<S> a, S q) {
  using std::cos;
  using std::sin;
  const S c = cos(q), s = sin(q), t = S(1) - c;
  return {{t * a.x * a.x + c, t * a.x * a.y - s * a.z, t * a.x * a.z + s * a.y,
           t * a.x * a.y + s * a.z, t * a.y * a.y + c, t * a.y * a.z - s * a.x,
           t * a.x * a.z - s * a.y, t * a.y * a.z + s * a.x, t * a.z * a.z + c}};
}

}  // namespace bigstep::hd
