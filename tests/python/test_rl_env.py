"""bigstep as an RL environment: the Gymnasium v5 task definitions equal Gymnasium's own
MuJoCo environments at the same qpos / qvel (1e-9), gymnasium's env checker, SAME_STEP auto-reset,
zero-copy views (DLPack), pickling, bad actions flagged per env, a 1e6 action that neither stalls
nor disturbs the other envs, and the SB3 / rsl_rl adapters' shapes."""
import os
import pickle
import sys
from pathlib import Path

import gymnasium
import mujoco
import numpy as np
import pytest

_PY = Path(os.environ.get("BIGSTEP_PYTHONPATH", Path(__file__).resolve().parents[2] / "build" / "python"))
assert (_PY / "bigstep").is_dir(), f"{_PY}/bigstep not built: run scripts/build.sh (needs pip nanobind)"
sys.path.insert(0, str(_PY))
import bigstep  # noqa: E402

# task name -> (Gymnasium id, how far the root is lifted so that no geom touches the floor)
TASKS = {"hopper": ("Hopper-v5", 0.3), "walker2d": ("Walker2d-v5", 0.3), "half_cheetah": ("HalfCheetah-v5", 1.0),
         "ant": ("Ant-v5", 0.2), "humanoid": ("Humanoid-v5", 0.3)}


def random_state(genv, lift, rng):
    """A state near the initial one, lifted off the floor (contact forces are then zero in both:
    MuJoCo's contact solve is warm-started in Gymnasium and cold in bigstep's probe), with the
    quaternion's w > 0 (bigstep's qpos convention)."""
    u = genv.unwrapped
    qpos = u.init_qpos + rng.uniform(-0.1, 0.1, u.model.nq)
    qvel = rng.uniform(-0.5, 0.5, u.model.nv)
    free = u.model.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE
    if free:
        qpos[3:7] = u.init_qpos[3:7] + rng.uniform(-0.05, 0.05, 4)
        qpos[3:7] /= np.linalg.norm(qpos[3:7])
        qpos[2] += lift
    else:
        qpos[1] += lift
        qpos[2] = rng.uniform(-0.1, 0.1)  # torso angle within the healthy range
    return qpos, qvel


@pytest.mark.parametrize("task", sorted(TASKS))
def test_observation_and_reward_equal_gymnasium(task):
    """Same qpos / qvel -> the same observation, reward terms and termination as Gymnasium's env."""
    gid, lift = TASKS[task]
    genv = gymnasium.make(gid)
    genv.reset(seed=0)
    u = genv.unwrapped
    core = bigstep.VecEnvCore(bigstep.task_path(task), 1, 0, [f"integrator.dt={u.dt!r}"])
    assert core.obs_dim == genv.observation_space.shape[0]
    assert core.action_dim == genv.action_space.shape[0]
    # the ctrlranges (Gymnasium's Box holds them in float32)
    np.testing.assert_allclose(core.action_low, genv.action_space.low, rtol=1e-7)
    np.testing.assert_allclose(core.action_high, genv.action_space.high, rtol=1e-7)
    rng = np.random.default_rng(7)
    for _ in range(3):
        q0, v0 = random_state(genv, lift, rng)
        # observation: bigstep's state set from (qpos, qvel) round-trips through theta
        u.set_state(q0, v0)
        mujoco.mj_rnePostConstraint(u.model, u.data)  # cfrc_ext as Gymnasium's do_simulation leaves it
        assert u.data.ncon == 0
        core.set_state(0, q0, v0)
        np.testing.assert_allclose(core.obs[0], u._get_obs(), rtol=0, atol=1e-9)
        # one Gymnasium step from (q0, v0); our task terms on the same two states
        _, xy0 = core.evaluate(q0, v0, None, np.zeros(2))[::4]
        a = rng.uniform(genv.action_space.low, genv.action_space.high)
        gobs, grew, gterm, _, info = genv.step(a)
        q1, v1 = u.data.qpos.copy(), u.data.qvel.copy()
        obs, rew, term, terms, _ = core.evaluate(q1, v1, a, xy0)
        assert term == gterm
        np.testing.assert_allclose(-terms[1], info["reward_ctrl"], rtol=0, atol=1e-9)
        np.testing.assert_allclose(terms[3], info.get("reward_survive", 0.0), rtol=0, atol=1e-9)
        if task in ("hopper", "walker2d", "half_cheetah"):
            np.testing.assert_allclose(obs, gobs, rtol=0, atol=1e-9)
            np.testing.assert_allclose(rew, grew, rtol=0, atol=1e-9)
            np.testing.assert_allclose(terms[0], info["reward_forward"], rtol=0, atol=1e-9)
        else:
            # Gymnasium's ant / humanoid read xpos / xipos that mj_step left one substep behind
            # qpos; the forward term is checked with MuJoCo's kinematics at the two states
            def tracked(q, v):
                u.set_state(q, v)
                if task == "ant":
                    return u.data.body(1).xpos[0]
                m = u.model.body_mass
                return (m @ u.data.xipos)[0] / m.sum()
            fwd = u._forward_reward_weight * (tracked(q1, v1) - tracked(q0, v0)) / u.dt
            np.testing.assert_allclose(terms[0], fwd, rtol=0, atol=1e-9)
            mujoco.mj_rnePostConstraint(u.model, u.data)
            np.testing.assert_allclose(-terms[2], -u.contact_cost, rtol=0, atol=1e-9)
            np.testing.assert_allclose(rew, terms[0] + terms[3] - terms[1] - terms[2], rtol=0, atol=1e-12)
            u.set_state(q1, v1)
            mujoco.mj_rnePostConstraint(u.model, u.data)
            u.data.ctrl[:] = a
            mujoco.mj_fwdActuation(u.model, u.data)
            np.testing.assert_allclose(obs, u._get_obs(), rtol=0, atol=1e-9)
        genv.reset(seed=1)


