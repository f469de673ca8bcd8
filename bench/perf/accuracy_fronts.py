#!/usr/bin/env python3
"""Pareto fronts and equal-error speed-ups from `bigstep-bench accuracy` output.

Per scene, a PNG of error against CPU seconds per simulated second (log-log; one line per
integrator variant through its dt; left: error against the scene's common reference, right: against
each simulator's own reference; the contact-free chain adds energy drift against dt). Per simulator
the Pareto lower envelope: the stable runs that no cheaper run beats in error.

Equal-error speed-up: MuJoCo's front cost over bigstep's front cost at the same error, each read off
its front by linear interpolation in log(cost)-log(error) between the two front points that bracket
the error. Levels: 1x, 3x (the target definition), 10x and 30x the error MuJoCo has at its model's
default integrator, cone and timestep. Where an error level lies outside one front's error range the
fronts do not overlap there: nothing is extrapolated; the table gives the bound the front's end
implies (">= x": bigstep's cheapest run is already more accurate; "<= x": MuJoCo's cheapest run is;
"-": a front never gets that accurate).

    python3 bench/perf/accuracy_fronts.py [bench/results/accuracy.csv] [--out-dir DIR]

Also the order each bigstep variant's error shows: the slope of log(error vs the common reference)
against log(dt) over its stable runs at 5-50 ms, and its error at 50 ms.

Prints two markdown tables and writes DIR/<stem>_<scene>.png, DIR/<stem>_fronts.png (every scene's two
fronts against the common reference), DIR/<stem>_speedup.csv and DIR/<stem>_slopes.csv (DIR: the
CSV's folder).
"""
import argparse
import csv
import math
from collections import defaultdict
from pathlib import Path

LEVELS = (1, 3, 10, 30)
KINDS = (("common", "err_common_m"), ("own", "err_own_m"))


def fnum(x):
    try:
        v = float(x)
    except (TypeError, ValueError):
        return math.nan
    return v


