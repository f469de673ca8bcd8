// Scene loading (io/scene_io.cpp): every bad config gives one line naming the file, the full
// key path and the offending value; every shipped config loads with its documented D.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "io/scene.h"
#include "tests/support/scene_errors.h"

using namespace bigstep;
using bigstep::test::expect_error;

namespace {

// A minimal valid scene: one planar box on the ground (D = 3). Tests splice keys into it.
const char* kBase = R"(scene: t
model:
  links:
    - name: a
      joint: planar
      box: {size: [0.2, 0.2, 0.2], mass: 1.0}
    - {name: b, parent: a, joint: hinge, axis: [0, 1, 0], mass: 0.5, com: [0.1, 0, 0], inertia: [0.001, 0.001, 0.001]}
  contacts:
    - {link: a, points: [[0.1, 0, -0.1]]}
  terrain:
    - {normal: [0, 0, 1], offset: 0}
initial:
  theta: [0, 0.2, 0, 0]
integrator:
  type: pbfd
  dt: 0.01
contact:
  c_perp: 1.0e5
metrics:
  type: com
)";

std::string base_with(const std::string& extra) { return std::string(kBase) + extra; }

}  // namespace

TEST_CASE("scene_io: the inline base scene is valid", "[scene_io]") {
  const Scene sc = load_scene_text(kBase, "test.yaml");
  CHECK(sc.name == "t");
  CHECK(sc.model.n_q == 4);
  CHECK(sc.model.spheres.size() == 1);
  CHECK(sc.model.planes.size() == 1);
  CHECK(sc.theta0[1] == 0.2);
  CHECK(sc.settings.formulation == Formulation::Pbfd);
}

TEST_CASE("scene_io: YAML syntax errors name the file and the line", "[scene_io]") {
  // unterminated flow sequence on line 3
  expect_error("scene: t\nmodel:\n  links: [a, b\n", {"YAML syntax error", "line "});
  // bad indentation
  expect_error("scene: t\n  model: 1\n bad: [\n", {"YAML syntax error"});
}

TEST_CASE("scene_io: missing required keys", "[scene_io]") {
  SECTION("scene") {
    std::string y = kBase;
    y.replace(0, std::string("scene: t\n").size(), "");
    expect_error(y, {"scene = (missing)", "required"});
  }
  SECTION("model") { expect_error("scene: t\n", {"model", "(missing)", "required"}); }
  SECTION("link name") {
    expect_error("scene: t\nmodel:\n  links:\n    - {joint: hinge, axis: [0, 1, 0], mass: 1}\n",
                 {"model.links[0].name = (missing)"});
  }
  SECTION("link mass") {
    expect_error("scene: t\nmodel:\n  links:\n    - {name: a, joint: hinge, axis: [0, 1, 0]}\n",
                 {"model.links[0].mass = (missing)", "required number"});
  }
  SECTION("hinge axis") {
    expect_error("scene: t\nmodel:\n  links:\n    - {name: a, joint: hinge, mass: 1}\n",
                 {"model.links[0].axis = (missing)"});
  }
  SECTION("top level is not a mapping") { expect_error("just text\n", {"(top level) = just text: expected a mapping"}); }
  SECTION("empty file") { expect_error("", {"(top level) = (empty): expected a mapping"}); }
}

TEST_CASE("scene_io: unknown keys are reported at every level", "[scene_io]") {
  // key path and value of the unknown key appear in the message
  expect_error(base_with("bogus: 7\n"), {"test.yaml: bogus = 7: unknown key"});
  expect_error(kBase, {"model.bogus=7"}, {"model.bogus = 7: unknown key"});
  expect_error(kBase, {"model.links.0.bogus=7"}, {"model.links[0].bogus = 7: unknown key"});
  expect_error(kBase, {"model.links.0.box.bogus=7"}, {"model.links[0].box.bogus = 7: unknown key"});
  expect_error(kBase, {"model.contacts.0.bogus=7"}, {"model.contacts[0].bogus = 7: unknown key"});
  expect_error(kBase, {"model.terrain.0.bogus=7"}, {"model.terrain[0].bogus = 7: unknown key"});
  expect_error(kBase, {"initial.bogus=7"}, {"initial.bogus = 7: unknown key"});
  expect_error(kBase, {"control.bogus=7"}, {"control.bogus = 7: unknown key"});
  expect_error(kBase, {"integrator.bogus=7"}, {"integrator.bogus = 7: unknown key"});
  expect_error(kBase, {"contact.bogus=7"}, {"contact.bogus = 7: unknown key"});
  expect_error(kBase, {"metrics.bogus=7"}, {"metrics.bogus = 7: unknown key"});
  // a misspelt known key is unknown too
  expect_error(kBase, {"integrator.dtt=0.1"}, {"integrator.dtt = 0.1: unknown key"});
}

