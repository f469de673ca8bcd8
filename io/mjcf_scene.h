// `model: {mjcf: path}` / `{urdf: path}` in a scene, and a bare MJCF / URDF file given where a
// scene is expected: the model comes from MuJoCo's compiler (io/mjcf_import.h), and these are
// the rules that turn what MuJoCo's model says into the scene's defaults (docs/model_data.md
// "Importing MJCF / URDF").
#pragma once
#include <memory>
#include <string>

#include "io/mjcf_import.h"
#include "io/yaml_cfg.h"

namespace bigstep {

/// The file a model.mjcf / model.urdf value names: "gymnasium:hopper.xml" (gymnasium's MuJoCo
/// assets), "example-robot-data:robots/a1_description/urdf/a1.urdf" (that package's share folder),
/// both found through python3 (or $PYTHON); otherwise a path, relative to the scene file's folder.
/// Throws InvalidArgument when the package is not installed.
std::string resolve_model_path(const std::string& text, const std::string& scene_file);

/// Reads model.mjcf or model.urdf (a path relative to the scene file's folder) and model.allow,
/// imports the file and finishes `model` (any other model key is an error: the file is the model).
std::shared_ptr<const MujocoImport> import_model_keys(Cfg& model, const std::string& scene_file);

/// The Coulomb coefficient MuJoCo would use for the model's contacts: the larger sliding friction of
/// the two geoms of a pair (MuJoCo's default pair rule), the largest over the candidate pairs; a
/// world plane from the model keeps its MuJoCo friction too. 0.5 (the key's default) without pairs.
double imported_mu(const Model& m, const MujocoImport& imp);

/// PBFD's tangential coefficient from a Coulomb mu (docs/methods/pbfd.md §4.4, A12): with beta, gamma + 1 = alpha
/// the friction / normal force ratio of a contact slipping at speed v over a step dt is
///   (beta + 1) C_par (v dt)^beta / C_perp,
/// so C_par = mu C_perp / ((beta + 1) (v_s dt)^beta) makes it mu at the slip speed v_s, whatever dt
/// (below v_s PBFD's friction is weaker, above it stronger: it is velocity-dependent by design).
/// Default v_s = 1 m/s (contact.slip_speed), the calibration speed of docs/methods/pbfd.md §8.2.
double c_par_from_mu(double mu, double c_perp, double beta, double slip_speed, double dt);

/// The rest-depth rule for C_perp (docs/methods/pbfd.md §4.7): W / (N_s d0^alpha) with N_s = 4 points carrying
/// the weight W and d0 = 2 mm.
double c_perp_rest_depth(double weight, double alpha);

/// The scene name of an imported file: its stem ("hopper" for .../hopper.xml).
std::string imported_scene_name(const std::string& path);

}  // namespace bigstep
