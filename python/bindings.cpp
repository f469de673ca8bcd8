// Python module bigstep._bigstep (nanobind): K rollouts of a scene behind the batch engines of
// batch/batch_engines.h, for RL loops: step(actions) with a (K, n_q) float64 array of joint torques,
// states and per-rollout status bits back as numpy arrays. Same engines, seeds and errors as the CLI.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/chart.h"
#include "core/crba.h"
#include "core/error.h"
#include "core/model_view.h"
#include "core/rnea.h"
#include "batch/batch_engines.h"
#include "io/mjcf_import.h"
#include "io/scene_keys.h"
#include "envs/vec_env.h"

namespace nb = nanobind;
using namespace bigstep;

namespace {

using Actions = nb::ndarray<const double, nb::numpy, nb::c_contig>;

// A fresh numpy array (rows x cols) holding a copy of src.
template <class T>
nb::ndarray<nb::numpy, T> to_numpy(const T* src, size_t rows, size_t cols) {
  T* buf = new T[rows * cols];
  std::memcpy(buf, src, rows * cols * sizeof(T));
  nb::capsule owner(buf, [](void* p) noexcept { delete[] static_cast<T*>(p); });
  if (cols == 1) return nb::ndarray<nb::numpy, T>(buf, {rows}, owner);
  return nb::ndarray<nb::numpy, T>(buf, {rows, cols}, owner);
}

// The model's flat arrays (core/model_fields.h, the one field table): {name: (rows, cols) numpy
// array} with the table's names, kinds (int32, float64, uint8, uint32) and shapes, e.g.
// link_Ro (n_link, 9), dof_anc (n_q, n_link), dof_range (n_q, 2). Copies.
nb::dict model_arrays_dict(const Model& m) {
  const ModelArrays<double> a(m);
  nb::dict d;
  a.for_each_field([&](const char* name, const auto& v, int rows, int cols) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    T* buf = new T[v.size() > 0 ? v.size() : 1];
    if (!v.empty()) std::memcpy(buf, v.data(), v.size() * sizeof(T));
    nb::capsule owner(buf, [](void* p) noexcept { delete[] static_cast<T*>(p); });
    d[name] = nb::ndarray<nb::numpy, T>(buf, {size_t(rows), size_t(cols)}, owner);
  });
  return d;
}

