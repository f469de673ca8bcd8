// Collision driver and contact Jacobians (collision.h; docs/methods/pbfd.md §2.3 for the point
// Jacobian columns). Pair functions and the table are in collision_primitive.cpp.
#include "core/collision.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace bigstep {

GeomFrame geom_frame(const Model& m, const Kinematics& kin, int g) {
  const int j = m.geom_link[g];
  if (j < 0) {
    const int h = m.geom_hfield[g];
    return {m.geom_pos[g], m.geom_R[g], m.geom_size[g], h < 0 ? nullptr : &m.hfield[size_t(h)]};
  }
  // a sphere's orientation is never read (no pair function looks at it): skip the 3x3 product,
  // which was most of the stage's cost on scenes made of contact points
  if (m.geom_type[g] == GeomType::Sphere) return {kin.R[j] * m.geom_pos[g] + kin.t[j], kin.R[j], m.geom_size[g]};
  return {kin.R[j] * m.geom_pos[g] + kin.t[j], kin.R[j] * m.geom_R[g], m.geom_size[g]};
}

namespace {

// World point p_w expressed in the frame of link j (the world frame for j = -1), and back.
Vec3 to_link_frame(const Kinematics& kin, int j, const Vec3& p_w) {
  return j < 0 ? p_w : Vec3(kin.R[j].transpose() * (p_w - kin.t[j]));
}
Vec3 to_world(const Kinematics& kin, int j, const Vec3& x) {
  return j < 0 ? x : point_position(kin, j, x);
}

// Column k of the point Jacobian of world point p fixed to link j (docs/methods/pbfd.md §2.3): w_k x (p - o_k)
// for a revolute DOF, u_k for a prismatic one, 0 when DOF k does not move j or j is the world.
Vec3 point_jacobian_column(const Model& m, const Kinematics& kin, int j, const Vec3& p, int k) {
  if (j < 0 || !m.moves(k, j)) return Vec3::Zero();
  return m.dof_revolute[k] ? Vec3(kin.w[k].cross(p - kin.o[k])) : kin.w[k];
}

// Narrow phase of one pair in world coordinates into out[0 .. room): straight into `out` while a
// whole pair's worth fits, else through a scratch buffer (built only then: a Contact has
// initialisers) so a full `out` is never overrun; keeps what fits and flags the overflow.
int narrow_phase(CollisionFunc f, const GeomFrame& fa, const GeomFrame& fb, double margin, Contact* out,
                 int room, uint32_t& status) {
  if (room >= max_pair_contacts) return f(fa, fb, margin, out);
  Contact scratch[max_pair_contacts];
  const int n_new = f(fa, fb, margin, scratch);
  const int n_keep = std::min(n_new, room);
  if (n_keep < n_new) status |= STATUS_CONTACT_OVERFLOW;
  std::copy(scratch, scratch + n_keep, out);
  return n_keep;
}

}  // namespace

