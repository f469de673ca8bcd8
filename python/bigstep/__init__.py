"""bigstep: batched implicit articulated-body simulation for RL loops.

    import numpy as np, bigstep
    env = bigstep.BatchEnv("configs/chain_floating_ground.yaml", rollouts=64, seed=1,
                           overrides=["batch.engine=team"])
    theta = env.step(np.zeros((env.rollouts, env.n_q)))
    hopper = bigstep.load_model("hopper.xml")   # MJCF / URDF through MuJoCo's compiler

RL tasks with Gymnasium v5 definitions (bigstep.envs; needs gymnasium):

    env = bigstep.make("hopper")                                  # gymnasium.Env
    venv = bigstep.make_vec("hopper", num_envs=64, seed=0)        # gymnasium.vector.VectorEnv
    sb3_env = bigstep.SB3VecEnv(venv); rsl_env = bigstep.RslRlVecEnv(venv)
"""
import os as _os
import sys as _sys

# task files name models as gymnasium:<file> / example-robot-data:<path>; the C++ side asks a
# python3 where those packages live ($PYTHON, else the one on PATH): make it this interpreter, so an
# installed bigstep in a venv that is not activated finds the venv's packages
_os.environ.setdefault("PYTHON", _sys.executable)

# OpenMP workers sleep at barriers unless the user chose a wait policy: a spinning worker burns the
# core the policy network and the rest of the RL loop need between steps (bench/perf/omp_wait_policy.py).
# libgomp reads this when the extension loads it below; the bigstep CLI does the same (batch/omp_wait.h).
if "OMP_WAIT_POLICY" not in _os.environ and "GOMP_SPINCOUNT" not in _os.environ:
    _os.environ["OMP_WAIT_POLICY"] = "passive"


def _preload_libmujoco() -> None:
    """Loads the mujoco package's libmujoco.so.X.Y.Z (MJCF / URDF import) before the extension:
    its run path ($ORIGIN/../mujoco) finds it only when both packages share one site-packages
    (not in a venv that sees mujoco through --system-site-packages); the loader then matches the
    extension's NEEDED entry to the already loaded soname. Without mujoco: nothing to do."""
    import ctypes
    import glob
    import importlib.util
    spec = importlib.util.find_spec("mujoco")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        for lib in sorted(glob.glob(_os.path.join(folder, "libmujoco.so.*"))):
            ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
            return


_preload_libmujoco()

from ._bigstep import (ENV_ACTION_NONFINITE, ENV_ACTION_OUT_OF_RANGE, ENV_BUDGET_EXCEEDED,  # noqa: F401
                       ENV_SOLVER_FAILED, STATUS_FACTOR_FAILED, STATUS_GIMBAL_LOCK, STATUS_NONFINITE,
                       STATUS_NOT_CONVERGED, BatchEnv, Model, VecEnvCore, load_model, model_arrays)

_LAZY = {"make": "envs", "make_vec": "envs", "BigstepEnv": "envs", "BigstepVectorEnv": "envs", "task_path": "envs",
         "TASK_NAMES": "envs", "SB3VecEnv": "adapters", "RslRlVecEnv": "adapters"}


def __getattr__(name):
    # the gymnasium front end is imported on first use, so the core module needs no gymnasium
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module("." + _LAZY[name], __name__), name)
    raise AttributeError(f"module 'bigstep' has no attribute {name!r}")


__all__ = ["BatchEnv", "Model", "VecEnvCore", "load_model", "model_arrays", "make", "make_vec", "BigstepEnv",
           "BigstepVectorEnv", "SB3VecEnv", "RslRlVecEnv", "task_path", "TASK_NAMES", "STATUS_NOT_CONVERGED",
           "STATUS_NONFINITE", "STATUS_FACTOR_FAILED", "STATUS_GIMBAL_LOCK", "ENV_ACTION_NONFINITE",
           "ENV_ACTION_OUT_OF_RANGE", "ENV_BUDGET_EXCEEDED", "ENV_SOLVER_FAILED"]