class BatchEnv {
 public:
  BatchEnv(const std::string& config, int rollouts, uint64_t seed, const std::vector<std::string>& overrides,
           const std::string& backend)
      : sc_(load_scene(config, overrides)), bk_(select_backend(backend)), b_(1, 1) {
    BIGSTEP_CHECK_ARG(rollouts >= 1 && rollouts <= kMaxRollouts, "rollouts", rollouts,
                      detail::concat("must be in [1, ", kMaxRollouts, "] (2^24)"));
    opt_ = static_cast<const BatchOptions&>(sc_);  // the scene's batch.* block with these rollouts and seed
    opt_.rollouts = rollouts;
    opt_.seed = seed;
    reset(std::nullopt);
  }
  // All rollouts: back to the seeded initial states (as at construction). A list of rollouts:
  // those start a new episode from fresh seeded states (stream (seed, k, episode)), the others go on.
  nb::ndarray<nb::numpy, double> reset(std::optional<std::vector<int>> rollouts) {
    if (rollouts) {
      reset_rollouts(sc_, opt_, b_, *rollouts);
      engine_->reset(b_, *rollouts);
      return theta();
    }
    b_ = StateBatch(opt_.rollouts, sc_.model.n_q);
    init_batch(sc_, opt_, b_, p_);
    engine_ = make_batch_engine(sc_, bk_, b_, p_);
    return theta();
  }
  nb::ndarray<nb::numpy, uint32_t> episode() const { return to_numpy(b_.episode.data(), b_.K, 1); }
  // One step of every rollout with torques tau (K, n_q), or the scene's control.tau when None.
  nb::ndarray<nb::numpy, double> step(std::optional<Actions> tau) {
    const size_t K = size_t(b_.K), n = size_t(b_.n_q);
    if (tau) {
      if (tau->ndim() != 2 || tau->shape(0) != K || tau->shape(1) != n) {
        std::string got = "(";
        for (size_t i = 0; i < tau->ndim(); ++i) got += (i ? ", " : "") + std::to_string(tau->shape(i));
        throw InvalidArgument(detail::concat("tau.shape = ", got, "): expected (", K, ", ", n, ") = (rollouts, n_q)"));
      }
    }
    engine_->step(b_, p_, tau ? tau->data() : nullptr);
    return theta();
  }
  nb::ndarray<nb::numpy, double> theta() const { return to_numpy(b_.theta.data(), b_.K, b_.n_q); }
  nb::ndarray<nb::numpy, double> theta_prev() const { return to_numpy(b_.theta_prev.data(), b_.K, b_.n_q); }
  // (K, n_chart x 9): each rollout's rotation charts, each 3 x 3 row by row (core/chart.h)
  nb::ndarray<nb::numpy, double> chart() const {
    const int nc = sc_.model.n_chart;
    std::vector<double> flat(size_t(b_.K) * size_t(nc) * 9);
    for (int k = 0; k < b_.K; ++k)
      for (int c = 0; c < nc; ++c) {
        const Mat3 C = b_.chart.empty() ? Mat3::Identity() : b_.chart[size_t(k) * nc + c];
        for (int e = 0; e < 9; ++e) flat[(size_t(k) * nc + c) * 9 + e] = C(e / 3, e % 3);
      }
    return to_numpy(flat.data(), b_.K, size_t(nc) * 9);
  }
  // (K, n_q): theta with every chart undone, the world ZYX angles of each ball / free joint
  nb::ndarray<nb::numpy, double> theta_world() const {
    std::vector<double> flat(b_.theta);
    VecX row(b_.n_q);
    for (int k = 0; k < b_.K; ++k) {
      row = b_.row(b_.theta, k);
      to_identity_chart(sc_.model, b_.chart_row(k, sc_.model.n_chart), row);
      std::copy(row.data(), row.data() + b_.n_q, flat.data() + size_t(k) * b_.n_q);
    }
    return to_numpy(flat.data(), b_.K, b_.n_q);
  }
  nb::ndarray<nb::numpy, uint32_t> status() const { return to_numpy(b_.status.data(), b_.K, 1); }
  nb::ndarray<nb::numpy, int> iterations() const { return to_numpy(b_.iterations.data(), b_.K, 1); }
  nb::ndarray<nb::numpy, double> mass_scale() const {
    std::vector<double> s(b_.K);
    for (int k = 0; k < b_.K; ++k) s[k] = p_.mass_ratio(sc_.model, k);
    return to_numpy(s.data(), s.size(), 1);
  }
  nb::ndarray<nb::numpy, double> link_mass_scale() const {
    const int L = sc_.model.n_link;
    std::vector<double> s(size_t(b_.K) * L, 1.0);
    if (!p_.link_mass_scale.empty()) s = p_.link_mass_scale;
    return to_numpy(s.data(), b_.K, L);
  }
  int rollouts() const { return b_.K; }
  int n_q() const { return b_.n_q; }
  double dt() const { return sc_.settings.dt; }
  double time() const { return b_.steps * sc_.settings.dt; }
  std::vector<std::string> dof_names() const { return sc_.model.dof_name; }
  std::string backend() const { return engine_->name(); }
  std::string backend_reason() const { return bk_.reason; }
  nb::dict model_arrays() const { return model_arrays_dict(sc_.model); }

 private:
  Scene sc_;
  BackendChoice bk_;
  BatchOptions opt_;
  StateBatch b_;
  RolloutParamTable p_;
  std::unique_ptr<BatchEngine> engine_;
};

