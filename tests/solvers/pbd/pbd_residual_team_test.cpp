// The team-form PBFD residual (solvers/pbd/pbd_residual_team.h, CPU emulation with shuffled lanes)
// equals the Eigen reference (solvers/pbd/pbd_residual.cpp) on rollouts whose states all differ,
// with outputs poisoned before each call (docs/architecture.md §9 rule 4). Tolerance: both are FP64 sums of
// the same terms in different orders, so round-off only (1e-12 relative).
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <set>

#include "core/collision.h"
#include "io/scene.h"
#include "solvers/pbd/pbd_residual.h"
#include "batch/batch.h"
#include "solvers/pbd/pbd_residual_team.h"
#include "solvers/registry.h"
#include "solvers/team/team.h"
#include "solvers/team/team_thread.h"
#include "tests/support/tol.h"

using namespace bigstep;
using bigstep::test::tol;

namespace {

struct Flat {
  std::vector<double> R, t, c, tau, Rn, tn;
  // the link poses at theta_n (kin_n): a body pair's slip reference (PbfdStepConst::pose_n_*)
  void poses_n(const Kinematics& kin_n, PbfdStepConst<double>& v) {
    Rn.clear();
    tn.clear();
    for (size_t j = 0; j < kin_n.R.size(); ++j)
      for (int a = 0; a < 3; ++a) {
        tn.push_back(kin_n.t[j][a]);
        for (int b = 0; b < 3; ++b) Rn.push_back(kin_n.R[j](a, b));
      }
    v.pose_n_R = Rn.data();
    v.pose_n_t = tn.data();
  }
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
    PbfdStepConst<double> v{R.data(), t.data(), c.data(), tau.data(), in.dt, cp.c_perp, cp.c_par, cp.alpha, cp.beta, cp.gamma};
    v.coulomb = cp.friction == FrictionLaw::Coulomb;  // the friction law (docs/methods/pbfd.md §4.9)
    v.mu = cp.mu;
    v.delta = cp.stiction_velocity * in.dt;
    v.dt_a = in.dt_a;  // the time discretisation's steps and velocity reference (first order: dt, theta_n)
    v.dt_v = in.dt_v;
    v.theta_v = in.theta_v.data();
    return v;
  }
};

