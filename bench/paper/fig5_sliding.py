#!/usr/bin/env python3
"""PBFD paper Fig. 5 (docs/methods/pbfd.md §8.1): box sliding distance vs the friction parameter.

configs/box_slide.yaml (2D box, 1 kg, 1 m/s initial speed, C_perp = 1.23e6, four corners; the
config stops at rest by the §8.1 rule and caps at 10 s). Sweep C_par over the half-decade grid
10^{4, 4.5, ..., 11} for PBD (Eq. 6) and PBFD (Eq. 13), both with JTJ-LM, at
dt in {0.001, 0.01, 0.03, 0.1} s; record sliding_distance_m, stopped_at_rest, capped, tipped,
max tilt, converged_fraction, iterations and time.

Newton-Euler dry friction (distance vs mu, Fig. 5 curve "NE") is opt-in.
The hook: rows carry `method` and `param_name`/`param` (c_par or mu); `--ne-integrator NAME`
sweeps MU_GRID with `integrator.type=NAME` (e.g. ne_lcp, ne_mdp) starting from NE_INITIAL_THETA.
Without it no NE rows are written (nothing is faked); the default results have none.

--coulomb adds PBFD with the regularised Coulomb law (contact.friction=coulomb, docs/methods/pbfd.md
§4.9) swept over MU_GRID (method pbfd_coulomb, param_name mu), drawn on the mu axis beside NE with
the analytic distance v0^2 / (2 mu g).

Writes bench/results/fig5_sliding.csv (+ .meta.json) and fig5_sliding.png, prints the table and
the checks of paper claims P3 (PBFD distance strictly decreasing in C_par at every dt) and P5
(PBD distance turns back up beyond some C_par).

    python3 bench/paper/fig5_sliding.py [--workers 2] [--timeout 300] [--dts 0.001,0.01,0.03,0.1]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]  # siblings, bench/common.py
import common  # noqa: E402

CONFIG = "box_slide"
DTS = [0.001, 0.01, 0.03, 0.1]
LOG10_C_PAR = [4.0 + 0.5 * k for k in range(15)]  # 10^4 ... 10^11, half decades
METHODS = [("pbd", "jtj_lm"), ("pbfd", "jtj_lm")]
MU_GRID = [0.05, 0.1, 0.2, 0.4, 0.8, 1.6]  # for the NE hook (spec §8.1)
# NE runs start with the box touching the ground (z = 0.1), not at the penalty models' 2 mm rest
# depth: a hard-contact solver pushes the 2 mm penetration out in the first step, and at dt = 0.001
# the resulting normal impulse makes friction stop the box at once (ne_lcp, mu = 0.8: 2e-7 m
# instead of v^2 / (2 mu g) = 0.064 m; from z = 0.1 it gives 0.0632 m).
NE_INITIAL_THETA = [0.0, 0.1, 0.0]
OPTIMIZER = "jtj_lm"
FIELDS = ["method", "integrator", "optimizer", "dt", "param_name", "param", "log10_param", "c_par", "mu",
          "sliding_distance_m", "stopped_at_rest", "capped", "tipped", "max_tilt_rad", "converged_fraction",
          "steps", "sim_time_s", "iterations_mean", "iterations_max", "restarts", "wall_time_s",
          "wall_time_per_step_s", "rc", "note"]


def c_par_value(e: float) -> float:
    return float(10.0 ** e)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", type=int, default=2, help="parallel runs (at most 2)")
    ap.add_argument("--timeout", type=float, default=300.0, help="per-run limit in seconds")
    ap.add_argument("--dts", default=",".join(str(d) for d in DTS), help="comma-separated timesteps")
    ap.add_argument("--ne-integrator", default=None,
                    help="integrator.type of a Newton-Euler dry-friction baseline (ne_lcp, ne_mdp), "
                         f"swept over mu {MU_GRID}; default: no NE rows")
    ap.add_argument("--coulomb", action="store_true",
                    help=f"add PBFD with contact.friction=coulomb swept over mu {MU_GRID} (method pbfd_coulomb)")
    ap.add_argument("--out", type=Path, default=common.RESULTS)
    ap.add_argument("--prefix", default="fig5_sliding")
    args = ap.parse_args()
    dts = [float(x) for x in args.dts.split(",") if x.strip()]

    binary = common.find_binary()
    info = common.machine_info(binary)
    jobs = []
    for dt in dts:
        for integ, opt in METHODS:
            for e in LOG10_C_PAR:
                ov = {"integrator.type": integ, "integrator.optimizer": opt, "integrator.dt": dt,
                      "contact.c_par": c_par_value(e)}
                jobs.append(((integ, opt, dt, "c_par", e), CONFIG, ov))
        if args.ne_integrator:
            for mu in MU_GRID:
                ov = {"integrator.type": args.ne_integrator, "integrator.dt": dt, "contact.mu": mu,
                      "initial.theta": NE_INITIAL_THETA}
                jobs.append(((args.ne_integrator, "", dt, "mu", mu), CONFIG, ov))
        if args.coulomb:
            for mu in MU_GRID:
                ov = {"integrator.type": "pbfd", "integrator.optimizer": OPTIMIZER, "integrator.dt": dt,
                      "contact.friction": "coulomb", "contact.mu": mu}
                jobs.append((("pbfd_coulomb", OPTIMIZER, dt, "mu", mu), CONFIG, ov))
    print(f"fig5: {len(jobs)} runs with {binary}", file=sys.stderr)
    t0 = time.perf_counter()
    results = common.run_many(jobs, workers=args.workers, timeout=args.timeout, binary=binary)
    total_s = time.perf_counter() - t0

    rows = []
    for (integ, opt, dt, pname, pval), r in results:
        s = r.summary
        method = integ if integ == "pbfd_coulomb" else "ne" if pname == "mu" else integ
        if integ == "pbfd_coulomb":
            integ = "pbfd"
        row = {"method": method, "integrator": integ, "optimizer": opt, "dt": dt, "param_name": pname,
               "rc": r.rc, "note": ""}
        if pname == "c_par":
            row.update(param=c_par_value(pval), log10_param=pval, c_par=c_par_value(pval), mu="")
        else:
            row.update(param=pval, log10_param=float(np.log10(pval)), c_par="", mu=pval)
        if r.timed_out or not s:
            row["note"] = "timeout" if r.timed_out else f"no summary (rc={r.rc}): {r.stderr[:200]}"
        else:
            for k in ("sliding_distance_m", "stopped_at_rest", "capped", "tipped", "max_tilt_rad",
                      "converged_fraction", "steps", "sim_time_s", "iterations_mean", "iterations_max",
                      "restarts", "wall_time_s", "wall_time_per_step_s"):
                row[k] = s.get(k, "")
            if s.get("aborted"):
                row["note"] = "aborted"
        rows.append(row)

    checks = analyse(rows, dts)
    meta = {"command": common.command_line(), **info, "loadavg_after_1_5_15": list(os.getloadavg()),
            "script_wall_s": round(total_s, 1), "workers": min(args.workers, common.MAX_WORKERS),
            "timeout_s": args.timeout, "config": f"configs/{CONFIG}.yaml", "dts": dts,
            "log10_c_par": LOG10_C_PAR, "optimizer": OPTIMIZER,
            "ne": ("swept with integrator.type=" + args.ne_integrator) if args.ne_integrator
            else "not run: pass --ne-integrator ne_lcp|ne_mdp to add NE rows (param_name = mu)",
            "coulomb": "PBFD contact.friction=coulomb swept over mu (method pbfd_coulomb)" if args.coulomb else "not run",
            "reductions": "none: the full grid (2 methods x 4 dt x 15 C_par) ran",
            "checks": checks}
    csv_path = common.write_csv(args.out / f"{args.prefix}.csv", rows, FIELDS, meta)
    png = args.out / f"{args.prefix}.png"
    plot(rows, dts, png, meta)

    common.print_table(rows, ["method", "dt", "log10_param", "sliding_distance_m", "stopped_at_rest", "capped",
                              "tipped", "max_tilt_rad", "converged_fraction", "steps", "iterations_mean",
                              "restarts", "wall_time_s", "note"],
                       {"sliding_distance_m": ".6g", "max_tilt_rad": ".3f", "converged_fraction": ".3f",
                        "iterations_mean": ".2f", "wall_time_s": ".3f", "log10_param": ".1f"})
    print("\nchecks:")
    for c in checks:
        print("  " + c)
    print(f"\nwrote {csv_path}\n      {png}\n(total {total_s:.1f} s)")
    return 0


def _curve(rows, method, dt):
    rs = sorted((r for r in rows if r["method"] == method and r["dt"] == dt
                 and isinstance(r.get("sliding_distance_m"), float)), key=lambda r: r["param"])
    return (np.array([r["param"] for r in rs]), np.array([r["sliding_distance_m"] for r in rs]), rs)


def analyse(rows, dts) -> list:
    """Text lines for paper claims P3 and P5 (and anything odd) on this run."""
    out = []
    for dt in dts:
        c, d, rs = _curve(rows, "pbfd", dt)
        if len(d) < 2:
            continue
        viol = [(f"1e{np.log10(c[i]):.1f}", f"1e{np.log10(c[i + 1]):.1f}", d[i], d[i + 1])
                for i in range(len(d) - 1) if not d[i + 1] < d[i]]
        if not viol:
            out.append(f"P3 dt={dt}: PBFD distance strictly decreasing over all {len(d)} C_par values: YES")
        else:
            big = [v for v in viol if max(abs(v[2]), abs(v[3])) > 1e-3]
            out.append(f"P3 dt={dt}: PBFD distance strictly decreasing: NO, {len(viol)} violation(s) "
                       + "; ".join(f"C_par {a}->{b}: {x:.4g} -> {y:.4g} m" for a, b, x, y in viol)
                       + (f" [{len(big)} with a distance > 1 mm]" if viol else ""))
        neg = [(np.log10(cc), dd) for cc, dd in zip(c, d) if dd < 0]
        if neg:
            out.append(f"    dt={dt}: PBFD negative distances (box rocks back): "
                       + ", ".join(f"1e{e:.1f}: {v:.3g} m" for e, v in neg))
    for dt in dts:
        c, d, rs = _curve(rows, "pbd", dt)
        if len(d) < 2:
            continue
        i = int(np.argmin(d))
        after = d[i:]
        rise = float(after.max() - d[i]) if len(after) > 1 else 0.0
        turned = i < len(d) - 1 and rise > max(1e-3, 0.05 * abs(d[i]))
        out.append(f"P5 dt={dt}: PBD minimum {d[i]:.4g} m at C_par=1e{np.log10(c[i]):.1f}; "
                   f"largest later distance {after.max():.4g} m (C_par=1e{np.log10(c[i + int(np.argmax(after))]):.1f}); "
                   f"turns back up: {'YES' if turned else 'NO'}")
    for r in rows:
        if isinstance(r.get("converged_fraction"), float) and r["converged_fraction"] < 1.0:
            out.append(f"non-converged steps: {r['method']} dt={r['dt']} {r['param_name']}={r['param']:.3g}: "
                       f"converged_fraction {r['converged_fraction']:.4f}")
        if r.get("tipped") is True:
            out.append(f"tipped: {r['method']} dt={r['dt']} {r['param_name']}={r['param']:.3g} "
                       f"(max tilt {r['max_tilt_rad']:.3f} rad)")
        if r.get("note"):
            out.append(f"note: {r['method']} dt={r['dt']} {r['param_name']}={r['param']:.3g}: {r['note']}")
    return out


def plot(rows, dts, png: Path, meta) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    style = {"pbd": ("tab:blue", "o", "PBD (Eq. 6)"), "pbfd": ("tab:red", "s", "PBFD (Eq. 13)")}
    # dry friction (distance vs mu: NE, PBFD's Coulomb law) in a third row on a mu axis, when such rows exist
    dry = [(m, lab, st) for m, lab, st in (("ne", "NE dry friction", "g-^"), ("pbfd_coulomb", "PBFD Coulomb law (§4.9)", "m-D"))
           if any(r["method"] == m for r in rows)]
    n_rows = 3 if dry else 2
    fig, axes = plt.subplots(n_rows, len(dts), figsize=(4.2 * len(dts), 3.6 * n_rows), squeeze=False)
    for j, dt in enumerate(dts):
        ax, axl = axes[0, j], axes[1, j]
        for m, (col, mk, lab) in style.items():
            c, d, rs = _curve(rows, m, dt)
            if not len(d):
                continue
            ax.plot(c, d, "-", color=col, lw=1.2, label=lab)
            axl.plot(c, np.abs(d), "-", color=col, lw=1.2, label=lab)
            capped = np.array([bool(r.get("capped")) for r in rs])
            tipped = np.array([bool(r.get("tipped")) for r in rs])
            nonconv = np.array([float(r.get("converged_fraction", 1.0)) < 1.0 for r in rs])
            neg = d < 0
            for a, y in ((ax, d), (axl, np.abs(d))):
                a.plot(c[~capped], y[~capped], mk, color=col, ms=4, ls="none")
                a.plot(c[capped], y[capped], mk, mfc="none", color=col, ms=6, ls="none")
                if tipped.any():
                    a.plot(c[tipped], y[tipped], "^", color="k", ms=8, mfc="none", ls="none")
                if nonconv.any():
                    a.plot(c[nonconv], y[nonconv], "x", color="k", ms=8, ls="none")
            if neg.any():
                axl.plot(c[neg], np.abs(d[neg]), "v", color=col, ms=8, mfc="none", ls="none")
        if dry:
            axd = axes[2, j]
            for m, lab, st in dry:
                rs = sorted((r for r in rows if r["method"] == m and r["dt"] == dt
                             and isinstance(r.get("sliding_distance_m"), float)), key=lambda r: r["mu"])
                axd.plot([r["mu"] for r in rs], [abs(r["sliding_distance_m"]) for r in rs], st, ms=4, label=lab)
            mus = np.array(MU_GRID)
            axd.plot(mus, 1.0 / (2 * mus * 9.81), "k:", label="v0^2 / (2 mu g), v0 = 1 m/s")
            axd.set_xscale("log")
            axd.set_yscale("log")
            axd.set_xlabel("mu (dry friction)")
            axd.set_ylabel("|sliding distance| [m]")
            axd.grid(True, which="both", alpha=0.3)
            axd.legend(fontsize=7, loc="lower left")
        ax.set_xscale("log")
        axl.set_xscale("log")
        axl.set_yscale("log")
        ax.set_title(f"dt = {dt} s", fontsize=10)
        ax.set_ylabel("sliding distance [m]")
        axl.set_ylabel("|sliding distance| [m] (log)")
        axl.set_xlabel("C_par")
        for a in (ax, axl):
            a.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="lower left")
    fig.suptitle("Fig. 5 reproduction: box sliding distance vs C_par\n(filled: stopped at rest; hollow: hit the 10 s cap; "
                 "x: non-converged steps; triangle: tipped; v: negative distance)\n" + common.plot_stamp(meta),
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
