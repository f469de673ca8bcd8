// PBFD residual r(theta) and exact Jacobian J_r (docs/methods/pbfd.md §4.6, Eq. 13) written once against
// the team interface (solvers/team/team.h): lane k owns r_k and row k of J_r. Instantiated by the CPU
// emulation (tests, CPU batched backend) and by CUDA (cuda/pbd_residual.cu). Mirrors the Eigen
// reference solvers/pbd/pbd_residual.cpp term by term (inertia §3, gravity §2.4, normal §4.2,
// friction §4.4) plus the per-DOF armature, damping, spring and joint-limit terms (pbfd_dof_terms).
// Like the reference it reads every term out of per-link subtree moments (core/composite_moments.h,
// twist rule §2.3): O(L + D^2) work and O(L + D) scratch, no per link and DOF derivative tables
// (the evaluation at the cost of its maths, as solvers/pbd/pbd_residual.cpp). A (core point, plane) contact's stiffness is a world one (into the link's K6);
// a body pair's contact (two links, or a link and a world sphere / capsule: Model "body pairs") is
// found here as collide() finds it (closest core points of the pair's segments) and its J^T K J,
// J = J_a - J_b, coupling both links' paths, is added to J_r densely, as the reference does.
#pragma once
#include "core/box_closest.h"
#include "core/model_view.h"
#include "core/segment_closest.h"
#include "solvers/team/team_reduce.h"

// The body-pair code (team_detail::body_pair_*) is its own call on the device: why -- inlined into the
// residual it raised the FP32 warp kernel's spills (0 -> 36 B) and the FP64 evaluate kernel's
// registers (130 -> 244) for every model, with or without body pairs (bench/perf/ptxas_plan.sh).
#ifdef __CUDACC__
#define BIGSTEP_BODY_PAIR_FN __host__ __device__ __noinline__
#else
#define BIGSTEP_BODY_PAIR_FN inline
#endif

