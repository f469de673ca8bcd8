"""End-to-end checks of `bigstep run`: outputs, overrides and error paths."""
import csv
import json

import pytest

CONFIG = "configs/box_slide.yaml"


def test_run_writes_outputs(bigstep, tmp_path):
    bigstep("run", CONFIG, "--set", "integrator.duration=0.5", "--set", "metrics.stop_at_rest=false",
            "--out", tmp_path, "--quiet", check=0)
    s = json.loads((tmp_path / "summary.json").read_text())
    for key in ["scene", "integrator", "optimizer", "dt", "steps", "sim_time_s", "wall_time_s",
                "iterations_mean", "iterations_max", "converged_fraction", "sliding_distance_m"]:
        assert key in s, key
    assert s["steps"] == 50 and s["converged_fraction"] == 1.0
    rows = list(csv.reader(open(tmp_path / "trajectory.csv")))
    assert rows[0][0] == "t" and len(rows[0]) == 4 and len(rows) == 52
    # PBFD friction per corner is 2 C_par d^2 v dt = k v N (k = 2 C_par dt / C_perp): the speed
    # decays as exp(-k g t), so x(t) = (1 - exp(-k g t)) / (k g) = 0.190 m at t = 0.5 s
    import math
    k = 2 * 3.0e7 * 0.01 / 1.23e6
    expect = (1 - math.exp(-k * 9.81 * 0.5)) / (k * 9.81)
    assert abs(s["sliding_distance_m"] - expect) < 0.05 * expect
    # steps.csv: one row per step; the box slides on flat ground without vertical acceleration,
    # so the summed normal contact force it reports carries its weight m g = 9.81 N
    steps = list(csv.DictReader(open(tmp_path / "steps.csv")))
    assert list(steps[0]) == ["step", "t", "iterations", "residual", "status", "wall_s", "normal_force_N"]
    assert len(steps) == 50
    force = [float(r["normal_force_N"]) for r in steps]
    assert abs(sum(force) / len(force) - 9.81) < 0.01 * 9.81


def test_set_overrides_key(bigstep, tmp_path):
    bigstep("run", CONFIG, "--set", "integrator.dt=0.05", "--set", "integrator.type=pbd",
            "--set", "integrator.duration=0.5", "--out", tmp_path, "--quiet", check=0)
    s = json.loads((tmp_path / "summary.json").read_text())
    assert s["dt"] == 0.05 and s["integrator"] == "pbd" and s["steps"] == 10


def test_bad_override_value_names_file_key_value(bigstep, tmp_path):
    p = bigstep("run", CONFIG, "--set", "integrator.dt=abc", "--out", tmp_path, check=2)
    line = p.stderr.strip()
    assert len(line.splitlines()) == 1
    assert CONFIG in line and "integrator.dt" in line and "abc" in line


@pytest.mark.parametrize("sets,needles", [
    (["contact.friction=dry"], ["contact.friction", "dry"]),
    (["contact.friction=coulomb", "contact.stiction_velocity=-1"], ["contact.stiction_velocity", "-1"]),
    (["contact.friction=coulomb", "contact.mu=-0.2"], ["contact.mu", "-0.2"]),
    (["contact.friction=coulomb", "integrator.type=pbd"], ["contact.friction", "coulomb", "integrator.type = pbd"]),
])
def test_bad_friction_law_exits_2_naming_key_and_value(bigstep, tmp_path, sets, needles):
    args = [a for kv in sets for a in ("--set", kv)]
    p = bigstep("run", CONFIG, *args, "--out", tmp_path, check=2)
    assert len(p.stderr.strip().splitlines()) == 1 and CONFIG in p.stderr
    for n in needles:
        assert n in p.stderr, (n, p.stderr)