// link_scale (n_link factors, empty = 1): the reference runs on the scaled model (batch/batch.h
// scale_mass, the oracle) and on the unscaled one with PbdStepInput::mass_scale; the team form on the
// unscaled one with PbfdStepConst::mass_scale. pd: a stable-PD servo in both. order2 (integrator.order 2,
// docs/methods/pbfd.md §3.1): 0 first order, 1 the second order's fresh start (the team form's
// dt_v through its fresh flag), 2 the second order from a theta_{n-2} (theta~, theta_v, dt_a, dt_v).
void compare(const Scene& sc, const std::vector<VecX>& th_n, const std::vector<VecX>& th_nm1,
             const std::vector<VecX>& th, double beta, const std::vector<double>& link_scale = {}, bool pd = false,
             int order2 = 0) {
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
    const VecX nm2 = th_nm1[k] - 0.7 * (th_n[k] - th_nm1[k]) + 0.003 * VecX::LinSpaced(m.n_q, -1, 1);
    if (order2) make_step_input(m, th_n[k], th_nm1[k], sc.settings.dt, tau, cp, ws, in, 2, order2 == 2 ? &nm2 : nullptr);
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
      if (order2)
        make_step_input(sc.model, th_n[k], th_nm1[k], sc.settings.dt, tau, cp, ws0, in0, 2, order2 == 2 ? &nm2 : nullptr);
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
    int active = 0, body = 0;  // the comparison must cover contact terms with slip (and body pairs)
    forward_kinematics(m, th[k], ws.kin);
    update_contacts(m, th[k], ws);
    for_each_active_contact(m, ws, [&](const Contact& con, const Vec3& u) {
      active += u.norm() > 0;
      body += m.geom_type[con.geom_b] != GeomType::Plane;
    });
    INFO("rollout " << k << " active " << active << " body " << body << " point rows " << m.n_point_pair);
    REQUIRE(active > 0);
    if (m.n_body_pair > 0) REQUIRE(body > 0);
    Flat flat;
    PbfdStepConst<double> c = flat.view(in);
    flat.poses_n(ws.kin_n, c);
    c.mass_scale = ls;
    c.theta_n = in.theta_n.data();  // armature and damping read theta_n, theta_{n-1}
    c.theta_nm1 = th_nm1[k].data();
    const int fresh = kStepFresh;
    if (order2 == 2) c.theta_tilde = in.theta_pred.data();
    if (order2 == 1) {  // a wrong dt_v that the fresh flag must override
      c.kind = &fresh;
      c.dt_v_fresh = in.dt_v;
      c.dt_v = 2 * in.dt_v;
    }
    if (pd) {
      c.kp = in.kp.data();
      c.kd = in.kd.data();
      c.theta_bar = in.theta_bar.data();
      c.theta_dot_bar = in.theta_dot_bar.data();
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

// 4 states of the floating chain (seeded), different in every rollout, corners a few mm deep.
void chain_states(const Scene& sc, uint32_t seed, std::vector<VecX>& th_n, std::vector<VecX>& th_nm1,
                  std::vector<VecX>& th) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> N(0, 1);
  for (int k = 0; k < 4; ++k) {
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
}

// The chain's model with damping, armature, springs and limits on its hinges (link 0 is the
// floating base): some hinges without armature or spring, every other one limited to [-0.04, 0.03] (the states of
// chain_states() lie beyond both stops), some limits taking c_perp (limit_stiffness 0).
Model with_dof_terms(const Model& base) {
  ModelSpec spec;
  spec.links = base.link_specs();
  spec.spheres = base.spheres;
  spec.planes = base.planes;
  spec.gravity = base.gravity;
  for (size_t j = 1; j < spec.links.size(); ++j) {
    LinkSpec& lk = spec.links[j];
    lk.damping = 0.05 * double(j);
    lk.armature = j % 3 == 0 ? 0.0 : 0.002 * double(j);
    lk.limited = j % 2 == 1;
    lk.range[0] = -0.04;
    lk.range[1] = 0.03;
    lk.limit_stiffness = j % 4 == 1 ? 0.0 : 50.0 * double(j);
    lk.stiffness = j % 3 == 2 ? 0.0 : 0.8 * double(j);
    lk.springref = 0.01 * double(j % 5) - 0.02;
  }
  return Model::finalize(spec);
}

// DOFs of m beyond their lower / upper stop in the states th.
void count_stops(const Model& m, const std::vector<VecX>& th, int stops[2]) {
  for (const VecX& q : th)
    for (int i = 0; i < m.n_q; ++i)
      if (m.dof_limited[size_t(i)]) {
        stops[0] += q[i] < m.dof_range[2 * size_t(i)];
        stops[1] += q[i] > m.dof_range[2 * size_t(i) + 1];
      }
}

}  // namespace

TEST_CASE("pbfd team residual equals the reference: floating chain in contact, mass scale, PD servo", "[team][pbfd][pd]") {
  const Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/chain_floating_ground.yaml",
                              {"contact.c_par=5e6"});
  std::vector<VecX> th_n, th_nm1, th;
  chain_states(sc, 4, th_n, th_nm1, th);
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
  for (const auto& l : sc.model.link_specs()) spec.links.push_back(l);
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

TEST_CASE("pbfd team residual equals the reference: armature, damping, springs and joint limits", "[team][pbfd][dof]") {
  // the floating chain in contact with the per-DOF terms on its hinges (both stops passed); also
  // with per-link mass scales and the PD servo, whose damping term reads the same theta_n
  Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/chain_floating_ground.yaml", {"contact.c_par=5e6"});
  std::vector<VecX> th_n, th_nm1, th;
  chain_states(sc, 12, th_n, th_nm1, th);
  sc.model = with_dof_terms(sc.model);
  int stops[2] = {0, 0};
  count_stops(sc.model, th, stops);
  REQUIRE(stops[0] > 0);
  REQUIRE(stops[1] > 0);
  compare(sc, th_n, th_nm1, th, 1.0);
  compare(sc, th_n, th_nm1, th, 1.5);
  std::vector<double> ls(sc.model.n_link);
  for (int j = 0; j < sc.model.n_link; ++j) ls[j] = 0.4 + 0.23 * j;
  compare(sc, th_n, th_nm1, th, 1.0, ls);
  compare(sc, th_n, th_nm1, th, 1.0, ls, true);
  // the second-order step's constants: the inertia and armature terms at dt_a with the anchor and
  // theta~ of theta_{n-2}; damping and the servo's K_d at theta_v, dt_v (fresh: dt / 2)
  for (int order2 : {1, 2}) {
    INFO("order 2, " << (order2 == 1 ? "fresh" : "with theta_{n-2}"));
    compare(sc, th_n, th_nm1, th, 1.0, {}, true, order2);
    compare(sc, th_n, th_nm1, th, 1.5, ls, true, order2);
  }
}


TEST_CASE("pbfd team residual equals the reference: box, capsule and sphere geoms on planes", "[team][pbfd][geom]") {
  // explicit geoms against two world planes (the floor and a tilted one): the team form reads
  // them as point cores (Model::point_pair_*); the reference through collide()
  std::vector<std::string> ov{"contact.c_par=1e5", "contact.c_perp=1e5"};
  Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/tests/data/tree_all_joints.yaml", ov);
  ModelSpec spec;
  spec.links = sc.model.link_specs();
  spec.gravity = sc.model.gravity;
  const GeomType types[] = {GeomType::Box, GeomType::Capsule, GeomType::Sphere};
  for (int j = 0; j < sc.model.n_link; ++j) {
    GeomSpec g;
    g.link = j;
    g.type = types[j % 3];
    g.pos = Vec3(0.04, -0.02 * j, 0.03);
    g.R = Eigen::AngleAxisd(0.4 + 0.3 * j, Vec3(1, 2, -1).normalized()).toRotationMatrix();
    g.size = Vec3(0.05, 0.08, 0.03);
    g.contype = 0;  // planes only
    spec.geoms.push_back(g);
  }
  GeomSpec floor;
  floor.type = GeomType::Plane;
  spec.geoms.push_back(floor);
  GeomSpec tilted = floor;
  tilted.R = Eigen::AngleAxisd(0.3, Vec3(0.6, 0.8, 0)).toRotationMatrix();
  tilted.pos = Vec3(0, 0, 0.05);
  spec.geoms.push_back(tilted);
  sc.model = Model::finalize(spec);
  REQUIRE(sc.model.n_body_pair == 0);
  REQUIRE(team_unsupported(sc.model).empty());
  std::mt19937 rng(21);
  std::uniform_real_distribution<double> U(-0.6, 0.6);
  std::vector<VecX> th_n, th_nm1, th;
  for (int k = 0; k < 3; ++k) {
    VecX q(sc.model.n_q);
    for (int i = 0; i < q.size(); ++i) q[i] = U(rng);
    q[2] = -0.45 - 0.03 * k;  // base height (joint origin at z = 0.5): geoms reach below both planes
    th.push_back(q);
    th_n.push_back(q + 0.01 * VecX::Ones(q.size()) * (k + 1));
    th_nm1.push_back(q + 0.03 * VecX::Ones(q.size()));
  }
  compare(sc, th_n, th_nm1, th, 1.0);
  compare(sc, th_n, th_nm1, th, 1.5);
  std::vector<double> ls(sc.model.n_link);
  for (int j = 0; j < sc.model.n_link; ++j) ls[j] = 0.6 + 0.21 * j;
  compare(sc, th_n, th_nm1, th, 1.0, ls, true);
}

// ---------------------------------------------------------------------------------------------
// Per-DOF model terms (armature, damping, springs, joint limits; pbfd_dof_terms) against self-contained
// oracles: the agreed formulas written out by hand, and central differences for J_r. (team ==
// reference for these terms: the case above.)

namespace {

// r and J_r (row-major) of the team residual with the step's theta_n, theta_{n-1}.
struct TeamEval {
  std::vector<double> r, J;
};
TeamEval team_eval(const ModelView<double>& mv, PbfdStepConst<double> c, const VecX& theta_n, const VecX& theta_nm1,
                   const VecX& th) {
  c.theta_n = theta_n.data();
  c.theta_nm1 = theta_nm1.data();
  c.theta_v = theta_n.data();
  std::vector<double> scratch(pbfd_scratch_size(mv), std::nan(""));
  TeamEval e{std::vector<double>(mv.n_q, std::nan("")), std::vector<double>(size_t(mv.n_q) * mv.n_q, std::nan(""))};
  CpuTeam team;
  pbfd_residual_team(team, mv, c, th.data(), scratch.data(), e.r.data(), e.J.data());
  return e;
}

// Largest |J_r - central difference of r| (step h) relative to 1 + |J_r|_inf.
double fd_error(const ModelView<double>& mv, const PbfdStepConst<double>& c, const VecX& theta_n,
                const VecX& theta_nm1, const VecX& th, double h) {
  const TeamEval e = team_eval(mv, c, theta_n, theta_nm1, th);
  const int D = mv.n_q;
  double err = 0, Jmax = 0;
  for (int l = 0; l < D; ++l) {
    VecX tp = th, tm = th;
    tp[l] += h;
    tm[l] -= h;
    const TeamEval ep = team_eval(mv, c, theta_n, theta_nm1, tp), em = team_eval(mv, c, theta_n, theta_nm1, tm);
    for (int k = 0; k < D; ++k) {
      const double fd = (ep.r[k] - em.r[k]) / (2 * h);
      err = std::max(err, std::abs(fd - e.J[size_t(k) * D + l]));
      Jmax = std::max(Jmax, std::abs(e.J[size_t(k) * D + l]));
    }
  }
  return err / (1 + Jmax);
}

}  // namespace

// Body pairs (Model "body pairs": spheres and capsules on two links, or a link and a world geom):
// the team form finds their contacts itself (core segments) and adds J^T K J of J = J_a - J_b densely.

namespace {

// tree_all_joints with a sphere or capsule (box: a box) on every link and a world capsule (box),
// colliding only with each other (contype 2; no plane): every pair of non-adjacent links, in each
// type order. With boxes the box-box pairs have no pair function and are dropped (as a1_walk's).
Scene body_pair_scene(const std::vector<std::string>& ov, bool box = false) {
  Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/tests/data/tree_all_joints.yaml", ov);
  ModelSpec spec;
  spec.links = sc.model.link_specs();
  spec.gravity = sc.model.gravity;
  spec.skip_unsupported_pairs = box;
  const GeomType odd = box ? GeomType::Box : GeomType::Capsule;
  for (int j = -1; j < sc.model.n_link; ++j) {
    GeomSpec g;
    g.link = j;
    g.type = j % 2 == 0 ? GeomType::Sphere : odd;
    g.pos = j < 0 ? Vec3(0.1, 0, 0.35) : Vec3(0.05, -0.02 * j, 0.03);
    g.R = Eigen::AngleAxisd(0.4 + 0.3 * j, Vec3(1, 2, -1).normalized()).toRotationMatrix();
    g.size = g.type == GeomType::Box ? Vec3(0.1, 0.07, 0.05) : Vec3(0.12, 0.15, 0);
    g.contype = g.conaffinity = 2;
    spec.geoms.push_back(g);
  }
  sc.model = Model::finalize(spec);
  return sc;
}

// Where a sphere-box contact c lies: the sphere's centre in the box frame, beyond the box on
// `outside` of its three axes (0: inside, the face branch; 3: a corner, a material point of the box).
int box_outside_axes(const Model& m, const Kinematics& kin, const Contact& c) {
  const bool box_b = m.geom_type[c.geom_b] == GeomType::Box;
  const GeomFrame box = geom_frame(m, kin, box_b ? c.geom_b : c.geom_a);
  const GeomFrame sphere = geom_frame(m, kin, box_b ? c.geom_a : c.geom_b);
  const Vec3 x = box.R.transpose() * (sphere.p - box.p);
  return int((x.cwiseAbs() - box.size).array().cwiseMax(0.0).cwiseSign().sum());
}

// kInside marks a sphere-box contact whose centre is inside the box (type b + kInside, or a + kInside)
constexpr int kInside = 10;

// The (type a, type b) pairs of the reference's contacts in penetration between two bodies at th.
std::set<std::pair<int, int>> body_contact_types(const Model& m, const VecX& th) {
  PbdWorkspace ws(m);
  forward_kinematics(m, th, ws.kin);
  update_contacts(m, th, ws);
  std::set<std::pair<int, int>> types;
  for (int i = 0; i < ws.cs.n_con; ++i) {
    const Contact& c = ws.cs.con[size_t(i)];
    if (!(c.depth > 0) || m.geom_type[c.geom_b] == GeomType::Plane) continue;
    std::pair<int, int> t{int(m.geom_type[c.geom_a]), int(m.geom_type[c.geom_b])};
    if ((t.first == int(GeomType::Box) || t.second == int(GeomType::Box)) && box_outside_axes(m, ws.kin, c) == 0)
      (t.first == int(GeomType::Box) ? t.first : t.second) += kInside;
    types.insert(t);
  }
  return types;
}

// Seeded random states of sc with a body contact each (theta_n, theta_{n-1} nearby: slip), until
// n states are found and every type pair of `want` has been seen.
void body_contact_states(const Scene& sc, int n, const std::set<std::pair<int, int>>& want, const VecX& lo,
                         const VecX& hi, std::vector<VecX>& th_n, std::vector<VecX>& th_nm1, std::vector<VecX>& th) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> U(0, 1);
  std::set<std::pair<int, int>> seen;
  for (int tries = 0; tries < 2000 && (int(th.size()) < n || seen.size() < want.size()); ++tries) {
    VecX q(sc.model.n_q);
    for (int i = 0; i < q.size(); ++i) q[i] = lo[i] + (hi[i] - lo[i]) * U(rng);
    const auto types = body_contact_types(sc.model, q);
    bool fresh = false;
    for (const auto& t : types) fresh = fresh || (want.count(t) && seen.insert(t).second);
    if (types.empty() || (int(th.size()) >= n && !fresh)) continue;
    th.push_back(q);
    th_n.push_back(q + 0.004 * VecX::LinSpaced(q.size(), -1, 1.5));
    th_nm1.push_back(q + 0.01 * VecX::LinSpaced(q.size(), 1, -0.5));
  }
  CHECK(seen == want);
  REQUIRE(int(th.size()) >= n);
}

// tree_all_joints with one sphere per link (r = 0.14, colliding with each other only): every body
// contact's cores are material points (sphere centres), so J_r is exact and finite differences check it
Scene sphere_pair_scene(const std::vector<std::string>& ov) {
  Scene sc = body_pair_scene(ov);
  ModelSpec spec;
  spec.links = sc.model.link_specs();
  spec.gravity = sc.model.gravity;
  for (int j = 0; j < sc.model.n_link; ++j) {
    GeomSpec g;
    g.link = j;
    g.pos = Vec3(0.05, -0.02 * j, 0.03);
    g.size = Vec3(0.14, 0, 0);
    g.contype = g.conaffinity = 2;
    spec.geoms.push_back(g);
  }
  sc.model = Model::finalize(spec);
  return sc;
}

// States of a sphere_pair_scene with sphere contacts: for each contact law, the team's J_r and the
// reference's against central differences of their r
void check_sphere_pair_fd(const Scene& sc, const std::vector<ContactParams>& laws) {
  const int S = int(GeomType::Sphere);
  std::vector<VecX> th_n, th_nm1, th;
  const VecX lo = VecX::Constant(sc.model.n_q, -0.8), hi = VecX::Constant(sc.model.n_q, 0.8);
  body_contact_states(sc, 3, {{S, S}}, lo, hi, th_n, th_nm1, th);
  const ModelArrays<double> arrays(sc.model);
  const ModelView<double> mv = arrays.view();
  PbdWorkspace ws(sc.model);
  for (size_t k = 0; k < th.size(); ++k) {
    for (const ContactParams& cp : laws) {
      const VecX tau = VecX::LinSpaced(sc.model.n_q, -0.3, 0.4);
      const PbdStepInput in = make_step_input(sc.model, th_n[k], th_nm1[k], sc.settings.dt, tau, cp, ws);
      Flat flat;
      PbfdStepConst<double> c = flat.view(in);
      flat.poses_n(ws.kin_n, c);
      INFO("state " << k << " beta " << cp.beta << " coulomb " << (cp.friction == FrictionLaw::Coulomb) << " v_s "
                    << cp.stiction_velocity);
      CHECK(fd_error(mv, c, th_n[k], th_nm1[k], th[k], 1e-6) < 1e-6);
      VecX r;
      MatX Jr;
      pbfd_residual(sc.model, in, th[k], ws, r, &Jr);
      MatX Jfd(sc.model.n_q, sc.model.n_q);
      for (int l = 0; l < sc.model.n_q; ++l) {
        VecX tp = th[k], tm = th[k], rp, rm;
        tp[l] += 1e-6;
        tm[l] -= 1e-6;
        pbfd_residual(sc.model, in, tp, ws, rp, nullptr);
        pbfd_residual(sc.model, in, tm, ws, rm, nullptr);
        Jfd.col(l) = (rp - rm) / 2e-6;
      }
      CHECK((Jfd - Jr).cwiseAbs().maxCoeff() / (1 + Jr.cwiseAbs().maxCoeff()) < 1e-6);
    }
  }
}

// body_pair_scene's states with every contact kind of want (the base near the world geom): r and
// J_r against the reference at beta 1 and 1.5, and with per-link mass scales and a PD servo
void compare_body_pair_scene(const Scene& sc, const std::set<std::pair<int, int>>& want) {
  std::vector<VecX> th_n, th_nm1, th;
  VecX lo = VecX::Constant(sc.model.n_q, -0.8), hi = VecX::Constant(sc.model.n_q, 0.8);
  lo.head(3) << -0.2, -0.2, -0.6;
  hi.head(3) << 0.2, 0.2, -0.2;
  body_contact_states(sc, 4, want, lo, hi, th_n, th_nm1, th);
  compare(sc, th_n, th_nm1, th, 1.0);
  compare(sc, th_n, th_nm1, th, 1.5);
  std::vector<double> ls(sc.model.n_link);
  for (int j = 0; j < sc.model.n_link; ++j) ls[j] = 0.6 + 0.21 * j;
  compare(sc, th_n, th_nm1, th, 1.0, ls, true);
}

}  // namespace

