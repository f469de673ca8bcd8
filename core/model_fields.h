// One field table for the Model's flat arrays (MuJoCo's mjxmacro.h habit; docs/architecture.md §4).
// Every array a kernel reads is listed here ONCE as X(kind, name, rows, cols); everything else is
// generated from this list:
//   - the ModelView<S> pointers and ModelArrays<S> host vectors (core/model_view.h),
//   - the fill of ModelArrays from a Model, one converter per field (core/model_view.cpp: a field
//     without its converter does not compile),
//   - the view's pointer wiring and copy_model(), which the device upload runs with a device pool
//     (cuda/device_buffers.cuh: allocate + copy every field, freed together),
//   - the Python export bigstep.model_arrays() (python/bindings.cpp): a dict of numpy arrays
//     named by the table, each of shape (rows, cols).
// kind: int (int32), real (S: double on the CPU reference path, float or double on the device),
// u8 (uint8_t), u32 (uint32_t). rows: a size of ModelSizes below. cols: a constant or a size.
// Element (i, c) of a field is name[i * cols + c]: row-major, 3-vectors x,y,z, 3x3 matrices row
// by row. Meaning and units of each field: core/model.h (the same names there).
#pragma once
#include <cstdint>

// clang-format off
#define BIGSTEP_MODEL_FIELDS(X)                                                                    \
  /* links: the joint that attaches link i to its parent */                                       \
  X(int,  link_parent,      n_link,   1)       /* parent link, -1 = world */                       \
  X(real, link_Ro,          n_link,   9)       /* joint frame orientation in the parent frame */   \
  X(real, link_to,          n_link,   3)       /* joint frame origin in the parent frame */        \
  X(real, link_mass,        n_link,   1)       /* [kg] */                                          \
  X(real, link_com,         n_link,   3)       /* centre of mass, link frame */                    \
  X(real, link_S,           n_link,   9)       /* second moment int rho x x^T dx (docs/methods/pbfd.md §2.4) */ \
  X(int,  link_dof_adr,     n_link,   1)       /* first DOF of the link's joint */                 \
  X(int,  link_dof_num,     n_link,   1)       /* DOFs of the link's joint */                      \
  /* dofs */                                                                                       \
  X(int,  dof_link,         n_q,      1)       /* link whose joint owns DOF k */                   \
  X(int,  dof_revolute,     n_q,      1)       /* 1 revolute, 0 prismatic */                       \
  X(real, dof_axis,         n_q,      3)       /* unit axis in the frame preceding the DOF */      \
  X(u8,   dof_anc,          n_q,      n_link)  /* 1 when DOF k moves link j */                     \
  X(real, dof_damping,      n_q,      1)       /* viscous coefficient b_k */                       \
  X(real, dof_armature,     n_q,      1)       /* armature a_k added to H_kk */                    \
  X(real, dof_stiffness,    n_q,      1)       /* spring k_k: force -k_k (theta_k - ref_k) */      \
  X(real, dof_springref,    n_q,      1)       /* spring rest coordinate ref_k */                  \
  X(u8,   dof_limited,      n_q,      1)       /* 1 when the DOF's range is enforced */            \
  X(real, dof_range,        n_q,      2)       /* [lo, hi] */                                      \
  X(real, dof_limit_k,      n_q,      1)       /* limit penalty C, 0 = contact c_perp */           \
  /* plane pairs as point cores against planes (Model "point cores"; the team residual) */         \
  X(int,  point_link,       n_point,  1)       /* link of the core point */                        \
  X(real, point_pos,        n_point,  3)       /* core point, link frame */                        \
  X(real, point_radius,     n_point,  1)       /* radius swept around it */                        \
  X(real, plane_normal,     n_plane,  3)       /* unit normal n of n^T y - offset >= 0 */          \
  X(real, plane_offset,     n_plane,  1)                                                           \
  X(int,  point_pair_point, n_point_pair, 1)   /* (point, plane) rows in pair order */            \
  X(int,  point_pair_plane, n_point_pair, 1)                                                       \
  /* body pairs as core segments (Model "body pairs"; the team residual) */                        \
  X(u8,   body_pair_type,   n_body_pair, 2)    /* GeomType of a, b */                              \
  X(int,  body_pair_link,   n_body_pair, 2)    /* links of a, b, -1 = world */                     \
  X(real, body_pair_pos,    n_body_pair, 6)    /* segment centres of a, b, link frames */          \
  X(real, body_pair_axis,   n_body_pair, 6)    /* unit segment axes of a, b, link frames */        \
  X(real, body_pair_size,   n_body_pair, 4)    /* r_a, h_a, r_b, h_b */                            \
  X(int,  body_pair_con_adr, n_body_pair, 1)   /* first contact slot (n_body_con in all) */        \
  X(int,  body_pair_geom,   n_body_pair, 2)    /* geoms of a, b (a box's frame: geom_R, geom_size) */ \
  /* geoms (core/geom.h) */                                                                        \
  X(u8,   geom_type,        n_geom,   1)       /* GeomType */                                      \
  X(int,  geom_link,        n_geom,   1)       /* -1 = world */                                    \
  X(real, geom_pos,         n_geom,   3)       /* geom origin, link frame */                       \
  X(real, geom_R,           n_geom,   9)       /* geom orientation, link frame */                  \
  X(real, geom_size,        n_geom,   3)       /* per type, see GeomSpec */                        \
  X(u32,  geom_contype,     n_geom,   1)                                                           \
  X(u32,  geom_conaffinity, n_geom,   1)                                                           \
  /* candidate pairs (Model::finalize); a world geom is b */                                       \
  X(int,  pair_geom_a,      n_pair,   1)                                                           \
  X(int,  pair_geom_b,      n_pair,   1)                                                           \
  /* actuators (solvers/terms/actuation.h) */                                                            \
  X(u8,   actuator_type,    n_u,      1)       /* ActuatorType: 0 motor, 1 position */             \
  X(int,  actuator_dof,     n_u,      1)       /* driven DOF */                                    \
  X(real, actuator_gear,    n_u,      1)       /* length = gear * theta */                         \
  X(u8,   actuator_ctrllimited, n_u,  1)       /* 1 when ctrl is clamped to ctrlrange */           \
  X(real, actuator_ctrlrange, n_u,    2)       /* [lo, hi] */                                      \
  X(real, actuator_kp,      n_u,      1)       /* position gain (0 for motors) */                  \
  X(real, actuator_kv,      n_u,      1)       /* velocity gain (0 for motors) */