TEST_CASE("scene_io: wrong types", "[scene_io]") {
  expect_error(kBase, {"integrator.dt=abc"}, {"integrator.dt = abc: expected a number"});
  expect_error(kBase, {"integrator.dt=[1, 2]"}, {"integrator.dt = [1, 2]: expected a number"});
  expect_error(kBase, {"contact.c_par={a: 1}"}, {"contact.c_par", "expected a number"});
  expect_error(kBase, {"integrator=5"}, {"integrator = 5: expected a mapping"});
  expect_error(kBase, {"model.links=abc"}, {"model.links = abc: expected a non-empty list of links"});
  expect_error(kBase, {"model.links=[]"}, {"model.links = []: expected a non-empty list of links"});
  expect_error(kBase, {"model.terrain=abc"}, {"model.terrain = abc: expected a list of planes"});
  expect_error(kBase, {"initial.theta=5"}, {"initial.theta = 5: expected a list of 4 numbers"});
  expect_error(kBase, {"initial.theta=[0, x, 0, 0]"}, {"initial.theta[1] = x: expected a number"});
  expect_error(kBase, {"integrator.restart=maybe"}, {"integrator.restart = maybe: expected true or false"});
  expect_error(kBase, {"integrator.it_max=2.5"}, {"integrator.it_max = 2.5: expected an integer"});
  expect_error(kBase, {"model.gravity=[0, 0]"}, {"model.gravity = [0, 0]: expected 3 numbers, got 2"});
  expect_error(kBase, {"scene=[1, 2]"}, {"scene = [1, 2]: expected a string"});
}

TEST_CASE("scene_io: non-finite numbers", "[scene_io]") {
  expect_error(kBase, {"integrator.dt=.inf"}, {"integrator.dt = .inf: must be finite"});
  expect_error(kBase, {"contact.c_perp=.nan"}, {"contact.c_perp = .nan: must be finite"});
  expect_error(kBase, {"contact.c_par=-.inf"}, {"contact.c_par = -.inf: must be finite"});
  expect_error(kBase, {"initial.theta=[0, .nan, 0, 0]"}, {"initial.theta[1] = .nan: must be finite"});
  expect_error(kBase, {"model.links.1.mass=.inf"}, {"model.links[1].mass = .inf: must be finite"});
}

TEST_CASE("scene_io: link structure errors", "[scene_io]") {
  expect_error(kBase, {"model.links.1.parent=nope"},
               {"model.links[1].parent = nope: no earlier link has this name"});
  // a child cannot precede its parent
  expect_error(kBase, {"model.links.0.parent=b"}, {"model.links[0].parent = b"});
  expect_error(kBase, {"model.links.1.name=a"}, {"model.links[1].name = a: duplicate link name"});
  expect_error(kBase, {"model.links.1.joint=slider"},
               {"model.links[1].joint = slider: expected one of: fixed, hinge, prismatic, ball, floating, planar"});
  expect_error(kBase, {"model.contacts.0.link=zz"}, {"model.contacts[0].link = zz: no such link"});
  expect_error(kBase, {"model.contacts.0.radius=-1"}, {"model.contacts[0].radius = -1: must be >= 0"});
  expect_error(kBase, {"model.links.1.mass=-2"}, {"model.links[1] (b).mass = -2", "must be finite and >= 0"});
  expect_error(kBase, {"model.links.0.box.size=[0.2, 0, 0.2]"}, {"model.links[0].box.size", "box sides must be > 0"});
  expect_error(kBase, {"metrics.link=zz"}, {"metrics.link = zz: no such link"});
}