def test_gymnasium_env_checker():
    from gymnasium.utils.env_checker import check_env
    env = bigstep.make("hopper", seed=3)
    check_env(env, skip_render_check=True)
    assert isinstance(env, gymnasium.Env)


def test_vector_env_spaces_and_same_step_autoreset():
    venv = bigstep.make_vec("hopper", num_envs=3, backend="cpu", seed=1, episode_steps=3, copy=True)
    assert isinstance(venv, gymnasium.vector.VectorEnv)
    assert venv.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.SAME_STEP
    assert venv.single_action_space.shape == (3,)
    np.testing.assert_array_equal(venv.single_action_space.low, -1.0)
    assert venv.action_space.shape == (3, 3) and venv.observation_space.shape == (3, 11)
    obs0, _ = venv.reset(seed=1)
    a = np.full((3, 3), 0.1)
    for s in range(3):
        obs, rew, term, trunc, info = venv.step(a)
        assert not term.any()
        assert trunc.all() == (s == 2)
    # the ended episodes' last observations; obs already starts the next episode
    assert info["_final_obs"].all()
    last = np.stack(info["final_obs"])
    assert venv.observation_space.contains(obs)
    assert not np.allclose(last, obs)
    np.testing.assert_array_equal(venv.core.episode_step, 0)
    # the next step is the first of the new episode: no final_obs, episode_step 1
    obs, rew, term, trunc, info = venv.step(a)
    assert "final_obs" not in info and not trunc.any()
    np.testing.assert_array_equal(venv.core.episode_step, 1)
    # reset(seed) is reproducible
    again, _ = venv.reset(seed=1)
    np.testing.assert_array_equal(again, obs0)


def test_zero_copy_views_and_dlpack():
    venv = bigstep.make_vec("hopper", num_envs=4, backend="cpu", seed=0)
    obs, _ = venv.reset(seed=0)
    ptr = obs.__array_interface__["data"][0]
    assert ptr == venv.core.obs.__array_interface__["data"][0]
    obs2, rew, term, trunc, _ = venv.step(np.zeros((4, 3)))
    assert obs2.__array_interface__["data"][0] == ptr  # the persistent buffer, updated in place
    # DLPack (torch.from_dlpack takes the same protocol): the same memory
    for a in (obs2, rew, term):
        d = np.from_dlpack(a)
        assert d.__array_interface__["data"][0] == a.__array_interface__["data"][0]
    assert rew.__array_interface__["data"][0] == venv.core.reward.__array_interface__["data"][0]