def load(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def runs(rows, scene):
    return [r for r in rows if r["scene"] == scene and r["role"] == "run"]


def points(rs, col):
    """(cost, error, variant, dt) of the stable runs with a finite, positive error."""
    out = []
    for r in rs:
        c, e = fnum(r["cpu_s_per_sim_s"]), fnum(r[col])
        if r["stable"] == "1" and c > 0 and e > 0 and math.isfinite(c) and math.isfinite(e):
            out.append((c, e, r["variant"], fnum(r["dt"])))
    return out


def front(pts):
    """Pareto lower envelope: by cost ascending, each point more accurate than every cheaper one."""
    out = []
    for p in sorted(pts, key=lambda p: (p[0], p[1])):
        if not out or p[1] < out[-1][1]:
            out.append(p)
    return out


def cost_at(fr, err):
    """(cost, how) at error err on front fr: how = "interp" inside its error range, "cheaper" when even
    its cheapest run is more accurate (the cost is at most fr[0]'s), "never" when no run is that
    accurate."""
    if not fr:
        return None, "never"
    if err >= fr[0][1]:
        return fr[0][0], "exact" if err == fr[0][1] else "cheaper"
    for a, b in zip(fr, fr[1:]):
        if b[1] <= err <= a[1]:
            t = (math.log(err) - math.log(a[1])) / (math.log(b[1]) - math.log(a[1]))
            return math.exp(math.log(a[0]) + t * (math.log(b[0]) - math.log(a[0]))), "interp"
    return None, "never"


def near(fr, err):
    """The front point at or just below err (the run that reaches it), for the table."""
    below = [p for p in fr if p[1] <= err]
    return below[0] if below else None


def speedups(rows, scene):
    rs = runs(rows, scene)
    default = [r for r in rs if r["simulator"] == "mujoco" and r["model_default"] == "1"
               and abs(fnum(r["dt"]) - fnum(r["default_dt"])) < 1e-12]
    out = []
    for kind, col in KINDS:
        if not default or not (fnum(default[0][col]) > 0):
            continue
        e0 = fnum(default[0][col])
        fb = front(points([r for r in rs if r["simulator"] == "bigstep"], col))
        fm = front(points([r for r in rs if r["simulator"] == "mujoco"], col))
        for lv in LEVELS:
            err = lv * e0
            cb, hb = cost_at(fb, err)
            cm, hm = cost_at(fm, err)
            pb, pm = near(fb, err), near(fm, err)
            if hb == "never" or hm == "never":
                s, txt = None, "-"
                why = "no bigstep run this accurate" if hb == "never" else "no MuJoCo run this accurate"
            elif hb == "cheaper" and hm == "cheaper":
                s, txt, why = None, "-", "both fronts' cheapest runs are more accurate: no overlap"
            elif hb == "cheaper":
                s, txt, why = cm / cb, f">= {cm / cb:.2g}x", "bigstep's cheapest run is more accurate (lower bound)"
            elif hm == "cheaper":
                s, txt, why = cm / cb, f"<= {cm / cb:.2g}x", "MuJoCo's cheapest run is more accurate (upper bound)"
            else:
                s, txt, why = cm / cb, f"{cm / cb:.2g}x", "fronts overlap"
            out.append(dict(scene=scene, kind=kind, mujoco_default=default[0]["variant"],
                            mujoco_default_dt=fnum(default[0]["dt"]), mujoco_default_err_m=e0, level=lv,
                            err_m=err, bigstep_cost=cb, bigstep_run=f"{pb[2]} {pb[3]:g}" if pb else "",
                            mujoco_cost=cm, mujoco_run=f"{pm[2]} {pm[3]:g}" if pm else "",
                            speedup=s, speedup_text=txt, note=why))
    return out


def slopes(rows, scene, lo=0.005, hi=0.05):
    """Per bigstep variant: the least-squares slope of log(error vs common reference) against log(dt)
    over its stable runs with lo <= dt <= hi (the order the error shows), and the error at 50 ms."""
    out = []
    by = defaultdict(list)
    for r in runs(rows, scene):
        if r["simulator"] == "bigstep":
            by[r["variant"]].append(r)
    for v, rs in by.items():
        pts = [(math.log(fnum(r["dt"])), math.log(fnum(r["err_common_m"]))) for r in rs if r["stable"] == "1"
               and lo - 1e-12 <= fnum(r["dt"]) <= hi + 1e-12 and fnum(r["err_common_m"]) > 0]
        at50 = [fnum(r["err_common_m"]) for r in rs if abs(fnum(r["dt"]) - 0.05) < 1e-12 and r["stable"] == "1"]
        if len(pts) >= 2:
            mx = sum(p[0] for p in pts) / len(pts)
            my = sum(p[1] for p in pts) / len(pts)
            k = sum((p[0] - mx) * (p[1] - my) for p in pts) / sum((p[0] - mx) ** 2 for p in pts)
            out.append(dict(scene=scene, variant=v, runs=len(pts), slope=k, err_at_50ms_m=at50[0] if at50 else None))
    return out


def plot(rows, scene, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rs = runs(rows, scene)
    energy = any(math.isfinite(fnum(r["energy_drift_J"])) for r in rs)
    fig, axes = plt.subplots(1, 3 if energy else 2, figsize=(17 if energy else 12, 5.2))
    by = defaultdict(list)
    for r in rs:
        by[(r["simulator"], r["variant"])].append(r)
    keys = sorted(by)
    cmap_b, cmap_m = plt.get_cmap("tab10"), plt.get_cmap("tab20")
    nb = [k for k in keys if k[0] == "bigstep"]
    nm = [k for k in keys if k[0] == "mujoco"]
    style = {k: dict(color=cmap_b(i % 10), ls="-", marker="o") for i, k in enumerate(nb)}
    style.update({k: dict(color=cmap_m(i % 20), ls="--", marker="s") for i, k in enumerate(nm)})
    for ax, (kind, col) in zip(axes, KINDS):
        for k in keys:
            pts = sorted(points(by[k], col), key=lambda p: -p[3])
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], ms=3, lw=1, alpha=0.8,
                        label=f"{k[0]} {k[1]}", **style[k])
        for sim, c in (("bigstep", "k"), ("mujoco", "tab:red")):
            fr = front(points([r for r in rs if r["simulator"] == sim], col))
            if fr:
                ax.step([p[0] for p in fr], [p[1] for p in fr], where="post", color=c, lw=2.5, alpha=0.35,
                        label=f"{sim} front")
        d = [r for r in rs if r["simulator"] == "mujoco" and r["model_default"] == "1"
             and abs(fnum(r["dt"]) - fnum(r["default_dt"])) < 1e-12 and fnum(r[col]) > 0]
        if d:
            ax.axhline(3 * fnum(d[0][col]), color="tab:red", ls=":", lw=1)
            ax.annotate("3x MuJoCo's error at its default", (ax.get_xlim()[0], 3 * fnum(d[0][col])),
                        fontsize=7, color="tab:red", va="bottom")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("CPU s per simulated s (one core, one rollout)")
        ax.set_ylabel(f"largest COM error vs {kind} reference [m]")
        ax.set_title(f"{scene}: error vs the {kind} reference")
        ax.grid(True, which="both", alpha=0.3)
    if energy:
        ax = axes[2]
        for k in keys:
            pts = sorted([(fnum(r["dt"]), fnum(r["energy_drift_J"])) for r in by[k] if r["stable"] == "1"
                          and fnum(r["energy_drift_J"]) > 0])
            if pts:
                ax.plot(*zip(*pts), ms=3, lw=1, label=f"{k[0]} {k[1]}", **style[k])
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("dt [s]")
        ax.set_ylabel("largest |E(t) - E(0)| [J]")
        ax.set_title(f"{scene}: energy drift")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=6, ncol=2, loc="lower left")
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    plt.close(fig)


