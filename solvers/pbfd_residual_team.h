// PBFD residual r(theta) and exact Jacobian J_r (spec pbfd.md §4.6, Eq. 13) written once against
// the team interface (solvers/team.h): lane k owns r_k and row k of J_r. Instantiated by the CPU
// emulation (tests, CPU batched backend) and by CUDA (cuda/pbfd_residual.cu). Mirrors the Eigen
// reference solvers/pbfd_residual.cpp term by term (inertia §3, gravity §2.4, normal §4.2,
// friction §4.4) plus the per-DOF armature, damping, spring and joint-limit terms (pbfd_dof_terms); the
// second link-pose derivatives use the twist rule a |> d_b T (§2.3).
#pragma once
#include "core/model_view.h"

namespace bigstep {

/// Constants of one PBFD step for one rollout (see solvers/pbd_context.h for the reference form).
template <class S>
struct PbfdStepConst {
  const S* anchor_R;   // (n_link x 9) 2 R(theta_n) - R(theta_{n-1})
  const S* anchor_t;   // (n_link x 3)
  const S* centre_n;   // (n_point x 3) core points at theta_n (Model point_*)
  const S* tau;        // (n_q)
  S dt, c_perp, c_par, alpha, beta, gamma;
  // per-rollout randomisation: link j's mass and inertia times mass_scale[j] (n_link, nullptr = 1;
  // RolloutParams::link_mass_scale). Inertia §3 and gravity §2.4 are linear in them per link, so
  // s_j multiplies link j's terms.
  const S* mass_scale = nullptr;
  // backward-Euler stable PD (pbfd.md §4.6, nmdp.md §9), kp == nullptr = none:
  // r += K_p (theta - theta_bar) + K_d ((theta - theta_n)/dt - theta_dot_bar), J += diag(K_p + K_d/dt)
  const S *kp = nullptr, *kd = nullptr, *theta_bar = nullptr, *theta_dot_bar = nullptr, *theta_n = nullptr;
  // theta_{n-1} (n_q): with theta_n above, read by the armature and damping terms of a DOF whose
  // dof_armature / dof_damping is non-zero (both may stay null for a model without them)
  const S* theta_nm1 = nullptr;
};

/// Team scratch size (number of S) for one rollout of model m.
template <class S>
BIGSTEP_HD int pbfd_scratch_size(const ModelView<S>& m) {
  return m.n_link * 12 + m.n_q * 6 + m.n_link * m.n_q * 12;
}

namespace team_detail {

template <class S>
struct Scratch {
  S *R, *t, *w, *o, *dR, *dt;
  BIGSTEP_HD Scratch(S* p, const ModelView<S>& m)
      : R(p), t(p + 9 * m.n_link), w(t + 3 * m.n_link), o(w + 3 * m.n_q), dR(o + 3 * m.n_q),
        dt(dR + 9 * m.n_link * m.n_q) {}
};

template <class S> BIGSTEP_HD hd::M3<S> ld9(const S* p) {
  hd::M3<S> M;
  for (int i = 0; i < 9; ++i) M.a[i] = p[i];
  return M;
}
template <class S> BIGSTEP_HD void st9(S* p, const hd::M3<S>& M) {
  for (int i = 0; i < 9; ++i) p[i] = M.a[i];
}
template <class S> BIGSTEP_HD hd::V3<S> ld3(const S* p) { return {p[0], p[1], p[2]}; }
template <class S> BIGSTEP_HD void st3(S* p, hd::V3<S> v) {
  p[0] = v.x;
  p[1] = v.y;
  p[2] = v.z;
}

// <(A,a),(B,b)>_j = tr(A S B^T) + m (a.(B c) + b.(A c) + a.b)
template <class S>
BIGSTEP_HD S moment_product(const ModelView<S>& m, int j, const hd::M3<S>& A, hd::V3<S> a, const hd::M3<S>& B,
                            hd::V3<S> b) {
  const hd::M3<S> Sj = m.m3(m.link_S, j);
  const hd::M3<S> AS = A * Sj;
  S tr = 0;
  for (int i = 0; i < 9; ++i) tr += AS.a[i] * B.a[i];
  const hd::V3<S> c = m.v3(m.link_com, j);
  return tr + m.link_mass[j] * (hd::dot(a, B * c) + hd::dot(b, A * c) + hd::dot(a, b));
}

}  // namespace team_detail

/// The per-DOF terms of DOF k added to r_k and, when Jkk != nullptr, to J_kk = dr_k/dtheta_k
/// (issue 10; the same physics in every integrator family):
///   armature a_k: inertia 1/2 a_k (theta_k - theta~_k)^2 / dt^2, theta~ = 2 theta_n - theta_{n-1}
///                 (pbfd.md Eq. 6 form; not scaled by the link mass scales):
///                 r_k += a_k (theta_k - theta~_k) / dt^2,  J_kk += a_k / dt^2
///   damping b_k:  backward-Euler viscous torque -b_k (theta_k - theta_n,k) / dt:
///                 r_k += b_k (theta_k - theta_n,k) / dt,   J_kk += b_k / dt
///   spring k_k:   potential 1/2 k_k (theta_k - ref_k)^2 at theta_{n+1} (MuJoCo's stiffness,
///                 springref; implicit, as joint_terms.h):
///                 r_k += k_k (theta_k - ref_k),             J_kk += k_k
///   joint limit:  the normal-contact penalty P = C/(alpha+1) d^(alpha+1) of the nearer stop
///                 (core/joint_limit.h: lower d = lo - theta_k, s = +1; upper d = theta_k - hi,
///                 s = -1; active for d > 0), C = dof_limit_k or the rollout's c_perp when 0:
///                 r_k += -s C d^alpha,  J_kk += C alpha d^(alpha-1)  (no friction)
template <class S>
BIGSTEP_HD void pbfd_dof_terms(const ModelView<S>& m, const PbfdStepConst<S>& in, const S* theta, int k, S& rk,
                               S* Jkk) {
  using std::pow;
  const S a = m.dof_armature[k], b = m.dof_damping[k];
  if (a != S(0)) {
    const S inv_dt2 = S(1) / (in.dt * in.dt);
    const S theta_tilde = 2 * in.theta_n[k] - in.theta_nm1[k];
    rk += a * (theta[k] - theta_tilde) * inv_dt2;
    if (Jkk) *Jkk += a * inv_dt2;
  }
  if (b != S(0)) {
    rk += b * (theta[k] - in.theta_n[k]) / in.dt;
    if (Jkk) *Jkk += b / in.dt;
  }
  const S ks = m.dof_stiffness[k];
  if (ks != S(0)) {
    rk += ks * (theta[k] - m.dof_springref[k]);
    if (Jkk) *Jkk += ks;
  }
  if (m.dof_limited[k]) {
    const S lo = m.dof_range[2 * k], hi = m.dof_range[2 * k + 1];
    const S d_lo = lo - theta[k], d_hi = theta[k] - hi;
    const bool lower = d_lo >= d_hi;  // the nearer stop, as joint_limits()
    const S d = lower ? d_lo : d_hi, s = lower ? S(1) : S(-1);
    if (d > 0) {
      const S C = m.dof_limit_k[k] != S(0) ? m.dof_limit_k[k] : in.c_perp;
      rk -= s * C * pow(d, in.alpha);
      if (Jkk) *Jkk += C * in.alpha * pow(d, in.alpha - 1);
    }
  }
}

/// r (n_q) and, when Jr != nullptr, J_r (n_q x n_q row-major) at theta. scratch: pbfd_scratch_size.
template <class S, class Team>
BIGSTEP_HD void pbfd_residual_team(Team& team, const ModelView<S>& m, const PbfdStepConst<S>& in, const S* theta,
                                   S* scratch, S* r, S* Jr) {
  using namespace team_detail;
  using V = hd::V3<S>;
  using M = hd::M3<S>;
  using std::pow;
  Scratch<S> sh(scratch, m);
  const int L = m.n_link, D = m.n_q;
  // forward kinematics (sequential along the tree; pbfd.md §2.2)
  team.single([&] {
    for (int j = 0; j < L; ++j) {
      const int p = m.link_parent[j];
      M R = p < 0 ? M::identity() : ld9(sh.R + 9 * p);
      V t = p < 0 ? V{0, 0, 0} : ld3(sh.t + 3 * p);
      t = R * m.v3(m.link_to, j) + t;
      R = R * m.m3(m.link_Ro, j);
      for (int k = m.link_dof_adr[j]; k < m.link_dof_adr[j] + m.link_dof_num[j]; ++k) {
        const V a = m.v3(m.dof_axis, k);
        const V w = R * a;
        st3(sh.w + 3 * k, w);
        st3(sh.o + 3 * k, t);
        if (m.dof_revolute[k]) {
          R = R * hd::axis_rotation(a, theta[k]);
        } else {
          t = t + theta[k] * w;
        }
      }
      st9(sh.R + 9 * j, R);
      st3(sh.t + 3 * j, t);
    }
  });
  team.sync();
  // first link-pose derivatives, lane k fills column k (§2.3)
  team.for_each_lane(D, [&](int k) {
    const V w = ld3(sh.w + 3 * k), o = ld3(sh.o + 3 * k);
    for (int j = 0; j < L; ++j) {
      M dR = M::zero();
      V dt{0, 0, 0};
      if (m.moves(k, j)) {
        if (m.dof_revolute[k]) {
          dR = hd::skew_mul(w, ld9(sh.R + 9 * j));
          dt = hd::cross(w, ld3(sh.t + 3 * j) - o);
        } else {
          dt = w;
        }
      }
      st9(sh.dR + 9 * (j * D + k), dR);
      st3(sh.dt + 3 * (j * D + k), dt);
    }
  });
  team.sync();
  const S inv_dt2 = S(1) / (in.dt * in.dt);
  const V g{m.gravity[0], m.gravity[1], m.gravity[2]};
  // second derivative d_ab T_j = min(a,b) |> d_max(a,b) T_j (both on the path of j)
  auto d2T = [&](int j, int a, int b, M& Mo, V& vo) {
    const int lo = a < b ? a : b, hi = a < b ? b : a;
    if (!m.dof_revolute[lo]) {
      Mo = M::zero();
      vo = V{0, 0, 0};
      return;
    }
    const V w = ld3(sh.w + 3 * lo);
    Mo = hd::skew_mul(w, ld9(sh.dR + 9 * (j * D + hi)));
    vo = hd::cross(w, ld3(sh.dt + 3 * (j * D + hi)));
  };
  // column k of the point Jacobian of world point p on link j
  auto Jcol = [&](int k, int j, V p) -> V {
    if (!m.moves(k, j)) return V{0, 0, 0};
    const V w = ld3(sh.w + 3 * k);
    return m.dof_revolute[k] ? hd::cross(w, p - ld3(sh.o + 3 * k)) : w;
  };
  // residual and Jacobian row k
  team.for_each_lane(D, [&](int k) {
    S rk = -in.tau[k];
    if (Jr)
      for (int l = 0; l < D; ++l) Jr[k * D + l] = 0;
    for (int j = 0; j < L; ++j) {
      if (!m.moves(k, j)) continue;
      const M A = ld9(sh.R + 9 * j) - ld9(in.anchor_R + 9 * j);
      const V b = ld3(sh.t + 3 * j) - ld3(in.anchor_t + 3 * j);
      const M dRk = ld9(sh.dR + 9 * (j * D + k));
      const V dtk = ld3(sh.dt + 3 * (j * D + k));
      const V c = m.v3(m.link_com, j);
      const S mj = m.link_mass[j];
      const S ms = in.mass_scale ? in.mass_scale[j] : S(1);
      rk += ms * (inv_dt2 * moment_product(m, j, dRk, dtk, A, b));  // inertia (§3)
      rk -= ms * (mj * hd::dot(g, dRk * c + dtk));                  // gravity (§2.4)
      if (!Jr) continue;
      for (int l = 0; l < D; ++l) {
        if (!m.moves(l, j)) continue;
        M M2;
        V v2;
        d2T(j, k, l, M2, v2);
        Jr[k * D + l] += ms * (inv_dt2 * (moment_product(m, j, dRk, dtk, ld9(sh.dR + 9 * (j * D + l)),
                                                         ld3(sh.dt + 3 * (j * D + l))) +
                                          moment_product(m, j, M2, v2, A, b)) -
                               mj * hd::dot(g, M2 * c + v2));
      }
    }
    // contacts: every (core point, plane) row in penetration (§4.2, §4.4); a link geom's plane pair
    // is its core points against the plane (Model::point_pair_*), as collide() forms it
    for (int q = 0; q < m.n_point_pair; ++q) {
      const int s = m.point_pair_point[q], p = m.point_pair_plane[q];
      const int j = m.point_link[s];
      const V c = ld9(sh.R + 9 * j) * m.v3(m.point_pos, s) + ld3(sh.t + 3 * j);
      const V n = m.v3(m.plane_normal, p);
      const S d = -(hd::dot(n, c) - m.plane_offset[p] - m.point_radius[s]);
      if (!(d > 0)) continue;
      const V Jk = Jcol(k, j, c);
      const V dc = c - ld3(in.centre_n + 3 * s);
      const V u = dc - hd::dot(n, dc) * n;
      const S un = hd::norm(u);
      const S da = pow(d, in.alpha);
      const S ub1 = pow(un, in.beta - 1), dg = pow(d, in.gamma), dg1 = pow(d, in.gamma + 1);
      const V f = (-(in.beta + 1) * ub1 * dg1) * u;  // f_par
      const S nJk = hd::dot(n, Jk);
      rk -= in.c_perp * da * nJk;
      rk -= in.c_par * hd::dot(Jk, f);
      if (!Jr) continue;
      for (int l = 0; l < D; ++l) {
        if (!m.moves(l, j)) continue;
        const V Jl = Jcol(l, j, c);
        // d^2 p / d theta_k d theta_l = omega_lo x J_hi
        V d2p{0, 0, 0};
        const int lo = k < l ? k : l, hi = k < l ? l : k;
        if (m.dof_revolute[lo] && m.moves(lo, j)) d2p = hd::cross(ld3(sh.w + 3 * lo), Jcol(hi, j, c));
        // df/dp J_l
        const S nJl = hd::dot(n, Jl);
        V PtJl = Jl - nJl * n;
        if (in.beta != S(1) && un > 0) PtJl = PtJl + ((in.beta - 1) * hd::dot(u, Jl) / (un * un)) * u;
        const V dfJl = (-(in.beta + 1) * dg1 * ub1) * PtJl + ((in.beta + 1) * (in.gamma + 1) * dg * ub1 * nJl) * u;
        Jr[k * D + l] += in.c_perp * in.alpha * pow(d, in.alpha - 1) * nJk * nJl - in.c_perp * da * hd::dot(n, d2p) -
                         in.c_par * (hd::dot(Jk, dfJl) + hd::dot(f, d2p));
      }
    }
    // per-DOF model terms (agreed formulas; each is diagonal: lane k adds to r_k and J_kk only)
    pbfd_dof_terms(m, in, theta, k, rk, Jr ? &Jr[k * D + k] : static_cast<S*>(nullptr));
    if (in.kp) {  // stable PD servo: -tau_pd(theta) and its Jacobian
      rk += in.kp[k] * (theta[k] - in.theta_bar[k]) + in.kd[k] * ((theta[k] - in.theta_n[k]) / in.dt - in.theta_dot_bar[k]);
      if (Jr) Jr[k * D + k] += in.kp[k] + in.kd[k] / in.dt;
    }
    r[k] = rk;
  });
  team.sync();
}

}  // namespace bigstep