def test_coulomb_box_slides_v0_squared_over_2_mu_g(bigstep, tmp_path):
    """contact.friction=coulomb: the box from 1 m/s stops after v0^2 / (2 mu g) less the first-order
    floor v0 dt / 2 (docs/methods/pbfd.md §4.9), whatever C_par says."""
    bigstep("run", CONFIG, "--set", "contact.friction=coulomb", "--set", "contact.mu=0.25", "--set", "contact.c_par=1e9",
            "--out", tmp_path, "--quiet", check=0)
    s = json.loads((tmp_path / "summary.json").read_text())
    expect = 1.0 / (2 * 0.25 * 9.81) - 1.0 * 0.01 / 2
    assert s["stopped_at_rest"] and abs(s["sliding_distance_m"] - expect) < 0.01 * expect, s["sliding_distance_m"]


def test_unknown_key_is_rejected(bigstep, tmp_path):
    p = bigstep("run", CONFIG, "--set", "integrator.foo=1", "--out", tmp_path, check=2)
    assert "integrator.foo" in p.stderr and "unknown key" in p.stderr


def test_help_documents_keys(bigstep):
    p = bigstep("run", "--help", check=0)
    for key in ["integrator.type", "integrator.optimizer", "integrator.dt", "integrator.duration",
                "contact.c_perp", "contact.c_par", "contact.mu", "contact.friction", "contact.stiction_velocity",
                "--set", "--out"]:
        assert key in p.stdout, key



SCENES = ["configs/box_slide.yaml", "configs/chain_fixed.yaml", "configs/chain_floating_ground.yaml",
          "configs/chain_slope.yaml", "configs/quadruped_spider.yaml", "configs/quadruped_robosimian.yaml"]


@pytest.mark.parametrize("scene", SCENES)
@pytest.mark.parametrize("integrator", ["pbd", "pbfd", "ne_lcp", "ne_mdp", "nmdp_ne", "nmdp_pbd"])
def test_every_integrator_runs_every_scene(bigstep, tmp_path, scene, integrator):
    dt = "0.001" if integrator.startswith("ne_") else "0.01"
    bigstep("run", scene, "--set", f"integrator.type={integrator}", "--set", f"integrator.dt={dt}",
            "--set", "integrator.duration=0.05", "--out", tmp_path, "--quiet", check=0)
    s = json.loads((tmp_path / "summary.json").read_text())
    assert s["integrator"] == integrator and s["converged_fraction"] == 1.0
    if "com_final_m" in s:
        assert all(abs(x) < 10 for x in s["com_final_m"])
    else:  # quadruped metrics
        assert s["tilt_max_rad"] < 0.1 and 0.1 < s["height_mean_m"] < 1.0


def test_batched_rollouts_are_seeded_and_thread_independent(bigstep, tmp_path):
    args = ["run", "configs/chain_floating_ground.yaml", "--set", "integrator.duration=0.1",
            "--rollouts", "4", "--seed", "9", "--quiet"]
    bigstep(*args, "--threads", "1", "--out", tmp_path / "a", check=0)
    bigstep(*args, "--threads", "2", "--out", tmp_path / "b", check=0)
    a = (tmp_path / "a" / "rollouts.csv").read_text()
    assert a == (tmp_path / "b" / "rollouts.csv").read_text()
    s = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert s["rollouts"] == 4 and s["backend"] == "cpu_batched" and s["env_steps_per_s"] > 0
    per = s["per_rollout"]  # per-rollout statistics in summary.json, same values as rollouts.csv
    assert all(len(per[key]) == 4 for key in ("steps", "iterations_mean", "iterations_max", "converged_fraction",
                                              "status", "residual"))
    rows = list(csv.DictReader(open(tmp_path / "a" / "rollouts.csv")))
    assert len(rows) == 4 and len({r["l0.x"] for r in rows}) == 4  # perturbed: all different
    assert [float(r["iterations_mean"]) for r in rows] == pytest.approx(per["iterations_mean"], rel=1e-11)


def _rollout_rows(path):
    rows = list(csv.DictReader(open(path / "rollouts.csv")))
    return rows


CHAIN = ["configs/chain_floating_ground.yaml"]
SPIDER_PD = ["configs/quadruped_spider.yaml", "--set", "integrator.type=pbfd", "--set", "integrator.dt=0.02"]


