"""The foot penetrations a training randomisation really produces: K envs of a
task with a policy's --set overrides (its batch.randomize_* draws included), the policy acting,
no termination; per env the deepest floor penetration over the run, measured by MuJoCo's own
collision (margin 0) on the shipped XML at bigstep's qpos -- the yardstick of hopper_gap.py, so it
compares with MuJoCo's 4.2 cm (Hopper-v5 as shipped) and bigstep's nominal ~1 cm.

    PYTHONPATH=build/python python3 bench/experiments/contact_range.py --policy out/ppo/hopper/policy.pt
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]  # siblings, bench/common.py
import common  # noqa: E402

XML = {"hopper": "hopper.xml", "walker2d": "walker2d_v5.xml"}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--policy", required=True, help="policy.pt (its task and --set overrides are used)")
    p.add_argument("--envs", type=int, default=16)
    p.add_argument("--steps", type=int, default=100, help="control steps per env")
    p.add_argument("--out", default=None, help="CSV (default: print only)")
    args = p.parse_args()
    import gymnasium
    import mujoco
    import torch
    torch.set_num_threads(1)
    import bigstep
    from bigstep.envs import task_path
    from bigstep.examples.ppo import load_policy
    pol = load_policy(args.policy)
    task = Path(pol.config["task"]).stem
    m = mujoco.MjModel.from_xml_path(os.path.join(os.path.dirname(gymnasium.__file__), "envs/mujoco/assets", XML[task]))
    m.geom_margin[:] = 0
    d = mujoco.MjData(m)
    sets = list(pol.config.get("overrides", []))
    core = bigstep._bigstep.VecEnvCore(task_path(task), args.envs, 0,
                                       ["batch.threads=1", "task.terminate_when_unhealthy=false", *sets], "cpu", False)
    core.reset(0)
    deep = np.zeros(args.envs)
    for _ in range(args.steps):
        core.step(np.ascontiguousarray(pol.act(core.obs), dtype=np.float64))
        for k in range(args.envs):
            d.qpos[:] = core.qpos[k]
            mujoco.mj_kinematics(m, d)
            mujoco.mj_collision(m, d)
            if d.ncon:
                deep[k] = max(deep[k], -float(d.contact.dist[:d.ncon].min()))
    rows = [dict(task=task, env=k, max_penetration_m=float(deep[k])) for k in range(args.envs)]
    print(f"{task} {' '.join(sets)}: deepest penetration per env [cm]: {np.round(np.sort(deep) * 100, 2)}")
    if args.out:
        info = common.machine_info(Path(bigstep._bigstep.__file__))
        meta = dict(command=common.command_line(), machine=f"{info['cpu']}, {info['cpu_count']} cores",
                    date=info["date"], commit=info["git_commit"], policy=args.policy, overrides=sets, steps=args.steps)
        common.write_csv(Path(args.out), rows, ["task", "env", "max_penetration_m"], meta)


if __name__ == "__main__":
    main()
