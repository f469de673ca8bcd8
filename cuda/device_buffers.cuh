// Device buffers owned by Thrust (issue 5: "Thrust for device buffers"): a pool of
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

/// The flat model a kernel reads: a's arrays copied into `pool`, the view pointing at them.
template <class S>
ModelView<S> upload_model(const ModelArrays<S>& a, DevicePool& pool) {
  ModelView<S> v = a.view();
  v.link_parent = pool.copy(a.link_parent);
  v.link_Ro = pool.copy(a.link_Ro);
  v.link_to = pool.copy(a.link_to);
  v.link_mass = pool.copy(a.link_mass);
  v.link_com = pool.copy(a.link_com);
  v.link_S = pool.copy(a.link_S);
  v.link_dof_adr = pool.copy(a.link_dof_adr);
  v.link_dof_num = pool.copy(a.link_dof_num);
  v.dof_link = pool.copy(a.dof_link);
  v.dof_revolute = pool.copy(a.dof_revolute);
  v.dof_axis = pool.copy(a.dof_axis);
  v.dof_anc = pool.copy(a.dof_anc);
  v.sphere_link = pool.copy(a.sphere_link);
  v.sphere_pos = pool.copy(a.sphere_pos);
  v.sphere_radius = pool.copy(a.sphere_radius);
  v.plane_normal = pool.copy(a.plane_normal);
  v.plane_offset = pool.copy(a.plane_offset);
  return v;
}

}  // namespace bigstep
