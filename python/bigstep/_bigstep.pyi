"""Type stub of bigstep._bigstep (python/bindings.cpp, nanobind)."""
from typing import Optional, Sequence

import numpy as np
import numpy.typing as npt

STATUS_NOT_CONVERGED: int
STATUS_NONFINITE: int
STATUS_FACTOR_FAILED: int
STATUS_GIMBAL_LOCK: int
ENV_ACTION_NONFINITE: int
ENV_ACTION_OUT_OF_RANGE: int
ENV_BUDGET_EXCEEDED: int
ENV_SOLVER_FAILED: int
SOURCE_DIR: str

F64 = npt.NDArray[np.float64]

def model_arrays(config: str, overrides: Sequence[str] = ...) -> dict[str, np.ndarray]: ...
def load_model(path: str, overrides: Sequence[str] = ...) -> Model: ...

class Model:
    n_q: int
    dof_names: list[str]
    link_names: list[str]
    dt: float
    mu: float
    c_perp: float
    c_par: float
    weight: float
    imported: bool
    theta0: F64
    theta_dot0: F64
    armature: F64
    damping: F64
    keyframe_names: list[str]
    def arrays(self) -> dict[str, np.ndarray]: ...
    def mass_matrix(self, theta: F64) -> F64: ...
    def bias(self, theta: F64, theta_dot: F64) -> F64: ...
    def qpos_from_theta(self, theta: F64) -> F64: ...
    def theta_from_qpos(self, qpos: F64) -> F64: ...
    def qvel_from_theta_dot(self, theta: F64, theta_dot: F64) -> F64: ...
    def theta_dot_from_qvel(self, theta: F64, qvel: F64) -> F64: ...
    def qvel_jacobian(self, theta: F64) -> F64: ...

class BatchEnv:
    def __init__(self, config: str, rollouts: int, seed: int = 0, overrides: Sequence[str] = ...,
                 backend: str = "cpu") -> None: ...
    def reset(self, rollouts: Optional[Sequence[int]] = None) -> F64: ...
    def step(self, tau: Optional[F64] = None) -> F64: ...
    theta: F64
    theta_prev: F64
    chart: F64        # (K, n_chart * 9): each ball / free joint's rotation chart, row by row
    theta_world: F64  # (K, n_q): theta with the charts undone (world ZYX angles)
    status: npt.NDArray[np.uint32]
    iterations: npt.NDArray[np.int32]
    episode: npt.NDArray[np.uint32]
    mass_scale: F64
    link_mass_scale: F64
    rollouts: int
    n_q: int
    dt: float
    time: float
    dof_names: list[str]
    backend: str
    backend_reason: str
    model_arrays: dict[str, np.ndarray]

class VecEnvCore:
    """K environments of a task file; outputs are views of persistent buffers (SAME_STEP auto-reset)."""
    def __init__(self, task_file: str, num_envs: int, seed: int = 0, overrides: Sequence[str] = ...,
                 backend: str = "cpu", autoreset: bool = True) -> None: ...
    def reset(self, seed: Optional[int] = None) -> None: ...
    def step(self, actions: F64) -> None: ...
    def set_state(self, env: int, qpos: F64, qvel: F64) -> None: ...
    def evaluate(self, qpos: F64, qvel: F64, action: Optional[F64], xy_before: F64
                 ) -> tuple[F64, float, bool, F64, F64]: ...
    obs: F64
    final_obs: F64
    reward: F64
    terminated: npt.NDArray[np.bool_]
    truncated: npt.NDArray[np.bool_]
    flags: npt.NDArray[np.uint32]
    status: npt.NDArray[np.uint32]
    iterations: npt.NDArray[np.int32]
    episode_step: npt.NDArray[np.int32]
    qpos: F64
    qvel: F64
    terms: F64
    episode: npt.NDArray[np.uint32]
    link_mass_scale: F64
    action_low: F64
    action_high: F64
    num_envs: int
    obs_dim: int
    action_dim: int
    nq: int
    nv: int
    dt: float
    episode_steps: int
    iteration_budget: int
    task_kind: str
    engine: str
    backend_reason: str
