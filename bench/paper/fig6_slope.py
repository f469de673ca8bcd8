#!/usr/bin/env python3
"""PBFD paper Fig. 6 (docs/methods/pbfd.md §8.3): 10-link chain sliding off a 30 degree slope, computing time of
Newton-Euler dry friction (ne_lcp: Stewart-Trinkle LCP, Lemke, 4 cone edges) vs PBFD (JTJ-LM).

configs/chain_slope.yaml: floating 10-link chain (D = 15) of 0.2 x 0.04 x 0.04 m boxes lying along
the slope near its upper edge; it slides down onto the ground z = 0 and comes to rest there.
Three sweeps, one process per run (at most 2 in parallel):

(b) "dt": 10 s of simulated time, corner contact points (contact_grid 1: 8 per link, 80 in all),
    NE-LCP dt in {0.001, ..., 0.1} and PBFD dt in {0.0025, ..., 0.2}, each with
    a stability verdict (below). The largest stable dt of each method is computed and marked.
(c) "contacts": contact_grid s = 1..4 on every link (an s x s lattice per face: 8, 26, 56, 98
    points per link). PBFD at dt = 0.1 over 10 s with C_perp and C_par multiplied by 4/(s+1)^2
    (points per face N0/N, which keeps the total stiffness of a face in contact fixed, spec §8.3
    and A7). NE-LCP at dt = NE_SWEEP_DT over the first CONTACT_NE_DURATION = 0.2 s only: its Lemke
    step costs ~6 s of CPU at s = 4 (LCP of ~1500 unknowns), so 10 s would take ~3 h per run.
    Its time for 10 s is extrapolated as time x 10 / 0.2 (columns *_10s_s, `extrapolated` = 1); the
    first 0.2 s is the contact-heavy phase (the whole chain sliding on the slope, every bottom-face
    point in contact), and the script checks the extrapolation at s = 1 against the 10 s run of (b).
(d) "friction": 10 s, corners, NE-LCP at dt = NE_SWEEP_DT over mu in {0.1, ..., 0.5} and PBFD at
    dt = 0.1 over the matching C_par = mu C_perp / (2 v_ref dt), v_ref = 1 m/s (a sliding point sees
    a friction/normal force ratio 2 C_par v dt / C_perp = mu at 1 m/s; the Fig. 4/5 mapping). All mu
    are below tan 30 deg = 0.577, so every run slides off the slope (same kind of motion).

Friction in (b), (c): NE mu = 0.3 (the config's value) and PBFD C_par = 0.3 C_perp / (2 v_ref dt)
= 3e4/dt by the same mapping (the config's 5e6 at dt = 0.01 would be mu_eff 0.5; with a fixed C_par the
PBFD friction grows with dt: at dt = 0.1 and C_par = 5e6 the chain sticks on the slope).

Stability verdict (per run, from trajectory.csv; energies with the simulator's own definition,
batch/rollout.h mechanical_energy: E = 1/2 v^T H(theta_b) v + V(theta_b), v = (theta_b - theta_a)/dt,
V = sum m_i g z_i with z = 0 on the ground; H from a numpy copy of the kinematics that is checked
against `bigstep inspect` at start-up). Gravity work is inside V and friction and contact can only
remove energy, so a run is `stable` when all of:
  1. the run completed every requested step, no step aborted or produced a non-finite state;
  2. E never rises above its running minimum min_{s<=t} E(s) by more than E_TOL (this includes
     E(t) <= E(0) + E_TOL, the initial-value test, and also catches energy injected after the chain
     has come to rest on the ground, which the initial-value test cannot see once ~28 J of the initial
     28.8 J have been dissipated);
  3. no link's COM speed exceeds V_BOUND = sqrt(2 (E(0) + E_TOL) / m_link) (the speed of one link
     carrying all the kinetic energy the chain can have when (2) holds and V >= 0);
  4. no contact point sinks deeper than PEN_BOUND = 0.02 m (half the link thickness) into the slope or
     the ground (a link falling through the floor loses energy, so (2) would not see it).
E_TOL = M g x 1 cm = 0.314 J (lifting the whole 3.2 kg chain by 1 cm; ~1.1 % of E(0) = 28.8 J). It covers
what E does not book: the PBFD normal-penalty energy (rest depth 2 mm: 0.02 J at rest, more during
impacts), NE's position correction (phi/dt, active distance 1 mm: M g x 1 mm = 0.03 J), and the O(dt)
error of the backward-difference kinetic energy. `stable_e0_only` is the weaker verdict with the
initial-value test in place of (2), reported for comparison.

Time (columns time_s, time_10s_s = time for 10 s of simulated time): user + system CPU seconds of the
bigstep process, measured by a small wrapper (os.wait4) around the binary; bigstep runs single-threaded, so
on an idle machine this equals its wall time, and on the shared 2-core box it does not count the other
users' processes. wall_time_s (the stepping loop, from summary.json) and wall_10s_s are kept beside it.

Contact counts (columns mean_contacts, mean_penetrating): per step, the number of (point, plane) pairs
with phi <= 1 mm (NE's active-contact rule, spec §7) and with phi < 0 (PBFD penalty force on), averaged
over the steps; computed here from the trajectory (the CLI does not report them).

Writes bench/results/fig6_slope.csv (+ .meta.json, one row per run, `sweep` column),
fig6_slope_claims.csv (+ .meta.json, verdicts on P7-P10) and fig6_slope.png.

    python3 bench/paper/fig6_slope.py [--workers 2] [--timeout 900] [--quick]

--quick: 1 s of simulated time (0.05 s for the NE contact sweep), s = 1..2, writes fig6_slope_quick.*.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]  # siblings, bench/common.py
import common  # noqa: E402

CONFIG = "chain_slope"
N_LINKS = 10
BOX_SIZE = np.array([0.2, 0.04, 0.04])      # configs/chain_slope.yaml, checked against the inertia
SLOPE_DEG = 30.0                             # terrain[0]: slope through the origin
PLANES = [(np.array([math.sin(math.radians(SLOPE_DEG)), 0.0, math.cos(math.radians(SLOPE_DEG))]), 0.0),
          (np.array([0.0, 0.0, 1.0]), 0.0)]  # terrain[1]: the ground z = 0
ACTIVE_DISTANCE = 1e-3                       # NE-LCP's contact rule phi <= 1 mm (spec §7)
C_PERP = 2.0e5                               # the config's C_perp
V_REF = 1.0                                  # m/s, reference slip speed of the mu <-> C_par mapping
MU_BASE = 0.3                                # the config's mu (sweeps b, c)
DURATION = 10.0
NE_DTS = [0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1]  # beyond the paper's range: find NE's limit
PBFD_DTS = [0.0025, 0.01, 0.05, 0.1, 0.2]
NE_SWEEP_DT = 0.005                          # NE dt of sweeps (c), (d): stable in (b) (see README)
PBFD_SWEEP_DT = 0.1
GRIDS = [1, 2, 3, 4]
CONTACT_NE_DURATION = 0.2
MU_GRID = [0.1, 0.2, 0.3, 0.4, 0.5]
PEN_BOUND = 0.02
TIME_WORD = "CPU time"  # time_s: user + system CPU seconds of the bigstep process (see timing_wrapper)
METHODS = {"ne_lcp": ("ne_lcp", ""), "pbfd": ("pbfd", "jtj_lm")}

FIELDS = ["sweep", "method", "integrator", "optimizer", "dt", "duration_s", "contact_grid", "points_per_link",
          "n_points", "c_scale", "c_perp", "c_par", "mu", "steps", "steps_requested", "sim_time_s",
          "time_s", "time_10s_s", "time_source", "extrapolated", "cpu_s", "wall_time_s", "wall_10s_s",
          "wall_time_per_step_s", "process_s",
          "iterations_mean", "iterations_max", "converged_fraction", "restarts", "aborted", "rc",
          "mean_contacts", "max_contacts", "mean_penetrating", "E0_J", "E_min_J", "E_final_J",
          "max_energy_rise_J", "max_energy_rise_runmin_J", "t_max_rise_s", "max_link_speed_mps",
          "max_penetration_m", "com_final_x", "stable", "stable_e0_only", "unstable_reason", "wall_first_window_s",
          "note"]
CLAIM_FIELDS = ["id", "claim", "verdict", "numbers"]


def c_par_for(mu: float, dt: float) -> float:
    """C_par whose friction/normal force ratio 2 C_par v dt / C_perp equals mu at v = V_REF."""
    return mu * C_PERP / (2.0 * V_REF * dt)


def grid_points_per_link(s: int) -> int:
    return (s + 1) ** 3 - (s - 1) ** 3


def face_scale(s: int) -> float:
    """N0/N with N the points on one face ((s+1)^2) and N0 = 4 (corners)."""
    return 4.0 / (s + 1) ** 2


# ----------------------------------------------------------------------------------------------
# kinematics (numpy copy of core/kinematics.cpp, vectorized over the time steps)

def _axis_rotation(a: np.ndarray, q: np.ndarray) -> np.ndarray:
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]], float)
    s, c = np.sin(q)[:, None, None], np.cos(q)[:, None, None]
    return np.eye(3)[None] + s * K[None] + (1 - c) * (K @ K)[None]


class ChainModel:
    """The finalized model printed by `bigstep inspect` (links, elementary DOFs, gravity)."""

    def __init__(self, d: dict):
        self.links = d["links"]
        self.dofs = d["dofs"]
        self.nq = int(d["n_q"])
        self.g = np.array(d["gravity"], float)
        self.mass = np.array([l["mass"] for l in self.links])
        self.total_mass = float(self.mass.sum())
        self.ancestors_dofs = []
        for j in range(len(self.links)):
            ks, a = [], j
            while a >= 0:
                la = self.links[a]
                ks += list(range(la["dof_adr"], la["dof_adr"] + la["dof_num"]))
                a = la["parent"]
            self.ancestors_dofs.append(sorted(ks))

    def fk(self, Q: np.ndarray):
        T, L = Q.shape[0], len(self.links)
        R = np.zeros((L, T, 3, 3))
        t = np.zeros((L, T, 3))
        w = np.zeros((self.nq, T, 3))
        o = np.zeros((self.nq, T, 3))
        for j, l in enumerate(self.links):
            if l["parent"] < 0:
                Rj, tj = np.broadcast_to(np.eye(3), (T, 3, 3)).copy(), np.zeros((T, 3))
            else:
                Rj, tj = R[l["parent"]].copy(), t[l["parent"]].copy()
            tj = tj + Rj @ np.array(l["t_o"], float)
            Rj = Rj @ np.array(l["R_o"], float)
            for k in range(l["dof_adr"], l["dof_adr"] + l["dof_num"]):
                ax = np.array(self.dofs[k]["axis"], float)
                w[k] = Rj @ ax
                o[k] = tj
                if self.dofs[k]["revolute"]:
                    Rj = Rj @ _axis_rotation(ax, Q[:, k])
                else:
                    tj = tj + w[k] * Q[:, k:k + 1]
            R[j], t[j] = Rj, tj
        return R, t, w, o

    def energy(self, Q: np.ndarray, Qd: np.ndarray):
        """Kinetic 1/2 qd^T H(q) qd, potential V(q) and each link's COM speed, per row of Q."""
        R, t, w, o = self.fk(Q)
        T = Q.shape[0]
        KE, V = np.zeros(T), np.zeros(T)
        speed = np.zeros((len(self.links), T))
        for j, l in enumerate(self.links):
            c = t[j] + R[j] @ np.array(l["com"], float)
            v, om = np.zeros_like(c), np.zeros_like(c)
            for k in self.ancestors_dofs[j]:
                if self.dofs[k]["revolute"]:
                    v += np.cross(w[k], c - o[k]) * Qd[:, k:k + 1]
                    om += w[k] * Qd[:, k:k + 1]
                else:
                    v += w[k] * Qd[:, k:k + 1]
            Iw = R[j] @ np.array(l["inertia"], float) @ np.transpose(R[j], (0, 2, 1))
            KE += 0.5 * l["mass"] * np.einsum("ti,ti->t", v, v) + 0.5 * np.einsum("ti,tij,tj->t", om, Iw, om)
            V -= l["mass"] * (c @ self.g)
            speed[j] = np.linalg.norm(v, axis=1)
        return KE, V, speed, R, t

    def contact_stats(self, R, t, s: int):
        """Per step: pairs with phi <= ACTIVE_DISTANCE, pairs with phi < 0, deepest penetration."""
        g = np.arange(s + 1) / s - 0.5
        pts = np.array([[a, b, c] for a in g for b in g for c in g  # surface points of the lattice
                        if max(abs(a), abs(b), abs(c)) > 0.5 - 1e-12])
        T = t.shape[1]
        active, pen = np.zeros(T, int), np.zeros(T, int)
        depth = np.zeros(T)
        for j, l in enumerate(self.links):
            local = np.array(l["com"], float)[None] + pts * BOX_SIZE[None]   # box centre = COM
            P = t[j][:, None, :] + np.einsum("tij,pj->tpi", R[j], local)    # (T, npts, 3)
            for n, h0 in PLANES:
                phi = P @ n - h0
                active += (phi <= ACTIVE_DISTANCE).sum(axis=1)
                pen += (phi < 0).sum(axis=1)
                depth = np.maximum(depth, (-phi).max(axis=1))
        return active, pen, depth