TEST_CASE("pbfd team residual equals the reference: sphere and capsule pairs between links and the world",
          "[team][pbfd][body]") {
  // every body pair type of the tasks (sphere-sphere, sphere-capsule either order, capsule-capsule)
  // and a world capsule, friction on (turning normals): r and J_r as the reference's collide() path
  const Scene sc = body_pair_scene({"contact.c_par=1e5", "contact.c_perp=1e5"});
  REQUIRE(sc.model.n_body_pair > 10);
  REQUIRE(sc.model.n_point_pair == 0);
  REQUIRE(team_unsupported(sc.model).empty());
  const int S = int(GeomType::Sphere), C = int(GeomType::Capsule);
  compare_body_pair_scene(sc, {{S, S}, {S, C}, {C, S}, {C, C}});
}

TEST_CASE("pbfd team residual equals the reference: gymnasium hopper with its leg folded into itself",
          "[team][pbfd][body]") {
  // the hopper task's three capsule-capsule pairs (leg / foot against torso, foot against thigh):
  // states with the knee folded so that the foot's capsule enters the thigh's
  const Scene sc = load_scene("gymnasium:hopper.xml", {"integrator.type=pbfd", "contact.c_par=1e5"});
  REQUIRE(sc.model.n_body_pair == 3);
  REQUIRE(team_unsupported(sc.model).empty());
  const int C = int(GeomType::Capsule);
  std::vector<VecX> th_n, th_nm1, th;
  VecX lo(6), hi(6);
  lo << -0.1, 0.0, -0.3, -2.6, -2.6, -0.8;
  hi << 0.1, 0.3, 0.3, 0.0, 0.0, 0.8;
  body_contact_states(sc, 3, {{C, C}}, lo, hi, th_n, th_nm1, th);
  compare(sc, th_n, th_nm1, th, 1.0);
}

