#!/usr/bin/env python3
"""Solver iterations per step against dt, per scene and bigstep variant, from `bigstep-bench accuracy` output.

A row per (scene, variant): iterations per step at each dt, "!" after a run that was not stable.

    python3 bench/perf/accuracy_iterations.py [bench/results/accuracy.csv] [--variants pbfd,pbfd_o2,...]
"""
import argparse
import csv


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="?", default="bench/results/accuracy.csv")
    ap.add_argument("--variants", default="pbfd,pbfd_c,pbfd_o2,pbfd_o2c")
    a = ap.parse_args(argv)
    want = a.variants.split(",")
    rows = [r for r in csv.DictReader(open(a.csv))
            if r["simulator"] == "bigstep" and r["role"] == "run" and r["variant"] in want]
    dts = sorted({float(r["dt"]) for r in rows}, reverse=True)
    print("| scene | variant | " + " | ".join(f"{d * 1000:g} ms" for d in dts) + " |")
    print("|---|---|" + "---:|" * len(dts))
    for sc in dict.fromkeys(r["scene"] for r in rows):
        for v in want:
            by_dt = {float(r["dt"]): r for r in rows if r["scene"] == sc and r["variant"] == v}
            if not by_dt:
                continue
            cells = []
            for d in dts:
                r = by_dt.get(d)
                if r is None or not r["iterations_per_step"]:
                    cells.append("")
                else:
                    cells.append(f"{float(r['iterations_per_step']):.1f}" + ("" if r["stable"] == "1" else "!"))
            print(f"| {sc} | {v} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
