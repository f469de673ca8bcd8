"""The PBFD joint-limit penalty C that matches MuJoCo's soft joint limits statically (
item 4; the value behind `model.limit_stiffness` in the walker2d retrain).

MuJoCo's limit row obeys a1 + d (b v + k r) = (1 - d) a0 (MuJoCo documentation, "Computation",
soft constraints), with k = 1 / (dmax^2 tc^2 dr^2) from solref (tc, dr) and solimp (d0, dmax, ...).
At rest (a1 = v = 0) under a joint torque tau, a0 = A tau with A = (M^-1)_jj, so the limit is
overshot by r = (1 - d) A tau / (d k): a linear stop of stiffness K = d k / ((1 - d) A). PBFD's limit
torque is C r^alpha (alpha = 2, solvers/terms/joint_terms.cpp), equal at the actuator's largest torque
when C = tau / r^2. Evaluated at qpos0 with d = dmax (overshoot beyond solimp's width).

    python3 bench/experiments/mujoco_limit_stiffness.py
"""
from __future__ import annotations

import os

import numpy as np


def main() -> None:
    import gymnasium
    import mujoco
    for xml in ("hopper.xml", "walker2d_v5.xml"):
        m = mujoco.MjModel.from_xml_path(os.path.join(os.path.dirname(gymnasium.__file__), "envs/mujoco/assets", xml))
        d = mujoco.MjData(m)
        mujoco.mj_forward(m, d)
        Cs = []
        print(f"{xml}: MJCF default c_perp W / (4 (2 mm)^2) = {m.body_mass.sum() * 9.81 / (4 * 4e-6):.3g}")
        for a in range(m.nu):
            j = m.actuator_trnid[a, 0]
            dof = m.jnt_dofadr[j]
            e, x = np.zeros((1, m.nv)), np.zeros((1, m.nv))
            e[0, dof] = 1
            mujoco.mj_solveM(m, d, x, e)
            A = x[0, dof]
            tc, dr = m.jnt_solref[j]
            dmax = m.jnt_solimp[j][1]
            K = dmax / (dmax**2 * tc**2 * dr**2) / ((1 - dmax) * A)
            tau = m.actuator_gear[a, 0] * m.actuator_ctrlrange[a, 1]
            r = tau / K
            Cs.append(tau / r**2)
            print(f"  {m.joint(j).name:18s} A {A:8.3g}  K {K:8.3g} N m/rad  tau {tau:5g}  overshoot {r:.4f} rad  C {Cs[-1]:.3g}")
        print(f"  geometric mean C {np.exp(np.mean(np.log(Cs))):.3g}")


if __name__ == "__main__":
    main()
