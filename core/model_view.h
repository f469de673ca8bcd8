// Flat, pointer-only view of a Model for kernels (host or device memory), and its host owner.
// Both are generated from the one field table core/model_fields.h (fields, shapes, kinds);
// arrays are row-major, 3-vectors packed x,y,z, 3x3 as 9 values.
#pragma once
#include <cstdint>
#include <vector>

#include "core/hd.h"
#include "core/model.h"
#include "core/model_fields.h"

namespace bigstep {

#define BIGSTEP_FIELD_T(kind) typename FieldKinds<S>::kind##_t

/// What a kernel reads: the sizes (ModelSizes), one const pointer per table field (shape
/// (rows x cols) as listed in core/model_fields.h), and the scalars below. Trivially copyable:
/// passed to CUDA kernels by value.
template <class S>
struct ModelView : ModelSizes {
#define BIGSTEP_VIEW_MEMBER(kind, name, rows, cols) const BIGSTEP_FIELD_T(kind)* name = nullptr;
  BIGSTEP_MODEL_FIELDS(BIGSTEP_VIEW_MEMBER)
#undef BIGSTEP_VIEW_MEMBER
  S gravity[3];
  S weight;                     // total weight W [N]

  BIGSTEP_HD bool moves(int k, int j) const { return dof_anc[k * n_link + j] != 0; }
  BIGSTEP_HD hd::V3<S> v3(const S* p, int i) const { return {p[3 * i], p[3 * i + 1], p[3 * i + 2]}; }
  BIGSTEP_HD hd::M3<S> m3(const S* p, int i) const {
    hd::M3<S> M;
    for (int c = 0; c < 9; ++c) M.a[c] = p[9 * i + c];
    return M;
  }
  /// f(name, pointer, rows, cols) for every table field, in table order (tests, exports).
  template <class F>
  void for_each_field(F&& f) const {
#define BIGSTEP_VISIT(kind, name, rows, cols) f(#name, name, rows, cols);
    BIGSTEP_MODEL_FIELDS(BIGSTEP_VISIT)
#undef BIGSTEP_VISIT
  }
};

// a pointer member outside the table would be missed by the upload and the export: the view is
// the sizes (padded to pointer alignment), one pointer per field, gravity[3] and weight (padded)
constexpr size_t pad_to_pointer(size_t n) { return (n + alignof(void*) - 1) / alignof(void*) * alignof(void*); }
template <class S>
constexpr size_t expected_view_size() {
  return pad_to_pointer(sizeof(ModelSizes)) + n_model_fields * sizeof(void*) + pad_to_pointer(4 * sizeof(S));
}
static_assert(sizeof(ModelView<double>) == expected_view_size<double>(),
              "ModelView: every array member comes from BIGSTEP_MODEL_FIELDS");
static_assert(sizeof(ModelView<float>) == expected_view_size<float>(),
              "ModelView: every array member comes from BIGSTEP_MODEL_FIELDS");

/// Host storage behind a ModelView (also the source of a device upload and the Python export):
/// one vector per table field, rows x cols entries, filled from the Model by one converter per
/// field (core/model_view.cpp).
template <class S>
struct ModelArrays : ModelSizes {
  explicit ModelArrays(const Model& m);
  ModelView<S> view() const;  ///< pointers into this object's host vectors

#define BIGSTEP_ARRAY_MEMBER(kind, name, rows, cols) std::vector<BIGSTEP_FIELD_T(kind)> name;
  BIGSTEP_MODEL_FIELDS(BIGSTEP_ARRAY_MEMBER)
#undef BIGSTEP_ARRAY_MEMBER
  S gravity[3];
  S weight;

  /// f(name, vector, rows, cols) for every table field, in table order.
  template <class F>
  void for_each_field(F&& f) const {
#define BIGSTEP_VISIT(kind, name, rows, cols) f(#name, name, rows, cols);
    BIGSTEP_MODEL_FIELDS(BIGSTEP_VISIT)
#undef BIGSTEP_VISIT
  }
};

#undef BIGSTEP_FIELD_T

/// A view whose arrays are copies made by pool.copy(const std::vector<T>&) -> T* (one call per
/// table field): the device upload with a device pool (cuda/device_buffers.cuh), any other
/// memory with another pool (the tests use a host pool). The pool owns and frees the copies.
template <class S, class Pool>
ModelView<S> copy_model(const ModelArrays<S>& a, Pool& pool) {
  ModelView<S> v = a.view();
#define BIGSTEP_COPY(kind, name, rows, cols) v.name = pool.copy(a.name);
  BIGSTEP_MODEL_FIELDS(BIGSTEP_COPY)
#undef BIGSTEP_COPY
  return v;
}

extern template struct ModelArrays<double>;
extern template struct ModelArrays<float>;

}  // namespace bigstep
