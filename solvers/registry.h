// The solver registry: integrator.type name -> CPU reference factory and what
// the method supports (engines, optimizers, state level, PD servo). Front ends ask the registry
// instead of comparing names; adding a method is one entry in registry.cpp.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "solvers/compliant/compliant_step.h"
#include "solvers/integrator.h"
#include "solvers/terms/ne_contact.h"
#include "solvers/nmdp/nmdp_step.h"
#include "solvers/pbd/pbd_step.h"

namespace bigstep {

/// The settings structs a factory may read (each entry reads its own).
struct SolverConfig {
  const PbdSettings& pbd;    ///< pbd / pbfd (dt, contact C_perp / C_par, tolerances)
  const NeSettings& ne;      ///< ne_lcp / ne_mdp
  const NmdpSettings& nmdp;  ///< nmdp_ne / nmdp_pbd
  const CompliantSettings& compliant;  ///< compliant
};

/// What one step solves for: positions (PBD/PBFD/NMDP-PBD) or velocities (Newton-Euler forms).
enum class StateLevel { Position, Velocity };

/// Bit of an optimizer in SolverEntry::optimizers / team_optimizers.
constexpr uint32_t optimizer_bit(Optimizer o) { return 1u << unsigned(o); }

struct SolverEntry {
  const char* name;              ///< integrator.type
  const char* summary;           ///< one line (--help)
  StateLevel state;
  Formulation formulation;       ///< PbdSettings::formulation (pbd: Eq. 6, otherwise Eq. 13)
  NmdpForm nmdp_form;            ///< NmdpSettings::form (nmdp_pbd: Eq. 12, otherwise Eq. 6)
  uint32_t optimizers;           ///< integrator.optimizer values it takes; 0 = its own inner solver
  uint32_t team_optimizers;      ///< optimizers of its team engine (CPU emulation); 0 = no team engine
  bool cuda_engine;              ///< the team engine has a CUDA mirror (cuda/)
  bool pd_servo;                 ///< control.pd acts in the step
  bool substeps;                 ///< reports Alg. 2 substeps (NMDP)
  /// summary.json "optimizer": the inner solver actually used with these settings
  const char* (*solver_name)(const SolverConfig& c);
  /// throws InvalidArgument naming the key (validate_pbd_settings & co.)
  void (*validate)(const SolverConfig& c);
  /// the CPU reference integrator, bound to m (which must outlive it)
  std::unique_ptr<Integrator> (*make)(const Model& m, const SolverConfig& c);

  bool takes(Optimizer o) const { return (optimizers & optimizer_bit(o)) != 0; }
  bool has_team_engine(Optimizer o) const { return (team_optimizers & optimizer_bit(o)) != 0; }
};

/// Every registered method, in the order --help lists them.
const std::vector<SolverEntry>& solver_registry();

/// The registered names joined by sep ("pbd, pbfd, ...").
std::string solver_names(const char* sep = ", ");

/// The entry called name; throws InvalidArgument "<key> = <name>: expected one of: <names>".
const SolverEntry& find_solver(const std::string& name, const char* key = "integrator.type");

/// The methods with a team engine, for messages: "integrator.type=pbfd with optimizer jtj_lm only".
std::string team_engine_methods();

/// What of m the team (GPU-form) engines cannot simulate yet, or "" when they can: they take every
/// geom pair against a world plane (as point cores, Model::point_pair_*), the pairs of spheres and
/// capsules between two links or against a world sphere / capsule (as core segments,
/// Model::body_pair_*), a sphere against a box (either on a link or the world) and the joint
/// limits, damping, armature and springs (pbd_residual_team.h); any other body pair (box-capsule,
/// box-box: collide() has none either) is named with its geoms and types. The one check every team
/// / CUDA engine builder calls; lift a clause here when the team form gains the term.
std::string team_unsupported(const Model& m);

/// The optimizers in mask joined by sep ("jtj_lm or lbfgs").
std::string optimizer_names(uint32_t mask, const char* sep = " or ");

}  // namespace bigstep
