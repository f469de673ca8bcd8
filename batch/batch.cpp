#include "batch/batch.h"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <utility>

#include "core/error.h"
#include "core/parallel_for.h"
#include "core/inertia.h"
#include "io/scene_keys.h"

namespace bigstep {

StateBatch::StateBatch(int K_, int n_q_)
    : K(K_), n_q(n_q_), theta(size_t(K_) * n_q_), theta_prev(size_t(K_) * n_q_), status(K_, 0),
      iterations(K_, 0), residual(K_, 0), stats(K_), episode(K_, 0) {}

namespace {
// std::seed_seq's generate() ([rand.util.seedseq], the standard's algorithm, so the streams are
// the ones std::seed_seq gave) over a fixed number of seed words: std::seed_seq keeps its words in
// a std::vector, and an auto-reset inside VecEnv::step must not allocate.
template <size_t N>
class FixedSeedSeq {
 public:
  using result_type = uint32_t;
  explicit FixedSeedSeq(const std::array<uint32_t, N>& v) : v_(v) {}
  size_t size() const { return N; }
  template <class It>
  void generate(It begin, It end) const {
    const size_t n = size_t(end - begin);
    if (n == 0) return;
    for (It i = begin; i != end; ++i) *i = 0x8b8b8b8bu;
    const size_t s = N;
    const size_t t = n >= 623 ? 11 : n >= 68 ? 7 : n >= 39 ? 5 : n >= 7 ? 3 : (n - 1) / 2;
    const size_t p = (n - t) / 2, q = p + t, m = std::max(s + 1, n);
    const auto T = [](uint32_t x) { return x ^ (x >> 27); };
    const auto at = [&](size_t i) -> uint32_t& { return reinterpret_cast<uint32_t&>(begin[i % n]); };
    for (size_t k = 0; k < m; ++k) {
      const uint32_t r1 = 1664525u * T(at(k) ^ at(k + p) ^ at(k + n - 1));
      const uint32_t r2 = r1 + (k == 0 ? uint32_t(s) : k <= s ? uint32_t(k % n) + v_[k - 1] : uint32_t(k % n));
      at(k + p) += r1;
      at(k + q) += r2;
      at(k) = r2;
    }
    for (size_t k = m; k < m + n; ++k) {
      const uint32_t r3 = 1566083941u * T(at(k) + at(k + p) + at(k + n - 1));
      const uint32_t r4 = r3 - uint32_t(k % n);
      at(k + p) ^= r3;
      at(k + q) ^= r4;
      at(k) = r4;
    }
  }

