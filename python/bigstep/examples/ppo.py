"""Proximal Policy Optimisation on a bigstep task, in plain torch (one file).

    python -m bigstep.examples.ppo --task hopper --total-steps 600000
    # -> out/ppo/hopper/{policy.pt, curve.csv, curve.png}

The algorithm is PPO-Clip (Schulman et al. 2017, "Proximal Policy Optimization Algorithms", eq. 7)
with generalised advantage estimation (Schulman et al. 2016, "High-Dimensional Continuous Control
Using Generalized Advantage Estimation", eq. 16):

  delta_t = r_t + gamma V(s_{t+1}) (1 - term_t) - V(s_t)
  A_t     = delta_t + gamma lambda (1 - done_t) A_{t+1}            (GAE)
  L       = -E[min(rho A, clip(rho, 1 - eps, 1 + eps) A)] + c_v E[(V - R)^2] - c_e H[pi],
            rho = pi(a|s) / pi_old(a|s)

Policy: a Gaussian with a state-independent log std, the sample clipped to the action box when
sent to the env (the log-probability is of the unclipped sample); deterministic = the clipped mean.
Observations are normalised by a running mean / variance (saved in policy.pt with the network,
:func:`load_policy` applies the identical transform); rewards are scaled by the running std of the
discounted return (training only). Time-limit truncations bootstrap from V(final observation).

Take-off kicks (--takeoff-prob > 0, planar hopper / walker2d: qpos[1] the root height, qpos[2] its
pitch): at the step whose end has the root's vertical velocity qvel[1] rise through --takeoff-speed
(the push-off of a hop), with probability --takeoff-prob the env's pitch rate gets a backward kick
qvel[2] -= U(0, --takeoff-spin) and its vertical velocity qvel[1] += U(0, --takeoff-lift)
(VecEnv.set_state, the rest of the state unchanged). Why: MuJoCo Hopper-v5's soft pyramidal cone with
the foot's friction 2 lengthens the stance by 40-60 ms and sends the hopper off with 2-4x the
backward angular momentum of its elliptic cone or of bigstep (bench/hopper_landing.py); a policy
that cannot recover from that spin in flight pitches past the health limit before it lands.

The env is ``bigstep.make_vec(task, num_envs, integrator=..., dt=..., seed=...)``: one physics step
per control step; observations reach torch through DLPack (``torch.from_dlpack`` of the persistent
numpy buffer, no copy) and are copied once when cast to float32.

Push-off friction gain (--pushoff-gain-max G > 1, hopper): each episode draws g ~ U(1, G) from the
run's seeded stream; after every control step that ends with the foot on the ground and pushed the
hopper forward, the step's tangential ground impulse P_x > 0 (the change of the hopper's horizontal
momentum over the step: the ground is the only horizontal external force) is scaled by g, by adding
(g - 1) P_x at the foot's contact point: Delta qvel = (g - 1) M^-1 J_c^T e_x P_x (VecEnv.set_state;
M, J_c and the contact point from MuJoCo's kinematics of the same XML, mj_fwdPosition / mj_jac /
mj_solveM: no MuJoCo dynamics). Why: Hopper-v5's soft pyramidal cone (foot friction 2) lets the
push-off's tangential force reach ~1.5 f_n, ~2x the elliptic cone's or bigstep's, so the extra
backward spin scales with how hard the policy itself pushes (bench/hopper_landing.py); a fixed
take-off kick does not. Why forward only: the added impulse also slides the foot, PBFD's sticky
friction takes that back in the next step with a backward impulse of up to (g - 1) P_x, and scaling
that one as well is an explicit loop of gain g - 1 (it diverges, alternating in sign, from g ~ 2:
bench/README.md, sixth session).
"""
from __future__ import annotations

import argparse
import csv
import os
import time

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
        self.actor = mlp(obs_dim, act_dim, hidden, 0.01)
        self.critic = mlp(obs_dim, 1, hidden, 1.0)
        self.log_std = nn.Parameter(torch.zeros(act_dim))
        # the observation normalisation travels with the weights (state_dict, policy.pt)
        self.register_buffer("obs_mean", torch.zeros(obs_dim))
        self.register_buffer("obs_var", torch.ones(obs_dim))

    def dist(self, x: torch.Tensor) -> torch.distributions.Normal:
        return torch.distributions.Normal(self.actor(x), self.log_std.exp())

    def value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x).squeeze(-1)


