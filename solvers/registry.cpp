// The solver registry: one entry per integrator.type (docs/architecture.md §7 table).
// cpu-only: a table of host factories; the CUDA engines are chosen in batch/batch_engines.cpp.
#include "solvers/registry.h"

#include "core/error.h"
#include "solvers/ne/ne_lcp.h"
#include "solvers/ne/ne_mdp.h"

namespace bigstep {

namespace {

// ---- pbd / pbfd: LM, JTJ-LM or L-BFGS on Eq. 6 / Eq. 13 (docs/methods/pbfd.md §3-§5) ----
const char* pbd_solver(const SolverConfig& c) { return optimizer_name(c.pbd.optimizer); }
void pbd_validate(const SolverConfig& c) { validate_pbd_settings(c.pbd); }
std::unique_ptr<Integrator> pbd_make(const Model& m, const SolverConfig& c) {
  return std::make_unique<PbdIntegrator>(m, c.pbd);
}

// ---- Newton-Euler baselines: Lemke LCP (docs/methods/newton_euler.md §2) or the linearised MDP QP (docs/methods/newton_euler.md §3) ----
const char* lcp_solver(const SolverConfig&) { return "lemke"; }
const char* qp_solver(const SolverConfig&) { return "qp_dual_active_set"; }
void ne_validate(const SolverConfig& c) { validate_ne_settings(c.ne); }
std::unique_ptr<Integrator> ne_lcp_make(const Model& m, const SolverConfig& c) {
  return std::make_unique<NeLcpIntegrator>(m, c.ne);
}
std::unique_ptr<Integrator> ne_mdp_make(const Model& m, const SolverConfig& c) {
  return std::make_unique<NeMdpIntegrator>(m, c.ne);
}

// ---- NMDP: FOPGM / ZOPGM with Alg. 2 subdivision (docs/methods/nmdp.md §7) ----
const char* nmdp_solver(const SolverConfig& c) { return c.nmdp.pgm.mode == PgmMode::Zo ? "zopgm" : "fopgm"; }
void nmdp_validate(const SolverConfig& c) { validate_nmdp_settings(c.nmdp); }
std::unique_ptr<Integrator> nmdp_make(const Model& m, const SolverConfig& c) {
  return std::make_unique<NmdpIntegrator>(m, c.nmdp);
}

// ---- compliant: Drumwright's L-stable spring-damper constraints (docs/methods/compliant.md §3-§8) ----
const char* compliant_solver(const SolverConfig& c) {
  return c.compliant.solve == FrictionSolve::Joint ? "qp_dual_active_set+cone_qp_joint" : "qp_dual_active_set+cone_qp_staggered";
}
void compliant_validate(const SolverConfig& c) { validate_compliant_settings(c.compliant); }
std::unique_ptr<Integrator> compliant_make(const Model& m, const SolverConfig& c) {
  return std::make_unique<CompliantIntegrator>(m, c.compliant);
}

constexpr uint32_t kLm = optimizer_bit(Optimizer::Lm), kJtjLm = optimizer_bit(Optimizer::JtjLm),
                   kLbfgs = optimizer_bit(Optimizer::Lbfgs);
constexpr auto Pos = StateLevel::Position, Vel = StateLevel::Velocity;
constexpr auto Eq6 = Formulation::Pbd, Eq13 = Formulation::Pbfd;

}  // namespace

const std::vector<SolverEntry>& solver_registry() {
  // name, summary, state, formulation, nmdp form, optimizers, team optimizers, cuda, pd servo, substeps,
  // solver name, validate, make
  static const std::vector<SolverEntry> r = {
      {"pbd", "position-based dynamics, energy form (PBFD paper Eq. (6))", Pos, Eq6, NmdpForm::Ne,
       kLm | kJtjLm | kLbfgs, 0, false, true, false, pbd_solver, pbd_validate, pbd_make},
      {"pbfd", "position-based fully dynamic, force residual (PBFD paper Eq. (13))", Pos, Eq13, NmdpForm::Ne,
       kJtjLm | kLbfgs, kJtjLm, true, true, false, pbd_solver, pbd_validate, pbd_make},
      {"ne_lcp", "Newton-Euler, dry-friction LCP by Lemke (docs/methods/newton_euler.md §2)", Vel, Eq13, NmdpForm::Ne, 0, 0, false,
       true, false, lcp_solver, ne_validate, ne_lcp_make},
      {"ne_mdp", "Newton-Euler, linearised MDP QP (docs/methods/newton_euler.md §3)", Vel, Eq13, NmdpForm::Ne, 0, 0, false, true,
       false, qp_solver, ne_validate, ne_mdp_make},
      {"nmdp_ne", "nonlinear MDP, Newton-Euler form (NMDP paper Eq. (6), Alg. 1-2)", Vel, Eq13, NmdpForm::Ne, 0, 0,
       false, true, true, nmdp_solver, nmdp_validate, nmdp_make},
      {"nmdp_pbd", "nonlinear MDP, position-based form (NMDP paper Eq. (12), Alg. 1-2)", Pos, Eq13, NmdpForm::Pbd, 0,
       0, false, true, true, nmdp_solver, nmdp_validate, nmdp_make},
      {"compliant", "L-stable compliant constraints, true friction cone (docs/methods/compliant.md)", Vel, Eq13,
       NmdpForm::Ne, 0, 0, false, true, false, compliant_solver, compliant_validate, compliant_make},
  };
  return r;
}

std::string solver_names(const char* sep) {
  std::string s;
  for (const SolverEntry& e : solver_registry()) s += (s.empty() ? "" : sep) + std::string(e.name);
  return s;
}

const SolverEntry& find_solver(const std::string& name, const char* key) {
  for (const SolverEntry& e : solver_registry())
    if (name == e.name) return e;
  throw InvalidArgument(detail::concat(key, " = ", name, ": expected one of: ", solver_names()));
}

std::string team_engine_methods() {
  std::string s;
  for (const SolverEntry& e : solver_registry())
    if (e.team_optimizers)
      s += detail::concat(s.empty() ? "" : "; ", "integrator.type=", e.name, " with optimizer ",
                          optimizer_names(e.team_optimizers));
  return s + " only";
}

std::string team_unsupported(const Model& m) {
  // the team residual takes every geom against world planes as point cores (Model::point_pair_*)
  // and the body pairs of spheres and capsules as core segments, a sphere against a box through
  // the box's closest point (Model::body_pair_*, pbd_residual_team.h body_pair_cores); any other
  // body pair (box-capsule and box-box have no pair function in collide()) or a height field is refused
  auto segment = [&](int g) { return m.geom_type[g] == GeomType::Sphere || m.geom_type[g] == GeomType::Capsule; };
  auto sphere_box = [&](int a, int b) { return m.geom_type[a] == GeomType::Sphere && m.geom_type[b] == GeomType::Box; };
  for (int i = 0; i < m.n_body_pair; ++i) {
    const int q = m.body_pair_pair[i], a = m.pair_geom_a[q], b = m.pair_geom_b[q];
    if ((segment(a) && segment(b)) || sphere_box(a, b) || sphere_box(b, a)) continue;
    return detail::concat("geom pair (model.geoms) ", m.geom_name[a], " (geom ", a, ", ", geom_type_name(m.geom_type[a]),
                          ") / ", m.geom_name[b], " (geom ", b, ", ", geom_type_name(m.geom_type[b]),
                          "): the team form collides spheres and capsules with each other, spheres with boxes "
                          "and any geom with a world plane only");
  }
  return {};
}

std::string optimizer_names(uint32_t mask, const char* sep) {
  std::string s;
  for (Optimizer o : {Optimizer::Lm, Optimizer::JtjLm, Optimizer::Lbfgs})
    if (mask & optimizer_bit(o)) s += (s.empty() ? "" : sep) + std::string(optimizer_name(o));
  return s;
}

}  // namespace bigstep
