"""The torso's roll cycle on the paper-like trot (oracle 12 at mu = 100; bench/experiments/notes/inverse_dynamics.md
"Footstep re-planning").

configs/id_quadruped_trot.yaml with walk.foot_space + walk.world_swing at mu = 100, 3 s, unlimited
torques (controller.tau_max = 0); per controller (and --set keys) from trajectory.csv: the torso's
roll rx and pitch ry over the last gait period [2.4, 3.0) s (FR/RL swing over [2.55, 2.7), FL/RR
over [2.85, 3.0): the two-leg phases), their peak-to-peak there, and the roll rate at each lift-off
(2.55 s, 2.85 s; a 10 ms central difference): how fast the torso is already rolling when the
two-leg phase, whose roll nothing but the next footholds can act on, begins.

    python3 bench/experiments/id_roll_cycle.py [--controllers id_lcp_inf,id_prev1] [--set key=value]... [--tag T]

Writes bench/experiments/results/id_roll_cycle[_T].csv (+ .meta.json).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]  # siblings, bench/common.py
import common  # noqa: E402

KEYS = {"contact.mu": 100, "integrator.duration": 3.0, "controller.tau_max": 0,
        "control.reference.walk.foot_space": "true", "control.reference.walk.world_swing": "true"}
FIELDS = ["controller", "rc", "roll_p2p_rad", "pitch_p2p_rad", "roll_rate_lift_2.55_rad_s", "roll_rate_lift_2.85_rad_s"]


def rate(t, x, at, h=0.005):
    i, j = np.searchsorted(t, at + h - 1e-9), np.searchsorted(t, at - h - 1e-9)
    return (x[i] - x[j]) / (t[i] - t[j])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--controllers", default="id_lcp_inf,id_qp_mu,id_prev1")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--tag", default="")
    args = ap.parse_args()
    extra = dict(kv.split("=", 1) for kv in args.set)
    info = common.machine_info()
    rows = []
    for c in args.controllers.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            r = common.run_scene("id_quadruped_trot", {**KEYS, "controller.type": c, **extra}, keep_dir=Path(tmp))
            th = np.genfromtxt(Path(tmp) / "trajectory.csv", delimiter=",", skip_header=1)
        t, ry, rx = th[:, 0], th[:, 5], th[:, 6]  # theta: x, y, z, rz, ry, rx, legs
        w = (t >= 2.4 - 1e-9) & (t < 3.0 - 1e-9)
        rows.append({"controller": c, "rc": r.rc, "roll_p2p_rad": float(np.ptp(rx[w])),
                     "pitch_p2p_rad": float(np.ptp(ry[w])), "roll_rate_lift_2.55_rad_s": float(rate(t, rx, 2.55)),
                     "roll_rate_lift_2.85_rad_s": float(rate(t, rx, 2.85))})
    meta = {"command": common.command_line(), **info, "keys": {**KEYS, **extra}}
    stem = "id_roll_cycle" + (f"_{args.tag}" if args.tag else "")
    path = common.write_csv(common.EXPERIMENT_RESULTS / f"{stem}.csv", rows, FIELDS, meta)
    common.print_table(rows, FIELDS)
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
