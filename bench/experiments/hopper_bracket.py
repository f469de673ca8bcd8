"""Does bigstep's randomised training family bracket MuJoCo's first hop? (the
hopper's transfer gap of bench/experiments/hopper_gap.py.) A policy's actions, recorded closed loop in MuJoCo
Hopper-v5 as shipped from qpos0 (hopper_gap.policy_actions), are replayed open loop, each held for
20 ms, in MuJoCo (as shipped, elliptic cone) and in bigstep PBFD at the training step (dt = 20 ms)
over a grid of the parameters a training run draws per episode: contact.c_perp (as a factor of the
MJCF default W / (4 (2 mm)^2)) and contact.slip_speed (PBFD's viscous friction reaches mu N at that
slip: small = sticky), with model.limit_stiffness. Per row: the first hop's apex (max torso z over
0.5-1.0 s), the torso pitch there, and the deepest floor penetration (MuJoCo's collision on the
replayed states), as hopper_gap.py measures them.

    PYTHONPATH=build/python nice -n 10 python3 bench/experiments/hopper_bracket.py    # ~2 min per --limit-stiffness value (loaded box)
    # -> bench/experiments/results/hopper_bracket.csv, .meta.json
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]  # siblings, bench/common.py
import common  # noqa: E402
import hopper_gap as hg  # noqa: E402

C_PERP_SCALES = (1.0, 0.3, 0.1, 0.03, 0.01, 0.003)
SLIP_SPEEDS = (2.0, 1.0, 0.45, 0.2, 0.1)


def apex(q: np.ndarray, t: np.ndarray) -> dict:
    win = (t >= hg.WINDOW[0]) & (t <= hg.WINDOW[1])
    i = int(np.flatnonzero(win)[np.argmax(q[win, 1])])
    return dict(apex_z=float(q[i, 1]), apex_pitch=float(q[i, 2]), max_penetration=hg.penetration(q[t <= hg.COMPARE_T]))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--policies", nargs="+", default=["ppo_hopper_policy.pt", "ppo_hopper_dr2_lim_policy.pt"],
                   help="policy files in bench/results whose MuJoCo actions are replayed")
    p.add_argument("--limit-stiffness", type=float, nargs="+", default=[1e5])
    p.add_argument("--out", default=str(common.EXPERIMENT_RESULTS / "hopper_bracket.csv"))
    args = p.parse_args()
    import mujoco
    import bigstep
    ell = hg.mj_edit(cone=mujoco.mjtCone.mjCONE_ELLIPTIC)
    rows = []
    for pol in args.policies:
        acts = hg.policy_actions(common.EXPERIMENT_RESULTS / pol)
        t = np.arange(len(acts) + 1) * hg.H
        for name, edit in (("mujoco as shipped", None), ("mujoco elliptic cone", ell)):
            rows.append(dict(actions=pol, simulator=name, **apex(hg.mj_run(acts, edit), t)))
        for lk in args.limit_stiffness:
            for s in C_PERP_SCALES:
                for v in SLIP_SPEEDS:
                    ex = [f"contact.c_perp={s * hg.C_PERP0:.6g}", f"contact.slip_speed={v:g}", f"model.limit_stiffness={lk:g}"]
                    rows.append(dict(actions=pol, simulator="bigstep pbfd 20 ms", c_perp_scale=s, slip_speed=v,
                                     limit_stiffness=lk, **apex(hg.bs_run(acts, "pbfd", 0.02, ex), t)))
                print(f"  {pol} limit {lk:g} c_perp x{s:g}", flush=True)
    cols = ["actions", "simulator", "c_perp_scale", "slip_speed", "limit_stiffness", "apex_z", "apex_pitch",
            "max_penetration"]
    for pol in args.policies:
        mj = [r for r in rows if r["actions"] == pol and r["simulator"] == "mujoco as shipped"][0]
        bs = [r for r in rows if r["actions"] == pol and r["simulator"].startswith("bigstep")]
        zs = [r["apex_z"] for r in bs]
        print(f"{pol}: MuJoCo as shipped apex {mj['apex_z']:.3f} m (pitch {mj['apex_pitch']:.3f}); bigstep family "
              f"apex {min(zs):.3f}..{max(zs):.3f} m, pitch {min(r['apex_pitch'] for r in bs):.3f}.."
              f"{max(r['apex_pitch'] for r in bs):.3f}")
    common.print_table(rows, cols, {"apex_z": ".3f", "apex_pitch": ".3f", "max_penetration": ".4f"})
    info = common.machine_info(Path(bigstep._bigstep.__file__))
    meta = dict(command=common.command_line(), machine=f"{info['cpu']}, {info['cpu_count']} cores", date=info["date"],
                commit=info["git_commit"], git_dirty_files=info["git_dirty_files"], mujoco=mujoco.__version__,
                c_perp_default=hg.C_PERP0, control_period_s=hg.H,
                note="open-loop replay of each policy's MuJoCo (as shipped) actions from qpos0; apex = max torso z over "
                     f"{hg.WINDOW[0]}-{hg.WINDOW[1]} s; penetration: MuJoCo collision (margin 0) at the 20-ms samples "
                     f"over 0-{hg.COMPARE_T} s")
    common.write_csv(Path(args.out), rows, cols, meta)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    import mujoco
    _m = mujoco.MjModel.from_xml_path(hg.hopper_xml())
    hg.C_PERP0 = float(_m.body_mass.sum() * np.linalg.norm(_m.opt.gravity) / (4 * 2e-3 ** 2))
    main()