def load_model(binary: Path) -> ChainModel:
    cp = subprocess.run([str(binary), "inspect", str(common.config_path(CONFIG)), "--states", "4"],
                        capture_output=True, text=True, check=True)
    d = json.loads(cp.stdout)
    m = ChainModel(d)
    # the numpy kinematics must reproduce the CLI's mass matrix: 1/2 qd^T H qd at random states
    for st in d["states"]:
        q, qd, H = np.array([st["q"]]), np.array([st["qd"]]), np.array(st["H"])
        ke = m.energy(q, qd)[0][0]
        ref = 0.5 * qd[0] @ H @ qd[0]
        if abs(ke - ref) > 1e-9 * max(1.0, abs(ref)):
            raise SystemExit(f"numpy kinematics disagree with `bigstep inspect`: KE {ke} vs {ref}")
    for l in m.links:  # box inertia m/12 (b^2 + c^2) of BOX_SIZE
        s2 = BOX_SIZE ** 2
        ref = l["mass"] / 12 * np.array([s2[1] + s2[2], s2[0] + s2[2], s2[0] + s2[1]])
        if not np.allclose(np.diag(np.array(l["inertia"])), ref, rtol=1e-9):
            raise SystemExit(f"link {l['name']}: inertia does not match a {BOX_SIZE} box")
    return m


