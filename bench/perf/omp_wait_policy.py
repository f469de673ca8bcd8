#!/usr/bin/env python3
"""OpenMP wait policy: wall and CPU seconds of the same work under passive, active and libgomp's
default spinning, interleaved in one run (ratios, not absolute times, are the result).

Two workloads, both with 2 OpenMP threads:
- cli:  `bigstep run configs/chain_floating_ground.yaml --rollouts 64 --threads 2` (batch engine; the
        serial parts are the CSV writing between the parallel regions);
- rl:   an RL-style loop in Python: make_vec("hopper", 64 envs, batch.threads=2) stepped 200 times
        with a small numpy "policy" (two 64x256 matmuls) between the steps.
The policies are selected through the environment: OMP_WAIT_POLICY=passive / active, and
GOMP_SPINCOUNT=300000 for libgomp's default (the value it uses when neither variable is set; setting
it also stops bigstep from choosing passive, see batch/omp_wait.h).

    python3 bench/perf/omp_wait_policy.py [--reps 5]
writes bench/results/omp_wait_policy.csv (+ .meta.json): per workload and policy, median wall and
CPU seconds over the repetitions, and their ratio to passive.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]  # siblings, bench/common.py
import common  # noqa: E402

POLICIES = {"passive": {"OMP_WAIT_POLICY": "passive"}, "active": {"OMP_WAIT_POLICY": "active"},
            "libgomp_default": {"GOMP_SPINCOUNT": "300000"}}

RL_LOOP = """
import numpy as np, bigstep
venv = bigstep.make_vec("hopper", num_envs=64, seed=0, overrides=["batch.threads=2"])
obs, _ = venv.reset(seed=0)
rng = np.random.default_rng(0)
W1 = rng.standard_normal((obs.shape[1], 256)); W2 = rng.standard_normal((256, venv.single_action_space.shape[0]))
for _ in range(200):
    a = np.tanh(np.tanh(obs @ W1) @ W2 * 0.01)
    obs, *_ = venv.step(a.astype(venv.single_action_space.dtype))
"""


def workloads(binary: Path, out: Path) -> dict:
    py = os.environ.get("BIGSTEP_PYTHONPATH", str(common.REPO / "build" / "python"))
    return {
        "cli": ([str(binary), "run", str(common.config_path("chain_floating_ground")), "--rollouts", "64",
                 "--threads", "2", "--out", str(out), "--quiet"], {}),
        "rl": ([sys.executable, "-c", RL_LOOP], {"PYTHONPATH": py}),
    }


def timed(cmd: list, env: dict) -> tuple:
    """(wall s, CPU s of the child) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in (0, 1):
        raise SystemExit(f"{cmd[0]} failed ({p.returncode}): {p.stderr.strip()[-400:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default=str(common.RESULTS / "omp_wait_policy.csv"))
    args = ap.parse_args()
    binary = common.find_binary()
    meta = common.machine_info(binary)
    base = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    times = {}
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        jobs = workloads(binary, Path(tmp) / "run")
        total = args.reps * len(jobs) * len(POLICIES)
        done = 0
        # interleaved: every repetition runs every (workload, policy) once, so load drifts hit all alike
        for rep in range(args.reps):
            for w, (cmd, extra) in jobs.items():
                for pol, penv in POLICIES.items():
                    times.setdefault((w, pol), []).append(timed(cmd, {**base, **extra, **penv}))
                    done += 1
                    print(f"\r[{done:>3}/{total}] {w:<4} {pol:<16}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    rows = []
    for (w, pol), ts in times.items():
        rows.append({"workload": w, "policy": pol, "reps": len(ts),
                     "wall_s_median": statistics.median(t[0] for t in ts),
                     "cpu_s_median": statistics.median(t[1] for t in ts)})
    for r in rows:
        ref = next(x for x in rows if x["workload"] == r["workload"] and x["policy"] == "passive")
        r["wall_vs_passive"] = r["wall_s_median"] / ref["wall_s_median"]
        r["cpu_vs_passive"] = r["cpu_s_median"] / ref["cpu_s_median"]
    meta["loadavg_1_5_15_end"] = list(os.getloadavg())
    meta["command"] = common.command_line()
    cols = ["workload", "policy", "reps", "wall_s_median", "cpu_s_median", "wall_vs_passive", "cpu_vs_passive"]
    common.write_csv(Path(args.out), rows, cols, meta)
    common.print_table(rows, cols, {"wall_s_median": ".3f", "cpu_s_median": ".3f",
                                    "wall_vs_passive": ".2f", "cpu_vs_passive": ".2f"})


if __name__ == "__main__":
    main()