TEST_CASE("scene_io: state vectors must have n_q entries", "[scene_io]") {
  expect_error(kBase, {"initial.theta=[0, 0]"}, {"initial.theta = [0, 0]: expected 4 numbers, got 2"});
  expect_error(kBase, {"initial.theta_dot=[0, 0, 0, 0, 0]"},
               {"initial.theta_dot = [0, 0, 0, 0, 0]: expected 4 numbers, got 5"});
  expect_error(kBase, {"control.tau=[1]"}, {"control.tau = [1]: expected 4 numbers, got 1"});
}

TEST_CASE("scene_io: integrator and contact settings", "[scene_io]") {
  expect_error(kBase, {"integrator.type=euler"}, {"integrator.type = euler: expected one of: pbd, pbfd"});
  expect_error(kBase, {"integrator.optimizer=newton"},
               {"integrator.optimizer = newton: expected one of: lm, jtj_lm, lbfgs"});
  // LM with the exact Hessian of Eq. 13 is excluded; it is fine for PBD
  expect_error(kBase, {"integrator.optimizer=lm"}, {"integrator.optimizer = lm", "jtj_lm or lbfgs"});
  CHECK(load_scene_text(kBase, "test.yaml", {"integrator.optimizer=lm", "integrator.type=pbd"})
            .settings.optimizer == Optimizer::Lm);
  expect_error(kBase, {"integrator.dt=0"}, {"integrator.dt = 0: must be > 0"});
  expect_error(kBase, {"integrator.dt=-0.01"}, {"integrator.dt = -0.01: must be > 0"});
  expect_error(kBase, {"integrator.duration=0"}, {"integrator.duration = 0: must be > 0"});
  expect_error(kBase, {"contact.c_perp=-1"}, {"contact.c_perp = -1: must be finite and >= 0"});
  expect_error(kBase, {"contact.c_par=-5"}, {"contact.c_par = -5: must be finite and >= 0"});
  expect_error(kBase, {"contact.beta=0.5"}, {"contact.beta = 0.5: must be >= 1"});
  expect_error(kBase, {"contact.alpha=1"}, {"contact.alpha = 1: must be > 1"});
  expect_error(kBase, {"contact.gamma=0.5"}, {"contact.gamma = 0.5: must be >= 1"});
  expect_error(kBase, {"integrator.it_max=0"}, {"integrator.it_max = 0: must be > 0"});
  expect_error(kBase, {"metrics.type=speed"}, {"metrics.type = speed: expected one of: com, sliding"});
}

TEST_CASE("scene_io: --set overrides", "[scene_io]") {
  SECTION("valid overrides reach the scene") {
    const Scene sc = load_scene_text(
        kBase, "test.yaml",
        {"integrator.dt=0.05", "integrator.type=pbd", "contact.c_par=1e6", "initial.theta.1=0.5",
         "model.links.1.mass=2"});
    CHECK(sc.settings.dt == 0.05);
    CHECK(sc.settings.formulation == Formulation::Pbd);
    CHECK(sc.settings.contact.c_par == 1e6);
    CHECK(sc.theta0[1] == 0.5);
    CHECK(sc.model.link_mass[1] == 2.0);
  }
  SECTION("no '='") {
    expect_error(kBase, {"integrator.dt"}, {"--set integrator.dt", "expected key.path=value"});
    expect_error(kBase, {"=0.1"}, {"--set =0.1", "expected key.path=value"});
  }
  SECTION("list index out of range or not an index") {
    expect_error(kBase, {"model.links.5.mass=1"},
                 {"--set model.links.5.mass = 1", "'5' is not an index of that list"});
    expect_error(kBase, {"initial.theta.4=1"}, {"--set initial.theta.4 = 1", "'4' is not an index"});
    expect_error(kBase, {"initial.theta.-1=1"}, {"--set initial.theta.-1 = 1", "'-1' is not an index"});
    expect_error(kBase, {"model.links.x.mass=1"}, {"--set model.links.x.mass = 1", "'x' is not an index"});
  }
  SECTION("path through a scalar, two levels below it") {
    expect_error(kBase, {"integrator.dt.x.y=1"}, {"--set integrator.dt.x.y = 1", "is not a mapping"});
  }
  SECTION("value that is not YAML") {
    expect_error(kBase, {"integrator.dt=[1,"}, {"--set integrator.dt = [1,", "not a YAML value"});
  }
}

