"""Smoke test of `bigstep-bench vs-mujoco --quick` on the floating chain: the command runs the same
scene in MuJoCo and bigstep (after checking that the chain's MJCF is the YAML model: same mass
matrix), and writes its CSVs with the documented columns and finite, positive numbers. Speed is
never asserted."""
import csv
import math

COLUMNS = ["scene", "simulator", "integrator", "dt", "role", "horizon_s", "steps", "threads", "rollouts",
           "wall_s", "sim_s_per_wall_s", "sim_s_per_cpu_s", "iterations_per_step", "com_err_max_m", "com_err_rms_m",
           "com_err_vs_other_ref_m", "max_penetration_m", "stable", "note"]


def test_vs_mujoco_quick_chain(bigstep_bench, tmp_path):
    # 0.6 s: the chain (dropped from 1 m) lands at ~0.45 s, so contact is in every run
    bigstep_bench("vs-mujoco", "--quick", "--scenes", "chain", "--horizon", "0.6", "--rollouts", "2",
            "--threads", "2", "--out", tmp_path, check=0)
    rows = list(csv.DictReader(open(tmp_path / "vs_mujoco.csv")))
    assert list(rows[0]) == COLUMNS
    runs = {(r["simulator"], r["integrator"], float(r["dt"]), int(r["threads"])) for r in rows if r["role"] == "run"}
    # MuJoCo at 5, 10, 20 ms; PBFD at 0.01, 0.02, 0.05; NE-LCP at 5 ms; each on 1 and 2 threads
    expect = {("mujoco", "default", dt) for dt in (0.005, 0.01, 0.02)} | \
             {("bigstep", "pbfd", dt) for dt in (0.01, 0.02, 0.05)} | {("bigstep", "ne_lcp", 0.005)}
    assert runs == {e + (t,) for e in expect for t in (1, 2)}
    refs = [r for r in rows if r["role"] == "reference"]
    # each simulator's own fine-dt reference: MuJoCo at 5 ms / 16, bigstep NE-LCP at 5 ms / 8
    assert sorted((r["simulator"], r["integrator"], float(r["dt"])) for r in refs) == \
        [("bigstep", "ne_lcp", 0.000625), ("mujoco", "default", 0.0003125)]
    for r in rows:
        assert r["scene"] == "chain"
        for k in ["wall_s", "sim_s_per_wall_s"] + (["sim_s_per_cpu_s"] if r["threads"] == "1" else []):
            assert math.isfinite(float(r[k])) and float(r[k]) > 0, (k, r)
        for k in ["iterations_per_step", "com_err_max_m", "com_err_rms_m", "max_penetration_m"]:
            assert math.isfinite(float(r[k])) and float(r[k]) >= 0, (k, r)
        assert float(r["com_err_rms_m"]) <= float(r["com_err_max_m"]) + 1e-15
        # all runs land: some contact depth, but nothing sinks through (< 5 cm)
        assert 0 < float(r["max_penetration_m"]) < 0.05, r
        if r["simulator"] == "bigstep":
            assert float(r["iterations_per_step"]) > 0
    # every coarse run differs from its fine reference, and stays within a chain length of it
    for r in rows:
        if r["role"] == "run":
            assert 0 < float(r["com_err_max_m"]) < 2.0, r
    stab = list(csv.DictReader(open(tmp_path / "vs_mujoco_stability.csv")))
    assert list(stab[0]) == ["scene", "simulator", "integrator", "start_dt", "largest_stable_dt",
                             "first_unstable_dt", "why"]
    assert len(stab) == 3
    for s in stab:
        assert float(s["largest_stable_dt"]) >= 0 and float(s["start_dt"]) > 0
    assert (tmp_path / "vs_mujoco.meta.json").exists()


def test_vs_mujoco_bad_scene(bigstep_bench, tmp_path):
    p = bigstep_bench("vs-mujoco", "--scenes", "nosuch", "--out", tmp_path, check=2)
    assert "nosuch" in p.stderr
