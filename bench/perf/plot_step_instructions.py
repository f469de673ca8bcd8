#!/usr/bin/env python3
"""bench/results/step_instructions.csv (bench/perf/step_instructions.sh, callgrind) as a bar chart:
instructions per step for each (scene, integrator, dt), one bar per label (commit), log scale.

    python3 bench/perf/plot_step_instructions.py [CSV] [PNG]"""
import csv
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def main(csv_path="bench/results/step_instructions.csv", png=None):
    rows = list(csv.DictReader(open(csv_path)))
    labels = list(dict.fromkeys(r["label"] for r in rows))
    cases = list(dict.fromkeys((r["scene"].replace(".yaml", ""), r["integrator"], r["dt"]) for r in rows))
    val = {(r["label"], r["scene"].replace(".yaml", ""), r["integrator"], r["dt"]): float(r["instructions_per_step"])
           for r in rows}
    fig, ax = plt.subplots(figsize=(max(8, 1.1 * len(cases)), 4.5))
    w = 0.8 / len(labels)
    x = np.arange(len(cases))
    for i, lab in enumerate(labels):
        y = [val.get((lab, *c), np.nan) for c in cases]
        ax.bar(x + (i - (len(labels) - 1) / 2) * w, y, w, label=lab)
    ax.set_yscale("log")
    ax.set_xticks(x, [f"{s}\n{i}, dt {d}" for s, i, d in cases], fontsize=7, rotation=25, ha="right")
    ax.set_ylabel("instructions per step (callgrind)")
    ax.set_title("cost of one step per scene and integrator, by commit", fontsize=10)
    ax.legend(title="label (commit)", fontsize=8)
    fig.tight_layout()
    png = Path(png or Path(csv_path).with_suffix(".png"))
    fig.savefig(png, dpi=110)
    print(f"wrote {png}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
