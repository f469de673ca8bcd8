// Row assembly of the compliant solver (docs/methods/compliant.md §4; conventions in
// compliant_rows.h). cpu-only: the compliant solver has no CUDA mirror yet (its programs use the
// BIGSTEP_HD cone QP, so a per-rollout kernel can follow this file's structure).
#include "solvers/compliant/compliant_rows.h"

#include <algorithm>
#include <cmath>


namespace bigstep {

const char* normal_model_name(NormalModel n) {
  switch (n) {
    case NormalModel::Hertz: return "hertz";
    case NormalModel::HertzConsistent: return "hertz_consistent";
    case NormalModel::Linear: return "linear";
  }
  return "?";
}

CompliantRows::CompliantRows(const Model& m, int nc_max, int n_loops)
    : Gb(MatX::Zero(3 * n_loops, m.n_q)),
      phib(VecX::Zero(3 * n_loops)),
      gdb(VecX::Zero(3 * n_loops)),
      Kb(VecX::Zero(3 * n_loops)),
      Bb(VecX::Zero(3 * n_loops)),
      con(size_t(nc_max)),
      t1(size_t(nc_max)),
      t2(size_t(nc_max)),
      depth(VecX::Zero(nc_max)),
      set(m),
      Ja(MatX::Zero(3, m.n_q)),
      Jb(MatX::Zero(3, m.n_q)),
      J(MatX::Zero(3, m.n_q)),
      Jp(MatX::Zero(3, m.n_q)),
      Jm(MatX::Zero(3, m.n_q)) {
  const int R_max = 3 * nc_max + m.n_limit;
  G.setZero(R_max, m.n_q);
  phi.setZero(R_max);
  gd.setZero(R_max);
  K.setZero(R_max);
  B.setZero(R_max);
}

void contact_tangents(const Vec3& n, Vec3& t1, Vec3& t2) {
  t1 = Vec3::UnitX() - n * n.x();
  if (t1.norm() < 1e-6) t1 = Vec3::UnitY() - n * n.y();
  t1.normalize();
  t2 = n.cross(t1);
}

namespace {

// curvature 1/r of geom g's surface at a contact (0: flat), a radius-0 sphere as point_radius
double geom_curvature(const Model& m, int g, double point_radius) {
  if (g < 0) return 0;
  switch (m.geom_type[g]) {
    case GeomType::Sphere:
    case GeomType::Capsule: {
      const double r = m.geom_size[g][0];
      return r > 0 ? 1 / r : 1 / point_radius;
    }
    default: return 0;
  }
}

// world velocity J(p) v of material point p_local of link j at the configuration of kin (0 for the world)
Vec3 point_velocity(const Model& m, const Kinematics& kin, int j, const Vec3& p_local, const VecX& v, MatX& J) {
  if (j < 0) return Vec3::Zero();
  point_jacobian(m, kin, j, point_position(kin, j, p_local), J);
  return J * v;
}

// relative velocity of a contact's cores at the configuration of kin
Vec3 core_velocity(const Model& m, const Kinematics& kin, const Contact& c, const VecX& v, MatX& J) {
  return point_velocity(m, kin, c.link_a, c.ca_local, v, J) - point_velocity(m, kin, c.link_b, c.cb_local, v, J);
}

}  // namespace

double contact_radius(const Model& m, const Contact& c, double point_radius) {
  const double kappa = geom_curvature(m, c.geom_a, point_radius) + geom_curvature(m, c.geom_b, point_radius);
  return kappa > 0 ? 1 / kappa : point_radius;
}

void assemble_rows(const Model& m, const Kinematics& kin, const Kinematics* kin_p, const Kinematics* kin_m,
                   double eps, const VecX& theta, const VecX& v, const CompliantRowParams& p, double h, int tdim,
                   double k_scale, CompliantRows& rows, uint32_t& status) {
  const bool gdot = p.gdot && kin_p && kin_m;
  // ---- bilateral rows: phi = p_a - p_b, G = J_a(p_a) - J_b(p_b), G^dot v by central differences ----
  rows.nb = 3 * int(p.loops.size());
  for (size_t l = 0; l < p.loops.size(); ++l) {
    const CompliantLoop& L = p.loops[l];
    const int r0 = 3 * int(l);
    const Vec3 pa = L.link_a < 0 ? L.p_a : point_position(kin, L.link_a, L.p_a);
    const Vec3 pb = L.link_b < 0 ? L.p_b : point_position(kin, L.link_b, L.p_b);
    rows.Ja.setZero();
    rows.Jb.setZero();
    if (L.link_a >= 0) point_jacobian(m, kin, L.link_a, pa, rows.Ja);
    if (L.link_b >= 0) point_jacobian(m, kin, L.link_b, pb, rows.Jb);
    rows.Gb.middleRows(r0, 3) = rows.Ja - rows.Jb;
    rows.phib.segment<3>(r0) = pa - pb;
    Vec3 gd = Vec3::Zero();
    if (gdot) {
      const Vec3 vp = point_velocity(m, *kin_p, L.link_a, L.p_a, v, rows.Jp) - point_velocity(m, *kin_p, L.link_b, L.p_b, v, rows.Jp);
      const Vec3 vm = point_velocity(m, *kin_m, L.link_a, L.p_a, v, rows.Jm) - point_velocity(m, *kin_m, L.link_b, L.p_b, v, rows.Jm);
      gd = (vp - vm) / (2 * eps);
    }
    rows.gdb.segment<3>(r0) = gd;
    rows.Kb.segment<3>(r0).setConstant(L.k);
    rows.Bb.segment<3>(r0).setConstant(L.b);
  }

  // ---- collision stage once at theta_n: touching contacts (depth >= 0) and stops (phi <= 0) ----
  ContactSet& set = rows.set;
  set.update(m, kin, theta, 0.0);
  const int nc_max = int(rows.con.size());
  int nc = 0;
  for (int i = 0; i < set.n_con; ++i) {
    if (nc == nc_max) {
      status |= STATUS_CONTACT_OVERFLOW;
      break;
    }
    rows.con[nc++] = i;
  }
  const int nl = set.n_lim;
  rows.nc = nc;
  rows.nl = nl;
  rows.ny = nc + nl;
  rows.tdim = nc > 0 ? tdim : 0;
  rows.nx = nc * rows.tdim;
  rows.R = rows.ny + rows.nx;
  const double b_t = p.b_t > 0 ? p.b_t : 1e6 / h;

  // ---- contact normals and tangents ----
  for (int i = 0; i < nc; ++i) {
    const Contact& c = set.con[rows.con[i]];
    contact_core_jacobians(m, kin, c, rows.Ja, rows.Jb, rows.J);  // J = J_a(c_a) - J_b(c_b)
    contact_tangents(c.n, rows.t1[i], rows.t2[i]);
    const double d = std::max(c.depth, 0.0);
    rows.depth[i] = d;
    // normal row: separating positive (n from b to a)
    rows.G.row(i).noalias() = c.n.transpose() * rows.J;
    const double r = contact_radius(m, c, p.point_radius);
    switch (p.normal) {
      case NormalModel::Hertz:  // paper §6.4: pseudo-stiffness E* sqrt(r) on d^{3/2}
        rows.phi[i] = -d * std::sqrt(d);
        rows.K[i] = p.youngs * std::sqrt(r);
        break;
      case NormalModel::HertzConsistent:  // secant stiffness at theta_n (docs/methods/compliant.md §4, mode consistent)
        rows.phi[i] = -d;
        rows.K[i] = p.youngs * std::sqrt(r * d);
        break;
      case NormalModel::Linear:
        rows.phi[i] = -d;
        rows.K[i] = p.k_n;
        break;
    }
    rows.K[i] *= k_scale;  // the rollout's randomised stiffness (batch.randomize_stiffness)
    rows.B[i] = p.b_n;
    Vec3 gd = Vec3::Zero();
    if (gdot) gd = (core_velocity(m, *kin_p, c, v, rows.Jp) - core_velocity(m, *kin_m, c, v, rows.Jm)) / (2 * eps);
    rows.gd[i] = c.n.dot(gd);
    // tangent rows (K = 0: phi_r never enters)
    for (int k = 0; k < rows.tdim; ++k) {
      const int row = rows.ny + rows.tdim * i + k;
      const Vec3& t = k == 0 ? rows.t1[i] : rows.t2[i];
      rows.G.row(row).noalias() = t.transpose() * rows.J;
      rows.phi[row] = 0;
      rows.K[row] = 0;
      rows.B[row] = b_t;
      rows.gd[row] = t.dot(gd);
    }
  }
  // ---- joint-limit stops: phi = -depth, G = s e_k^T, G^dot = 0 ----
  for (int l = 0; l < nl; ++l) {
    const LimitContact& lc = set.lim[l];
    const int row = nc + l;
    rows.G.row(row).setZero();
    rows.G(row, lc.dof) = lc.s;
    rows.phi[row] = -lc.depth;
    rows.gd[row] = 0;
    rows.K[row] = p.k_lim;
    rows.B[row] = p.b_lim;
  }
}

}  // namespace bigstep
