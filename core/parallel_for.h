// for_each_index(n, threads, f): f(k) for k in [0, n) over `threads` OpenMP threads, static
// blocks (thread t of T runs k in [t n / T, (t + 1) n / T): the split depends on n and T only, so
// results do not depend on timing). One thread runs the plain loop outside any parallel region.
// Why not `parallel for schedule(static)`: LLVM's libomp allocates on the heap in every worksharing
// loop's init (__kmpc_for_static_init), and libgomp allocates a team for every parallel region
// entered without a thread pool (num_threads(1), or an if(false) clause); either would break "no
// heap allocation inside a step" (tests/envs/vec_env_alloc_test.cpp). omp_get_thread_num() is 0
// on the serial path, as in a one-thread region.
#pragma once

#include <atomic>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace bigstep {

template <class F>
inline void for_each_index(int n, int threads, F&& f) {
  if (threads > 1) {
#pragma omp parallel num_threads(threads)
    {
#ifdef _OPENMP
      const long t = omp_get_thread_num(), T = omp_get_num_threads();
#else
      const long t = 0, T = 1;
#endif
      const int lo = int(t * n / T), hi = int((t + 1) * n / T);
      for (int k = lo; k < hi; ++k) f(k);
    }
  } else {
    for (int k = 0; k < n; ++k) f(k);
  }
}

// for_each_index_dynamic(n, threads, chunk, f): the same with chunks of `chunk` indices handed to
// whichever thread is free (a shared counter; for uneven work per index). Which thread runs an
// index depends on timing, so f(k) must not depend on the thread (its scratch may).
template <class F>
inline void for_each_index_dynamic(int n, int threads, int chunk, F&& f) {
  if (threads > 1) {
    std::atomic<int> next{0};
#pragma omp parallel num_threads(threads)
    for (int lo = next.fetch_add(chunk); lo < n; lo = next.fetch_add(chunk))
      for (int k = lo, hi = lo + chunk < n ? lo + chunk : n; k < hi; ++k) f(k);
  } else {
    for (int k = 0; k < n; ++k) f(k);
  }
}

}  // namespace bigstep
