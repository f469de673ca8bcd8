"""Gymnasium front end of bigstep's C++ VecEnv (envs/vec_env.h): ``make`` and ``make_vec``.

    import bigstep
    env = bigstep.make("hopper")                           # gymnasium.Env, Hopper-v5 definitions
    venv = bigstep.make_vec("hopper", num_envs=64, seed=0)  # gymnasium.vector.VectorEnv
    obs, info = venv.reset(seed=0)
    obs, reward, terminated, truncated, info = venv.step(venv.action_space.sample())

A task is a name in configs/tasks/ (hopper, walker2d, half_cheetah, ant, humanoid, a1_walk) or a
path to a task file. Observations, rewards and terminations are Gymnasium v5's, on MuJoCo's
qpos / qvel; one env step is one physics step of the chosen integrator at ``dt``.
"""
from __future__ import annotations

import os
from typing import Any, Optional, Sequence

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from . import _bigstep

TASK_NAMES = ("hopper", "walker2d", "half_cheetah", "ant", "humanoid", "a1_walk")


def task_path(task: str) -> str:
    """The task file of ``task``: an existing path, else ``<name>.yaml`` in the package's
    ``tasks/`` folder (an installed package) or the source tree's ``configs/tasks/``."""
    if os.path.isfile(task):
        return task
    name = task[:-5] if task.endswith(".yaml") else task
    for folder in (os.path.join(os.path.dirname(__file__), "tasks"),
                   os.path.join(_bigstep.SOURCE_DIR, "configs", "tasks")):
        p = os.path.join(folder, name + ".yaml")
        if os.path.isfile(p):
            return p
    raise ValueError(f"task = {task!r}: not a file and not a task name (known: {', '.join(TASK_NAMES)})")


def _overrides(integrator: Optional[str], dt: Optional[float], episode_steps: Optional[int],
               iteration_budget: Optional[int], overrides: Sequence[str]) -> list[str]:
    o = []
    if integrator is not None:
        o.append(f"integrator.type={integrator}")
        # the tasks' PBFD settings (configs/tasks: second order, dry friction) exist for PBD/PBFD only:
        # another integrator runs with its own defaults (the caller's overrides come after and win)
        if integrator not in ("pbd", "pbfd"):
            o.append("integrator.order=1")
        if integrator != "pbfd":
            o.append("contact.friction=power")
    if dt is not None:
        o.append(f"integrator.dt={float(dt)!r}")
    if episode_steps is not None:
        o.append(f"task.episode_steps={int(episode_steps)}")
    if iteration_budget is not None:
        o.append(f"task.iteration_budget={int(iteration_budget)}")
    return o + list(overrides)


def _backend(backend: str) -> str:
    if backend not in ("auto", "cpu", "cuda"):
        raise ValueError(f"backend = {backend!r}: expected 'auto', 'cpu' or 'cuda'")
    return backend


def _check_actions(actions: Any, shape: tuple) -> np.ndarray:
    """actions as a C-contiguous float64 array of ``shape``; ValueError / TypeError otherwise.
    NaN / inf / out-of-range values pass: the VecEnv flags them per env."""
    a = np.asarray(actions)
    if a.dtype.kind not in "fiu":
        raise TypeError(f"actions.dtype = {a.dtype}: expected a real number type (float64 preferred)")
    if a.shape != shape:
        raise ValueError(f"actions.shape = {a.shape}: expected {shape}")
    return np.ascontiguousarray(a, dtype=np.float64)


def _spaces(core) -> tuple[gym.spaces.Box, gym.spaces.Box]:
    obs = gym.spaces.Box(-np.inf, np.inf, shape=(core.obs_dim,), dtype=np.float64)
    act = gym.spaces.Box(core.action_low.astype(np.float64), core.action_high.astype(np.float64), dtype=np.float64)
    return obs, act


def _reset_core(env, seed: Optional[int]) -> None:
    """seed: the batch rebuilt from it; else every env's next episode (the first reset keeps the
    construction seed's first episode)."""
    if seed is not None:
        env.core.reset(int(seed))
    elif env._started:
        env.core.reset(None)
    env._started = True


class BigstepEnv(gym.Env):
    """One environment of a bigstep task as a ``gymnasium.Env`` (Gymnasium v5 definitions).

    Construction arguments as :func:`make`. Observations and infos are copies. Picklable: the task
    and arguments are stored and the environment is rebuilt on unpickling.
    """

    metadata = {"render_modes": []}

    def __init__(self, task: str = "hopper", integrator: Optional[str] = None, dt: Optional[float] = None,
                 seed: Optional[int] = None, backend: str = "cpu", episode_steps: Optional[int] = None,
                 iteration_budget: Optional[int] = None, overrides: Sequence[str] = ()):
        self._kwargs = dict(task=task, integrator=integrator, dt=dt, seed=seed, backend=backend,
                            episode_steps=episode_steps, iteration_budget=iteration_budget,
                            overrides=list(overrides))
        self.task = task
        # the episode length is this Env's own (gymnasium's TimeLimit semantics: truncated)
        self.core = _bigstep.VecEnvCore(task_path(task), 1, int(seed or 0),
                                        _overrides(integrator, dt, episode_steps, iteration_budget, overrides),
                                        _backend(backend), False)
        self.observation_space, self.action_space = _spaces(self.core)
        self.dt = self.core.dt
        self._started = False  # the first reset without a seed keeps the construction seed's episode

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        _reset_core(self, seed)
        return self.core.obs[0].copy(), {"x_position": float(self.core.qpos[0, 0])}

    def step(self, action):
        a = _check_actions(action, self.action_space.shape)
        self.core.step(a[None, :])
        c = self.core
        terms = c.terms[0]
        info = {"x_position": float(c.qpos[0, 0]), "reward_forward": terms[0], "reward_ctrl": -terms[1],
                "reward_contact": -terms[2], "reward_survive": terms[3], "flags": int(c.flags[0]),
                "status": int(c.status[0]), "iterations": int(c.iterations[0])}
        return c.obs[0].copy(), float(c.reward[0]), bool(c.terminated[0]), bool(c.truncated[0]), info

    def __getstate__(self):
        return {"kwargs": self._kwargs}

    def __setstate__(self, state):
        self.__init__(**state["kwargs"])


