// Newton-Euler with dry friction: Stewart-Trinkle / Anitescu-Potra velocity-level LCP with a
// linearized friction cone (docs/methods/newton_euler.md §2, paper Eq. 1, 2, 7), solved by Lemke.
#pragma once
#include "solvers/integrator.h"
#include "numerics/lcp_lemke.h"
#include "solvers/terms/ne_contact.h"

namespace bigstep {

/// Per-rollout scratch of NE-LCP (d.ws): kinematics at theta_n, the contacts, Lemke's tableau and
/// every per-step buffer at its largest size (m.max_contacts geom contacts with nd friction
/// directions, m.n_limit joint-limit stops): a step does not allocate. Public so that tests can
/// read the last LCP: unknowns z = [lambda (nc contacts, then nl stops); beta (nc nd); gamma (nc)],
/// w = M z + q, the leading N = nc (2 + nd) + nl entries valid.
struct NeLcpWorkspace : Workspace {
  NeLcpWorkspace(const Model& m, const NeSettings& s);
  Kinematics kin;
  Kinematics kin_next;  ///< at theta_n + h v_free: bounds the motion of the speculative candidates
  LcpWorkspace lcp;
  NeSmoothStep sm;
  NeContacts contacts;
  MatX Jall, HinvJt, G, M;  // storage of packed (nr x n), (n x nr), (nr x nr), (N x N) maps
  VecX q, z, w, phi, tmp, v_plus, th_free;
  VecX z_keep, q_base, e_lin;  ///< re-linearisation: previous z, q of the normal rows before it, remainders
  int nc = 0, nl = 0, N = 0;  ///< sizes of the last LCP (0 when no contact)
  void bind_chart(const Mat3* chart) override {
    kin.chart = kin_next.chart = chart;
    sm.bind_chart(chart);
  }
};

class NeLcpIntegrator final : public Integrator {
 public:
  NeLcpIntegrator(const Model& m, const NeSettings& s);
  RolloutParams default_params() const override;

 protected:
  /// With Tan's stable PD (M~ = H + h K_d replaces H in the impulse equation) when u.pd is set;
  /// friction coefficient p.contact.mu.
  StepStats advance(const VecX& theta_n, const VecX& theta_nm1, const StepControl& u, const RolloutParams& p,
                    Data& d, VecX& theta_next) const override;
  std::unique_ptr<Workspace> make_workspace() const override;
  bool velocity_state() const override { return true; }  // v_n = (theta_n - theta_{n-1}) / dt

 private:
  NeSettings s_;
};

}  // namespace bigstep
