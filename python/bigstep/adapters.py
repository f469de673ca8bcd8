"""Adapters of :class:`bigstep.envs.BigstepVectorEnv` to the vector-env interfaces of
Stable-Baselines3 (``stable_baselines3.common.vec_env.VecEnv``) and rsl_rl (``rsl_rl.env.VecEnv``).

Both hand out copies of the observations by default: SB3's and rsl_rl's rollout loops keep the
previous step's observation object while stepping (``self._last_obs``, ``transition.observations``)
and would see it overwritten by a view of the persistent buffer.

Neither library is a dependency: the SB3 adapter subclasses SB3's VecEnv when it is importable,
the rsl_rl adapter gives torch tensors when torch is importable (numpy arrays otherwise).
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from .envs import BigstepVectorEnv

try:  # SB3's base class when installed, so isinstance checks and VecEnv wrappers work
    from stable_baselines3.common.vec_env import VecEnv as _SB3VecEnv
except ImportError:  # pragma: no cover - exercised where SB3 is absent
    class _SB3VecEnv:  # the interface SB3 documents, enough for the shape tests
        def __init__(self, num_envs, observation_space, action_space):
            self.num_envs = num_envs
            self.observation_space = observation_space
            self.action_space = action_space
            self.reset_infos = [{} for _ in range(num_envs)]
            self._seeds = [None for _ in range(num_envs)]
            self._options = [{} for _ in range(num_envs)]
            self.render_mode = None

        def step(self, actions):
            self.step_async(actions)
            return self.step_wait()

        def seed(self, seed=None):
            if seed is None:
                seed = int(np.random.randint(0, 2**31 - 1))
            self._seeds = [seed + i for i in range(self.num_envs)]
            return self._seeds

        def _reset_seeds(self):
            self._seeds = [None for _ in range(self.num_envs)]


class SB3VecEnv(_SB3VecEnv):
    """A bigstep VectorEnv as an SB3 ``VecEnv``: ``reset() -> obs``, ``step_wait() -> (obs, rewards,
    dones, infos)`` with ``infos[i]["terminal_observation"]`` and ``infos[i]["TimeLimit.truncated"]``
    for the envs whose episode ended (SB3's auto-reset convention, the VectorEnv's SAME_STEP)."""

    def __init__(self, venv: BigstepVectorEnv):
        self.venv = venv
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)
        self._actions: Optional[np.ndarray] = None

    def reset(self) -> np.ndarray:
        seed = self._seeds[0] if getattr(self, "_seeds", None) else None
        obs, _ = self.venv.reset(seed=seed)
        self._reset_seeds()
        return np.array(obs, copy=True)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, dtype=np.float64).reshape(self.num_envs, -1)

    def step_wait(self):
        obs, rew, term, trunc, info = self.venv.step(self._actions)
        done = term | trunc
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        flags = info["flags"]
        for i in np.flatnonzero(done):
            infos[i]["terminal_observation"] = info["final_obs"][i]
            infos[i]["TimeLimit.truncated"] = bool(trunc[i] and not term[i])
        for i in np.flatnonzero(flags):
            infos[i]["bigstep_flags"] = int(flags[i])
        return np.array(obs, copy=True), np.array(rew, dtype=np.float32), done.copy(), infos

    def close(self) -> None:
        self.venv.close()

    def _indices(self, indices) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        return [indices] if isinstance(indices, int) else list(indices)

    def get_attr(self, attr_name: str, indices=None) -> list:
        return [getattr(self.venv, attr_name) for _ in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        setattr(self.venv, attr_name, value)

    def env_method(self, method_name: str, *args, indices=None, **kwargs) -> list:
        return [getattr(self.venv, method_name)(*args, **kwargs) for _ in self._indices(indices)]

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False for _ in self._indices(indices)]

    def get_images(self) -> Sequence[Optional[np.ndarray]]:
        return [None for _ in range(self.num_envs)]


class RslRlVecEnv:
    """A bigstep VectorEnv with rsl_rl's ``VecEnv`` interface: ``num_envs``, ``num_actions``,
    ``num_obs``, ``max_episode_length``, ``episode_length_buf``, ``device``,
    ``get_observations() -> (obs, extras)``, ``reset() -> (obs, extras)``,
    ``step(actions) -> (obs, rewards, dones, extras)`` with ``extras["time_outs"]`` (truncations,
    rsl_rl's bootstrap mask) and ``extras["observations"] = {}``. Tensors when torch is installed
    (``device="cpu"``), numpy arrays otherwise."""

    def __init__(self, venv: BigstepVectorEnv, device: str = "cpu"):
        self.venv = venv
        self.num_envs = venv.num_envs
        self.num_actions = int(venv.single_action_space.shape[0])
        self.num_obs = int(venv.single_observation_space.shape[0])
        self.num_privileged_obs = None
        self.max_episode_length = int(venv.core.episode_steps)
        self.device = device
        self.cfg: dict = {}
        try:
            import torch  # noqa: F401
            self._torch = torch
        except ImportError:
            self._torch = None
        venv.reset()

    def _t(self, a: np.ndarray, dtype=np.float32):
        a = np.array(a, dtype=dtype, copy=True)
        return self._torch.from_numpy(a).to(self.device) if self._torch else a

    @property
    def episode_length_buf(self):
        """(num_envs,) steps of the current episodes (a view of the C++ buffer when numpy)."""
        buf = self.venv.core.episode_step
        return self._torch.from_dlpack(buf) if self._torch and self.device == "cpu" else buf

    @episode_length_buf.setter
    def episode_length_buf(self, value):
        # rsl_rl randomises the episode phase at start (init_at_random_ep_len)
        v = value.cpu().numpy() if hasattr(value, "cpu") else np.asarray(value)
        self.venv.core.episode_step[:] = np.minimum(v.astype(np.int32), self.max_episode_length - 1)

    def get_observations(self):
        return self._t(self.venv.core.obs), {"observations": {}}

    def reset(self):
        obs, _ = self.venv.reset()
        return self._t(obs), {"observations": {}}

    def step(self, actions):
        a = actions.detach().cpu().numpy() if hasattr(actions, "detach") else np.asarray(actions)
        obs, rew, term, trunc, info = self.venv.step(a.astype(np.float64))
        extras = {"time_outs": self._t(trunc), "observations": {}, "bigstep_flags": self._t(info["flags"], np.int64)}
        return self._t(obs), self._t(rew), self._t(term | trunc), extras