TEST_CASE("scene_io: a missing file is named", "[scene_io]") {
  const std::string path = std::string(BIGSTEP_SOURCE_DIR) + "/configs/no_such_scene.yaml";
  try {
    load_scene(path);
    FAIL("no error");
  } catch (const InvalidArgument& e) {
    CHECK(std::string(e.what()) == path + ": cannot open file");
  }
}

TEST_CASE("scene_io: every shipped config loads with its documented D", "[scene_io]") {
  // D per config (docs/methods/pbfd.md §8): box planar base 3, fixed chain 10, floating chains 6 + 9
  const std::map<std::string, int> expected_D = {
      {"box_slide", 3}, {"chain_fixed", 10}, {"chain_floating_ground", 15}, {"chain_slope", 15}};
  std::map<std::string, int> seen;
  for (const auto& e : std::filesystem::directory_iterator(std::string(BIGSTEP_SOURCE_DIR) + "/configs")) {
    if (e.path().extension() != ".yaml") continue;
    const std::string stem = e.path().stem().string();
    INFO(e.path().string());
    Scene sc;
    REQUIRE_NOTHROW(sc = load_scene(e.path().string()));
    CHECK(sc.source == e.path().string());
    CHECK(sc.theta0.size() == sc.model.n_q);
    CHECK(sc.theta_dot0.size() == sc.model.n_q);
    CHECK(sc.steps() > 0);
    seen[stem] = sc.model.n_q;
  }
  for (const auto& [name, D] : expected_D) {
    INFO(name);
    REQUIRE(seen.count(name) == 1);
    CHECK(seen[name] == D);
  }
  // the file's stated values arrive (box_slide.yaml comments: C_perp = 1.23e6, 4 corners)
  const Scene box = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/box_slide.yaml");
  CHECK(box.settings.contact.c_perp == 1.23e6);
  CHECK(box.model.spheres.size() == 4);
  CHECK(box.stop_at_rest);
  CHECK(box.metric == MetricKind::Sliding);
  const Scene fl = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/chain_floating_ground.yaml");
  CHECK(fl.model.spheres.size() == 80);  // 8 corners x 10 links
  CHECK(fl.model.gimbal_dof == std::vector<int>{4});
}

// ---- regressions of bugs found by these tests (multi-line messages, --set through a scalar, int overflow) ----

TEST_CASE("scene_io: block-style values are shown on one line", "[scene_io]") {
  // BUG: show() emits YAML::Flow, but a node parsed in block style keeps its Block style,
  // so the message spans several lines ("bogus = a: 1\nb: [1, 2]: unknown key").
  expect_error(base_with("bogus:\n  a: 1\n  b: [1, 2]\n"), {"test.yaml: bogus = {a: 1, b: [1, 2]}: unknown key"});
  expect_error(base_with("extra:\n  - 1\n  - 2\n"), {"test.yaml: extra = [1, 2]: unknown key"});
  expect_error("- 1\n- 2\n", {"test.yaml: (top level) = [1, 2]: expected a mapping"});
}

TEST_CASE("scene_io: --set through a scalar names the key", "[scene_io]") {
  // BUG: when the next-to-last path element is a scalar, apply_override indexes it and
  // yaml-cpp throws its own exception ("operator[] call on a scalar"), not InvalidArgument.
  expect_error(kBase, {"integrator.dt.x=1"}, {"--set integrator.dt.x = 1", "is not a mapping"});
}