def test_pickling_rebuilds_the_same_env():
    venv = bigstep.make_vec("hopper", num_envs=2, backend="cpu", seed=5, dt=0.01)
    clone = pickle.loads(pickle.dumps(venv))
    assert clone.dt == 0.01 and clone.num_envs == 2
    a, _ = venv.reset(seed=9)
    b, _ = clone.reset(seed=9)
    np.testing.assert_array_equal(a, b)
    env = pickle.loads(pickle.dumps(bigstep.make("walker2d", seed=2)))
    o, _ = env.reset(seed=4)
    assert o.shape == (17,)


def test_bad_actions_raise_clearly_or_are_flagged():
    venv = bigstep.make_vec("hopper", num_envs=3, backend="cpu", seed=0)
    venv.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions.shape = \(3, 4\)"):
        venv.step(np.zeros((3, 4)))
    with pytest.raises(ValueError, match=r"actions.shape = \(3,\)"):
        venv.step(np.zeros(3))
    with pytest.raises(TypeError, match="actions.dtype"):
        venv.step(np.full((3, 3), "a"))
    with pytest.raises(ValueError, match=r"actions.shape = \(3, 3, 1\): expected \(3, 3\)"):
        venv.core.step(np.zeros((3, 3, 1)))  # the C++ core checks too
    a = np.zeros((3, 3))
    a[0, 0] = np.nan
    a[1, 2] = 7.0
    obs, rew, term, trunc, info = venv.step(a.astype(np.float32))  # float32 is accepted
    assert info["flags"][0] == bigstep.ENV_ACTION_NONFINITE and trunc[0]
    assert info["flags"][1] == bigstep.ENV_ACTION_OUT_OF_RANGE and not trunc[1]
    assert info["flags"][2] == 0
    assert np.isfinite(obs).all()
    with pytest.raises(ValueError, match="task = 'wings'"):
        bigstep.make_vec("wings")
    with pytest.raises(ValueError, match="backend = 'tpu'"):
        bigstep.make("hopper", backend="tpu")


def test_a_1e6_action_neither_stalls_nor_disturbs_the_batch():
    """Torque mode (no ctrlrange clamp) with a 40-iteration budget: env 0 gets 1e6 N m every step and
    is flagged (out of range; budget exceeded where LM needs more), its episode ends (unhealthy or
    truncated) and it is reset, within the budget; envs 1..3 are bit-identical to a run without it."""
    kw = dict(num_envs=4, backend="cpu", seed=3, iteration_budget=40, copy=True,
              overrides=["task.action_mode=torque", "task.torque_limit=200",
                         "integrator.friction_continuation=0",  # it would converge the 1e6 step
                         # the first-order power-law step: it needs more than 40 iterations here
                         "integrator.order=1", "contact.friction=power"])
    clean, bad = bigstep.make_vec("hopper", **kw), bigstep.make_vec("hopper", **kw)
    clean.reset(seed=3)
    bad.reset(seed=3)
    flagged = False
    for s in range(6):
        a = 100 * np.sin(0.3 * s + np.arange(12).reshape(4, 3))
        oc, rc, _, _, _ = clean.step(a)
        a[0, 0] = 1e6
        ob, rb, mb, tb, info = bad.step(a)
        np.testing.assert_array_equal(ob[1:], oc[1:])
        np.testing.assert_array_equal(rb[1:], rc[1:])
        assert bad.core.iterations[0] <= 2 * 40  # two LM attempts (the restart rule) of at most 40
        assert info["flags"][0] & bigstep.ENV_ACTION_OUT_OF_RANGE and (mb[0] or tb[0])
        assert np.isfinite(ob[0]).all() and bad.core.episode_step[0] == 0
        if info["flags"][0] & (bigstep.ENV_BUDGET_EXCEEDED | bigstep.ENV_SOLVER_FAILED):
            flagged = True
            assert tb[0]
    assert flagged


def test_sb3_adapter_shapes():
    venv = bigstep.make_vec("hopper", num_envs=2, backend="cpu", seed=0, episode_steps=2)
    env = bigstep.SB3VecEnv(venv)
    obs = env.reset()
    assert obs.shape == (2, 11) and obs.base is None or obs.base is not venv.core.obs
    env.step_async(np.zeros((2, 3)))
    obs, rew, done, infos = env.step_wait()
    assert obs.shape == (2, 11) and rew.shape == (2,) and done.shape == (2,) and len(infos) == 2
    obs, rew, done, infos = env.step(np.zeros((2, 3)))
    assert done.all()
    assert infos[0]["terminal_observation"].shape == (11,) and infos[0]["TimeLimit.truncated"]
    assert env.get_attr("dt") == [venv.dt, venv.dt]