@pytest.mark.parametrize("scene,randomize", [
    (CHAIN, []),
    (CHAIN, ["--set", "batch.randomize_friction=0.5", "--set", "batch.randomize_stiffness=0.5",
             "--set", "batch.randomize_mass=0.5"]),
    (SPIDER_PD, ["--set", "batch.randomize_mass=0.3"]),  # stable-PD servo on a jump reference
])
def test_team_engine_matches_reference_rollouts(bigstep, tmp_path, scene, randomize):
    """batch.engine=team runs the CUDA kernel's cooperative LM iteration on the CPU: it must make
    the same decisions as the reference integrator (same iteration counts) and land on the same
    states to round-off (different summation order: 1e-9 rad/m, the documented team tolerance),
    with per-rollout C_perp / C_par / mass scale and with the scene's PD servo."""
    args = ["run", *scene, "--rollouts", 3, "--seed", 4, "--set", "integrator.duration=0.3", "--quiet", *randomize]
    bigstep(*args, "--out", tmp_path / "ref", check=0)
    bigstep(*args, "--set", "batch.engine=team", "--out", tmp_path / "team", check=0)
    ref, team = _rollout_rows(tmp_path / "ref"), _rollout_rows(tmp_path / "team")
    assert json.loads((tmp_path / "team" / "summary.json").read_text())["backend"] == "cpu_team_emulation"
    assert len(ref) == len(team) == 3
    dofs = [k for k in ref[0] if k not in ("rollout", "steps", "iterations_mean", "iterations_max",
                                           "converged_fraction", "status", "c_par", "mu", "c_perp", "mass_scale")]
    assert len(dofs) == (15 if scene == CHAIN else 18)
    for a, b in zip(ref, team):
        assert a["iterations_mean"] == b["iterations_mean"] and a["iterations_max"] == b["iterations_max"]
        assert max(abs(float(a[d]) - float(b[d])) for d in dofs) < 1e-9
    # the rollouts differ from each other (seeded perturbation), so the comparison is not trivial
    assert abs(float(ref[0][dofs[0]]) - float(ref[1][dofs[0]])) > 1e-6
    if "batch.randomize_stiffness=0.5" in randomize:  # per-rollout C_perp, C_par reached the team engine
        assert ref[0]["c_perp"] != ref[1]["c_perp"] and ref[0]["c_par"] != ref[1]["c_par"]
    if randomize:
        assert ref[0]["mass_scale"] != ref[1]["mass_scale"]
        per = json.loads((tmp_path / "ref" / "summary.json").read_text())["per_rollout"]
        assert len(per["link_mass_scale"]) == 3 and per["mass_scale"][0] == pytest.approx(float(ref[0]["mass_scale"]))


def test_team_engine_rejects_unsupported_integrator(bigstep, tmp_path):
    p = bigstep("run", CONFIG, "--rollouts", 2, "--set", "integrator.type=pbd", "--set", "batch.engine=team",
                "--out", tmp_path, check=2)
    line = p.stderr.strip()
    assert len(line.splitlines()) == 1 and "batch.engine=team" in line and "pbd" in line


def test_backend_auto_says_why(bigstep, tmp_path):
    bigstep("run", CONFIG, "--rollouts", 2, "--backend", "auto", "--set", "integrator.duration=0.1",
            "--out", tmp_path, "--quiet", check=0)
    s = json.loads((tmp_path / "summary.json").read_text())
    assert s["backend_reason"] and s["backend"] in ("cpu_batched", "cuda_team_fp64")
    if s["backend"] == "cpu_batched":
        assert "no CUDA device" in s["backend_reason"]


def test_team_schedules_agree_bit_for_bit(bigstep, tmp_path):
    """batch.schedule=rollout (free-running: a converged rollout starts its next step while others
    still iterate, docs/methods/pbfd.md §6) commits exactly the steps lockstep commits: trajectories are independent."""
    args = ["run", "configs/chain_floating_ground.yaml", "--rollouts", 4, "--seed", 2, "--set", "integrator.duration=0.3",
            "--set", "batch.engine=team", "--set", "batch.randomize_mass=0.4", "--quiet"]
    bigstep(*args, "--out", tmp_path / "lock", check=0)
    bigstep(*args, "--set", "batch.schedule=rollout", "--out", tmp_path / "free", check=0)
    assert (tmp_path / "lock" / "rollouts.csv").read_text() == (tmp_path / "free" / "rollouts.csv").read_text()
    assert (tmp_path / "lock" / "trajectory.csv").read_text() == (tmp_path / "free" / "trajectory.csv").read_text()
    assert json.loads((tmp_path / "free" / "summary.json").read_text())["schedule"] == "rollout"


