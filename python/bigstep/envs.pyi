from typing import Any, Optional, Sequence

import gymnasium as gym
import numpy as np
from gymnasium.vector import VectorEnv

from ._bigstep import VecEnvCore

TASK_NAMES: tuple[str, ...]

def task_path(task: str) -> str: ...

class BigstepEnv(gym.Env):
    core: VecEnvCore
    dt: float
    def __init__(self, task: str = "hopper", integrator: Optional[str] = None, dt: Optional[float] = None,
                 seed: Optional[int] = None, backend: str = "cpu", episode_steps: Optional[int] = None,
                 iteration_budget: Optional[int] = None, overrides: Sequence[str] = ()) -> None: ...
    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> tuple[np.ndarray, dict]: ...
    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]: ...

class BigstepVectorEnv(VectorEnv):
    core: VecEnvCore
    dt: float
    copy: bool
    def __init__(self, task: str = "hopper", num_envs: int = 1, backend: str = "auto",
                 integrator: Optional[str] = None, dt: Optional[float] = None, seed: Optional[int] = None,
                 episode_steps: Optional[int] = None, iteration_budget: Optional[int] = None,
                 overrides: Sequence[str] = (), copy: bool = False) -> None: ...

def make(task: str = "hopper", **kwargs: Any) -> BigstepEnv: ...
def make_vec(task: str = "hopper", num_envs: int = 1, backend: str = "auto", integrator: str = "pbfd",
             dt: Optional[float] = None, seed: Optional[int] = None, **kwargs: Any) -> BigstepVectorEnv: ...
