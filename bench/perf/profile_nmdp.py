#!/usr/bin/env python3
"""Cost of an NE-NMDP first-order (FOPGM) frame against NE-MDP on the spider jump.

Scene: configs/quadruped_spider.yaml, control.reference.type=jump (the scene of bench/paper/nmdp_table1.py
Fig. 6 / N10). Methods:
  NE-NMDP  integrator.type=nmdp_ne, integrator.pgm=fo, dt = 50 ms   (one frame = one step)
  NE-MDP   integrator.type=ne_mdp,                     dt = 5 ms    (one frame = 10 steps)
A "frame" is 50 ms of simulated time for both, so the ratio NE-NMDP / NE-MDP compares the cost of
equal simulated time (NE-MDP needs 10 of its 5 ms steps for one 50 ms frame).

Measured window: simulated time (T1, T2] = (0.5, 2.5] s, one whole 2 s jump cycle (crouch, push-off,
flight, landing, stand): frames 11-50 of NE-NMDP, steps 101-500 of NE-MDP.
  - instructions (valgrind --tool=callgrind, deterministic): Ir(run to T2) - Ir(run to T1), so
    start-up and output cancel; per frame and (NE-NMDP) per outer PGM iteration (steps.csv
    'iterations' sums the outer iterations of a frame's PGM calls);
  - phase breakdown: callgrind_annotate --inclusive=no (self cost; phases partition the total,
    inlined code counts in its caller), differenced the same way, each function mapped to one
    phase by name (PHASES below; the first match wins, 'rest' is what is left);
  - wall: the sum of steps.csv's wall_s over the window (start-up excluded), median of
    WALL_REPEATS plain runs -> frames per wall second.
Rows go to bench/results/nmdp_cost.csv under a label (default: the short commit); rows of other
labels are kept, so before/after sit in one file.

Usage: python3 bench/perf/profile_nmdp.py [--label L] [--binary build/bigstep] [--repeats 5]
"""
from __future__ import annotations

import argparse
import csv
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]  # siblings, bench/common.py
import common  # noqa: E402

WALL_REPEATS = 5
FRAME = 0.05        # simulated seconds per frame
T1, T2 = 0.5, 2.5   # measured window (one 2 s jump cycle)

# (name, overrides, dt)
METHODS = [
    ("ne_nmdp_fo", {"control.reference.type": "jump", "integrator.type": "nmdp_ne", "integrator.pgm": "fo"}, 0.05),
    ("ne_mdp", {"control.reference.type": "jump", "integrator.type": "ne_mdp"}, 0.005),
]

# phase -> regex on function names (self cost); the first matching phase takes the function
PHASES = [
    # Newton-Euler dynamics: RNEA for G (H theta_ddot + c + grad V), A's inertial part, K, g_K, Q_K
    ("dynamics", r"bigstep::(rnea|NmdpProblem::(ne_inertial_jacobian|kinetic|kinetic_derivatives|velocity_frames|"
                 r"link_velocity|K\()|moment_product|dof_act|mass_matrix|add_gravity_derivatives|"
                 r"NeSmoothStep|crba|composite)|bigstep::\(anonymous namespace\)::(apply|cross|moment_dual|dual_dot|operator[+*]|rnea_pass|inertia_apply)|"
                 r"PosePair"),
    ("kinematics", r"bigstep::(forward_kinematics|link_derivatives)|sincos|AngleAxis"),
    # contact set at theta_-, depths, contact Jacobians J_x, their second derivatives, B(theta)
    ("contacts", r"bigstep::(ContactSet|collide|contact_core|add_contact_point_hessian|point_jacobian|"
                 r"add_point_hessian|tangent_directions|NmdpProblem::(B\(|add_contact|add_dv|weighted_direction|"
                 r"update|set_step|contacts|normal_force)|mdp_columns|NeContacts)"),
    # dense LU of A (PartialPivLU), its rcond estimate, triangular solves (projection and S = -A^-1 B)
    ("dense_lu", r"(PartialPivLU|partial_lu|Pgm::lu_rcond|triangular_solve|trsm|permut|"
                 r"bigstep::(ldlt|cholesky|lu_)|LLT|llt_inplace)"),
    # Eigen's GEMM / GEMV / outer-product drivers and kernels (Q_K S, S^T Q_K S, rank-1 contact terms, QP products)
    ("eigen_products", r"Eigen::internal::(general_matrix_matrix_product|general_matrix_vector_product|gebp|gemm_pack|"
                  r"gemv|triangular_matrix_vector|selfadjoint|outer_product)"),
    # the dense active-set QP (search direction QP of NMDP, the impulse QP of NE-MDP)
    ("qp", r"bigstep::(QpWorkspace|.*qp_)"),
    ("pgm_rest", r"bigstep::Pgm::"),
    ("alloc_libc", r"(malloc|free|memcpy|memmove|memset|operator new|operator delete|_int_)"),
]


def callgrind(binary: Path, sets: dict, dt: float, t_end: float, tmp: Path):
    """Total Ir, self Ir per function, outer iterations and steps of a run to t_end."""
    tag = f"{t_end:g}"
    out, cg = tmp / f"out{tag}", tmp / f"cg{tag}"
    args = [str(binary), "run", str(common.config_path("quadruped_spider")), "--quiet", "--out", str(out)]
    for k, v in {**sets, "integrator.dt": dt, "integrator.duration": t_end, "metrics.stop_at_rest": False}.items():
        args += ["--set", f"{k}={common.fmt_value(v)}"]
    total, fn = common.callgrind(args, cg, inclusive=False)
    steps = common._read_steps(out / "steps.csv")
    return total, fn, sum(s["iterations"] for s in steps), len(steps)