def test_team_fp32_stays_near_fp64(bigstep, tmp_path):
    """batch.precision=fp32 (eps_r 1e-4, eps_x 1e-6, docs/methods/pbfd.md §6) on the CPU emulation: the sliding box
    ends within 1e-3 m / rad of the FP64 reference (the documented FP32 tolerance of cuda/README.md)."""
    args = ["run", "configs/box_slide.yaml", "--rollouts", 3, "--seed", 5, "--set", "integrator.duration=0.3", "--quiet"]
    bigstep(*args, "--out", tmp_path / "f64", check=0)
    bigstep(*args, "--set", "batch.engine=team", "--set", "batch.precision=fp32", "--out", tmp_path / "f32", check=0)
    s = json.loads((tmp_path / "f32" / "summary.json").read_text())
    assert s["backend"] == "cpu_team_emulation_fp32" and s["precision"] == "fp32"
    a, b = _rollout_rows(tmp_path / "f64"), _rollout_rows(tmp_path / "f32")
    dofs = [k for k in a[0] if k not in ("rollout", "steps", "iterations_mean", "iterations_max",
                                         "converged_fraction", "status", "c_par", "mu", "c_perp", "mass_scale")]
    err = max(abs(float(x[d]) - float(y[d])) for x, y in zip(a, b) for d in dofs)
    assert 0 < err < 1e-3  # single precision really ran (not bit-equal), and stayed close
    assert all(float(r["converged_fraction"]) == 1.0 for r in b)


def test_precision_and_schedule_errors_name_the_key(bigstep, tmp_path):
    p = bigstep("run", CONFIG, "--rollouts", 2, "--set", "batch.precision=fp32", "--out", tmp_path, check=2)
    assert "batch.precision" in p.stderr and "fp32" in p.stderr and "reference engine" in p.stderr
    p = bigstep("run", "configs/quadruped_spider.yaml", "--rollouts", 2, "--set", "integrator.type=pbfd",
                "--set", "batch.engine=team", "--set", "batch.schedule=rollout", "--out", tmp_path, check=2)
    assert "batch.schedule" in p.stderr and "lockstep" in p.stderr
    p = bigstep("run", CONFIG, "--set", "batch.precision=fp16", "--out", tmp_path, check=2)
    assert "batch.precision" in p.stderr and "fp16" in p.stderr


# ---- --set with list indices ----

def test_set_with_list_index(bigstep, tmp_path):
    bigstep("run", CONFIG, "--set", "model.links[0].box.mass=2", "--set", "integrator.duration=0.1",
            "--out", tmp_path, "--quiet", check=0)
    p = bigstep("inspect", CONFIG, "--set", "model.links[0].box.mass=2", "--states", 0, check=0)
    assert json.loads(p.stdout)["links"][0]["mass"] == 2.0
    p = bigstep("run", CONFIG, "--set", "model.links[3].mass=2", "--out", tmp_path, check=2)
    line = _one_line(p)
    assert "model.links[3].mass" in line and "model.links has length 1" in line


def test_help_is_the_key_table(bigstep):
    out = bigstep("run", "--help", check=0).stdout
    lines = {ln.split()[0]: ln for ln in out.splitlines() if ln.startswith("  ") and "." in ln.split()[0]}
    assert "(0.01; MJCF/URDF: its option timestep)" in lines["integrator.dt"] and "(1e5;" in lines["contact.c_perp"]
    assert " 1 " in lines["contact.slip_speed"] and " 2 " in lines["contact.alpha"]
    assert "model.links[i].box.mass" in lines and "pbd | pbfd | ne_lcp" in lines["integrator.type"]


# ---- bad input: exit 2 and one line naming the key and the limit ----

def _one_line(p):
    line = p.stderr.strip()
    assert len(line.splitlines()) == 1, p.stderr
    return line


