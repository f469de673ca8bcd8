// ID controllers (control/inverse_dynamics/id_controller.h; docs/methods/inverse_dynamics.md §9).
#include "control/inverse_dynamics/id_controller.h"

#include <algorithm>
#include <cmath>

#include "control/control_bound.h"
#include "core/error.h"
#include "solvers/terms/actuation.h"

namespace bigstep {

const std::vector<std::string>& controller_type_names() {
  static const std::vector<std::string> names = {"pd", "id_lcp_inf", "id_lcp_mu", "id_qp_mu",
                                                 "id_qp_inf", "id_prev1", "id_prev2"};
  return names;
}

const char* controller_type_name(ControllerType t) { return controller_type_names()[size_t(t)].c_str(); }

ControllerType controller_type_from_name(const std::string& s) {
  const auto& names = controller_type_names();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == s) return ControllerType(i);
  BIGSTEP_CHECK_ARG(false, "controller.type", s, "expected pd, id_lcp_inf, id_lcp_mu, id_qp_mu, id_qp_inf, id_prev1 or id_prev2");
  return ControllerType::Pd;
}

IdControllerState::IdControllerState(const Model& m, const IdControllerSpec& s)
    : terms(m), ws(m.n_q, id_actuated_dofs(m), m.max_contacts), base_fb(m, s.base_kp, s.base_kd) {
  ws.init_result(res);
  const int n = m.n_q;
  for (VecX* x : {&theta_bar, &theta_dot_bar, &theta_dot_bar_next, &e_int, &qdd, &v, &tau_full, &kappa_prev, &tau_prev,
                  &g1, &g2, &qdd_bar})
    x->setZero(n);
  qdot_des.setZero(ws.nq());
  vb_des.setZero(ws.nb());
  plan_mem.setZero(s.reference_memory);
  M_prev.setZero(n, n);
  dof_torque_range(m, s.tau_max, tau_lo, tau_hi);
  control_divergence_bound(m, tau_bound);
}

