"""bigstep: batched implicit articulated-body simulation for RL loops.

    import numpy as np, bigstep
    env = bigstep.BatchEnv("configs/chain_floating_ground.yaml", rollouts=64, seed=1,
                           overrides=["batch.engine=team"])
    theta = env.step(np.zeros((env.rollouts, env.n_q)))
    hopper = bigstep.load_model("hopper.xml")   # MJCF / URDF through MuJoCo's compiler
"""
from ._bigstep import (STATUS_FACTOR_FAILED, STATUS_GIMBAL_LOCK, STATUS_NONFINITE,  # noqa: F401
                       STATUS_NOT_CONVERGED, BatchEnv, Model, load_model, model_arrays)

__all__ = ["BatchEnv", "Model", "load_model", "model_arrays", "STATUS_NOT_CONVERGED", "STATUS_NONFINITE", "STATUS_FACTOR_FAILED", "STATUS_GIMBAL_LOCK"]