TEST_CASE("pbfd team residual equals the reference: sphere-box pairs between links and the world", "[team][pbfd][body][box]") {
  // spheres against boxes on links and a world box, in both orders, the centre outside the box
  // (closest surface point, turning normal) and inside (the nearest face's normal, kappa 0):
  // r and J_r as the reference's collide_sphere_box path (core/box_closest.h in both)
  const Scene sc = body_pair_scene({"contact.c_par=1e5", "contact.c_perp=1e5"}, true);
  REQUIRE(sc.model.n_body_pair > 10);
  REQUIRE(!sc.model.skipped_pairs.empty());  // box-box: no pair function, dropped
  REQUIRE(team_unsupported(sc.model).empty());
  const int S = int(GeomType::Sphere), B = int(GeomType::Box);
  compare_body_pair_scene(sc, {{S, S}, {S, B}, {B, S}, {S, B + kInside}, {B + kInside, S}});
}

TEST_CASE("pbfd team residual: a sphere on a box corner, the Jacobian equals central differences", "[team][pbfd][body][box]") {
  // a sphere centre beyond a box on all three axes touches its corner, a material point of the box
  // (like a sphere's centre): the reference's J_r is exact there, so the team's J_r must equal the
  // differences of its r (friction and the turning normal kappa = 1/|x_a - x_b| included)
  const Scene sc = body_pair_scene({"contact.c_par=3e4", "contact.c_perp=1e5"}, true);
  const ModelArrays<double> arrays(sc.model);
  const ModelView<double> mv = arrays.view();
  PbdWorkspace ws(sc.model);
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> U(-0.8, 0.8);
  int tested = 0;
  for (int tries = 0; tries < 4000 && tested < 3; ++tries) {
    VecX q(sc.model.n_q);
    for (int i = 0; i < q.size(); ++i) q[i] = U(rng);
    forward_kinematics(sc.model, q, ws.kin);
    update_contacts(sc.model, q, ws);
    // every contact in penetration a sphere-box corner contact, at least one
    int corners = 0, others = 0;
    for (int i = 0; i < ws.cs.n_con; ++i) {
      const Contact& con = ws.cs.con[size_t(i)];
      if (!(con.depth > 0)) continue;
      const bool box = sc.model.geom_type[con.geom_a] == GeomType::Box || sc.model.geom_type[con.geom_b] == GeomType::Box;
      (box && box_outside_axes(sc.model, ws.kin, con) == 3 ? corners : others) += 1;
    }
    if (corners == 0 || others > 0) continue;
    ++tested;
    const VecX th_n = q + 0.004 * VecX::LinSpaced(q.size(), -1, 1.5), th_nm1 = q + 0.01 * VecX::LinSpaced(q.size(), 1, -0.5);
    for (const double beta : {1.0, 1.5}) {
      ContactParams cp = sc.settings.contact;
      cp.beta = beta;
      const VecX tau = VecX::LinSpaced(sc.model.n_q, -0.3, 0.4);
      const PbdStepInput in = make_step_input(sc.model, th_n, th_nm1, sc.settings.dt, tau, cp, ws);
      Flat flat;
      PbfdStepConst<double> c = flat.view(in);
      flat.poses_n(ws.kin_n, c);
      const double err = fd_error(mv, c, th_n, th_nm1, q, 1e-6);
      INFO("try " << tries << " corners " << corners << " beta " << beta);
      CHECK(err < 1e-6);
    }
  }
  CHECK(tested == 3);
}

