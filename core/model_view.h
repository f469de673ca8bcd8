// Flat, pointer-only view of a Model for kernels (host or device memory), and its host owner.
// Same fields as core/model.h; arrays are row-major, 3-vectors packed x,y,z, 3x3 as 9 values.
#pragma once
#include <cstdint>
#include <vector>

#include "core/hd.h"
#include "core/model.h"

namespace bigstep {

template <class S>
struct ModelView {
  int n_link = 0, n_q = 0, n_sphere = 0, n_plane = 0;
  // model: links
  const int* link_parent;       // (n_link)
  const S* link_Ro;             // (n_link x 9)
  const S* link_to;             // (n_link x 3)
  const S* link_mass;           // (n_link)
  const S* link_com;            // (n_link x 3)
  const S* link_S;              // (n_link x 9) second moment
  const int* link_dof_adr;      // (n_link)
  const int* link_dof_num;      // (n_link)
  // model: dofs
  const int* dof_link;          // (n_q)
  const int* dof_revolute;      // (n_q)
  const S* dof_axis;            // (n_q x 3)
  const uint8_t* dof_anc;       // (n_q x n_link) 1 when dof k moves link j
  // model: contact
  const int* sphere_link;       // (n_sphere)
  const S* sphere_pos;          // (n_sphere x 3)
  const S* sphere_radius;       // (n_sphere)
  const S* plane_normal;        // (n_plane x 3)
  const S* plane_offset;        // (n_plane)
  S gravity[3];
  S weight;                     // total weight W [N]

  BIGSTEP_HD bool moves(int k, int j) const { return dof_anc[k * n_link + j] != 0; }
  BIGSTEP_HD hd::V3<S> v3(const S* p, int i) const { return {p[3 * i], p[3 * i + 1], p[3 * i + 2]}; }
  BIGSTEP_HD hd::M3<S> m3(const S* p, int i) const {
    hd::M3<S> M;
    for (int c = 0; c < 9; ++c) M.a[c] = p[9 * i + c];
    return M;
  }
};

/// Host storage behind a ModelView (also the source of a device upload).
template <class S>
struct ModelArrays {
  explicit ModelArrays(const Model& m);
  ModelView<S> view() const;  ///< pointers into this object's host vectors

  int n_link, n_q, n_sphere, n_plane;
  std::vector<int> link_parent, link_dof_adr, link_dof_num, dof_link, dof_revolute, sphere_link;
  std::vector<S> link_Ro, link_to, link_mass, link_com, link_S, dof_axis, sphere_pos, sphere_radius,
      plane_normal, plane_offset;
  std::vector<uint8_t> dof_anc;
  S gravity[3];
  S weight;
};

extern template struct ModelArrays<double>;
extern template struct ModelArrays<float>;

}  // namespace bigstep