# ----------------------------------------------------------------------------------------------
# runs

def make_jobs(quick: bool) -> list:
    dur = 1.0 if quick else DURATION
    ne_c_dur = 0.05 if quick else CONTACT_NE_DURATION
    grids = GRIDS[:2] if quick else GRIDS
    jobs = []

    def job(sweep, method, dt, duration, s=1, mu=MU_BASE):
        integ, opt = METHODS[method]
        scale = face_scale(s)
        ov = {"integrator.type": integ, "integrator.dt": dt, "integrator.duration": duration}
        if opt:
            ov["integrator.optimizer"] = opt
        c_perp, c_par = C_PERP * scale, c_par_for(mu, dt) * scale
        if method == "pbfd":
            ov["contact.c_perp"] = c_perp
            ov["contact.c_par"] = c_par
        else:
            ov["contact.mu"] = mu
        if s != 1:
            for i in range(N_LINKS):
                ov[f"model.links.{i}.box.contact_grid"] = s
        key = dict(sweep=sweep, method=method, integrator=integ, optimizer=opt or "lemke", dt=dt,
                   duration_s=duration, contact_grid=s, points_per_link=grid_points_per_link(s),
                   n_points=N_LINKS * grid_points_per_link(s), c_scale=scale if method == "pbfd" else 1.0,
                   c_perp=c_perp if method == "pbfd" else "", c_par=c_par if method == "pbfd" else "",
                   mu=mu, _window=ne_c_dur)
        jobs.append((key, ov))

    for dt in NE_DTS:
        job("dt", "ne_lcp", dt, dur)
    for dt in PBFD_DTS:
        job("dt", "pbfd", dt, dur)
    for s in grids:
        job("contacts", "ne_lcp", NE_SWEEP_DT, ne_c_dur, s=s)
        job("contacts", "pbfd", PBFD_SWEEP_DT, dur, s=s)
    for mu in MU_GRID:
        job("friction", "ne_lcp", NE_SWEEP_DT, dur, mu=mu)
        job("friction", "pbfd", PBFD_SWEEP_DT, dur, mu=mu)
    return jobs


def est_cost(key) -> float:
    """Rough seconds, to start the longest runs first (2 workers)."""
    per_step = {"ne_lcp": [0.012, 0.11, 0.6, 1.8], "pbfd": [0.002, 0.006, 0.015, 0.03]}
    return key["duration_s"] / key["dt"] * per_step[key["method"]][key["contact_grid"] - 1]


