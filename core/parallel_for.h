// for_each_index(n, threads, f): f(k) for k in [0, n) over `threads` OpenMP threads, static
// schedule (thread t runs a fixed block, so results do not depend on timing). One thread runs the
// plain loop outside any parallel region. Why: libgomp allocates a team on the heap for every
// parallel region entered without a thread pool (num_threads(1), or an if(false) clause), which
// would break "no heap allocation inside a step" (tests/envs/vec_env_alloc_test.cpp).
// omp_get_thread_num() is 0 on the serial path, as in a one-thread region.
#pragma once

namespace bigstep {

template <class F>
inline void for_each_index(int n, int threads, F&& f) {
  if (threads > 1) {
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int k = 0; k < n; ++k) f(k);
  } else {
    for (int k = 0; k < n; ++k) f(k);
  }
}

}  // namespace bigstep
