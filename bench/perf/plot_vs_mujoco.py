#!/usr/bin/env python3
"""Plot `bigstep-bench vs-mujoco` output: per scene (columns), simulated seconds per wall second vs dt
(top: one core solid, all cores dashed), COM error against each simulator's own reference vs dt
(middle) and the largest contact depth vs dt (bottom). Largest stable dt from vs_mujoco_stability.csv
is given in each column's title.

usage: python3 bench/perf/plot_vs_mujoco.py [bench/results/vs_mujoco.csv]  ->  same stem .png
"""
import csv
import sys
from pathlib import Path

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STYLE = {("mujoco", "default"): "tab:blue", ("bigstep", "pbfd"): "tab:red", ("bigstep", "ne_lcp"): "tab:green"}


def main(path):
    path = Path(path)
    rows = [r for r in csv.DictReader(open(path)) if r["role"] == "run"]
    stab_path = path.with_name(path.stem + "_stability.csv")
    stab = list(csv.DictReader(open(stab_path))) if stab_path.exists() else []
    scenes = list(dict.fromkeys(r["scene"] for r in rows))
    fig, ax = plt.subplots(3, len(scenes), figsize=(4.2 * len(scenes), 9), squeeze=False)
    for c, scene in enumerate(scenes):
        for (sim, integ), color in STYLE.items():
            sel = [r for r in rows if r["scene"] == scene and r["simulator"] == sim and r["integrator"] == integ]
            name = "MuJoCo" if sim == "mujoco" else f"bigstep {integ}"
            for threads_all, ls in ((False, "-"), (True, "--")):
                pts = sorted((float(r["dt"]), float(r["sim_s_per_wall_s"])) for r in sel
                             if (int(r["threads"]) > 1) == threads_all)
                if pts:
                    ax[0][c].plot(*zip(*pts), ls, marker="o", color=color,
                                  label=f"{name}, {'all cores' if threads_all else '1 core'}")
            one = sorted((float(r["dt"]), float(r["com_err_max_m"]), float(r["max_penetration_m"]))
                         for r in sel if int(r["threads"]) == 1)
            if one:
                ax[1][c].plot([p[0] for p in one], [max(p[1], 1e-9) for p in one], marker="o", color=color, label=name)
                ax[2][c].plot([p[0] for p in one], [max(p[2], 1e-9) for p in one], marker="o", color=color, label=name)
        title = scene
        for s in stab:
            if s["scene"] == scene:
                tag = "MuJoCo" if s["simulator"] == "mujoco" else s["integrator"]
                title += f"\n{tag}: stable to dt {s['largest_stable_dt']}"
        ax[0][c].set_title(title, fontsize=8)
        for r, ylabel in enumerate(["simulated s / wall s", "max COM error vs own reference [m]",
                                    "max contact depth [m]"]):
            ax[r][c].set_xscale("log")
            ax[r][c].set_yscale("log")
            ax[r][c].grid(True, which="both", alpha=0.3)
            ax[r][c].set_xlabel("dt [s]")
            ax[r][c].xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
            if c == 0:
                ax[r][c].set_ylabel(ylabel)
        ax[0][c].legend(fontsize=6)
    fig.tight_layout()
    out = path.with_suffix(".png")
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bench/results/vs_mujoco.csv")
