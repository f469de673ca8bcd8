// The team-form PBFD residual (solvers/pbfd_residual_team.h, CPU emulation with shuffled lanes)
// equals the Eigen reference (solvers/pbfd_residual.cpp) on rollouts whose states all differ,
// with outputs poisoned before each call (style.md habit 14). Tolerance: both are FP64 sums of
// the same terms in different orders, so round-off only (1e-12 relative).
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "envs/scene.h"
#include "solvers/pbfd_residual.h"
#include "envs/batch.h"
#include "solvers/pbfd_residual_team.h"
#include "solvers/team.h"
#include "tests/support/tol.h"

using namespace bigstep;
using bigstep::test::tol;

namespace {

struct Flat {
  std::vector<double> R, t, c, tau;
  PbfdStepConst<double> view(const PbdStepInput& in) {
    R.clear();
    t.clear();
    c.clear();
    for (size_t j = 0; j < in.anchor.R.size(); ++j)
      for (int a = 0; a < 3; ++a) {
        t.push_back(in.anchor.t[j][a]);
        for (int b = 0; b < 3; ++b) R.push_back(in.anchor.R[j](a, b));
      }
    for (const Vec3& x : in.centre_n)
      for (int a = 0; a < 3; ++a) c.push_back(x[a]);
    tau.assign(in.tau.data(), in.tau.data() + in.tau.size());
    const ContactParams& cp = in.cp;
    return {R.data(), t.data(), c.data(), tau.data(), in.dt, cp.c_perp, cp.c_par, cp.alpha, cp.beta, cp.gamma};
  }
};

// link_scale (n_link factors, empty = 1): the reference runs on the scaled model (envs/batch.h
// scale_mass, the oracle) and on the unscaled one with PbdStepInput::mass_scale; the team form on the
// unscaled one with PbfdStepConst::mass_scale. pd: a stable-PD servo in both.
void compare(const Scene& sc, const std::vector<VecX>& th_n, const std::vector<VecX>& th_nm1,
             const std::vector<VecX>& th, double beta, const std::vector<double>& link_scale = {}, bool pd = false) {
  const double* ls = link_scale.empty() ? nullptr : link_scale.data();
  const Model m = ls ? scale_mass(sc.model, ls) : sc.model;
  const ModelArrays<double> arrays(sc.model);
  const ModelView<double> mv = arrays.view();
  PbdWorkspace ws(m);
  std::vector<double> scratch(pbfd_scratch_size(mv));
  CpuTeam team;
  ContactParams cp = sc.settings.contact;
  cp.beta = beta;
  for (size_t k = 0; k < th.size(); ++k) {
    VecX tau = VecX::LinSpaced(m.n_q, -0.3, 0.4) * double(k);
    PbdStepInput in = make_step_input(m, th_n[k], th_nm1[k], sc.settings.dt, tau, cp, ws);
    if (pd) {
      in.pd = true;
      in.kp = VecX::LinSpaced(m.n_q, 50, 400);
      in.kd = VecX::LinSpaced(m.n_q, 9, 1);
      in.kp[0] = in.kd[0] = 0;  // an unactuated DOF
      in.theta_bar = th[k] + VecX::LinSpaced(m.n_q, -0.1, 0.2);
      in.theta_dot_bar = VecX::LinSpaced(m.n_q, 0.5, -0.3);
      in.theta_n = th_n[k];
    }
    VecX r_ref;
    MatX J_ref;
    pbfd_residual(m, in, th[k], ws, r_ref, &J_ref);
    if (ls) {  // the reference's own per-link scale on the unscaled model equals the scaled model
      PbdWorkspace ws0(sc.model);
      PbdStepInput in0 = make_step_input(sc.model, th_n[k], th_nm1[k], sc.settings.dt, tau, cp, ws0);
      in0.mass_scale = ls;
      in0.pd = in.pd;
      in0.kp = in.kp;
      in0.kd = in.kd;
      in0.theta_bar = in.theta_bar;
      in0.theta_dot_bar = in.theta_dot_bar;
      in0.theta_n = in.theta_n;
      VecX r0;
      MatX J0;
      pbfd_residual(sc.model, in0, th[k], ws0, r0, &J0);
      CHECK((r0 - r_ref).lpNorm<Eigen::Infinity>() <= 1e-12 * (1 + r_ref.lpNorm<Eigen::Infinity>() + m.weight()));
      CHECK((J0 - J_ref).lpNorm<Eigen::Infinity>() <= 1e-12 * (1 + J_ref.lpNorm<Eigen::Infinity>()));
    }
    int active = 0;  // the comparison must cover contact terms with slip
    forward_kinematics(m, th[k], ws.kin);
    update_contacts(m, th[k], ws);
    for_each_active_contact(m, ws, [&](const Contact&, const Vec3& u) { active += u.norm() > 0; });
    INFO("rollout " << k << " active " << active << " spheres " << m.spheres.size());
    REQUIRE(active > 0);
    Flat flat;
    PbfdStepConst<double> c = flat.view(in);
    c.mass_scale = ls;
    if (pd) {
      c.kp = in.kp.data();
      c.kd = in.kd.data();
      c.theta_bar = in.theta_bar.data();
      c.theta_dot_bar = in.theta_dot_bar.data();
      c.theta_n = in.theta_n.data();
    }
    std::vector<double> r(m.n_q, std::nan("")), J(size_t(m.n_q) * m.n_q, std::nan(""));  // poisoned
    std::fill(scratch.begin(), scratch.end(), std::nan(""));
    pbfd_residual_team(team, mv, c, th[k].data(), scratch.data(), r.data(), J.data());
    const Eigen::Map<VecX> rv(r.data(), m.n_q);
    const Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> Jv(J.data(), m.n_q, m.n_q);
    INFO("rollout " << k << " |r| " << r_ref.norm() << " |J| " << J_ref.norm());
    REQUIRE(rv.allFinite());
    REQUIRE(Jv.allFinite());
    CHECK((rv - r_ref).lpNorm<Eigen::Infinity>() <= tol(1e-12) * (1 + r_ref.lpNorm<Eigen::Infinity>() + m.weight()));
    CHECK((Jv - J_ref).lpNorm<Eigen::Infinity>() <= tol(1e-12) * (1 + J_ref.lpNorm<Eigen::Infinity>()));
    // r alone (no Jacobian requested) is the same
    std::vector<double> r2(m.n_q, std::nan(""));
    pbfd_residual_team(team, mv, c, th[k].data(), scratch.data(), r2.data(), static_cast<double*>(nullptr));
    CHECK(r2 == r);
  }
}

}  // namespace

