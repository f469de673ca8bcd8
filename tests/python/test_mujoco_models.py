"""Imported MJCF / URDF models against MuJoCo itself: gymnasium's hopper, walker2d,
half_cheetah, ant and humanoid (from the installed gymnasium package) and example-robot-data's Go1
URDF. At seeded random states bigstep's mass matrix and bias forces equal mj_fullM / qfrc_bias
through the velocity map J = d qvel / d theta_dot (free roots use Euler angles in bigstep):
    H + diag(armature) = J^T M_mj J,      c + g = J^T (qfrc_bias + M_mj Jdot theta_dot);
contact-free NE-LCP trajectories equal MuJoCo's Euler integrator at the same dt (exactly where the
coordinates are MuJoCo's own, hinge / slide models; to the Euler-angle vs quaternion integration
difference with a free root)."""
import os
import sys
from pathlib import Path

import gymnasium  # scripts/setup.sh installs mujoco, gymnasium, example-robot-data: a missing one fails
import mujoco
import numpy as np
import pytest

# the module from build/python, as the bigstep_py fixture (conftest.py) finds it; not built = failure
_PY = Path(os.environ.get("BIGSTEP_PYTHONPATH", Path(__file__).resolve().parents[2] / "build" / "python"))
assert (_PY / "bigstep").is_dir(), f"{_PY}/bigstep not built: run scripts/build.sh (needs pip nanobind)"
sys.path.insert(0, str(_PY))
import bigstep  # noqa: E402

ASSETS = os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets")
# what bigstep drops from each file, by name (model.allow); everything else is converted
ALLOW = {"hopper": [], "walker2d": [], "half_cheetah": [], "ant": [], "humanoid": ["tendons"]}
FREE_ROOT = {"ant", "humanoid"}


def gym(name):
    return os.path.join(ASSETS, name + ".xml")


def allow(names):
    return ["model.allow=[" + ", ".join(names) + "]"] if names else []


def random_state(bm, rng):
    """theta within the joint ranges (hinges: the middle of the range), theta_dot ~ N(0, 1)."""
    arr = bm.arrays()
    lo, hi = arr["dof_range"][:, 0], arr["dof_range"][:, 1]
    limited = arr["dof_limited"][:, 0] == 1
    th = rng.uniform(-0.5, 0.5, bm.n_q)
    th[limited] = lo[limited] + (hi[limited] - lo[limited]) * rng.uniform(0.2, 0.8, limited.sum())
    th += bm.theta0 * (~limited)  # keep the root near qpos0 (the free root's height)
    return th, rng.normal(0, 1, bm.n_q)


def mj_at(m, d, qpos, qvel):
    d.qpos[:] = qpos
    d.qvel[:] = qvel
    mujoco.mj_forward(m, d)
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M)
    return M, d.qfrc_bias.copy()


@pytest.mark.parametrize("name", sorted(ALLOW))
def test_mass_matrix_and_bias_equal_mujoco(name):
    bm = bigstep.load_model(gym(name), allow(ALLOW[name]))
    m = mujoco.MjModel.from_xml_path(gym(name))
    d = mujoco.MjData(m)
    assert bm.imported and bm.n_q == m.nv
    rng = np.random.default_rng(5)
    for _ in range(5):
        th, thd = random_state(bm, rng)
        qpos, qvel = bm.qpos_from_theta(th), bm.qvel_from_theta_dot(th, thd)
        M, bias = mj_at(m, d, qpos, qvel)
        J = bm.qvel_jacobian(th)
        # Jdot theta_dot by central differences along theta_dot (J depends on the Euler angles only)
        eps = 1e-6
        Jdot = (bm.qvel_jacobian(th + eps * thd) - bm.qvel_jacobian(th - eps * thd)) / (2 * eps)
        H = bm.mass_matrix(th) + np.diag(bm.armature)
        H_mj = J.T @ M @ J
        assert np.abs(H - H_mj).max() <= 1e-9 * np.abs(H_mj).max(), name
        b = bm.bias(th, thd)
        b_mj = J.T @ (bias + M @ (Jdot @ thd))
        # 1e-9 relative, plus the Jdot difference quotient's O(eps^2) where the root is free
        tol = (1e-9 if name not in FREE_ROOT else 1e-7) * (1 + np.abs(b_mj).max())
        assert np.abs(b - b_mj).max() <= tol, name
        # the coordinate map both ways
        assert np.allclose(bm.theta_from_qpos(qpos), th, atol=1e-12, rtol=0)
        assert np.allclose(bm.theta_dot_from_qvel(th, qvel), thd, atol=1e-10, rtol=0)


