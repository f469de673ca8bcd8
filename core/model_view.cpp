#include "core/model_view.h"

namespace bigstep {

namespace {

// One converter per table field (core/model_fields.h): element (i, c) of the field read from the
// Model. ModelArrays' constructor calls get.<name>(i, c) for every field, so a field added to the
// table without its converter here fails to compile.
struct FieldGet {
  const Model& m;
  // links
  int link_parent(int i, int) const { return m.link_parent[i]; }
  double link_Ro(int i, int c) const { return m.link_R_o[i](c / 3, c % 3); }
  double link_to(int i, int c) const { return m.link_t_o[i][c]; }
  double link_mass(int i, int) const { return m.link_mass[i]; }
  double link_com(int i, int c) const { return m.link_com[i][c]; }
  double link_S(int i, int c) const { return m.link_S[i](c / 3, c % 3); }
  int link_dof_adr(int i, int) const { return m.link_dof_adr[i]; }
  int link_dof_num(int i, int) const { return m.link_dof_num[i]; }
  // dofs
  int dof_link(int i, int) const { return m.dof_link[i]; }
  int dof_revolute(int i, int) const { return m.dof_revolute[i]; }
  double dof_axis(int i, int c) const { return m.dof_axis[i][c]; }
  uint8_t dof_anc(int i, int c) const { return m.dof_anc[size_t(i) * m.n_link + c]; }
  double dof_damping(int i, int) const { return m.dof_damping[i]; }
  double dof_armature(int i, int) const { return m.dof_armature[i]; }
  double dof_stiffness(int i, int) const { return m.dof_stiffness[i]; }
  double dof_springref(int i, int) const { return m.dof_springref[i]; }
  uint8_t dof_limited(int i, int) const { return m.dof_limited[i]; }
  double dof_range(int i, int c) const { return m.dof_range[2 * size_t(i) + c]; }
  double dof_limit_k(int i, int) const { return m.dof_limit_k[i]; }
  // point cores against planes
  int point_link(int i, int) const { return m.point_link[i]; }
  double point_pos(int i, int c) const { return m.point_pos[i][c]; }
  double point_radius(int i, int) const { return m.point_radius[i]; }
  double plane_normal(int i, int c) const { return m.plane_normal[i][c]; }
  double plane_offset(int i, int) const { return m.plane_offset[i]; }
  int point_pair_point(int i, int) const { return m.point_pair_point[i]; }
  int point_pair_plane(int i, int) const { return m.point_pair_plane[i]; }
  // body pairs
  uint8_t body_pair_type(int i, int c) const {
    const int q = m.body_pair_pair[i];
    return uint8_t(m.geom_type[c == 0 ? m.pair_geom_a[q] : m.pair_geom_b[q]]);
  }
  int body_pair_link(int i, int c) const { return m.body_pair_link[2 * size_t(i) + c]; }
  double body_pair_pos(int i, int c) const { return m.body_pair_pos[2 * size_t(i) + c / 3][c % 3]; }
  double body_pair_axis(int i, int c) const { return m.body_pair_axis[2 * size_t(i) + c / 3][c % 3]; }
  double body_pair_size(int i, int c) const { return m.body_pair_size[4 * size_t(i) + c]; }
  int body_pair_con_adr(int i, int) const { return m.body_pair_con_adr[i]; }
  int body_pair_geom(int i, int c) const {
    const int q = m.body_pair_pair[i];
    return c == 0 ? m.pair_geom_a[q] : m.pair_geom_b[q];
  }
  // geoms
  uint8_t geom_type(int i, int) const { return uint8_t(m.geom_type[i]); }
  int geom_link(int i, int) const { return m.geom_link[i]; }
  double geom_pos(int i, int c) const { return m.geom_pos[i][c]; }
  double geom_R(int i, int c) const { return m.geom_R[i](c / 3, c % 3); }
  double geom_size(int i, int c) const { return m.geom_size[i][c]; }
  uint32_t geom_contype(int i, int) const { return m.geom_contype[i]; }
  uint32_t geom_conaffinity(int i, int) const { return m.geom_conaffinity[i]; }
  // pairs
  int pair_geom_a(int i, int) const { return m.pair_geom_a[i]; }
  int pair_geom_b(int i, int) const { return m.pair_geom_b[i]; }
  // actuators
  uint8_t actuator_type(int i, int) const { return uint8_t(m.actuator_type[i]); }
  int actuator_dof(int i, int) const { return m.actuator_dof[i]; }
  double actuator_gear(int i, int) const { return m.actuator_gear[i]; }
  uint8_t actuator_ctrllimited(int i, int) const { return m.actuator_ctrllimited[i]; }
  double actuator_ctrlrange(int i, int c) const { return m.actuator_ctrlrange[2 * size_t(i) + c]; }
  double actuator_kp(int i, int) const { return m.actuator_kp[i]; }
  double actuator_kv(int i, int) const { return m.actuator_kv[i]; }
};

// v = rows x cols entries, v[i * cols + c] = get(i, c)
template <class T, class G>
void fill(std::vector<T>& v, int rows, int cols, G&& get) {
  v.resize(size_t(rows) * size_t(cols));
  for (int i = 0; i < rows; ++i)
    for (int c = 0; c < cols; ++c) v[size_t(i) * cols + c] = T(get(i, c));
}

}  // namespace

template <class S>
ModelArrays<S>::ModelArrays(const Model& m) {
  n_link = m.n_link;
  n_q = m.n_q;
  n_point = m.n_point;
  n_plane = m.n_plane;
  n_point_pair = m.n_point_pair;
  n_geom = m.n_geom;
  n_pair = m.n_pair;
  n_u = m.n_u;
  n_body_pair = m.n_body_pair;
  n_body_con = m.n_body_con;
  const FieldGet get{m};
#define BIGSTEP_FILL(kind, name, rows, cols) fill(name, rows, cols, [&](int i, int c) { return get.name(i, c); });
  BIGSTEP_MODEL_FIELDS(BIGSTEP_FILL)
#undef BIGSTEP_FILL
  for (int i = 0; i < 3; ++i) gravity[i] = S(m.gravity[i]);
  weight = S(m.weight());
}

template <class S>
ModelView<S> ModelArrays<S>::view() const {
  ModelView<S> v;
  static_cast<ModelSizes&>(v) = *this;
#define BIGSTEP_WIRE(kind, name, rows, cols) v.name = name.data();
  BIGSTEP_MODEL_FIELDS(BIGSTEP_WIRE)
#undef BIGSTEP_WIRE
  for (int i = 0; i < 3; ++i) v.gravity[i] = gravity[i];
  v.weight = weight;
  return v;
}

template struct ModelArrays<double>;
template struct ModelArrays<float>;

}  // namespace bigstep