TEST_CASE("scene_io: out-of-range integers and unchecked settings are rejected", "[scene_io]") {
  // BUG: Cfg::integer casts 1e12 to int (UB; prints "it_max = -2147483648: must be > 0")
  expect_error(kBase, {"integrator.it_max=1e12"}, {"integrator.it_max = 1e12"});
  // BUG: lbfgs_it_max and metrics.rest_speed / rest_time are never range-checked
  expect_error(kBase, {"integrator.lbfgs_it_max=-3"}, {"integrator.lbfgs_it_max = -3"});
  expect_error(kBase, {"integrator.friction_continuation=-1"}, {"integrator.friction_continuation = -1", "0 to 8"});
  expect_error(kBase, {"integrator.friction_continuation=9"}, {"integrator.friction_continuation = 9", "0 to 8"});
  expect_error(kBase, {"integrator.order=3"}, {"integrator.order = 3", "must be 1 or 2"});
  expect_error(kBase, {"contact.damping=-1"}, {"contact.damping = -1", ">= 0"});
  expect_error(kBase, {"integrator.type=pbd", "contact.damping=2"}, {"contact.damping = 2", "pbfd"});
  expect_error(kBase, {"integrator.type=ne_lcp", "contact.damping=2"}, {"contact.damping = 2", "ne_lcp"});
  expect_error(kBase, {"integrator.type=ne_lcp", "integrator.order=2"}, {"integrator.order = 2", "pbd and pbfd only"});
  expect_error(kBase, {"metrics.rest_speed=-1"}, {"metrics.rest_speed = -1"});
}

TEST_CASE("scene_io: the friction law's keys refuse bad values, naming key and value", "[scene_io][coulomb]") {
  expect_error(kBase, {"contact.friction=dry"}, {"contact.friction = dry", "power", "coulomb"});
  expect_error(kBase, {"contact.friction=coulomb", "contact.stiction_velocity=-0.01"},
               {"contact.stiction_velocity = -0.01", "> 0"});
  expect_error(kBase, {"contact.stiction_velocity=0"}, {"contact.stiction_velocity = 0", "> 0"});
  expect_error(kBase, {"contact.friction=coulomb", "contact.mu=-0.5"}, {"contact.mu = -0.5", ">= 0"});
  // PBD's Eq. 6 has no energy for the Coulomb force: refused, naming both keys
  expect_error(kBase, {"integrator.type=pbd", "contact.friction=coulomb"},
               {"contact.friction = coulomb", "integrator.type = pbd"});
  const Scene sc = load_scene_text(kBase, "test.yaml", {"contact.friction=coulomb", "contact.stiction_velocity=0.002"});
  CHECK(sc.settings.contact.friction == FrictionLaw::Coulomb);
  CHECK(sc.settings.contact.stiction_velocity == 0.002);
}

// ---- --set with the index syntax the help and the errors print ----

TEST_CASE("scene_io: --set model.links[0].box.mass=2 and other indexed keys", "[scene_io]") {
  const Scene sc = load_scene_text(kBase, "test.yaml",
                                   {"model.links[0].box.mass=2", "model.links[1].mass=3", "initial.theta[1]=0.5",
                                    "model.contacts[0].points[0][2]=-0.05"});
  CHECK(sc.model.link_mass[0] == 2.0);
  CHECK(sc.model.link_mass[1] == 3.0);
  CHECK(sc.theta0[1] == 0.5);
  CHECK(sc.model.spheres[0].centre.z() == -0.05);
  // an error's key path, pasted into --set, addresses the same value
  expect_error(kBase, {"model.links[1].mass=-2"}, {"model.links[1] (b).mass = -2"});
}

TEST_CASE("scene_io: --set index errors name the key and the list length", "[scene_io]") {
  expect_error(kBase, {"model.links[5].mass=1"},
               {"--set model.links[5].mass = 1", "'[5]' is not an index of that list: model.links has length 2"});
  expect_error(kBase, {"initial.theta[4]=1"}, {"--set initial.theta[4]", "initial.theta has length 4"});
  expect_error(kBase, {"model.links.5.mass=1"}, {"'5' is not an index of that list: model.links has length 2"});
  expect_error(kBase, {"model.links[x].mass=1"}, {"--set model.links[x].mass", "bad index in 'links[x]'"});
  expect_error(kBase, {"model.links[-1].mass=1"}, {"bad index in 'links[-1]'"});
  expect_error(kBase, {"model.links[0.mass=1"}, {"bad index in 'links[0'"});
  expect_error(kBase, {"model.links[0]x.mass=1"}, {"bad index in 'links[0]x'"});
  expect_error(kBase, {"model..links=1"}, {"bad key path at ''"});
  expect_error(kBase, {"integrator[0]=1"}, {"--set integrator[0]", "integrator is not a list"});
  expect_error(kBase, {"model.bogus[0]=1"}, {"model.bogus is absent: only an existing list can be indexed"});
}

