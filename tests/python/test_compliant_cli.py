"""Drumwright's compliant solver (integrator.type: compliant) end to end through `bigstep run`:
every scene of the docs/methods/compliant.md §10, the solver's work counters in summary.json, the CPU batched engine
with K perturbed, randomised rollouts, and an imported MJCF model."""
import json
from pathlib import Path

import pytest

COUNTERS = ["friction_solve", "sweeps_mean", "sweeps_max", "nstep_iterations_mean", "nstep_iterations_max",
            "qp_iterations_mean", "qp_iterations_max", "fallbacks", "steps_with_fallback", "inexact_t_steps",
            "steps_flagged"]


def _run(bigstep, out, *args):
    bigstep("run", *args, "--out", out, "--quiet", check=0)
    return json.loads((Path(out) / "summary.json").read_text())


@pytest.mark.parametrize("scene,extra", [
    ("smd", []), ("pendulum_absolute", []), ("pendulum_limit", ["--set", "integrator.duration=0.02"]),
    ("box_foundation", []), ("incline_box", []), ("sphere_stack", ["--set", "integrator.duration=1"]),
])
def test_every_compliant_scene_runs_and_reports_its_counters(bigstep, tmp_path, scene, extra):
    s = _run(bigstep, tmp_path, f"configs/{scene}.yaml", *extra)
    assert s["integrator"] == "compliant" and s["converged_fraction"] == 1.0
    c = s["compliant"]
    assert list(c) == COUNTERS
    assert c["steps_flagged"] == 0 and c["fallbacks"] == 0
    # a mean never exceeds its max; all programs' iterations include the N-step's
    assert c["sweeps_mean"] <= c["sweeps_max"] and c["qp_iterations_mean"] <= c["qp_iterations_max"]
    assert c["nstep_iterations_mean"] <= c["qp_iterations_mean"] + 1e-12


def test_counters_follow_the_friction_solve(bigstep, tmp_path):
    # B5 at mu = 0.375 sticks: the staggered loop needs several sweeps (docs/methods/compliant.md §7.5: ~18.5 at 1e-10) and
    # every sweep runs a T-step cone QP; at mu = 0 there are no tangent rows: one N-step per step
    stick = _run(bigstep, tmp_path / "stick", "configs/incline_box.yaml", "--set", "contact.mu=0.375")["compliant"]
    assert stick["sweeps_mean"] > 3 and stick["sweeps_max"] > stick["sweeps_mean"]
    assert stick["qp_iterations_mean"] > 10 * stick["sweeps_mean"]
    free = _run(bigstep, tmp_path / "free", "configs/incline_box.yaml", "--set", "contact.mu=0")["compliant"]
    assert free["sweeps_max"] == 1 and free["qp_iterations_mean"] == free["nstep_iterations_mean"]
    # B4 with 50 N: 100 rows on 6 DOFs go through the reduced N-step (>= 1 piece a step), no fallback
    b4 = _run(bigstep, tmp_path / "b4", "configs/box_foundation.yaml", "--set", "control.load.force=[0, 0, -50]")
    c = b4["compliant"]
    assert c["nstep_iterations_mean"] >= 1 and c["fallbacks"] == 0 and b4["converged_fraction"] == 1.0


def test_batched_perturbed_randomised_rollouts(bigstep, tmp_path):
    # K = 4 rollouts from perturbed starts (batch.perturb_theta = 0.01: tilted boxes) with friction,
    # contact stiffness and mass randomised per rollout. Before the T-step accepted a max_iter iterate
    # with small residuals, three of these four boxes lost every force and fell through the ramp.
    s = _run(bigstep, tmp_path, "configs/incline_box.yaml", "--set", "integrator.duration=0.3", "--rollouts", "4",
             "--threads", "1", "--seed", "3", "--set", "batch.randomize_friction=0.5",
             "--set", "batch.randomize_stiffness=0.5", "--set", "batch.randomize_mass=0.3")
    assert s["backend"] == "cpu_batched" and s["rollouts"] == 4
    assert s["rollouts_failed"] == 0 and s["converged_fraction"] == 1.0
    per = s["per_rollout"]
    assert len(set(per["mass_scale"])) == 4  # randomised: every rollout its own
    assert all(st == 0 for st in per["status"])


def test_imported_mjcf_model(bigstep, tmp_path):
    gym = pytest.importorskip("gymnasium", reason="gymnasium's MJCF assets are the imported test models")
    xml = Path(gym.__file__).parent / "envs" / "mujoco" / "assets" / "hopper.xml"
    s = _run(bigstep, tmp_path, xml, "--set", "integrator.type=compliant", "--set", "integrator.dt=0.01",
             "--set", "integrator.duration=0.5")
    assert s["integrator"] == "compliant" and s["converged_fraction"] == 1.0
    assert s["compliant"]["sweeps_mean"] > 1  # the foot touches down: friction rows
    assert 0.3 < s["com_final_m"][2] < 2.0


def test_batch_summary_counts_the_compliant_work(bigstep, tmp_path):
    # the batch summary sums every rollout's counters: one unperturbed rollout counts what a single
    # run of the same scene counts (rollout 0 starts unperturbed), and so do K = 3 unperturbed copies
    one = _run(bigstep, tmp_path / "one", "configs/incline_box.yaml", "--set", "integrator.duration=0.3",
               "--set", "contact.mu=0.375")["compliant"]
    b1 = _run(bigstep, tmp_path / "b1", "configs/incline_box.yaml", "--set", "integrator.duration=0.3",
              "--set", "contact.mu=0.375", "--rollouts", "1")["compliant"]
    b3 = _run(bigstep, tmp_path / "b3", "configs/incline_box.yaml", "--set", "integrator.duration=0.3",
              "--set", "contact.mu=0.375", "--rollouts", "3", "--threads", "2", "--set", "batch.perturb_theta=0",
              "--set", "batch.perturb_theta_dot=0")["compliant"]
    assert one["sweeps_mean"] > 1  # friction rows: more than one staggered sweep per step
    assert b1 == one
    assert b3 == one  # means and maxima of identical rollouts equal one rollout's


def test_tilted_box_t_steps_finish(bigstep, tmp_path):
    # a box rolled 0.01 rad on the incline at mu = 0.375 (sticking): the T-step's H is singular up to
    # 1e-12 along directions the box cannot move in; ADMM ran out of iterations on ~10 T-steps per
    # step (296 inexact T-steps, 217 000 QP iterations per step); the interior-point fallback solves
    # them. The staggered loop measures friction by the generalised force G_x^T x it exerts: the T-step's
    # noise along the flat directions (forces that exert nothing) kept |dx| at 1e-7 and ran the loop to
    # its cap of 200 sweeps on most steps; now it settles in 15 on average, 18 at most
    s = _run(bigstep, tmp_path, "configs/incline_box.yaml", "--set", "integrator.duration=0.3",
             "--set", "contact.mu=0.375", "--set", "initial.theta=[0,0,0.035,0,0,0.01]")
    c = s["compliant"]
    assert c["inexact_t_steps"] == 0 and c["steps_flagged"] == 0
    assert c["qp_iterations_mean"] < 20000
    assert c["sweeps_max"] < 50  # was 200 (the cap) when |dx| was the measure
    assert abs(s["sliding_distance_m"]) < 1e-3  # mu > tan 15 deg: it sticks
