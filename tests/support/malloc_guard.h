// Counts heap allocations in a scope (Drake's LimitMalloc habit, docs/architecture.md §5): the test binary
// that includes this header (in exactly one translation unit) replaces glibc's malloc family with
// counting forwarders to __libc_malloc & co., so operator new, Eigen and std containers are all
// seen. Counting is process-wide while a MallocCounter is alive; use it on one thread.
// Under AddressSanitizer (BIGSTEP_SANITIZE, scripts/sanitize.sh) malloc belongs to ASan's allocator
// and may not be replaced: the same count comes from the allocator's own malloc hook instead
// (__sanitizer_install_malloc_and_free_hooks, which sees malloc, calloc, realloc, the aligned forms
// and every operator new), so the no-allocation assertions keep asserting in that build too.
#pragma once
#include <atomic>
#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#define BIGSTEP_MALLOC_GUARD_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BIGSTEP_MALLOC_GUARD_ASAN 1
#endif
#endif

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

#ifdef BIGSTEP_MALLOC_GUARD_ASAN
// (gcc ships no <sanitizer/allocator_interface.h>; the runtime exports the hook in both compilers)
extern "C" int __sanitizer_install_malloc_and_free_hooks(void (*)(const volatile void*, size_t),
                                                         void (*)(const volatile void*));
namespace bigstep::test::detail {
inline void asan_malloc_hook(const volatile void*, size_t) { note(); }
inline void asan_free_hook(const volatile void*) {}
// installed before main (static: an unused inline variable need not be initialized at all); a
// runtime without room for the hook would leave every count at 0, so it stops the binary instead
// of letting the assertions pass unseen
[[maybe_unused]] static const bool g_asan_hook = [] {
  if (__sanitizer_install_malloc_and_free_hooks(asan_malloc_hook, asan_free_hook)) return true;
  __builtin_trap();
}();
}  // namespace bigstep::test::detail
#else
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
#endif