TEST_CASE("pbfd team residual equals the reference: floating chain in contact, mass scale, PD servo", "[team][pbfd][pd]") {
  const Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/chain_floating_ground.yaml",
                              {"contact.c_par=5e6"});
  std::mt19937 rng(4);
  std::normal_distribution<double> N(0, 1);
  std::vector<VecX> th_n, th_nm1, th;
  for (int k = 0; k < 4; ++k) {  // different state in every rollout, corners a few mm deep
    VecX q = sc.theta0;
    q[2] = 0.016 + 0.001 * k;
    for (int i = 3; i < sc.model.n_q; ++i) q[i] = 0.05 * N(rng);
    VecX qn = q, qnm1 = q;
    for (int i = 0; i < sc.model.n_q; ++i) {
      qn[i] -= 0.004 * N(rng);
      qnm1[i] = qn[i] - 0.004 * N(rng);
    }
    th.push_back(q);
    th_n.push_back(qn);
    th_nm1.push_back(qnm1);
  }
  compare(sc, th_n, th_nm1, th, 1.0);
  compare(sc, th_n, th_nm1, th, 1.5);  // beta != 1 exercises the (beta - 1) u u^T term
  // per-rollout mass scale (the team form scales the inertia and gravity terms, linear in link
  // masses and inertias, instead of holding a model per rollout) and the stable-PD servo
  // (-tau_pd and diag(K_p + K_d/dt))
  std::vector<double> ls(sc.model.n_link);
  for (int j = 0; j < sc.model.n_link; ++j) ls[j] = 0.4 + 0.23 * j;  // a different factor per link
  compare(sc, th_n, th_nm1, th, 1.0, ls);
  compare(sc, th_n, th_nm1, th, 1.0, std::vector<double>(sc.model.n_link, 2.7));
  compare(sc, th_n, th_nm1, th, 1.0, std::vector<double>(sc.model.n_link, 0.35), true);
  compare(sc, th_n, th_nm1, th, 1.0, ls, true);
  compare(sc, th_n, th_nm1, th, 1.0, {}, true);
}

TEST_CASE("pbfd team residual equals the reference: all joint types, tilted plane", "[team][pbfd]") {
  std::vector<std::string> ov{"contact.c_par=1e5", "contact.c_perp=1e5"};
  Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/tests/data/tree_all_joints.yaml", ov);
  // add contact spheres and a tilted plane so that contact terms are active
  ModelSpec spec;
  for (const auto& l : sc.model.links) spec.links.push_back(l);
  for (int j = 0; j < sc.model.n_link; ++j) spec.spheres.push_back({j, Vec3(0.05, 0.02, -0.03), 0.02 * (j % 2)});
  spec.planes.push_back({Vec3(0.2, -0.1, 1).normalized(), 0.5});
  spec.gravity = sc.model.gravity;
  sc.model = Model::finalize(spec);
  std::mt19937 rng(8);
  std::uniform_real_distribution<double> U(-0.6, 0.6);
  std::vector<VecX> th_n, th_nm1, th;
  for (int k = 0; k < 3; ++k) {
    VecX q(sc.model.n_q);
    for (int i = 0; i < q.size(); ++i) q[i] = U(rng);
    q[2] = 0.1 - 0.1 * k;  // base height: links reach below the tilted plane
    th.push_back(q);
    th_n.push_back(q + 0.01 * VecX::Ones(q.size()) * (k + 1));
    th_nm1.push_back(q + 0.03 * VecX::Ones(q.size()));
  }
  compare(sc, th_n, th_nm1, th, 1.0);
  std::vector<double> ls(sc.model.n_link);
  for (int j = 0; j < sc.model.n_link; ++j) ls[j] = 1.8 - 0.17 * j;
  compare(sc, th_n, th_nm1, th, 1.0, ls);  // per-link scales on every joint type
}

