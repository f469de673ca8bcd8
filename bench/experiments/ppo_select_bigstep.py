"""Checkpoint selection on the bigstep side only: every saved checkpoint of a PPO
run scored in bigstep, episodes from a seed not used by bench/experiments/ppo_transfer.py's evaluation, MuJoCo
not consulted (picking the best-scoring checkpoint is not tuning on the MuJoCo test). Two scores:

  * ne_lcp: mean return in bigstep NE-LCP at a small physics step, the action held for the control
    period (a simulator the policy was not trained in);
  * family: mean return in PBFD at the training step over the training run's own randomisation
    (every --set key of the run, batch.randomize_* included: each env its own draw), no observation
    noise: how well the checkpoint covers the family it was trained on, its edges included;
  * kick: mean return in PBFD at the training step and the run's nominal model with every hop's
    push-off kicked backward by exactly --kick-spins rad/s of pitch rate (bench/experiments/hopper_takeoff.py; the
    mean over the spins): how well it recovers from the backward spin that MuJoCo Hopper-v5's soft
    pyramid gives a push-off (bench/experiments/hopper_landing.py). Defined in the fifth round before any MuJoCo
    evaluation of that round's runs; on the fourth round's policies spin 0.9-1.2 ranks rl4_soft
    and rl4_soft_sel (the two that keep >= 60 % as shipped) first of the rl4 / rl5 family.

--select names the score that selects (default ne_lcp, the third round's choice).

    PYTHONPATH=build/python python3 bench/experiments/ppo_select_bigstep.py out/ppo/hopper/snapshots/*.pt \\
        --select family --out bench/experiments/results/ppo_hopper_select.csv
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]  # siblings, bench/common.py
import common  # noqa: E402
from hopper_takeoff import kicked_return  # noqa: E402
from ppo_transfer import MJ_TIMESTEP, run_bigstep  # noqa: E402

SCORES = ("ne_lcp", "family", "kick")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("policies", nargs="+", help="policy.pt checkpoints")
    p.add_argument("--episodes", type=int, default=5, help="NE-LCP episodes per checkpoint")
    p.add_argument("--family-episodes", type=int, default=16, help="family draws (one episode each) per checkpoint")
    p.add_argument("--seed", type=int, default=7, help="not one of ppo_transfer.py's evaluation seeds (0, 1, 2)")
    p.add_argument("--ne-dt", type=float, default=MJ_TIMESTEP)
    p.add_argument("--kick-episodes", type=int, default=8, help="episodes per kick spin and checkpoint")
    p.add_argument("--kick-spins", type=float, nargs="+", default=[0.9, 1.2], help="backward pitch-rate kicks [rad/s]")
    p.add_argument("--seconds", type=float, default=8.0)
    p.add_argument("--scores", nargs="+", default=list(SCORES), choices=SCORES)
    p.add_argument("--select", default="ne_lcp", choices=SCORES, help="the score whose maximum is selected")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    if args.select not in args.scores:
        p.error(f"--select {args.select} is not among --scores {args.scores}")
    import torch
    torch.set_num_threads(1)
    import bigstep
    from bigstep.examples.ppo import load_policy
    from tqdm import tqdm
    rows = []
    for f in tqdm(args.policies, desc="checkpoints"):
        pol = load_policy(f)
        task, h = Path(pol.config["task"]).stem, float(pol.config["dt_used"])
        n, k = int(round(args.seconds / h)), int(round(h / args.ne_dt))
        row = dict(policy=f, env_steps=torch.load(f, weights_only=False)["env_steps"])
        if "ne_lcp" in args.scores:
            R, L, _ = run_bigstep(pol, task, "ne_lcp", args.ne_dt, k, args.episodes, args.seed, n)
            row.update(ne_lcp_return=float(R.mean()), ne_lcp_length=float(L.mean()))
        if "family" in args.scores:
            R, L, _ = run_bigstep(pol, task, pol.config["integrator"], h, 1, args.family_episodes, args.seed, n,
                                  overrides=list(pol.config.get("overrides", [])))
            row.update(family_return=float(R.mean()), family_length=float(L.mean()), family_min_return=float(R.min()))
        if "kick" in args.scores:
            R = [kicked_return(pol, s, 0.0, args.kick_episodes, args.seed, n)[0] for s in args.kick_spins]
            row.update(kick_return=float(sum(r.mean() for r in R) / len(R)))
        rows.append(row)
    best = max(rows, key=lambda r: r[f"{args.select}_return"])
    for r in rows:
        r["selected"] = int(r is best)
    cols = list(rows[0])
    common.print_table(rows, cols, {c: ".1f" if c.endswith("return") else ".0f" for c in cols if "_" in c and c != "env_steps"})
    info = common.machine_info(Path(bigstep._bigstep.__file__))
    meta = dict(command=common.command_line(), machine=f"{info['cpu']}, {info['cpu_count']} cores", date=info["date"],
                commit=info["git_commit"], git_dirty_files=info["git_dirty_files"],
                loadavg_1_5_15=info["loadavg_1_5_15"], episodes=args.episodes, family_episodes=args.family_episodes,
                seed=args.seed, ne_dt=args.ne_dt, kick_episodes=args.kick_episodes, kick_spins=args.kick_spins,
                select=args.select,
                note=f"selected = the highest mean {args.select} return (bigstep only; MuJoCo not consulted)")
    common.write_csv(Path(args.out), rows, cols, meta)
    print(f"selected {best['policy']} ({args.select} {best[f'{args.select}_return']:.1f}); wrote {args.out}")


if __name__ == "__main__":
    main()
