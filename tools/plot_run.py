#!/usr/bin/env python3
"""Plot one `bigstep run` output directory into DIR/plot.png.

usage: tools/plot_run.py DIR

A single run (steps.csv): coordinates on separate axes per unit (translations [m], rotations
[rad]; all of them, or the 12 that move most with a note saying how many are left out), LM
iterations per step on integer ticks with the non-converged steps marked, and the summed normal
contact force [N] when steps.csv has it. A batch run (rollouts.csv, `--rollouts K`): per-rollout
distributions -- mean and max iterations (integer bins), the percentiles of the final coordinates,
and how many rollouts ended with each status bit."""
import csv
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

# bit b of a status word (core/types.h StatusBits)
STATUS_BITS = ["not_converged", "nonfinite", "factor_failed", "gimbal_lock", "restarted", "small_step",
               "penetrated", "contact_overflow"]
MAX_CURVES = 12


def units(d, names):
    """'m' or 'rad' per coordinate: from DIR/model.xml (one MuJoCo joint per DOF, in order: slide = m),
    else from the DOF name (x, y, z translations)."""
    xml = d / "model.xml"
    if xml.exists():
        joints = [j.get("type", "hinge") for j in ET.parse(xml).getroot().iter("joint")]
        if len(joints) == len(names):
            return ["m" if t == "slide" else "rad" for t in joints]
    return ["m" if n.split(".")[-1] in ("x", "y", "z") else "rad" for n in names]


def coordinate_panel(ax, t, q, names, unit):
    """The coordinates of one unit; at most MAX_CURVES (those that move most), said in the title."""
    idx = list(range(len(names)))
    note = ""
    if len(idx) > MAX_CURVES:
        span = np.ptp(q[:, idx], axis=0)
        idx = sorted(np.argsort(span)[::-1][:MAX_CURVES])
        note = f" ({MAX_CURVES} of {len(names)} that move most)"
    for k in idx:
        ax.plot(t, q[:, k], label=names[k], lw=1)
    ax.set_xlabel("t [s]")
    ax.set_ylabel(f"[{unit}]")
    ax.set_title(("translations" if unit == "m" else "rotations") + note, fontsize=9)
    ax.legend(fontsize=6, ncol=2, loc="center left", bbox_to_anchor=(1.0, 0.5))


def plot_single(d, summary):
    with open(d / "trajectory.csv") as f:
        rows = list(csv.reader(f))
    names = rows[0][1:]
    data = np.array([[float(x) for x in r] for r in rows[1:]])
    t, q = data[:, 0], data[:, 1:]
    with open(d / "steps.csv") as f:
        srows = list(csv.DictReader(f))
    u = units(d, names)
    groups = [(unit, [k for k in range(len(names)) if u[k] == unit]) for unit in ("m", "rad")]
    groups = [(unit, ks) for unit, ks in groups if ks]
    has_force = bool(srows) and "normal_force_N" in srows[0]
    n = len(groups) + 1 + has_force
    fig, axes = plt.subplots(n, 1, figsize=(10, 2.6 * n), sharex=True)
    for ax, (unit, ks) in zip(axes, groups):
        coordinate_panel(ax, t, q[:, ks], [names[k] for k in ks], unit)
    ts = np.array([float(r["t"]) for r in srows])
    it = np.array([int(r["iterations"]) for r in srows])
    ax = axes[len(groups)]
    ax.plot(ts, it, ".", ms=3, label="iterations per step")
    bad = np.array(["not_converged" in r["status"] or "nonfinite" in r["status"] for r in srows])
    if bad.any():
        ax.plot(ts[bad], it[bad], "rx", label=f"not converged ({bad.sum()})")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("iterations")
    ax.set_title(f"converged {summary['converged_fraction']:.3f}, mean {summary['iterations_mean']:.2f}, "
                 f"max {summary['iterations_max']}", fontsize=9)
    ax.legend(fontsize=7, loc="upper right")
    if has_force:
        ax = axes[-1]
        ax.plot(ts, [float(r["normal_force_N"]) for r in srows], lw=1)
        ax.set_ylabel("[N]")
        ax.set_title("summed normal contact force", fontsize=9)
    axes[-1].set_xlabel("t [s]")
    return fig


