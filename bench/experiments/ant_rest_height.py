#!/usr/bin/env python3
"""Why gymnasium's ant lies lower in bigstep's NE-LCP than in MuJoCo (bench/experiments/README.md, "The same
scenes in MuJoCo and bigstep"): torso height and ankle angle over 2 s, controls 0, dt 0.01 in both.

Two starts: gymnasium's pose (qpos 0: every ankle 30 deg outside its range [30, 70] deg and
mirrored) and the same pose with the ankles inside their ranges (+-0.6 rad). bigstep: NE-LCP with
contact.max_correction_speed 0.1 (the default), 1 and 3 rad/s for the violated stops. MuJoCo 4
(the Python package, mj_step with the model's own options): the shipped geom margin 0.01 (on the
feet and the floor: contacts act from 2 cm) and margin 0.

Writes bench/experiments/results/ant_rest_height.csv (+ .meta.json). About 10 s.

    python3 bench/experiments/ant_rest_height.py
"""
from __future__ import annotations

import csv
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]  # siblings, bench/common.py
import common  # noqa: E402

DT = 0.01
DURATION = 2.0
TIMES = [0.5, 1.0, 2.0]
INSIDE = [0, 0.6, 0, -0.6, 0, -0.6, 0, 0.6]  # hip_1, ankle_1, ..., ankle_4: ankles inside their ranges
STARTS = {"gymnasium": [0.0] * 8, "inside": INSIDE}
FIELDS = ["simulator", "start", "setting", "t_s", "torso_z_m", "ankle_1_rad"]


def bigstep_rows(binary: Path) -> list:
    rows = []
    for start, joints in STARTS.items():
        for cap in ([0.1, 1.0, 3.0] if start == "gymnasium" else [0.1]):
            theta = [0, 0, 0.75, 0, 0, 0] + joints
            with tempfile.TemporaryDirectory(prefix="bigstep-ant-") as tmp:
                cmd = [str(binary), "run", "gymnasium:ant.xml", "--set", "integrator.type=ne_lcp",
                       "--set", f"integrator.dt={DT}", "--set", f"integrator.duration={DURATION}",
                       "--set", f"contact.max_correction_speed={cap}",
                       "--set", "initial.theta=[" + ", ".join(str(x) for x in theta) + "]", "--out", tmp, "--quiet"]
                subprocess.run(cmd, check=True, capture_output=True)
                with open(Path(tmp) / "trajectory.csv") as f:
                    traj = list(csv.DictReader(f))
            for t in TIMES:
                r = traj[round(t / DT)]
                rows.append({"simulator": "bigstep NE-LCP", "start": start, "setting": f"max_correction_speed {cap}",
                             "t_s": t, "torso_z_m": float(r["torso.z"]), "ankle_1_rad": float(r["body4.angle"])})
    return rows


def mujoco_rows() -> list:
    import gymnasium
    import mujoco
    path = os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets", "ant.xml")
    rows = []
    for start, joints in STARTS.items():
        for margin in (None, 0.0):
            m = mujoco.MjModel.from_xml_path(path)
            if margin is not None:
                m.geom_margin[:] = margin
            assert abs(m.opt.timestep - DT) < 1e-12
            d = mujoco.MjData(m)
            d.qpos[7:] = joints
            for n in range(1, round(DURATION / DT) + 1):
                mujoco.mj_step(m, d)
                t = n * DT
                if any(abs(t - x) < 1e-9 for x in TIMES):
                    rows.append({"simulator": f"MuJoCo {mujoco.__version__}", "start": start,
                                 "setting": "geom margin " + ("0.01 (shipped)" if margin is None else "0"),
                                 "t_s": t, "torso_z_m": float(d.qpos[2]), "ankle_1_rad": float(d.qpos[8])})
    return rows


def main() -> int:
    binary = common.find_binary()
    rows = bigstep_rows(binary) + mujoco_rows()
    meta = {"command": common.command_line(), **common.machine_info(binary)}
    out = common.write_csv(common.EXPERIMENT_RESULTS / "ant_rest_height.csv", rows, FIELDS, meta)
    common.print_table(rows, FIELDS, {"torso_z_m": ".4f", "ankle_1_rad": ".3f"})
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
