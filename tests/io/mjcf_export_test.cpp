// export-mjcf round trip (io/mjcf_export.h): every shipped scene's model (and a tree with every
// joint type, springs, damping, armature and limits), written as MJCF by MuJoCo's own writer and
// imported back through MuJoCo's compiler (io/mjcf_import.h), has the same DOFs (theta = qpos),
// the same mass matrix and bias forces at random states, and the same contacts. Tolerance: MuJoCo's
// XML writer prints 6 significant digits (e.g. a quaternion 0.707105), so the round trip agrees to
// 1e-5 relative, not to round-off.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/collision.h"
#include "core/crba.h"
#include "core/rnea.h"
#include "io/mjcf_export.h"
#include "io/mjcf_import.h"
#include "io/scene.h"

using namespace bigstep;
namespace fs = std::filesystem;

#ifdef BIGSTEP_WITH_MUJOCO

namespace {

// The contact depths of m at theta (margin 0.05), sorted: geom order differs between the two models.
std::vector<double> depths(const Model& m, const VecX& theta) {
  Kinematics kin(m);
  forward_kinematics(m, theta, kin);
  std::vector<Contact> con(m.max_contacts);
  uint32_t st = 0;
  const int n = collide(m, kin, 0.05, con.data(), int(con.size()), st);
  std::vector<double> d;
  for (int i = 0; i < n; ++i) d.push_back(con[i].depth);
  std::sort(d.begin(), d.end());
  return d;
}

void round_trip(const std::string& config, const std::vector<std::string>& overrides = {}) {
  INFO(config);
  const Scene sc = load_scene(config, overrides);
  const Model& a = sc.model;
  MjcfExportOptions opt;
  opt.name = sc.name;
  const fs::path file = fs::temp_directory_path() / ("bigstep_export_" + sc.name + ".xml");
  std::ofstream(file) << export_mjcf(a, opt);
  MujocoImportOptions io;
  io.drop_unsupported_pairs = !a.skipped_pairs.empty();  // as the original did
  const Model b = Model::finalize(import_mujoco(file.string(), io).spec);
  REQUIRE(b.n_q == a.n_q);
  CHECK(b.total_mass == Approx(a.total_mass).epsilon(1e-12));
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> U(-0.4, 0.4);
  for (int s = 0; s < 4; ++s) {
    VecX th = sc.theta0, thd(a.n_q);
    for (int k = 0; k < a.n_q; ++k) th[k] += U(rng), thd[k] = 2 * U(rng);
    MatX Ha, Hb;
    crba(a, th, Ha);
    crba(b, th, Hb);
    Ha.diagonal() += Eigen::Map<const VecX>(a.dof_armature.data(), a.n_q);
    Hb.diagonal() += Eigen::Map<const VecX>(b.dof_armature.data(), b.n_q);
    CHECK((Ha - Hb).lpNorm<Eigen::Infinity>() <= 1e-5 * Ha.lpNorm<Eigen::Infinity>());
    VecX ba, bb;
    rnea<double>(a, th, thd, VecX::Zero(a.n_q), ba);
    rnea<double>(b, th, thd, VecX::Zero(b.n_q), bb);
    CHECK((ba - bb).lpNorm<Eigen::Infinity>() <= 1e-5 * (1 + ba.lpNorm<Eigen::Infinity>()));
    // contacts: the same depths (a contact point of radius 0 is exported as a 1e-6 m sphere)
    const std::vector<double> da = depths(a, th), db = depths(b, th);
    REQUIRE(da.size() == db.size());
    for (size_t i = 0; i < da.size(); ++i) CHECK(std::abs(da[i] - db[i]) <= 1e-5);
  }
  // the per-DOF properties come back
  for (int k = 0; k < a.n_q; ++k) {
    CHECK(b.dof_damping[k] == Approx(a.dof_damping[k]));
    CHECK(b.dof_armature[k] == Approx(a.dof_armature[k]));
    CHECK(b.dof_stiffness[k] == Approx(a.dof_stiffness[k]));
    CHECK(b.dof_limited[k] == a.dof_limited[k]);
  }
  CHECK(b.n_u == a.n_u);
}

}  // namespace

TEST_CASE("export-mjcf: every shipped scene round-trips through MuJoCo's compiler", "[mujoco][export]") {
  for (const auto& e : fs::directory_iterator(std::string(BIGSTEP_SOURCE_DIR) + "/configs"))
    if (e.path().extension() == ".yaml") round_trip(e.path().string());
}

TEST_CASE("export-mjcf: every joint type, springs, damping, armature, limits and actuators", "[mujoco][export]") {
  round_trip(std::string(BIGSTEP_SOURCE_DIR) + "/tests/data/tree_all_joints.yaml",
             {"model.links[1].damping=0.3", "model.links[1].armature=0.02", "model.links[1].range=[-0.5, 0.7]",
              "model.links[1].stiffness=4", "model.links[1].springref=0.2", "model.links[3].range=[-0.1, 0.2]",
              "model.actuators=[{joint: arm, type: position, kp: 5, kv: 1, gear: 2, ctrlrange: [-1, 1]}, "
              "{joint: toe, gear: 3}]"});
}

TEST_CASE("export-mjcf: a massless moving link with two children is refused by name", "[mujoco][export]") {
  ModelSpec spec;
  LinkSpec hub;
  hub.name = "hub", hub.joint = JointType::Hinge;
  LinkSpec c1;
  c1.name = "c1", c1.parent = 0, c1.joint = JointType::Hinge, c1.mass = 1, c1.inertia = Mat3::Identity() * 0.1;
  LinkSpec c2 = c1;
  c2.name = "c2";
  spec.links = {hub, c1, c2};
  try {
    export_mjcf(Model::finalize(spec));
    FAIL("no error");
  } catch (const InvalidArgument& e) {
    CHECK(std::string(e.what()).find("links[0] (hub)") != std::string::npos);
    CHECK(std::string(e.what()).find("exactly one child") != std::string::npos);
  }
}

#else

TEST_CASE("export-mjcf: a build without MuJoCo says so", "[export]") {
  CHECK_THROWS_WITH(export_mjcf(Model::finalize(ModelSpec{{LinkSpec{}}, {}, {}, Vec3(0, 0, -9.81)})),
                    Catch::Contains("built without MuJoCo"));
}

#endif