def test_rsl_rl_adapter_shapes():
    venv = bigstep.make_vec("hopper", num_envs=3, backend="cpu", seed=0, episode_steps=5)
    env = bigstep.RslRlVecEnv(venv)
    assert (env.num_envs, env.num_actions, env.num_obs, env.max_episode_length) == (3, 3, 11, 5)
    obs, extras = env.get_observations()
    assert tuple(obs.shape) == (3, 11) and "observations" in extras
    env.episode_length_buf = np.array([0, 2, 4])
    obs, rew, done, extras = env.step(np.zeros((3, 3), np.float32))
    assert tuple(obs.shape) == (3, 11) and tuple(rew.shape) == (3,) and tuple(done.shape) == (3,)
    # env 2 was at step 4 of 5: its episode timed out
    assert list(np.asarray(extras["time_outs"])) == [0, 0, 1] and list(np.asarray(done)) == [0, 0, 1]
    assert list(np.asarray(env.episode_length_buf)) == [1, 3, 0]


@pytest.mark.parametrize("task", ["hopper", "walker2d", "half_cheetah", "ant", "humanoid", "a1_walk"])
def test_every_task_file_steps(task):
    """Each shipped task: spaces as declared, 10 zero-action steps (0.15-0.5 s) finite, converged,
    no episode ended (each model starts in its standing / resting pose)."""
    venv = bigstep.make_vec(task, num_envs=2, backend="cpu", seed=0)
    obs, _ = venv.reset(seed=0)
    assert obs.shape == (2, venv.core.obs_dim) and venv.single_action_space.shape == (venv.core.action_dim,)
    for _ in range(10):
        obs, rew, term, trunc, info = venv.step(np.zeros(venv.action_space.shape))
        assert np.isfinite(obs).all() and np.isfinite(rew).all()
        assert not (term | trunc).any(), (task, venv.core.qpos)
        assert (info["flags"] == 0).all()


def test_a1_walk_on_the_team_engine_matches_the_reference():
    """a1_walk (feet against the trunk's and legs' boxes: sphere-box body pairs) on batch.engine=team
    through the vector env: built on the team engine (was refused), observations finite and equal to
    the reference engine's over 8 steps of random torques (1e-6: the team tolerance 1e-9 on states, over dt)."""
    rng = np.random.default_rng(3)
    envs = {e: bigstep.make_vec("a1_walk", num_envs=3, backend="cpu", seed=1, overrides=[f"batch.engine={e}"], copy=True)
            for e in ("team", "reference")}
    assert envs["team"].core.engine == "cpu_team_emulation"
    assert envs["reference"].core.engine != "cpu_team_emulation"
    obs = {e: v.reset(seed=1)[0] for e, v in envs.items()}
    np.testing.assert_array_equal(obs["team"], obs["reference"])
    for _ in range(8):
        a = rng.uniform(-1, 1, envs["team"].action_space.shape) * envs["team"].single_action_space.high
        out = {e: v.step(a) for e, v in envs.items()}
        o_team, o_ref = out["team"][0], out["reference"][0]
        assert np.isfinite(o_team).all()
        np.testing.assert_allclose(o_team, o_ref, rtol=0, atol=1e-6)
        assert (out["team"][4]["flags"] == 0).all()


def test_every_integrator_runs_a_task_with_pbfd_settings():
    """The walker2d task file asks for PBFD's second order and dry friction; make_vec(integrator=X)
    runs every other integrator with its own defaults (as explicit overrides), not an error."""
    for integ in ("pbfd", "pbd", "ne_lcp", "ne_mdp", "nmdp_ne", "nmdp_pbd", "compliant"):
        venv = bigstep.make_vec("walker2d", num_envs=2, backend="cpu", integrator=integ, seed=0)
        venv.reset(seed=0)
        obs, *_ = venv.step(np.zeros((2, venv.single_action_space.shape[0])))
        assert np.isfinite(obs).all(), integ
        venv.close()