TEST_CASE("pbfd team residual: the body-pair Jacobian block equals central differences", "[team][pbfd][body]") {
  // spheres only (a sphere's core is its centre, a material point: the reference's J_r is exact
  // there, friction and turning normal included), so J_r must equal the differences of r
  const Scene sc = sphere_pair_scene({"contact.c_par=3e4", "contact.c_perp=1e5"});
  REQUIRE(sc.model.n_body_pair > 5);
  std::vector<ContactParams> laws(2, sc.settings.contact);
  laws[1].beta = 1.5;
  check_sphere_pair_fd(sc, laws);
}

TEST_CASE("pbfd team residual: armature, damping, spring and joint limit of a 1-DOF hinge by hand", "[team][pbfd][dof]") {
  // one hinge about the vertical z axis carrying a point mass m at (l, 0, 0): gravity does no work,
  // so r = inertia + armature + damping + spring + limit, each written out below (PBFD paper Eqs. (6), (13))
  const double mass = 2.0, l = 0.3, a = 0.05, b = 0.7, ks = 3.0, ref = 0.07, lo = -0.4, hi = 0.5, dt = 0.01;
  for (double limit_k : {800.0, 0.0}) {
    ModelSpec spec;
    LinkSpec link;
    link.name = "arm";
    link.joint = JointType::Hinge;
    link.axis = Vec3::UnitZ();
    link.mass = mass;
    link.com = Vec3(l, 0, 0);
    link.limited = true;
    link.range[0] = lo;
    link.range[1] = hi;
    link.limit_stiffness = limit_k;
    link.damping = b;
    link.armature = a;
    link.stiffness = ks;
    link.springref = ref;
    spec.links.push_back(link);
    const Model m = Model::finalize(spec);
    const ModelArrays<double> arrays(m);
    const ModelView<double> mv = arrays.view();
    const double c_perp = 3e4, alpha = 1.5;
    const double C = limit_k != 0 ? limit_k : c_perp;  // dof_limit_k, or c_perp when 0
    auto p = [&](double q) { return Vec3(l * std::cos(q), l * std::sin(q), 0); };
    for (double th : {-0.45, 0.1, 0.56}) {  // beyond the lower stop, inside, beyond the upper stop
      const double th_n = th + 0.013, th_nm1 = th_n + 0.021;
      // anchor 2 T(theta_n) - T(theta_{n-1}): R_z rotations, origin fixed at 0
      auto Rz = [](double q) { return Eigen::AngleAxisd(q, Vec3::UnitZ()).toRotationMatrix(); };
      const Eigen::Matrix<double, 3, 3, Eigen::RowMajor> A = 2 * Rz(th_n) - Rz(th_nm1);
      const std::vector<double> anchor_t(3, 0.0), tau(1, 0.0);
      PbfdStepConst<double> c{A.data(), anchor_t.data(), nullptr, tau.data(), dt, c_perp, 0.0, alpha, 1.0, 1.0};
      c.dt_a = c.dt_v = dt;
      const VecX vn = VecX::Constant(1, th_n), vnm1 = VecX::Constant(1, th_nm1), v = VecX::Constant(1, th);
      const TeamEval e = team_eval(mv, c, vn, vnm1, v);
      // by hand
      const Vec3 pt = p(th), p_tilde = 2 * p(th_n) - p(th_nm1);
      const Vec3 dp(-l * std::sin(th), l * std::cos(th), 0), d2p = -Vec3(pt.x(), pt.y(), 0);
      const double th_tilde = 2 * th_n - th_nm1;
      double r = mass / (dt * dt) * (pt - p_tilde).dot(dp) + a * (th - th_tilde) / (dt * dt) + b * (th - th_n) / dt +
                 ks * (th - ref);
      double J = mass / (dt * dt) * (dp.squaredNorm() + (pt - p_tilde).dot(d2p)) + a / (dt * dt) + b / dt + ks;
      const double d = th < lo ? lo - th : th > hi ? th - hi : 0, s = th < lo ? 1 : -1;
      if (d > 0) {
        r += -s * C * std::pow(d, alpha);
        J += C * alpha * std::pow(d, alpha - 1);
      }
      INFO("limit_k " << limit_k << " theta " << th);
      CHECK(std::abs(e.r[0] - r) <= 1e-12 * (1 + std::abs(r)));
      CHECK(std::abs(e.J[0] - J) <= 1e-12 * (1 + std::abs(J)));
      // central differences (h = 1e-6: truncation ~h^2 |r'''|, round-off ~eps |r| / h)
      CHECK(fd_error(mv, c, vn, vnm1, v, 1e-6) <= 1e-7);
    }
  }
}

