#!/usr/bin/env python3
"""Inverse-dynamics solve time vs number of contacts (docs/methods/inverse_dynamics.md
§10 oracle 9, the paper's Fig. 19).

Runs `bigstep-bench id-runtime` (bench/harness/bench_id_runtime.cpp: the standing spider, each foot's contact
multiplied c = 1..C times, n = 4c contacts; median thread CPU time of one id_solve per model over R
repetitions, warm start carried), then fits log(time) = a + s log(n) per model (the slope s: 1 =
linear, the reduced Model A of §4.5) and the linear slope [us per contact] of id_lcp_inf.

Writes bench/results/id_runtime.csv (+ .meta.json) and id_runtime.png.

    python3 bench/paper/id_runtime.py [--reps 50] [--max-per-foot 10]
"""
from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]  # siblings, bench/common.py
import common  # noqa: E402

MODELS = ["id_lcp_inf", "id_lcp_mu", "id_qp_mu", "id_qp_inf"]
FIELDS = ["model", "contacts", "per_foot", "median_s", "min_s", "iterations", "status"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--max-per-foot", type=int, default=10)
    ap.add_argument("--out", type=Path, default=common.REPO / "bench" / "results")
    args = ap.parse_args()
    t0 = time.perf_counter()
    binary = common.find_binary()
    info = common.machine_info(binary)
    with tempfile.TemporaryDirectory() as tmp:
        # one thread, nice'd: the bench times single solves (its progress goes to stderr)
        subprocess.run(["nice", "-n", "10", str(common.find_bench_binary()), "id-runtime", "--out", tmp, "--reps", str(args.reps),
                        "--max-per-foot", str(args.max_per_foot)], check=True)
        with open(Path(tmp) / "id_runtime.csv") as f:
            rows = list(csv.DictReader(f))
    for r in rows:
        for k in ("contacts", "per_foot", "iterations", "status"):
            r[k] = int(r[k])
        for k in ("median_s", "min_s"):
            r[k] = float(r[k])
    fits = {}
    for m in MODELS:
        n = np.array([r["contacts"] for r in rows if r["model"] == m], float)
        t = np.array([r["median_s"] for r in rows if r["model"] == m], float)
        s, a = np.polyfit(np.log(n), np.log(t), 1)
        lin = np.polyfit(n, t, 1)[0]
        fits[m] = {"loglog_slope": round(float(s), 3), "us_per_contact": round(1e6 * float(lin), 4),
                   "time_at_max_n_s": float(t[-1]), "max_n": int(n[-1])}
    meta = {"command": common.command_line(), **info, "loadavg_after_1_5_15": list(os.getloadavg()),
            "script_wall_s": round(time.perf_counter() - t0, 1), "reps": args.reps,
            "scene": "configs/quadruped_spider.yaml standing, feet contacts multiplied per foot (bench id-runtime)",
            "fits": fits}
    csv_path = common.write_csv(args.out / "id_runtime.csv", rows, FIELDS, meta)
    for m, f in fits.items():
        print(f"{m:11s} log-log slope {f['loglog_slope']:5.2f}  {f['us_per_contact']:10.3f} us/contact  "
              f"{1e6 * f['time_at_max_n_s']:10.1f} us at n = {f['max_n']}")
    plot(rows, fits, args.out / "id_runtime.png", meta)
    print(f"wrote {csv_path}", file=sys.stderr)


def plot(rows, fits, png: Path, meta) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for m in MODELS:
        n = [r["contacts"] for r in rows if r["model"] == m]
        t = [1e6 * r["median_s"] for r in rows if r["model"] == m]
        ax.plot(n, t, "o-", label=f"{m} (slope {fits[m]['loglog_slope']:.2f})")
    ax.axhline(1000, color="gray", ls=":", lw=1)
    ax.text(4, 1100, "1 ms (1 kHz control)", fontsize=8, color="gray")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("contacts n")
    ax.set_ylabel("median CPU time per solve [us]")
    ax.grid(alpha=0.3, which="both")
    ax.legend(title="log-log slope", fontsize=8)
    ax.set_title(f"ID solve time vs contacts (spider, Fig. 19 shape) — {common.plot_stamp(meta)}", fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main()