def overview(rows, scenes, png):
    """One panel per scene: both simulators' fronts against the common reference, the 3x level."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    n = len(scenes)
    cols = min(4, n)
    fig, axes = plt.subplots((n + cols - 1) // cols, cols, figsize=(4.2 * cols, 3.6 * ((n + cols - 1) // cols)),
                             squeeze=False)
    for ax, sc in zip(axes.flat, scenes):
        rs = runs(rows, sc)
        for sim, c in (("bigstep", "k"), ("mujoco", "tab:red")):
            fr = front(points([r for r in rs if r["simulator"] == sim], "err_common_m"))
            if fr:
                ax.plot([p[0] for p in fr], [p[1] for p in fr], "o-", color=c, ms=3, label=f"{sim} (best of all variants)")
                for p in fr:
                    ax.annotate(f"{p[2]} {p[3]:g}", (p[0], p[1]), fontsize=5, color=c, alpha=0.7)
        d = [r for r in rs if r["simulator"] == "mujoco" and r["model_default"] == "1"
             and abs(fnum(r["dt"]) - fnum(r["default_dt"])) < 1e-12 and fnum(r["err_common_m"]) > 0]
        if d:
            ax.axhline(3 * fnum(d[0]["err_common_m"]), color="tab:red", ls=":", lw=1, label="3x MuJoCo's default error")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(sc, fontsize=9)
        ax.set_xlabel("CPU s / simulated s", fontsize=7)
        ax.set_ylabel("COM error vs common ref. [m]", fontsize=7)
        ax.tick_params(labelsize=6)
        ax.grid(True, which="both", alpha=0.3)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="?", default="bench/results/accuracy.csv")
    ap.add_argument("--out-dir", default=None)
    ap.add_argument("--no-plot", action="store_true")
    a = ap.parse_args(argv)
    path = Path(a.csv)
    out = Path(a.out_dir) if a.out_dir else path.parent
    rows = load(path)
    scenes = list(dict.fromkeys(r["scene"] for r in rows))
    table = []
    for sc in scenes:
        if not a.no_plot:
            plot(rows, sc, out / f"{path.stem}_{sc}.png")
        table += speedups(rows, sc)
    if not a.no_plot:
        overview(rows, scenes, out / f"{path.stem}_fronts.png")
    print("| scene | error vs | MuJoCo default (dt) | its error [m] | level | error [m] | bigstep front: cost (run) "
          "| MuJoCo front: cost (run) | speed-up | note |")
    print("|---|---|---|---:|---:|---:|---|---|---:|---|")
    for t in table:
        cb = f"{t['bigstep_cost']:.3g} ({t['bigstep_run']})" if t["bigstep_cost"] else "-"
        cm = f"{t['mujoco_cost']:.3g} ({t['mujoco_run']})" if t["mujoco_cost"] else "-"
        print(f"| {t['scene']} | {t['kind']} | {t['mujoco_default']} ({t['mujoco_default_dt']:g}) "
              f"| {t['mujoco_default_err_m']:.3g} | {t['level']}x | {t['err_m']:.3g} | {cb} | {cm} "
              f"| {t['speedup_text']} | {t['note']} |")
    sl = [x for sc in scenes for x in slopes(rows, sc)]
    print("\n| scene | bigstep variant | stable runs, 5-50 ms | slope of log(error) vs log(dt) | error at 50 ms [m] |")
    print("|---|---|---:|---:|---:|")
    for x in sl:
        e50 = f"{x['err_at_50ms_m']:.3g}" if x["err_at_50ms_m"] is not None else "-"
        print(f"| {x['scene']} | {x['variant']} | {x['runs']} | {x['slope']:.2f} | {e50} |")
    with open(out / f"{path.stem}_slopes.csv", "w", newline="") as f:
        w = csv.DictWriter(f, ["scene", "variant", "runs", "slope", "err_at_50ms_m"])
        w.writeheader()
        for x in sl:
            w.writerow({k: ("" if x[k] is None else x[k]) for k in x})
    keys = ["scene", "kind", "mujoco_default", "mujoco_default_dt", "mujoco_default_err_m", "level", "err_m",
            "bigstep_cost", "bigstep_run", "mujoco_cost", "mujoco_run", "speedup", "speedup_text", "note"]
    with open(out / f"{path.stem}_speedup.csv", "w", newline="") as f:
        w = csv.DictWriter(f, keys)
        w.writeheader()
        for t in table:
            w.writerow({k: ("" if t[k] is None else t[k]) for k in keys})


if __name__ == "__main__":
    main()