def plot_batch(d, summary):
    with open(d / "rollouts.csv") as f:
        rows = list(csv.DictReader(f))
    K = len(rows)
    fixed = {"rollout", "steps", "iterations_mean", "iterations_max", "converged_fraction", "status", "c_par", "mu",
             "c_perp", "mass_scale"}
    names = [c for c in rows[0] if c not in fixed]
    fig, ax = plt.subplots(2, 2, figsize=(11, 7))
    it_mean = np.array([float(r["iterations_mean"]) for r in rows])
    it_max = np.array([int(r["iterations_max"]) for r in rows])
    ax[0, 0].hist(it_mean, bins=min(30, max(5, K // 4)))
    ax[0, 0].set_xlabel("mean iterations per step")
    ax[0, 0].set_ylabel("rollouts")
    ax[0, 0].yaxis.set_major_locator(MaxNLocator(integer=True))
    p = np.percentile(it_mean, [5, 50, 95])
    ax[0, 0].set_title(f"mean iterations: p5 {p[0]:.2f}, p50 {p[1]:.2f}, p95 {p[2]:.2f}", fontsize=9)
    bins = np.arange(it_max.min(), it_max.max() + 2) - 0.5
    ax[0, 1].hist(it_max, bins=bins)
    ax[0, 1].set_xticks(range(it_max.min(), it_max.max() + 1, max(1, (it_max.max() - it_max.min()) // 10 + 1)))
    ax[0, 1].yaxis.set_major_locator(MaxNLocator(integer=True))
    ax[0, 1].set_xlabel("max iterations in a step")
    ax[0, 1].set_ylabel("rollouts")
    # final coordinates: 5 / 50 / 95 percentiles over the rollouts
    final = np.array([[float(r[n]) for n in names] for r in rows])
    u = units(d, names)
    x = np.arange(len(names))
    lo, med, hi = np.percentile(final, [5, 50, 95], axis=0)
    # one y axis per unit: translations [m] on the left, rotations [rad] on the right
    for axis, unit, color in ((ax[1, 0], "m", "C0"), (ax[1, 0].twinx(), "rad", "C1")):
        ks = [k for k in x if u[k] == unit]
        if ks:
            axis.errorbar(x[ks], med[ks], yerr=[med[ks] - lo[ks], hi[ks] - med[ks]], fmt="o", ms=4, color=color)
            axis.set_ylabel(f"{'translations' if unit == 'm' else 'rotations'} [{unit}]", color=color)
    ax[1, 0].set_xticks(x, names, rotation=70, fontsize=6)
    ax[1, 0].set_title("final coordinates over the rollouts: median, 5-95 %", fontsize=9)
    status = [int(r["status"]) for r in rows]
    counts = [sum(1 for s in status if s & (1 << b)) for b in range(len(STATUS_BITS))]
    ax[1, 1].bar(range(len(STATUS_BITS)), counts)
    ax[1, 1].set_xticks(range(len(STATUS_BITS)), STATUS_BITS, rotation=40, fontsize=7, ha="right")
    ax[1, 1].yaxis.set_major_locator(MaxNLocator(integer=True))
    ax[1, 1].set_ylim(0, max(1, max(counts)) * 1.1)
    ax[1, 1].set_ylabel("rollouts")
    ax[1, 1].set_title(f"status bits at the end ({K} rollouts)", fontsize=9)
    return fig


def main(d):
    d = Path(d)
    if not (d / "summary.json").exists():
        sys.exit(f"plot_run: {d}/summary.json not found: not a `bigstep run` output directory")
    summary = json.loads((d / "summary.json").read_text())
    batch = (d / "rollouts.csv").exists()
    if not batch and not (d / "steps.csv").exists():
        sys.exit(f"plot_run: {d} has neither steps.csv (one run) nor rollouts.csv (--rollouts K)")
    fig = plot_batch(d, summary) if batch else plot_single(d, summary)
    fig.suptitle(f"{summary['scene']}: {summary['integrator']}"
                 f"{'/' + summary['optimizer'] if summary.get('optimizer') else ''}, dt = {summary['dt']} s"
                 + (f", {summary.get('rollouts')} rollouts" if batch else ""), fontsize=10)
    fig.tight_layout()
    out = d / "plot.png"
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