def analyse_run(key: dict, r: common.RunResult, out: Path, model: ChainModel) -> dict:
    row = dict(key)
    row.update(rc=r.rc, process_s=round(r.elapsed_s, 3), note="", unstable_reason="")
    s = r.summary
    if r.timed_out or not s:
        row.update(stable=False, stable_e0_only=False,
                   unstable_reason="timeout" if r.timed_out else f"no summary (rc={r.rc})",
                   note=(r.stderr or "")[:200])
        return row
    for k in ("steps", "steps_requested", "sim_time_s", "wall_time_s", "wall_time_per_step_s", "iterations_mean",
              "iterations_max", "converged_fraction", "restarts", "aborted"):
        row[k] = s.get(k, "")
    row["com_final_x"] = s["com_final_m"][0]
    sim = max(float(s["sim_time_s"]), 1e-12)
    row["wall_10s_s"] = float(s["wall_time_s"]) * DURATION / sim
    cpu_file = out / "cpu_time.txt"  # written by the timing wrapper (user + system seconds of the process)
    if cpu_file.is_file():
        row["cpu_s"] = sum(float(x) for x in cpu_file.read_text().split())
        row["time_s"], row["time_source"] = row["cpu_s"], "cpu"
    else:
        row["time_s"], row["time_source"] = float(s["wall_time_s"]), "wall"
    row["time_10s_s"] = row["time_s"] * DURATION / sim
    row["extrapolated"] = abs(sim - DURATION) > 1e-9
    if row["extrapolated"]:
        row["note"] = f"*_10s_s = time x {DURATION:g}/{sim:g} (the run simulated {sim:g} s)"

    A = np.loadtxt(out / "trajectory.csv", delimiter=",", skiprows=1, ndmin=2)
    dt = float(s["dt"])
    Q = A[:, 1:]
    finite = bool(np.isfinite(Q).all())
    with np.errstate(all="ignore"):
        Qd = np.zeros_like(Q)
        Qd[1:] = (Q[1:] - Q[:-1]) / dt  # theta_{-1} = theta_0: the scene starts at rest
        ke, V, speed, R, t = model.energy(Q, Qd)
        E = ke + V
        active, pen, depth = model.contact_stats(R, t, int(key["contact_grid"]))
        finite = finite and bool(np.isfinite(E).all())
        runmin = np.minimum.accumulate(E)
        rise_run = E - runmin
        i_rise = int(np.nanargmax(rise_run)) if np.isfinite(rise_run).any() else 0
        e_tol = model.total_mass * abs(model.g[2]) * 0.01
        m_link = float(model.mass.min())
        v_bound = math.sqrt(2.0 * (E[0] + e_tol) / m_link)
        row.update(E0_J=float(E[0]), E_min_J=float(np.nanmin(E)), E_final_J=float(E[-1]),
                   max_energy_rise_J=float(np.nanmax(E - E[0])), max_energy_rise_runmin_J=float(rise_run[i_rise]),
                   t_max_rise_s=float(A[i_rise, 0]), max_link_speed_mps=float(np.nanmax(speed)),
                   max_penetration_m=float(np.nanmax(depth)),
                   mean_contacts=float(active[1:].mean()), max_contacts=int(active.max()),
                   mean_penetrating=float(pen[1:].mean()))
    completed = int(s["steps"]) == int(s["steps_requested"]) and not s.get("aborted")
    reasons = []
    if not completed:
        reasons.append(f"aborted at step {s['steps']}/{s['steps_requested']} (t = {float(s['sim_time_s']):.4g} s)")
    if not finite:
        reasons.append("non-finite state/energy")
    if finite and row["max_energy_rise_runmin_J"] > e_tol:
        reasons.append(f"energy rose {row['max_energy_rise_runmin_J']:.3g} J above its running minimum "
                       f"(t = {row['t_max_rise_s']:.4g} s)")
    if finite and row["max_link_speed_mps"] > v_bound:
        reasons.append(f"link speed {row['max_link_speed_mps']:.3g} > {v_bound:.3g} m/s")
    if finite and row["max_penetration_m"] > PEN_BOUND:
        reasons.append(f"penetration {row['max_penetration_m']:.3g} m > {PEN_BOUND} m")
    row["stable"] = not reasons
    row["stable_e0_only"] = bool(completed and finite and row["max_energy_rise_J"] <= e_tol
                                 and row["max_link_speed_mps"] <= v_bound and row["max_penetration_m"] <= PEN_BOUND)
    row["unstable_reason"] = "; ".join(reasons)
    # for the extrapolation check of sweep (c): solver time of the first CONTACT_NE_DURATION seconds
    n0 = int(round(key["_window"] / dt))
    row["wall_first_window_s"] = float(sum(x["wall_s"] for x in r.steps[:n0])) if len(r.steps) >= n0 else None
    return row


WRAPPER = """#!{python}
# written by bench/paper/fig6_slope.py: runs bigstep and stores the user + system CPU seconds of that process
# in <--out DIR>/cpu_time.txt (the machine is shared, so wall time measures the other users too)
import ctypes, os, signal, subprocess, sys
args = sys.argv[1:]
def die_with_parent():  # a timeout kills this wrapper; bigstep must not outlive it
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
p = subprocess.Popen([{binary!r}] + args, preexec_fn=die_with_parent)
_, status, ru = os.wait4(p.pid, 0)
out = args[args.index("--out") + 1] if "--out" in args else None
if out and os.path.isdir(out):
    with open(os.path.join(out, "cpu_time.txt"), "w") as f:
        f.write(f"{{ru.ru_utime!r}} {{ru.ru_stime!r}}\\n")
rc = os.waitstatus_to_exitcode(status)
sys.exit(rc if rc >= 0 else 128 - rc)
"""