// clang-format on

/// The row counts the table's fields use (the "rows" column).
#define BIGSTEP_MODEL_SIZES(X) X(n_link) X(n_q) X(n_point) X(n_plane) X(n_point_pair) X(n_geom) X(n_pair) X(n_u) X(n_body_pair) X(n_body_con)

namespace bigstep {

/// Row counts of the table's fields. ModelView and ModelArrays derive from it, so the table's
/// rows / cols expressions (n_link, n_q, ...) name their members.
struct ModelSizes {
#define BIGSTEP_SIZE_MEMBER(n) int n = 0;
  BIGSTEP_MODEL_SIZES(BIGSTEP_SIZE_MEMBER)
#undef BIGSTEP_SIZE_MEMBER
};

/// Element type of each kind for scalar S: typename FieldKinds<S>::real_t etc.
template <class S>
struct FieldKinds {
  using int_t = int32_t;
  using real_t = S;
  using u8_t = uint8_t;
  using u32_t = uint32_t;
};

#define BIGSTEP_FIELD_COUNT(kind, name, rows, cols) +1
/// Number of fields in the table.
inline constexpr int n_model_fields = 0 BIGSTEP_MODEL_FIELDS(BIGSTEP_FIELD_COUNT);
#undef BIGSTEP_FIELD_COUNT

}  // namespace bigstep