// A loaded scene's model for inspection and cross-checks (bigstep.load_model): dynamics at a state
// and, for an MJCF / URDF file, the map to MuJoCo's qpos / qvel (io/mjcf_import.h).
class LoadedModel {
 public:
  using In = nb::ndarray<const double, nb::numpy, nb::c_contig>;
  using Vec = nb::ndarray<nb::numpy, double>;
  using Mat = nb::ndarray<nb::numpy, double>;
  LoadedModel(const std::string& path, const std::vector<std::string>& overrides) : sc_(load_scene(path, overrides)) {}
  int n_q() const { return sc_.model.n_q; }
  std::vector<std::string> dof_names() const { return sc_.model.dof_name; }
  std::vector<std::string> link_names() const { return sc_.model.link_name; }
  double dt() const { return sc_.settings.dt; }
  double mu() const { return sc_.ne.mu; }
  double c_perp() const { return sc_.settings.contact.c_perp; }
  double c_par() const { return sc_.settings.contact.c_par; }
  double weight() const { return sc_.model.weight(); }
  bool imported() const { return sc_.imported != nullptr; }
  Vec theta0() const { return out(sc_.theta0); }
  Vec theta_dot0() const { return out(sc_.theta_dot0); }
  Vec armature() const { return out(VecX(Eigen::Map<const VecX>(sc_.model.dof_armature.data(), sc_.model.n_q))); }
  Vec damping() const { return out(VecX(Eigen::Map<const VecX>(sc_.model.dof_damping.data(), sc_.model.n_q))); }
  nb::dict arrays() const { return model_arrays_dict(sc_.model); }
  /// H(theta) (n_q, n_q) by CRBA, without armature (add diag(armature) for MuJoCo's M)
  Mat mass_matrix(const In& theta) const {
    MatX H;
    crba(sc_.model, vec(theta, sc_.model.n_q, "theta"), H);
    return out(H);
  }
  /// c(theta, theta_dot) + g(theta): the RNEA torques at zero acceleration (MuJoCo's qfrc_bias form)
  Vec bias(const In& theta, const In& theta_dot) const {
    const int n = sc_.model.n_q;
    VecX tau;
    rnea<double>(sc_.model, vec(theta, n, "theta"), vec(theta_dot, n, "theta_dot"), VecX::Zero(n), tau);
    return out(tau);
  }
  Vec qpos_from_theta(const In& theta) const {
    VecX q;
    bigstep::qpos_from_theta(imp(), vec(theta, n_q(), "theta"), q);
    return out(q);
  }
  Vec theta_from_qpos(const In& qpos) const {
    VecX t;
    bigstep::theta_from_qpos(imp(), vec(qpos, imp().nq, "qpos"), t);
    return out(t);
  }
  Vec qvel_from_theta_dot(const In& theta, const In& theta_dot) const {
    VecX v;
    bigstep::qvel_from_theta_dot(imp(), vec(theta, n_q(), "theta"), vec(theta_dot, n_q(), "theta_dot"), v);
    return out(v);
  }
  Vec theta_dot_from_qvel(const In& theta, const In& qvel) const {
    VecX td;
    bigstep::theta_dot_from_qvel(imp(), vec(theta, n_q(), "theta"), vec(qvel, imp().nv, "qvel"), td);
    return out(td);
  }
  Mat qvel_jacobian(const In& theta) const {
    MatX J;
    bigstep::qvel_jacobian(imp(), vec(theta, n_q(), "theta"), J);
    return out(J);
  }
  std::vector<std::string> keyframe_names() const {
    std::vector<std::string> n;
    for (const auto& k : imp().keyframes) n.push_back(k.name);
    return n;
  }

