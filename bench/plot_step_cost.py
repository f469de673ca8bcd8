#!/usr/bin/env python3
"""bench/results/step_cost.csv (bench/profile_step.py, callgrind) as a PNG: instructions per LM
iteration for each scene and label (commit), stacked by phase, and simulated seconds per wall second.

    python3 bench/plot_step_cost.py [CSV] [PNG]"""
import csv
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def main(csv_path="bench/results/step_cost.csv", png=None):
    rows = list(csv.DictReader(open(csv_path)))
    # the phase columns (instructions); wall time and the LM solve (inclusive of the phases) are not phases
    phases = [c[: -len("_per_lm_iteration")] for c in rows[0]
              if c.endswith("_per_lm_iteration") and not c.startswith(("instructions", "wall", "lm_solve"))]
    keys = [(r["scene"], r["label"]) for r in rows]
    x = np.arange(len(rows))
    fig, ax = plt.subplots(1, 2, figsize=(13, 4.8), gridspec_kw={"width_ratios": [2, 1]})
    bottom = np.zeros(len(rows))
    colors = plt.cm.tab20(np.linspace(0, 1, 20))
    for i, ph in enumerate(phases):
        v = np.array([float(r[ph + "_per_lm_iteration"] or 0) for r in rows])
        if v.any():
            ax[0].bar(x, v, bottom=bottom, label=ph.replace("_", " "), color=colors[i % 20])
            bottom += v
    total = np.array([float(r["instructions_per_lm_iteration"]) for r in rows])
    ax[0].plot(x, total, "k_", ms=30, mew=2, label="total (callgrind)")
    ax[0].set_xticks(x, [f"{s}\n{lab}" for s, lab in keys], fontsize=7, rotation=20, ha="right")
    ax[0].set_ylabel("instructions per LM iteration")
    ax[0].set_title("PBFD cost of one LM iteration, by phase (inclusive costs; 'rest' = the remainder)", fontsize=9)
    ax[0].legend(fontsize=7, ncol=2)
    ax[1].bar(x, [float(r["sim_s_per_wall_s"]) for r in rows], color="C2")
    ax[1].set_xticks(x, [f"{s}\n{lab}" for s, lab in keys], fontsize=7, rotation=20, ha="right")
    ax[1].set_ylabel("simulated s per wall s (one core)")
    ax[1].set_title("speed (wall clock, shared machine)", fontsize=9)
    fig.tight_layout()
    png = Path(png or Path(csv_path).with_suffix(".png"))
    fig.savefig(png, dpi=110)
    print(f"wrote {png}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