 private:
  std::array<uint32_t, N> v_;
};

// Initial state of rollout k in `episode` from its own stream: independent of K and threads.
// Episode 0 continues into the randomisation draws of init_batch (rng is returned for that).
// Written into b's rows in place (no temporaries: reset_rollouts runs inside VecEnv::step).
std::mt19937_64 draw_initial_state(const Scene& sc, const BatchOptions& opt, int k, uint32_t episode, StateBatch& b) {
  const uint32_t s0 = uint32_t(opt.seed), s1 = uint32_t(opt.seed >> 32);
  FixedSeedSeq<4> seq0({s0, s1, uint32_t(k), 0x6269u});
  FixedSeedSeq<5> seqe({s0, s1, uint32_t(k), 0x6269u, episode});
  std::mt19937_64 rng = episode == 0 ? std::mt19937_64(seq0) : std::mt19937_64(seqe);
  std::normal_distribution<double> N(0, 1);
  const int n = sc.model.n_q;
  Eigen::Map<VecX> th = b.row(b.theta, k), th_prev = b.row(b.theta_prev, k);
  for (int i = 0; i < n; ++i) th[i] = sc.theta0[i] + opt.perturb_theta * N(rng);
  // theta_{-1} = theta(0) - dt theta_dot(0)
  for (int i = 0; i < n; ++i) th_prev[i] = th[i] - sc.settings.dt * (sc.theta_dot0[i] + opt.perturb_theta_dot * N(rng));
  b.reset_chart(k, sc.model.n_chart);
  if (Mat3* c = b.chart_row(k, sc.model.n_chart); c && !sc.chart0.empty()) std::copy(sc.chart0.begin(), sc.chart0.end(), c);
  b.status[k] = 0;
  b.iterations[k] = 0;
  b.residual[k] = 0;
  b.stats[k] = StepStats{};
  return rng;
}
}  // namespace

void reset_rollouts(const Scene& sc, const BatchOptions& opt, StateBatch& b, const std::vector<int>& ks) {
  for (int k : ks) {
    BIGSTEP_CHECK_ARG(k >= 0 && k < b.K, "rollout index", k, detail::concat("must be in [0, K = ", b.K, ")"));
    draw_initial_state(sc, opt, k, ++b.episode[k], b);
  }
}

namespace {
// The randomised parameters of rollout k from rng: friction c_par and mu, stiffness c_perp, then
// one mass factor per link, each only when its option is on (so earlier options keep their streams).
void draw_params(const Scene& sc, const BatchOptions& opt, int k, std::mt19937_64& rng, RolloutParamTable& p) {
  const int L = sc.model.n_link;
  if (!p.contact.empty()) p.contact[k] = sc.settings.contact;
  if (opt.randomize_friction > 0) {
    std::uniform_real_distribution<double> U(-opt.randomize_friction, opt.randomize_friction);
    p.contact[k].c_par *= std::exp(U(rng));
    p.contact[k].mu *= std::exp(U(rng));
  }
  if (opt.randomize_stiffness > 0) {
    std::uniform_real_distribution<double> U(-opt.randomize_stiffness, opt.randomize_stiffness);
    const double f = std::exp(U(rng));  // one draw: PBD/PBFD's c_perp and the compliant K alike
    p.contact[k].c_perp *= f;
    p.stiffness_scale[k] = f;
  }
  if (opt.randomize_mass > 0) {
    std::uniform_real_distribution<double> U(-opt.randomize_mass, opt.randomize_mass);
    for (int j = 0; j < L; ++j) p.link_mass_scale[size_t(k) * L + j] = std::exp(U(rng));  // each link its own draw
  }
  if (!p.geom_mu.empty())
    draw_geom_mu(sc.model, opt.contact_mu_min, opt.contact_mu_max, rng,
                 p.geom_mu.data() + size_t(k) * size_t(sc.model.n_geom));
  if (opt.randomize_limit_stiffness > 0) {  // last: the earlier options keep their streams
    std::uniform_real_distribution<double> U(-opt.randomize_limit_stiffness, opt.randomize_limit_stiffness);
    p.contact[k].limit_scale = std::exp(U(rng));
  }
}
}  // namespace

void draw_geom_mu(const Model& m, double lo, double hi, std::mt19937_64& rng, double* out) {
  std::uniform_real_distribution<double> U(lo, hi);
  for (int g = 0; g < m.n_geom; ++g) out[g] = U(rng);
}

std::vector<double> scene_geom_mu(const Scene& sc) {
  if (!(sc.contact_mu_max > 0)) return {};
  std::seed_seq seq{uint32_t(sc.seed), uint32_t(sc.seed >> 32), 0x6d75u};  // "mu"
  std::mt19937_64 rng(seq);
  std::vector<double> mu(size_t(sc.model.n_geom));
  draw_geom_mu(sc.model, sc.contact_mu_min, sc.contact_mu_max, rng, mu.data());
  return mu;
}

void redraw_params(const Scene& sc, const BatchOptions& opt, const StateBatch& b, RolloutParamTable& p,
                   const std::vector<int>& ks) {
  if (p.contact.empty() && p.link_mass_scale.empty() && p.geom_mu.empty()) return;
  for (int k : ks) {
    BIGSTEP_CHECK_ARG(k >= 0 && k < b.K, "rollout index", k, detail::concat("must be in [0, K = ", b.K, ")"));
    if (b.episode[k] == 0) continue;  // init_batch's draws
    // a stream of its own per (seed, k, episode), apart from the initial-state stream
    FixedSeedSeq<5> seq({uint32_t(opt.seed), uint32_t(opt.seed >> 32), uint32_t(k), 0x7072u, b.episode[k]});
    std::mt19937_64 rng(seq);
    draw_params(sc, opt, k, rng, p);
  }
}

void init_batch(const Scene& sc, const BatchOptions& opt, StateBatch& b, RolloutParamTable& p) {
  BIGSTEP_CHECK_ARG(opt.rollouts >= 1, "--rollouts", opt.rollouts, "must be >= 1");
  BIGSTEP_CHECK_ARG(opt.randomize_stiffness >= 0 && opt.randomize_mass >= 0,
                    "batch.randomize_stiffness / randomize_mass",
                    detail::concat(opt.randomize_stiffness, " / ", opt.randomize_mass), "must be >= 0");
  BIGSTEP_CHECK_ARG(opt.randomize_limit_stiffness >= 0 && std::isfinite(opt.randomize_limit_stiffness),
                    "batch.randomize_limit_stiffness", opt.randomize_limit_stiffness, "must be finite and >= 0");
  BIGSTEP_CHECK_ARG(opt.perturb_theta >= 0 && opt.perturb_theta_dot >= 0 && opt.randomize_friction >= 0,
                    "batch.perturb_theta / perturb_theta_dot / randomize_friction",
                    detail::concat(opt.perturb_theta, " / ", opt.perturb_theta_dot, " / ", opt.randomize_friction),
                    "must be >= 0");
  // factors exp(U(-r, r)) stay finite and > 0, and within e^+-kMaxRandomizeSpread (io/scene_keys.h)
  const std::pair<const char*, double> spreads[] = {{"batch.randomize_friction", opt.randomize_friction},
                                                    {"batch.randomize_stiffness", opt.randomize_stiffness},
                                                    {"batch.randomize_mass", opt.randomize_mass},
                                                    {"batch.randomize_limit_stiffness", opt.randomize_limit_stiffness}};
  for (const auto& [key, r] : spreads)
    BIGSTEP_CHECK_ARG(r <= kMaxRandomizeSpread, key, r, detail::concat("must be in [0, ", kMaxRandomizeSpread, "]"));
  // the rollouts' rotation charts, set by each initial state
  if (sc.model.n_chart > 0) b.chart.assign(size_t(b.K) * sc.model.n_chart, Mat3::Identity());
  p.contact.clear();
  if (opt.randomize_friction > 0 || opt.randomize_stiffness > 0 || opt.randomize_limit_stiffness > 0)
    p.contact.resize(opt.rollouts, sc.settings.contact);
  p.stiffness_scale.assign(opt.randomize_stiffness > 0 ? size_t(opt.rollouts) : 0, 1.0);
  p.link_mass_scale.assign(opt.randomize_mass > 0 ? size_t(opt.rollouts) * sc.model.n_link : 0, 1.0);
  BIGSTEP_CHECK_ARG(opt.contact_mu_min >= 0 && (opt.contact_mu_max == 0 || opt.contact_mu_max >= opt.contact_mu_min),
                    "batch.contact_mu_min / contact_mu_max", detail::concat(opt.contact_mu_min, " / ", opt.contact_mu_max),
                    "expected 0 <= min <= max (max = 0: off)");
  p.geom_mu.assign(opt.contact_mu_max > 0 ? size_t(opt.rollouts) * sc.model.n_geom : 0, 0.0);
  for (int k = 0; k < opt.rollouts; ++k) {
    // per-rollout stream: independent of K and of the thread partition
    b.episode[k] = 0;
    std::mt19937_64 rng = draw_initial_state(sc, opt, k, 0, b);
    draw_params(sc, opt, k, rng, p);
  }
}

CpuBatchStepper::CpuBatchStepper(const Scene& sc, int threads)
    : sc_(sc), threads_(threads <= 0 ? omp_get_num_procs() : threads), stages_(sc, std::min(threads_, 1024)) {
  BIGSTEP_CHECK_ARG(threads_ <= 1024, "--threads", threads_, "must be in [1, 1024]");
  integ_ = make_integrator(sc);
}

void CpuBatchStepper::make_data(int K) {
  data_.clear();
  data_.reserve(K);
  for (int k = 0; k < K; ++k) data_.push_back(integ_->make_data());
  id_.clear();
  if (sc_.controller.inverse_dynamics())
    for (int k = 0; k < K; ++k) id_.push_back(std::make_unique<IdControllerState>(sc_.model, sc_.controller));
}

double RolloutParamTable::mass_ratio(const Model& m, int k) const {
  const double* s = mass_scale_row(k, m.n_link);
  return s && m.total_mass > 0 ? total_mass(m, s) / m.total_mass : 1.0;
}

void CpuBatchStepper::reset(const std::vector<int>& ks) {
  for (int k : ks)
    if (k >= 0 && k < int(data_.size())) {
      data_[k].reset_carry();
      if (!id_.empty()) id_[k] = std::make_unique<IdControllerState>(sc_.model, sc_.controller);  // new episode
    }
}

Model scale_mass(const Model& m, double s) {
  const std::vector<double> per_link(m.n_link, s);
  return scale_mass(m, per_link.data());
}

Model scale_mass(const Model& m, const double* link_scale) {
  for (int j = 0; j < m.n_link; ++j)
    BIGSTEP_CHECK_ARG(std::isfinite(link_scale[j]) && link_scale[j] > 0, detail::concat("mass scale of link ", j),
                      link_scale[j], "must be finite and > 0");
  ModelSpec spec{m.link_specs(), m.spheres, m.planes, m.gravity, {}, m.exclude, {}};
  // the pairs m dropped (no pair function: a1_walk's box-box, box-capsule) are dropped again, not refused
  spec.skip_unsupported_pairs = !m.skipped_pairs.empty();
  for (int u = 0; u < m.n_u; ++u)
    spec.actuators.push_back({m.actuator_name[u], m.actuator_dof[u], m.actuator_type[u], m.actuator_gear[u],
                              m.actuator_ctrllimited[u] != 0,
                              {m.actuator_ctrlrange[2 * size_t(u)], m.actuator_ctrlrange[2 * size_t(u) + 1]},
                              m.actuator_kp[u], m.actuator_kv[u]});
  // the explicit geoms come first in the geom arrays (the legacy spheres and planes follow)
  for (int g = 0; g < m.sphere_geom_adr; ++g)
    spec.geoms.push_back({m.geom_name[g], m.geom_link[g], m.geom_type[g], m.geom_pos[g], m.geom_R[g], m.geom_size[g],
                          m.geom_contype[g], m.geom_conaffinity[g], m.geom_hfield[g]});
  spec.height_fields = m.hfield;
  for (int j = 0; j < m.n_link; ++j) {
    spec.links[j].mass *= link_scale[j];
    spec.links[j].inertia *= link_scale[j];
  }
  return Model::finalize(spec);
}

void CpuBatchStepper::step(StateBatch& b, const RolloutParamTable& p, const double* tau, const double* theta_bar,
                           const double* theta_dot_bar) {
  BIGSTEP_CHECK_ARG(!theta_bar || sc_.pd.active(), "theta_bar", "per-rollout targets",
                    "need a stable-PD servo (control.pd gains) in the scene");
  BIGSTEP_CHECK_ARG(b.n_q == sc_.model.n_q, "StateBatch.n_q", b.n_q, detail::concat("expected ", sc_.model.n_q));
  BIGSTEP_CHECK_ARG(p.contact.empty() || int(p.contact.size()) == b.K, "RolloutParamTable.contact.size()",
                    p.contact.size(), detail::concat("expected 0 or K = ", b.K));
  BIGSTEP_CHECK_ARG(p.link_mass_scale.empty() || p.link_mass_scale.size() == size_t(b.K) * sc_.model.n_link,
                    "RolloutParamTable.link_mass_scale.size()", p.link_mass_scale.size(),
                    detail::concat("expected 0 or K x n_link = ", size_t(b.K) * sc_.model.n_link));
  BIGSTEP_CHECK_ARG(p.stiffness_scale.empty() || int(p.stiffness_scale.size()) == b.K,
                    "RolloutParamTable.stiffness_scale.size()", p.stiffness_scale.size(),
                    detail::concat("expected 0 or K = ", b.K));
  if (int(data_.size()) != b.K) make_data(b.K);
  const int nc = sc_.model.n_chart;
  if (nc > 0 && b.chart.size() != size_t(b.K) * nc) b.chart.assign(size_t(b.K) * nc, Mat3::Identity());
  const double t = b.steps * sc_.settings.dt;
  const size_t n = size_t(b.n_q);
  for_each_index(b.K, threads(), [&](int k) {
    if (b.status[k] & (STATUS_NONFINITE | STATUS_GIMBAL_LOCK | STATUS_FACTOR_FAILED | STATUS_CONTROL_DIVERGED))
      return;  // a dead rollout is held until the caller resets it
    const int lane = omp_get_thread_num();
    Data& d = data_[k];
    d.theta = b.row(b.theta, k);
    d.theta_prev = b.row(b.theta_prev, k);
    const RolloutParams rp{p.contact.empty() ? sc_.settings.contact : p.contact[k],
                           p.mass_scale_row(k, sc_.model.n_link), p.geom_mu_row(k, sc_.model.n_geom),
                           p.stiffness_scale.empty() ? 1.0 : p.stiffness_scale[k]};
    // 1. controls; the ID model assumes the rollout's friction coefficient when the table randomizes it
    const double mu = p.contact.empty() ? sc_.controller.mu : rp.contact.mu;
    Mat3* chart = b.chart_row(k, nc);
    const StepControl& u = stages_.controls(lane, t, d.theta, d.theta_prev, tau ? tau + k * n : nullptr,
                                            theta_bar ? theta_bar + k * n : nullptr,
                                            theta_dot_bar ? theta_dot_bar + k * n : nullptr,
                                            id_.empty() ? nullptr : id_[k].get(), mu, rp.geom_mu, chart);
    if (!id_.empty() && !tau && (id_[k]->status & ID_DIVERGED)) {  // held here, like a non-finite state
      b.status[k] = STATUS_CONTROL_DIVERGED | (b.status[k] & STATUS_NOT_CONVERGED);
      b.iterations[k] = 0;
      b.residual[k] = 0;
      b.stats[k] = StepStats{};
      b.stats[k].status = b.status[k];
      return;
    }
    // 2. advance and 3. the PD limit's re-steps, each from the rollout's row
    StepStats st = stages_.advance_limited(lane, u, b.row(b.theta, k), d.theta, [&](const StepControl& uu) {
      d.theta = b.row(b.theta, k);
      d.theta_prev = b.row(b.theta_prev, k);
      if (nc > 0) std::copy(chart, chart + nc, d.chart.begin());
      return integ_->step(d, uu, rp);
    });
    // 4. check outputs
    st.status |= stages_.check_outputs(lane, d.theta, d.chart.data());
    b.row(b.theta_prev, k) = d.theta_prev;
    b.row(b.theta, k) = d.theta;
    if (nc > 0) std::copy(d.chart.begin(), d.chart.end(), chart);
    b.status[k] = st.status | (b.status[k] & (STATUS_NOT_CONVERGED));  // keep "ever not converged"
    b.iterations[k] = st.iterations;
    b.residual[k] = st.residual;
    b.stats[k] = st;
  });
  ++b.steps;
}

}  // namespace bigstep