namespace bigstep {

/// Constants of one PBFD step for one rollout (see solvers/pbd/pbd_context.h for the reference form).
template <class S>
struct PbfdStepConst {
  const S* anchor_R;   // (n_link x 9) 2 R(theta_n) - R(theta_{n-1}) (order 2: docs/methods/pbfd.md §3.1)
  const S* anchor_t;   // (n_link x 3)
  const S* centre_n;   // (n_point x 3) core points at theta_n (Model point_*)
  const S* tau;        // (n_q)
  S dt, c_perp, c_par, alpha, beta, gamma;
  // the time discretisation (docs/methods/pbfd.md §3.1, PbdStepInput): the inertia and armature
  // terms' step dt_a, the velocity terms' (damping, K_d) theta_dot = (theta - theta_v) / dt_v.
  // First order: dt_a = dt_v = dt, theta_v = theta_n. Order 2: dt_a = dt/sqrt(2), theta_v and
  // theta~ (the armature's anchor; null: 2 theta_n - theta_{n-1}) per DOF, and dt_v = 2 dt/3, or
  // dt_v_fresh = dt/2 while *kind == kStepFresh, and dt_a = dt_v = dt while *kind == kStepEvent
  // (the trajectory's StepKind: why a pointer -- a free-running launch passes from one kind of
  // step to the next without rebuilding these constants)
  S dt_a = 0, dt_v = 0, dt_v_fresh = 0;
  const S* theta_v = nullptr;      // (n_q) read with the damping and K_d terms
  const S* theta_tilde = nullptr;  // (n_q)
  const int* kind = nullptr;
  // per-rollout randomisation: link j's mass and inertia times mass_scale[j] (n_link, nullptr = 1;
  // RolloutParams::link_mass_scale). Inertia §3 and gravity §2.4 are linear in them per link, so
  // s_j multiplies link j's terms.
  const S* mass_scale = nullptr;
  // implicit stable PD (docs/methods/pbfd.md §4.6, docs/methods/newton_euler.md §4), kp == nullptr = none:
  // r += K_p (theta - theta_bar) + K_d ((theta - theta_v)/dt_v - theta_dot_bar), J += diag(K_p + K_d/dt_v)
  const S *kp = nullptr, *kd = nullptr, *theta_bar = nullptr, *theta_dot_bar = nullptr, *theta_n = nullptr;
  // theta_{n-1} (n_q): with theta_n above, read by the armature term of a DOF whose dof_armature is
  // non-zero at first order (both may stay null for a model without armature)
  const S* theta_nm1 = nullptr;
  // link poses at theta_n (n_link x 9 row-major, n_link x 3): where a body pair's core points were
  // at the step's start, the slip's reference (docs/methods/pbfd.md §4.3; the reference's kin_n). Read only when
  // the model has body pairs and C_par != 0 (may stay null otherwise)
  const S *pose_n_R = nullptr, *pose_n_t = nullptr;
  // the friction law (contact.friction, docs/methods/pbfd.md §4.9): coulomb = the regularised Coulomb
  // force mu f_n u / sqrt(|u|^2 + delta^2), delta = v_s dt, in place of C_par f_par (c_par unused then)
  bool coulomb = false;
  S mu = S(0), delta = S(0);
};

namespace team_detail {
// The regularised Coulomb law's scalars at slip u and depth d (solvers/terms/contact_terms.h
// coulomb_friction): the force is -(mu f_n w) u, w = (|u|^2 + delta^2)^(-1/2), and its x-derivative
// -mu f_n [s (w P_t - w^3 u u^T) - kappa w n u^T] + mu (df_n/dd) w u n^T. kt = mu f_n w,
// kuu = -mu f_n w^3, kun = mu (df_n/dd) w: df/dx = -s (kt P_t + kuu u u^T) + kappa kt n u^T + kun u n^T.
template <class S>
struct CoulombScalars {
  S kt, kuu, kun;
};
template <class S>
BIGSTEP_HD CoulombScalars<S> coulomb_scalars(const PbfdStepConst<S>& in, hd::V3<S> u, S fn, S kn) {
  using std::sqrt;
  const S w = S(1) / sqrt(hd::dot(u, u) + in.delta * in.delta);
  return {in.mu * fn * w, S(-1) * in.mu * fn * w * w * w, in.mu * kn * w};
}
}  // namespace team_detail

/// Kind of a second-order step (LmTraj ints `kind`; core/data.h Data::StepHistory::Kind,
/// docs/methods/pbfd.md §3.1): the four-point step, its fresh start (no theta_{n-2}), or the
/// first-order step across a contact event.
enum StepKind : int { kStepHistory = 0, kStepFresh = 1, kStepEvent = 2 };

/// The velocity terms' step of `in` (PbfdStepConst::dt_v; dt_v_fresh on a fresh second-order
/// step, dt across a contact event).
template <class S>
BIGSTEP_HD S velocity_step(const PbfdStepConst<S>& in) {
  if (!in.kind) return in.dt_v;
  return *in.kind == kStepFresh ? in.dt_v_fresh : *in.kind == kStepEvent ? in.dt : in.dt_v;
}

/// The inertia and armature terms' step of `in` (PbfdStepConst::dt_a; dt across a contact event).
template <class S>
BIGSTEP_HD S inertia_step(const PbfdStepConst<S>& in) {
  return in.kind && *in.kind == kStepEvent ? in.dt : in.dt_a;
}

/// Per-link moment block of the team scratch: G (4 x 3), P (4 x 4), K6 (6 x 6), row-major
/// (core/composite_moments.h has their meaning). r alone needs only the first kMomG entries.
inline constexpr int kMomG = 12, kMomP = 16, kMomK = 36, kMomStride = kMomG + kMomP + kMomK;
/// Per body-contact slot of the team scratch (Model::n_body_con slots): core points x_a, x_b (3 + 3),
/// the force F on core a (3), its stiffness K = dF/dx (9, row-major) and an active flag (1).
inline constexpr int kBodyCon = 19;

/// Team scratch size (number of S) for one rollout of model m: link poses (12 L), the subtree
/// moments (64 L) and per DOF its twist s and read-outs u, u~ (18 D). Each link's contact forces
/// (12 L, summed into its G in the subtree sums, before the read-outs are written) borrow u, u~
/// (12 D) when L <= D, else 12 L more at the end. No L x D term. borrow_jr: the caller always
/// passes J_r (the LM iteration) -- then the link poses, dead before J_r is written, live in J_r
/// when 12 L <= D^2 (12 L less shared memory per trajectory; see Scratch). A model with
/// body pairs adds kBodyCon per contact slot at the end (none without).
template <class S>
BIGSTEP_HD int pbfd_scratch_size(const ModelView<S>& m, bool borrow_jr = false) {
  const int L = m.n_link, D = m.n_q;
  const bool in_jr = borrow_jr && 12 * L <= D * D;
  return L * ((in_jr ? 0 : 12) + kMomStride) + D * 18 + (L > D ? kMomG * L : 0) + kBodyCon * m.n_body_con;
}

namespace team_detail {

// R, t: the link poses, at offset 0 and 9 L of the scratch, or of J_r when jr is given and they
// fit (FK writes them, the per-link tasks read them last, J_r's rows are written after: see
// pbfd_residual_team); lm_step_constants (pbd_step_team.h) uses R, t, u and mom as its FK scratch.
template <class S>
struct Scratch {
  S *R, *t, *s, *u, *ut, *mom, *gc, *bc;
  BIGSTEP_HD Scratch(S* p, const ModelView<S>& m, S* jr = nullptr)
      : R(jr && 12 * m.n_link <= m.n_q * m.n_q ? jr : p), t(R + 9 * m.n_link), s(R == p ? t + 3 * m.n_link : p),
        u(s + 6 * m.n_q), ut(u + 6 * m.n_q), mom(ut + 6 * m.n_q),
        gc(m.n_link > m.n_q ? mom + kMomStride * m.n_link : u),
        bc(mom + kMomStride * m.n_link + (m.n_link > m.n_q ? kMomG * m.n_link : 0)) {}
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

// y = tr6(X): tr(W_top X) = s . y for a twist s = (w, v), W_top = [w^ v], X 4 x 3 row-major
template <class S> BIGSTEP_HD void tr6(const S* X, S* y) {
  y[0] = X[5] - X[7];  // X(1,2) - X(2,1)
  y[1] = X[6] - X[2];  // X(2,0) - X(0,2)
  y[2] = X[1] - X[3];  // X(0,1) - X(1,0)
  y[3] = X[9];
  y[4] = X[10];
  y[5] = X[11];
}
template <class S> BIGSTEP_HD S dot6(const S* a, const S* b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}
// W = W_top = [w^ v] (3 x 4 row-major) of twist s = (w, v)
template <class S> BIGSTEP_HD void twist_top(const S* s, S* W) {
  W[0] = 0, W[1] = -s[2], W[2] = s[1], W[3] = s[3];
  W[4] = s[2], W[5] = 0, W[6] = -s[0], W[7] = s[4];
  W[8] = -s[1], W[9] = s[0], W[10] = 0, W[11] = s[5];
}

// force f at world point x (G += [x; 1] f^T, composite_moments.h add_point_force)
template <class S> BIGSTEP_HD void add_force(S* G, hd::V3<S> x, hd::V3<S> f) {
  for (int c = 0; c < 3; ++c) {
    for (int r = 0; r < 3; ++r) G[3 * r + c] += x[r] * f[c];
    G[9 + c] += f[c];
  }
}

// stiffness X^T K X at world point x, X = [-x^ I]: [[-x^ K x^, x^ K], [-K x^, K]] (add_point_stiffness).
// x^ K, K x^ and (x^ K) x^ without the products by x^'s zero diagonal (the same values as the full
// hd::M3 products: a sum with an exact zero term dropped), one row a at a time: why row by row --
// the three 3 x 3 products held at once were the FP32 warp kernel's register peak.
template <class S> BIGSTEP_HD void add_stiffness(S* K6, hd::V3<S> x, const hd::M3<S>& K) {
  for (int a = 0; a < 3; ++a) {
    S xK[3], Kx[3], xKx[3];
    // row a of x^ K = p K(i, .) + q K(j, .), operands in the order of the full product's sums
    const S p = a == 0 ? -x.z : a == 1 ? x.z : -x.y, q = a == 0 ? x.y : a == 1 ? -x.x : x.x;
    const int i = a == 0 ? 1 : 0, j = a == 2 ? 1 : 2;
    for (int b = 0; b < 3; ++b) xK[b] = p * K(i, b) + q * K(j, b);
    Kx[0] = K(a, 1) * x.z + K(a, 2) * -x.y;
    Kx[1] = K(a, 0) * -x.z + K(a, 2) * x.x;
    Kx[2] = K(a, 0) * x.y + K(a, 1) * -x.x;
    xKx[0] = xK[1] * x.z + xK[2] * -x.y;
    xKx[1] = xK[0] * -x.z + xK[2] * x.x;
    xKx[2] = xK[0] * x.y + xK[1] * -x.x;
    for (int b = 0; b < 3; ++b) {
      K6[6 * a + b] -= xKx[b];
      K6[6 * a + 3 + b] += xK[b];
      K6[6 * (3 + a) + b] -= Kx[b];
      K6[6 * (3 + a) + 3 + b] += K(a, b);
    }
  }
}

// ---- body pairs (Model "body pairs"): contacts as collide() finds them (collision_primitive.cpp) ----

template <class S> BIGSTEP_HD hd::V3<S> unit(hd::V3<S> v) {
  const S l = hd::norm(v);
  return {v.x / l, v.y / l, v.z / l};
}
// a unit vector perpendicular to the unit vector u: u x e_i, i the first axis of least |u_i|
template <class S> BIGSTEP_HD hd::V3<S> any_perpendicular(hd::V3<S> u) {
  using std::abs;
  int i = 0;
  S a = abs(u.x);
  if (abs(u.y) < a) i = 1, a = abs(u.y);
  if (abs(u.z) < a) i = 2;
  hd::V3<S> e{S(0), S(0), S(0)};
  e[i] = S(1);
  return unit(hd::cross(u, e));
}
// point of the segment (centre p, unit axis u, half-length h) closest to x
template <class S> BIGSTEP_HD hd::V3<S> closest_on_segment(hd::V3<S> p, hd::V3<S> u, S h, hd::V3<S> x) {
  return p + clamp_to(hd::dot(u, x - p), -h, h) * u;
}

// Candidate core points of one body pair: x_a[i], x_b[i] and the normal n_f[i] used where they
// coincide, i < n; one_point: a parallel capsule pair whose overlap is a single point keeps the
// second candidate only when the first is not a contact (collide_capsule_capsule's loop). face: a
// sphere centre inside a box, x_b (or x_a) on the nearest face: the normal is n_f[0] (fixed, kappa
// 0) and the distance n_f . (x_a - x_b), negative (collide_sphere_box's inside branch).
template <class S>
struct BodyCores {
  hd::V3<S> xa[2], xb[2], nf[2];
  int n = 1;
  bool one_point = false;
  bool face = false;
};

// Sphere against box, either order (type 3 = GeomType::Box on side a or b), as collide_sphere_box
// (and its mirror) forms it: the box frame from the geom (body_pair_geom; geom_R, geom_size) on
// its link's pose, the centre in it and core/box_closest.h: outside, the box's core is its closest
// surface point (the sphere's centre and it are a core line, kappa = 1/|x_a - x_b|); inside, the
// point on the nearest face, with that face's outward normal (from b to a: flipped for a box a).
// p: the pair's geom centres in the world (body_pair_cores).
template <class S>
BIGSTEP_HD BodyCores<S> body_pair_box_cores(const ModelView<S>& m, int q, const S* R, const hd::V3<S>* p) {
  using V = hd::V3<S>;
  const int kb = m.body_pair_type[2 * q] == uint8_t(3) ? 0 : 1;  // the box's side
  const int g = m.body_pair_geom[2 * q + kb], l = m.body_pair_link[2 * q + kb];
  const hd::M3<S> Rb = l < 0 ? ld9(m.geom_R + 9 * g) : ld9(R + 9 * l) * ld9(m.geom_R + 9 * g);
  const V d = p[1 - kb] - p[kb], h = m.v3(m.geom_size, g);
  const V c{Rb(0, 0) * d.x + Rb(1, 0) * d.y + Rb(2, 0) * d.z, Rb(0, 1) * d.x + Rb(1, 1) * d.y + Rb(2, 1) * d.z,
            Rb(0, 2) * d.x + Rb(1, 2) * d.y + Rb(2, 2) * d.z};  // R_b^T (centre - p_b)
  V x, nf{S(0), S(0), S(1)};
  BodyCores<S> cores;
  if (box_closest(c, h, x)) {
    x = Rb * x + p[kb];
  } else {
    S to_face, sign;
    const int i = box_nearest_face(c, h, to_face, sign);
    const V n{sign * Rb(0, i), sign * Rb(1, i), sign * Rb(2, i)};  // R_b (sign e_i)
    x = p[1 - kb] + to_face * n;
    nf = kb == 1 ? n : S(-1) * n;
    cores.face = true;
  }
  cores.xa[0] = kb == 0 ? x : p[0], cores.xb[0] = kb == 0 ? p[1] : x, cores.nf[0] = nf;
  return cores;
}

// The closest core points of body pair q with its links at the poses R, t (n_link x 9, x 3), as
// the pair functions collide_sphere_sphere, collide_sphere_capsule (either order),
// collide_capsule_capsule and collide_sphere_box (either order) form them; a sphere is its centre,
// a capsule its axis segment, a box its closest point (body_pair_box_cores).
template <class S>
BIGSTEP_HD BodyCores<S> body_pair_cores(const ModelView<S>& m, int q, const S* R, const S* t) {
  using V = hd::V3<S>;
  V p[2], u[2];
  for (int g = 0; g < 2; ++g) {  // the segments in the world
    const int l = m.body_pair_link[2 * q + g];
    const V pos = m.v3(m.body_pair_pos, 2 * q + g), ax = m.v3(m.body_pair_axis, 2 * q + g);
    p[g] = l < 0 ? pos : ld9(R + 9 * l) * pos + ld3(t + 3 * l);
    u[g] = l < 0 ? ax : ld9(R + 9 * l) * ax;
  }
  if (m.body_pair_type[2 * q] == uint8_t(3) || m.body_pair_type[2 * q + 1] == uint8_t(3))
    return body_pair_box_cores(m, q, R, p);
  const S ha = m.body_pair_size[4 * q + 1], hb = m.body_pair_size[4 * q + 3];
  const bool cap_a = m.body_pair_type[2 * q] == uint8_t(2), cap_b = m.body_pair_type[2 * q + 1] == uint8_t(2);
  BodyCores<S> c;
  if (!cap_a && !cap_b) {  // sphere-sphere: the centres (world +z where they coincide)
    c.xa[0] = p[0], c.xb[0] = p[1], c.nf[0] = V{S(0), S(0), S(1)};
  } else if (!cap_a) {  // sphere a, capsule b: b's axis point nearest a's centre
    c.xa[0] = p[0], c.xb[0] = closest_on_segment(p[1], u[1], hb, p[0]), c.nf[0] = any_perpendicular(u[1]);
  } else if (!cap_b) {  // capsule a, sphere b: the mirrored pair function (its normal flipped)
    c.xa[0] = closest_on_segment(p[0], u[0], ha, p[1]), c.xb[0] = p[1];
    c.nf[0] = S(-1) * any_perpendicular(u[0]);
  } else {  // capsule-capsule: closest points of the two axis segments
    const V ua = u[0], ub = u[1], r = p[0] - p[1];
    const S cab = hd::dot(ua, ub), cr = hd::dot(ua, r), f = hd::dot(ub, r), sin2 = 1 - cab * cab;
    if (sin2 < S(1e-12)) {
      // parallel axes: the overlap [lo, hi] along a's axis gives two candidates (a line contact),
      // none an end facing the other end
      S s_mid, lo, hi;
      segment_overlap(cab, cr, ha, hb, s_mid, lo, hi);
      const V off = cr * ua - r;
      const V nf = hd::norm(off) > S(1e-12) ? S(-1) * unit(off) : any_perpendicular(ua);
      c.nf[0] = c.nf[1] = nf;
      if (hi >= lo) {
        c.n = 2;
        c.one_point = hi - lo <= S(1e-12) * (ha + hb);
        c.xa[0] = p[0] + lo * ua, c.xa[1] = p[0] + hi * ua;
      } else {
        c.xa[0] = p[0] + (s_mid > 0 ? ha : -ha) * ua;
      }
      c.xb[0] = closest_on_segment(p[1], ub, hb, c.xa[0]);
      if (c.n == 2) c.xb[1] = closest_on_segment(p[1], ub, hb, c.xa[1]);
    } else {
      // general position: as collide_capsule_capsule (core/segment_closest.h)
      S sa, tb;
      segment_closest(cab, cr, f, sin2, ha, hb, sa, tb);
      V nf = unit(hd::cross(ua, ub));
      if (hd::dot(nf, r) < 0) nf = S(-1) * nf;
      c.xa[0] = p[0] + sa * ua, c.xb[0] = p[1] + tb * ub, c.nf[0] = nf;
    }
  }
  return c;
}

// Link l's material point at world x (poses R, t) placed at theta_n (in.pose_n_*).
template <class S>
BIGSTEP_HD hd::V3<S> point_at_n(const PbfdStepConst<S>& in, const S* R, const S* t, int l, hd::V3<S> x) {
  const hd::M3<S> Rl = ld9(R + 9 * l);
  const hd::V3<S> d = x - ld3(t + 3 * l);
  const hd::V3<S> local{Rl(0, 0) * d.x + Rl(1, 0) * d.y + Rl(2, 0) * d.z, Rl(0, 1) * d.x + Rl(1, 1) * d.y + Rl(2, 1) * d.z,
                        Rl(0, 2) * d.x + Rl(1, 2) * d.y + Rl(2, 2) * d.z};  // R_l^T (x - t_l)
  return ld9(in.pose_n_R + 9 * l) * local + ld3(in.pose_n_t + 3 * l);
}

// Contact slots of body pair q: [adr, adr + n)
template <class S>
BIGSTEP_HD int body_pair_slots(const ModelView<S>& m, int q) {
  return (q + 1 < m.n_body_pair ? m.body_pair_con_adr[q + 1] : m.n_body_con) - m.body_pair_con_adr[q];
}

// Body pair q's contacts into its slots (kBodyCon each, sh.bc): the cores x_a, x_b, the force F on
// core a (-F on core b) and, with jac, K = dF/dx (x = x_a - x_b). The same terms as the reference's
// contact loop (solvers/pbd/pbd_residual.cpp) on a contact of collide(): normal C_perp d^alpha (§4.2),
// friction C_par f_par (§4.4; or the Coulomb law of §4.9, coulomb_scalars) with the turning normal
// of a core line (kappa = 1/|x_a - x_b|,
// solvers/terms/contact_terms.h add_normal_turning), K = C_perp alpha d^(alpha-1) n n^T - C_perp d^alpha
// kappa P_t - C_par df_par/dx. A slot not in contact (depth <= 0, or unused) gets flag 0.
template <class S>
BIGSTEP_BODY_PAIR_FN void body_pair_contacts(const ModelView<S>& m, const PbfdStepConst<S>& in, const Scratch<S>& sh,
                                             int q, bool jac) {
  using V = hd::V3<S>;
  using std::pow;
  const int adr = m.body_pair_con_adr[q], n_slot = body_pair_slots(m, q);
  const int la = m.body_pair_link[2 * q], lb = m.body_pair_link[2 * q + 1];
  const S ra = m.body_pair_size[4 * q], rb = m.body_pair_size[4 * q + 2];
  const BodyCores<S> c = body_pair_cores(m, q, sh.R, sh.t);
  int found = 0;
  for (int i = 0; i < 2; ++i) {  // (a fixed count: the candidates' indices stay constants, no local copy)
    if (i >= n_slot) break;
    S* b = sh.bc + kBodyCon * (adr + i);
    b[18] = S(0);
    if (i >= c.n || (i == 1 && c.one_point && found == 1)) continue;
    const V xa = i == 0 ? c.xa[0] : c.xa[1], xb = i == 0 ? c.xb[0] : c.xb[1], dx = xa - xb;
    const S centres = c.face ? hd::dot(c.nf[0], dx) : hd::norm(dx), dist = centres - ra - rb;
    if (dist > 0) continue;  // not a contact of collide() (margin 0)
    ++found;
    const S d = -dist;
    if (!(d > 0)) continue;  // touching: no force
    const bool line = !c.face && centres > S(1e-12);
    const V n = line ? V{dx.x / centres, dx.y / centres, dx.z / centres} : (i == 0 ? c.nf[0] : c.nf[1]);
    const S kappa = line ? S(1) / centres : S(0);
    const S fn = in.c_perp * pow(d, in.alpha), kn = in.c_perp * in.alpha * pow(d, in.alpha - 1);
    V F = S(-1) * fn * n;
    // friction: slip u = P_t y, y = (x_a - x_a(theta_n)) - (x_b - x_b(theta_n)) of the cores as
    // material points of their links (contact_core_displacement)
    V u{S(0), S(0), S(0)};
    S eta = 0, a = 0, m1 = 0, cs = 0, sk = 1;
    CoulombScalars<S> cc{S(0), S(0), S(0)};
    const bool friction = in.coulomb ? in.mu != S(0) : in.c_par != S(0);
    if (friction) {
      V y = xa - point_at_n(in, sh.R, sh.t, la, xa);
      if (lb >= 0) y = y - (xb - point_at_n(in, sh.R, sh.t, lb, xb));
      eta = hd::dot(n, y);
      u = y - eta * n;
      sk = 1 - kappa * eta;  // the turning normal's scale of du/dx (kappa = 0: 1)
    }
    if (friction && in.coulomb) {
      cc = coulomb_scalars(in, u, fn, kn);
      F = F + cc.kt * u;  // F -= f, f = -mu f_n w u (§4.9)
    } else if (friction) {
      const S un = hd::norm(u), ub1 = pow(un, in.beta - 1);
      a = (in.beta + 1) * ub1 * pow(d, in.gamma + 1);                // |f_par| / |u|
      m1 = (in.beta + 1) * (in.gamma + 1) * pow(d, in.gamma) * ub1;  // d|f_par|/dd / |u|
      cs = (in.beta != S(1) && un > 0) ? (in.beta - 1) / (un * un) : S(0);
      F = F + (in.c_par * sk * a) * u;  // F -= C_par s f_par, f_par = -a u
    }
    st3(b, xa);
    st3(b + 3, xb);
    st3(b + 6, F);
    b[18] = S(1);
    if (!jac) continue;
    // K(a, b) = kn n n^T - fn kappa P_t - C_par df/dx, df/dx = s df_par/dp + s kappa (eta a S +
    // a n u^T) + kappa a u (s n + kappa u)^T, df_par/dp = -a S + m1 u n^T, S = P_t + cs u u^T
    for (int r = 0; r < 3; ++r)
      for (int col = 0; col < 3; ++col) {
        const S Pt = (r == col ? S(1) : S(0)) - n[r] * n[col];
        S K = kn * n[r] * n[col] - fn * kappa * Pt;
        if (friction && in.coulomb) {
          // -df/dx = s (kt P_t + kuu u u^T) - kappa kt n u^T - kun u n^T (coulomb_scalars)
          K += sk * (cc.kt * Pt + cc.kuu * u[r] * u[col]) - kappa * cc.kt * n[r] * u[col] - cc.kun * u[r] * n[col];
        } else if (friction) {
          const S Sm = Pt + cs * u[r] * u[col];
          S df = -a * Sm + m1 * u[r] * n[col];
          if (kappa != S(0))
            df = sk * df + sk * kappa * (eta * a * Sm + a * n[r] * u[col]) + kappa * a * u[r] * (sk * n[col] + kappa * u[col]);
          K -= in.c_par * df;
        }
        b[9 + 3 * r + col] = K;
      }
  }
}

// G += the body contacts' forces, entry e (< kMomG) of each link's block: F at x_a on link a, -F at
// x_b on link b (G += [x; 1] F^T, the reference's add_contact_force)
template <class S>
BIGSTEP_BODY_PAIR_FN void body_pair_forces(const ModelView<S>& m, const Scratch<S>& sh, int e) {
  const int row = e / 3, col = e % 3;
  for (int q = 0; q < m.n_body_pair; ++q) {
    const int la = m.body_pair_link[2 * q], lb = m.body_pair_link[2 * q + 1];
    for (int i = 0; i < body_pair_slots(m, q); ++i) {
      const S* b = sh.bc + kBodyCon * (m.body_pair_con_adr[q] + i);
      if (b[18] == S(0)) continue;
      sh.mom[kMomStride * la + e] += (row < 3 ? b[row] : S(1)) * b[6 + col];
      if (lb >= 0) sh.mom[kMomStride * lb + e] -= (row < 3 ? b[3 + row] : S(1)) * b[6 + col];
    }
  }
}

// Column of the relative core Jacobian J = J_a(x_a) - J_b(x_b) of DOF k (twist s_k = (w, v): a point
// x on a moved link moves by w x x + v)
template <class S>
BIGSTEP_HD hd::V3<S> body_jacobian_column(const ModelView<S>& m, const S* sk, int k, int la, int lb, hd::V3<S> xa,
                                          hd::V3<S> xb) {
  const hd::V3<S> w = ld3(sk), v = ld3(sk + 3);
  hd::V3<S> c{S(0), S(0), S(0)};
  if (la >= 0 && m.moves(k, la)) c = hd::cross(w, xa) + v;
  if (lb >= 0 && m.moves(k, lb)) c = c - (hd::cross(w, xb) + v);
  return c;
}

// Row k of J_r += (J col k)^T K J over the body contacts, J = J_a - J_b coupling both links' paths,
// dense (the reference's add_contact_stiffness_dense)
template <class S>
BIGSTEP_BODY_PAIR_FN void body_pair_stiffness_row(const ModelView<S>& m, const Scratch<S>& sh, int k, S* Jrow) {
  using V = hd::V3<S>;
  for (int q = 0; q < m.n_body_pair; ++q) {
    const int la = m.body_pair_link[2 * q], lb = m.body_pair_link[2 * q + 1];
    if (!m.moves(k, la) && !(lb >= 0 && m.moves(k, lb))) continue;
    for (int i = 0; i < body_pair_slots(m, q); ++i) {
      const S* b = sh.bc + kBodyCon * (m.body_pair_con_adr[q] + i);
      if (b[18] == S(0)) continue;
      const V xa = ld3(b), xb = ld3(b + 3);
      const V ck = body_jacobian_column(m, sh.s + 6 * k, k, la, lb, xa, xb);
      const V wk{ck.x * b[9] + ck.y * b[12] + ck.z * b[15], ck.x * b[10] + ck.y * b[13] + ck.z * b[16],
                 ck.x * b[11] + ck.y * b[14] + ck.z * b[17]};  // K^T (J col k)
      for (int l = 0; l < m.n_q; ++l) Jrow[l] += hd::dot(wk, body_jacobian_column(m, sh.s + 6 * l, l, la, lb, xa, xb));
    }
  }
}

// Active contacts of one task at the pose in sh.R, sh.t (theta): the second-order step's event count
// (solvers/pbd/pbd_context.h pbd_active_contacts). Task j < L: link j's (core point, plane) rows
// with depth > 0; L + q: body pair q's contacts with depth > 0; L + n_body_pair + k: DOF k's
// nearer joint stop with depth > 0. The same tests as pbfd_residual_team's contact loop,
// body_pair_contacts and pbfd_dof_terms.
template <class S>
BIGSTEP_HD int active_contacts_task(const ModelView<S>& m, const Scratch<S>& sh, const S* theta, int task) {
  using V = hd::V3<S>;
  const int L = m.n_link;
  int n = 0;
  if (task < L) {
    for (int q = 0; q < m.n_point_pair; ++q) {
      const int s = m.point_pair_point[q], p = m.point_pair_plane[q];
      if (m.point_link[s] != task) continue;
      const V cp = ld9(sh.R + 9 * task) * m.v3(m.point_pos, s) + ld3(sh.t + 3 * task);
      const S d = -(hd::dot(m.v3(m.plane_normal, p), cp) - m.plane_offset[p] - m.point_radius[s]);
      n += d > 0 ? 1 : 0;
    }
    return n;
  }
  if (task < L + m.n_body_pair) {
    const int q = task - L, n_slot = body_pair_slots(m, q);
    const S ra = m.body_pair_size[4 * q], rb = m.body_pair_size[4 * q + 2];
    const BodyCores<S> c = body_pair_cores(m, q, sh.R, sh.t);
    int found = 0;
    for (int i = 0; i < 2 && i < n_slot && i < c.n; ++i) {
      if (i == 1 && c.one_point && found == 1) continue;
      const V dx = (i == 0 ? c.xa[0] : c.xa[1]) - (i == 0 ? c.xb[0] : c.xb[1]);
      const S centres = c.face ? hd::dot(c.nf[0], dx) : hd::norm(dx), dist = centres - ra - rb;
      if (dist > 0) continue;  // not a contact of collide()
      ++found;
      n += -dist > 0 ? 1 : 0;
    }
    return n;
  }
  const int k = task - L - m.n_body_pair;
  if (!m.dof_limited[k]) return 0;
  const S d_lo = m.dof_range[2 * k] - theta[k], d_hi = theta[k] - m.dof_range[2 * k + 1];
  return (d_lo >= d_hi ? d_lo : d_hi) > 0 ? 1 : 0;
}

}  // namespace team_detail

/// Forward kinematics (docs/methods/pbfd.md §2.2) at theta into R (n_link x 9, row-major) and t (n_link x 3),
/// and, when s != nullptr, the DOF twists s_k = (w_k, o_k x w_k) revolute, (0, u_k) prismatic
/// (§2.3) into s (n_q x 6). Scratch: rot (9 n_q), tmp (24). Ends with a sync.
///
/// The chain is serial in depth, so the lanes work inside each link: one lane per entry of the
/// frame (9 of R, 3 of t) per elementary transform -- the joint frame R_p Ro_j, t_p + R_p to_j,
/// then each DOF's rotation R Rot_k (or translation t + theta_k R a_k) -- with a sync after each
/// (1 + n_dof(j) per link; the link's running frame alternates between the two halves of tmp).
/// The lanes of t also give w_k = R a_k before DOF k moves the frame. The rotations Rot_k come
/// first, one lane per DOF, and the twists' cross products last, one lane per DOF. Each entry is
/// the serial code's expression (hd::M3 products, axis_rotation), so the frames are the same bits.
template <class S, class Team>
BIGSTEP_HD void team_fk(Team& team, const ModelView<S>& m, const S* theta, S* R, S* t, S* s, S* rot, S* tmp) {
  using namespace team_detail;
  const int L = m.n_link, D = m.n_q;
  // Rot_k = exp(theta_k [a_k]x), lane per revolute DOF
  team.for_each_lane(D, [&](int k) {
    if (m.dof_revolute[k]) st9(rot + 9 * k, hd::axis_rotation(m.v3(m.dof_axis, k), theta[k]));
  });
  team.sync();
  for (int j = 0; j < L; ++j) {
    const int p = m.link_parent[j], k0 = m.link_dof_adr[j], nk = m.link_dof_num[j];
    // joint frame: R = R_p Ro_j, t = R_p to_j + t_p (the root: Ro_j, to_j); lane e: entry e
    {
      S* Rd = nk == 0 ? R + 9 * j : tmp;
      S* td = nk == 0 ? t + 3 * j : tmp + 9;
      const S* Ro = m.link_Ro + 9 * j;
      const S* to = m.link_to + 3 * j;
      const S* Rp = R + 9 * p;
      team.for_each_lane(12, [&](int e) {
        if (e < 9) {
          const int a = e / 3, b = e % 3;
          Rd[e] = p < 0 ? Ro[e] : Rp[3 * a] * Ro[b] + Rp[3 * a + 1] * Ro[3 + b] + Rp[3 * a + 2] * Ro[6 + b];
        } else {
          const int c = e - 9;
          td[c] = p < 0 ? to[c] : Rp[3 * c] * to[0] + Rp[3 * c + 1] * to[1] + Rp[3 * c + 2] * to[2] + t[3 * p + c];
        }
      });
      team.sync();
    }
    // the link's DOFs in order: R <- R Rot_k (revolute), t <- t + theta_k R a_k (prismatic)
    for (int q = 0; q < nk; ++q) {
      const int k = k0 + q;
      const bool rev = m.dof_revolute[k] != 0, last = q == nk - 1;
      const S* Rs = tmp + 12 * (q & 1);
      const S* ts = Rs + 9;
      S* Rd = last ? R + 9 * j : tmp + 12 * ((q + 1) & 1);
      S* td = last ? t + 3 * j : tmp + 12 * ((q + 1) & 1) + 9;
      const S* ax = m.dof_axis + 3 * k;
      const S* Q = rot + 9 * k;
      team.for_each_lane(12, [&](int e) {
        if (e < 9) {
          const int a = e / 3, b = e % 3;
          Rd[e] = rev ? Rs[3 * a] * Q[b] + Rs[3 * a + 1] * Q[3 + b] + Rs[3 * a + 2] * Q[6 + b] : Rs[e];
          return;
        }
        const int c = e - 9;
        if (rev && !s) {
          td[c] = ts[c];
          return;
        }
        const S w = Rs[3 * c] * ax[0] + Rs[3 * c + 1] * ax[1] + Rs[3 * c + 2] * ax[2];  // (R a_k)_c
        if (rev) {
          td[c] = ts[c];
          s[6 * k + c] = w;
          s[6 * k + 3 + c] = ts[c];  // the joint's origin, crossed with w below
        } else {
          td[c] = ts[c] + theta[k] * w;
          if (s) {
            s[6 * k + c] = S(0);
            s[6 * k + 3 + c] = w;
          }
        }
      });
      team.sync();
    }
  }
  if (!s) return;
  // revolute twists' linear part o_k x w_k, lane per DOF
  team.for_each_lane(D, [&](int k) {
    if (m.dof_revolute[k]) st3(s + 6 * k + 3, hd::cross(ld3(s + 6 * k + 3), ld3(s + 6 * k)));
  });
  team.sync();
}

/// The per-DOF terms of DOF k added to r_k and, when Jkk != nullptr, to J_kk = dr_k/dtheta_k
/// (the same physics in every integrator family):
///   armature a_k: inertia 1/2 a_k (theta_k - theta~_k)^2 / dt_a^2, theta~ = 2 theta_n - theta_{n-1}
///                 (PBFD paper Eq. (6) form; not scaled by the link mass scales; order 2: in.theta_tilde):
///                 r_k += a_k (theta_k - theta~_k) / dt_a^2,  J_kk += a_k / dt_a^2
///   damping b_k:  implicit viscous torque -b_k (theta_k - theta_v,k) / dt_v (first order
///                 theta_v = theta_n, dt_v = dt: backward Euler; order 2: BDF2, docs/methods/pbfd.md §3.1):
///                 r_k += b_k (theta_k - theta_v,k) / dt_v,   J_kk += b_k / dt_v
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
    const S inv_dt2 = S(1) / (inertia_step(in) * inertia_step(in));
    const S theta_tilde = in.theta_tilde ? in.theta_tilde[k] : 2 * in.theta_n[k] - in.theta_nm1[k];
    rk += a * (theta[k] - theta_tilde) * inv_dt2;
    if (Jkk) *Jkk += a * inv_dt2;
  }
  if (b != S(0)) {
    const S dt_v = velocity_step(in);
    rk += b * (theta[k] - in.theta_v[k]) / dt_v;
    if (Jkk) *Jkk += b / dt_v;
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
///
/// Subtree ("composite") moments as the reference (core/composite_moments.h, docs/methods/pbfd.md §2.3-§2.4):
///   1. FK and the DOF twists s_k (team_fk: lanes inside each link, serial along the tree);
///   2. three tasks per link: G_j (inertia §3, gravity §2.4) and with J_r P_j, in two halves by
///      rows; link j's contact points (§4.2/§4.4): their forces Gc_j and stiffnesses K6_j;
///   3. lane e per moment entry: the subtree sums (G_j += Gc_j first), children into parents in
///      reverse Model order;
///   4. lane l per DOF (J_r only): u_l = tr6(P W_l^T + W_l G) + K6 s_l, u~_l the same with K6^T,
///      all at link(l)'s subtree;
///   5. lane k per DOF: r_k = s_k . tr6(G_sub(k)) - tau_k + per-DOF terms, and row k of J_r:
///      J_kl = s_k . u_l (l >= k, k moving link(l)), J_kl = s_l . u~_k (l < k, l moving link(k)).
template <class S, class Team>
BIGSTEP_HD void pbfd_residual_team(Team& team, const ModelView<S>& m, const PbfdStepConst<S>& in, const S* theta,
                                   S* scratch, S* r, S* Jr) {
  using namespace team_detail;
  using V = hd::V3<S>;
  using M = hd::M3<S>;
  using std::pow;
  Scratch<S> sh(scratch, m, Jr);  // the link poses may live in J_r until its rows are written
  const int L = m.n_link, D = m.n_q;
  const bool jac = Jr != nullptr;
  // forward kinematics (docs/methods/pbfd.md §2.2) and the DOF twists s_k (§2.3), lane-parallel inside each link
  // (team_fk); the local rotations go to u / u~ and the link's running frame to the moment block,
  // both written only after FK
  team_fk(team, m, theta, sh.R, sh.t, sh.s, sh.u, sh.mom);
  const S inv_dt2 = S(1) / (inertia_step(in) * inertia_step(in));
  const V g{m.gravity[0], m.gravity[1], m.gravity[2]};
  // per-link moments, three tasks per link so that the lanes outnumber the links: link j's contacts
  // (task j: its K6_j and its contact forces into Gc_j) and its own terms in two halves (tasks
  // L + 2j + h: rows 2h, 2h + 1 of Y_j Sigma_j, G_j and P_j). Each task owns what it writes.
  team.for_each_lane(3 * L + m.n_body_pair, [&](int task) {
    if (task >= 3 * L) {  // body pair task - 3 L: its contacts into its slots
      body_pair_contacts(m, in, sh, task - 3 * L, jac);
      return;
    }
    if (task < L) {
      // contacts: link j's (core point, plane) rows in penetration (§4.2, §4.4); a link geom's
      // plane pair is its core points against the plane (Model::point_pair_*), as collide() forms it
      const int j = task;
      S* Gc = sh.gc + kMomG * j;
      S* K6 = sh.mom + kMomStride * j + kMomG + kMomP;
      for (int e = 0; e < kMomG; ++e) Gc[e] = 0;
      if (jac)
        for (int e = 0; e < kMomK; ++e) K6[e] = 0;
      for (int q = 0; q < m.n_point_pair; ++q) {
        const int s = m.point_pair_point[q], p = m.point_pair_plane[q];
        if (m.point_link[s] != j) continue;
        // the link's pose read per point, not held across the loop (register pressure)
        const V cp = ld9(sh.R + 9 * j) * m.v3(m.point_pos, s) + ld3(sh.t + 3 * j);
        const V n = m.v3(m.plane_normal, p);
        const S d = -(hd::dot(n, cp) - m.plane_offset[p] - m.point_radius[s]);
        if (!(d > 0)) continue;
        const V dc = cp - ld3(in.centre_n + 3 * s);
        const V u = dc - hd::dot(n, dc) * n;
        const S da = pow(d, in.alpha);
        if (in.coulomb) {
          // Coulomb (§4.9): F = -C_perp d^alpha n + mu f_n w u, K = kn n n^T + kt P_t + kuu u u^T - kun u n^T
          const S fn = in.c_perp * da, kn = in.c_perp * in.alpha * pow(d, in.alpha - 1);
          const CoulombScalars<S> cs = coulomb_scalars(in, u, fn, kn);
          add_force(Gc, cp, S(-1) * fn * n + cs.kt * u);
          if (!jac) continue;
          M K;
          for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b)
              K(a, b) = kn * n[a] * n[b] + cs.kt * ((a == b ? S(1) : S(0)) - n[a] * n[b]) + cs.kuu * u[a] * u[b] -
                        cs.kun * u[a] * n[b];
          add_stiffness(K6, cp, K);
          continue;
        }
        const S un = hd::norm(u);
        const S ub1 = pow(un, in.beta - 1), dg = pow(d, in.gamma), dg1 = pow(d, in.gamma + 1);
        const V f = (-(in.beta + 1) * ub1 * dg1) * u;  // f_par
        // F = -C_perp d^alpha n - C_par f_par on the point (r += J^T F)
        add_force(Gc, cp, S(-1) * (in.c_perp * da) * n - in.c_par * f);
        if (!jac) continue;
        // K = dF/dp = C_perp alpha d^(alpha-1) n n^T - C_par df_par/dp (dd/dp = -n), with
        // df_par/dp = -(beta+1) d^(gamma+1) |u|^(beta-1) (P_t + (beta-1) u u^T / |u|^2)
        //             + (beta+1)(gamma+1) d^gamma |u|^(beta-1) u n^T
        const S kn = in.c_perp * in.alpha * pow(d, in.alpha - 1);
        const S kt = in.c_par * (in.beta + 1) * dg1 * ub1;
        const S kuu = (in.beta != S(1) && un > 0) ? kt * (in.beta - 1) / (un * un) : S(0);
        const S kun = in.c_par * (in.beta + 1) * (in.gamma + 1) * dg * ub1;
        M K;
        for (int a = 0; a < 3; ++a)
          for (int b = 0; b < 3; ++b)
            K(a, b) = kn * n[a] * n[b] + kt * ((a == b ? S(1) : S(0)) - n[a] * n[b]) + kuu * u[a] * u[b] -
                      kun * u[a] * n[b];
        add_stiffness(K6, cp, K);
      }
      return;
    }
    const int j = (task - L) >> 1, h = (task - L) & 1;
    S* G = sh.mom + kMomStride * j;
    S* P = G + kMomG;
    // link j's pose, anchor, inertia and COM read entry by entry where used (the same values as
    // their M3 / V3 copies): why -- R, A, S, t, b, c held at once (~40 registers) were a register
    // peak of the FP32 warp kernel, and row a (from the task) put an indexed copy in local memory
    const S *R = sh.R + 9 * j, *t = sh.t + 3 * j, *Rh = in.anchor_R + 9 * j, *th = in.anchor_t + 3 * j;
    const S *Sg = m.link_S + 9 * j, *c = m.link_com + 3 * j;
    const S ms = in.mass_scale ? in.mass_scale[j] : S(1), mj = ms * m.link_mass[j];
    // inertia (§3): G_j = Y_j Sigma_j [A_j b_j]^T / dt_a^2, A_j = R_j - Rhat_j, b_j = t_j - that_j;
    // gravity (§2.4): the force f = -m_j g at the COM x = R c + t, G_j += [x; 1] f^T
    const V f = S(-1) * mj * g;
    for (int a = 2 * h; a < 2 * h + 2; ++a) {
      // row a of Y_j Sigma_j = [s R S + t m c^T, m x; m c^T, m] (Sigma_j scaled by the rollout's s_j)
      S Y[4], xa = 1;
      if (a < 3) {
        const S* Ra = R + 3 * a;
        xa = Ra[0] * c[0] + Ra[1] * c[1] + Ra[2] * c[2] + t[a];
        for (int b = 0; b < 3; ++b)
          Y[b] = ms * (Ra[0] * Sg[b] + Ra[1] * Sg[3 + b] + Ra[2] * Sg[6 + b]) + mj * t[a] * c[b];
        Y[3] = mj * xa;
      } else {
        for (int b = 0; b < 3; ++b) Y[b] = mj * c[b];
        Y[3] = mj;
      }
      for (int b = 0; b < 3; ++b) {
        const S* Rb = R + 3 * b;
        const S* Rhb = Rh + 3 * b;
        G[3 * a + b] = inv_dt2 * (Y[0] * (Rb[0] - Rhb[0]) + Y[1] * (Rb[1] - Rhb[1]) + Y[2] * (Rb[2] - Rhb[2]) +
                                  Y[3] * (t[b] - th[b]));
        G[3 * a + b] += a < 3 ? xa * f[b] : f[b];
      }
      if (jac) {
        // mass moment P_j = Y_j Sigma_j Y_j^T / dt_a^2, Y_j^T = [R^T 0; t^T 1]
        for (int b = 0; b < 3; ++b)
          P[4 * a + b] = inv_dt2 * (Y[0] * R[3 * b] + Y[1] * R[3 * b + 1] + Y[2] * R[3 * b + 2] + Y[3] * t[b]);
        P[4 * a + 3] = inv_dt2 * Y[3];
      }
    }
  });
  team.sync();
  // subtree sums, children after their parents in Model order: lane e owns entry e of every
  // link's block and walks the links backwards, adding link j's contact forces Gc_j into G_j before
  // G_j goes to the parent. Why per entry, not level by level over links: it needs one sync
  // whatever the depth, has no two lanes adding into one parent, and gives 64 (12 for r alone)
  // busy lanes on a chain, where a level holds one link.
  team.for_each_lane(jac ? kMomStride : kMomG, [&](int e) {
    if (e < kMomG && m.n_body_pair > 0) body_pair_forces(m, sh, e);  // the body contacts' forces first
    for (int j = L - 1; j >= 0; --j) {
      if (e < kMomG) sh.mom[kMomStride * j + e] += sh.gc[kMomG * j + e];
      const int p = m.link_parent[j];
      if (p >= 0) sh.mom[kMomStride * p + e] += sh.mom[kMomStride * j + e];
    }
  });
  team.sync();
  // second-order read-outs per DOF l at link(l)'s subtree: u_l = tr6(P W_l^T + W_l G) + K6 s_l,
  // u~_l = the same with K6^T (the mirror J_lk, k < l)
  if (jac) {
    team.for_each_lane(D, [&](int l) {
      const S* G = sh.mom + kMomStride * m.dof_link[l];
      const S* P = G + kMomG;
      const S* K6 = P + kMomP;
      const S* sl = sh.s + 6 * l;
      S W[12], X[12];
      twist_top(sl, W);
      for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 3; ++b) {
          S v = 0;
          for (int e = 0; e < 4; ++e) v += P[4 * a + e] * W[4 * b + e];
          if (a < 3)
            for (int e = 0; e < 4; ++e) v += W[4 * a + e] * G[3 * e + b];
          X[3 * a + b] = v;
        }
      S y[6];
      tr6(X, y);
      for (int a = 0; a < 6; ++a) {
        S Ks = 0, Kts = 0;
        for (int b = 0; b < 6; ++b) {
          Ks += K6[6 * a + b] * sl[b];
          Kts += K6[6 * b + a] * sl[b];
        }
        sh.u[6 * l + a] = y[a] + Ks;
        sh.ut[6 * l + a] = y[a] + Kts;
      }
    });
    team.sync();
  }
  // residual and Jacobian row k
  team.for_each_lane(D, [&](int k) {
    const int j = m.dof_link[k];
    const S* sk = sh.s + 6 * k;
    S y[6];
    tr6(sh.mom + kMomStride * j, y);
    S rk = dot6(sk, y) - in.tau[k];
    if (jac) {
      // l < k: J_kl = s_l . u~_k when l moves link(k); l >= k: J_kl = s_k . u_l when k moves link(l)
      for (int l = 0; l < k; ++l) Jr[k * D + l] = m.moves(l, j) ? dot6(sh.s + 6 * l, sh.ut + 6 * k) : S(0);
      for (int l = k; l < D; ++l) Jr[k * D + l] = m.moves(k, m.dof_link[l]) ? dot6(sk, sh.u + 6 * l) : S(0);
      if (m.n_body_pair > 0) body_pair_stiffness_row(m, sh, k, Jr + k * D);  // body contacts' J^T K J
    }
    // per-DOF model terms (agreed formulas; each is diagonal: lane k adds to r_k and J_kk only)
    pbfd_dof_terms(m, in, theta, k, rk, jac ? &Jr[k * D + k] : static_cast<S*>(nullptr));
    if (in.kp) {  // stable PD servo: -tau_pd(theta) and its Jacobian
      const S dt_v = velocity_step(in);
      rk += in.kp[k] * (theta[k] - in.theta_bar[k]) + in.kd[k] * ((theta[k] - in.theta_v[k]) / dt_v - in.theta_dot_bar[k]);
      if (jac) Jr[k * D + k] += in.kp[k] + in.kd[k] / dt_v;
    }
    r[k] = rk;
  });
  team.sync();
}

}  // namespace bigstep