class Policy:
    """A trained policy from policy.pt: ``act(obs) -> action`` (numpy in, numpy out, deterministic:
    the clipped mean), with the training run's observation normalisation."""

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


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bigstep.examples.ppo", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--task", default="hopper", help="task name (configs/tasks) or task file")
    p.add_argument("--total-steps", type=int, default=600_000, help="env steps (all envs together)")
    p.add_argument("--num-envs", type=int, default=16)
    p.add_argument("--dt", type=float, default=None, help="control step = physics step [s] (None: the task's)")
    p.add_argument("--integrator", default="pbfd")
    p.add_argument("--backend", default="auto", choices=["auto", "cpu", "cuda"])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="torch threads (torch.set_num_threads)")
    p.add_argument("--sim-threads", type=int, default=1, help="bigstep CPU threads (batch.threads; 0 = all)")
    p.add_argument("--n-steps", type=int, default=128, help="rollout length per env and update")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--minibatch", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-4, help="Adam step, annealed linearly to 0")
    p.add_argument("--wall-budget", type=float, default=0.0,
                   help="wall-clock budget [s] (0 = none): the rate anneals by max(update, wall-time) fraction and "
                        "training stops, saved, when the budget is spent, so a slow machine still ends annealed")
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--lam", type=float, default=0.95, help="GAE lambda")
    p.add_argument("--clip", type=float, default=0.2, help="PPO ratio clip epsilon")
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--ent-coef", type=float, default=0.0)
    p.add_argument("--max-grad-norm", type=float, default=0.5)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--obs-noise", type=float, default=0.0,
                   help="std of Gaussian noise added to the normalised observations the policy acts on in training rollouts")
    p.add_argument("--save-every", type=int, default=10, help="write policy.pt and the curve every N updates")
    p.add_argument("--snapshots", action="store_true",
                   help="also keep each saved policy as snapshots/policy_<env steps>.pt (bench/ppo_transfer_history.py)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="scene / task override as `bigstep run --set` (repeatable), e.g. batch.randomize_friction=0.5")
    p.add_argument("--init", default=None, metavar="POLICY_PT",
                   help="start from a saved policy.pt (weights, log std, observation statistics), e.g. to fine-tune it "
                        "under new randomisation; the optimiser and reward scaling start afresh")
    p.add_argument("--takeoff-prob", type=float, default=0.0,
                   help="probability of a take-off kick per hop (planar tasks; see the module doc; 0 = off)")
    p.add_argument("--takeoff-speed", type=float, default=1.8,
                   help="a hop's push-off: the step whose end has qvel[1] rise through this [m/s]")
    p.add_argument("--takeoff-spin", type=float, default=2.5, help="backward pitch-rate kick U(0, spin) [rad/s]")
    p.add_argument("--takeoff-lift", type=float, default=0.3, help="upward velocity kick U(0, lift) [m/s]")
    p.add_argument("--pushoff-gain-max", type=float, default=1.0,
                   help="push-off friction gain g ~ U(1, this) per episode (hopper; see the module doc; 1 = off)")
    p.add_argument("--out", default=os.path.join("out", "ppo"), help="writes <out>/<task>/")
    a = p.parse_args(argv)
    if not 0.0 <= a.takeoff_prob <= 1.0:
        p.error(f"--takeoff-prob = {a.takeoff_prob}: must be in [0, 1]")
    if a.takeoff_spin < 0 or a.takeoff_lift < 0:
        p.error(f"--takeoff-spin = {a.takeoff_spin}, --takeoff-lift = {a.takeoff_lift}: must be >= 0")
    if not a.pushoff_gain_max >= 1.0:
        p.error(f"--pushoff-gain-max = {a.pushoff_gain_max}: must be >= 1 (1 = off)")
    return a


class TakeoffKick:
    """Take-off kicks on a bigstep VectorEnv (module doc): call after each step with its obs and done.
    rng: the kicks' own stream, so a run is reproducible from its seed. fixed: every kick is exactly
    (spin, lift) instead of U(0, spin), U(0, lift) (evaluation, bench/hopper_takeoff.py)."""

    def __init__(self, venv, prob: float, speed: float, spin: float, lift: float, rng: np.random.Generator,
                 fixed: bool = False):
        if venv.core.qpos.shape[1] < 3:
            raise ValueError("take-off kicks need a planar task (qpos[1] height, qpos[2] pitch): hopper, walker2d")
        self.venv, self.prob, self.speed, self.spin, self.lift, self.rng = venv, prob, speed, spin, lift, rng
        self.fixed = fixed
        self.prev_vz = venv.core.qvel[:, 1].copy()

    def __call__(self, obs: np.ndarray, done: np.ndarray) -> int:
        c = self.venv.core
        vz = c.qvel[:, 1]
        # an ended env already holds its next episode's first state (auto-reset): no kick
        rise = ~done & (self.prev_vz < self.speed) & (vz >= self.speed)
        draw = self.rng.random((len(vz), 3))  # drawn for every env, so the stream does not depend on who rises
        fire = np.flatnonzero(rise & (draw[:, 0] < self.prob))
        if self.fixed:
            draw[:, 1:] = 1.0
        for k in fire:
            qv = c.qvel[k].copy()
            qv[2] -= self.spin * draw[k, 1]
            qv[1] += self.lift * draw[k, 2]
            c.set_state(int(k), c.qpos[k].copy(), qv)
            obs[k] = c.obs[k]
        self.prev_vz = c.qvel[:, 1].copy()
        return len(fire)


class PushoffGain:
    """Push-off friction gain on a bigstep hopper VectorEnv (module doc): call after each step with its
    obs and done. rng: the gains' own stream (one draw per env at construction and per ended episode,
    in env order), so a run is reproducible from its seed. fixed: every episode's g is exactly this.

    Per env k and step, with p_x = (M v)_0 (rootx is an unactuated slider without armature or damping,
    so the first row of M v is the hopper's horizontal momentum, sum_i m_i v_i,x):
      P_x = p_x(end of step) - p_x(start of step)               the step's tangential ground impulse
      if P_x > 0 and the foot touches (MuJoCo's collision of the end state: a foot_geom pair within its
      1-mm margin)
        qvel += (g - 1) P_x M^-1 J_c^T e_x                       J_c: x rows of the mean foot contact point
    so the step's horizontal impulse becomes g P_x, and the angular momentum about the centre of mass
    gains (z_c - z_com) (g - 1) P_x. With per-episode mass randomisation M is the nominal model's:
    the added impulse is then g P_x only to within the mass draw."""

    XML = "hopper.xml"  # gymnasium's MuJoCo asset (configs/tasks/hopper.yaml: model.mjcf gymnasium:hopper.xml)
    FOOT = "foot_geom"

    def __init__(self, venv, g_max: float, rng: np.random.Generator, fixed: float | None = None):
        import gymnasium
        import mujoco
        self.mj = mujoco
        c = venv.core
        self.m = mujoco.MjModel.from_xml_path(os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco",
                                                           "assets", self.XML))
        if (self.m.nq, self.m.nv) != (c.qpos.shape[1], c.qvel.shape[1]):
            raise ValueError(f"push-off gain: the env has nq, nv = {c.qpos.shape[1]}, {c.qvel.shape[1]}; it needs "
                             f"the hopper ({self.XML}: {self.m.nq}, {self.m.nv})")
        self.d = mujoco.MjData(self.m)
        self.foot = mujoco.mj_name2id(self.m, mujoco.mjtObj.mjOBJ_GEOM, self.FOOT)
        self.foot_body = int(self.m.geom_bodyid[self.foot])
        self.venv, self.g_max, self.rng, self.fixed = venv, g_max, rng, fixed
        n = c.qpos.shape[0]
        self.g = self._draw(n)
        self.p_x = np.array([self._load(c.qpos[k], c.qvel[k]) for k in range(n)])
        self.jacp, self.mv = np.zeros((3, self.m.nv)), np.zeros(self.m.nv)

    def _draw(self, n: int) -> np.ndarray:
        u = self.rng.random(n)
        return np.full(n, float(self.fixed)) if self.fixed is not None else 1.0 + (self.g_max - 1.0) * u

    def _load(self, qpos, qvel) -> float:
        """Positions and velocities into MuJoCo's data, M factored and the contacts listed; returns p_x."""
        d = self.d
        d.qpos[:], d.qvel[:] = qpos, qvel
        self.mj.mj_fwdPosition(self.m, d)
        mv = np.zeros(self.m.nv)
        self.mj.mj_mulM(self.m, d, mv, d.qvel)
        return float(mv[0])

    def foot_point(self):
        """The mean contact point of the foot in the loaded state, or None when it is off the ground."""
        d = self.d
        pts = [d.contact[i].pos.copy() for i in range(d.ncon) if self.foot in (d.contact[i].geom1, d.contact[i].geom2)]
        return np.mean(pts, axis=0) if pts else None

    def __call__(self, obs: np.ndarray, done: np.ndarray) -> int:
        c, mj, m, d = self.venv.core, self.mj, self.m, self.d
        fired = 0
        ended = np.flatnonzero(done)
        if len(ended):  # an ended env already holds its next episode's first state (auto-reset): new draw
            self.g[ended] = self._draw(len(ended))
        for k in range(len(done)):
            p_end = self._load(c.qpos[k], c.qvel[k])
            if not done[k] and self.g[k] != 1.0:
                P = p_end - self.p_x[k]
                point = self.foot_point() if P > 0 else None  # forward (propulsive) impulses only
                if point is not None:
                    mj.mj_jac(m, d, self.jacp, None, point, self.foot_body)
                    dv = self.jacp[0].copy()
                    mj.mj_solveM(m, d, dv.reshape(1, -1), self.jacp[0].reshape(1, -1).copy())
                    qv = c.qvel[k] + (self.g[k] - 1.0) * P * dv
                    c.set_state(int(k), c.qpos[k].copy(), qv)
                    obs[k] = c.obs[k]
                    p_end = self._load(c.qpos[k], c.qvel[k])
                    fired += 1
            self.p_x[k] = p_end
        return fired