def test_map_key_that_is_a_list(bigstep, tmp_path):
    cfg = tmp_path / "k.yaml"
    cfg.write_text("{scene: x, model: {links: [{name: a, mass: 1, [0]: 0}]}}\n")
    line = _one_line(bigstep("run", cfg, "--out", tmp_path, check=2))  # was an uncaught exception, exit 134
    assert "model.links[0]" in line and "[0] is not a plain name" in line


@pytest.mark.parametrize("setting,needles", [
    ("batch.seed=1e30", ["batch.seed = 1e30", "2^64 - 1"]),
    ("metrics.rest_time=1e8", ["metrics.rest_time = 1e8", "at most 100000000"]),
    ("integrator.dt=1e-300", ["integrator.duration", "integrator.dt = 1e-300", "expected 1 to 100000000"]),
    ("integrator.duration=42949673.01", ["integrator.duration = 42949673.01", "expected 1 to 100000000"]),
    ("integrator.duration=21474836.48", ["integrator.duration = 21474836.48", "expected 1 to 100000000"]),
    ("integrator.dt=30", ["integrator.duration", "integrator.dt = 30", "= 0 steps"]),  # dt > duration: 0 steps
])
def test_out_of_range_settings(bigstep, tmp_path, setting, needles):
    line = _one_line(bigstep("run", CONFIG, "--set", setting, "--out", tmp_path, check=2))
    assert CONFIG in line and all(n in line for n in needles), line


def test_too_many_rollouts(bigstep, tmp_path):
    line = _one_line(bigstep("run", CONFIG, "--rollouts", 2000000000, "--out", tmp_path, check=2))
    assert "batch.rollouts = 2000000000" in line and "16777216" in line


@pytest.mark.parametrize("states", ["1e8", "100000000", "-1", "x"])
def test_inspect_states_is_bounded(bigstep, states):
    line = _one_line(bigstep("inspect", CONFIG, "--states", states, check=2))
    assert "--states" in line and "[0, 10000]" in line


def test_long_list_echo_is_capped(bigstep, tmp_path):
    cfg = tmp_path / "big.yaml"
    cfg.write_text("scene: x\nmodel: {links: [{name: a, joint: hinge, axis: [0, 1, 0], mass: 1}]}\n"
                   "initial: {theta: [" + ", ".join(["0"] * 1000000) + "]}\n")
    line = _one_line(bigstep("run", cfg, "--out", tmp_path, check=2))
    assert "initial.theta" in line and "(1000000 elements)" in line and len(line) < 300


def test_xml_model_errors_name_the_file(bigstep, tmp_path):
    """An MJCF / URDF file goes through MuJoCo's compiler: what it or bigstep cannot take is one line
    naming the file (MuJoCo's own message for a file it cannot compile), exit 2."""
    empty = tmp_path / "empty.xml"
    empty.write_text('<mujoco model="empty">\n  <worldbody/>\n</mujoco>\n')
    mesh = tmp_path / "mesh.xml"
    mesh.write_text('<mujoco>\n  <worldbody><body><geom type="mesh" mesh="m"/></body></worldbody>\n</mujoco>\n')
    for cmd in ("run", "inspect"):
        line = _one_line(bigstep(cmd, empty, check=2))
        assert str(empty) in line and "at least one link" in line
        line = _one_line(bigstep(cmd, mesh, check=2))
        assert str(mesh) in line and "MuJoCo could not load it" in line and "mesh 'm' not found" in line


def test_directory_as_config(bigstep, tmp_path):
    line = _one_line(bigstep("run", tmp_path, check=2))
    assert "is a directory" in line


