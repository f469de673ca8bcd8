"""bigstep.BatchEnv (python/bindings.cpp): K rollouts stepped with an RL policy's torques from numpy.
Same engines as the CLI: seeded, deterministic, a bad action flags its rollout only, shapes checked."""
import numpy as np
import pytest

from conftest import ROOT

CHAIN = str(ROOT / "configs" / "chain_floating_ground.yaml")
LIFT = "initial.theta=[0, 0, 0.05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]"


def policy(env, t):
    """Stand-in for a policy: hinge torques that differ per rollout and change every step."""
    k = np.arange(env.rollouts)[:, None]
    i = np.arange(env.n_q)[None, :]
    tau = 0.4 * np.sin(0.3 * t + 0.7 * k + i)
    tau[:, :6] = 0  # floating base: unactuated
    return tau


def rollout(env, steps):
    for t in range(steps):
        env.step(policy(env, t))
    return env.theta


def test_team_engine_matches_reference_with_actions(bigstep_py):
    ref = bigstep_py.BatchEnv(CHAIN, rollouts=3, seed=4, overrides=[LIFT, "batch.randomize_mass=0.3"])
    team = bigstep_py.BatchEnv(CHAIN, rollouts=3, seed=4, overrides=[LIFT, "batch.randomize_mass=0.3", "batch.engine=team"])
    assert ref.backend == "cpu_batched" and team.backend == "cpu_team_emulation"
    assert team.theta.shape == (3, 15) and team.n_q == 15 and len(team.dof_names) == 15
    a, b = rollout(ref, 20), rollout(team, 20)
    assert np.array_equal(ref.iterations, team.iterations)
    assert np.max(np.abs(a - b)) < 1e-9
    assert team.time == pytest.approx(20 * team.dt)
    assert len(set(np.round(team.mass_scale, 12))) == 3  # randomised per rollout (total-mass ratio)
    ls = team.link_mass_scale  # (K, n_link): each link its own factor
    assert ls.shape[0] == 3 and ls.shape[1] > 1 and len(set(np.round(ls[0], 12))) == ls.shape[1]
    assert np.array_equal(ls, ref.link_mass_scale) and np.all(np.abs(np.log(ls)) <= 0.3)
    # the actions matter
    idle = bigstep_py.BatchEnv(CHAIN, rollouts=3, seed=4, overrides=[LIFT, "batch.randomize_mass=0.3", "batch.engine=team"])
    for _ in range(20):
        idle.step(None)
    assert np.max(np.abs(idle.theta - b)) > 1e-3


def test_team_engine_second_order_matches_reference_across_resets(bigstep_py):
    """integrator.order=2: theta_{n-2} carries from one step() to the next, and reset([k]) starts
    rollout k fresh, on the team engine as on the reference (docs/methods/pbfd.md §3.1)."""
    o = [LIFT, "batch.randomize_mass=0.3", "integrator.order=2"]
    def run(env):
        rollout(env, 8)
        env.reset([1])
        return rollout(env, 8)

    ref = bigstep_py.BatchEnv(CHAIN, rollouts=3, seed=4, overrides=o)
    team = bigstep_py.BatchEnv(CHAIN, rollouts=3, seed=4, overrides=o + ["batch.engine=team"])
    a, b = run(ref), run(team)
    assert np.array_equal(ref.iterations, team.iterations)
    assert np.max(np.abs(a - b)) < 1e-9
    first = bigstep_py.BatchEnv(CHAIN, rollouts=3, seed=4, overrides=o[:2] + ["batch.engine=team"])
    assert np.max(np.abs(run(first) - b)) > 1e-6  # not the first-order step


def test_seeded_runs_and_reset_are_bit_identical(bigstep_py):
    env = bigstep_py.BatchEnv(CHAIN, rollouts=4, seed=9, overrides=["batch.engine=team"])
    start = env.theta
    first = rollout(env, 10)
    assert np.array_equal(env.reset(), start) and env.time == 0
    assert np.array_equal(rollout(env, 10), first)
    other = bigstep_py.BatchEnv(CHAIN, rollouts=4, seed=9, overrides=["batch.engine=team"])
    assert np.array_equal(rollout(other, 10), first)
    assert not np.array_equal(bigstep_py.BatchEnv(CHAIN, rollouts=4, seed=10).theta, start)