class BigstepVectorEnv(VectorEnv):
    """``num_envs`` environments of a bigstep task as a ``gymnasium.vector.VectorEnv`` stepped by one
    batch engine. ``metadata["autoreset_mode"]`` is ``AutoresetMode.SAME_STEP``: when an episode
    ends in ``step``, ``info["final_obs"][i]`` holds its last observation (mask
    ``info["_final_obs"]``) and the returned observation is the next episode's first.

    ``copy=False`` (default) returns numpy views of the persistent C++ buffers (no copy; the next
    ``step`` overwrites them; ``torch.from_dlpack(obs)`` shares the memory). ``info["flags"]`` holds
    the per-env ENV_* bits (bad actions, iteration budget, solver failures).
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, task: str = "hopper", num_envs: int = 1, backend: str = "auto", integrator: Optional[str] = None,
                 dt: Optional[float] = None, seed: Optional[int] = None, episode_steps: Optional[int] = None,
                 iteration_budget: Optional[int] = None, overrides: Sequence[str] = (), copy: bool = False):
        self._kwargs = dict(task=task, num_envs=num_envs, backend=backend, integrator=integrator, dt=dt, seed=seed,
                            episode_steps=episode_steps, iteration_budget=iteration_budget,
                            overrides=list(overrides), copy=copy)
        self.task = task
        self.core = _bigstep.VecEnvCore(task_path(task), int(num_envs), int(seed or 0),
                                        _overrides(integrator, dt, episode_steps, iteration_budget, overrides),
                                        _backend(backend), True)
        self.num_envs = int(num_envs)
        self.single_observation_space, self.single_action_space = _spaces(self.core)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.copy = copy
        self.dt = self.core.dt
        self._started = False

    def _out(self, a: np.ndarray) -> np.ndarray:
        return a.copy() if self.copy else a

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        if seed is not None and not isinstance(seed, (int, np.integer)):
            raise TypeError(f"seed = {seed!r}: expected one int (the envs' streams are (seed, env, episode))")
        super().reset(seed=seed)
        _reset_core(self, seed)
        return self._out(self.core.obs), {}

    def step(self, actions):
        a = _check_actions(actions, (self.num_envs,) + self.single_action_space.shape)
        c = self.core
        c.step(a)
        term, trunc = c.terminated, c.truncated
        done = term | trunc
        info: dict[str, Any] = {"flags": self._out(c.flags), "_flags": np.ones(self.num_envs, bool)}
        if done.any():
            final = np.full(self.num_envs, None, dtype=object)
            fo = c.final_obs
            for i in np.flatnonzero(done):
                final[i] = fo[i].copy()
            info["final_obs"], info["_final_obs"] = final, done.copy()
            info["final_info"], info["_final_info"] = {}, done.copy()
        return self._out(c.obs), self._out(c.reward), self._out(term), self._out(trunc), info

    def close_extras(self, **kwargs):
        self.core = None

    def __getstate__(self):
        return {"kwargs": self._kwargs}

    def __setstate__(self, state):
        self.__init__(**state["kwargs"])


def make(task: str = "hopper", **kwargs) -> BigstepEnv:
    """One environment of ``task`` as a ``gymnasium.Env``. Keyword arguments: ``integrator``
    (pbfd, pbd, ne_lcp, ...), ``dt`` [s], ``seed``, ``backend``, ``episode_steps``,
    ``iteration_budget`` (solver iterations per attempt and step), ``overrides`` (["key=value"]
    as ``bigstep run --set``; ``task.<key>=...`` edits the task block)."""
    return BigstepEnv(task, **kwargs)


def make_vec(task: str = "hopper", num_envs: int = 1, backend: str = "auto", integrator: str = "pbfd",
             dt: Optional[float] = None, seed: Optional[int] = None, **kwargs) -> BigstepVectorEnv:
    """``num_envs`` environments of ``task`` as a ``gymnasium.vector.VectorEnv`` (SAME_STEP
    auto-reset) on ``backend`` ("auto": CUDA when built and present, else CPU). ``dt`` None: the
    task file's. ``integrator`` other than pbfd: the task file's PBFD settings (integrator.order,
    contact.friction) give way to that integrator's defaults. Further keywords as :class:`BigstepVectorEnv` (``copy``, ``episode_steps``,
    ``iteration_budget``, ``overrides``)."""
    return BigstepVectorEnv(task, num_envs=num_envs, backend=backend, integrator=integrator, dt=dt, seed=seed,
                            **kwargs)
