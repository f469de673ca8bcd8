// NE-MDP baseline (docs/methods/newton_euler.md §3): forward (semi-implicit) Euler with the maximal-dissipation
// contact QP over the linearized polytope of docs/methods/nmdp.md §4, contact data frozen at the step start.
#pragma once
#include "solvers/integrator.h"
#include "solvers/terms/ne_contact.h"
#include "numerics/qp_dense.h"

namespace bigstep {

class NeMdpIntegrator final : public Integrator {
 public:
  NeMdpIntegrator(const Model& m, const NeSettings& s);
  RolloutParams default_params() const override;
  double k_c() const { return k_c_; }

 protected:
  /// With Tan's stable PD (M~ = H + h K_d, docs/methods/newton_euler.md §4) when u.pd is set; friction p.contact.mu.
  /// The QP starts from the rollout's previous active set (d.qp_active).
  StepStats advance(const VecX& theta_n, const VecX& theta_nm1, const StepControl& u, const RolloutParams& p,
                    Data& d, VecX& theta_next) const override;
  std::unique_ptr<Workspace> make_workspace() const override;
  bool velocity_state() const override { return true; }  // v_n = (theta_n - theta_{n-1}) / dt

 private:
  NeSettings s_;
  double k_c_, zeta_s_;
};

}  // namespace bigstep
