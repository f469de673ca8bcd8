// The solver registry (solvers/registry.cpp): names, factories and capability flags, and the scene
// loader and batch engines asking it instead of comparing names.
#include <catch2/catch.hpp>

#include "batch/batch_engines.h"
#include "io/scene.h"
#include "solvers/ne/ne_lcp.h"
#include "solvers/ne/ne_mdp.h"
#include "solvers/registry.h"

using namespace bigstep;

namespace {
const std::string kBox = std::string(BIGSTEP_SOURCE_DIR) + "/configs/box_slide.yaml";
}  // namespace

TEST_CASE("registry: the seven methods, in help order", "[registry]") {
  CHECK(solver_names() == "pbd, pbfd, ne_lcp, ne_mdp, nmdp_ne, nmdp_pbd, compliant");
  CHECK_THROWS_WITH(find_solver("euler"), "integrator.type = euler: expected one of: " + solver_names());
  CHECK(std::string(find_solver("nmdp_pbd").name) == "nmdp_pbd");
}

TEST_CASE("registry: each factory builds its own integrator type from a scene", "[registry]") {
  for (const SolverEntry& e : solver_registry()) {
    INFO(e.name);
    const Scene sc = load_scene(kBox, {std::string("integrator.type=") + e.name, "integrator.dt=0.001"});
    const std::unique_ptr<Integrator> integ = make_integrator(sc);
    REQUIRE(integ);
    const std::string n = e.name;
    if (n == "pbd" || n == "pbfd") {
      const auto* p = dynamic_cast<const PbdIntegrator*>(integ.get());
      REQUIRE(p);
      CHECK(p->settings().formulation == (n == "pbd" ? Formulation::Pbd : Formulation::Pbfd));
    }
    if (n == "ne_lcp") CHECK(dynamic_cast<const NeLcpIntegrator*>(integ.get()));
    if (n == "ne_mdp") CHECK(dynamic_cast<const NeMdpIntegrator*>(integ.get()));
    if (n.rfind("nmdp_", 0) == 0) {
      CHECK(dynamic_cast<const NmdpIntegrator*>(integ.get()));
      CHECK(sc.nmdp.form == (n == "nmdp_pbd" ? NmdpForm::Pbd : NmdpForm::Ne));
    }
    // one step from rest on the ground runs and reports a status
    VecX next;
    const StepStats st = integ->step(sc.theta0, sc.theta0, VecX(), next);
    CHECK(next.size() == sc.model.n_q);
    CHECK(st.converged());
  }
}

TEST_CASE("registry: capability flags", "[registry]") {
  const SolverEntry &pbd = find_solver("pbd"), &pbfd = find_solver("pbfd"), &lcp = find_solver("ne_lcp");
  CHECK(pbd.takes(Optimizer::Lm));
  CHECK_FALSE(pbfd.takes(Optimizer::Lm));
  CHECK(pbfd.takes(Optimizer::JtjLm));
  CHECK(lcp.optimizers == 0);
  CHECK(std::string(lcp.solver_name({PbdSettings{}, NeSettings{}, NmdpSettings{}, CompliantSettings{}})) == "lemke");
  // only PBFD with JTJ-LM has the team (GPU-form) engine and its CUDA mirror
  for (const SolverEntry& e : solver_registry())
    for (Optimizer o : {Optimizer::Lm, Optimizer::JtjLm, Optimizer::Lbfgs}) {
      INFO(e.name << " + " << optimizer_name(o));
      CHECK(e.has_team_engine(o) == (std::string(e.name) == "pbfd" && o == Optimizer::JtjLm));
    }
  CHECK(pbfd.cuda_engine);
  CHECK(pbd.state == StateLevel::Position);
  CHECK(lcp.state == StateLevel::Velocity);
  for (const SolverEntry& e : solver_registry()) CHECK(e.pd_servo);
  CHECK(team_engine_methods() == "integrator.type=pbfd with optimizer jtj_lm only");
}

TEST_CASE("registry: the batch engines ask the registry for a team engine", "[registry]") {
  const Scene sc = load_scene(kBox, {"integrator.type=pbfd", "integrator.optimizer=lbfgs", "batch.engine=team",
                                     "batch.rollouts=2"});
  StateBatch b(2, sc.model.n_q);
  RolloutParamTable p;
  BatchOptions opt;
  opt.rollouts = 2;
  init_batch(sc, opt, b, p);
  CHECK_THROWS_WITH(make_batch_engine(sc, BackendChoice{}, b, p),
                    Catch::Contains("batch.engine=team = pbfd+lbfgs") &&
                        Catch::Contains("integrator.type=pbfd with optimizer jtj_lm only"));
}
