"""Smoke test of `bigstep-bench accuracy --quick` on the contact-free chain and of
bench/perf/accuracy_fronts.py on its output: the documented columns, one common and the own
references, every run's errors finite, the fine RK4 reference far more accurate than any run.
Skipped when the harness was built without MuJoCo. Speed is never asserted."""
import csv
import math
import subprocess
import sys

import pytest

from conftest import ROOT

COLUMNS = ["scene", "simulator", "variant", "settings", "role", "dt", "default_dt", "model_default", "horizon_s",
           "steps", "timing_reps", "cpu_s_per_sim_s", "iterations_per_step", "err_common_m", "err_common_rms_m",
           "err_own_m", "err_own_rms_m", "energy_drift_J", "max_penetration_m", "stable", "note"]


def run_quick(bigstep_bench, tmp_path, *extra):
    p = bigstep_bench("accuracy", "--quick", "--scenes", "chain_fixed", "--horizon", "0.5", "--min-cpu", "0",
                      "--out", tmp_path, *extra)
    if p.returncode == 2 and "built without MuJoCo" in p.stderr:
        pytest.skip("bigstep-bench built without MuJoCo")
    assert p.returncode == 0, (p.stdout, p.stderr)
    return list(csv.DictReader(open(tmp_path / "accuracy.csv")))


def test_accuracy_quick_chain_fixed(bigstep_bench, tmp_path):
    rows = run_quick(bigstep_bench, tmp_path, "--add-variants", "pbd=integrator.type=pbd")
    assert list(rows[0]) == COLUMNS
    roles = [(r["role"], r["simulator"], r["variant"]) for r in rows if r["role"] != "run"]
    assert roles == [("common_reference", "mujoco", "rk4_elliptic"), ("own_reference", "mujoco", "rk4_pyramidal"),
                     ("own_reference", "mujoco", "rk4_elliptic"), ("own_reference", "bigstep", "ne_lcp")]
    runs = {(r["simulator"], r["variant"], float(r["dt"])) for r in rows if r["role"] == "run"}
    # quick: MuJoCo euler / rk4 x both cones at 4x and 1x its 2 ms; bigstep pbfd, ne_lcp at 0.05, 0.01
    mj = {("mujoco", f"{i}_{c}", dt) for i in ("euler", "rk4") for c in ("pyramidal", "elliptic") for dt in (0.008, 0.002)}
    bs = {("bigstep", v, dt) for v in ("pbfd", "ne_lcp") for dt in (0.05, 0.01)}
    assert runs == mj | bs | {("bigstep", "pbd", dt) for dt in (0.05, 0.01)}
    common = rows[0]
    assert 0 <= float(common["err_common_m"]) < 1e-4  # RK4 at 125 us against itself at 250 us
    for r in rows:
        if r["role"] != "run":
            continue
        assert r["stable"] == "1", r
        for k in ["cpu_s_per_sim_s", "err_common_m", "err_own_m", "energy_drift_J"]:
            assert math.isfinite(float(r[k])) and float(r[k]) >= 0, (k, r)
        # every coarse run is farther from the reference than the reference's own error estimate
        assert float(r["err_common_m"]) > float(common["err_common_m"]), r
        assert r["model_default"] == ("1" if r["variant"] == "euler_pyramidal" else "0")
    # PBFD's first-order step loses energy: at 50 ms more than at 10 ms
    drift = {float(r["dt"]): float(r["energy_drift_J"]) for r in rows if r["variant"] == "pbfd"}
    assert drift[0.05] > drift[0.01] > 0
    # the post-processing reads it: a table on stdout, the speed-up CSV and the PNG
    p = subprocess.run([sys.executable, "bench/perf/accuracy_fronts.py", str(tmp_path / "accuracy.csv")],
                       capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert "| chain_fixed | common |" in p.stdout
    assert (tmp_path / "accuracy_chain_fixed.png").stat().st_size > 0
    sp = list(csv.DictReader(open(tmp_path / "accuracy_speedup.csv")))
    assert {r["level"] for r in sp} == {"1", "3", "10", "30"}


def test_accuracy_bad_arguments(bigstep_bench, tmp_path):
    for args, word in [(("--scenes", "nosuch"), "nosuch"), (("--variants", "x"), "--variants"),
                       (("--mujoco", "verlet"), "verlet"), (("--dt", "0,1"), "--dt")]:
        p = bigstep_bench("accuracy", *args, "--out", tmp_path)
        if p.returncode == 2 and "built without MuJoCo" in p.stderr:
            pytest.skip("bigstep-bench built without MuJoCo")
        assert p.returncode == 2 and word in p.stderr, (args, p.stderr)
