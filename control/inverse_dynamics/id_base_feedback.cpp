// Operational-space base PD of the ID controllers (control/inverse_dynamics/id_base_feedback.h; spec
// docs/methods/inverse_dynamics.md §9 "Controllers"). cpu-only: a controller, run on the host per rollout.
#include "control/inverse_dynamics/id_base_feedback.h"

#include "numerics/dense_small.h"
#include "control/inverse_dynamics/id_problem.h"

namespace bigstep {

namespace {
// weight of a stance foot's acceleration [(m/s^2)^-2 vs (rad/s^2)^-2 of a joint]: 1e4 lets a
// joint give way by 1 rad/s^2 rather than a foot by 1 cm/s^2, i.e. the correction keeps the feet put
constexpr double kStanceWeight = 1e4;
// weight of the base's desired accelerations: as the stance rows, so that the joints (weight 1)
// give way to both and the base gets a_des where the stance legs can deliver it
constexpr double kBaseWeight = 1e4;
// weight of the accelerations nothing asks for (x, y of the base, other free bodies): keeps A SPD
constexpr double kFreeWeight = 1e-6;
}  // namespace

IdBaseFeedback::IdBaseFeedback(const Model& m, double kp_, double kd_)
    : kp(kp_), kd(kd_), A(MatX::Zero(m.n_q, m.n_q)), b(VecX::Zero(m.n_q)), Jrow(VecX::Zero(m.n_q)),
      wd(VecX::Constant(m.n_q, kFreeWeight)) {
  for (int l = 0; l < m.n_link && base < 0; ++l)
    if (m.link_joint[size_t(l)] == JointType::Floating && m.link_parent[size_t(l)] < 0) base = m.link_dof_adr[size_t(l)];
  // 1 on the actuated DOFs, kBaseWeight on the base's z, rz, ry, rx; kFreeWeight on its x, y and
  // on any other unactuated body (a held object: nothing plans it)
  for (int k : id_actuated_dofs(m)) wd[k] = 1.0;
  if (base >= 0) wd.segment(base + 2, 4).setConstant(kBaseWeight);
}

void id_base_feedback(const IdTerms& terms, const VecX& theta, const VecX& v, const VecX& theta_bar,
                      const VecX& thetad_bar, const VecX& thetadd_bar, IdBaseFeedback& fb, VecX& qdd) {
  fb.n_stance = 0;
  if (!fb.active()) return;
  const int m = int(qdd.size()), b0 = fb.base;
  const auto is_base = [&](int k) { return k >= b0 && k < b0 + 6; };
  // A = diag(wd) + w_c sum_i J_i^T J_i (lower triangle), b = wd .* [qdd on joints; a_des of z, rz,
  // ry, rx; 0] (solved in place: b becomes a*)
  fb.A.setZero();
  for (int k = 0; k < m; ++k) {
    fb.A(k, k) = fb.wd[k];
    fb.b[k] = fb.wd[k] == 1.0 ? qdd[k] : 0.0;
  }
  for (int k = b0 + 2; k < b0 + 6; ++k)
    fb.b[k] = kBaseWeight * (thetadd_bar[k] + fb.kp * (theta_bar[k] - theta[k]) + fb.kd * (thetad_bar[k] - v[k]));
  for (int i = 0; i < terms.n; ++i) {
    // stance: touching (phi <= kIdStanceGap) and not lifted by the plan ((N_i)_q thetad_bar_q <= kIdLiftSpeed)
    double lift = 0;
    for (int k = 0; k < m; ++k)
      if (!is_base(k)) lift += terms.N(i, k) * thetad_bar[k];
    if (lift > kIdLiftSpeed || terms.phi[i] > kIdStanceGap) continue;
    ++fb.n_stance;
    for (const MatX* J : {&terms.N, &terms.S, &terms.T}) {
      for (int k = 0; k < m; ++k) fb.Jrow[k] = (*J)(i, k);
      for (int c = 0; c < m; ++c)
        for (int r = c; r < m; ++r) fb.A(r, c) += kStanceWeight * fb.Jrow[r] * fb.Jrow[c];
    }
  }
  if (fb.n_stance == 0) return;  // nothing couples the base to the joints: qdd unchanged
  if (!cholesky_inplace(fb.A, m)) return;
  forward_subst(fb.A, fb.b, m);
  backward_subst_transposed(fb.A, fb.b, m);
  for (int k = 0; k < m; ++k)
    if (fb.wd[k] == 1.0 && !is_base(k)) qdd[k] = fb.b[k];
}

}  // namespace bigstep
