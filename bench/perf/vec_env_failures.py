#!/usr/bin/env python3
"""How often a task's env step fails under random actions (VecEnv flags), and what it costs.

K envs of a task step with uniform random actions (seeded) for N env steps, auto-reset on. Per
configuration (task + scene overrides): the fraction of env steps flagged ENV_BUDGET_EXCEEDED (the
solver's attempts ended without convergence: the env is held and its episode truncated) and
ENV_SOLVER_FAILED (non-finite, factorisation, gimbal lock), and the solver iterations per env step
(mean, p50, p99, max): the tail is what a lockstep batch (the GPU engines) waits for.

  PYTHONPATH=build/python nice -n 10 python3 bench/perf/vec_env_failures.py            # ~3 min on 2 cores
  ... --tasks ant --set integrator.dt=0.03 --set contact.slip_speed=3             # one variant

Writes bench/results/vec_env_failures.csv (+ .meta.json).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]  # siblings, bench/common.py
import common  # noqa: E402

# the default sweep: every task at its own settings, and the ant (PBFD at 50 ms, the task's dt)
# with the knobs that decide its failures (friction_continuation=0: the solver without the friction
# continuation of solvers/pbd/pbd_step.cpp, as before it)
DEFAULT = [("hopper", []), ("walker2d", []), ("half_cheetah", []), ("humanoid", []), ("ant", []),
           ("ant", ["integrator.friction_continuation=0"]),
           ("ant", ["integrator.dt=0.03"]), ("ant", ["integrator.dt=0.02"]),
           ("ant", ["contact.slip_speed=3"]), ("ant", ["integrator.it_max=300"])]


def measure(task: str, overrides: list[str], num_envs: int, steps: int, seed: int) -> dict:
    from bigstep import _bigstep as B
    from bigstep.envs import task_path
    c = B.VecEnvCore(task_path(task), num_envs, seed, overrides, "cpu", True)
    c.reset(seed)
    rng = np.random.default_rng(seed)
    lo, hi = np.asarray(c.action_low).ravel(), np.asarray(c.action_high).ravel()
    its, budget, failed = [], 0, 0
    t0 = time.perf_counter()
    for _ in range(steps):
        c.step(rng.uniform(lo, hi, (num_envs, c.action_dim)))
        f = np.asarray(c.flags)
        budget += int(((f & B.ENV_BUDGET_EXCEEDED) != 0).sum())
        failed += int(((f & B.ENV_SOLVER_FAILED) != 0).sum())
        its.append(np.asarray(c.iterations).copy())
    wall = time.perf_counter() - t0
    it = np.concatenate(its)
    n = num_envs * steps
    return {"task": task, "overrides": " ".join(overrides), "env_steps": n,
            "budget_exceeded": budget, "budget_exceeded_frac": budget / n,
            "solver_failed": failed, "solver_failed_frac": failed / n,
            "iterations_mean": float(it.mean()), "iterations_p50": float(np.percentile(it, 50)),
            "iterations_p99": float(np.percentile(it, 99)), "iterations_max": int(it.max()), "wall_s": wall}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", nargs="*", help="tasks at their own settings plus --set (default: the sweep above)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override on every listed task")
    ap.add_argument("--num-envs", type=int, default=64)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=common.RESULTS / "vec_env_failures.csv")
    a = ap.parse_args()
    configs = [(t, list(a.set)) for t in a.tasks] if a.tasks else DEFAULT
    rows = []
    for i, (task, ov) in enumerate(configs):
        r = measure(task, ov, a.num_envs, a.steps, a.seed)
        rows.append(r)
        print(f"[{i + 1}/{len(configs)}] {task:12s} {r['overrides']:28s} budget {r['budget_exceeded_frac']:.4%} "
              f"failed {r['solver_failed_frac']:.4%} iterations mean {r['iterations_mean']:.1f} "
              f"p99 {r['iterations_p99']:.0f} max {r['iterations_max']} ({r['wall_s']:.1f} s)", flush=True)
    from bigstep import _bigstep as B
    meta = {"command": common.command_line(), **common.machine_info(Path(B.__file__)), "num_envs": a.num_envs, "steps": a.steps,
            "seed": a.seed, "actions": "uniform over the action space, numpy default_rng(seed)"}
    common.write_csv(a.out, rows, list(rows[0].keys()), meta)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
