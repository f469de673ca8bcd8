#!/usr/bin/env python3
"""NMDP paper (Pan & Hauser) Table I, Fig. 3 and Fig. 6 on the quadruped surrogates (docs/methods/nmdp.md §10, §11).

Scenes: configs/quadruped_spider.yaml and configs/quadruped_robosimian.yaml, motions
`control.reference.type=walk|jump`, 10 s each. Methods:
  NE-MDP      integrator.type=ne_mdp                         dt in {1, 2, 3, 4, 5} ms (paper range)
  PBD-NMDP    integrator.type=nmdp_pbd, integrator.pgm=fo    dt in {5, 10, ..., 50} ms
  NE-NMDP     integrator.type=nmdp_ne,  integrator.pgm=fo    dt in {5, 10, ..., 50} ms
  NE-ZONMDP   integrator.type=nmdp_ne,  integrator.pgm=zo    (Fig. 3 jump tilt, Fig. 6 cost)
  PBD-ZONMDP  integrator.type=nmdp_pbd, integrator.pgm=zo    (Fig. 6 cost)
plus NE-MDP at 6, 7, 8, 10, 15, 20 ms on the jump (oracle N1: stability limit ~7 ms).

Table I (spec §10): each run's quadruped.csv is resampled onto a 10 ms grid over [0, 10] s (linear
interpolation); at each grid time the standard deviation (numpy, ddof = 0) across the dt set is
taken, and averaged over the grid. Walk: distance_m along the heading; jump: torso COM height_m.
A run is excluded (and listed) when it timed out, exited non-zero, aborted, has
converged_fraction < 1, non-finite samples, stopped before 10 s, or "diverged" (torso tilt > 1.5 rad
or COM height outside [-0.5, 5] m).

Fig. 3: torso tilt vs time on the jump, one panel per method, one curve per dt (both robots).
Fig. 6: every frame at dt = 50 ms (spider jump and walk): outer PGM iterations per frame (FO vs ZO),
frame rate = 1 / wall_s of the frame from steps.csv, halvings; NE-MDP at its own dt (1 and 5 ms)
for the frame-rate comparison (N10).

Outputs (bench/results/, prefix nmdp_ or nmdp_quick_ with --quick):
  nmdp_table1.csv (+ .meta.json)   row_type=table: one row per robot/motion/method with our average
                                   std. dev. and the paper's; row_type=run: one row per run
  nmdp_fig3_tilt.png
  nmdp_fig6_cost.csv (+ .meta.json) row_type=summary per run, row_type=frame per frame
  nmdp_fig6_cost.png
Verdicts for oracles N1, N2, N4, N6, N7, N8, N9, N10 go to stdout and to the table's meta.

    python3 bench/paper/nmdp_table1.py [--quick] [--workers 2] [--timeout 600] [--cache DIR] [--replot]

--cache DIR keeps every run's output directory under DIR and reuses complete ones (same binary
path required; the meta records it); --replot only re-reads the cache (no new runs).
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import csv
import json
import math
import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]  # siblings, bench/common.py
import common  # noqa: E402

ROBOTS = {"spider": "quadruped_spider", "robosimian": "quadruped_robosimian"}
MOTIONS = ["walk", "jump"]
METRIC = {"walk": "distance_m", "jump": "height_m"}
METHODS = {  # key: (label, overrides)
    "ne_mdp": ("NE-MDP", {"integrator.type": "ne_mdp"}),
    "pbd_nmdp": ("PBD-NMDP", {"integrator.type": "nmdp_pbd", "integrator.pgm": "fo"}),
    "ne_nmdp": ("NE-NMDP", {"integrator.type": "nmdp_ne", "integrator.pgm": "fo"}),
    "ne_zonmdp": ("NE-ZONMDP", {"integrator.type": "nmdp_ne", "integrator.pgm": "zo"}),
    "pbd_zonmdp": ("PBD-ZONMDP", {"integrator.type": "nmdp_pbd", "integrator.pgm": "zo"}),
}
TABLE_METHODS = ["ne_mdp", "pbd_nmdp", "ne_nmdp"]
# spec §11 N8 (paper Table I): NE-MDP / PBD-NMDP / NE-NMDP
PAPER = {("robosimian", "walk"): (0.72, 0.25, 0.10), ("robosimian", "jump"): (0.26, 0.01, 0.02),
         ("spider", "walk"): (0.09, 0.09, 0.10), ("spider", "jump"): (0.13, 0.04, 0.05)}

FULL = {
    "duration": 10.0,
    "ne_mdp_dts": [0.001, 0.002, 0.003, 0.004, 0.005],
    "nmdp_dts": [round(0.005 * k, 3) for k in range(1, 11)],
    "ne_mdp_unstable_dts": [0.006, 0.007, 0.008, 0.01, 0.015, 0.02],
    "zo_fig3": {"spider": [0.005, 0.01, 0.02, 0.03, 0.04, 0.05], "robosimian": [0.03, 0.05]},
    "fig6_robot": "spider", "fig6_motions": ["jump", "walk"], "fig6_dt": 0.05,
}
QUICK = {
    "duration": 2.0,
    "ne_mdp_dts": [0.002, 0.005],
    "nmdp_dts": [0.02, 0.05],
    "ne_mdp_unstable_dts": [0.01],
    "zo_fig3": {"spider": [0.05]},
    "fig6_robot": "spider", "fig6_motions": ["jump"], "fig6_dt": 0.05,
}
GRID_DT = 0.01
TILT_DIVERGED = 1.5
HEIGHT_RANGE = (-0.5, 5.0)

TABLE_FIELDS = ["row_type", "robot", "motion", "metric", "method", "label", "dt", "dt_set", "n_runs",
                "n_excluded", "excluded_dts", "std_avg", "std_avg_30_50ms", "paper_std", "ratio_to_paper",
                "rc", "status", "note", "converged_fraction", "aborted", "steps", "t_end", "wall_time_s",
                "elapsed_s", "iterations_mean", "iterations_max", "substeps", "halvings", "frames_subdivided",
                "min_substep_s", "tilt_max_rad", "tilt_final_rad", "distance_final_m", "height_mean_m",
                "height_min_m", "height_max_m", "cycle_peak_height_spread_m", "command"]
FIG6_FIELDS = ["row_type", "robot", "motion", "method", "label", "dt", "frame", "t", "iterations", "status",
               "wall_s", "fps", "n_frames", "iterations_mean", "iterations_median", "iterations_max",
               "fps_median", "fps_mean_frames_per_wall_s", "realtime_factor", "halvings", "frames_subdivided",
               "substeps", "min_substep_s", "converged_fraction", "note"]


def job_key(robot, motion, method, dt, duration):
    return f"{robot}_{motion}_{method}_dt{dt * 1000:g}ms_T{duration:g}"


def build_jobs(P):
    jobs = {}

    def add(robot, motion, method, dt, tag):
        k = job_key(robot, motion, method, dt, P["duration"])
        if k not in jobs:
            ov = {"control.reference.type": motion, **METHODS[method][1], "integrator.dt": dt,
                  "integrator.duration": P["duration"]}
            jobs[k] = {"key": k, "robot": robot, "motion": motion, "method": method, "dt": dt,
                       "config": ROBOTS[robot], "overrides": ov, "tags": set()}
        jobs[k]["tags"].add(tag)

    for robot in ROBOTS:
        for motion in MOTIONS:
            for dt in P["ne_mdp_dts"]:
                add(robot, motion, "ne_mdp", dt, "table")
            for m in ("pbd_nmdp", "ne_nmdp"):
                for dt in P["nmdp_dts"]:
                    add(robot, motion, m, dt, "table")
        for dt in P["ne_mdp_unstable_dts"]:
            add(robot, "jump", "ne_mdp", dt, "n1")
    for robot, dts in P["zo_fig3"].items():
        for dt in dts:
            add(robot, "jump", "ne_zonmdp", dt, "fig3")
    r6, dt6 = P["fig6_robot"], P["fig6_dt"]
    for motion in P["fig6_motions"]:
        for m in ("ne_nmdp", "pbd_nmdp", "ne_zonmdp", "pbd_zonmdp"):
            add(r6, motion, m, dt6, "fig6")
        for dt in (P["ne_mdp_dts"][0], P["ne_mdp_dts"][-1]):
            add(r6, motion, "ne_mdp", dt, "fig6")
    return list(jobs.values())


def est_cost(j):  # rough seconds, only to start the long runs first
    per_frame = {"ne_mdp": 0.0001, "pbd_nmdp": 0.002, "ne_nmdp": 0.01, "ne_zonmdp": 0.3, "pbd_zonmdp": 0.3}
    return per_frame[j["method"]] * j["overrides"]["integrator.duration"] / j["dt"]


def run_job(j, cache: Path, binary: Path, timeout, replot):
    d = cache / j["key"]
    marker = d / "bench_run.json"
    if marker.is_file():
        m = json.loads(marker.read_text())
        if m.get("binary") == str(binary):
            return m, True
    if replot:
        return None, True
    if d.exists():
        shutil.rmtree(d)
    r = common.run_scene(j["config"], j["overrides"], timeout=timeout, binary=binary, keep_dir=d)
    m = {"rc": r.rc, "timed_out": r.timed_out, "elapsed_s": r.elapsed_s, "command": r.command,
         "stderr": r.stderr[-500:], "binary": str(binary)}
    d.mkdir(parents=True, exist_ok=True)
    marker.write_text(json.dumps(m, indent=1))
    return m, False


def load_run(j, m, cache: Path, duration):
    """Summary, quadruped series, steps and the exclusion status of one run."""
    d = cache / j["key"]
    out = {**j, "label": METHODS[j["method"]][0], "summary": {}, "series": None, "steps": [], "status": "ok",
           "note": ""}
    if m is None:
        out.update(status="missing", note="not run (--replot without a cached run)")
        return out
    out.update(rc=m["rc"], elapsed_s=m["elapsed_s"], command=m["command"])
    sp = d / "summary.json"
    if m.get("timed_out"):
        out.update(status="timeout", note=f"timed out after {m['elapsed_s']:.0f} s")
    if sp.is_file():
        try:
            out["summary"] = json.loads(sp.read_text())
        except json.JSONDecodeError as e:  # NaN written as nan etc.
            out["note"] += f" summary.json unreadable: {e}"
    out["steps"] = common._read_steps(d / "steps.csv")
    qp = d / "quadruped.csv"
    if qp.is_file():
        with qp.open() as f:
            rows = list(csv.DictReader(f))
        if rows:
            out["series"] = {k: np.array([float(r[k]) for r in rows]) for k in rows[0]}
    if out["status"] != "ok":
        return out
    s, ser = out["summary"], out["series"]
    reasons = []
    if m["rc"] not in (0,):
        reasons.append(f"rc={m['rc']}" + (f" ({m['stderr'][:120]})" if m.get("stderr") else ""))
    if not s:
        reasons.append("no summary.json")
    else:
        if s.get("aborted"):
            reasons.append("aborted")
        cf_ = s.get("converged_fraction")
        if not isinstance(cf_, (int, float)) or not math.isfinite(cf_) or cf_ < 1.0:
            reasons.append(f"converged_fraction={cf_}")
    if ser is None:
        reasons.append("no quadruped.csv")
    else:
        vals = np.concatenate([ser[k] for k in ("tilt_rad", "height_m", "distance_m")])
        if not np.all(np.isfinite(vals)):
            reasons.append("non-finite samples")
        if ser["t"][-1] < duration - 0.5 * j["dt"]:
            reasons.append(f"stopped at t={ser['t'][-1]:.3f}")
        fin = np.isfinite(ser["tilt_rad"])
        if fin.any() and np.nanmax(ser["tilt_rad"]) > TILT_DIVERGED:
            reasons.append(f"diverged (tilt {np.nanmax(ser['tilt_rad']):.2f} rad)")
        h = ser["height_m"][np.isfinite(ser["height_m"])]
        if len(h) and (h.min() < HEIGHT_RANGE[0] or h.max() > HEIGHT_RANGE[1]):
            reasons.append(f"diverged (height {h.min():.2f}..{h.max():.2f} m)")
    if reasons:
        out.update(status="excluded", note="; ".join(reasons))
    return out


def resample(run, metric, duration):
    grid = np.arange(0.0, duration + 0.5 * GRID_DT, GRID_DT)
    ser = run["series"]
    return np.interp(grid, ser["t"], ser[metric])


def cycle_peak_spread(run, duration):
    """Jump periodicity: max - min over the 2 s cycles of the per-cycle peak torso height."""
    ser = run["series"]
    if ser is None or run["motion"] != "jump" or duration < 4.0:
        return ""
    peaks = []
    for c in range(int(duration // 2.0)):
        sel = (ser["t"] >= 2.0 * c) & (ser["t"] < 2.0 * (c + 1))
        if sel.any():
            peaks.append(float(np.max(ser["height_m"][sel])))
    return float(max(peaks) - min(peaks)) if len(peaks) > 1 else ""


def std_avg(runs, metric, duration):
    if len(runs) < 2:
        return float("nan")
    a = np.vstack([resample(r, metric, duration) for r in runs])
    return float(np.mean(np.std(a, axis=0)))


def run_row(r, duration):
    s = r["summary"]
    row = {"row_type": "run", "robot": r["robot"], "motion": r["motion"], "metric": METRIC[r["motion"]],
           "method": r["method"], "label": r["label"], "dt": r["dt"], "rc": r.get("rc", ""),
           "status": r["status"], "note": r["note"].strip(), "elapsed_s": r.get("elapsed_s", ""),
           "command": r.get("command", ""),
           "t_end": float(r["series"]["t"][-1]) if r["series"] is not None else "",
           "cycle_peak_height_spread_m": cycle_peak_spread(r, duration)}
    for k in ("converged_fraction", "aborted", "steps", "wall_time_s", "iterations_mean", "iterations_max",
              "substeps", "halvings", "frames_subdivided", "min_substep_s", "tilt_max_rad", "tilt_final_rad",
              "distance_final_m", "height_mean_m", "height_min_m", "height_max_m"):
        row[k] = s.get(k, "")
    return row


def fmt(x, f=".3g"):
    if not isinstance(x, (int, float)) or isinstance(x, bool) or not math.isfinite(x):
        return "n/a"
    return format(x, f)


def analyse(runs, P, table_rows):
    """Verdict lines for N1, N2, N4, N6, N7, N8, N9, N10."""
    V = []
    by = {}
    for r in runs:
        by[(r["robot"], r["motion"], r["method"], r["dt"])] = r
    T = {(t["robot"], t["motion"], t["method"]): t for t in table_rows}
    ms = lambda dt: f"{dt * 1000:g}"  # noqa: E731

    # N1: NE-MDP jump stability limit and tilt
    for robot in ROBOTS:
        dts = sorted(dt for (rb, mo, me, dt) in by if rb == robot and mo == "jump" and me == "ne_mdp")
        if not dts:
            continue
        ok = [dt for dt in dts if by[(robot, "jump", "ne_mdp", dt)]["status"] == "ok"]
        bad = [dt for dt in dts if dt not in ok]
        tilts = [by[(robot, "jump", "ne_mdp", dt)]["summary"].get("tilt_max_rad") for dt in ok]
        stable_le7 = all(dt in ok for dt in dts if dt <= 0.007 + 1e-12)
        blows_above = bool(bad) and all(dt > 0.007 + 1e-12 for dt in bad) and \
            all(dt in bad for dt in dts if dt > 0.007 + 1e-12)
        V.append(f"N1 {robot}: NE-MDP jump valid at dt = {[ms(d) for d in ok]} ms, failed/diverged at "
                 f"{[ms(d) for d in bad]} ms; stable for all dt <= 7 ms: {'YES' if stable_le7 else 'NO'}; "
                 f"blows up for every tested dt > 7 ms: {'YES' if blows_above else 'NO'}; max torso tilt of the "
                 f"valid runs {fmt(max([t for t in tilts if isinstance(t, (int, float))], default=float('nan')))} rad "
                 f"(paper: strong tilt oscillation)")
        for dt in bad:
            V.append(f"    {robot} NE-MDP jump dt={ms(dt)} ms: {by[(robot, 'jump', 'ne_mdp', dt)]['note']}")
        # the symmetric jump keeps tilt at round-off unless the symmetric state is unstable
        broke = [(dt, by[(robot, "jump", "ne_mdp", dt)]["summary"].get("tilt_max_rad")) for dt in ok]
        broke = [(dt, t) for dt, t in broke if isinstance(t, (int, float)) and t > 1e-6]
        V.append(f"    {robot} NE-MDP jump symmetry lost (tilt_max > 1e-6 rad, ground truth 0) at: "
                 + (", ".join(f"{ms(dt)} ms ({t:.2g} rad)" for dt, t in broke) or "none"))
    # N2 (+N3 tilt part): NMDP jump tilt
    for robot in ROBOTS:
        for me in ("ne_nmdp", "pbd_nmdp", "ne_zonmdp"):
            rs = [r for (rb, mo, m2, dt), r in by.items() if rb == robot and mo == "jump" and m2 == me]
            if not rs:
                continue
            ok = [r for r in rs if r["status"] == "ok"]
            tilt = max([r["summary"].get("tilt_max_rad", float("nan")) for r in ok], default=float("nan"))
            tag = "N2" if me == "ne_nmdp" else "N3"
            V.append(f"{tag} {robot}: {METHODS[me][0]} jump valid in {len(ok)}/{len(rs)} runs "
                     f"(dt {ms(min(r['dt'] for r in rs))}-{ms(max(r['dt'] for r in rs))} ms); max torso tilt "
                     f"{fmt(tilt)} rad -> {'YES' if len(ok) == len(rs) and tilt < 0.1 else 'NO'} (stable, small tilt)")
    # N4: FO halvings vs ZO
    fo = [r for r in runs if r["method"] in ("ne_nmdp", "pbd_nmdp") and r["summary"]]
    zo = [r for r in runs if r["method"] in ("ne_zonmdp", "pbd_zonmdp") and r["summary"]]
    fo_h = sum(int(r["summary"].get("halvings", 0) or 0) for r in fo)
    fo_f = sum(int(r["summary"].get("frames_subdivided", 0) or 0) for r in fo)
    fo_n = sum(int(r["summary"].get("steps", 0) or 0) for r in fo)
    fo_sub = [r for r in fo if (r["summary"].get("frames_subdivided") or 0) > 0]
    zo_h = sum(int(r["summary"].get("halvings", 0) or 0) for r in zo)
    zo_f = sum(int(r["summary"].get("frames_subdivided", 0) or 0) for r in zo)
    zo_n = sum(int(r["summary"].get("steps", 0) or 0) for r in zo)
    rare = fo_n > 0 and fo_f / fo_n < 0.01
    fewer = zo_n == 0 or (fo_f / max(fo_n, 1)) < 0.1 * (zo_f / max(zo_n, 1))
    V.append(f"N4: FOPGM (NE and PBD, {len(fo)} runs, dt 5-50 ms): {fo_f} of {fo_n} frames subdivided, "
             f"{fo_h} halvings; ZOPGM ({len(zo)} runs): {zo_f} of {zo_n} frames subdivided, {zo_h} halvings -> "
             f"rare (<1% of frames): {'YES' if rare else 'NO'}; far fewer than ZO (<1/10 the rate): "
             f"{'YES' if fewer else 'NO'}")
    for r in fo_sub:
        s = r["summary"]
        V.append(f"    FO subdivided: {r['robot']} {r['motion']} {r['label']} dt={ms(r['dt'])} ms: "
                 f"{s.get('frames_subdivided')} frames, {s.get('halvings')} halvings, min substep "
                 f"{fmt(s.get('min_substep_s'))} s")
    for r in zo:
        s = r["summary"]
        V.append(f"    ZO: {r['robot']} {r['motion']} {r['label']} dt={ms(r['dt'])} ms: {s.get('frames_subdivided')}/"
                 f"{s.get('steps')} frames subdivided, {s.get('halvings')} halvings, min substep "
                 f"{fmt(s.get('min_substep_s'))} s, {fmt(s.get('iterations_mean'))} outer it/frame")
    # N6: jump height consistency + periodicity
    for robot in ROBOTS:
        t = {me: T.get((robot, "jump", me)) for me in TABLE_METHODS}
        if not all(t.values()):
            continue
        sp = {me: [r["cycle_peak_height_spread_m"] for r in runs_rows_cache if r["robot"] == robot and
                   r["motion"] == "jump" and r["method"] == me and r["status"] == "ok" and
                   isinstance(r["cycle_peak_height_spread_m"], float) and r["tag_table"]]
              for me in TABLE_METHODS}
        e, p, n = (t[me]["std_avg"] for me in TABLE_METHODS)
        verdict = all(math.isfinite(x) for x in (e, p, n)) and e > p and e > n
        V.append(f"N6 {robot} jump: height std across dt NE-MDP {fmt(e)} m vs PBD-NMDP {fmt(p)} m, NE-NMDP {fmt(n)} m "
                 f"-> NMDP more consistent: {'YES' if verdict else 'NO'}; cycle-to-cycle spread of the peak height "
                 "(max over dt) " + ", ".join(f"{METHODS[me][0]} {fmt(max(sp[me], default=float('nan')))} m"
                                              for me in TABLE_METHODS))
    # N7: walk spread, NMDP at 30-50 ms
    for robot in ROBOTS:
        t = {me: T.get((robot, "walk", me)) for me in TABLE_METHODS}
        if not all(t.values()):
            continue
        e = t["ne_mdp"]["std_avg"]
        p, n = t["pbd_nmdp"]["std_avg_30_50ms"], t["ne_nmdp"]["std_avg_30_50ms"]
        pa, na = t["pbd_nmdp"]["std_avg"], t["ne_nmdp"]["std_avg"]
        okv = lambda *xs: all(isinstance(x, float) and math.isfinite(x) for x in xs)  # noqa: E731
        v1 = okv(e, n) and n < e
        v2 = okv(p, n) and p <= n
        V.append(f"N7 {robot} walk: distance std NE-MDP (1-5 ms) {fmt(e)} m; NE-NMDP {fmt(n)} m (30-50 ms; "
                 f"{fmt(na)} over all dts); PBD-NMDP {fmt(p)} m (30-50 ms; {fmt(pa)}) -> NE-NMDP tighter than "
                 f"NE-MDP: {'YES' if v1 else 'NO'}; PBD-NMDP tightest: {'YES' if v2 else 'NO'}")
    # N8: Table I orderings
    for (robot, motion), factor in ((("robosimian", "walk"), 1.0), (("robosimian", "jump"), 10.0),
                                    (("spider", "jump"), 2.0)):
        t = {me: T.get((robot, motion, me)) for me in TABLE_METHODS}
        if not all(t.values()):
            continue
        e, p, n = (t[me]["std_avg"] for me in TABLE_METHODS)
        fin = all(math.isfinite(x) for x in (e, p, n))
        v = fin and e > factor * p and e > factor * n
        V.append(f"N8 {robot} {motion}: NE-MDP {fmt(e)} vs PBD-NMDP {fmt(p)}, NE-NMDP {fmt(n)} "
                 f"(ratios {fmt(e / p if fin and p else float('nan'))}x, {fmt(e / n if fin and n else float('nan'))}x); "
                 f"claim NE-MDP > {factor:g}x both NMDP: {'YES' if v else 'NO'}")
    t = {me: T.get(("spider", "walk", me)) for me in TABLE_METHODS}
    if all(t.values()):
        xs = [t[me]["std_avg"] for me in TABLE_METHODS]
        fin = all(math.isfinite(x) for x in xs)
        ratio = max(xs) / min(xs) if fin and min(xs) > 0 else float("nan")
        V.append(f"N8 spider walk: NE-MDP {fmt(xs[0])}, PBD-NMDP {fmt(xs[1])}, NE-NMDP {fmt(xs[2])}; max/min "
                 f"{fmt(ratio)}; claim all within +-20% (max/min <= 1.2): {'YES' if fin and ratio <= 1.2 else 'NO'}")
    # N9 at every dt with a ZO run: ZO / FO outer iterations (spec: ~10x at 50 ms, comparable at 5 ms)
    for (rb, mo, me, dt), b in sorted(by.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][3])):
        if me != "ne_zonmdp" or not b["summary"]:
            continue
        a = by.get((rb, mo, "ne_nmdp", dt))
        if a and a["summary"]:
            ia, ib = a["summary"]["iterations_mean"], b["summary"]["iterations_mean"]
            V.append(f"N9 {rb} {mo} dt={ms(dt)} ms: outer iterations/frame NE-NMDP {ia:.1f}, NE-ZONMDP {ib:.1f} "
                     f"(ratio {ib / ia:.1f}x)")
    # N9, N10: Fig. 6 runs
    r6, dt6 = P["fig6_robot"], P["fig6_dt"]
    for motion in P["fig6_motions"]:
        for fo_m, zo_m in (("ne_nmdp", "ne_zonmdp"), ("pbd_nmdp", "pbd_zonmdp")):
            a, b = by.get((r6, motion, fo_m, dt6)), by.get((r6, motion, zo_m, dt6))
            if not (a and b and a["summary"] and b["summary"]):
                continue
            ia, ib = a["summary"]["iterations_mean"], b["summary"]["iterations_mean"]
            V.append(f"N9 {r6} {motion} dt={ms(dt6)} ms: mean outer iterations/frame {a['label']} {ia:.1f}, "
                     f"{b['label']} {ib:.1f} (ratio {ib / ia:.1f}x) -> about an order of magnitude "
                     f"(ratio >= 3): {'YES' if ib / ia >= 3 else 'NO (flag)'}")
        fps = {}
        for key in [("ne_mdp", d) for d in (P["ne_mdp_dts"][0], P["ne_mdp_dts"][-1])] + \
                   [(m, dt6) for m in ("ne_nmdp", "pbd_nmdp", "ne_zonmdp", "pbd_zonmdp")]:
            r = by.get((r6, motion, *key))
            if r and r["steps"]:
                fps[key] = (float(np.median([1.0 / max(s["wall_s"], 1e-9) for s in r["steps"]])),
                            r["summary"].get("sim_time_s", 0.0) / max(r["summary"].get("wall_time_s", 1e-9), 1e-9))
        if fps:
            e5 = fps.get(("ne_mdp", P["ne_mdp_dts"][-1]))
            fo_ = fps.get(("ne_nmdp", dt6))
            zo_ = fps.get(("ne_zonmdp", dt6))
            desc = "; ".join(f"{METHODS[k[0]][0]}@{ms(k[1])}ms {v[0]:.0f} fps (real-time x{v[1]:.1f})"
                             for k, v in fps.items())
            verdict = ""
            if e5 and fo_ and zo_:
                hi = all(e5[0] >= v[0] for k, v in fps.items() if k[0] != "ne_mdp")
                verdict = (f" -> NE-MDP@{ms(P['ne_mdp_dts'][-1])}ms highest frame rate: {'YES' if hi else 'NO'}; "
                           f"NE-NMDP/NE-MDP = {fo_[0] / e5[0]:.4f} ('not much lower' if >= 0.5: "
                           f"{'YES' if fo_[0] / e5[0] >= 0.5 else 'NO'}); NE-ZONMDP/NE-NMDP = {zo_[0] / fo_[0]:.4f} "
                           f"(clearly lower if < 0.5: {'YES' if zo_[0] / fo_[0] < 0.5 else 'NO'})")
            V.append(f"N10 {r6} {motion}: median frame rate (1/wall_s per frame): {desc}{verdict}")
    return V


runs_rows_cache: list = []


def plot_fig3(runs, png: Path, meta):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    cols = ["ne_mdp", "ne_nmdp", "pbd_nmdp", "ne_zonmdp"]
    robots = [rb for rb in ROBOTS if any(r["robot"] == rb and r["motion"] == "jump" for r in runs)]
    fig, axes = plt.subplots(len(robots), len(cols), figsize=(4.3 * len(cols), 3.4 * len(robots)),
                             squeeze=False, sharey=True)
    for i, rb in enumerate(robots):
        for j, me in enumerate(cols):
            ax = axes[i, j]
            rs = sorted((r for r in runs if r["robot"] == rb and r["motion"] == "jump" and r["method"] == me
                         and r["series"] is not None), key=lambda r: r["dt"])
            cmap = plt.get_cmap("viridis")
            for k, r in enumerate(rs):
                ser = r["series"]
                y = np.where(np.isfinite(ser["tilt_rad"]), np.maximum(np.abs(ser["tilt_rad"]), 1e-17), np.nan)
                bad = r["status"] != "ok"
                ax.plot(ser["t"], y, "--" if bad else "-", lw=0.9, color=cmap(k / max(len(rs) - 1, 1)),
                        label=f"{r['dt'] * 1000:g} ms" + (" (excl.)" if bad else ""))
            ax.set_yscale("log")
            ax.set_title(f"{rb} jump: {METHODS[me][0]}", fontsize=9)
            ax.grid(True, which="major", alpha=0.3)
            if rs:
                ax.legend(fontsize=6, ncol=2, loc="upper left")
            if j == 0:
                ax.set_ylabel("torso tilt [rad] (log, floor 1e-17)")
            if i == len(robots) - 1:
                ax.set_xlabel("t [s]")
    fig.suptitle("NMDP Fig. 3 reproduction: torso tilt on the jump (ground truth 0; dashed = excluded run)\n"
                 f"{meta['cpu']}, git {meta['git_commit'][:10]}{' (dirty)' if meta['git_dirty'] else ''}, "
                 f"{meta['date']}", fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


def plot_fig6(runs, P, png: Path, meta):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    r6, dt6 = P["fig6_robot"], P["fig6_dt"]
    motions = P["fig6_motions"]
    fig, axes = plt.subplots(len(motions), 3, figsize=(15, 3.8 * len(motions)), squeeze=False)
    col = {"ne_mdp": "tab:gray", "ne_nmdp": "tab:blue", "pbd_nmdp": "tab:green", "ne_zonmdp": "tab:red",
           "pbd_zonmdp": "tab:orange"}
    for i, motion in enumerate(motions):
        sel = [r for r in runs if r["robot"] == r6 and r["motion"] == motion and r["steps"] and "fig6" in r["tags"]]
        ax_f, ax_i, ax_t = axes[i]
        allfps = np.concatenate([[1.0 / max(s["wall_s"], 1e-9) for s in r["steps"]] for r in sel]) if sel else [1, 10]
        bins = np.logspace(np.floor(np.log10(max(min(allfps), 1e-3))), np.ceil(np.log10(max(allfps))), 40)
        for r in sorted(sel, key=lambda r: (r["method"], r["dt"])):
            fps = [1.0 / max(s["wall_s"], 1e-9) for s in r["steps"]]
            ls = ":" if r["method"] == "ne_mdp" and r["dt"] == P["ne_mdp_dts"][0] else "-"
            ax_f.hist(fps, bins=bins, histtype="step", color=col[r["method"]], ls=ls, lw=1.3,
                      label=f"{r['label']} {r['dt'] * 1000:g} ms")
            if r["method"] != "ne_mdp":
                it = [s["iterations"] for s in r["steps"]]
                ax_i.hist(it, bins=np.logspace(0, np.log10(max(max(it), 2) * 1.2), 35), histtype="step",
                          color=col[r["method"]], lw=1.3, ls="--" if r["method"].startswith("pbd") else "-",
                          label=f"{r['label']} (mean {np.mean(it):.0f}, halvings {r['summary'].get('halvings', '?')})")
                ax_t.plot([s["t"] for s in r["steps"]], it, lw=0.8, color=col[r["method"]], label=r["label"],
                          ls="--" if r["method"].startswith("pbd") else "-")
        ax_f.set_xscale("log")
        ax_f.set_yscale("log")
        ax_f.set_xlabel("frame rate [frames / wall s] (1 / wall_s per frame)")
        ax_f.set_ylabel("frames (log)")
        ax_f.set_title(f"{r6} {motion}: frame rate (NMDP at {dt6 * 1000:g} ms)", fontsize=9)
        ax_i.set_xscale("log")
        ax_i.set_xlabel("outer PGM iterations per frame")
        ax_i.set_title(f"{r6} {motion}: outer iterations, dt = {dt6 * 1000:g} ms", fontsize=9)
        ax_t.set_yscale("log")
        ax_t.set_xlabel("t [s]")
        ax_t.set_ylabel("outer iterations")
        ax_t.set_title("outer iterations per frame over time", fontsize=9)
        for a in (ax_f, ax_i, ax_t):
            a.grid(True, which="major", alpha=0.3)
            a.legend(fontsize=6)
    fig.suptitle("NMDP Fig. 6 reproduction: cost at dt = 50 ms (FOPGM vs ZOPGM; NE-MDP at its own dt)\n"
                 f"{meta['cpu']}, 2 runs in parallel, git {meta['git_commit'][:10]}"
                 f"{' (dirty)' if meta['git_dirty'] else ''}, {meta['date']}", fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smoke test: 2 s runs, few dts (outputs nmdp_quick_*)")
    ap.add_argument("--nmdp-dts", default=None, help="comma-separated NMDP dts [s] (default 0.005..0.05 step 0.005)")
    ap.add_argument("--workers", type=int, default=2, help="parallel runs (at most 2)")
    ap.add_argument("--timeout", type=float, default=600.0, help="per-run limit [s]")
    ap.add_argument("--cache", type=Path, default=None,
                    help="keep/reuse run directories here (default: a temporary directory, deleted)")
    ap.add_argument("--replot", action="store_true", help="no runs: read --cache only")
    ap.add_argument("--out", type=Path, default=common.RESULTS)
    args = ap.parse_args()
    P = dict(QUICK if args.quick else FULL)
    if args.nmdp_dts:
        P["nmdp_dts"] = [float(x) for x in args.nmdp_dts.split(",") if x.strip()]
    prefix = "nmdp_quick_" if args.quick else "nmdp_"
    if args.replot and not args.cache:
        raise SystemExit("--replot needs --cache")

    binary = common.find_binary()
    info = common.machine_info(binary)
    jobs = build_jobs(P)
    tmp = None
    if args.cache:
        cache = args.cache
        cache.mkdir(parents=True, exist_ok=True)
    else:
        import tempfile
        tmp = tempfile.TemporaryDirectory(prefix="nmdp-table1-")
        cache = Path(tmp.name)
    order = sorted(jobs, key=est_cost, reverse=True)  # long runs first: better packing on 2 workers
    print(f"nmdp_table1: {len(jobs)} runs ({'quick' if args.quick else 'full'}) with {binary}", file=sys.stderr)
    t0 = time.perf_counter()
    metas = {}
    n_cached = 0
    workers = max(1, min(args.workers, common.MAX_WORKERS))
    with cf.ThreadPoolExecutor(max_workers=workers) as ex:
        futs = {ex.submit(run_job, j, cache, binary, args.timeout, args.replot): j for j in order}
        for done, fut in enumerate(cf.as_completed(futs), 1):
            j = futs[fut]
            m, cached = fut.result()
            n_cached += int(cached)
            metas[j["key"]] = m
            tag = "missing" if m is None else ("TIMEOUT" if m["timed_out"] else f"rc={m['rc']}")
            print(f"  [{done:>3}/{len(jobs)}] {time.perf_counter() - t0:7.1f}s  {j['key']}  {tag}"
                  f"{' (cached)' if cached else ''}  ({(m or {}).get('elapsed_s', 0):.1f}s)", file=sys.stderr, flush=True)
    total_s = time.perf_counter() - t0

    runs = [load_run(j, metas[j["key"]], cache, P["duration"]) for j in jobs]
    global runs_rows_cache
    run_rows = []
    for r in runs:
        row = run_row(r, P["duration"])
        row["tag_table"] = "table" in r["tags"]
        run_rows.append(row)
    runs_rows_cache = run_rows

    table_rows = []
    for robot in ROBOTS:
        for motion in MOTIONS:
            for k, me in enumerate(TABLE_METHODS):
                dset = P["ne_mdp_dts"] if me == "ne_mdp" else P["nmdp_dts"]
                rs = [r for r in runs if r["robot"] == robot and r["motion"] == motion and r["method"] == me
                      and r["dt"] in dset]
                ok = [r for r in rs if r["status"] == "ok"]
                exc = [r for r in rs if r["status"] != "ok"]
                s = std_avg(ok, METRIC[motion], P["duration"])
                s3 = ""
                if me != "ne_mdp":
                    ok3 = [r for r in ok if r["dt"] >= 0.03 - 1e-9]
                    s3 = std_avg(ok3, METRIC[motion], P["duration"]) if len(ok3) >= 2 else ""
                paper = PAPER[(robot, motion)][k]
                table_rows.append({
                    "row_type": "table", "robot": robot, "motion": motion, "metric": METRIC[motion], "method": me,
                    "label": METHODS[me][0], "dt_set": " ".join(f"{d * 1000:g}" for d in dset) + " ms",
                    "n_runs": len(ok), "n_excluded": len(exc),
                    "excluded_dts": " ".join(f"{r['dt'] * 1000:g}ms({r['note'] or r['status']})" for r in exc),
                    "std_avg": s, "std_avg_30_50ms": s3, "paper_std": paper,
                    "ratio_to_paper": s / paper if math.isfinite(s) else "",
                    "note": "" if not exc else "excluded runs are not in the std. dev."})
    verdicts = analyse(runs, P, table_rows)

    # Fig. 6 CSV
    fig6_rows = []
    r6, dt6 = P["fig6_robot"], P["fig6_dt"]
    for r in runs:
        if "fig6" not in r["tags"] or not r["steps"]:
            continue
        s = r["summary"]
        it = [st["iterations"] for st in r["steps"]]
        fps = [1.0 / max(st["wall_s"], 1e-9) for st in r["steps"]]
        base = {"robot": r["robot"], "motion": r["motion"], "method": r["method"], "label": r["label"], "dt": r["dt"]}
        fig6_rows.append({"row_type": "summary", **base, "n_frames": len(it), "iterations_mean": float(np.mean(it)),
                          "iterations_median": float(np.median(it)), "iterations_max": int(max(it)),
                          "fps_median": float(np.median(fps)),
                          "fps_mean_frames_per_wall_s": len(it) / max(sum(st["wall_s"] for st in r["steps"]), 1e-9),
                          "realtime_factor": s.get("sim_time_s", 0.0) / max(s.get("wall_time_s", 1e-9), 1e-9),
                          "halvings": s.get("halvings", ""), "frames_subdivided": s.get("frames_subdivided", ""),
                          "substeps": s.get("substeps", ""), "min_substep_s": s.get("min_substep_s", ""),
                          "converged_fraction": s.get("converged_fraction", ""), "note": r["note"].strip()})
        if r["method"] != "ne_mdp":  # NE-MDP frames: summary only (up to 10000 rows per run)
            for st, f in zip(r["steps"], fps):
                fig6_rows.append({"row_type": "frame", **base, "frame": st["step"], "t": st["t"],
                                  "iterations": st["iterations"], "status": st["status"], "wall_s": st["wall_s"],
                                  "fps": f})

    what = (f"robots {list(ROBOTS)}, motions {MOTIONS}, duration {P['duration']} s; NE-MDP dt "
            f"{[d * 1000 for d in P['ne_mdp_dts']]} ms; PBD-NMDP and NE-NMDP (FOPGM) dt "
            f"{[round(d * 1000, 3) for d in P['nmdp_dts']]} ms; NE-MDP jump stability dts "
            f"{[d * 1000 for d in P['ne_mdp_unstable_dts']]} ms; NE-ZONMDP jump (Fig. 3) "
            f"{ {k: [d * 1000 for d in v] for k, v in P['zo_fig3'].items()} } ms; Fig. 6: {r6} "
            f"{P['fig6_motions']} at {dt6 * 1000:g} ms with NE/PBD FO and ZO + NE-MDP at "
            f"{P['ne_mdp_dts'][0] * 1000:g} and {P['ne_mdp_dts'][-1] * 1000:g} ms")
    meta = {"command": common.command_line(), **info, "loadavg_after_1_5_15": list(os.getloadavg()),
            "mode": "quick" if args.quick else "full", "what_was_run": what, "n_runs": len(jobs),
            "n_runs_reused_from_cache": n_cached, "cache": str(args.cache) if args.cache else None,
            "script_wall_s": round(total_s, 1), "workers": workers, "timeout_s": args.timeout,
            "std_definition": "each run's quadruped.csv resampled (np.interp) onto t = 0, 0.01, ..., duration; "
                              "np.std (ddof=0) across the dt set at each t; mean over the grid. walk: distance_m, "
                              "jump: height_m. std_avg_30_50ms: the same over NMDP dt >= 30 ms only (Fig. 5 set)",
            "exclusion_rule": f"rc != 0, timeout, aborted, converged_fraction < 1, non-finite, t_end < duration, "
                              f"tilt > {TILT_DIVERGED} rad or height outside {HEIGHT_RANGE} m",
            "paper_table1": {f"{k[0]} {k[1]}": dict(zip(["NE-MDP", "PBD-NMDP", "NE-NMDP"], v)) for k, v in PAPER.items()},
            "verdicts": verdicts}
    meta["sum_run_elapsed_s"] = round(sum((metas[j["key"]] or {}).get("elapsed_s", 0.0) for j in jobs), 1)
    prev = args.out / f"{prefix}table1.meta.json"
    if n_cached and prev.is_file():  # some runs came from --cache: keep the history of the invocations
        pm = json.loads(prev.read_text())
        meta["previous_invocation"] = {k: pm.get(k) for k in (
            "date", "command", "n_runs", "n_runs_reused_from_cache", "script_wall_s", "loadavg_1_5_15",
            "loadavg_after_1_5_15", "git_commit", "previous_invocation")}
    args.out.mkdir(parents=True, exist_ok=True)
    tcsv = common.write_csv(args.out / f"{prefix}table1.csv", table_rows + run_rows, TABLE_FIELDS, meta)
    meta6 = {k: v for k, v in meta.items() if k not in ("verdicts", "paper_table1", "std_definition", "exclusion_rule")}
    meta6["verdicts"] = [v for v in verdicts if v.startswith(("N4", "N9", "N10", "    ZO", "    FO"))]
    meta6["fps_definition"] = ("fps = 1 / wall_s of the frame (steps.csv); runs 2 at a time on a shared 2-core box, "
                               "so absolute times are noisy (+-30 %)")
    f6csv = common.write_csv(args.out / f"{prefix}fig6_cost.csv", fig6_rows, FIG6_FIELDS, meta6)
    plot_fig3(runs, args.out / f"{prefix}fig3_tilt.png", meta)
    plot_fig6(runs, P, args.out / f"{prefix}fig6_cost.png", meta)

    print("\nTable I: average std. dev. across dt (ours vs paper)")
    common.print_table(table_rows, ["robot", "motion", "label", "dt_set", "n_runs", "n_excluded", "std_avg",
                                    "std_avg_30_50ms", "paper_std"],
                       {"std_avg": ".4f", "std_avg_30_50ms": ".4f", "paper_std": ".2f"})
    exc = [r for r in run_rows if r["status"] != "ok"]
    if exc:
        print("\nexcluded / failed runs:")
        for r in exc:
            print(f"  {r['robot']} {r['motion']} {r['label']} dt={r['dt'] * 1000:g} ms: {r['status']}: {r['note']}\n"
                  f"    {r['command']}")
    print("\nFig. 6 summary:")
    common.print_table([r for r in fig6_rows if r["row_type"] == "summary"],
                       ["motion", "label", "dt", "n_frames", "iterations_mean", "iterations_max", "fps_median",
                        "realtime_factor", "halvings", "frames_subdivided", "min_substep_s"],
                       {"iterations_mean": ".1f", "fps_median": ".1f", "realtime_factor": ".2f"})
    print("\nverdicts:")
    for v in verdicts:
        print("  " + v)
    print(f"\nwrote {tcsv}\n      {f6csv}\n      {args.out / (prefix + 'fig3_tilt.png')}\n"
          f"      {args.out / (prefix + 'fig6_cost.png')}\n(total {total_s:.1f} s)")
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
