"""Conformance of bad actions through bigstep.make / make_vec (envs/vec_env.h
EnvFlag): a wrong shape or dtype raises a clear error naming the expectation; NaN / inf / out of
range are flagged per env (held and truncated / clamped) without touching the other envs; position
actions (task.action_mode=position) are clamped to the joints' ranges and flagged."""
import os
import sys
from pathlib import Path

import numpy as np
import pytest

_PY = Path(os.environ.get("BIGSTEP_PYTHONPATH", Path(__file__).resolve().parents[2] / "build" / "python"))
assert (_PY / "bigstep").is_dir(), f"{_PY}/bigstep not built: run scripts/build.sh (needs pip nanobind)"
sys.path.insert(0, str(_PY))
import bigstep  # noqa: E402


def test_single_env_bad_actions():
    env = bigstep.make("hopper", seed=0)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions.shape = \(4,\): expected \(3,\)"):
        env.step(np.zeros(4))
    with pytest.raises(ValueError, match=r"actions.shape = \(1, 3\)"):
        env.step(np.zeros((1, 3)))
    with pytest.raises(ValueError, match=r"actions.shape = \(\)"):
        env.step(0.0)
    for bad in (np.zeros(3, complex), np.zeros(3, bool), np.array([None, None, None]), np.array(["a", "b", "c"])):
        with pytest.raises(TypeError, match="actions.dtype"):
            env.step(bad)
    # integers, lists and float32 are real numbers: accepted
    env.step([0, 0, 0])
    env.step(np.zeros(3, np.float32))
    for v, flag in ((np.nan, bigstep.ENV_ACTION_NONFINITE), (np.inf, bigstep.ENV_ACTION_NONFINITE),
                    (-np.inf, bigstep.ENV_ACTION_NONFINITE), (1.5, bigstep.ENV_ACTION_OUT_OF_RANGE)):
        env.reset(seed=1)
        obs, rew, term, trunc, info = env.step(np.array([0.0, v, 0.0]))
        assert info["flags"] == flag, v
        assert np.isfinite(obs).all() and np.isfinite(rew)
        if flag == bigstep.ENV_ACTION_NONFINITE:
            assert trunc and not term and rew == 0.0  # held: no progress, no reward
        else:
            assert not trunc


def test_out_of_range_actuator_action_is_clamped_like_mujoco():
    """actuator mode: ctrl is clamped to ctrlrange (MuJoCo), so 1.5 and 1.0 give the same step."""
    a = bigstep.make("hopper", seed=3)
    b = bigstep.make("hopper", seed=3)
    a.reset(seed=3)
    b.reset(seed=3)
    oa = a.step(np.array([1.5, -7.0, 0.2]))[0]
    ob = b.step(np.array([1.0, -1.0, 0.2]))[0]
    np.testing.assert_array_equal(oa, ob)


def test_vector_env_nonfinite_rows_do_not_disturb_the_others():
    K = 4
    clean = bigstep.make_vec("hopper", num_envs=K, backend="cpu", seed=5, copy=True)
    bad = bigstep.make_vec("hopper", num_envs=K, backend="cpu", seed=5, copy=True)
    clean.reset(seed=5)
    bad.reset(seed=5)
    rng = np.random.default_rng(0)
    for s in range(5):
        a = rng.uniform(-1, 1, (K, 3))
        oc = clean.step(a)[0]
        a[0, s % 3] = [np.nan, np.inf, -np.inf][s % 3]
        a[2] = 40.0  # out of range: clamped, flagged
        ob, _, _, trunc, info = bad.step(a)
        assert info["flags"][0] == bigstep.ENV_ACTION_NONFINITE and trunc[0]
        assert info["flags"][2] & bigstep.ENV_ACTION_OUT_OF_RANGE
        np.testing.assert_array_equal(ob[1], oc[1])
        np.testing.assert_array_equal(ob[3], oc[3])


def test_wrong_dtype_and_shape_through_make_vec_and_the_core():
    venv = bigstep.make_vec("hopper", num_envs=2, backend="cpu", seed=0)
    venv.reset(seed=0)
    with pytest.raises(TypeError, match="actions.dtype"):
        venv.step(np.zeros((2, 3), complex))
    with pytest.raises(ValueError, match=r"actions.shape = \(3, 2\): expected \(2, 3\)"):
        venv.step(np.zeros((3, 2)))
    # Fortran order and strided views are copied into the C layout, not misread
    a = np.asfortranarray(np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]]))
    venv2 = bigstep.make_vec("hopper", num_envs=2, backend="cpu", seed=0, copy=True)
    venv2.reset(seed=0)
    venv.reset(seed=0)
    np.testing.assert_array_equal(venv.step(a)[0], venv2.step(np.ascontiguousarray(a))[0])


def test_position_actions_are_clamped_to_the_joint_range_and_flagged():
    venv = bigstep.make_vec("hopper", num_envs=2, backend="cpu", seed=0, copy=True,
                            overrides=["task.action_mode=position", "task.position_kp=300", "task.position_kv=10"])
    lo, hi = venv.single_action_space.low, venv.single_action_space.high
    assert np.isfinite(lo).all() and np.isfinite(hi).all() and (lo < hi).all()  # the joints' ranges
    venv.reset(seed=0)
    a = np.stack([(lo + hi) / 2, (lo + hi) / 2])
    a[1, 0] = hi[0] + 1.0
    _, _, _, _, info = venv.step(a)
    assert info["flags"][0] == 0 and info["flags"][1] == bigstep.ENV_ACTION_OUT_OF_RANGE
    a[1, 0] = np.nan
    _, _, _, trunc, info = venv.step(a)
    assert info["flags"][1] == bigstep.ENV_ACTION_NONFINITE and trunc[1] and not trunc[0]