int collide(const Model& m, const Kinematics& kin, double margin, Contact* out, int capacity,
            uint32_t& status) {
  BIGSTEP_CHECK_ARG(std::isfinite(margin) && margin >= 0, "margin", margin, "must be finite and >= 0");
  BIGSTEP_CHECK_ARG(capacity >= 0, "capacity", capacity, "must be >= 0");
  BIGSTEP_CHECK_ARG(int(kin.R.size()) == m.n_link && int(kin.w.size()) == m.n_q, "kin.R.size()",
                    kin.R.size(), "the Kinematics must be built from this model");
  int n_con = 0;
  // a geom's frame is placed once for consecutive pairs that share it (the pair list runs many
  // contact points against one plane: a third of the stage's cost was re-placing it)
  GeomFrame fa, fb;
  int placed_a = -1, placed_b = -1;
  for (int p = 0; p < m.n_pair; ++p) {
    const int ga = m.pair_geom_a[p], gb = m.pair_geom_b[p];
    if (gb != placed_b) fb = geom_frame(m, kin, placed_b = gb);
    // sphere a against plane b (every contact point against the terrain: the chain's 80 pairs):
    // the centre straight from the link pose, no geom frame, no call through the table, the
    // sphere's core from the model (the general path cost ~265 instructions a pair on
    // the chain, this one ~150). The same sphere_plane() and expressions as the general path, so
    // the contacts are bit for bit equal (tests/core/collision_test.cpp).
    if (m.geom_type[ga] == GeomType::Sphere && m.geom_type[gb] == GeomType::Plane) {
      const int ja = m.geom_link[ga], jb = m.geom_link[gb];
      const Vec3& local = m.geom_pos[ga];
      const Vec3 centre = ja < 0 ? local : Vec3(kin.R[ja] * local + kin.t[ja]);  // = geom_frame(ga).p
      if (n_con == capacity) {  // full: a contact here is dropped and flagged
        Contact dropped;
        if (sphere_plane(centre, m.geom_size[ga][0], fb, margin, &dropped)) status |= STATUS_CONTACT_OVERFLOW;
        continue;
      }
      Contact* dst = out + n_con;
      if (!sphere_plane(centre, m.geom_size[ga][0], fb, margin, dst)) continue;
      ++n_con;
      // the witness points p_a, p_b (contact_point_a / _b) from locals, into the links' frames
      const Vec3 n = dst->n, pos = dst->pos;
      const double h = 0.5 * dst->depth;
      const Vec3 pa = pos - h * n, pb = pos + h * n;
      dst->geom_a = ga;
      dst->geom_b = gb;
      dst->link_a = ja;
      dst->link_b = jb;
      dst->pa_local = ja < 0 ? pa : Vec3(kin.R[ja].transpose() * (pa - kin.t[ja]));
      dst->ca_local = local;
      if (jb < 0) {
        dst->pb_local = pb;
        dst->cb_local = pb - dst->rb * n;
      } else {
        dst->pb_local = to_link_frame(kin, jb, pb);
        dst->cb_local = to_link_frame(kin, jb, pb - dst->rb * n);
      }
      continue;
    }
    const CollisionFunc f = collision_func[int(m.geom_type[ga])][int(m.geom_type[gb])];
    if (ga != placed_a) fa = geom_frame(m, kin, placed_a = ga);
    const int n_keep = narrow_phase(f, fa, fb, margin, out + n_con, capacity - n_con, status);
    for (int i = 0; i < n_keep; ++i) {
      Contact& c = out[n_con++];
      c.geom_a = ga;
      c.geom_b = gb;
      c.link_a = m.geom_link[ga];
      c.link_b = m.geom_link[gb];
      c.pa_local = to_link_frame(kin, c.link_a, contact_point_a(c));
      c.pb_local = to_link_frame(kin, c.link_b, contact_point_b(c));
      // a sphere's core is its centre, a material point: taken exactly from the model (the round
      // trip pos -+ depth/2 n +- r n is off by round-off, which Lemke's basis choice on 40 coplanar
      // contacts amplified to millimetres); other cores from the witness points
      c.ca_local = m.geom_type[ga] == GeomType::Sphere ? m.geom_pos[ga]
                                                       : to_link_frame(kin, c.link_a, contact_point_a(c) + c.ra * c.n);
      c.cb_local = m.geom_type[gb] == GeomType::Sphere ? m.geom_pos[gb]
                                                       : to_link_frame(kin, c.link_b, contact_point_b(c) - c.rb * c.n);
    }
  }
  return n_con;
}

// J = J_a(p_a) - J_b(p_b), column by column: no temporary 3 x n_q matrices.
void contact_jacobian(const Model& m, const Kinematics& kin, const Contact& c, Eigen::Ref<MatX> J) {
  BIGSTEP_CHECK_ARG(J.rows() == 3 && J.cols() == m.n_q, "J.cols()", J.cols(), "J must be 3 x n_q");
  const Vec3 pa = to_world(kin, c.link_a, c.pa_local), pb = to_world(kin, c.link_b, c.pb_local);
  for (int k = 0; k < m.n_q; ++k)
    J.col(k) = point_jacobian_column(m, kin, c.link_a, pa, k) -
               point_jacobian_column(m, kin, c.link_b, pb, k);
}

void contact_depth_gradient(const Model& m, const Kinematics& kin, const Contact& c,
                            Eigen::Ref<VecX> g) {
  BIGSTEP_CHECK_ARG(g.size() == m.n_q, "g.size()", g.size(), "g must have n_q entries");
  const Vec3 pa = to_world(kin, c.link_a, c.pa_local), pb = to_world(kin, c.link_b, c.pb_local);
  for (int k = 0; k < m.n_q; ++k)
    g[k] = -c.n.dot(point_jacobian_column(m, kin, c.link_a, pa, k) -
                    point_jacobian_column(m, kin, c.link_b, pb, k));
}

}  // namespace bigstep
