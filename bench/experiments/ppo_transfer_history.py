"""Transfer along a PPO training run: every saved checkpoint of one run (policy.pt
files, e.g. `python -m bigstep.examples.ppo --snapshots`), deterministic, in bigstep PBFD at its
training step and in Gymnasium's MuJoCo (frame_skip = h / 2 ms) with the shipped pyramidal cone and
with cone = elliptic: does any point of the training transfer? Episodes and rewards as
bench/experiments/ppo_transfer.py (whose run_bigstep / run_mujoco this reuses), fewer episodes per point.

    PYTHONPATH=build/python python3 bench/experiments/ppo_transfer_history.py out/ppo/hopper/snapshots/*.pt \\
        --out bench/experiments/results/ppo_hopper_rl2_history.csv
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]  # siblings, bench/common.py
import common  # noqa: E402
from ppo_transfer import run_bigstep, run_mujoco  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("policies", nargs="+", help="policy.pt checkpoints of one run")
    p.add_argument("--episodes", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--seconds", type=float, default=8.0)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    import torch
    torch.set_num_threads(1)
    import bigstep
    from bigstep.examples.ppo import load_policy
    from tqdm import tqdm
    rows = []
    cks = sorted(((torch.load(f, weights_only=False)["env_steps"], f) for f in args.policies))
    for steps_done, f in tqdm(cks, desc="checkpoints"):
        pol = load_policy(f)
        task, h = Path(pol.config["task"]).stem, float(pol.config["dt_used"])
        n = int(round(args.seconds / h))
        R, L, _ = run_bigstep(pol, task, pol.config["integrator"], h, 1, args.episodes, args.seed, n)
        row = dict(task=task, env_steps=steps_done, pbfd_return=float(R.mean()), pbfd_length=float(L.mean()))
        for cone, variant in (("pyramidal", "shipped"), ("elliptic", "elliptic")):
            Rm, Lm, _ = run_mujoco(pol, task, h, args.episodes, args.seed, n, variant)
            row.update({f"mujoco_{cone}_return": float(Rm.mean()), f"mujoco_{cone}_length": float(Lm.mean()),
                        f"mujoco_{cone}_kept": float(Rm.mean() / R.mean())})
        rows.append(row)
    cols = list(rows[0])
    common.print_table(rows, cols, {c: ".2f" if c.endswith("kept") else ".0f" for c in cols if c not in ("task",)})
    info = common.machine_info(Path(bigstep._bigstep.__file__))
    meta = dict(command=common.command_line(), machine=f"{info['cpu']}, {info['cpu_count']} cores", date=info["date"],
                commit=info["git_commit"], git_dirty_files=info["git_dirty_files"],
                loadavg_1_5_15=info["loadavg_1_5_15"], episodes=args.episodes, seed=args.seed,
                note="per checkpoint: mean return / length of its first episodes (reset(seed)); kept = MuJoCo "
                     "return / PBFD return of the same checkpoint")
    out = Path(args.out)
    common.write_csv(out, rows, cols, meta)
    plot(rows, out.with_suffix(".png"))
    print(f"wrote {out}, {out.with_suffix('.png').name}")


def plot(rows, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    x = [r["env_steps"] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 3.6))
    ax.plot(x, [r["pbfd_return"] for r in rows], label="bigstep PBFD (training)")
    for cone in ("pyramidal", "elliptic"):
        ax.plot(x, [r[f"mujoco_{cone}_return"] for r in rows], label=f"MuJoCo {cone}" +
                (" (as shipped)" if cone == "pyramidal" else ""))
    ax.set(xlabel="env steps", ylabel="episode return (deterministic)",
           title=f"PPO {rows[0]['task']}: transfer along training")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
