"""The PPO example's network and saved policy (policy.pt), apart from the training loop in ppo.py:
what an evaluation needs (``load_policy(path).act(obs)``)."""
from __future__ import annotations

import os

import numpy as np
import torch
import torch.nn as nn

OBS_CLIP = 10.0  # normalised observations are clipped to +-OBS_CLIP (also at evaluation)


class RunningMeanStd:
    """Running mean / variance of a batch stream (parallel-variance merge, Chan et al. 1979)."""

    def __init__(self, shape):
        self.mean, self.var, self.count = np.zeros(shape), np.ones(shape), 1e-4

    def update(self, x: np.ndarray) -> None:
        bm, bv, bn = x.mean(0), x.var(0), x.shape[0]
        d, n = bm - self.mean, self.count + bn
        self.mean = self.mean + d * bn / n
        self.var = (self.var * self.count + bv * bn + d**2 * self.count * bn / n) / n
        self.count = n


def normalise(obs: torch.Tensor, mean: torch.Tensor, var: torch.Tensor) -> torch.Tensor:
    return ((obs - mean) / torch.sqrt(var + 1e-8)).clamp(-OBS_CLIP, OBS_CLIP)


def mlp(n_in: int, n_out: int, hidden: int, out_gain: float) -> nn.Sequential:
    """tanh MLP, orthogonal init (gain sqrt 2 hidden, out_gain last layer)."""
    layers, n = [], n_in
    for _ in range(2):
        layers += [nn.Linear(n, hidden), nn.Tanh()]
        n = hidden
    layers.append(nn.Linear(n, n_out))
    for i, m in enumerate(l for l in layers if isinstance(l, nn.Linear)):
        nn.init.orthogonal_(m.weight, out_gain if i == 2 else np.sqrt(2))
        nn.init.zeros_(m.bias)
    return nn.Sequential(*layers)


class ActorCritic(nn.Module):
    def __init__(self, obs_dim: int, act_dim: int, hidden: int = 64):
        super().__init__()
        self.actor, self.critic = mlp(obs_dim, act_dim, hidden, 0.01), mlp(obs_dim, 1, hidden, 1.0)
        self.log_std = nn.Parameter(torch.zeros(act_dim))
        # the observation normalisation travels with the weights (state_dict, policy.pt)
        self.register_buffer("obs_mean", torch.zeros(obs_dim))
        self.register_buffer("obs_var", torch.ones(obs_dim))

    def dist(self, x: torch.Tensor) -> torch.distributions.Normal:
        return torch.distributions.Normal(self.actor(x), self.log_std.exp())

    def value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x).squeeze(-1)


class Policy:
    """A trained policy from policy.pt: ``act(obs) -> action`` (numpy in and out, deterministic: the
    clipped mean), with the training run's observation normalisation."""

    def __init__(self, path: str):
        ck = torch.load(path, map_location="cpu", weights_only=False)
        self.config = ck["config"]
        self.net = ActorCritic(ck["obs_dim"], ck["act_dim"], ck["config"]["hidden"])
        self.net.load_state_dict(ck["model"])
        self.net.eval()
        self.low, self.high = np.asarray(ck["action_low"]), np.asarray(ck["action_high"])

    @torch.no_grad()
    def act(self, obs: np.ndarray) -> np.ndarray:
        x = torch.as_tensor(np.asarray(obs), dtype=torch.float32)
        mu = self.net.actor(normalise(x, self.net.obs_mean, self.net.obs_var))
        return np.clip(mu.double().numpy(), self.low, self.high)


def load_policy(path: str) -> Policy:
    return Policy(path)


def save(net: ActorCritic, venv, args, path: str, steps: int, wall_s: float) -> None:
    torch.save({"model": net.state_dict(), "obs_dim": net.obs_mean.shape[0], "act_dim": net.log_std.shape[0],
                "action_low": venv.single_action_space.low, "action_high": venv.single_action_space.high,
                "config": dict(vars(args), dt_used=venv.dt), "env_steps": steps, "wall_s": wall_s,
                "loadavg_1_5_15": os.getloadavg()}, path)
