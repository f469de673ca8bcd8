#!/usr/bin/env python3
"""The bench/README table of an id_tables CSV (bench/results/id_tables*.csv), as markdown.

Per terrain and controller: rc and clamped / bound steps per run (joined with / over the random
seeds), fell = runs that fell / runs, and the means over the runs that did not fall of |e_q|, |e_qd|,
E|dtau|, E|tau|, the relative force error, the torso's highest point and the distance.

  python3 bench/paper/id_tables_md.py bench/results/id_tables_ws.csv
  python3 bench/paper/id_tables_md.py --arm bench/results/id_arm.csv
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


def arm_table(path: str) -> str:
    """id_arm*.csv: one row per run (mu, controller, box plan)."""
    head = ("| mu | controller | box plan | rc | dropped | \\|e_q\\| rad | E\\|dtau\\| N m/s | E\\|tau\\| N m | force err | "
            "slip max m | clamped | bound |")
    lines = [head, "|" + "---|" * 12]

    def g(x: str) -> str:
        v = float(x)
        return f"{v:.3g}" if 0.1 <= abs(v) < 1e3 else f"{v:.1e}" if abs(v) < 0.1 else f"{v:.3g}"
    for r in csv.DictReader(open(path)):
        plan = "–" if r["controller"] in ("pd", "id_prev1", "id_prev2") else ("yes" if r["plan"] == "1" else "no")
        mu = r["mu"].rstrip("0").rstrip(".")
        lines.append("| " + " | ".join([
            mu, r["controller"], plan, r["rc"], "**yes**" if r["dropped"] == "1" else "no", f"{float(r['track_pos_rad']):.1e}",
            g(r["dtau_mean"]), g(r["tau_mean"]), f"{float(r['force_err_rel']):.1e}" if r["force_err_rel"] else "–",
            f"{float(r['hold_slip_max_m']):.1e}", r["steps_clamped"], r["steps_impulse_bound"]]) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--arm"]:
        print(arm_table(sys.argv[2]))
    else:
        print(table(sys.argv[1]))
