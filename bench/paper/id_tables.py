#!/usr/bin/env python3
"""Inverse-dynamics controllers on the trotting quadruped (docs/methods/inverse_dynamics.md §9,
Tables 3-5).

Scene configs/id_quadruped_trot.yaml (spider, NE-LCP at 1 ms, planned trot, 3 s), every
controller.type (pd, id_lcp_inf, id_lcp_mu, id_qp_mu, id_qp_inf, id_prev1, id_prev2) on three
rigid terrains:
  high   contact.mu = 100 (the paper's mu = inf; the simulator needs a finite mu)
  low    contact.mu = 0.1
  rand   mu ~ U(0.1, 1.5) per contact (per foot geom: batch.contact_mu_min / max, batch.seed = 0..2)
The ID controllers assume the terrain's mu (the rollout's contact.mu, or each contact's drawn mu).

Per run, from summary.json "controller" (batch/rollout.h Metrics): mean |joint position error| [rad]
and |velocity error| [rad/s] against the plan (Table 3), the joint error against the ID controllers'
own targets (track_state_pos_rad: walk.world_swing's swing IK, walk.replan_gain's footholds taken;
the plan's where neither is set), E|dtau| [N m/s] and E|tau| [N m]
(Table 4; the pd servo's torques are not recorded: blank), summed normal force error of the ID
prediction vs the simulator's force in the same step (Table 5; ID(t_i) controllers only), and
whether the robot fell (torso tilt > 1 rad or torso height outside [0.1, 0.6] m, or aborted).

Writes bench/results/id_tables.csv (+ .meta.json) and id_tables.png; with --tag T,
id_tables_T.* (e.g. the base feedback of control/inverse_dynamics/id_base_feedback.h on every run:
--set controller.base_kp=100 --set controller.base_kd=20 --tag basefb).

    python3 bench/paper/id_tables.py [--duration 3] [--workers 2] [--set key=value]... [--tag T]
                               [--controllers id_qp_mu,id_qp_inf,...]

--arm: the grasping arm instead (configs/id_arm_grasp.yaml: four sphere fingertips hold a free
1.44 kg box, hold 0.2 s, lift 3 cm in 0.5 s, hold; 1 s) on mu = 100 ("inf") and mu = 1, every
controller.type, the ID(t_i) ones also without the box's plan (controller.plan_unactuated = false,
the spec's free box): the same columns plus the box's slip in the hand (metrics.hold_link; dropped =
final slip > 1 cm). Writes bench/results/id_arm.csv (+ .meta.json) and id_arm.png.

    python3 bench/paper/id_tables.py --arm [--workers 2]
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

CONTROLLERS = ["pd", "id_lcp_inf", "id_lcp_mu", "id_qp_mu", "id_qp_inf", "id_prev1", "id_prev2"]
FIELDS = ["terrain", "mu", "seed", "controller", "fell", "rc", "steps", "track_pos_rad", "track_vel_rad_s",
          "track_state_pos_rad", "dtau_mean", "tau_mean", "force_err_n", "force_err_rel", "tilt_max_rad", "height_min_m",
          "height_max_m", "distance_final_m", "wall_s", "steps_clamped", "steps_impulse_bound"]


def terrains(names=("high", "low", "rand")):
    out = [t for t in [("high", 100.0, 0), ("low", 0.1, 0)] if t[0] in names]
    if "rand" in names:
        for seed in range(3):
            out.append(("rand", None, seed))  # per-contact U(0.1, 1.5)
    return out


def fell(r) -> bool:
    """The fall rule of the trot tables (module doc): the run failed or aborted, the torso tilted past
    1 rad or left [0.1, 0.6] m in height."""
    s = r.summary or {}
    tilt, hmin, hmax = s.get("tilt_max_rad"), s.get("height_min_m"), s.get("height_max_m")
    return bool(r.rc not in (0, 1) or s.get("aborted") or tilt is None or tilt > 1.0 or hmin is None
                or hmin < 0.1 or hmax > 0.6)


def controller_columns(row: dict, c: str, ctl: dict) -> None:
    """The controller's summary columns into row; blank where they mean nothing (PD's servo torques
    are recorded only under an actuator limit, controller.tau_max; PD and the ID(t-1), ID(t-2)
    controllers predict no forces). steps_clamped / steps_impulse_bound: steps whose torques hit the
    actuator limit (ID_TORQUE_CLAMPED) / whose impulses the physical bound caught (ID_IMPULSE_BOUND)."""
    for k in ("track_pos_rad", "track_vel_rad_s", "track_state_pos_rad", "dtau_mean", "tau_mean", "force_err_n", "force_err_rel",
              "steps_clamped", "steps_impulse_bound"):
        row[k] = ctl.get(k)
    if c == "pd" and not ctl.get("tau_mean"):
        row["dtau_mean"] = row["tau_mean"] = None
    if c in ("pd", "id_prev1", "id_prev2"):
        row["force_err_n"] = row["force_err_rel"] = None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=3.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--out", type=Path, default=common.REPO / "bench" / "results")
    ap.add_argument("--arm", action="store_true", help="the grasping-arm rows (id_arm.*) instead")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="extra override on every run")
    ap.add_argument("--tag", default="", help="output stem suffix: id_tables_TAG.*")
    ap.add_argument("--controllers", default=",".join(CONTROLLERS),
                    help="comma-separated controller.type subset (default: all), e.g. id_qp_mu,id_qp_inf")
    ap.add_argument("--terrains", default="high,low,rand", help="comma-separated subset of high, low, rand")
    args = ap.parse_args()
    bad = [t for t in args.terrains.split(",") if t not in ("high", "low", "rand")]
    if bad:
        ap.error(f"--terrains: unknown terrain {bad[0]!r} (expected high, low or rand)")
    controllers = [c for c in args.controllers.split(",") if c]
    for c in controllers:
        if c not in CONTROLLERS:
            ap.error(f"--controllers: unknown controller.type {c!r} (expected one of {', '.join(CONTROLLERS)})")
    if args.arm:
        return arm(args)
    extra = dict(kv.split("=", 1) for kv in args.set)
    stem = "id_tables" + (f"_{args.tag}" if args.tag else "")
    t0 = time.perf_counter()
    info = common.machine_info()
    jobs = []
    for terrain, mu, seed in terrains(args.terrains.split(",")):
        for c in controllers:
            ov = {"controller.type": c, "integrator.duration": args.duration, **extra}
            if mu is None:
                ov.update({"batch.contact_mu_min": 0.1, "batch.contact_mu_max": 1.5, "batch.seed": seed})
            else:
                ov["contact.mu"] = mu
            jobs.append(((terrain, mu, seed, c), "id_quadruped_trot", ov))
    rows = []
    for (terrain, mu, seed, c), r in common.run_many(jobs, workers=args.workers, timeout=args.timeout):
        s = r.summary or {}
        ctl = s.get("controller", {})
        tilt = s.get("tilt_max_rad")
        hmin, hmax = s.get("height_min_m"), s.get("height_max_m")
        row = {"terrain": terrain, "mu": mu, "seed": seed, "controller": c, "fell": fell(r), "rc": r.rc,
               "steps": len(r.steps), "tilt_max_rad": tilt, "height_min_m": hmin, "height_max_m": hmax,
               "distance_final_m": s.get("distance_final_m"), "wall_s": s.get("wall_time_s")}
        controller_columns(row, c, ctl)
        rows.append(row)
    meta = {"command": common.command_line(), **info, "loadavg_after_1_5_15": list(os.getloadavg()),
            "script_wall_s": round(time.perf_counter() - t0, 1), "duration_s": args.duration,
            "scene": "configs/id_quadruped_trot.yaml (ne_lcp, dt 1 ms, walk reference, duty 0.75)",
            "fell_rule": "rc not in {0, 1}, aborted, tilt_max > 1 rad or torso height outside [0.1, 0.6] m",
            "extra_overrides": extra, "controllers": controllers}
    csv_path = common.write_csv(args.out / f"{stem}.csv", rows, FIELDS, meta)
    common.print_table(rows, ["terrain", "mu", "controller", "fell", "rc", "track_pos_rad", "track_vel_rad_s",
                              "track_state_pos_rad", "dtau_mean", "tau_mean", "force_err_rel", "distance_final_m", "steps_clamped",
                              "steps_impulse_bound"])
    plot(rows, args.out / f"{stem}.png", meta, controllers)
    print(f"wrote {csv_path}", file=sys.stderr)


def plot(rows, png: Path, meta, controllers=CONTROLLERS) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    terr = ["high", "low", "rand"]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    panels = [("track_pos_rad", "mean |joint error| [rad]"), ("dtau_mean", "E|dtau| [N m/s]"),
              ("force_err_rel", "normal force error vs simulator (rel.)")]
    x = np.arange(len(controllers))
    for ax, (key, label) in zip(axes, panels):
        for i, t in enumerate(terr):
            vals = []
            for c in controllers:
                v = [r[key] for r in rows if r["terrain"] == t and r["controller"] == c and r[key] is not None
                     and not r["fell"]]
                vals.append(np.mean(v) if v else np.nan)
            ax.bar(x + (i - 1) * 0.27, vals, 0.27, label=t)
        ax.set_xticks(x)
        ax.set_xticklabels(controllers, rotation=40, ha="right")
        ax.set_ylabel(label)
        ax.set_yscale("log")
        ax.grid(alpha=0.3, axis="y")
    axes[0].legend(title="terrain (fallen runs omitted)")
    fig.suptitle(f"ID controllers, spider trot 3 s, NE-LCP 1 ms — {common.plot_stamp(meta)}", fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


ARM_FIELDS = ["mu", "controller", "plan", "dropped", "rc", "steps", "track_pos_rad", "track_vel_rad_s", "dtau_mean",
              "tau_mean", "force_err_n", "force_err_rel", "hold_slip_max_m", "hold_slip_final_m", "wall_s",
              "steps_clamped", "steps_impulse_bound"]


def arm(args) -> None:
    t0 = time.perf_counter()
    info = common.machine_info()
    jobs = []
    for mu in (100.0, 1.0):
        for c in CONTROLLERS:
            plans = (True, False) if c in ("id_lcp_inf", "id_lcp_mu", "id_qp_mu", "id_qp_inf") else (True,)
            for plan in plans:
                ov = {"controller.type": c, "contact.mu": mu, "controller.plan_unactuated": plan}
                jobs.append(((mu, c, plan), "id_arm_grasp", ov))
    rows = []
    for (mu, c, plan), r in common.run_many(jobs, workers=args.workers, timeout=args.timeout):
        s = r.summary or {}
        ctl = s.get("controller", {})
        slip = s.get("hold_slip_final_m")
        row = {"mu": mu, "controller": c, "plan": plan, "rc": r.rc, "steps": len(r.steps),
               "dropped": bool(r.rc not in (0, 1) or s.get("aborted") or slip is None or not slip < 0.01),
               "hold_slip_max_m": s.get("hold_slip_max_m"), "hold_slip_final_m": slip,
               "wall_s": s.get("wall_time_s")}
        controller_columns(row, c, ctl)
        rows.append(row)
    meta = {"command": common.command_line(), **info, "loadavg_after_1_5_15": list(os.getloadavg()),
            "script_wall_s": round(time.perf_counter() - t0, 1),
            "scene": "configs/id_arm_grasp.yaml (ne_lcp, dt 1 ms, move reference: hold 0.2 s, lift 3 cm in 0.5 s, 1 s)",
            "dropped_rule": "rc not in {0, 1}, aborted, or the box's final slip in the hand frame >= 1 cm",
            "mu_inf": "the mu = inf controllers assume controller.mu_inf = 10 (the scene's)"}
    csv_path = common.write_csv(args.out / "id_arm.csv", rows, ARM_FIELDS, meta)
    common.print_table(rows, ["mu", "controller", "plan", "dropped", "rc", "track_pos_rad", "track_vel_rad_s", "dtau_mean",
                              "tau_mean", "force_err_rel", "hold_slip_max_m", "hold_slip_final_m", "steps_clamped",
                              "steps_impulse_bound"])
    arm_plot(rows, args.out / "id_arm.png", meta)
    print(f"wrote {csv_path}", file=sys.stderr)


def arm_plot(rows, png: Path, meta) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 4, figsize=(19, 4.5))
    panels = [("track_pos_rad", "mean |joint error| [rad]"), ("dtau_mean", "E|dtau| [N m/s]"),
              ("force_err_rel", "normal force error vs simulator (rel.)"), ("hold_slip_max_m", "max box slip in the hand [m]")]
    x = np.arange(len(CONTROLLERS))
    for ax, (key, label) in zip(axes, panels):
        for i, mu in enumerate((100.0, 1.0)):
            vals = []
            for c in CONTROLLERS:
                v = [r[key] for r in rows if r["mu"] == mu and r["controller"] == c and r["plan"] and r[key] is not None]
                vals.append(max(v[0], 1e-12) if v else np.nan)
            ax.bar(x + (i - 0.5) * 0.4, vals, 0.4, label=f"mu = {mu:g}")
        ax.set_xticks(x)
        ax.set_xticklabels(CONTROLLERS, rotation=40, ha="right")
        ax.set_ylabel(label)
        ax.set_yscale("log")
        ax.grid(alpha=0.3, axis="y")
    axes[3].axhline(0.01, color="k", lw=0.8, ls="--")
    axes[0].legend(title="ground mu (with the box's plan)")
    fig.suptitle(f"ID controllers, grasping arm lifting a box 3 cm, NE-LCP 1 ms — {common.plot_stamp(meta)}", fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main()