// ---- bad input: one line naming the key and the limit ----

TEST_CASE("scene_io: a map key that is a list or map is named, not a crash", "[scene_io]") {
  // BUG: yaml-cpp threw TypedBadConversion out of the reader (exit 134)
  expect_error("{scene: x, model: {links: [{name: a, mass: 1, [0]: 0}]}}",
               {"model.links[0] = ", "key [0] is not a plain name"});
  expect_error(base_with("{a: 1}: 2\n"), {"(top level) = ", "key {a: 1} is not a plain name"});
}

TEST_CASE("scene_io: numbers whose size drives loops or memory are bounded", "[scene_io]") {
  expect_error(kBase, {"batch.seed=1e30"}, {"batch.seed = 1e30", "[0, 2^64 - 1"});
  expect_error(kBase, {"batch.seed=-1"}, {"batch.seed = -1", "[0, 2^64 - 1"});
  CHECK(load_scene_text(kBase, "test.yaml", {"batch.seed=9007199254740992"}).seed == 9007199254740992ull);
  expect_error(kBase, {"metrics.rest_time=1e8"}, {"metrics.rest_time = 1e8", "integrator.dt = 0.01", "at most 100000000"});
  expect_error(kBase, {"integrator.dt=1e-300"}, {"integrator.duration = ", "integrator.dt = 1e-300", "expected 1 to 100000000"});
  // duration / dt beyond int: silently 5 steps (42949673.01) or an abort (21474836.48) before
  expect_error(kBase, {"integrator.duration=42949673.01"}, {"integrator.duration = 42949673.01", "expected 1 to 100000000"});
  expect_error(kBase, {"integrator.duration=21474836.48"}, {"integrator.duration = 21474836.48", "expected 1 to 100000000"});
  CHECK(load_scene_text(kBase, "test.yaml", {"integrator.duration=1e6"}).steps() == 100000000);
  expect_error(kBase, {"batch.rollouts=2000000000"}, {"batch.rollouts = 2000000000", "at most 16777216"});
  expect_error(kBase, {"batch.threads=100000"}, {"batch.threads = 100000", "[0, 4096]"});
}

TEST_CASE("scene_io: a run of 0 steps is an error naming duration and dt", "[scene_io]") {
  expect_error(kBase, {"integrator.dt=3"}, {"integrator.duration = ", "integrator.dt = 3", "= 0 steps", "expected 1 to"});
  CHECK(load_scene_text(kBase, "test.yaml", {"integrator.duration=0.006"}).steps() == 1);  // round(0.6)
}

TEST_CASE("scene_io: long values are echoed capped", "[scene_io]") {
  std::string list = "[";
  for (int i = 0; i < 100000; ++i) list += (i ? ", " : "") + std::to_string(i);
  list += "]";
  try {
    load_scene_text(kBase, "test.yaml", {"initial.theta=" + list});
    FAIL("no error");
  } catch (const InvalidArgument& e) {
    const std::string msg = e.what();
    CHECK(msg.find("initial.theta = [0, 1, 2") != std::string::npos);
    CHECK(msg.find("... (100000 elements): expected 4 numbers, got 100000") != std::string::npos);
    CHECK(msg.size() < 250);
  }
  expect_error(kBase, {"metrics.link=" + std::string(5000, 'x')}, {"metrics.link = xxx", "... (5000 chars): no such link"});
}

TEST_CASE("scene_io: XML text without its file says what it is and how to load it", "[scene_io]") {
  // (the file itself loads through MuJoCo's compiler: tests/envs/model_import_test.cpp)
  expect_error("<?xml version=\"1.0\"?>\n<robot name=\"r\"><link name=\"a\"/></robot>\n",
               {"an XML file (MJCF or URDF?)", "load the file itself", "model: {mjcf: path}"});
  expect_error("  <mujoco model=\"hopper\">\n</mujoco>\n", {"an XML file"});
}

