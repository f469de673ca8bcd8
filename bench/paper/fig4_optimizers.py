#!/usr/bin/env python3
"""PBFD paper Fig. 4 (docs/methods/pbfd.md §8.2): optimizer comparison on two 10-link chains.

(a) chain_fixed (D = 10, no contact) and (b) chain_floating_ground (D = 15, 8 corners per link),
dt in {0.01, 0.05} s, 200 steps each, five integrator+optimizer combinations of Table I
(all but LM on Eq. 13): pbd+lm, pbd+jtj_lm, pbd+lbfgs, pbfd+jtj_lm, pbfd+lbfgs.
Per timestep: iterations to convergence and solve wall time (bigstep's steps.csv).

For the floating chain C_par = 5e4/dt so a link sliding at 1 m/s sees mu_eff = 2 C_par v dt / C_perp
= 0.5 with C_perp = 2e5 (configs/chain_floating_ground.yaml).

Writes bench/results/fig4_optimizers.csv (per step), fig4_optimizers_summary.csv (per run),
their .meta.json sidecars and fig4_optimizers.png; prints the summary table.

    python3 bench/paper/fig4_optimizers.py [--repeats 5] [--workers 1] [--timeout 300]

Iteration counts are deterministic; per-step times are the median over --repeats runs (the
machine may be shared, so the sidecar records the load average).
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]  # siblings, bench/common.py
import common  # noqa: E402

SCENES = [  # (config, D, label)
    ("chain_fixed", 10, "(a) fixed chain, no contact, D=10"),
    ("chain_floating_ground", 15, "(b) floating chain on ground, D=15"),
]
DTS = [0.01, 0.05]
N_STEPS = 200
COMBOS = [("pbd", "lm"), ("pbd", "jtj_lm"), ("pbd", "lbfgs"), ("pbfd", "jtj_lm"), ("pbfd", "lbfgs")]
C_PERP_FLOATING = 2.0e5
MU_EFF_TARGET = 0.5


def c_par_for(dt: float) -> float:
    """C_par giving mu_eff = 2 C_par v dt / C_perp = 0.5 at v = 1 m/s: 5e4 / dt."""
    return MU_EFF_TARGET * C_PERP_FLOATING / (2.0 * 1.0 * dt)


def overrides_for(scene: str, dt: float, integ: str, opt: str) -> dict:
    ov = {"integrator.type": integ, "integrator.optimizer": opt, "integrator.dt": dt,
          "integrator.duration": round(N_STEPS * dt, 12)}
    if scene == "chain_floating_ground":
        ov["contact.c_par"] = c_par_for(dt)
    return ov


def combo_name(integ: str, opt: str) -> str:
    return f"{integ}+{opt}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5, help="runs per configuration for timing (median)")
    ap.add_argument("--workers", type=int, default=1,
                    help="parallel runs (at most 2; default 1 so two timed runs do not share the 2 cores)")
    ap.add_argument("--timeout", type=float, default=300.0, help="per-run limit in seconds")
    ap.add_argument("--out", type=Path, default=common.RESULTS, help="results directory")
    ap.add_argument("--prefix", default="fig4_optimizers", help="output file name prefix")
    args = ap.parse_args()

    binary = common.find_binary()
    info_before = common.machine_info(binary)
    jobs = []
    for scene, D, _ in SCENES:
        for dt in DTS:
            for integ, opt in COMBOS:
                for rep in range(args.repeats):
                    jobs.append(((scene, dt, integ, opt, rep), scene, overrides_for(scene, dt, integ, opt)))
    print(f"fig4: {len(jobs)} runs ({args.repeats} repeats) with {binary}", file=sys.stderr)
    t0 = time.perf_counter()
    results = common.run_many(jobs, workers=args.workers, timeout=args.timeout, binary=binary)
    total_s = time.perf_counter() - t0

    grouped: dict = {}
    for (scene, dt, integ, opt, rep), r in results:
        grouped.setdefault((scene, dt, integ, opt), []).append(r)

    step_rows, summary_rows, notes = [], [], []
    for scene, D, _ in SCENES:
        for dt in DTS:
            for integ, opt in COMBOS:
                runs = grouped[(scene, dt, integ, opt)]
                good = [r for r in runs if r.ok and r.steps]
                base = {"scene": scene, "D": D, "dt": dt, "integrator": integ, "optimizer": opt,
                        "combo": combo_name(integ, opt),
                        "c_par": overrides_for(scene, dt, integ, opt).get("contact.c_par", "")}
                if not good:
                    why = "timeout" if any(r.timed_out for r in runs) else f"no output (rc={runs[0].rc})"
                    summary_rows.append({**base, "note": why, "rc": runs[0].rc})
                    notes.append(f"{scene} dt={dt} {combo_name(integ, opt)}: {why}")
                    continue
                ref = good[0]
                n = len(ref.steps)
                for r in good[1:]:  # iteration counts must be deterministic across repeats
                    if [s["iterations"] for s in r.steps] != [s["iterations"] for s in ref.steps]:
                        notes.append(f"{scene} dt={dt} {combo_name(integ, opt)}: iteration counts differ "
                                     "between repeats (non-deterministic run)")
                walls = np.array([[s["wall_s"] for s in r.steps] for r in good if len(r.steps) == n])
                wall_med = np.median(walls, axis=0)
                wall_min = walls.min(axis=0)
                for k, s in enumerate(ref.steps):
                    step_rows.append({**base, "step": s["step"], "t": s["t"], "iterations": s["iterations"],
                                      "residual": s["residual"], "status": s["status"],
                                      "converged": s["converged"], "wall_s": float(wall_med[k]),
                                      "wall_s_min": float(wall_min[k])})
                its = np.array([s["iterations"] for s in ref.steps], dtype=float)
                conv = np.array([s["converged"] for s in ref.steps])
                sm = ref.summary
                row = {**base, "steps": n, "rc": ref.rc,
                       "iterations_mean": float(its.mean()), "iterations_median": float(np.median(its)),
                       "iterations_max": int(its.max()),
                       "iterations_mean_converged": float(its[conv].mean()) if conv.any() else "",
                       "converged_fraction": float(conv.mean()),
                       "summary_converged_fraction": sm.get("converged_fraction", ""),
                       "restarts": sm.get("restarts", ""),
                       "time_per_step_mean_s": float(wall_med.mean()),
                       "time_per_step_median_s": float(np.median(wall_med)),
                       "time_per_step_max_s": float(wall_med.max()),
                       "time_per_iteration_s": float(wall_med.sum() / its.sum()) if its.sum() > 0 else "",
                       "run_wall_time_s": float(statistics.median(r.summary.get("wall_time_s", math.nan) for r in good)),
                       "repeats": len(good),
                       "com_final_m": " ".join(f"{x:.6g}" for x in sm.get("com_final_m", [])),
                       "note": ""}
                if conv.mean() < 1.0:
                    bad = [s["step"] for s in ref.steps if not s["converged"]]
                    row["note"] = (f"{len(bad)} non-converged steps"
                                   + (f" (first {bad[:5]})" if len(bad) < n else " (all)"))
                    notes.append(f"{scene} dt={dt} {combo_name(integ, opt)}: {row['note']}; "
                                 f"median iterations {np.median(its):.0f}, final residual {ref.steps[-1]['residual']:.3g}")
                summary_rows.append(row)

    meta = {"command": common.command_line(), **info_before,
            "loadavg_after_1_5_15": list(__import__("os").getloadavg()),
            "script_wall_s": round(total_s, 1), "repeats": args.repeats,
            "workers": min(args.workers, common.MAX_WORKERS), "timeout_s": args.timeout,
            "n_steps": N_STEPS, "dts": DTS, "combos": [combo_name(*c) for c in COMBOS],
            "c_par_floating": {str(dt): c_par_for(dt) for dt in DTS},
            "wall_s": "median over repeats of steps.csv wall_s (solver time of the step)",
            "notes": notes}
    out = args.out
    step_fields = ["scene", "D", "dt", "integrator", "optimizer", "combo", "c_par", "step", "t", "iterations",
                   "residual", "status", "converged", "wall_s", "wall_s_min"]
    sum_fields = ["scene", "D", "dt", "integrator", "optimizer", "combo", "c_par", "steps", "rc",
                  "iterations_mean", "iterations_median", "iterations_max", "iterations_mean_converged",
                  "converged_fraction", "summary_converged_fraction", "restarts", "time_per_step_mean_s",
                  "time_per_step_median_s", "time_per_step_max_s", "time_per_iteration_s", "run_wall_time_s",
                  "repeats", "com_final_m", "note"]
    p1 = common.write_csv(out / f"{args.prefix}.csv", step_rows, step_fields, meta)
    p2 = common.write_csv(out / f"{args.prefix}_summary.csv", summary_rows, sum_fields, meta)
    png = out / f"{args.prefix}.png"
    plot(step_rows, summary_rows, png, meta)

    table = []
    for r in summary_rows:
        t = dict(r)
        for k in ("time_per_step_mean_s", "time_per_step_median_s", "time_per_iteration_s"):
            if isinstance(t.get(k), float):
                t[k[:-2] + "_ms"] = 1e3 * t[k]
        table.append(t)
    common.print_table(table, ["scene", "dt", "combo", "iterations_mean", "iterations_max", "converged_fraction",
                               "restarts", "time_per_step_mean_ms", "time_per_step_median_ms",
                               "time_per_iteration_ms", "note"],
                       {"iterations_mean": ".2f", "converged_fraction": ".3f",
                        "time_per_step_mean_ms": ".3f", "time_per_step_median_ms": ".3f",
                        "time_per_iteration_ms": ".4f"})
    if notes:
        print("\nnotes:")
        for n_ in notes:
            print("  " + n_)
    print(f"\nwrote {p1}\n      {p2}\n      {png}\n(total {total_s:.1f} s)")
    return 0


def plot(step_rows, summary_rows, png: Path, meta) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = {"pbd+lm": "tab:blue", "pbd+jtj_lm": "tab:orange", "pbd+lbfgs": "tab:green",
              "pbfd+jtj_lm": "tab:red", "pbfd+lbfgs": "tab:purple"}
    cols = [(s, D, lab, dt) for s, D, lab in SCENES for dt in DTS]
    fig, axes = plt.subplots(2, len(cols), figsize=(4.4 * len(cols), 7.5), sharex="col", squeeze=False)
    summ = {(r["scene"], r["dt"], r["combo"]): r for r in summary_rows}
    for j, (scene, D, lab, dt) in enumerate(cols):
        ax_it, ax_t = axes[0, j], axes[1, j]
        for integ, opt in COMBOS:
            c = combo_name(integ, opt)
            rows = [r for r in step_rows if r["scene"] == scene and r["dt"] == dt and r["combo"] == c]
            if not rows:
                continue
            step = np.array([r["step"] for r in rows])
            its = np.array([r["iterations"] for r in rows], dtype=float)
            wall = np.array([r["wall_s"] for r in rows]) * 1e3
            conv = np.array([bool(r["converged"]) for r in rows])
            s = summ.get((scene, dt, c), {})
            cf = s.get("converged_fraction", 1.0)
            label = c if cf == 1.0 else f"{c} ({100 * cf:.1f}% conv.)"
            ls = "-" if cf == 1.0 else ":"
            ax_it.plot(step, its, ls, color=colors[c], lw=1.1, label=label)
            ax_t.plot(step, wall, ls, color=colors[c], lw=1.1, label=label)
            if (~conv).any() and conv.any():
                ax_it.plot(step[~conv], its[~conv], "x", color=colors[c], ms=6)
                ax_t.plot(step[~conv], wall[~conv], "x", color=colors[c], ms=6)
        ax_it.set_title(f"{lab}\ndt = {dt} s" + (f", C_par = {c_par_for(dt):.0e}" if scene != "chain_fixed" else ""),
                        fontsize=9)
        zeros = any(r["iterations"] == 0 for r in step_rows if r["scene"] == scene and r["dt"] == dt)
        if zeros:  # 0-iteration steps (the predictor already converged): linear below 1
            ax_it.set_yscale("symlog", linthresh=1.0)
            ax_it.set_ylim(bottom=0)
        else:
            ax_it.set_yscale("log")
        ax_t.set_yscale("log")
        ax_it.set_ylabel("iterations per step")
        ax_t.set_ylabel("solve time per step [ms]")
        ax_t.set_xlabel("timestep")
        for ax in (ax_it, ax_t):
            ax.grid(True, which="both", alpha=0.3)
        ax_it.legend(fontsize=7, loc="upper right")
    fig.suptitle("Fig. 4 reproduction: iterations and CPU solve time per timestep "
                 f"(x: step not converged; dotted: run with non-converged steps)\n"
                 f"{meta['cpu']}, {meta['cpu_count']} cores, git {meta['git_commit'][:10]}"
                 f"{' (dirty)' if meta['git_dirty'] else ''}, {meta['date']}", fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