 private:
  const MujocoImport& imp() const {
    BIGSTEP_CHECK_ARG(sc_.imported != nullptr, "model", sc_.source, "not an MJCF / URDF model (no qpos map)");
    return *sc_.imported;
  }
  static VecX vec(const In& a, int n, const char* name) {
    BIGSTEP_CHECK_ARG(a.ndim() == 1 && int(a.shape(0)) == n, name, detail::concat("shape (", a.ndim() ? a.shape(0) : 0, ")"),
                      detail::concat("expected (", n, ",)"));
    return Eigen::Map<const VecX>(a.data(), n);
  }
  static Vec out(const VecX& v) { return to_numpy(v.data(), size_t(v.size()), 1); }
  static Mat out(const MatX& M) {
    const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> R = M;
    return to_numpy(R.data(), size_t(R.rows()), size_t(R.cols()));
  }
  Scene sc_;
};


// A view (no copy) of a persistent VecEnv buffer, kept alive by the Python object that owns it.
template <class T>
nb::ndarray<nb::numpy, T> view(T* p, size_t rows, size_t cols, nb::handle owner) {
  if (cols == 0) return nb::ndarray<nb::numpy, T>(p, {rows}, owner);
  return nb::ndarray<nb::numpy, T>(p, {rows, cols}, owner);
}

// K environments of a task (envs/vec_env.h) with numpy views of the persistent buffers.
class PyVecEnv {
 public:
  using In = nb::ndarray<const double, nb::numpy, nb::c_contig>;
  PyVecEnv(const std::string& task_file, int num_envs, uint64_t seed, const std::vector<std::string>& overrides,
           const std::string& backend, bool autoreset)
      : env_(task_file, VecEnvOptions{num_envs, seed, backend, overrides, autoreset}) {}
  void reset(std::optional<int64_t> seed) {
    if (seed) BIGSTEP_CHECK_ARG(*seed >= 0, "seed", *seed, "must be >= 0");
    env_.reset(seed ? *seed : -1);
  }
  void step(const In& a) {
    const size_t K = size_t(env_.num_envs()), A = size_t(env_.action_dim());
    if (a.ndim() != 2 || a.shape(0) != K || a.shape(1) != A) {
      std::string got = "(";
      for (size_t i = 0; i < a.ndim(); ++i) got += (i ? ", " : "") + std::to_string(a.shape(i));
      throw InvalidArgument(detail::concat("actions.shape = ", got, "): expected (", K, ", ", A, ") = (num_envs, action_dim)"));
    }
    env_.step(a.data());
  }
  void set_state(int k, const In& qpos, const In& qvel) {
    check1(qpos, env_.task().nq(), "qpos");
    check1(qvel, env_.task().nv(), "qvel");
    env_.set_state(k, qpos.data(), qvel.data());
  }
  // (obs, reward, terminated, terms (forward, ctrl, contact, survive), xy) of the task at a state
  nb::tuple evaluate(const In& qpos, const In& qvel, std::optional<In> action, const In& xy_before) {
    check1(qpos, env_.task().nq(), "qpos");
    check1(qvel, env_.task().nv(), "qvel");
    check1(xy_before, 2, "xy_before");
    if (action) check1(*action, env_.action_dim(), "action");
    std::vector<double> obs(env_.obs_dim()), terms(4), xy(2);
    uint8_t term = 0;
    const double r = env_.evaluate(qpos.data(), qvel.data(), action ? action->data() : nullptr, xy_before.data(), obs.data(),
                                   &term, terms.data(), xy.data());
    return nb::make_tuple(to_numpy(obs.data(), obs.size(), 1), r, bool(term), to_numpy(terms.data(), 4, 1),
                          to_numpy(xy.data(), 2, 1));
  }
  VecEnv& env() { return env_; }

 private:
  static void check1(const In& a, int n, const char* name) {
    BIGSTEP_CHECK_ARG(a.ndim() == 1 && int(a.shape(0)) == n, name, detail::concat("shape (", a.ndim() ? a.shape(0) : 0, ",)"),
                      detail::concat("expected (", n, ",)"));
  }
  VecEnv env_;
};

}  // namespace

