#!/usr/bin/env python3
"""The bench/README table of an id_tables CSV (bench/results/id_tables*.csv), as markdown.

Per terrain and controller: rc and clamped / bound steps per run (joined with / over the random
seeds), fell = runs that fell / runs, and the means over the runs that did not fall of |e_q|, |e_qd|,
E|dtau|, E|tau|, the relative force error, the torso's highest point and the distance.

  python3 bench/id_tables_md.py bench/results/id_tables_ws.csv
"""
from __future__ import annotations

import csv
import sys
from collections import OrderedDict


def fmt(x: float, spec: str) -> str:
    return format(x, spec)


def table(path: str) -> str:
    groups: "OrderedDict[tuple[str, str], list[dict]]" = OrderedDict()
    for r in csv.DictReader(open(path)):
        groups.setdefault((r["terrain"], r["controller"]), []).append(r)
    head = ("| terrain | controller | rc | fell | \\|e_q\\| rad | \\|e_qd\\| rad/s | E\\|dtau\\| N m/s | E\\|tau\\| N m | "
            "force err | torso max m | distance m | clamped steps | bound steps |")
    lines = [head, "|" + "---|" * 13]
    for (terrain, ctrl), runs in groups.items():
        up = [r for r in runs if r["fell"] == "0"]
        join = lambda k: "/".join(r[k] for r in runs)  # noqa: E731

        def mean(k: str, spec: str) -> str:
            v = [float(r[k]) for r in up if r[k] != ""]
            return fmt(sum(v) / len(v), spec) if v else "–"
        ferr = mean("force_err_rel", ".3f")
        if ferr not in ("–",) and float(ferr) < 1e-3:
            v = [float(r["force_err_rel"]) for r in up if r["force_err_rel"] != ""]
            ferr = fmt(sum(v) / len(v), ".1e")
        lines.append("| " + " | ".join([
            terrain, ctrl, join("rc"), f"{len(runs) - len(up)}/{len(runs)}", mean("track_pos_rad", ".4f"),
            mean("track_vel_rad_s", ".3f"), mean("dtau_mean", ".0f"), mean("tau_mean", ".1f"), ferr,
            mean("height_max_m", ".3f"), mean("distance_final_m", ".3f"), join("steps_clamped"),
            join("steps_impulse_bound")]) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(sys.argv[1]))
