// Newton-Euler with dry friction: Stewart-Trinkle / Anitescu-Potra velocity-level LCP with a
// linearized friction cone (spec pbfd.md §7, paper Eq. 1, 2, 7), solved by Lemke.
#pragma once
#include "solvers/integrator.h"
#include "solvers/lcp_lemke.h"
#include "solvers/ne_contact.h"

namespace bigstep {

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

 private:
  NeSettings s_;
};

}  // namespace bigstep