NB_MODULE(_bigstep, m) {
  m.doc() = "bigstep: batched implicit articulated-body simulation (PBFD / NE baselines), CPU and CUDA engines";
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const InvalidArgument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  m.attr("STATUS_NOT_CONVERGED") = uint32_t(STATUS_NOT_CONVERGED);
  m.attr("STATUS_NONFINITE") = uint32_t(STATUS_NONFINITE);
  m.attr("STATUS_FACTOR_FAILED") = uint32_t(STATUS_FACTOR_FAILED);
  m.attr("STATUS_GIMBAL_LOCK") = uint32_t(STATUS_GIMBAL_LOCK);

  m.attr("ENV_ACTION_NONFINITE") = uint32_t(ENV_ACTION_NONFINITE);
  m.attr("ENV_ACTION_OUT_OF_RANGE") = uint32_t(ENV_ACTION_OUT_OF_RANGE);
  m.attr("ENV_BUDGET_EXCEEDED") = uint32_t(ENV_BUDGET_EXCEEDED);
  m.attr("ENV_SOLVER_FAILED") = uint32_t(ENV_SOLVER_FAILED);
  m.attr("SOURCE_DIR") = BIGSTEP_SOURCE_DIR;
  using V = PyVecEnv;
  auto K = [](V& e) { return size_t(e.env().num_envs()); };
  nb::class_<V>(m, "VecEnvCore",
                "K environments of a task file (configs/tasks/*.yaml) stepped by one batch engine (envs/vec_env.h). "
                "Outputs are numpy views of persistent buffers (no copies; overwritten by the next step / reset). "
                "Auto-reset is SAME_STEP: an env whose episode ended has its last observation in final_obs and "
                "its next episode's first observation in obs.")
      .def(nb::init<const std::string&, int, uint64_t, const std::vector<std::string>&, const std::string&, bool>(),
           nb::arg("task_file"), nb::arg("num_envs"), nb::arg("seed") = 0,
           nb::arg("overrides") = std::vector<std::string>{}, nb::arg("backend") = "cpu", nb::arg("autoreset") = true)
      .def("reset", &V::reset, nb::arg("seed").none() = nb::none(),
           "Every env starts a new episode; seed: rebuild the batch from that seed (else each env's next episode).")
      .def("step", &V::step, nb::arg("actions"),
           "One env step with actions (num_envs, action_dim) float64. A wrong shape raises ValueError; NaN / inf / "
           "out-of-range values are flagged per env in flags (ENV_*), never raised.")
      .def("set_state", &V::set_state, nb::arg("env"), nb::arg("qpos"), nb::arg("qvel"),
           "Sets env's state from MuJoCo's qpos / qvel and recomputes its observation.")
      .def("evaluate", &V::evaluate, nb::arg("qpos"), nb::arg("qvel"), nb::arg("action").none(), nb::arg("xy_before"),
           "The task at a MuJoCo state without stepping: (obs, reward, terminated, terms[forward, ctrl, contact, "
           "survive], xy) where xy is the state's tracked position (the next step's xy_before).")
      .def_prop_ro("obs", [K](V& e) { return view(e.env().obs(), K(e), e.env().obs_dim(), nb::handle()); }, nb::rv_policy::reference_internal, "(K, obs_dim) view")
      .def_prop_ro("final_obs", [K](V& e) { return view(e.env().final_obs(), K(e), e.env().obs_dim(), nb::handle()); }, nb::rv_policy::reference_internal,
                   "(K, obs_dim) view: the last observation of the episodes that ended in the last step")
      .def_prop_ro("reward", [K](V& e) { return view(e.env().reward(), K(e), 0, nb::handle()); }, nb::rv_policy::reference_internal, "(K,) view")
      .def_prop_ro("terminated", [K](V& e) { return view(reinterpret_cast<bool*>(e.env().terminated()), K(e), 0, nb::handle()); }, nb::rv_policy::reference_internal, "(K,) bool view")
      .def_prop_ro("truncated", [K](V& e) { return view(reinterpret_cast<bool*>(e.env().truncated()), K(e), 0, nb::handle()); }, nb::rv_policy::reference_internal, "(K,) bool view")
      .def_prop_ro("flags", [K](V& e) { return view(e.env().flags(), K(e), 0, nb::handle()); }, nb::rv_policy::reference_internal, "(K,) uint32 ENV_* bits of the last step")
      .def_prop_ro("status", [K](V& e) { return view(e.env().status(), K(e), 0, nb::handle()); }, nb::rv_policy::reference_internal, "(K,) engine status bits (STATUS_*)")
      .def_prop_ro("iterations", [K](V& e) { return view(e.env().iterations(), K(e), 0, nb::handle()); }, nb::rv_policy::reference_internal, "(K,) solver iterations of the last step")
      .def_prop_ro("episode_step", [K](V& e) { return view(e.env().episode_step(), K(e), 0, nb::handle()); }, nb::rv_policy::reference_internal, "(K,) steps of the current episode")
      .def_prop_ro("qpos", [K](V& e) { return view(e.env().qpos(), K(e), e.env().task().nq(), nb::handle()); }, nb::rv_policy::reference_internal, "(K, nq) MuJoCo qpos")
      .def_prop_ro("qvel", [K](V& e) { return view(e.env().qvel(), K(e), e.env().task().nv(), nb::handle()); }, nb::rv_policy::reference_internal, "(K, nv) MuJoCo qvel")
      .def_prop_ro("terms", [](V& e) { return to_numpy(e.env().terms(), size_t(e.env().num_envs()), 4); }, nb::rv_policy::move,
                   "(K, 4) reward terms of the last step: forward, ctrl cost, contact cost, survive (a copy)")
      .def_prop_ro("episode", [](V& e) { return to_numpy(e.env().episode(), size_t(e.env().num_envs()), 1); }, nb::rv_policy::move, "(K,) episodes started (a copy)")
      .def_prop_ro("link_mass_scale", [](V& e) {
            const RolloutParamTable& p = e.env().params();
            const int L = e.env().sc().model.n_link;
            std::vector<double> s(size_t(e.env().num_envs()) * L, 1.0);
            if (!p.link_mass_scale.empty()) s = p.link_mass_scale;
            return to_numpy(s.data(), size_t(e.env().num_envs()), L);
          }, nb::rv_policy::move, "(K, n_link) the current episodes' link mass factors (a copy)")
      .def_prop_ro("action_low", [](V& e) { return to_numpy(e.env().task().action_low().data(), size_t(e.env().action_dim()), 1); }, nb::rv_policy::move)
      .def_prop_ro("action_high", [](V& e) { return to_numpy(e.env().task().action_high().data(), size_t(e.env().action_dim()), 1); }, nb::rv_policy::move)
      .def_prop_ro("num_envs", [](V& e) { return e.env().num_envs(); })
      .def_prop_ro("obs_dim", [](V& e) { return e.env().obs_dim(); })
      .def_prop_ro("action_dim", [](V& e) { return e.env().action_dim(); })
      .def_prop_ro("nq", [](V& e) { return e.env().task().nq(); })
      .def_prop_ro("nv", [](V& e) { return e.env().task().nv(); })
      .def_prop_ro("dt", [](V& e) { return e.env().dt(); })
      .def_prop_ro("episode_steps", [](V& e) { return e.env().task().spec().episode_steps; })
      .def_prop_ro("iteration_budget", [](V& e) { return e.env().iteration_budget(); })
      .def_prop_ro("task_kind", [](V& e) { return e.env().task().spec().kind_name; })
      .def_prop_ro("engine", [](V& e) { return e.env().engine_name(); }, "cpu_batched | cpu_team_emulation | cuda_team_fp64 ...")
      .def_prop_ro("backend_reason", [](V& e) { return e.env().backend_reason(); }, "why this backend was chosen");
  m.def(
      "model_arrays",
      [](const std::string& config, const std::vector<std::string>& overrides) {
        return model_arrays_dict(load_scene(config, overrides).model);
      },
      nb::arg("config"), nb::arg("overrides") = std::vector<std::string>{},
      "The scene's model as a dict of numpy arrays named by the field table (core/model_fields.h), each "
      "of shape (rows, cols): link_* (n_link, .), dof_* (n_q, .), point_* / plane_* / point_pair_* (the "
      "plane pairs as point cores), geom_* (n_geom, .), pair_geom_a/b (n_pair, 1), actuator_* (n_u, .). Copies.");
  nb::class_<LoadedModel>(m, "Model",
                          "A scene's model (YAML scene, or an MJCF / URDF file compiled by MuJoCo): dynamics at a "
                          "state and, for imported files, the map between theta / theta_dot and MuJoCo's qpos / qvel.")
      .def_prop_ro("n_q", &LoadedModel::n_q)
      .def_prop_ro("dof_names", &LoadedModel::dof_names)
      .def_prop_ro("link_names", &LoadedModel::link_names)
      .def_prop_ro("dt", &LoadedModel::dt, "the scene's integrator.dt (an imported file: its option timestep)")
      .def_prop_ro("mu", &LoadedModel::mu, "contact.mu")
      .def_prop_ro("c_perp", &LoadedModel::c_perp, "contact.c_perp")
      .def_prop_ro("c_par", &LoadedModel::c_par, "contact.c_par")
      .def_prop_ro("weight", &LoadedModel::weight, "total weight m |g| [N]")
      .def_prop_ro("imported", &LoadedModel::imported, "True for an MJCF / URDF model")
      .def_prop_ro("theta0", &LoadedModel::theta0, nb::rv_policy::move, "initial theta (an imported file: qpos0 or initial.keyframe)")
      .def_prop_ro("theta_dot0", &LoadedModel::theta_dot0, nb::rv_policy::move)
      .def_prop_ro("armature", &LoadedModel::armature, nb::rv_policy::move, "(n_q,) dof_armature")
      .def_prop_ro("damping", &LoadedModel::damping, nb::rv_policy::move, "(n_q,) dof_damping")
      .def_prop_ro("keyframe_names", &LoadedModel::keyframe_names)
      .def("arrays", &LoadedModel::arrays, "the model's flat arrays, as bigstep.model_arrays()")
      .def("mass_matrix", &LoadedModel::mass_matrix, nb::arg("theta"), "H(theta) (n_q, n_q), CRBA, without armature")
      .def("bias", &LoadedModel::bias, nb::arg("theta"), nb::arg("theta_dot"),
           "c + g (n_q,): RNEA torques at zero acceleration (MuJoCo's qfrc_bias in bigstep coordinates)")
      .def("qpos_from_theta", &LoadedModel::qpos_from_theta, nb::arg("theta"))
      .def("theta_from_qpos", &LoadedModel::theta_from_qpos, nb::arg("qpos"))
      .def("qvel_from_theta_dot", &LoadedModel::qvel_from_theta_dot, nb::arg("theta"), nb::arg("theta_dot"))
      .def("theta_dot_from_qvel", &LoadedModel::theta_dot_from_qvel, nb::arg("theta"), nb::arg("qvel"))
      .def("qvel_jacobian", &LoadedModel::qvel_jacobian, nb::arg("theta"), "J = d qvel / d theta_dot (nv, n_q)");
  m.def(
      "load_model",
      [](const std::string& path, const std::vector<std::string>& overrides) { return LoadedModel(path, overrides); },
      nb::arg("path"), nb::arg("overrides") = std::vector<std::string>{},
      "Loads a model: a YAML scene, or an MJCF / URDF file compiled by MuJoCo (the same as bigstep run PATH).");
  nb::class_<BatchEnv>(m, "BatchEnv",
                       "K rollouts of a scene (YAML config + 'key=value' overrides as bigstep run --set), stepped "
                       "together by one engine: backend 'cpu' | 'cuda' | 'auto'; batch.engine=team selects the "
                       "CUDA algorithm on the CPU. Rollout k starts from the scene's state perturbed by the seeded "
                       "stream (seed, k).")
      .def(nb::init<const std::string&, int, uint64_t, const std::vector<std::string>&, const std::string&>(),
           nb::arg("config"), nb::arg("rollouts"), nb::arg("seed") = 0, nb::arg("overrides") = std::vector<std::string>{},
           nb::arg("backend") = "cpu")
      .def("reset", &BatchEnv::reset, nb::arg("rollouts").none() = nb::none(),
           "rollouts=None: every rollout back to its seeded initial state (as at construction). A list of "
           "rollout indices (e.g. the ones whose episode ended or whose status failed): those start a new "
           "episode from fresh seeded states, keeping their randomised parameters; the others go on. "
           "Returns theta (K, n_q).")
      .def("step", &BatchEnv::step, nb::arg("tau").none() = nb::none(),
           "One timestep of every rollout with joint torques tau (K, n_q) float64 (None: the scene's "
           "control.tau; the control.pd servo acts on top). Returns theta (K, n_q). A rollout whose torques "
           "or state go non-finite is flagged in status and held; the others are unaffected.")
      .def_prop_ro("theta", &BatchEnv::theta, nb::rv_policy::move, "(K, n_q) configurations theta_n (a copy)")
      .def_prop_ro("theta_prev", &BatchEnv::theta_prev, nb::rv_policy::move, "(K, n_q) theta_{n-1}; velocity = (theta - theta_prev) / dt")
      .def_prop_ro("chart", &BatchEnv::chart, nb::rv_policy::move,
                   "(K, n_chart * 9) the rotation chart of each ball / free joint, 3 x 3 row by row: theta's Euler "
                   "angles of that joint are read in it (docs/methods/orientation.md)")
      .def_prop_ro("theta_world", &BatchEnv::theta_world, nb::rv_policy::move,
                   "(K, n_q) theta with the charts undone: each ball / free joint's world ZYX angles")
      .def_prop_ro("status", &BatchEnv::status, nb::rv_policy::move, "(K,) status bits of the last step (failure bits are sticky)")
      .def_prop_ro("iterations", &BatchEnv::iterations, nb::rv_policy::move, "(K,) solver iterations of the last step")
      .def_prop_ro("episode", &BatchEnv::episode, nb::rv_policy::move, "(K,) resets of each rollout so far")
      .def_prop_ro("mass_scale", &BatchEnv::mass_scale, nb::rv_policy::move,
                   "(K,) per-rollout total-mass ratio sum_j s_kj m_j / sum_j m_j (batch.randomize_mass)")
      .def_prop_ro("link_mass_scale", &BatchEnv::link_mass_scale, nb::rv_policy::move,
                   "(K, n_link) per-rollout factor on each link's mass and inertia (batch.randomize_mass)")
      .def_prop_ro("rollouts", &BatchEnv::rollouts)
      .def_prop_ro("n_q", &BatchEnv::n_q)
      .def_prop_ro("dt", &BatchEnv::dt)
      .def_prop_ro("time", &BatchEnv::time, "simulation time of theta [s]")
      .def_prop_ro("dof_names", &BatchEnv::dof_names)
      .def_prop_ro("backend", &BatchEnv::backend, "engine name (cpu_batched, cpu_team_emulation, cuda_team_fp64, ...)")
      .def_prop_ro("backend_reason", &BatchEnv::backend_reason)
      .def_prop_ro("model_arrays", &BatchEnv::model_arrays,
                   "the scene's model as bigstep.model_arrays() gives it: {name: (rows, cols) array}");
}
