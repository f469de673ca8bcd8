"""Stable-Baselines3 conformance: SB3's gym env checker on bigstep.make, the SB3
VecEnv adapter through SB3's own VecEnv wrappers (VecCheckNan raises on a non-finite observation,
reward or action; VecMonitor recounts the episodes; VecNormalize) and a short PPO run, plus torch
DLPack zero copy. Each test skips with the reason when stable_baselines3 / torch are not installed
(scripts/install_torch.sh installs both)."""
import numpy as np
import pytest


def test_sb3_check_env(bigstep_py):
    pytest.importorskip("stable_baselines3", reason="stable_baselines3 not installed (scripts/install_torch.sh)")
    from stable_baselines3.common.env_checker import check_env
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(bigstep_py.make("hopper", seed=0), warn=True)
    # SB3's only remark is its float32 recommendation: bigstep's actions are float64 (the C++ core's
    # type, no cast); any other warning (action range, unbounded action, reset / step API) fails
    others = [str(w.message) for w in caught if "dtype float64" not in str(w.message)]
    assert not others, others
    check_env(bigstep_py.make("walker2d", seed=1))


def test_sb3_vecenv_wrappers_and_episode_accounting(bigstep_py):
    pytest.importorskip("stable_baselines3", reason="stable_baselines3 not installed (scripts/install_torch.sh)")
    from stable_baselines3.common.utils import check_for_correct_spaces
    from stable_baselines3.common.vec_env import VecCheckNan, VecEnv, VecMonitor, VecNormalize, is_vecenv_wrapped
    n, horizon = 3, 6
    raw = bigstep_py.SB3VecEnv(bigstep_py.make_vec("hopper", num_envs=n, backend="cpu", seed=3, episode_steps=horizon))
    assert isinstance(raw, VecEnv)
    check_for_correct_spaces(raw, raw.observation_space, raw.action_space)
    env = VecNormalize(VecMonitor(VecCheckNan(raw, raise_exception=True)), norm_reward=False)
    assert is_vecenv_wrapped(env, VecMonitor) and is_vecenv_wrapped(env, VecCheckNan)
    obs = env.reset()
    assert obs.shape == (n, 11) and np.isfinite(obs).all()
    rng = np.random.default_rng(0)
    ep_ret, episodes = np.zeros(n), 0
    for _ in range(2 * horizon):
        a = rng.uniform(-0.3, 0.3, (n, 3))
        obs, rew, done, infos = env.step(a)
        assert obs.shape == (n, 11) and rew.shape == (n,) and rew.dtype == np.float32
        ep_ret += env.get_original_reward()
        for i in np.flatnonzero(done):
            # SB3's conventions: terminal_observation in the space, TimeLimit.truncated on a time limit
            term_obs = infos[i]["terminal_observation"]
            assert raw.observation_space.contains(term_obs)
            ep = infos[i]["episode"]  # VecMonitor's recount of the episode
            assert ep["r"] == pytest.approx(ep_ret[i], rel=1e-5) and ep["l"] <= horizon
            assert infos[i]["TimeLimit.truncated"] == (ep["l"] == horizon)
            ep_ret[i], episodes = 0.0, episodes + 1
    assert episodes >= n  # every env finished at least one episode (time limit at most `horizon`)
    # the running observation mean saw the batch
    assert env.obs_rms.count > 2 * horizon * n and np.isfinite(env.obs_rms.var).all()
    # a NaN action is caught by SB3's VecCheckNan before it reaches bigstep
    with pytest.raises(ValueError, match="nan"):
        env.step(np.full((n, 3), np.nan))


def test_sb3_ppo_smoke(bigstep_py):
    sb3 = pytest.importorskip("stable_baselines3", reason="stable_baselines3 not installed (scripts/install_torch.sh)")
    import torch
    torch.set_num_threads(1)
    venv = bigstep_py.SB3VecEnv(bigstep_py.make_vec("hopper", num_envs=2, backend="cpu", seed=0))
    model = sb3.PPO("MlpPolicy", venv, n_steps=64, batch_size=64, n_epochs=2, seed=0, device="cpu")
    model.learn(256)
    assert model.num_timesteps >= 256
    obs = venv.reset()
    a, _ = model.predict(obs, deterministic=True)
    assert a.shape == (2, 3) and venv.action_space.contains(a[0].astype(np.float64))


def test_torch_dlpack_zero_copy(bigstep_py):
    torch = pytest.importorskip("torch", reason="torch not installed (scripts/install_torch.sh)")
    venv = bigstep_py.make_vec("hopper", num_envs=4, backend="cpu", seed=0)
    obs, _ = venv.reset(seed=0)
    t_obs = torch.from_dlpack(obs)
    assert t_obs.data_ptr() == obs.__array_interface__["data"][0] == venv.core.obs.__array_interface__["data"][0]
    assert t_obs.dtype == torch.float64 and tuple(t_obs.shape) == obs.shape
    before = t_obs.clone()
    obs2, rew, term, trunc, _ = venv.step(np.full((4, 3), 0.5))
    # the tensor is a view of the persistent buffer: it sees the step's new observation
    assert not torch.equal(t_obs, before)
    np.testing.assert_array_equal(t_obs.numpy(), obs2)
    for a in (rew, term, venv.core.episode_step):
        assert torch.from_dlpack(a).data_ptr() == a.__array_interface__["data"][0]