def timing_wrapper(binary: Path, tmp: Path) -> Path:
    w = tmp / "bigstep-cpu-timed"
    w.write_text(WRAPPER.format(python=sys.executable, binary=str(binary)))
    w.chmod(0o755)
    return w


def run_all(jobs, model, binary, workers, timeout) -> list:
    workers = max(1, min(int(workers), common.MAX_WORKERS))
    order = sorted(range(len(jobs)), key=lambda i: -est_cost(jobs[i][0]))
    rows: list = [None] * len(jobs)
    t0 = time.perf_counter()

    def one(i):
        key, ov = jobs[i]
        with tempfile.TemporaryDirectory(prefix="bigstep-fig6-") as tmp:
            out = Path(tmp) / "out"
            r = common.run_scene(CONFIG, ov, timeout=timeout, binary=binary, keep_dir=out)
            return analyse_run(key, r, out, model)

    with tempfile.TemporaryDirectory(prefix="bigstep-fig6-wrap-") as wtmp, \
            cf.ThreadPoolExecutor(max_workers=workers) as ex:
        binary = timing_wrapper(binary, Path(wtmp))
        futs = {ex.submit(one, i): i for i in order}
        for done, fut in enumerate(cf.as_completed(futs), 1):
            i = futs[fut]
            rows[i] = fut.result()
            r = rows[i]
            print(f"  [{done:>2}/{len(jobs)}] {time.perf_counter() - t0:7.1f}s  {r['sweep']:<9} {r['method']:<6} "
                  f"dt={r['dt']:<6g} s={r['contact_grid']} mu={r['mu']:<4g} {r.get('time_source', '')}={r.get('time_s', float('nan')):.2f}s "
                  f"{'stable' if r['stable'] else 'UNSTABLE: ' + r['unstable_reason']}", file=sys.stderr, flush=True)
    return rows


# ----------------------------------------------------------------------------------------------
# claims

def _sel(rows, sweep, method):
    return [r for r in rows if r["sweep"] == sweep and r["method"] == method and r.get("time_s", "") != ""]


def largest_stable_dt(rows, method):
    rs = _sel(rows, "dt", method)
    st = [r["dt"] for r in rs if r["stable"]]
    return (max(st) if st else None), sorted(r["dt"] for r in rs if r["stable"]), sorted(r["dt"] for r in rs if not r["stable"])