def test_non_finite_action_flags_its_rollout_only(bigstep_py):
    for engine in ("team", "reference"):
        clean = bigstep_py.BatchEnv(CHAIN, rollouts=3, seed=2, overrides=[LIFT, f"batch.engine={engine}"])
        bad = bigstep_py.BatchEnv(CHAIN, rollouts=3, seed=2, overrides=[LIFT, f"batch.engine={engine}"])
        for t in range(8):
            tau = policy(bad, t)
            if t == 3:
                tau[1, 7] = np.nan
            bad.step(tau)
            clean.step(policy(clean, t))
        assert bad.status[1] & bigstep_py.STATUS_NONFINITE
        assert np.all(np.isfinite(bad.theta))  # held, not poisoned
        assert np.array_equal(bad.theta[[0, 2]], clean.theta[[0, 2]])


def test_bad_inputs_are_named(bigstep_py):
    env = bigstep_py.BatchEnv(CHAIN, rollouts=3)
    with pytest.raises(ValueError, match=r"tau.shape = \(2, 15\).*\(3, 15\)"):
        env.step(np.zeros((2, 15)))
    with pytest.raises(ValueError, match=r"rollouts = 0"):
        bigstep_py.BatchEnv(CHAIN, rollouts=0)
    with pytest.raises(ValueError, match=r"rollouts = 2000000000.*16777216"):
        bigstep_py.BatchEnv(CHAIN, rollouts=2000000000)  # was an uncaught bad_alloc
    with pytest.raises(ValueError, match=r"batch.engine"):
        bigstep_py.BatchEnv(CHAIN, rollouts=2, overrides=["batch.engine=warp"])
    with pytest.raises(ValueError, match=r"no_such.yaml"):
        bigstep_py.BatchEnv("no_such.yaml", rollouts=2)
    with pytest.raises(ValueError, match=r"--backend"):
        bigstep_py.BatchEnv(CHAIN, rollouts=2, backend="tpu")


def test_partial_reset_starts_new_episodes(bigstep_py):
    """RL auto-reset: reset([k, ...]) restarts those rollouts from fresh seeded states (a new
    episode each time) and leaves the others running; a failed rollout comes back to life."""
    env = bigstep_py.BatchEnv(CHAIN, rollouts=3, seed=8, overrides=[LIFT, "batch.engine=team"])
    start = env.theta
    for t in range(6):
        tau = policy(env, t)
        if t == 2:
            tau[1, 9] = np.inf
        env.step(tau)
    assert env.status[1] & bigstep_py.STATUS_NONFINITE
    before = env.theta
    theta = env.reset([1])
    assert list(env.episode) == [0, 1, 0] and env.status[1] == 0
    assert np.array_equal(theta[[0, 2]], before[[0, 2]])  # the others go on
    assert not np.allclose(theta[1], start[1])              # a new episode, not a replay
    rollout(env, 5)
    assert env.status[1] == 0 and np.all(np.isfinite(env.theta))
    with pytest.raises(ValueError, match="rollout index = 7"):
        env.reset([7])


def _field_table():
    """(kind, name, rows, cols) of every field of core/model_fields.h, read from the header itself."""
    import re
    text = (ROOT / "core" / "model_fields.h").read_text()
    return re.findall(r"X\((int|real|u8|u32),\s*(\w+),\s*(\w+),\s*(\w+)\)", text)