TEST_CASE("pbfd team residual: per-DOF terms on a floating chain in contact", "[team][pbfd][dof]") {
  // the chain with damping, armature, springs and limits on its hinges: the team residual minus the same
  // residual on the plain chain is exactly the diagonal of the formulas; J_r by central differences
  const Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/chain_floating_ground.yaml",
                              {"contact.c_par=5e6"});
  const Model m = with_dof_terms(sc.model);
  const ModelArrays<double> arrays(m), arrays0(sc.model);
  const ModelView<double> mv = arrays.view(), mv0 = arrays0.view();
  PbdWorkspace ws(sc.model);
  const ContactParams cp = sc.settings.contact;
  const double dt = sc.settings.dt;
  std::vector<VecX> th_n, th_nm1, th;
  chain_states(sc, 12, th_n, th_nm1, th);
  int stops[2] = {0, 0};
  for (size_t k = 0; k < th.size(); ++k) {
    const VecX &q = th[k], &qn = th_n[k], &qnm1 = th_nm1[k];
    const PbdStepInput in = make_step_input(sc.model, qn, qnm1, dt, VecX::LinSpaced(m.n_q, -0.3, 0.4), cp, ws);
    Flat flat;
    const PbfdStepConst<double> c = flat.view(in);
    const TeamEval e = team_eval(mv, c, qn, qnm1, q), e0 = team_eval(mv0, c, qn, qnm1, q);
    const int D = m.n_q;
    for (int i = 0; i < D; ++i) {
      double r = m.dof_armature[i] * (q[i] - (2 * qn[i] - qnm1[i])) / (dt * dt) + m.dof_damping[i] * (q[i] - qn[i]) / dt +
                 m.dof_stiffness[i] * (q[i] - m.dof_springref[i]);
      double J = m.dof_armature[i] / (dt * dt) + m.dof_damping[i] / dt + m.dof_stiffness[i];
      if (m.dof_limited[i]) {
        const double lo = m.dof_range[2 * i], hi = m.dof_range[2 * i + 1];
        const double d = std::max(lo - q[i], q[i] - hi), s = lo - q[i] >= q[i] - hi ? 1 : -1;
        const double C = m.dof_limit_k[i] != 0 ? m.dof_limit_k[i] : cp.c_perp;
        if (d > 0) {
          ++stops[s > 0 ? 0 : 1];
          r += -s * C * std::pow(d, cp.alpha);
          J += C * cp.alpha * std::pow(d, cp.alpha - 1);
        }
      }
      INFO("rollout " << k << " dof " << i);
      CHECK(std::abs((e.r[i] - e0.r[i]) - r) <= 1e-12 * (1 + std::abs(e0.r[i]) + std::abs(r) + m.weight()));
      for (int l = 0; l < D; ++l) {
        const double dJ = e.J[size_t(i) * D + l] - e0.J[size_t(i) * D + l];
        CHECK(std::abs(dJ - (i == l ? J : 0.0)) <= 1e-12 * (1 + std::abs(e0.J[size_t(i) * D + l]) + std::abs(J)));
      }
    }
    // contacts stiff, slip small: h = 1e-7 keeps truncation below round-off at this tolerance
    CHECK(fd_error(mv, c, qn, qnm1, q, 1e-7) <= 1e-5);
  }
  CHECK(stops[0] > 0);  // both stops covered
  CHECK(stops[1] > 0);
}

