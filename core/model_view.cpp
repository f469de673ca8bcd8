#include "core/model_view.h"

namespace bigstep {

template <class S>
ModelArrays<S>::ModelArrays(const Model& m)
    : n_link(m.n_link), n_q(m.n_q), n_sphere(int(m.spheres.size())), n_plane(int(m.planes.size())),
      dof_anc(m.dof_anc) {
  auto put3 = [](std::vector<S>& a, const Vec3& v) {
    for (int i = 0; i < 3; ++i) a.push_back(S(v[i]));
  };
  auto put9 = [](std::vector<S>& a, const Mat3& M) {
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) a.push_back(S(M(i, j)));
  };
  for (int j = 0; j < m.n_link; ++j) {
    const LinkSpec& l = m.links[j];
    link_parent.push_back(l.parent);
    put9(link_Ro, l.R_o);
    put3(link_to, l.t_o);
    link_mass.push_back(S(l.mass));
    put3(link_com, l.com);
    put9(link_S, m.link_S[j]);
    link_dof_adr.push_back(m.link_dof_adr[j]);
    link_dof_num.push_back(m.link_dof_num[j]);
  }
  for (int k = 0; k < m.n_q; ++k) {
    dof_link.push_back(m.dof_link[k]);
    dof_revolute.push_back(m.dof_revolute[k]);
    put3(dof_axis, m.dof_axis[k]);
  }
  for (const auto& s : m.spheres) {
    sphere_link.push_back(s.link);
    put3(sphere_pos, s.centre);
    sphere_radius.push_back(S(s.radius));
  }
  for (const auto& p : m.planes) {
    put3(plane_normal, p.normal);
    plane_offset.push_back(S(p.offset));
  }
  for (int i = 0; i < 3; ++i) gravity[i] = S(m.gravity[i]);
  weight = S(m.weight());
}

template <class S>
ModelView<S> ModelArrays<S>::view() const {
  ModelView<S> v;
  v.n_link = n_link;
  v.n_q = n_q;
  v.n_sphere = n_sphere;
  v.n_plane = n_plane;
  v.link_parent = link_parent.data();
  v.link_Ro = link_Ro.data();
  v.link_to = link_to.data();
  v.link_mass = link_mass.data();
  v.link_com = link_com.data();
  v.link_S = link_S.data();
  v.link_dof_adr = link_dof_adr.data();
  v.link_dof_num = link_dof_num.data();
  v.dof_link = dof_link.data();
  v.dof_revolute = dof_revolute.data();
  v.dof_axis = dof_axis.data();
  v.dof_anc = dof_anc.data();
  v.sphere_link = sphere_link.data();
  v.sphere_pos = sphere_pos.data();
  v.sphere_radius = sphere_radius.data();
  v.plane_normal = plane_normal.data();
  v.plane_offset = plane_offset.data();
  for (int i = 0; i < 3; ++i) v.gravity[i] = gravity[i];
  v.weight = weight;
  return v;
}

template struct ModelArrays<double>;
template struct ModelArrays<float>;

}  // namespace bigstep
