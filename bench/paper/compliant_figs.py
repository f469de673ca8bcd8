#!/usr/bin/env python3
"""Drumwright's compliant solver (docs/methods/compliant.md §10): Fig. 9, Fig. 10, B4 table.

- Fig. 9 (B5, configs/incline_box.yaml): sliding distance along the 15 deg slope after 1 s vs mu in
  {0, 0.0625, ..., 0.5}, staggered solve (default) and cone / polyhedral cones, with the [ours]
  oracle 0.505 g (sin 15 - mu cos 15) (0 once mu >= tan 15).
- Fig. 10 (B6, configs/sphere_stack.yaml generated for N spheres): wall time per simulated second
  vs number of spheres N in 1..100 (500 steps at h = 0.01; A9), from the CLI's wall_time_s (the
  step loop only, no start-up or output).
- B4 (configs/box_foundation.yaml, the paper's rotating 5 N / 50 N load): wall time per simulated
  second, sweeps, N-step active-set iterations (reduced QP pieces), dense-QP fallbacks and rows per
  step vs the foundation modulus E in 1e7 .. 1e11 (every decade of the spec's range; per-element
  K = E * A_el / 1 m) and the element count {100, 900}; the spec's claim 16: the cost does not
  depend on the stiffness.

Writes bench/results/compliant_fig9.csv, compliant_fig10.csv, compliant_b4.csv (+ .meta.json) and
compliant_fig9.png, compliant_fig10.png, compliant_b4.png (--replot: compliant_b4.png from its CSV only).

    python3 bench/paper/compliant_figs.py [--spheres 1,2,5,10,20,50,100] [--workers 2] [--timeout 1200]
"""
from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]  # siblings, bench/common.py
import common  # noqa: E402

G = 9.81
MU_GRID = [0.0, 0.0625, 0.125, 0.1875, 0.25, 0.3125, 0.375, 0.4375, 0.5]
SPHERES = [1, 2, 5, 10, 20, 50, 100]
B4_MODULI = [1e7, 1e8, 1e9, 1e10, 1e11]


def incline_oracle(mu: float) -> float:
    a = G * (math.sin(math.pi / 12) - mu * math.cos(math.pi / 12))
    return 0.505 * a if a > 0 else 0.0


def stack_yaml(n: int) -> str:
    """B6 with n spheres (r = 0.1, 1 kg, gaps 0.05 m), as configs/sphere_stack.yaml."""
    links = "\n".join(f"    - {{name: s{i}, joint: floating, pos: [0, 0, {0.15 + 0.25 * i:.2f}], mass: 1.0, "
                      f"inertia: [0.004, 0.004, 0.004]}}" for i in range(n))
    geoms = "\n".join(f"    - {{link: s{i}, type: sphere, size: [0.1]}}" for i in range(n))
    return f"""scene: sphere_stack_{n}
model:
  gravity: [0, 0, -9.81]
  links:
{links}
  geoms:
{geoms}
    - {{type: plane}}
integrator: {{type: compliant, dt: 0.01, duration: 5.0}}
contact: {{mu: 0.5}}
compliant: {{normal_model: hertz, youngs_modulus: 1.0e11, normal_damping: 1.0, max_contacts: {max(n, 8)}}}
metrics: {{type: com, link: s{n - 1}}}
"""


def foundation_yaml(side: int) -> str:
    """B4 with side x side elements under the bottom face of the 1 m cube."""
    pts = ", ".join(f"[{-0.5 + (i + 0.5) / side:.6f}, {-0.5 + (j + 0.5) / side:.6f}, -0.5]"
                    for i in range(side) for j in range(side))
    text = (common.CONFIGS / "box_foundation.yaml").read_text()
    start = text.index("      points: [")
    end = text.index("]]", start) + 2
    return text[:start] + f"      points: [{pts}]" + text[end:]


