// NE-MDP baseline (spec nmdp.md §8): forward (semi-implicit) Euler with the maximal-dissipation
// contact QP over the linearized polytope of nmdp.md §4, contact data frozen at the step start.
#pragma once
#include "solvers/integrator.h"
#include "solvers/ne_contact.h"
#include "solvers/qp_dense.h"

namespace bigstep {

class NeMdpIntegrator final : public Integrator {
 public:
  NeMdpIntegrator(const Model& m, const NeSettings& s);
  /// With Tan's stable PD (M~ = H + h K_d, nmdp.md §8) when u.pd is set.
  StepStats step_controlled(const VecX& theta_n, const VecX& theta_nm1, const StepControl& u,
                            VecX& theta_next) override;
  void set_contact(const ContactParams& cp) override { s_.mu = cp.mu; }
  double k_c() const { return k_c_; }

 private:
  const Model& m_;
  NeSettings s_;
  double k_c_, zeta_s_;
  Kinematics kin_;
  QpWorkspace qp_;
  std::vector<int> warm_;
};

}  // namespace bigstep
