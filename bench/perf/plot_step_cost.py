#!/usr/bin/env python3
"""bench/results/step_cost.csv (bench/perf/profile_step.py, callgrind) as a PNG, two panels:

  left   the history: instructions per LM iteration (log scale) of each series -- scene x engine
         (reference / team) x integrator (pbfd / pbd) -- in the order its rows (labels = commits)
         appear in the CSV;
  right  the latest row of each series split into its phases (inclusive callgrind costs of disjoint
         function groups, 'rest' = what they leave of the total). The aggregate columns lm_solve
         (the LM solve with its evaluations) and step (the integrator's step) contain the phases, so
         they are drawn as markers, not stacked.

    python3 bench/perf/plot_step_cost.py [CSV] [PNG]"""
import csv
import json
import sys
from pathlib import Path

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]  # siblings, bench/common.py
import common  # noqa: E402

SUFFIX = "_per_lm_iteration"
AGGREGATES = ("instructions", "wall_us", "lm_solve", "step")  # columns that are not disjoint phases


def series_key(r):
    return (r["scene"], r.get("engine") or "reference", r.get("integrator") or "pbfd")


def series_name(key):
    scene, engine, integ = key
    return f"{scene.replace('_', ' ')} {integ.upper()} {'' if engine == 'reference' else engine}".strip()


def num(r, col):
    v = r.get(col, "")
    return float(v) if v not in ("", None) else 0.0


def main(csv_path="bench/results/step_cost.csv", png=None):
    csv_path = Path(csv_path)
    rows = list(csv.DictReader(csv_path.open()))
    phases = [c[: -len(SUFFIX)] for c in rows[0]
              if c.endswith(SUFFIX) and not c.startswith(AGGREGATES)]
    series = {}
    for r in rows:
        series.setdefault(series_key(r), []).append(r)

    fig, ax = plt.subplots(1, 2, figsize=(14, 6.4), gridspec_kw={"width_ratios": [1.1, 1]})
    # history: one line per series
    for i, (key, rs) in enumerate(series.items()):
        y = [num(r, "instructions" + SUFFIX) for r in rs]
        ax[0].plot(range(len(rs)), y, "o-", color=f"C{i % 10}", label=series_name(key))
        ax[0].annotate(f"{y[-1] / 1e3:.0f} K", (len(rs) - 1, y[-1]), textcoords="offset points",
                       xytext=(4, 0), fontsize=7, color=f"C{i % 10}", va="center")
        for j, r in enumerate(rs):
            ax[0].annotate(r["label"].split("-")[0], (j, y[j]), textcoords="offset points",
                           xytext=(0, -11), fontsize=6, ha="center", color="0.4")
    ax[0].set_yscale("log")
    ax[0].xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    ax[0].set_xlabel("measurement of the series (oldest first; grey: the commit measured)")
    ax[0].set_ylabel("instructions per LM iteration (whole run, callgrind)")
    ax[0].set_title("history of one LM iteration's cost", fontsize=10)
    ax[0].grid(True, which="both", alpha=0.3)
    ax[0].legend(fontsize=7)

    # latest row of every series, by phase (horizontal stacked bars)
    latest = [(key, rs[-1]) for key, rs in series.items()]
    yk = np.arange(len(latest))
    left = np.zeros(len(latest))
    colors = plt.cm.tab20(np.linspace(0, 1, 20))
    for i, ph in enumerate(phases):
        v = np.array([num(r, ph + SUFFIX) for _, r in latest])
        if v.any():
            ax[1].barh(yk, v / 1e3, left=left / 1e3, color=colors[i % 20], label=ph.replace("_", " "))
            left += v
    for col, marker, lab in (("lm_solve", "|", "LM solve (contains phases)"),
                             ("step", "x", "integrator step (contains phases)")):
        v = np.array([num(r, col + SUFFIX) for _, r in latest])
        if v.any():  # a series that did not measure the column (0) gets no marker
            ax[1].plot(v[v > 0] / 1e3, yk[v > 0], "k" + marker, ms=12, mew=2, label=lab, ls="none")
    ax[1].set_yticks(yk, [f"{series_name(k)}\n({r['label']})" for k, r in latest], fontsize=7)
    ax[1].invert_yaxis()
    ax[1].set_xlabel("thousand instructions per LM iteration")
    ax[1].set_title("latest row of each series, by phase", fontsize=10)
    ax[1].legend(fontsize=7, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.12))

    meta_path = csv_path.with_suffix(".meta.json")
    if meta_path.is_file():
        meta = json.loads(meta_path.read_text())
        last = (meta.get("runs") or [meta])[-1]
        if "cpu" in last:
            fig.suptitle(common.plot_stamp(last), fontsize=8, y=0.995)
    fig.tight_layout()
    png = Path(png or csv_path.with_suffix(".png"))
    fig.savefig(png, dpi=110)
    print(f"wrote {png}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