def gae(rew, val, next_val, term, done, gamma, lam):
    """Advantages and returns over a [T, N] rollout. next_val[t] = V(s_{t+1}) of the episode that
    produced r_t (the final observation's value where the episode ended at t)."""
    adv = torch.zeros_like(rew)
    last = torch.zeros_like(rew[0])
    for t in reversed(range(rew.shape[0])):
        delta = rew[t] + gamma * next_val[t] * (1 - term[t]) - val[t]
        last = delta + gamma * lam * (1 - done[t]) * last
        adv[t] = last
    return adv, adv + val


def save_curve(rows: list[dict], folder: str, title: str) -> None:
    with open(os.path.join(folder, "curve.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    r = [x for x in rows if x["episodes"] > 0]
    fig, ax = plt.subplots(1, 2, figsize=(10, 3.6))
    ax[0].plot([x["env_steps"] for x in r], [x["return_mean"] for x in r])
    ax[0].set(xlabel="env steps", ylabel="episode return (training, stochastic)", title=title)
    ax[1].plot([x["env_steps"] for x in r], [x["length_mean"] for x in r])
    ax[1].set(xlabel="env steps", ylabel="episode length [steps]")
    for a in ax:
        a.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(folder, "curve.png"), dpi=120)
    plt.close(fig)


def train(args: argparse.Namespace) -> str:
    import bigstep
    from tqdm import tqdm

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    venv = bigstep.make_vec(args.task, num_envs=args.num_envs, backend=args.backend, integrator=args.integrator,
                            dt=args.dt, seed=args.seed, overrides=[f"batch.threads={args.sim_threads}", *args.overrides])
    N, T = args.num_envs, args.n_steps
    obs_dim, act_dim = venv.single_observation_space.shape[0], venv.single_action_space.shape[0]
    low, high = venv.single_action_space.low, venv.single_action_space.high
    net = ActorCritic(obs_dim, act_dim, args.hidden)
    opt = torch.optim.Adam(net.parameters(), lr=args.lr, eps=1e-5)
    obs_rms, ret_rms = RunningMeanStd(obs_dim), RunningMeanStd(())
    if args.init:
        ck = torch.load(args.init, map_location="cpu", weights_only=False)
        if (ck["obs_dim"], ck["act_dim"], ck["config"]["hidden"]) != (obs_dim, act_dim, args.hidden):
            raise ValueError(f"--init {args.init}: obs / act / hidden sizes {ck['obs_dim']} / {ck['act_dim']} / "
                             f"{ck['config']['hidden']}, this run's {obs_dim} / {act_dim} / {args.hidden}")
        net.load_state_dict(ck["model"])
        # its observation statistics continue, weighted as the env steps it was trained on
        obs_rms.mean, obs_rms.var = net.obs_mean.double().numpy().copy(), net.obs_var.double().numpy().copy()
        obs_rms.count = float(ck["env_steps"])
    disc_ret = np.zeros(N)
    folder = os.path.join(args.out, os.path.splitext(os.path.basename(args.task))[0])
    os.makedirs(folder, exist_ok=True)

    # rollout storage [T, N]
    buf_obs = torch.zeros(T, N, obs_dim)
    buf_act = torch.zeros(T, N, act_dim)
    buf_logp, buf_val, buf_next_val, buf_rew, buf_term, buf_done = (torch.zeros(T, N) for _ in range(6))

    def norm(x: np.ndarray) -> torch.Tensor:  # raw observations [n, obs_dim] -> normalised float32
        return normalise(torch.from_dlpack(x).float(), net.obs_mean, net.obs_var)

    def sync_obs_stats():  # the running statistics into the network's buffers (saved with it)
        net.obs_mean.copy_(torch.from_numpy(obs_rms.mean))
        net.obs_var.copy_(torch.from_numpy(obs_rms.var))

    obs, _ = venv.reset(seed=args.seed)
    kick = (TakeoffKick(venv, args.takeoff_prob, args.takeoff_speed, args.takeoff_spin, args.takeoff_lift,
                        np.random.default_rng([args.seed, 0x6B69636B])) if args.takeoff_prob > 0 else None)
    gain = (PushoffGain(venv, args.pushoff_gain_max, np.random.default_rng([args.seed, 0x67616964]))
            if args.pushoff_gain_max > 1 else None)
    if not args.init:
        obs_rms.update(obs)
        sync_obs_stats()
    ep_ret, ep_len = np.zeros(N), np.zeros(N, dtype=int)
    rows, t0, steps = [], time.time(), 0
    n_updates = max(1, args.total_steps // (N * T))
    bar = tqdm(total=n_updates * N * T, unit="step", desc=f"ppo {args.task}", dynamic_ncols=True)
    for update in range(n_updates):
        # linear annealing to 0 over the updates, or over the wall budget if that runs out first
        frac = update / n_updates
        if args.wall_budget > 0:
            frac = max(frac, (time.time() - t0) / args.wall_budget)
        for g in opt.param_groups:
            g["lr"] = args.lr * max(0.0, 1 - frac)
        finished_ret, finished_len = [], []
        # --- rollout: T steps of N envs with the current policy
        x = norm(obs)
        for t in range(T):
            if args.obs_noise > 0:  # sensor noise: the policy and value see a perturbed observation
                x = x + args.obs_noise * torch.randn_like(x)
            with torch.no_grad():
                d = net.dist(x)
                a = d.sample()
                buf_obs[t], buf_act[t], buf_logp[t], buf_val[t] = x, a, d.log_prob(a).sum(-1), net.value(x)
            obs, rew, term, trunc, info = venv.step(np.clip(a.double().numpy(), low, high))
            done = term | trunc
            if kick is not None:
                kick(obs, done)
            if gain is not None:
                gain(obs, done)
            # episode bookkeeping on the raw reward
            ep_ret += rew
            ep_len += 1
            finished_ret += list(ep_ret[done])
            finished_len += list(ep_len[done])
            ep_ret[done], ep_len[done] = 0.0, 0
            # reward scaling: running std of the discounted return
            disc_ret = disc_ret * args.gamma + rew
            ret_rms.update(disc_ret)
            disc_ret[done] = 0.0
            buf_rew[t] = torch.from_numpy(np.clip(rew / np.sqrt(ret_rms.var + 1e-8), -10, 10)).float()
            buf_term[t], buf_done[t] = torch.from_numpy(term.astype(np.float32)), torch.from_numpy(done.astype(np.float32))
            # V(s_{t+1}): the next observation's, or the ended episode's final observation's
            obs_rms.update(obs)
            x = norm(obs)
            with torch.no_grad():
                nv = net.value(x)
                if done.any():
                    idx = np.flatnonzero(done)
                    fin = np.stack([info["final_obs"][i] for i in idx])
                    nv[torch.from_numpy(idx)] = net.value(norm(fin))
            buf_next_val[t] = nv
        steps += N * T
        adv, ret = gae(buf_rew, buf_val, buf_next_val, buf_term, buf_done, args.gamma, args.lam)
        # --- update: epochs of minibatch SGD on the clipped objective
        b_obs, b_act, b_logp = buf_obs.reshape(-1, obs_dim), buf_act.reshape(-1, act_dim), buf_logp.reshape(-1)
        b_adv, b_ret = adv.reshape(-1), ret.reshape(-1)
        stats = []
        for _ in range(args.epochs):
            for mb in torch.randperm(N * T).split(args.minibatch):
                d = net.dist(b_obs[mb])
                logp = d.log_prob(b_act[mb]).sum(-1)
                ratio = (logp - b_logp[mb]).exp()
                A = b_adv[mb]
                A = (A - A.mean()) / (A.std() + 1e-8)
                pg = -torch.min(ratio * A, ratio.clamp(1 - args.clip, 1 + args.clip) * A).mean()
                vf = ((net.value(b_obs[mb]) - b_ret[mb]) ** 2).mean()
                ent = d.entropy().sum(-1).mean()
                loss = pg + args.vf_coef * vf - args.ent_coef * ent
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
                opt.step()
                with torch.no_grad():
                    stats.append([pg.item(), vf.item(), ent.item(), ((ratio - 1) - (ratio.log())).mean().item()])
        # the new normalisation applies from the next rollout (the update used the rollout's own)
        sync_obs_stats()
        s = np.mean(stats, 0)
        rows.append(dict(update=update + 1, env_steps=steps, wall_s=round(time.time() - t0, 2),
                         episodes=len(finished_ret), return_mean=float(np.mean(finished_ret)) if finished_ret else "",
                         return_std=float(np.std(finished_ret)) if finished_ret else "",
                         length_mean=float(np.mean(finished_len)) if finished_len else "",
                         policy_loss=s[0], value_loss=s[1], entropy=s[2], approx_kl=s[3]))
        bar.update(N * T)
        if finished_ret:
            bar.set_postfix(ret=f"{np.mean(finished_ret):.0f}", len=f"{np.mean(finished_len):.0f}")
        out_of_time = args.wall_budget > 0 and time.time() - t0 >= args.wall_budget
        if (update + 1) % args.save_every == 0 or update + 1 == n_updates or out_of_time:
            save(net, venv, args, os.path.join(folder, "policy.pt"), steps, time.time() - t0)
            if args.snapshots:
                os.makedirs(os.path.join(folder, "snapshots"), exist_ok=True)
                save(net, venv, args, os.path.join(folder, "snapshots", f"policy_{steps:09d}.pt"), steps, time.time() - t0)
            save_curve(rows, folder, f"PPO {args.task}, {args.integrator} dt = {venv.dt:g} s")
        if out_of_time:
            break
    bar.close()
    return folder


def save(net: ActorCritic, venv, args: argparse.Namespace, path: str, steps: int, wall_s: float) -> None:
    torch.save({"model": net.state_dict(), "obs_dim": net.obs_mean.shape[0], "act_dim": net.log_std.shape[0],
                "action_low": venv.single_action_space.low, "action_high": venv.single_action_space.high,
                "config": dict(vars(args), dt_used=venv.dt), "env_steps": steps, "wall_s": wall_s,
                "loadavg_1_5_15": os.getloadavg()}, path)


def main(argv=None) -> None:
    args = parse_args(argv)
    folder = train(args)
    print(f"wrote {folder}/policy.pt, curve.csv, curve.png")


if __name__ == "__main__":
    main()
