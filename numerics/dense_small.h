// Small dense factorizations on caller-provided blocks (no allocation), written so the same code
// can later run per rollout in a CUDA kernel (docs/architecture.md §8).
#pragma once
#include <cmath>

#include "core/types.h"

namespace bigstep {

/// In-place Cholesky A = L L^T of the leading n x n block (lower triangle used and overwritten;
/// the strict upper triangle is zeroed). Returns false when a pivot is <= 0 or not finite.
template <class Mat>
bool cholesky_inplace(Mat&& A, int n) {
  for (int j = 0; j < n; ++j) {
    double d = A(j, j);
    for (int k = 0; k < j; ++k) d -= A(j, k) * A(j, k);
    if (!(d > 0) || !std::isfinite(d)) return false;
    d = std::sqrt(d);
    A(j, j) = d;
    for (int i = j + 1; i < n; ++i) {
      double s = A(i, j);
      for (int k = 0; k < j; ++k) s -= A(i, k) * A(j, k);
      A(i, j) = s / d;
    }
    for (int i = 0; i < j; ++i) A(i, j) = 0;
  }
  return true;
}

/// Solves L y = b in place (b := y) with L the lower n x n block.
template <class Mat, class Vec>
void forward_subst(const Mat& L, Vec&& b, int n) {
  for (int i = 0; i < n; ++i) {
    double s = b[i];
    for (int k = 0; k < i; ++k) s -= L(i, k) * b[k];
    b[i] = s / L(i, i);
  }
}

/// Solves L^T x = b in place with L the lower n x n block.
template <class Mat, class Vec>
void backward_subst_transposed(const Mat& L, Vec&& b, int n) {
  for (int i = n - 1; i >= 0; --i) {
    double s = b[i];
    for (int k = i + 1; k < n; ++k) s -= L(k, i) * b[k];
    b[i] = s / L(i, i);
  }
}

/// Solves R x = b in place with R the upper n x n block.
template <class Mat, class Vec>
void backward_subst_upper(const Mat& R, Vec&& b, int n) {
  for (int i = n - 1; i >= 0; --i) {
    double s = b[i];
    for (int k = i + 1; k < n; ++k) s -= R(i, k) * b[k];
    b[i] = s / R(i, i);
  }
}

/// Solves R^T x = b in place with R the upper n x n block.
template <class Mat, class Vec>
void forward_subst_upper_transposed(const Mat& R, Vec&& b, int n) {
  for (int i = 0; i < n; ++i) {
    double s = b[i];
    for (int k = 0; k < i; ++k) s -= R(k, i) * b[k];
    b[i] = s / R(i, i);
  }
}

}  // namespace bigstep