def claims(rows) -> list:
    out = []
    ne_max, ne_st, ne_un = largest_stable_dt(rows, "ne_lcp")
    pb_max, pb_st, pb_un = largest_stable_dt(rows, "pbfd")
    ne_e0 = sorted(r["dt"] for r in _sel(rows, "dt", "ne_lcp") if r["stable_e0_only"])
    ne_rows = {r["dt"]: r for r in _sel(rows, "dt", "ne_lcp")}
    pb_rows = {r["dt"]: r for r in _sel(rows, "dt", "pbfd")}
    # P7: NE stable only for dt < 0.0025, PBFD stable at 0.1
    ne_claim = bool(ne_st) and all(d < 0.0025 for d in ne_st) and all(d >= 0.0025 for d in ne_un) and 0.001 in ne_st
    pb_claim = 0.1 in pb_st
    why = "; ".join(f"NE dt={d:g}: {ne_rows[d]['unstable_reason']}" for d in ne_un if d in ne_rows)
    out.append({"id": "P7", "claim": "NE stable only for dt < 0.0025 s; PBFD stable at dt = 0.1 s",
                "verdict": "holds" if ne_claim and pb_claim else
                ("PBFD part holds, NE part does not" if pb_claim else
                 ("NE part holds, PBFD part does not" if ne_claim else "does not hold")),
                "numbers": f"NE stable at {ne_st}, unstable at {ne_un} (largest stable {ne_max}); "
                           f"with the initial-value energy test only: NE stable at {ne_e0}; "
                           f"PBFD stable at {pb_st}, unstable at {pb_un} (largest stable {pb_max}). {why}"})
    # P8: PBFD(0.1) vs NE(0.0025) ~3x, vs NE(0.001) ~5x (time of a 10 s trajectory)
    if 0.1 in pb_rows and 0.0025 in ne_rows and 0.001 in ne_rows:
        pb = pb_rows[0.1]["time_10s_s"]
        r25 = ne_rows[0.0025]["time_10s_s"] / pb
        r10 = ne_rows[0.001]["time_10s_s"] / pb
        ok = r25 > 1 and r10 > r25
        out.append({"id": "P8", "claim": "PBFD(0.1 s) ~3x faster than NE(0.0025 s) and ~5x faster than NE(0.001 s)",
                    "verdict": ("holds in direction, not in magnitude" if ok and (r25 > 10 or r10 > 15) else
                                "holds" if ok else "does not hold"),
                    "numbers": f"{TIME_WORD} per 10 s: PBFD(0.1) {pb:.3g} s, NE(0.0025) {ne_rows[0.0025]['time_10s_s']:.3g} s "
                               f"({'extrapolated from ' + format(ne_rows[0.0025]['sim_time_s'], 'g') + ' s, ' if ne_rows[0.0025]['extrapolated'] else ''}"
                               f"ratio {r25:.3g}x), NE(0.001) {ne_rows[0.001]['time_10s_s']:.3g} s (ratio {r10:.3g}x)"
                               + (f"; vs the largest stable NE dt {ne_max:g}: {ne_rows[ne_max]['time_10s_s'] / pb:.3g}x"
                                  if ne_max in ne_rows else "")})
    # P9: contact count grows >= 5x; PBFD time growth < half of NE's
    ne_c = sorted(_sel(rows, "contacts", "ne_lcp"), key=lambda r: r["contact_grid"])
    pb_c = sorted(_sel(rows, "contacts", "pbfd"), key=lambda r: r["contact_grid"])
    if len(ne_c) >= 2 and len(pb_c) >= 2:
        gne_n = ne_c[-1]["mean_contacts"] / max(ne_c[0]["mean_contacts"], 1e-12)
        gpb_n = pb_c[-1]["mean_contacts"] / max(pb_c[0]["mean_contacts"], 1e-12)
        gne_t = ne_c[-1]["time_s"] / ne_c[0]["time_s"]
        gpb_t = pb_c[-1]["time_s"] / pb_c[0]["time_s"]
        wide = gne_n >= 5 and gpb_n >= 5
        ok = wide and gpb_t < 0.5 * gne_t
        out.append({"id": "P9", "claim": "NE time grows markedly with contact count, PBFD nearly flat "
                                         "(contact count x>=5: PBFD time growth < half of NE's)",
                    "verdict": ("holds" if ok else "does not hold") + ("" if wide else " (contact count grew < 5x)"),
                    "numbers": f"s = {ne_c[0]['contact_grid']}..{ne_c[-1]['contact_grid']}: NE mean contacts "
                               f"{ne_c[0]['mean_contacts']:.1f} -> {ne_c[-1]['mean_contacts']:.1f} ({gne_n:.2f}x), time "
                               f"x{gne_t:.3g}; PBFD mean contacts {pb_c[0]['mean_contacts']:.1f} -> {pb_c[-1]['mean_contacts']:.1f} "
                               f"({gpb_n:.2f}x), time x{gpb_t:.3g}"})
    # P10: time nearly independent of friction, NE fluctuates more
    ne_f = _sel(rows, "friction", "ne_lcp")
    pb_f = _sel(rows, "friction", "pbfd")
    if len(ne_f) >= 2 and len(pb_f) >= 2:
        def spread(rs):
            w = np.array([r["time_s"] for r in rs])
            return float(w.max() / w.min()), float(w.std() / w.mean())
        ne_mm, ne_cv = spread(ne_f)
        pb_mm, pb_cv = spread(pb_f)
        ne_flat, pb_flat, more = ne_mm < 2.0, pb_mm < 2.0, ne_cv > pb_cv
        verdict = ("holds" if ne_flat and pb_flat and more else
                   f"PBFD {'nearly independent' if pb_flat else 'NOT nearly independent'}, "
                   f"NE {'nearly independent' if ne_flat else 'NOT nearly independent'}, "
                   f"NE fluctuates {'more' if more else 'less'}")
        out.append({"id": "P10", "claim": "both solvers' time nearly independent of the friction parameter (NE fluctuates more)",
                    "verdict": verdict + " (nearly independent: max/min time < 2)",
                    "numbers": f"NE mu {min(r['mu'] for r in ne_f):g}..{max(r['mu'] for r in ne_f):g}: {TIME_WORD} "
                               f"{min(r['time_s'] for r in ne_f):.3g}..{max(r['time_s'] for r in ne_f):.3g} s "
                               f"(max/min {ne_mm:.3g}, CV {ne_cv:.3f}); PBFD C_par {min(r['c_par'] for r in pb_f):.3g}.."
                               f"{max(r['c_par'] for r in pb_f):.3g}: {TIME_WORD} {min(r['time_s'] for r in pb_f):.3g}.."
                               f"{max(r['time_s'] for r in pb_f):.3g} s (max/min {pb_mm:.3g}, CV {pb_cv:.3f})"})
    # extrapolation check of the NE contact sweep: at s = 1 the first window vs the whole 10 s run
    ref = [r for r in _sel(rows, "dt", "ne_lcp") if r["dt"] == NE_SWEEP_DT]
    if ref and ne_c and ne_c[0]["extrapolated"] and ref[0].get("wall_first_window_s"):
        w = ref[0]["wall_first_window_s"]  # steps.csv solver wall time of the first window (no per-step CPU time)
        sim0 = ne_c[0]["sim_time_s"]
        x = w * DURATION / sim0
        out.append({"id": "extrapolation", "claim": f"NE contact sweep: 10 s time extrapolated from the first {sim0:g} s",
                    "verdict": "check",
                    "numbers": f"s = 1, dt = {NE_SWEEP_DT}, steps.csv wall times of the (b) run: first {sim0:g} s "
                               f"{w:.3g} s, x{DURATION / sim0:g} = {x:.3g} s vs the whole run scaled to 10 s "
                               f"{ref[0]['wall_10s_s']:.3g} s (ratio {x / ref[0]['wall_10s_s']:.3g})"})
    return out


# ----------------------------------------------------------------------------------------------
# plot