def test_body_sinking_through_terrain_fails_the_run(bigstep, tmp_path):
    """contact.c_perp = 0: the box falls through the ground. Each step after it went deeper than
    max(0.05 m, radius) is flagged penetrated, and the run exits 1 naming contact.c_perp."""
    p = bigstep("run", CONFIG, "--set", "contact.c_perp=0", "--set", "metrics.stop_at_rest=false",
                "--set", "integrator.duration=0.3", "--out", tmp_path / "one", "--quiet", check=1)
    line = _one_line(p)
    assert "sank through the terrain" in line and "contact.c_perp = 0" in line
    s = json.loads((tmp_path / "one" / "summary.json").read_text())
    assert s["penetrated"] is True
    status = [r["status"] for r in csv.DictReader(open(tmp_path / "one" / "steps.csv"))]
    assert status[0] == "ok" and status[-1] == "penetrated"
    # batched: a status bit per rollout (STATUS_PENETRATED = 64)
    p = bigstep("run", CONFIG, "--set", "contact.c_perp=0", "--set", "integrator.duration=0.3", "--rollouts", 2,
                "--out", tmp_path / "batch", "--quiet", check=1)
    assert "2 of 2 rollouts sank through the terrain" in _one_line(p)
    s = json.loads((tmp_path / "batch" / "summary.json").read_text())
    assert s["rollouts_penetrated"] == 2 and all(st & 64 for st in s["per_rollout"]["status"])
    # the same scene with its contact stiffness is not flagged
    bigstep("run", CONFIG, "--set", "integrator.duration=0.3", "--out", tmp_path / "ok", "--quiet", check=0)
    assert json.loads((tmp_path / "ok" / "summary.json").read_text())["penetrated"] is False


@pytest.mark.parametrize("integrator,dt", [("pbfd", 0.01), ("pbd", 0.01), ("ne_lcp", 0.002), ("ne_mdp", 0.002),
                                           ("nmdp_ne", 0.01), ("nmdp_pbd", 0.01)])
def test_geoms_limits_scene_every_integrator(bigstep, tmp_path, integrator, dt):
    """configs/arm_ball_geoms.yaml: the damped arm swings into its 0.6 rad stop and rests there, the
    ball (r = 0.08 m, released with its centre at 0.6 m) lands on the world box (top at 0.2 m): at rest
    its centre is at 0.28 m minus the method's contact depth (penalty sqrt(m g / C_perp) = 7 mm for
    PBD/PBFD; NE-MDP keeps the depth its impact pressed in, ~2 cm), never through the box."""
    bigstep("run", "configs/arm_ball_geoms.yaml", "--set", f"integrator.type={integrator}", "--set",
            f"integrator.dt={dt}", "--out", tmp_path, "--quiet", check=0)
    rows = list(csv.DictReader(open(tmp_path / "trajectory.csv")))
    arm = [float(r["arm.angle"]) for r in rows]
    z = [0.6 + float(r["ball.z"]) for r in rows]  # ball centre height
    assert max(arm) < 0.6 + 0.05 and abs(arm[-1] - 0.6) < 0.02
    assert min(z) > 0.28 - 0.03 and 0.28 - 0.025 < z[-1] < 0.28 + 1e-3
    assert abs(z[-1] - z[-10]) < 1e-3  # at rest


def test_run_render_writes_a_gif_and_a_filmstrip(bigstep, tmp_path):
    """bigstep run --render: model.xml (export-mjcf) + trajectory.csv through MuJoCo's offscreen
    renderer; the filmstrip is not blank and the box is drawn in different places (it slides)."""
    import numpy as np
    from PIL import Image
    p = bigstep("run", CONFIG, "--set", "integrator.duration=0.5", "--set", "metrics.stop_at_rest=false",
                "--out", tmp_path, "--quiet", "--render", check=0)
    assert (tmp_path / "model.xml").exists() and "render: wrote" in p.stdout
    gif = Image.open(tmp_path / "render.gif")
    assert gif.n_frames >= 10
    strip = np.asarray(Image.open(tmp_path / "filmstrip.png").convert("L"), dtype=float)
    assert strip.std() > 5  # not a blank image
    tiles = np.split(strip, 6, axis=1)
    assert np.abs(tiles[0] - tiles[-1]).mean() > 0.5  # the first and last frames differ
    # render without a run: one line naming what is missing
    q = bigstep("render", tmp_path / "nothing", check=2)  # a usage error
    assert "trajectory.csv not found" in q.stderr or "model.xml not found" in q.stderr


