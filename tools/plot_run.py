#!/usr/bin/env python3
"""Plot one `bigstep run` output directory: generalized coordinates and per-step solver stats.

usage: tools/plot_run.py DIR   ->  DIR/plot.png
"""
import csv
import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(d):
    d = Path(d)
    summary = json.loads((d / "summary.json").read_text())
    with open(d / "trajectory.csv") as f:
        rows = list(csv.reader(f))
    head, traj = rows[0], [[float(x) for x in r] for r in rows[1:]]
    with open(d / "steps.csv") as f:
        srows = list(csv.DictReader(f))
    t = [r[0] for r in traj]
    fig, ax = plt.subplots(1, 2, figsize=(12, 4.5))
    n_show = min(len(head) - 1, 8)
    for k in range(n_show):
        ax[0].plot(t, [r[k + 1] for r in traj], label=head[k + 1])
    ax[0].set_xlabel("t [s]")
    ax[0].set_ylabel("theta")
    ax[0].set_title(f"{summary['scene']}: {summary['integrator']}/{summary['optimizer']}, dt={summary['dt']} s")
    ax[0].legend(fontsize=7, ncol=2)
    ts = [float(r["t"]) for r in srows]
    ax[1].plot(ts, [int(r["iterations"]) for r in srows], ".", ms=3, label="iterations")
    bad = [float(r["t"]) for r in srows if "not_converged" in r["status"] or "nonfinite" in r["status"]]
    if bad:
        ax[1].plot(bad, [0] * len(bad), "rx", label="not converged")
    ax[1].set_xlabel("t [s]")
    ax[1].set_ylabel("LM iterations per step")
    extra = ""
    if "sliding_distance_m" in summary:
        extra = f", sliding {summary['sliding_distance_m']:.4f} m"
    ax[1].set_title(f"converged {summary['converged_fraction']:.3f}, mean it {summary['iterations_mean']:.2f}{extra}")
    ax[1].legend(fontsize=8)
    fig.tight_layout()
    out = d / "plot.png"
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
