// Device buffers owned by Thrust (Thrust for device buffers): a pool of
// thrust::device_vector of any element type, freed together when the pool goes (exception-safe:
// a constructor that throws half-way leaks nothing). Kernels get raw pointers.
#pragma once
#include <thrust/copy.h>
#include <thrust/device_vector.h>

#include <memory>
#include <vector>

#include "core/model_view.h"

namespace bigstep {

class DevicePool {
 public:
  /// n elements (at least 1, so the pointer is never null), zero-filled.
  template <class T>
  T* alloc(size_t n) {
    auto h = std::make_unique<Holder<T>>(n > 0 ? n : 1);
    T* p = thrust::raw_pointer_cast(h->v.data());
    held_.push_back(std::move(h));
    return p;
  }
  /// A device copy of host vector v.
  template <class T>
  T* copy(const std::vector<T>& v) {
    auto h = std::make_unique<Holder<T>>(v.size() > 0 ? v.size() : 1);
    if (!v.empty()) thrust::copy(v.begin(), v.end(), h->v.begin());
    T* p = thrust::raw_pointer_cast(h->v.data());
    held_.push_back(std::move(h));
    return p;
  }

 private:
  struct Base {
    virtual ~Base() = default;
  };
  template <class T>
  struct Holder : Base {
    explicit Holder(size_t n) : v(n) {}
    thrust::device_vector<T> v;
  };
  std::vector<std::unique_ptr<Base>> held_;
};

/// The flat model a kernel reads: every field of the table (core/model_fields.h) copied into
/// `pool` (allocate + copy per field, all freed with the pool), the view pointing at the copies.
template <class S>
ModelView<S> upload_model(const ModelArrays<S>& a, DevicePool& pool) {
  return copy_model(a, pool);
}

}  // namespace bigstep