@pytest.mark.parametrize("name", sorted(ALLOW))
def test_contact_free_ne_lcp_equals_mujoco_euler(name):
    """From a seeded state with random constant generalised forces, 30 steps at the file's own
    timestep without geoms (bigstep: model.allow geoms; MuJoCo: contact disabled) and inside the
    joint ranges (MuJoCo: limits disabled; bigstep's limits stay inactive, checked). With a free
    root the difference is the O(dt) one of integrating Euler angles vs MuJoCo's quaternion
    (measured on ant: 4e-5 at dt 0.01, 2e-5 at 0.005, 1e-5 at 0.0025 over 0.3 s)."""
    m = mujoco.MjModel.from_xml_path(gym(name))
    if "joint_stiffness" in ALLOW[name]:
        m.jnt_stiffness[:] = 0  # what bigstep dropped, dropped in the oracle too
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_LIMIT
    d = mujoco.MjData(m)
    probe = bigstep.load_model(gym(name), allow(ALLOW[name] + ["geoms"]))
    rng = np.random.default_rng(11)
    th, thd = random_state(probe, rng)
    thd *= 0.3
    fmt = lambda v: "[" + ", ".join(repr(float(x)) for x in v) + "]"  # noqa: E731
    env = bigstep.BatchEnv(gym(name), rollouts=1, seed=0, overrides=allow(ALLOW[name] + ["geoms"]) + [
        "integrator.type=ne_lcp", "batch.perturb_theta=0", "batch.perturb_theta_dot=0",
        "initial.theta=" + fmt(th), "initial.theta_dot=" + fmt(thd)])
    assert env.dt == m.opt.timestep
    d.qpos[:] = probe.qpos_from_theta(th)
    d.qvel[:] = probe.qvel_from_theta_dot(th, thd)
    tau = rng.normal(0, 2, probe.n_q)
    tau[:6 if name in FREE_ROOT else 0] = 0  # forces on the joints only
    # the same generalised force in MuJoCo's coordinates: qfrc = J^-T tau (J = I on hinges / slides)
    for n in range(30):
        theta = env.step(tau[None, :])[0]
        J = probe.qvel_jacobian(probe.theta_from_qpos(d.qpos))
        d.qfrc_applied[:] = np.linalg.solve(J.T, tau)
        mujoco.mj_step(m, d)
        assert env.status[0] == 0
    q_mj = probe.theta_from_qpos(d.qpos)
    arr = probe.arrays()
    lim = arr["dof_limited"][:, 0] == 1
    assert np.all((theta[lim] > arr["dof_range"][lim, 0]) & (theta[lim] < arr["dof_range"][lim, 1]))
    err = np.abs(theta - q_mj).max()
    tol = 1e-9 if name not in FREE_ROOT else 5e-4
    assert err <= tol, (name, err)


# ---- the quadruped URDF (example-robot-data's A1) standing on a floor: configs/a1_stand.yaml ----

A1_SCENE = os.path.join(os.path.dirname(__file__), "..", "..", "configs", "a1_stand.yaml")


def a1_mujoco(bm):
    """MuJoCo's model of the scene: the same URDF with the same edits (free root, floor)."""
    import cmeel  # example-robot-data's install prefix
    urdf = os.path.join(os.path.dirname(os.path.dirname(cmeel.__file__)), "cmeel.prefix", "share",
                        "example-robot-data", "robots", "a1_description", "urdf", "a1.urdf")
    spec = mujoco.MjSpec.from_file(urdf)
    spec.worldbody.first_body().add_freejoint()
    floor = spec.worldbody.add_geom()
    floor.type = mujoco.mjtGeom.mjGEOM_PLANE
    floor.size = [0, 0, 1]
    return spec.compile()


def test_a1_urdf_mass_matrix_and_bias_equal_mujoco():
    bm = bigstep.load_model(A1_SCENE)
    m = a1_mujoco(bm)
    d = mujoco.MjData(m)
    assert bm.imported and bm.n_q == m.nv == 18
    rng = np.random.default_rng(3)
    for _ in range(5):
        th, thd = random_state(bm, rng)
        M, bias = mj_at(m, d, bm.qpos_from_theta(th), bm.qvel_from_theta_dot(th, thd))
        J = bm.qvel_jacobian(th)
        eps = 1e-6
        Jdot = (bm.qvel_jacobian(th + eps * thd) - bm.qvel_jacobian(th - eps * thd)) / (2 * eps)
        H_mj = J.T @ M @ J
        assert np.abs(bm.mass_matrix(th) + np.diag(bm.armature) - H_mj).max() <= 1e-9 * np.abs(H_mj).max()
        b_mj = J.T @ (bias + M @ (Jdot @ thd))
        assert np.abs(bm.bias(th, thd) - b_mj).max() <= 1e-7 * (1 + np.abs(b_mj).max())


@pytest.mark.parametrize("method,dt", [("pbfd", 0.01), ("pbd", 0.01), ("ne_lcp", 0.002), ("ne_mdp", 0.002),
                                       ("nmdp_ne", 0.005), ("nmdp_pbd", 0.005)])