TEST_CASE("pbfd team residual on OS-thread lanes (ThreadTeam) equals the sequential lanes bit for bit",
          "[team][pbfd][thread_team]") {
  // Every lane writes only its own entries with fixed-order sums, so r and J_r do not depend on
  // which lane runs when; with real concurrent lanes a missing sync() shows up as a difference
  // here (and as a data race under ThreadSanitizer, ctest -L tsan). Lanes: a warp, and 5 (lanes
  // owning several entries, D = 15 not a multiple).
  const Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/chain_floating_ground.yaml",
                              {"contact.c_par=5e6"});
  const Model m = with_dof_terms(sc.model);
  std::vector<VecX> th_n, th_nm1, th;
  chain_states(sc, 4, th_n, th_nm1, th);
  const ModelArrays<double> arrays(m);
  const ModelView<double> mv = arrays.view();
  const double dt = sc.settings.dt;
  const ContactParams& cp = sc.settings.contact;
  for (int lanes : {32, 5}) {
    ThreadTeamRunner runner(lanes);
    for (size_t k = 0; k < th.size(); ++k) {
      std::vector<double> R(9 * m.n_link), t(3 * m.n_link), c(3 * m.n_point), tau(m.n_q, 0.1 * double(k));
      {  // step constants at theta_n, theta_{n-1} (as the reference's make_step_input)
        PbdWorkspace ws(m);
        const PbdStepInput in = make_step_input(m, th_n[k], th_nm1[k], dt, VecX::Zero(m.n_q), cp, ws);
        for (int j = 0; j < m.n_link; ++j)
          for (int a = 0; a < 3; ++a) {
            t[3 * j + a] = in.anchor.t[j][a];
            for (int b = 0; b < 3; ++b) R[9 * j + 3 * a + b] = in.anchor.R[j](a, b);
          }
        for (int s = 0; s < m.n_point; ++s)
          for (int a = 0; a < 3; ++a) c[3 * s + a] = in.centre_n[s][a];
      }
      PbfdStepConst<double> in{R.data(), t.data(), c.data(), tau.data(), dt, cp.c_perp, cp.c_par, cp.alpha, cp.beta, cp.gamma};
      in.theta_n = th_n[k].data();
      in.theta_nm1 = th_nm1[k].data();
      in.dt_a = in.dt_v = dt;
      in.theta_v = in.theta_n;
      const int D = m.n_q;
      std::vector<double> scratch(pbfd_scratch_size(mv), std::nan("")), r0(D), J0(size_t(D) * D);
      CpuTeam seq;
      pbfd_residual_team(seq, mv, in, th[k].data(), scratch.data(), r0.data(), J0.data());
      std::vector<double> r(D, std::nan("")), J(size_t(D) * D, std::nan(""));
      std::fill(scratch.begin(), scratch.end(), std::nan(""));
      runner.run([&](ThreadTeam& team) { pbfd_residual_team(team, mv, in, th[k].data(), scratch.data(), r.data(), J.data()); });
      INFO("lanes " << lanes << " rollout " << k);
      CHECK(r == r0);
      CHECK(J == J0);
    }
  }
}