TEST_CASE("scene_io: batch.seed is read as an integer, never rounded through a double", "[scene_io]") {
  // BUG: read as a double, 2^53 + 1 became 2^53 (another seed) without a word
  CHECK(load_scene_text(kBase, "test.yaml", {"batch.seed=9007199254740993"}).seed == 9007199254740993ull);
  CHECK(load_scene_text(kBase, "test.yaml", {"batch.seed=18446744073709551615"}).seed == 18446744073709551615ull);
  CHECK(load_scene_text(kBase, "test.yaml", {"batch.seed=1e6"}).seed == 1000000ull);
  CHECK(load_scene_text(kBase, "test.yaml", {"batch.seed=9.007199254740993e15"}).seed == 9007199254740993ull);
  CHECK(load_scene_text(kBase, "test.yaml", {"batch.seed=1.5e1"}).seed == 15ull);
  CHECK(load_scene_text(kBase, "test.yaml", {"batch.seed=20.0"}).seed == 20ull);
  expect_error(kBase, {"batch.seed=18446744073709551616"}, {"batch.seed = 18446744073709551616", "[0, 2^64 - 1"});
  expect_error(kBase, {"batch.seed=1e20"}, {"batch.seed = 1e20", "[0, 2^64 - 1"});
  expect_error(kBase, {"batch.seed=1.5"}, {"batch.seed = 1.5", "integer"});
  expect_error(kBase, {"batch.seed=4503599627370496.5"}, {"batch.seed = 4503599627370496.5", "integer"});
  expect_error(kBase, {"batch.seed=abc"}, {"batch.seed = abc", "integer"});
}

TEST_CASE("scene_io: randomisation spreads keep their factors exp(U(-r, r)) finite and > 0", "[scene_io]") {
  // BUG: randomize_mass = 1000 drew mass factors of 0 and inf and the rollouts ran on
  for (const char* k : {"randomize_friction", "randomize_stiffness", "randomize_mass", "randomize_limit_stiffness"}) {
    expect_error(kBase, {std::string("batch.") + k + "=1000"}, {std::string("batch.") + k + " = 1000", "[0, 5]"});
    expect_error(kBase, {std::string("batch.") + k + "=5.01"}, {std::string("batch.") + k + " = 5.01", "[0, 5]"});
    CHECK_NOTHROW(load_scene_text(kBase, "test.yaml", {std::string("batch.") + k + "=5"}));
  }
}

TEST_CASE("scene_io: compliant.max_contacts is bounded by a count and a byte budget", "[scene_io]") {
  // BUG: 1e9 overflowed 3 * nc_max (int) and ended in "out of memory"
  const std::vector<std::string> compliant{"integrator.type=compliant"};
  auto with = [&](const std::string& set) {
    std::vector<std::string> v = compliant;
    v.push_back(set);
    return v;
  };
  expect_error(kBase, with("compliant.max_contacts=1e9"), {"compliant.max_contacts = 1000000000", "[0, 1024]"});
  expect_error(kBase, with("compliant.max_contacts=2147483647"), {"compliant.max_contacts = 2147483647", "[0, 1024]"});
  expect_error(kBase, with("compliant.max_contacts=-1"), {"compliant.max_contacts = -1"});
  // within the count but not the budget: a 64-facet cone over 1024 contacts
  std::vector<std::string> poly = with("compliant.max_contacts=1024");
  poly.push_back("compliant.friction_cone=polyhedral");
  poly.push_back("compliant.cone_edges=64");
  expect_error(kBase, poly, {"compliant.max_contacts = 1024", "MiB", "more than the 1024 MiB allowed"});
  CHECK(load_scene_text(kBase, "test.yaml", with("compliant.max_contacts=1024")).compliant.max_contacts == 1024);
}

TEST_CASE("scene_io: a scene name is one plain folder name", "[scene_io]") {
  // BUG: scene: ../../x wrote outside out/
  for (const char* bad : {"../../x", "..", ".", "a/b", "a\\\\b"})
    expect_error(kBase, {std::string("scene=") + bad}, {"scene = ", "plain folder name"});
  expect_error(kBase, {"scene=\"a\\x01b\""}, {"scene = a\\x01b", "plain folder name"});
  expect_error(std::string(kBase).replace(7, 1, "\xff"), {"scene = \\xff", "UTF-8"});
  CHECK(load_scene_text(kBase, "test.yaml", {"scene=caf\xc3\xa9 run-2"}).name == "caf\xc3\xa9 run-2");
}
