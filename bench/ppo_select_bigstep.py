"""Checkpoint selection on the bigstep side only (issue 14, item 4): every saved checkpoint of a PPO
run scored by its mean return in bigstep NE-LCP at a small physics step (the action held for the
control period; a simulator the policy was not trained in), episodes from a seed not used by
bench/ppo_transfer.py's evaluation. MuJoCo is not consulted, so picking the best-scoring checkpoint
is not tuning on the MuJoCo test.

    PYTHONPATH=build/python python3 bench/ppo_select_bigstep.py out/ppo/hopper/snapshots/*.pt \\
        --out bench/results/ppo_hopper_select.csv
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from ppo_transfer import MJ_TIMESTEP, run_bigstep  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("policies", nargs="+", help="policy.pt checkpoints")
    p.add_argument("--episodes", type=int, default=5)
    p.add_argument("--seed", type=int, default=7, help="not one of ppo_transfer.py's evaluation seeds (0, 1, 2)")
    p.add_argument("--ne-dt", type=float, default=MJ_TIMESTEP)
    p.add_argument("--seconds", type=float, default=8.0)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    import torch
    torch.set_num_threads(1)
    import bigstep
    from bigstep.examples.ppo import load_policy
    from tqdm import tqdm
    rows = []
    for f in tqdm(args.policies, desc="checkpoints"):
        pol = load_policy(f)
        h = float(pol.config["dt_used"])
        n, k = int(round(args.seconds / h)), int(round(h / args.ne_dt))
        R, L, _ = run_bigstep(pol, Path(pol.config["task"]).stem, "ne_lcp", args.ne_dt, k, args.episodes, args.seed, n)
        rows.append(dict(policy=f, env_steps=torch.load(f, weights_only=False)["env_steps"],
                         ne_lcp_return=float(R.mean()), ne_lcp_length=float(L.mean())))
    best = max(rows, key=lambda r: r["ne_lcp_return"])
    for r in rows:
        r["selected"] = int(r is best)
    cols = list(rows[0])
    common.print_table(rows, cols, {"ne_lcp_return": ".1f", "ne_lcp_length": ".0f"})
    info = common.machine_info(Path(bigstep._bigstep.__file__))
    meta = dict(command=common.command_line(), machine=f"{info['cpu']}, {info['cpu_count']} cores", date=info["date"],
                commit=info["git_commit"], git_dirty_files=info["git_dirty_files"],
                loadavg_1_5_15=info["loadavg_1_5_15"], episodes=args.episodes, seed=args.seed, ne_dt=args.ne_dt,
                note="selected = the highest mean NE-LCP return (bigstep only; MuJoCo not consulted)")
    common.write_csv(Path(args.out), rows, cols, meta)
    print(f"selected {best['policy']} ({best['ne_lcp_return']:.1f}); wrote {args.out}")


if __name__ == "__main__":
    main()