def meta(info: dict, t_start: float) -> dict:
    return {"command": common.command_line(), **info, "script_wall_s": round(time.perf_counter() - t_start, 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=1200.0)
    ap.add_argument("--spheres", default=",".join(str(n) for n in SPHERES))
    ap.add_argument("--skip", default="", help="comma list of fig9,fig10,b4 to skip")
    ap.add_argument("--b4-sides", default="10,30", help="B4 grids side x side (10: 100 elements, 30: 900)")
    ap.add_argument("--replot", action="store_true", help="only redraw compliant_b4.png from its CSV")
    args = ap.parse_args()
    if args.replot:
        args.skip = "fig9,fig10,b4"
    skip = set(filter(None, args.skip.split(",")))
    t_start = time.perf_counter()
    info = common.machine_info()
    out = {}

    # ---- Fig. 9: distance vs mu ----
    if "fig9" not in skip:
        jobs = [((cone, mu), "incline_box", {"contact.mu": mu, "compliant.friction_cone": cone})
                for cone in ("cone", "polyhedral") for mu in MU_GRID]
        rows = []
        for (cone, mu), r in common.run_many(jobs, workers=args.workers, timeout=args.timeout):
            s = r.summary
            rows.append({"friction_cone": cone, "mu": mu, "sliding_distance_m": s.get("sliding_distance_m"),
                         "oracle_m": incline_oracle(mu), "iterations_mean": s.get("iterations_mean"),
                         "converged_fraction": s.get("converged_fraction"),
                         "wall_time_per_step_s": s.get("wall_time_per_step_s"), "rc": r.rc})
        fields = list(rows[0].keys())
        common.write_csv(common.RESULTS / "compliant_fig9.csv", rows, fields, meta=meta(info, t_start))
        common.print_table(rows, fields)
        out["fig9"] = rows

    # ---- Fig. 10: time per simulated second vs spheres ----
    if "fig10" not in skip:
        ns = [int(x) for x in args.spheres.split(",") if x]
        rows = []
        with tempfile.TemporaryDirectory(prefix="bigstep-stack-") as tmp:
            jobs = []
            for n in ns:
                p = Path(tmp) / f"stack_{n}.yaml"
                p.write_text(stack_yaml(n))
                jobs.append((n, str(p), {}))
            for n, r in common.run_many(jobs, workers=1, timeout=args.timeout):  # timings: one at a time
                s = r.summary
                rows.append({"spheres": n, "n_q": s.get("n_q"), "steps": s.get("steps"),
                             "sim_time_s": s.get("sim_time_s"), "wall_time_s": s.get("wall_time_s"),
                             "wall_per_sim_second_s": (s["wall_time_s"] / s["sim_time_s"]) if s else None,
                             "iterations_mean": s.get("iterations_mean"),
                             "converged_fraction": s.get("converged_fraction"), "rc": r.rc})
        fields = list(rows[0].keys())
        common.write_csv(common.RESULTS / "compliant_fig10.csv", rows, fields, meta=meta(info, t_start))
        common.print_table(rows, fields)
        out["fig10"] = rows

    # ---- B4: cost vs stiffness ----
    if "b4" not in skip:
        rows = []
        with tempfile.TemporaryDirectory(prefix="bigstep-b4-") as tmp:
            jobs = []
            for side in [int(x) for x in args.b4_sides.split(",") if x]:
                p = Path(tmp) / f"foundation_{side}.yaml"
                p.write_text(foundation_yaml(side))
                for E in B4_MODULI:
                    # 50 N rocks the box: elements lift off; the N-step's reduced QP (2n unknowns,
                    # solvers/compliant/compliant_reduced_qp.h) solves it, where the dense 900-row QP took
                    # seconds per step
                    for force in (5.0, 50.0):
                        k = E * (1.0 / side ** 2) / 1.0
                        jobs.append(((side * side, E, force), str(p),
                                     {"compliant.normal_stiffness": k, "control.load.force": [0, 0, -force],
                                      "compliant.max_contacts": side * side}))
            for (nel, E, force), r in common.run_many(jobs, workers=1, timeout=args.timeout):
                s = r.summary
                rows.append({"elements": nel, "E_Pa": E, "force_N": force, "wall_time_s": s.get("wall_time_s"),
                             "wall_per_sim_second_s": (s["wall_time_s"] / s["sim_time_s"]) if s else None,
                             "wall_time_per_step_s": s.get("wall_time_per_step_s"),
                             "rows_per_step": nel, "iterations_mean": s.get("iterations_mean"),
                             "nstep_iterations_mean": (s.get("compliant") or {}).get("nstep_iterations_mean"),
                             "nstep_iterations_max": (s.get("compliant") or {}).get("nstep_iterations_max"),
                             "fallbacks": (s.get("compliant") or {}).get("fallbacks"),
                             "converged_fraction": s.get("converged_fraction"),
                             "com_final_z_m": (s.get("com_final_m") or [None] * 3)[2], "rc": r.rc})
        fields = list(rows[0].keys())
        common.write_csv(common.RESULTS / "compliant_b4.csv", rows, fields, meta=meta(info, t_start))
        common.print_table(rows, fields)
        out["b4"] = rows

    if args.replot:
        import csv
        for key, name in (("b4", "compliant_b4.csv"),):
            with open(common.RESULTS / name) as f:
                out[key] = [{k: (float(v) if k != "friction_cone" and v not in ("", "None") else v) for k, v in r.items()}
                            for r in csv.DictReader(f)]

    # ---- plots ----
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no PNG", file=sys.stderr)
        return 0
    if "fig9" in out:
        fig, ax = plt.subplots(figsize=(5, 3.5))
        for cone, mark in (("cone", "o"), ("polyhedral", "s")):
            rs = [r for r in out["fig9"] if r["friction_cone"] == cone]
            ax.plot([r["mu"] for r in rs], [r["sliding_distance_m"] for r in rs], mark, label=f"compliant, {cone}",
                    mfc="none")
        mus = [i * 0.005 for i in range(101)]
        ax.plot(mus, [incline_oracle(m) for m in mus], "k-", lw=0.8, label="0.505 g (sin15 - mu cos15)")
        ax.set_xlabel("mu")
        ax.set_ylabel("distance along the slope after 1 s [m]")
        ax.set_title("B5 box on a 15 deg incline (Fig. 9), h = 0.01")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(common.RESULTS / "compliant_fig9.png", dpi=120)
    if "fig10" in out:
        fig, ax = plt.subplots(figsize=(5, 3.5))
        rs = [r for r in out["fig10"] if r["wall_per_sim_second_s"]]
        ax.loglog([r["spheres"] for r in rs], [r["wall_per_sim_second_s"] for r in rs], "o-")
        ax.set_xlabel("spheres N")
        ax.set_ylabel("wall time per simulated second [s]")
        ax.set_title("B6 sphere stack (Fig. 10), h = 0.01, 500 steps")
        fig.tight_layout()
        fig.savefig(common.RESULTS / "compliant_fig10.png", dpi=120)
    if "b4" in out:
        fig, ax = plt.subplots(figsize=(5, 3.5))
        for nel, force, mark in ((100, 5.0, "o-"), (100, 50.0, "s-"), (900, 5.0, "^-"), (900, 50.0, "v-")):
            rs = [r for r in out["b4"] if r["elements"] == nel and r["force_N"] == force and r["wall_per_sim_second_s"]]
            if rs:
                ax.loglog([r["E_Pa"] for r in rs], [r["wall_per_sim_second_s"] for r in rs], mark,
                          label=f"{int(nel)} elements, {force:g} N")
        ax.set_xlabel("foundation modulus E [Pa]")
        ax.set_ylabel("wall time per simulated second [s]")
        ax.set_title("B4 box on an elastic foundation, h = 0.01")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(common.RESULTS / "compliant_b4.png", dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