def test_a1_standing_carries_its_weight(method, dt, tmp_path):
    """Standing still under the PD hold for 2 s: the summed normal contact force of the second
    second (steps.csv normal_force_N) equals the weight within 1 %, and the robot stays up."""
    import csv
    import json
    import subprocess
    exe = os.path.join(os.path.dirname(__file__), "..", "..", "build", "bigstep")
    assert os.path.exists(exe), "build/bigstep is not built"
    subprocess.run([exe, "run", A1_SCENE, "--set", f"integrator.type={method}", "--set", f"integrator.dt={dt}",
                    "--out", str(tmp_path), "--quiet"], check=True)
    rows = list(csv.DictReader(open(tmp_path / "steps.csv")))
    force = np.array([float(r["normal_force_N"]) for r in rows[len(rows) // 2:]])
    W = bigstep.load_model(A1_SCENE).weight
    assert abs(force.mean() - W) <= 0.01 * W, (method, force.mean(), W)
    s = json.loads((tmp_path / "summary.json").read_text())
    assert s["converged_fraction"] == 1.0 and s["height_min_m"] > 0.2 and s["tilt_max_rad"] < 0.05


def test_package_paths_and_yaml_import(tmp_path):
    """model: {mjcf: gymnasium:hopper.xml} in a YAML scene is the same model as the file itself;
    a keyframe starts the scene; an unknown allow entry is named."""
    cfg = tmp_path / "hop.yaml"
    cfg.write_text("scene: hop\nmodel: {mjcf: 'gymnasium:hopper.xml'}\nintegrator: {type: ne_lcp}\n")
    a, b = bigstep.load_model(str(cfg)), bigstep.load_model(gym("hopper"))
    th = a.theta0 + 0.1
    assert np.array_equal(a.mass_matrix(th), b.mass_matrix(th)) and a.dt == b.dt == 0.002
    hum = bigstep.load_model(gym("humanoid"), ["model.allow=[tendons]", "initial.keyframe=1"])
    m = mujoco.MjModel.from_xml_path(gym("humanoid"))
    assert np.allclose(hum.qpos_from_theta(hum.theta0), m.key_qpos[1], atol=1e-12)
    with pytest.raises(ValueError, match=r"model.allow\[0\] = wings"):
        bigstep.load_model(gym("hopper"), ["model.allow=[wings]"])


FAIL_BITS = (bigstep.STATUS_NOT_CONVERGED | bigstep.STATUS_NONFINITE | bigstep.STATUS_FACTOR_FAILED
             | bigstep.STATUS_GIMBAL_LOCK)


@pytest.mark.parametrize("name", sorted(ALLOW))
def test_every_integrator_runs_the_model(name):
    """0.1 s of each gymnasium model (its own timestep, geoms and floor, qpos0) with every
    integrator: every step converges and the state stays finite."""
    for method in ["pbfd", "pbd", "ne_lcp", "ne_mdp", "nmdp_ne", "nmdp_pbd"]:
        env = bigstep.BatchEnv("gymnasium:" + name + ".xml", rollouts=2, seed=1,
                               overrides=allow(ALLOW[name]) + [f"integrator.type={method}"])
        for _ in range(int(round(0.1 / env.dt))):
            theta = env.step(np.zeros((env.rollouts, env.n_q)))
            # informational bits (restarted, ended on the small-step test with res <= 100 eps_r s) are
            # converged steps; the failure bits are not
            assert np.all(env.status & FAIL_BITS == 0), (name, method, env.status)
        assert np.all(np.isfinite(theta)), (name, method)


def test_hopper_task_actuation_equals_mujoco_ctrl(tmp_path):
    """The Hopper-v5 task's action path (ctrl -> ctrlrange clamp -> gear 200 motor, with the joints'
    armature 1 and damping 1) against MuJoCo's own ctrl: the hopper.xml with its joint limits off,
    no contacts (bigstep: model.allow geoms; MuJoCo: contact disabled), MuJoCo's Euler at the file's
    2 ms, 1.5 x ctrlrange periodic controls so the clamp acts; the trajectories agree to 1e-9 over
    0.6 s (bench/experiments/hopper_gap.py: the import and the actuation are not the MuJoCo transfer gap)."""
    text = open(gym("hopper")).read()
    j = '<joint armature="1" damping="1" limited="true"/>'
    assert text.count(j) == 1
    xml = tmp_path / "hopper_nolimits.xml"
    xml.write_text(text.replace(j, j.replace("true", "false")))
    m = mujoco.MjModel.from_xml_path(str(xml))
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    d = mujoco.MjData(m)
    from bigstep.envs import task_path
    core = bigstep._bigstep.VecEnvCore(task_path("hopper"), 1, 0, [
        "integrator.type=ne_lcp", "integrator.order=1", "contact.friction=power",  # NE-LCP's own settings
        "integrator.dt=0.002", "batch.perturb_theta=0", "batch.perturb_theta_dot=0", "task.terminate_when_unhealthy=false", "model.allow=[geoms]", f"model.mjcf={xml}"], "cpu", False)
    core.reset(0)
    core.set_state(0, d.qpos.copy(), d.qvel.copy())
    worst = 0.0
    for n in range(300):
        a = 1.5 * np.sin(2 * np.pi * 2.0 * n * 0.002 + np.array([0.0, 0.8, 1.6]))
        d.ctrl[:] = a
        mujoco.mj_step(m, d)
        core.step(a[None, :])
        worst = max(worst, np.abs(core.qpos[0] - d.qpos).max())
    assert np.abs(d.qpos[3:]).max() > 0.5  # the joints moved
    assert worst <= 1e-9, worst