def test_plot_run_on_single_and_batch_folders(bigstep, tmp_path):
    """tools/plot_run.py draws a single run (units per panel, integer iteration ticks, force) and a
    batch folder (per-rollout distributions; it used to crash looking for steps.csv)."""
    import subprocess
    import sys
    bigstep("run", CONFIG, "--set", "integrator.duration=0.3", "--out", tmp_path / "one", "--quiet", check=0)
    bigstep("run", CONFIG, "--set", "integrator.duration=0.3", "--rollouts", 3, "--out", tmp_path / "many",
            "--quiet", check=0)
    for d in ("one", "many"):
        p = subprocess.run([sys.executable, "tools/plot_run.py", str(tmp_path / d)], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        assert (tmp_path / d / "plot.png").stat().st_size > 10000
    p = subprocess.run([sys.executable, "tools/plot_run.py", str(tmp_path)], capture_output=True, text=True)
    assert p.returncode == 1 and "summary.json not found" in p.stderr


def test_version_and_help_of_every_command(bigstep):
    """--version names the version and commit; --help of every command goes to stdout with exit 0."""
    v = bigstep("--version", check=0).stdout
    assert v.startswith("bigstep 0.1.0 (commit ") and "MuJoCo import" in v
    for cmd in (["run"], ["inspect"], ["export-mjcf"], ["render"]):
        p = bigstep(*cmd, "--help", check=0)
        assert p.returncode == 0 and "usage" in p.stdout.lower() and p.stderr == "", (cmd, p.returncode, p.stderr)
    # the benchmarks are a separate program; the user CLI has no bench command
    assert "bench" not in bigstep("--help", check=0).stdout
    assert bigstep("bench", check=2).returncode == 2


def test_help_of_every_benchmark(bigstep_bench):
    """bigstep-bench --help and each benchmark's --help go to stdout with exit 0; no benchmark is exit 2."""
    for cmd in ([], ["gpu-speedup"], ["vs-mujoco"], ["id-runtime"]):
        p = bigstep_bench(*cmd, "--help", check=0)
        assert "usage: bigstep-bench" in p.stdout and p.stderr == "", (cmd, p.stderr)
    assert "which benchmark" in bigstep_bench(check=2).stderr


def test_render_a_grid_of_batch_rollouts(bigstep, tmp_path):
    """A batch run saves its first rollouts; render --grid 4 tiles them 2 x 2, --rollout K draws one."""
    from PIL import Image
    bigstep("run", CONFIG, "--rollouts", 4, "--set", "integrator.duration=0.2", "--set", "batch.perturb_theta=0.05",
            "--out", tmp_path, "--quiet", check=0)
    assert bigstep("render", tmp_path, "--grid", 4, "--frames", 3, "--strip", 2, "--height", 120, "--width", 160,
                   check=0).returncode == 0
    assert Image.open(tmp_path / "filmstrip.png").size == (2 * 2 * 160, 2 * 120)
    p = bigstep("render", tmp_path, "--rollout", 9, check=1)
    assert "no rollout 9" in p.stderr and "first 4 rollouts" in p.stderr


def test_openmp_workers_sleep_unless_the_user_chose(tmp_path):
    """The CLI and the Python module default OMP_WAIT_POLICY to passive; a user's choice is kept."""
    import os
    import subprocess
    import sys

    from conftest import BIN, ROOT

    def version(**env):
        e = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
        e.update(env)
        p = subprocess.run([str(BIN), "--version"], capture_output=True, text=True, env=e)
        assert p.returncode == 0, p.stderr
        return p.stdout.splitlines()[-1]

    assert version() == "OpenMP wait policy: passive"
    assert version(OMP_WAIT_POLICY="active") == "OpenMP wait policy: active"
    assert version(GOMP_SPINCOUNT="300000").startswith("OpenMP wait policy: unset")
    e = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    e["PYTHONPATH"] = os.environ.get("BIGSTEP_PYTHONPATH", str(ROOT / "build" / "python"))
    p = subprocess.run([sys.executable, "-c", "import os, bigstep; print(os.environ['OMP_WAIT_POLICY'])"],
                       capture_output=True, text=True, env=e)
    assert p.returncode == 0 and p.stdout.strip() == "passive", p.stderr
