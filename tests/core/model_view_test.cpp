// The one field table (core/model_fields.h) reaches every consumer: ModelArrays holds each field
// with rows x cols entries and the Model's values (checked against an oracle written here from
// the Model's own members, not the converters), the view points at them, and copy_model (the
// device upload's loop, run here with a host pool) copies every field once. A model with every
// kind of entity: links of all joint kinds, DOFs with range / damping / armature / spring / limit
// stiffness, contact spheres, planes, box / capsule / sphere geoms and their pairs.
#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <set>
#include <string>

#include "core/model_view.h"
#include "tests/support/random_models.h"

using namespace bigstep;
using namespace bigstep::test;

namespace {

Model full_model() {
  RandomModelOptions opt;
  opt.n_spheres = 3;
  opt.n_planes = 2;
  RandomModel rm = random_model(7, opt);
  ModelSpec& s = rm.spec;
  int limited = 0;
  for (size_t j = 0; j < s.links.size(); ++j) {
    LinkSpec& l = s.links[j];
    l.damping = 0.1 * double(j + 1);
    l.armature = 0.01 * double(j + 2);
    if (l.joint == JointType::Hinge || l.joint == JointType::Prismatic) {
      l.limited = true;
      l.range[0] = -0.3 - 0.1 * double(j);
      l.range[1] = 0.4 + 0.1 * double(j);
      l.limit_stiffness = limited++ == 0 ? 2500.0 : 0.0;
      l.stiffness = 1.5 * double(j + 1);
      l.springref = 0.05 * double(j) - 0.1;
    }
  }
  REQUIRE(limited >= 2);
  // box, capsule, sphere on links; contype 0: they touch the planes only (no box-capsule pair)
  const GeomType types[] = {GeomType::Box, GeomType::Capsule, GeomType::Sphere};
  for (int g = 0; g < 3; ++g) {
    GeomSpec gs;
    gs.link = 1 + g;
    gs.type = types[g];
    gs.pos = Vec3(0.1 * g, -0.05, 0.02);
    gs.R = rpy_rotation(0.1, 0.2 * g, -0.3);
    gs.size = Vec3(0.1 + 0.01 * g, 0.2, 0.05);
    gs.contype = 0;
    gs.conaffinity = 1u | (2u << g);
    s.geoms.push_back(gs);
  }
  // a capsule touching the sphere on link 3 and the capsule on link 2 only (contype 8, 4 in their
  // conaffinity): two body pairs
  auto adjacent = [&](int i, int j) { return i == j || s.links[size_t(i)].parent == j || s.links[size_t(j)].parent == i; };
  for (int j = 0; j < int(s.links.size()); ++j) {
    if (adjacent(j, 2) || adjacent(j, 3)) continue;
    GeomSpec gs;
    gs.link = j;
    gs.type = GeomType::Capsule;
    gs.pos = Vec3(0.02, 0.03, -0.04);
    gs.R = rpy_rotation(0.3, -0.2, 0.1);
    gs.size = Vec3(0.04, 0.12, 0);
    gs.contype = 8 | 4;
    gs.conaffinity = 0;
    s.geoms.push_back(gs);
    break;
  }
  // a motor (limited ctrl) and a position actuator, on different DOFs
  ActuatorSpec motor;
  motor.dof = 1;
  motor.gear = 2.5;
  motor.ctrllimited = true;
  motor.ctrlrange[0] = -1;
  motor.ctrlrange[1] = 3;
  ActuatorSpec servo;
  servo.dof = 2;
  servo.type = ActuatorType::Position;
  servo.gear = -0.5;
  servo.kp = 30;
  servo.kv = 2;
  s.actuators = {motor, servo};
  return Model::finalize(s);
}

// The oracle: field name -> its row-major values, read from the Model's members.
std::map<std::string, std::vector<double>> expected_fields(const Model& m) {
  std::map<std::string, std::vector<double>> e;
  auto v3 = [](std::vector<double>& o, const Vec3& v) { o.insert(o.end(), v.data(), v.data() + 3); };
  auto m9 = [](std::vector<double>& o, const Mat3& M) {
    const Eigen::Matrix<double, 3, 3, Eigen::RowMajor> R = M;
    o.insert(o.end(), R.data(), R.data() + 9);
  };
  for (int j = 0; j < m.n_link; ++j) {
    const LinkSpec l = m.link_spec(j);
    e["link_parent"].push_back(l.parent);
    m9(e["link_Ro"], l.R_o);
    v3(e["link_to"], l.t_o);
    e["link_mass"].push_back(l.mass);
    v3(e["link_com"], l.com);
    m9(e["link_S"], m.link_S[j]);
    e["link_dof_adr"].push_back(m.link_dof_adr[j]);
    e["link_dof_num"].push_back(m.link_dof_num[j]);
  }
  for (int k = 0; k < m.n_q; ++k) {
    e["dof_link"].push_back(m.dof_link[k]);
    e["dof_revolute"].push_back(m.dof_revolute[k]);
    v3(e["dof_axis"], m.dof_axis[k]);
    for (int j = 0; j < m.n_link; ++j) e["dof_anc"].push_back(m.moves(k, j));
    e["dof_damping"].push_back(m.dof_damping[k]);
    e["dof_armature"].push_back(m.dof_armature[k]);
    e["dof_stiffness"].push_back(m.dof_stiffness[k]);
    e["dof_springref"].push_back(m.dof_springref[k]);
    e["dof_limited"].push_back(m.dof_limited[k]);
    e["dof_range"].push_back(m.dof_range[2 * k]);
    e["dof_range"].push_back(m.dof_range[2 * k + 1]);
    e["dof_limit_k"].push_back(m.dof_limit_k[k]);
  }
  // the point cores (their geometry against collide(): tests/core/collision_test.cpp)
  for (int i = 0; i < m.n_point; ++i) {
    e["point_link"].push_back(m.point_link[i]);
    v3(e["point_pos"], m.point_pos[i]);
    e["point_radius"].push_back(m.point_radius[i]);
  }
  for (int p = 0; p < m.n_plane; ++p) {
    v3(e["plane_normal"], m.plane_normal[p]);
    e["plane_offset"].push_back(m.plane_offset[p]);
  }
  for (int q = 0; q < m.n_point_pair; ++q) {
    e["point_pair_point"].push_back(m.point_pair_point[q]);
    e["point_pair_plane"].push_back(m.point_pair_plane[q]);
  }
  // body pairs from the pair list and the geoms (a sphere a segment of half-length 0)
  int slot = 0;
  for (int q = 0; q < m.n_pair; ++q) {
    const int ga = m.pair_geom_a[q], gb = m.pair_geom_b[q];
    if (m.geom_type[gb] == GeomType::Plane) continue;
    e["body_pair_con_adr"].push_back(slot);
    slot += pair_max_contacts(m.geom_type[ga], m.geom_type[gb]);
    for (const int g : {ga, gb}) {
      e["body_pair_type"].push_back(double(m.geom_type[g]));
      e["body_pair_link"].push_back(m.geom_link[g]);
      e["body_pair_geom"].push_back(g);
    }
    for (const int g : {ga, gb}) v3(e["body_pair_pos"], m.geom_pos[g]);
    for (const int g : {ga, gb}) v3(e["body_pair_axis"], m.geom_R[g].col(2));
    for (const int g : {ga, gb}) {
      e["body_pair_size"].push_back(m.geom_type[g] == GeomType::Box ? 0.0 : m.geom_size[g][0]);
      e["body_pair_size"].push_back(m.geom_type[g] == GeomType::Capsule ? m.geom_size[g][1] : 0.0);
    }
  }
  for (int g = 0; g < m.n_geom; ++g) {
    e["geom_type"].push_back(double(m.geom_type[g]));
    e["geom_link"].push_back(m.geom_link[g]);
    v3(e["geom_pos"], m.geom_pos[g]);
    m9(e["geom_R"], m.geom_R[g]);
    v3(e["geom_size"], m.geom_size[g]);
    e["geom_contype"].push_back(m.geom_contype[g]);
    e["geom_conaffinity"].push_back(m.geom_conaffinity[g]);
  }
  for (int p = 0; p < m.n_pair; ++p) {
    e["pair_geom_a"].push_back(m.pair_geom_a[p]);
    e["pair_geom_b"].push_back(m.pair_geom_b[p]);
  }
  for (int a = 0; a < m.n_u; ++a) {
    e["actuator_type"].push_back(double(m.actuator_type[a]));
    e["actuator_dof"].push_back(m.actuator_dof[a]);
    e["actuator_gear"].push_back(m.actuator_gear[a]);
    e["actuator_ctrllimited"].push_back(m.actuator_ctrllimited[a]);
    e["actuator_ctrlrange"].push_back(m.actuator_ctrlrange[2 * a]);
    e["actuator_ctrlrange"].push_back(m.actuator_ctrlrange[2 * a + 1]);
    e["actuator_kp"].push_back(m.actuator_kp[a]);
    e["actuator_kv"].push_back(m.actuator_kv[a]);
  }
  return e;
}

// A stand-in for the device pool: copies into host vectors it owns, counts the calls.
struct HostPool {
  int copies = 0;
  std::vector<std::shared_ptr<void>> held;
  template <class T>
  T* copy(const std::vector<T>& v) {
    auto h = std::make_shared<std::vector<T>>(v);
    if (h->empty()) h->resize(1);  // as DevicePool: never a null pointer
    held.push_back(h);
    ++copies;
    return h->data();
  }
};

template <class S>
void check_table(const Model& m) {
  const ModelArrays<S> a(m);
  const ModelView<S> v = a.view();
  const auto e = expected_fields(m);
  // array fields: sizes, values, view pointers
  std::vector<const void*> data;
  std::set<std::string> names;
  a.for_each_field([&](const char* name, const auto& vec, int rows, int cols) {
    INFO("field " << name);
    names.insert(name);
    CHECK(rows > 0);  // the model has every entity, so no check below is vacuous
    REQUIRE(vec.size() == size_t(rows) * size_t(cols));
    const auto it = e.find(name);
    REQUIRE(it != e.end());  // the oracle knows every table field
    REQUIRE(it->second.size() == vec.size());
    bool nonzero = false;
    for (size_t i = 0; i < vec.size(); ++i) {
      using T = typename std::decay_t<decltype(vec)>::value_type;
      CHECK(vec[i] == T(it->second[i]));
      nonzero = nonzero || vec[i] != T(0);
    }
    CHECK(nonzero);
    data.push_back(vec.data());
  });
  CHECK(names.size() == size_t(n_model_fields));
  CHECK(e.size() == size_t(n_model_fields));
  int f = 0;
  v.for_each_field([&](const char* name, const auto* ptr, int rows, int cols) {
    INFO("field " << name);
    CHECK(static_cast<const void*>(ptr) == data[f]);
    CHECK(rows * cols > 0);
    ++f;
  });
  CHECK(f == n_model_fields);
  CHECK(v.n_link == m.n_link);
  CHECK(v.n_q == m.n_q);
  // 8 box corners + 2 capsule ends + 1 sphere centre + the 3 contact spheres, each on 2 planes
  CHECK(v.n_point == 8 + 2 + 1 + int(m.spheres.size()));
  CHECK(v.n_plane == int(m.planes.size()));
  CHECK(v.n_point_pair == v.n_point * v.n_plane);
  CHECK(v.n_geom == m.n_geom);
  CHECK(v.n_pair == m.n_pair);
  CHECK(v.n_body_pair == 2);  // the capsule against link 2's capsule (2 slots) and link 3's sphere (1)
  CHECK(v.n_body_con == 3);
  // the upload loop: every field copied once, the copy's view points at equal copies
  HostPool pool;
  const ModelView<S> d = copy_model(a, pool);
  CHECK(pool.copies == n_model_fields);
  f = 0;
  d.for_each_field([&](const char* name, const auto* ptr, int rows, int cols) {
    INFO("field " << name);
    CHECK(static_cast<const void*>(ptr) != data[f]);
    const auto* host = static_cast<decltype(ptr)>(data[f]);
    for (int i = 0; i < rows * cols; ++i) CHECK(ptr[i] == host[i]);
    ++f;
  });
  CHECK(d.weight == v.weight);
  for (int i = 0; i < 3; ++i) CHECK(d.gravity[i] == v.gravity[i]);
}

}  // namespace

TEST_CASE("model field table: every field reaches ModelArrays, the view and the upload (double)", "[model_view]") {
  const Model m = full_model();
  REQUIRE(m.n_geom == 4 + 3 + 2);
  REQUIRE(m.n_pair > 0);
  check_table<double>(m);
}

TEST_CASE("model field table: every field reaches ModelArrays, the view and the upload (float)", "[model_view]") {
  check_table<float>(full_model());
}
