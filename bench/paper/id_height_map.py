#!/usr/bin/env python3
"""Oracle 12, second half (docs/methods/inverse_dynamics.md §10: "on the random height map ID(t_i)
tracking error 19 % below PID"; §9 terrain "rigid height map, bumps <= 3 cm, mu ~ U(0.1, 1.5)").

Scene configs/id_quadruped_trot.yaml (spider, NE-LCP at 1 ms, joint-space trot) with its plane
replaced by a seeded random height map (model.terrain[0].height_map, core/height_field.h): 6 m x 3 m,
0.1 m cells, control heights U(0, 3 cm), lowered by 3 cm (pos z = -0.03) so the surface lies in
[-3, 0] cm and the feet start on or above it; mu ~ U(0.1, 1.5) per foot (batch.contact_mu_min / max).
Terrain seed = mu seed = batch.seed = 0..S-1. The same runs on the flat plane (terrain "plane", same
mu draws) for reference. Per run, the mean |joint position error| [rad] against the plan
(summary.json controller.track_pos_rad) and the fall rule of bench/paper/id_tables.py.

Writes bench/results/id_height_map.csv (+ .meta.json) and id_height_map.png (tracking error per
controller and terrain, and the ratio ID / PID per seed).

    python3 bench/paper/id_height_map.py [--duration 3] [--seeds 3] [--workers 2]
                                   [--controllers pd,id_lcp_mu,id_qp_mu] [--set key=value]...
                                   [--bump-max 0.03] [--tag T]
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
import id_tables  # noqa: E402  (the fall rule)

CONTROLLERS = ["pd", "id_lcp_mu", "id_qp_mu", "id_lcp_inf", "id_prev1"]
FIELDS = ["terrain", "seed", "controller", "fell", "rc", "steps", "track_pos_rad", "ratio_to_pd",
          "track_vel_rad_s", "tilt_max_rad", "height_min_m", "height_max_m", "distance_final_m",
          "steps_clamped", "wall_s"]


def height_map(seed: int, bump_max: float = 0.03) -> str:
    """The terrain override of one seed (the CI test tests/control/inverse_dynamics/id_height_map_test.cpp uses the
    default): bumps in [-bump_max, 0], so the feet start on or above the surface."""
    return ("[{height_map: {size: [6, 3], cells: [60, 30], "
            f"bump_max: {bump_max!r}, seed: {seed}, pos: [0.5, 0, {-bump_max!r}]}}}}]")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=3.0)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=1200)
    ap.add_argument("--out", type=Path, default=common.REPO / "bench" / "results")
    ap.add_argument("--controllers", default=",".join(CONTROLLERS[:3]))
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="extra override on every run")
    ap.add_argument("--bump-max", type=float, default=0.03, help="bump height [m] (the spec's 3 cm)")
    ap.add_argument("--tag", default="", help="output stem suffix: id_height_map_TAG.*")
    args = ap.parse_args()
    controllers = [c for c in args.controllers.split(",") if c]
    for c in controllers:
        if c not in CONTROLLERS:
            ap.error(f"--controllers: unknown controller.type {c!r} (expected one of {', '.join(CONTROLLERS)})")
    if "pd" not in controllers:
        ap.error("--controllers must include pd (the ratios are to it)")
    extra = dict(kv.split("=", 1) for kv in args.set)
    stem = "id_height_map" + (f"_{args.tag}" if args.tag else "")
    t0 = time.perf_counter()
    info = common.machine_info()
    jobs = []
    for terrain in ("hmap", "plane"):
        for seed in range(args.seeds):
            for c in controllers:
                ov = {"controller.type": c, "integrator.duration": args.duration, "batch.contact_mu_min": 0.1,
                      "batch.contact_mu_max": 1.5, "batch.seed": seed, **extra}
                if terrain == "hmap":
                    ov["model.terrain"] = height_map(seed, args.bump_max)
                jobs.append(((terrain, seed, c), "id_quadruped_trot", ov))
    rows = []
    for (terrain, seed, c), r in common.run_many(jobs, workers=args.workers, timeout=args.timeout):
        s = r.summary or {}
        ctl = s.get("controller", {})
        tilt = s.get("tilt_max_rad")
        hmin, hmax = s.get("height_min_m"), s.get("height_max_m")
        rows.append({"terrain": terrain, "seed": seed, "controller": c, "fell": id_tables.fell(r), "rc": r.rc,
                     "steps": len(r.steps), "track_pos_rad": ctl.get("track_pos_rad"),
                     "track_vel_rad_s": ctl.get("track_vel_rad_s"), "tilt_max_rad": tilt, "height_min_m": hmin,
                     "height_max_m": hmax, "distance_final_m": s.get("distance_final_m"),
                     "steps_clamped": ctl.get("steps_clamped"), "wall_s": s.get("wall_time_s")})
    # ratio of each run's error to the PID's on the same terrain and seed
    pd = {(r["terrain"], r["seed"]): r["track_pos_rad"] for r in rows if r["controller"] == "pd"}
    for r in rows:
        p = pd.get((r["terrain"], r["seed"]))
        r["ratio_to_pd"] = r["track_pos_rad"] / p if p and r["track_pos_rad"] is not None else None
    meta = {"command": common.command_line(), **info, "loadavg_after_1_5_15": list(os.getloadavg()),
            "script_wall_s": round(time.perf_counter() - t0, 1), "duration_s": args.duration,
            "bump_max_m": args.bump_max,
            "scene": "configs/id_quadruped_trot.yaml (ne_lcp, dt 1 ms, joint-space walk, duty 0.75)",
            "terrain_hmap": height_map(0, args.bump_max).replace("seed: 0", "seed: S"),
            "mu": "U(0.1, 1.5) per geom, batch.seed = S",
            "fell_rule": "rc not in {0, 1}, aborted, tilt_max > 1 rad or torso height outside [0.1, 0.6] m",
            "extra_overrides": extra, "controllers": controllers}
    csv_path = common.write_csv(args.out / f"{stem}.csv", rows, FIELDS, meta)
    common.print_table(rows, ["terrain", "seed", "controller", "fell", "track_pos_rad", "ratio_to_pd",
                              "distance_final_m", "steps_clamped"])
    for terrain in ("hmap", "plane"):
        for c in controllers:
            v = [r["track_pos_rad"] for r in rows if r["terrain"] == terrain and r["controller"] == c
                 and r["track_pos_rad"] is not None]
            p = [r["track_pos_rad"] for r in rows if r["terrain"] == terrain and r["controller"] == "pd"
                 and r["track_pos_rad"] is not None]
            if v and p:
                print(f"{terrain:5s} {c:10s} mean |e_q| {np.mean(v):.4f} rad, "
                      f"{100 * (1 - np.mean(v) / np.mean(p)):+.1f} % below PID", file=sys.stderr)
    plot(rows, args.out / f"{stem}.png", meta, controllers, args.seeds)
    print(f"wrote {csv_path}", file=sys.stderr)


def plot(rows, png: Path, meta, controllers, n_seeds: int) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    x = np.arange(len(controllers))
    for i, terrain in enumerate(("hmap", "plane")):
        vals = [np.mean([r["track_pos_rad"] for r in rows if r["terrain"] == terrain and r["controller"] == c
                         and r["track_pos_rad"] is not None] or [np.nan]) for c in controllers]
        axes[0].bar(x + (i - 0.5) * 0.4, vals, 0.4, label=terrain)
    axes[0].set_xticks(x)
    axes[0].set_xticklabels(controllers, rotation=30, ha="right")
    axes[0].set_ylabel("mean |joint position error| [rad], mean over seeds")
    axes[0].set_yscale("log")
    axes[0].legend(title="terrain")
    axes[0].grid(alpha=0.3, axis="y")
    for c in controllers:
        if c == "pd":
            continue
        for terrain, ls in (("hmap", "-o"), ("plane", "--x")):
            ys = [next((r["ratio_to_pd"] for r in rows if r["terrain"] == terrain and r["controller"] == c
                        and r["seed"] == s), None) for s in range(n_seeds)]
            axes[1].plot(range(n_seeds), [np.nan if y is None else y for y in ys], ls, label=f"{c} ({terrain})")
    axes[1].axhline(0.81, color="k", lw=0.8, ls=":", label="paper: 19 % below PID")
    axes[1].axhline(1.0, color="grey", lw=0.8)
    axes[1].set_xlabel("seed (terrain and mu draws)")
    axes[1].set_ylabel("|e_q| ID / |e_q| PID")
    axes[1].set_yscale("log")
    axes[1].legend(fontsize=7)
    axes[1].grid(alpha=0.3)
    fig.suptitle(f"Oracle 12 on the random height map (bumps <= {meta['bump_max_m']} m, mu ~ U(0.1, 1.5)), spider trot "
                 f"{meta['duration_s']} s — {common.plot_stamp(meta)}", fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main()