// The regularised Coulomb law (docs/methods/pbfd.md §4.9) in the team form: plane contacts and body
// pairs with turning normals, against the reference; its J_r against central differences.
// v_s = 0.5 m/s: delta = 5 mm, the slips of these states (mm) sit in the law's curved core.
TEST_CASE("pbfd team residual equals the reference with the Coulomb law: chain on the ground, body pairs",
          "[team][pbfd][coulomb]") {
  const std::vector<std::string> coulomb{"contact.friction=coulomb", "contact.mu=0.7", "contact.stiction_velocity=0.5"};
  {
    std::vector<std::string> ov = coulomb;
    ov.push_back("contact.c_par=0");  // unused by the law
    const Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/chain_floating_ground.yaml", ov);
    std::vector<VecX> th_n, th_nm1, th;
    chain_states(sc, 4, th_n, th_nm1, th);
    compare(sc, th_n, th_nm1, th, 1.0);
    std::vector<double> ls(sc.model.n_link);
    for (int j = 0; j < sc.model.n_link; ++j) ls[j] = 0.4 + 0.23 * j;
    compare(sc, th_n, th_nm1, th, 1.0, ls, true);
  }
  std::vector<std::string> ov = coulomb;
  ov.push_back("contact.c_perp=1e5");
  const int S = int(GeomType::Sphere), C = int(GeomType::Capsule), B = int(GeomType::Box);
  compare_body_pair_scene(body_pair_scene(ov), {{S, S}, {S, C}, {C, S}, {C, C}});
  compare_body_pair_scene(body_pair_scene(ov, true), {{S, S}, {S, B}, {B, S}, {S, B + kInside}, {B + kInside, S}});
}

TEST_CASE("pbfd residual with the Coulomb law: body-pair J_r (turning normals) equals central differences",
          "[team][pbfd][body][coulomb][fd]") {
  // as the power-law test above: v_s = 0.5 m/s (delta 5 mm, the law's curved core) and 0.02 (saturated)
  const Scene sc = sphere_pair_scene({"contact.friction=coulomb", "contact.mu=0.9", "contact.c_perp=1e5"});
  std::vector<ContactParams> laws(2, sc.settings.contact);
  laws[0].stiction_velocity = 0.5;
  laws[1].stiction_velocity = 0.02;
  check_sphere_pair_fd(sc, laws);
}
