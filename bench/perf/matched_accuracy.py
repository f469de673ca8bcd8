#!/usr/bin/env python3
"""PBFD against MuJoCo at matched accuracy, from `bigstep-bench vs-mujoco` output (one core).

For every PBFD run of a scene: its COM error against bigstep's own fine reference, and the fastest
MuJoCo run of that scene whose error against MuJoCo's own fine reference is no larger (MuJoCo at least
as accurate). The ratio is PBFD's simulated seconds per CPU second over that MuJoCo run's. "bracketed":
some stable MuJoCo run of the scene is less accurate than the PBFD run, so the pair is matched; where
none is, even MuJoCo's coarsest stable run is more accurate and the ratio is speed at lower accuracy.

    python3 bench/perf/matched_accuracy.py [bench/results/vs_mujoco.csv]
"""
import csv
import sys


def matched(rows):
    one = [r for r in rows if r["threads"] == "1" and r["role"] == "run" and r["stable"] == "1"]
    out = []
    for p in (r for r in one if r["integrator"] == "pbfd"):
        err = float(p["com_err_max_m"])
        ok = [m for m in one if m["scene"] == p["scene"] and m["simulator"] == "mujoco"
              and float(m["com_err_max_m"]) <= err]
        m = max(ok, key=lambda m: float(m["sim_s_per_cpu_s"])) if ok else None
        ratio = float(p["sim_s_per_cpu_s"]) / float(m["sim_s_per_cpu_s"]) if m else None
        bracketed = any(m["scene"] == p["scene"] and m["simulator"] == "mujoco" and float(m["com_err_max_m"]) > err
                        for m in one)
        out.append((p["scene"], float(p["dt"]), err, float(p["sim_s_per_cpu_s"]), m and float(m["dt"]),
                    m and float(m["com_err_max_m"]), m and float(m["sim_s_per_cpu_s"]), ratio, bracketed))
    return out


def main(path="bench/results/vs_mujoco.csv"):
    with open(path) as f:
        rows = matched(list(csv.DictReader(f)))
    print("| scene | PBFD dt | PBFD COM err [m] | PBFD sim s / CPU s | MuJoCo dt | MuJoCo COM err [m] "
          "| MuJoCo sim s / CPU s | PBFD / MuJoCo | bracketed |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for sc, dt, err, sp, mdt, merr, msp, ratio, br in rows:
        mj = f"{mdt:g} | {merr:.4f} | {msp:.0f} | {ratio:.1f}x" if ratio else "- | - | - | -"
        print(f"| {sc} | {dt:g} | {err:.4f} | {sp:.0f} | {mj} | {'yes' if br else 'no'} |")


if __name__ == "__main__":
    main(*sys.argv[1:])
