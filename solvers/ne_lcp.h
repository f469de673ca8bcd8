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
  /// With Tan's stable PD (M~ = H + h K_d replaces H in the impulse equation) when u.pd is set.
  StepStats step_controlled(const VecX& theta_n, const VecX& theta_nm1, const StepControl& u,
                            VecX& theta_next) override;
  void set_contact(const ContactParams& cp) override { s_.mu = cp.mu; }
  int last_contact_count() const { return last_contacts_; }

 private:
  const Model& m_;
  NeSettings s_;
  Kinematics kin_;
  LcpWorkspace lcp_;
  int last_contacts_ = 0;
};

}  // namespace bigstep
