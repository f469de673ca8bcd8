#!/usr/bin/env python3
"""Cost of one PBFD step, per LM iteration and per simulated second.

For each scene (floating chain in contact, PBFD JTJ-LM at dt 0.05 with C_par = 5e4/dt; spider
quadruped, PBFD at dt 0.02):
  - instructions (valgrind --tool=callgrind, deterministic): Ir(N2 steps) - Ir(N1 steps), so the
    start-up and output cancel, divided by the LM iterations of those N2 - N1 steps (steps.csv)
    and by their simulated time;
  - the phase breakdown: callgrind_annotate --inclusive=yes of both runs, differenced per
    function and summed into phases (FK, link derivatives, inertia terms, contact set / collide,
    point Jacobians, point Hessians, dense algebra); 'rest' is what the phases leave of the total;
  - wall time per LM iteration and per simulated second (plain runs: steps.csv's per-step wall_s
    summed over the same steps, median of WALL_REPEATS runs; start-up is excluded).
Rows go to bench/results/step_cost.csv under a label (default: the short commit); rows of other
labels are kept, so before/after sit in one file.

--engine team measures the team engine instead (batch.engine: team, the CPU emulation of the
CUDA algorithm, solvers/pbd/pbd_step_team.h): two identical rollouts (no perturbation) on one thread,
so the iterations are the reference's; the LM iterations come from rollouts.csv and the wall
time from summary.json (wall_time_s at N2 steps minus at N1 steps, medians); its rows carry
engine = team and the label suffix "-team".

--integrator pbd measures PBD (Eq. 6, exact-Hessian LM: integrator.type pbd, optimizer lm) on the
same scenes and steps instead of PBFD; its rows carry the label suffix "-pbd" (reference engine only:
the team form is PBFD's).

Usage: python3 bench/perf/profile_step.py [--label L] [--binary build/bigstep] [--engine reference|team]
                                     [--integrator pbfd|pbd]
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

WALL_REPEATS = 15

# (name, config, dt, overrides, N1, N2): the steps N1+1 .. N2 are measured. The floating chain
# falls from 1 m and lands in step 9 at dt 0.05: steps 9-20 are the landing and settling, all in
# contact (steps 21+ are at rest, 0-6 iterations). C_par = 5e4 / dt (the config's rule).
SCENES = [
    ("chain_floating_ground", "chain_floating_ground", 0.05,
     {"integrator.type": "pbfd", "integrator.optimizer": "jtj_lm", "contact.c_par": 5e4 / 0.05}, 8, 20),
    ("quadruped_spider", "quadruped_spider", 0.02, {"integrator.type": "pbfd"}, 10, 30),
]

# integrator -> the overrides that select it (on top of the scene's)
INTEGRATORS = {"pbfd": {}, "pbd": {"integrator.type": "pbd", "integrator.optimizer": "lm"}}

# phase -> regex on callgrind_annotate's function names; the phases do not nest in one another
PHASES = [
    ("fk", r"bigstep::forward_kinematics\("),
    ("link_derivatives", r"bigstep::link_derivatives\("),
    ("inertia", r"bigstep::(add_inertia_gradient|add_inertia_hessian|inertia_value)\("),
    # the subtree moments (core/composite_moments.h, from 1742ce5): inertia + gravity per link
    # (begin), the per-DOF read-out of r and J_r (finish), the world contacts' J^T K J (stiffness)
    ("moments_begin", r"bigstep::begin_moments\("),
    ("moments_finish", r"bigstep::finish_moments\("),
    ("point_stiffness", r"bigstep::add_point_stiffness\("),
    ("gravity", r"bigstep::(add_gravity_derivatives|gravity_value)\("),
    ("collide", r"bigstep::ContactSet::update\("),
    ("point_jacobians", r"bigstep::point_jacobian\("),
    ("point_hessians", r"bigstep::add_point_hessian\("),
    # Eigen's GEMM / GEMV / Cholesky drivers (their kernels are inside; fixed-size products are inlined)
    # (and, from 2026-11-24, LM's small Cholesky of numerics/dense_small.h, which replaced Eigen's LLT)
    ("dense_algebra", r"Eigen::internal::(general_matrix_matrix_product<.*>::run|"
                      r"general_matrix_vector_product<.*>::run|llt_inplace<|triangular_solve_)|"
                      r"bigstep::(cholesky_inplace|forward_subst|backward_subst_transposed)<"),
    # the team engine (--engine team): its residual r, J_r (solvers/pbd/pbd_residual_team.h)
    # (its lambdas, the lanes' bodies, are named inside it: excluded, they count in its inclusive cost)
    ("team_residual", r"bigstep::pbfd_residual_team<(?!.*\{lambda)"),
]

# engine -> the overrides that select it; the team engine steps K = 2 identical rollouts on one
# thread (batch runs need K > 1), so per-iteration costs compare with the reference's
ENGINES = {
    "reference": {},
    "team": {"batch.rollouts": 2, "batch.engine": "team", "batch.threads": 1, "batch.perturb_theta": 0,
             "batch.perturb_theta_dot": 0},
}


def lm_iterations(out: Path) -> int:
    """LM iterations of a run: steps.csv (one rollout) or rollouts.csv (a batch: the sum over
    rollouts of iterations_mean x steps)."""
    if (out / "steps.csv").is_file():
        return sum(int(r["iterations"]) for r in csv.DictReader((out / "steps.csv").open()))
    return sum(round(float(r["iterations_mean"]) * int(r["steps"])) for r in csv.DictReader((out / "rollouts.csv").open()))


# the solver alone: the reference's LM, or the team engine's launches (its LM phases)
STEP = {"reference": r"bigstep::Integrator::step\(", "team": r"bigstep::PbfdTeamBatch<[^>]*>::launch\((?!.*\{lambda)"}
LM_SOLVE = {"reference": r"bigstep::levenberg_marquardt\(", "team": r"bigstep::PbfdTeamBatch<[^>]*>::launch\((?!.*\{lambda)"}


def callgrind(binary: Path, cfg: str, dt: float, sets: dict, steps: int, tmp: Path):
    """Total Ir, per-function inclusive Ir, and LM iterations of a `steps`-step run."""
    out, cg = tmp / f"out{steps}", tmp / f"cg{steps}"
    args = [str(binary), "run", str(common.config_path(cfg)), "--quiet", "--out", str(out)]
    for k, v in {**sets, "integrator.dt": dt, "integrator.duration": dt * steps,
                 "metrics.stop_at_rest": False}.items():
        args += ["--set", f"{k}={common.fmt_value(v)}"]
    # OMP_WAIT_POLICY=passive: the team engine's OpenMP threads sleep instead of spinning at a
    # barrier, whose instructions would depend on the machine's load
    total, fn = common.callgrind(args, cg, inclusive=True, env={"OMP_WAIT_POLICY": "passive"})
    return total, fn, lm_iterations(out)


# phase -> regex used when the phase's own function is inlined into its caller (then only the
# functions inside it appear): the team residual's lane bodies, its top-level lambdas (names with
# one "{lambda": a nested lambda counts in its enclosing one)
PHASE_FALLBACK = {"team_residual": r"bigstep::pbfd_residual_team<[^{]*\{lambda[^{]*$"}


def phase_costs(fn1: dict, fn2: dict) -> dict:
    names = set(fn1) | set(fn2)
    d = {n: fn2.get(n, 0) - fn1.get(n, 0) for n in names}
    res = {}
    for ph, rx in PHASES:
        res[ph] = sum(v for n, v in d.items() if re.search(rx, n))
        if res[ph] == 0 and ph in PHASE_FALLBACK:
            res[ph] = sum(v for n, v in d.items() if re.search(PHASE_FALLBACK[ph], n))
    return res


def wall(binary: Path, cfg: str, dt: float, sets: dict, n1: int, n2: int):
    """Median over WALL_REPEATS runs of the wall time of steps n1+1 .. n2 (steps.csv), and their
    LM iterations."""
    walls, its = [], 0
    for _ in range(WALL_REPEATS):
        r = common.run_scene(cfg, {**sets, "integrator.dt": dt, "integrator.duration": dt * n2,
                                   "metrics.stop_at_rest": False}, binary=binary)
        window = [s for s in r.steps if n1 < s["step"] <= n2]
        walls.append(sum(s["wall_s"] for s in window))
        its = sum(s["iterations"] for s in window)
    return sorted(walls)[len(walls) // 2], its


def wall_batch(binary: Path, cfg: str, dt: float, sets: dict, n1: int, n2: int):
    """A batch run has no per-step wall time: median over WALL_REPEATS runs of summary.json's
    wall_time_s at n2 steps minus the same at n1 steps, and the LM iterations between."""
    def runs(n):
        ws, its = [], 0
        for _ in range(WALL_REPEATS):
            with tempfile.TemporaryDirectory(prefix="bigstep-prof-") as tmp:
                r = common.run_scene(cfg, {**sets, "integrator.dt": dt, "integrator.duration": dt * n,
                                           "metrics.stop_at_rest": False}, binary=binary, keep_dir=Path(tmp) / "o")
                ws.append(r.summary["wall_time_s"])
                its = lm_iterations(Path(tmp) / "o")
        return sorted(ws)[len(ws) // 2], its
    (w1, i1), (w2, i2) = runs(n1), runs(n2)
    return w2 - w1, i2 - i1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--label", default=None, help="row label (default: the short commit, + '-team')")
    ap.add_argument("--engine", choices=sorted(ENGINES), default="reference")
    ap.add_argument("--integrator", choices=sorted(INTEGRATORS), default="pbfd")
    ap.add_argument("--binary", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=common.RESULTS / "step_cost.csv")
    a = ap.parse_args()
    if a.integrator != "pbfd" and a.engine != "reference":
        raise SystemExit("--integrator pbd: reference engine only (the team form is PBFD's)")
    if a.label is None:
        a.label = (common._git("rev-parse", "--short", "HEAD") or "local") + ("-team" if a.engine == "team" else "") + \
            ("-pbd" if a.integrator == "pbd" else "")
    if not shutil.which("valgrind"):
        raise SystemExit("valgrind not found (apt-get install valgrind)")
    binary = (a.binary or common.find_binary()).resolve()
    rows = []
    for scene, cfg, dt, sets, N1, N2 in SCENES:
        sets = {**sets, **INTEGRATORS[a.integrator], **ENGINES[a.engine]}
        with tempfile.TemporaryDirectory(prefix="bigstep-prof-") as tmp:
            t1, f1, i1 = callgrind(binary, cfg, dt, sets, N1, Path(tmp))
            t2, f2, i2 = callgrind(binary, cfg, dt, sets, N2, Path(tmp))
        # per rollout: a team run steps K identical rollouts (LM iterations summed over them)
        K = int(ENGINES[a.engine].get("batch.rollouts", 1))
        dIr, dit, dsim = t2 - t1, i2 - i1, (N2 - N1) * dt * K
        ph = phase_costs(f1, f2)
        ws, wit = (wall_batch if a.engine == "team" else wall)(binary, cfg, dt, sets, N1, N2)
        wn = N2 - N1
        row = {"label": a.label, "engine": a.engine, "scene": scene, "dt": dt, "steps": f"{N1 + 1}-{N2}",
               "lm_iterations_per_step": dit / (N2 - N1) / K,
               "instructions_per_lm_iteration": round(dIr / dit),
               "instructions_per_sim_s": round(dIr / dsim),
               "wall_us_per_lm_iteration": 1e6 * ws / wit,
               "wall_s_per_sim_s": ws / (wn * dt * K),
               "sim_s_per_wall_s": wn * dt * K / ws,
               "wall_lm_iterations_per_step": wit / wn / K}
        for k, v in ph.items():
            row[f"{k}_per_lm_iteration"] = round(v / dit)
        row["rest_per_lm_iteration"] = round((dIr - sum(ph.values())) / dit)
        # the solver alone (LM with its residual evaluations), without the run loop's per-step
        # output and metrics
        row["lm_solve_per_lm_iteration"] = round(sum(
            f2.get(n, 0) - f1.get(n, 0) for n in set(f1) | set(f2)
            if re.search(LM_SOLVE[a.engine], n)) / dit)
        row["integrator"] = a.integrator  # last: the column came after the others
        # the integrator's step alone (Integrator::step: LM plus the per-step work around it, the step
        # input and the normal force at theta_{n+1}); total - step is the run loop's per-step output
        # and metrics, step - lm_solve the integrator's per-step constants (all per LM iteration)
        row["step_per_lm_iteration"] = round(sum(
            f2.get(n, 0) - f1.get(n, 0) for n in set(f1) | set(f2)
            if re.search(STEP[a.engine], n)) / dit)
        rows.append(row)
        print(json.dumps(row), flush=True)
    fields = list(rows[0].keys())
    old = []
    if a.out.is_file():
        with a.out.open() as f:
            rd = csv.DictReader(f)
            fields += [k for k in rd.fieldnames or [] if k not in fields]  # columns of older rows
            old = [r for r in rd if r["label"] != a.label]
    for r in old:  # rows from before the engine / integrator columns measured the reference's PBFD
        r["engine"] = r.get("engine") or "reference"
        r["integrator"] = r.get("integrator") or "pbfd"
    meta_path = a.out.with_suffix(".meta.json")
    runs = json.loads(meta_path.read_text()).get("runs", []) if meta_path.is_file() else []
    runs = [r for r in runs if r.get("label") != a.label]
    runs.append({"label": a.label, "command": common.command_line(), **common.machine_info(binary)})
    common.write_csv(a.out, old + rows, fields, meta={
        "note": "callgrind Ir(N2 steps) - Ir(N1 steps) of bigstep run (column steps = N1+1-N2); phases: inclusive Ir "
                "of the phase's functions differenced the same way (point_hessians also counts the "
                "gravity Hessian; dense_algebra is Eigen's GEMM/GEMV/LLT kernels; inlined code counts "
                "in its caller); wall: sum of steps.csv wall_s over "
                "the same steps, median of 15 runs, on a shared 2-core machine (noisy; instructions "
                "are the measure)",
        "scenes": {s: {"config": c, "dt": d, "overrides": o, "steps": [n1 + 1, n2]} for s, c, d, o, n1, n2 in SCENES},
        "runs": runs})


if __name__ == "__main__":
    main()