void id_control(const Model& m, const IdControllerSpec& s,
                const std::function<void(double, VecX&, VecX&)>& reference, double t, const VecX& theta,
                const VecX& theta_prev, double dt, double mu, IdControllerState& st, VecX& tau,
                const double* geom_mu) {
  const int n = m.n_q;
  // state velocity and the simulator's contact impulse of the previous step (g = M v - kappa - dt P^T tau)
  st.v = (theta - theta_prev) / dt;
  if (st.calls > 0) {
    st.g2 = st.g1;
    st.g1.noalias() = st.M_prev * st.v;
    st.g1 -= st.kappa_prev;
    st.g1 -= dt * st.tau_prev;
  }
  // problem terms at (theta, v)
  st.terms.update(m, theta, st.v, dt, mu, s.contact_distance, nullptr, geom_mu);
  // The plan's contact set (controller.planned_contact, the foot-space trot): the ID models the
  // contacts of planned stance feet that are down, not those arriving. Departs from §9's "every
  // contact" [ours]: with every joint acceleration prescribed, a foot that meets the
  // ground at speed u can only be stopped within the step through the whole robot (4-7 kN predicted
  // for u = 0.1-0.3 m/s, the stance feet unloaded and the robot lifted). An arriving contact, one
  // that at its present normal speed would close its gap phi within the step (phi + dt N v < -slop),
  // is left to the simulator, which stops the foot against the leg's actual torques; the step
  // after, the foot is down and in the model. A foot planned in swing is never in it.
  constexpr double kImpactSlop = 1e-6;  // [m] resting feet: |phi + dt N v| ~ 1e-8 m
  if (s.planned_contact) {
    IdTerms& c = st.terms;
    int k = 0;
    for (int i = 0; i < c.n; ++i) {
      const int id = c.ids[size_t(i)];
      if (!s.planned_contact(t, id / m.n_geom, id % m.n_geom)) continue;
      if (c.phi[i] + dt * c.N.row(i).dot(st.v) < -kImpactSlop) continue;
      if (k != i) {
        c.N.row(k) = c.N.row(i);
        c.S.row(k) = c.S.row(i);
        c.T.row(k) = c.T.row(i);
        c.phi[k] = c.phi[i];
        c.mu[k] = c.mu[i];
        c.ids[size_t(k)] = id;
      }
      ++k;
    }
    c.n = k;
  }
  if (s.plan_unactuated) {
    // A held object cannot leave (or let in) fingers on opposite sides at once: the -phi/dt push-out
    // of the simulator's round-off penetration (~1e-12 m) and the PID's round-off closing of the
    // fingers (~1e-9 m/s) made nearly every grasp step infeasible (I14) and repaired. Every contact
    // gets kGraspSlop of room: approach up to kGraspSlop/dt, deeper penetration pushed out less it.
    constexpr double kGraspSlop = 1e-7;  // [m]
    for (int i = 0; i < st.terms.n; ++i) st.terms.phi[i] += kGraspSlop;
  }
  // PID on the planned motion: qdd_des = qdd_ref + kp e + kd e_dot + ki int e
  if (s.reference_state) {  // the plan seen from the rollout's state (IK at the actual torso pose)
    double* mem = st.plan_mem.size() > 0 ? st.plan_mem.data() : nullptr;
    s.reference_state(t + dt, t, theta, st.v, mem, st.theta_bar, st.theta_dot_bar_next);
    s.reference_state(t, t, theta, st.v, mem, st.theta_bar, st.theta_dot_bar);
  } else {
    reference(t + dt, st.theta_bar, st.theta_dot_bar_next);
    reference(t, st.theta_bar, st.theta_dot_bar);
  }
  st.qdd_bar = (st.theta_dot_bar_next - st.theta_dot_bar) / dt;
  st.e_int += dt * (st.theta_bar - theta);
  st.qdd = st.qdd_bar;
  st.qdd += s.kp * (st.theta_bar - theta) + s.kd * (st.theta_dot_bar - st.v) + s.ki * st.e_int;
  // operational-space PD on the floating base through the stance legs (controller.base_kp / base_kd)
  id_base_feedback(st.terms, theta, st.v, st.theta_bar, st.theta_dot_bar, st.qdd_bar, st.base_fb, st.qdd);
  const std::vector<int>& act = st.ws.actuated();
  for (size_t j = 0; j < act.size(); ++j) st.qdot_des[Eigen::Index(j)] = st.v[act[j]] + dt * st.qdd[act[j]];
  IdProblem p = st.terms.problem(st.qdot_des, dt);
  p.friction_needs_load = true;  // mu = inf as the cone's limit (the paper's rows made the robot fall)
  p.mu_inf = s.mu_inf;
  if (s.plan_unactuated) {  // the held object's planned velocity, by the same PID
    const std::vector<int>& una = st.ws.unactuated();
    for (size_t j = 0; j < una.size(); ++j) st.vb_des[Eigen::Index(j)] = st.v[una[j]] + dt * st.qdd[una[j]];
    p.vb_des = std::span<const double>(st.vb_des.data(), una.size());
  }
  switch (s.type) {
    case ControllerType::IdLcpInf: id_solve(IdKind::LcpInf, p, st.ws, st.res); break;
    case ControllerType::IdLcpMu: id_solve(IdKind::LcpMu, p, st.ws, st.res); break;
    case ControllerType::IdQpMu: id_solve(IdKind::QpMu, p, st.ws, st.res); break;
    case ControllerType::IdQpInf: id_solve(IdKind::QpInf, p, st.ws, st.res); break;
    case ControllerType::IdPrev1: id_given_impulse(p, st.g1, st.ws, st.res); break;
    case ControllerType::IdPrev2: id_given_impulse(p, st.g2, st.ws, st.res); break;
    case ControllerType::Pd: BIGSTEP_CHECK_ARG(false, "controller.type", "pd", "has no inverse-dynamics controller");
  }
  st.status = st.res.status;
  st.force_pred = st.res.n > 0 ? id_normal_force(st.res, dt) : 0;
  tau.setZero(n);
  for (size_t j = 0; j < act.size(); ++j) tau[act[j]] = st.res.tau[Eigen::Index(j)];
  st.diverged_dof = -1;
  for (int k : act)
    if (!std::isfinite(tau[k])) {
      st.diverged_dof = k;
      st.diverged_tau = tau[k];
      break;
    }
  if (st.diverged_dof >= 0) tau.setZero();
  // actuator limits (controller.tau_max, limited motors): no actuator delivers more. Where the plan
  // cannot be held (mu = 0.1 under a no-slip model, a landing, a box the model lets go) the ID
  // asks for the infinite-stiffness joint of the rigid model: 1e4-1e16 N m fed back through the
  // PID until the run aborted
  bool clamped = false;
  for (int k : act) {
    const double c = std::clamp(tau[k], st.tau_lo[k], st.tau_hi[k]);
    clamped |= c != tau[k];
    tau[k] = c;
  }
  if (clamped) st.status |= ID_TORQUE_CLAMPED;
  // divergence: what is applied, beyond the physical range (control/control_bound.cpp)
  for (int k : act)
    if (st.diverged_dof < 0 && std::abs(tau[k]) > st.tau_bound[k]) {
      st.diverged_dof = k;
      st.diverged_tau = tau[k];
    }
  if (st.diverged_dof >= 0) st.status |= ID_DIVERGED;
  // carry for the next call
  st.M_prev = st.terms.M;
  st.kappa_prev = st.terms.kappa;
  st.tau_prev = tau;
  ++st.calls;
}

}  // namespace bigstep