def plot(rows, png: Path, meta) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    style = {"ne_lcp": ("tab:green", "o", "NE dry friction (LCP, Lemke)"), "pbfd": ("tab:red", "s", "PBFD (JTJ-LM)")}
    fig, axes = plt.subplots(1, 3, figsize=(16, 5.2))
    ax = axes[0]
    for m, (col, mk, lab) in style.items():
        rs = sorted(_sel(rows, "dt", m), key=lambda r: r["dt"])
        if not rs:
            continue
        x = np.array([r["dt"] for r in rs])
        y = np.array([r["time_10s_s"] for r in rs])
        st = np.array([bool(r["stable"]) for r in rs])
        ax.plot(x, y, "-", color=col, lw=1.2, label=lab)
        ax.plot(x[st], y[st], mk, color=col, ms=7, ls="none")
        ax.plot(x[~st], y[~st], "x", color=col, ms=11, mew=2.5, ls="none")
        for r in rs:
            if r["aborted"] or r["steps"] != r["steps_requested"]:
                ax.annotate(f"aborted at t = {r['sim_time_s']:.4g} s\n(time scaled to 10 s)", (r["dt"], r["time_10s_s"]),
                            fontsize=7, xytext=(6, 4), textcoords="offset points")
        best = largest_stable_dt(rows, m)[0]
        if best is not None:
            ax.axvline(best, color=col, ls="--", lw=1)
            yb = [r["time_10s_s"] for r in rs if r["dt"] == best][0]
            ax.annotate(f"largest stable dt\n{best:g} s: {yb:.3g} s", (best, yb), color=col, fontsize=8,
                        xytext=(-20, -35 if m == "pbfd" else 20), textcoords="offset points", ha="right")
    ax.plot([], [], "x", color="k", ms=9, mew=2, label="unstable (energy/abort test)")
    ax.plot([], [], "o", color="k", ms=6, label="stable")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("dt [s]")
    ax.set_ylabel(f"{TIME_WORD} for 10 s of simulation [s]")
    ax.set_title("(b) time vs dt (corner contacts)", fontsize=10)
    ax.legend(fontsize=7, loc="upper right")

    ax = axes[1]
    for m, (col, mk, lab) in style.items():
        rs = sorted(_sel(rows, "contacts", m), key=lambda r: r["contact_grid"])
        if not rs:
            continue
        x = np.array([r["mean_contacts"] for r in rs])
        y = np.array([r["time_10s_s"] for r in rs])
        ex = any(r["extrapolated"] for r in rs)
        st = np.array([bool(r["stable"]) for r in rs])
        lab2 = f"{lab}, dt = {rs[0]['dt']:g}" + (f" ({rs[0]['sim_time_s']:g} s run, x{DURATION / rs[0]['sim_time_s']:g})" if ex else "")
        ax.plot(x, y, "-" if not ex else "--", color=col, lw=1.2, label=lab2)
        ax.plot(x[st], y[st], mk, color=col, ms=7, ls="none", mfc="none" if ex else col)
        ax.plot(x[~st], y[~st], "x", color=col, ms=11, mew=2.5, ls="none")
        for r in rs:
            ax.annotate(f"s={r['contact_grid']}", (r["mean_contacts"], r["time_10s_s"]), fontsize=7,
                        xytext=(4, -10), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("mean number of contact points (pairs with phi <= 1 mm)")
    ax.set_ylabel(f"{TIME_WORD} for 10 s [s]")
    ax.set_title("(c) time vs contact points (face lattice s x s)", fontsize=10)
    ax.legend(fontsize=7, loc="upper left")

    ax = axes[2]
    for m, (col, mk, lab) in style.items():
        rs = sorted(_sel(rows, "friction", m), key=lambda r: r["mu"])
        if not rs:
            continue
        x = np.array([r["mu"] for r in rs])
        y = np.array([r["time_10s_s"] for r in rs])
        st = np.array([bool(r["stable"]) for r in rs])
        ax.plot(x, y, "-", color=col, lw=1.2, label=f"{lab}, dt = {rs[0]['dt']:g}")
        ax.plot(x[st], y[st], mk, color=col, ms=7, ls="none")
        ax.plot(x[~st], y[~st], "x", color=col, ms=11, mew=2.5, ls="none")
    ax.set_yscale("log")
    ax.set_xlabel("mu (NE);  PBFD: C_par = mu C_perp / (2 * 1 m/s * dt)")
    ax.set_ylabel(f"{TIME_WORD} for 10 s [s]")
    pb = _sel(rows, "friction", "pbfd")
    if pb:
        dtp = pb[0]["dt"]
        top = ax.secondary_xaxis("top", functions=(lambda mu: mu * C_PERP / (2 * V_REF * dtp) / 1e5,
                                                   lambda c: c * 1e5 * 2 * V_REF * dtp / C_PERP))
        top.set_xlabel(f"PBFD C_par [1e5] at dt = {dtp:g}", fontsize=8)
    ax.set_title("(d) time vs friction parameter", fontsize=10)
    ax.legend(fontsize=7, loc="center right")
    for a in axes:
        a.grid(True, which="both", alpha=0.3)
    fig.suptitle("Fig. 6 reproduction: 10-link chain sliding off a 30 deg slope (configs/chain_slope.yaml); "
                 "x = unstable run\n"
                 f"{meta['cpu']} x{meta['cpu_count']}, git {meta['git_commit'][:10]}"
                 f"{' (dirty)' if meta['git_dirty'] else ''}, {meta['date']}", fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    plt.close(fig)


BOOL_FIELDS = {"extrapolated", "aborted", "stable", "stable_e0_only"}
INT_FIELDS = {"contact_grid", "points_per_link", "n_points", "steps", "steps_requested", "iterations_max", "restarts",
              "rc", "max_contacts"}


def read_rows(path: Path) -> list:
    import csv
    rows = []
    with path.open(newline="") as f:
        for r in csv.DictReader(f):
            row = {}
            for k, v in r.items():
                if v == "" or k in ("sweep", "method", "integrator", "optimizer", "time_source", "unstable_reason", "note"):
                    row[k] = v
                elif k in BOOL_FIELDS:
                    row[k] = v.strip().lower() in ("1", "true")
                elif k in INT_FIELDS:
                    row[k] = int(float(v))
                else:
                    row[k] = float(v)
            rows.append(row)
    return rows


def replot(out_dir: Path, prefix: str) -> int:
    csv_path = out_dir / f"{prefix}.csv"
    meta_path = csv_path.with_suffix(".meta.json")
    rows = read_rows(csv_path)
    meta = json.loads(meta_path.read_text())
    meta.pop("file", None)
    cl = claims(rows)
    meta["claims"] = cl
    meta["replotted"] = f"claims and PNG redone from the CSV by `{common.command_line()}`"
    common.write_csv(csv_path, rows, FIELDS, meta)
    common.write_csv(out_dir / f"{prefix}_claims.csv", cl, CLAIM_FIELDS,
                     {"command": meta["command"], "date": meta["date"], "git_commit": meta["git_commit"],
                      "source": csv_path.name, "replotted": meta["replotted"]})
    plot(rows, out_dir / f"{prefix}.png", meta)
    for c in cl:
        print(f"  {c['id']}: {c['verdict']}\n      {c['numbers']}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", type=int, default=2, help="parallel runs (at most 2)")
    ap.add_argument("--timeout", type=float, default=900.0, help="per-run limit in seconds")
    ap.add_argument("--quick", action="store_true", help="short runs (1 s, s = 1..2) for a smoke test")
    ap.add_argument("--out", type=Path, default=common.RESULTS)
    ap.add_argument("--prefix", default=None, help="output name (default fig6_slope, fig6_slope_quick with --quick)")
    ap.add_argument("--replot", action="store_true",
                    help="no runs: re-read <prefix>.csv and its .meta.json, rewrite them and redo the claims and PNG")
    args = ap.parse_args()
    prefix = args.prefix or ("fig6_slope_quick" if args.quick else "fig6_slope")
    if args.replot:
        return replot(args.out, prefix)

    binary = common.find_binary()
    info = common.machine_info(binary)
    model = load_model(binary)
    jobs = make_jobs(args.quick)
    print(f"fig6: {len(jobs)} runs with {binary}", file=sys.stderr)
    t0 = time.perf_counter()
    rows = run_all(jobs, model, binary, args.workers, args.timeout)
    total_s = time.perf_counter() - t0

    cl = claims(rows)
    e_tol = model.total_mass * abs(model.g[2]) * 0.01
    meta = {"command": common.command_line(), **info, "loadavg_after_1_5_15": list(os.getloadavg()),
            "script_wall_s": round(total_s, 1), "workers": min(args.workers, common.MAX_WORKERS),
            "timeout_s": args.timeout, "config": f"configs/{CONFIG}.yaml", "quick": args.quick,
            "sweeps": {
                "dt": f"{'1' if args.quick else '10'} s, contact_grid 1 (80 points), NE mu = {MU_BASE}, "
                      f"PBFD C_par = {MU_BASE} C_perp/(2 v_ref dt); NE dt {NE_DTS}, PBFD dt {PBFD_DTS}",
                "contacts": f"contact_grid s = {GRIDS[:2] if args.quick else GRIDS}; PBFD dt = {PBFD_SWEEP_DT}, "
                            f"{'1' if args.quick else '10'} s, C_perp and C_par x 4/(s+1)^2; NE dt = {NE_SWEEP_DT}, "
                            f"{0.05 if args.quick else CONTACT_NE_DURATION} s only (Lemke: ~6 s of CPU per step at s = 4), "
                            "wall_10s_s = wall x 10 / simulated time",
                "friction": f"NE dt = {NE_SWEEP_DT} mu {MU_GRID}; PBFD dt = {PBFD_SWEEP_DT} C_par = mu C_perp/(2 v_ref dt)"},
            "c_perp": C_PERP, "v_ref_mps": V_REF,
            "stability": {"e_tol_J": e_tol, "e_tol_rule": "M g x 1 cm",
                          "v_bound_rule": "sqrt(2 (E0 + e_tol) / m_link)", "penetration_bound_m": PEN_BOUND,
                          "definition": "completed, finite, E(t) - min_{s<=t} E(s) <= e_tol, link COM speed <= v_bound, "
                                        "penetration <= bound; stable_e0_only uses E(t) - E(0) <= e_tol instead"},
            "timing": "time_s = cpu_s = user + system CPU seconds of the bigstep process (single-threaded; start-up "
                      "and file output included, ~0.01 s); the plots and claims use it because the 2-core machine is "
                      "shared (wall time counts the other users). wall_time_s = summary.json wall_time_s (the stepping "
                      f"loop). Runs {min(args.workers, common.MAX_WORKERS)} at a time.",
            "claims": cl}
    csv_path = common.write_csv(args.out / f"{prefix}.csv", rows, FIELDS, meta)
    claims_path = common.write_csv(args.out / f"{prefix}_claims.csv", cl, CLAIM_FIELDS,
                                   {"command": meta["command"], "date": meta["date"], "git_commit": meta["git_commit"],
                                    "source": f"{prefix}.csv"})
    png = args.out / f"{prefix}.png"
    plot(rows, png, meta)

    common.print_table(rows, ["sweep", "method", "dt", "contact_grid", "mu", "c_par", "steps", "time_s", "wall_time_s", "time_10s_s",
                              "iterations_mean", "iterations_max", "converged_fraction", "mean_contacts",
                              "max_energy_rise_J", "max_energy_rise_runmin_J", "max_link_speed_mps", "stable",
                              "stable_e0_only"],
                       {"time_s": ".3g", "wall_time_s": ".3g", "time_10s_s": ".3g", "iterations_mean": ".1f", "converged_fraction": ".4f",
                        "mean_contacts": ".1f", "max_energy_rise_J": ".3g", "max_energy_rise_runmin_J": ".3g",
                        "max_link_speed_mps": ".3g", "c_par": ".3g"})
    print("\nunstable runs:")
    for r in rows:
        if not r["stable"]:
            print(f"  {r['sweep']} {r['method']} dt={r['dt']:g} s={r['contact_grid']} mu={r['mu']:g}: {r['unstable_reason']}")
    print("\nclaims:")
    for c in cl:
        print(f"  {c['id']}: {c['verdict']}\n      {c['numbers']}")
    print(f"\nwrote {csv_path}\n      {claims_path}\n      {png}\n(total {total_s:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