def phase_of(name: str) -> str:
    for ph, rx in PHASES:
        if re.search(rx, name):
            return ph
    return "rest"


def wall(binary: Path, sets: dict, dt: float, repeats: int):
    """Median over repeats of the wall time of the steps in (T1, T2] (steps.csv), and their
    outer iterations and step count."""
    walls, its, n = [], 0, 0
    for _ in range(repeats):
        r = common.run_scene("quadruped_spider", {**sets, "integrator.dt": dt, "integrator.duration": T2,
                                                  "metrics.stop_at_rest": False}, binary=binary)
        window = [s for s in r.steps if T1 + 0.5 * dt < s["t"] <= T2 + 0.5 * dt]
        walls.append(sum(s["wall_s"] for s in window))
        its, n = sum(s["iterations"] for s in window), len(window)
    return sorted(walls)[len(walls) // 2], its, n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--label", default=common._git("rev-parse", "--short", "HEAD") or "local")
    ap.add_argument("--binary", type=Path, default=None)
    ap.add_argument("--repeats", type=int, default=WALL_REPEATS)
    ap.add_argument("--out", type=Path, default=common.RESULTS / "nmdp_cost.csv")
    a = ap.parse_args()
    if not shutil.which("valgrind"):
        raise SystemExit("valgrind not found (apt-get install valgrind)")
    binary = (a.binary or common.find_binary()).resolve()
    frames = round((T2 - T1) / FRAME)
    rows = []
    for name, sets, dt in METHODS:
        with tempfile.TemporaryDirectory(prefix="bigstep-nmdp-prof-") as tmp:
            t1, f1, i1, n1 = callgrind(binary, sets, dt, T1, Path(tmp))
            t2, f2, i2, n2 = callgrind(binary, sets, dt, T2, Path(tmp))
        dIr, dit = t2 - t1, i2 - i1
        ph = {p: 0 for p, _ in PHASES}
        ph["rest"] = 0
        for fname in set(f1) | set(f2):
            ph[phase_of(fname)] += f2.get(fname, 0) - f1.get(fname, 0)
        ph["rest"] += dIr - sum(ph.values())  # below callgrind_annotate's threshold
        ws, wit, wn = wall(binary, sets, dt, a.repeats)
        row = {"label": a.label, "method": name, "dt": dt, "window_s": f"{T1:g}-{T2:g}", "frames": frames,
               "steps": n2 - n1, "steps_per_frame": (n2 - n1) / frames,
               "outer_iterations_per_frame": dit / frames,
               "instructions_per_frame": round(dIr / frames),
               "instructions_per_outer_iteration": round(dIr / dit) if dit else "",
               "instructions_per_sim_s": round(dIr / (T2 - T1)),
               "frames_per_wall_s": frames / ws if ws > 0 else "",
               "wall_us_per_frame": 1e6 * ws / frames,
               "sim_s_per_wall_s": (T2 - T1) / ws if ws > 0 else "",
               "wall_steps": wn, "wall_outer_iterations": wit}
        for k, v in ph.items():
            row[f"{k}_per_frame"] = round(v / frames)
        rows.append(row)
        print(json.dumps(row), flush=True)
    by = {r["method"]: r for r in rows}
    ratio_ir = by["ne_nmdp_fo"]["instructions_per_frame"] / by["ne_mdp"]["instructions_per_frame"]
    ratio_wall = by["ne_nmdp_fo"]["wall_us_per_frame"] / by["ne_mdp"]["wall_us_per_frame"]
    for r in rows:
        r["ratio_nmdp_to_mdp_instructions"] = ratio_ir
        r["ratio_nmdp_to_mdp_wall"] = ratio_wall
    print(f"NE-NMDP / NE-MDP per 50 ms frame: instructions {ratio_ir:.2f}x, wall {ratio_wall:.2f}x", flush=True)
    fields = list(rows[0].keys())
    old = []
    if a.out.is_file():
        with a.out.open() as f:
            rd = csv.DictReader(f)
            fields += [k for k in rd.fieldnames or [] if k not in fields]
            old = [r for r in rd if r["label"] != a.label]
    meta_path = a.out.with_suffix(".meta.json")
    runs = json.loads(meta_path.read_text()).get("runs", []) if meta_path.is_file() else []
    runs = [r for r in runs if r.get("label") != a.label]
    runs.append({"label": a.label, "command": common.command_line(), **common.machine_info(binary)})
    common.write_csv(a.out, old + rows, fields, meta={
        "note": "spider jump (configs/quadruped_spider.yaml, control.reference.type=jump); frame = 50 ms of "
                "simulated time for both methods (NE-MDP: 10 steps of 5 ms), window t in (0.5, 2.5] s = one jump "
                "cycle = 40 frames; instructions: callgrind Ir(run to 2.5 s) - Ir(run to 0.5 s); phases: self "
                "cost (callgrind_annotate --inclusive=no) mapped by function name (bench/perf/profile_nmdp.py PHASES; "
                "inlined code counts in its caller); wall: sum of steps.csv wall_s over the window, median of the "
                "repeats, on a shared 2-core machine (noisy; instructions are the measure); ratio = NE-NMDP / "
                "NE-MDP per frame of equal simulated time",
        "runs": runs})


if __name__ == "__main__":
    main()
