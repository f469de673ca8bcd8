#!/usr/bin/env python3
"""LM iterations per step vs dt, cold vs warm-started lambda.

For the floating chain (C_par = 5e4 / dt), the spider quadruped (its jump reference), the standing
A1 and the sliding box, PBFD JTJ-LM at dt in {0.01, 0.02, 0.05, 0.1}: mean and max LM iterations
per step over 2 s of simulated time, with `integrator.warm_lambda=false` (the spec's fresh
lambda = 1e-3 max B_ii every step, docs/methods/pbfd.md §5.1) and `true` (the last converged step's lambda), and
the largest |COM difference| between the two runs (both are roots of Eq. 13 to the same tolerance).
Writes bench/results/iterations_vs_dt.csv (+ .meta.json) and .png.

With --friction: the friction laws instead (docs/methods/pbfd.md §4.4 and §4.9), warm lambda, on the
sliding box (v0 = 5 m/s, mu = 0.5; power: its C_par scaled as 3e5 / dt, mu_eff = 0.5 at 1 m/s) and the
floating chain (power: C_par = 5e4 / dt; coulomb: mu = 0.5): mean / max LM iterations per step,
converged fraction and the box's sliding distance against v0^2 / (2 mu g), for contact.friction =
power and coulomb at stiction velocities 0.01 and 0.001 m/s, and coulomb with integrator.order 2. Writes
bench/results/iterations_vs_dt_friction.csv (+ .meta.json) and .png.

Usage: python3 bench/perf/iterations_vs_dt.py [--friction]
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]  # siblings, bench/common.py
import common  # noqa: E402

SCENES = [  # (name, config, overrides(dt))
    ("chain_floating_ground", "chain_floating_ground", lambda dt: {"contact.c_par": 5e4 / dt}),
    ("quadruped_spider", "quadruped_spider", lambda dt: {}),
    ("a1_stand", "a1_stand", lambda dt: {}),
    ("box_slide", "box_slide", lambda dt: {}),
]
DTS = [0.01, 0.02, 0.05, 0.1]


def save(rows, cols, name: str, binary, note: str):
    """Prints the table, writes bench/results/<name>.csv with its meta (machine, date, note); returns the path."""
    common.print_table(rows, cols)
    out = common.RESULTS / f"{name}.csv"
    common.write_csv(out, rows, cols, meta={"command": common.command_line(), **common.machine_info(binary), "note": note})
    return out


def style_iteration_axes(axes, names) -> None:
    """Log dt axes titled by scene, the iteration label and the legend on the first."""
    for ax, name in zip(axes, names):
        ax.set_xscale("log")
        ax.set_title(name)
        ax.set_xlabel("dt [s]")
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("LM iterations per step (mean over 2 s)")
    axes[0].legend(fontsize=8)


def pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


FRICTION_LAWS = [  # (label, overrides(dt))
    ("power", lambda dt: {"contact.friction": "power"}),
    ("coulomb v_s=0.01", lambda dt: {"contact.friction": "coulomb", "contact.mu": 0.5, "contact.stiction_velocity": 0.01}),
    ("coulomb v_s=0.001", lambda dt: {"contact.friction": "coulomb", "contact.mu": 0.5, "contact.stiction_velocity": 0.001}),
    ("coulomb v_s=0.01 order 2", lambda dt: {"contact.friction": "coulomb", "contact.mu": 0.5, "contact.stiction_velocity": 0.01,
                                             "integrator.order": 2}),
]
FRICTION_SCENES = [  # (name, config, overrides(dt)): the power law's C_par where it is used
    ("box_slide", "box_slide", lambda dt: {"contact.c_par": 3e5 / dt, "initial.theta_dot": [5.0, 0.0, 0.0],
                                           "integrator.duration": 2.0}),
    ("chain_floating_ground", "chain_floating_ground", lambda dt: {"contact.c_par": 5e4 / dt, "integrator.duration": 2.0}),
]


def friction_main() -> None:
    binary = common.find_binary()
    jobs = []
    for name, cfg, ov in FRICTION_SCENES:
        for dt in DTS:
            for law, lov in FRICTION_LAWS:
                jobs.append(((name, dt, law), cfg, {
                    **ov(dt), **lov(dt), "integrator.type": "pbfd", "integrator.optimizer": "jtj_lm",
                    "integrator.dt": dt, "metrics.stop_at_rest": False}))
    res = dict(common.run_many(jobs, binary=binary))
    rows = []
    for name, _, _ in FRICTION_SCENES:
        for dt in DTS:
            for law, _ in FRICTION_LAWS:
                r = res[(name, dt, law)]
                its = [s["iterations"] for s in r.steps]
                row = {"scene": name, "dt": dt, "friction": law,
                       "iterations_mean": sum(its) / max(1, len(its)), "iterations_max": max(its) if its else 0,
                       "converged_fraction": sum(s["converged"] for s in r.steps) / max(1, len(r.steps)),
                       "sliding_distance_m": r.summary.get("sliding_distance_m", "") if name == "box_slide" else ""}
                if name == "box_slide":
                    row["distance_rel_err"] = row["sliding_distance_m"] / (5.0 ** 2 / (2 * 0.5 * 9.81)) - 1
                rows.append(row)
    cols = ["scene", "dt", "friction", "iterations_mean", "iterations_max", "converged_fraction",
            "sliding_distance_m", "distance_rel_err"]
    out = save(rows, cols, "iterations_vs_dt_friction", binary,
               "PBFD JTJ-LM, warm lambda, 2 s per run. power: the paper's law (box C_par = 3e5/dt, chain 5e4/dt: "
               "mu_eff 0.5 at 1 m/s); coulomb: contact.friction=coulomb, mu 0.5 (docs/methods/pbfd.md §4.9). Box from "
               "5 m/s: distance_rel_err against v0^2/(2 mu g) = 2.548 m (first-order floor mu g dt / v0)")
    plt = pyplot()
    fig, axes = plt.subplots(1, len(FRICTION_SCENES) + 1, figsize=(4.2 * (len(FRICTION_SCENES) + 1), 3.4))
    for ax, (name, _, _) in zip(axes, FRICTION_SCENES):
        for law, _ in FRICTION_LAWS:
            rs = [r for r in rows if r["scene"] == name and r["friction"] == law]
            ax.plot([r["dt"] for r in rs], [r["iterations_mean"] for r in rs], "o-", label=law)
    style_iteration_axes(axes, [name for name, _, _ in FRICTION_SCENES])
    ax = axes[-1]
    for law, _ in FRICTION_LAWS:
        rs = [r for r in rows if r["scene"] == "box_slide" and r["friction"] == law]
        ax.plot([r["dt"] for r in rs], [abs(r["distance_rel_err"]) for r in rs], "o-", label=law)
    ax.plot(DTS, [0.5 * 9.81 * dt / 5.0 for dt in DTS], "k--", label="first-order floor mu g dt / v0")
    ax.axhline(0.02, color="grey", lw=0.8, ls=":", label="2 %")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_title("box slide from 5 m/s: |distance error|")
    ax.set_xlabel("dt [s]")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.suptitle(common.plot_stamp(common.machine_info(binary)), fontsize=7)
    fig.tight_layout()
    fig.savefig(out.with_suffix(".png"), dpi=110)
    print(f"wrote {out} and {out.with_suffix('.png')}")


def main() -> None:
    if "--friction" in sys.argv[1:]:
        friction_main()
        return
    binary = common.find_binary()
    jobs = []
    for name, cfg, ov in SCENES:
        for dt in DTS:
            for warm in (False, True):
                jobs.append(((name, dt, warm), cfg, {
                    **ov(dt), "integrator.type": "pbfd", "integrator.optimizer": "jtj_lm",
                    "integrator.dt": dt, "integrator.duration": 2.0, "metrics.stop_at_rest": False,
                    "integrator.warm_lambda": warm}))
    res = dict(common.run_many(jobs, binary=binary))
    rows = []
    for name, _, _ in SCENES:
        for dt in DTS:
            c, w = res[(name, dt, False)], res[(name, dt, True)]
            row = {"scene": name, "dt": dt}
            for tag, r in (("cold", c), ("warm", w)):
                its = [s["iterations"] for s in r.steps]
                row[f"{tag}_iterations_mean"] = sum(its) / max(1, len(its))
                row[f"{tag}_iterations_max"] = max(its) if its else 0
                row[f"{tag}_converged_fraction"] = sum(s["converged"] for s in r.steps) / max(1, len(r.steps))
            row["ratio_cold_over_warm"] = row["cold_iterations_mean"] / max(1e-12, row["warm_iterations_mean"])
            cc, cw = c.summary.get("com_final_m"), w.summary.get("com_final_m")
            if cc is not None and cw is not None:
                row["com_final_diff_m"] = max(abs(a - b) for a, b in zip(cc, cw))
            else:
                row["com_final_diff_m"] = abs(c.summary.get("sliding_distance_m", 0) - w.summary.get("sliding_distance_m", 0))
            rows.append(row)
    cols = ["scene", "dt", "cold_iterations_mean", "warm_iterations_mean", "ratio_cold_over_warm",
            "cold_iterations_max", "warm_iterations_max", "cold_converged_fraction", "warm_converged_fraction",
            "com_final_diff_m"]
    out = save(rows, cols, "iterations_vs_dt", binary,
               "PBFD JTJ-LM, 2 s per run; cold = integrator.warm_lambda=false (docs/methods/pbfd.md §5.1's 1e-3 max B_ii "
               "each step), warm = the last converged step's lambda (floor 1e-10 max B_ii); com_final_diff_m: "
               "largest coordinate difference of the final COM between the two runs (sliding distance for box_slide)")
    plt = pyplot()
    fig, axes = plt.subplots(1, len(SCENES), figsize=(4 * len(SCENES), 3.4), sharey=False)
    for ax, (name, _, _) in zip(axes, SCENES):
        rs = [r for r in rows if r["scene"] == name]
        ax.plot([r["dt"] for r in rs], [r["cold_iterations_mean"] for r in rs], "o-", label="cold lambda (spec §5.1)")
        ax.plot([r["dt"] for r in rs], [r["warm_iterations_mean"] for r in rs], "s-", label="warm-started lambda")
    style_iteration_axes(axes, [name for name, _, _ in SCENES])
    fig.tight_layout()
    fig.savefig(out.with_suffix(".png"), dpi=110)
    print(f"wrote {out} and {out.with_suffix('.png')}")


if __name__ == "__main__":
    main()