def test_model_arrays_export_every_table_field(bigstep_py):
    """bigstep.model_arrays: one (rows, cols) array per field of the one field table, with its
    kind's dtype and the Model's values (per-DOF damping / armature / spring / range / limit stiffness set
    by overrides on hinge l2 = DOF 7, after the floating base's 6 and l1's)."""
    table = _field_table()
    assert len(table) >= 31 and len({n for _, n, _, _ in table}) == len(table)
    over = ["model.links[2].damping=0.5", "model.links[2].armature=0.02", "model.links[2].range=[-0.5, 0.7]",
            "model.links[2].limit_stiffness=300", "model.links[2].stiffness=4", "model.links[2].springref=-0.2",
            "model.actuators=[{joint: l2, type: position, kp: 5, gear: 2}]"]
    a = bigstep_py.model_arrays(CHAIN, overrides=over)
    assert sorted(a) == sorted(n for _, n, _, _ in table)
    n_q = 15
    sizes = {"n_link": a["link_parent"].shape[0], "n_q": a["dof_link"].shape[0], "n_point": a["point_link"].shape[0],
             "n_plane": a["plane_offset"].shape[0], "n_point_pair": a["point_pair_point"].shape[0], "n_geom": a["geom_type"].shape[0],
             "n_pair": a["pair_geom_a"].shape[0], "n_u": a["actuator_dof"].shape[0],
             "n_body_pair": a["body_pair_link"].shape[0]}
    assert sizes["n_q"] == n_q and sizes["n_link"] == 10
    assert sizes["n_geom"] == sizes["n_point"] + sizes["n_plane"] > 0  # legacy points and terrain become geoms
    assert sizes["n_pair"] == sizes["n_point"] * sizes["n_plane"] == sizes["n_point_pair"]
    assert sizes["n_body_pair"] == 0  # every pair is a point on a plane
    dtypes = {"int": np.int32, "real": np.float64, "u8": np.uint8, "u32": np.uint32}
    for kind, name, rows, cols in table:
        shape = (sizes[rows], sizes[cols] if cols in sizes else int(cols))
        assert a[name].shape == shape, name
        assert a[name].dtype == dtypes[kind], name
    assert a["link_parent"][:3, 0].tolist() == [-1, 0, 1]
    assert np.allclose(a["link_Ro"][0].reshape(3, 3), np.eye(3))
    assert a["dof_revolute"][:, 0].tolist() == [0, 0, 0, 1, 1, 1] + [1] * 9
    assert a["dof_damping"][7, 0] == 0.5 and a["dof_armature"][7, 0] == 0.02
    assert np.count_nonzero(a["dof_damping"]) == 1 and np.count_nonzero(a["dof_armature"]) == 1
    assert a["dof_stiffness"][7, 0] == 4 and a["dof_springref"][7, 0] == -0.2
    assert np.count_nonzero(a["dof_stiffness"]) == 1 and np.count_nonzero(a["dof_springref"]) == 1
    assert a["dof_limited"][:, 0].tolist() == [0] * 7 + [1] + [0] * 7
    assert a["dof_range"][7].tolist() == [-0.5, 0.7] and a["dof_limit_k"][7, 0] == 300
    assert sizes["n_u"] == 1 and a["actuator_dof"][0, 0] == 7 and a["actuator_type"][0, 0] == 1
    assert a["actuator_kp"][0, 0] == 5 and a["actuator_gear"][0, 0] == 2
    assert np.array_equal(a["dof_anc"][7], [0, 0, 1, 1, 1, 1, 1, 1, 1, 1])  # l2's hinge moves l2..l9
    assert np.all(a["geom_type"][:sizes["n_point"], 0] == 1) and np.all(a["geom_type"][sizes["n_point"]:, 0] == 0)
    assert np.all(a["pair_geom_b"][:, 0] >= sizes["n_point"])  # the world plane is b
    env = bigstep_py.BatchEnv(CHAIN, rollouts=1, overrides=over)
    b = env.model_arrays
    assert sorted(b) == sorted(a) and all(np.array_equal(a[n], b[n]) for n in a)


def test_batch_env_charts_and_world_angles(bigstep_py):
    # a floating base started past 45 degrees of pitch, in free fall: its first step re-anchors the chart
    # (docs/methods/orientation.md); theta_world undoes the chart and keeps the world orientation
    lift = "initial.theta=[0, 0, 3.0, 0.2, 1.2, -0.1, 0, 0, 0, 0, 0, 0, 0, 0, 0]"  # high above the floor
    env = bigstep_py.BatchEnv(CHAIN, rollouts=2, seed=1, overrides=[lift, "batch.perturb_theta_dot=0"])
    np.testing.assert_array_equal(env.chart, np.tile(np.eye(3).ravel(), (2, 1)))
    np.testing.assert_array_equal(env.theta_world, env.theta)  # identity charts: the same angles
    env.step()
    C = env.chart.reshape(2, 3, 3)
    assert not np.allclose(C[0], np.eye(3))
    np.testing.assert_allclose(C[0] @ C[0].T, np.eye(3), atol=1e-14)
    assert abs(env.theta[0, 4]) < 0.1           # the angles now start near the new chart's origin
    assert abs(env.theta_world[0, 4] - 1.2) < 0.1  # the world pitch moved by one step only
