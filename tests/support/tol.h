// Test tolerances (docs/architecture.md §9 rule 6): tol(value) scaled by BIGSTEP_TOL_SCALE (default 1).
#pragma once
#include <cstdlib>

namespace bigstep::test {

inline double tol_scale() {
  const char* s = std::getenv("BIGSTEP_TOL_SCALE");
  return s ? std::atof(s) : 1.0;
}
/// A tolerance with its reason written next to the call site.
inline double tol(double t) { return t * tol_scale(); }

}  // namespace bigstep::test
