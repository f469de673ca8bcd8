// Counts heap allocations in a scope (Drake's LimitMalloc habit, docs/architecture.md §5): the test binary
// that includes this header (in exactly one translation unit) replaces glibc's malloc family with
// counting forwarders to __libc_malloc & co., so operator new, Eigen and std containers are all
// seen. Counting is process-wide while a MallocCounter is alive; use it on one thread.
#pragma once
#include <atomic>
#include <cstddef>

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void __libc_free(void*);
}

namespace bigstep::test {
inline std::atomic<bool> g_count_mallocs{false};
inline std::atomic<long> g_mallocs{0};

/// Allocations made while it lives: count().
class MallocCounter {
 public:
  MallocCounter() {
    g_mallocs = 0;
    g_count_mallocs = true;
  }
  ~MallocCounter() { g_count_mallocs = false; }
  long count() const { return g_mallocs.load(); }
};
}  // namespace bigstep::test

namespace bigstep::test::detail {
inline void note() {
  if (g_count_mallocs.load(std::memory_order_relaxed)) g_mallocs.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace bigstep::test::detail

extern "C" {
void* malloc(size_t n) {
  bigstep::test::detail::note();
  return __libc_malloc(n);
}
void* calloc(size_t a, size_t b) {
  bigstep::test::detail::note();
  return __libc_calloc(a, b);
}
void* realloc(void* p, size_t n) {
  bigstep::test::detail::note();
  return __libc_realloc(p, n);
}
void* memalign(size_t a, size_t n) {
  bigstep::test::detail::note();
  return __libc_memalign(a, n);
}
void* aligned_alloc(size_t a, size_t n) {
  bigstep::test::detail::note();
  return __libc_memalign(a, n);
}
int posix_memalign(void** p, size_t a, size_t n) {
  bigstep::test::detail::note();
  *p = __libc_memalign(a, n);
  return *p ? 0 : 12;  // ENOMEM
}
void free(void* p) { __libc_free(p); }
}
