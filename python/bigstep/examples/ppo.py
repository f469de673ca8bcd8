"""Proximal Policy Optimisation on a bigstep task, in plain torch.

    python -m bigstep.examples.ppo --task hopper --total-steps 600000   # -> out/ppo/hopper/{policy.pt, curve.*}

PPO-Clip (Schulman et al. 2017, "Proximal Policy Optimization Algorithms", eq. 7) with generalised
advantage estimation (Schulman et al. 2016, "High-Dimensional Continuous Control Using Generalized
Advantage Estimation", eq. 16):

  delta_t = r_t + gamma V(s_{t+1}) (1 - term_t) - V(s_t),   A_t = delta_t + gamma lambda (1 - done_t) A_{t+1}
  L = -E[min(rho A, clip(rho, 1 - eps, 1 + eps) A)] + c_v E[(V - R)^2] - c_e H[pi],   rho = pi(a|s) / pi_old(a|s)

Gaussian policy, state-independent log std, sample clipped to the action box in the env (log-probability
of the unclipped sample); observations normalised by a running mean / variance saved with the network
(ppo_net.py); rewards scaled by the running std of the discounted return; truncations bootstrap from
V(final observation). Env: ``bigstep.make_vec(task, num_envs, ...)``, observations via DLPack.

Wrappers (--wrapper MODULE:CALLABLE, repeatable, or ``train(args, make_env_wrappers=f)``; MODULE a module
name or a .py path): a factory ``(venv, args) -> hook`` (or a list of hooks) called after the first reset;
each hook runs as ``hook(obs, done)`` after every env step and may change the envs' state in place
(``venv.core.set_state``, then ``obs[k] = venv.core.obs[k]``).
"""
from __future__ import annotations

import argparse
import csv
import importlib.util  # also binds importlib
import os
import time

import numpy as np
import torch
import torch.nn as nn

from bigstep.examples.ppo_net import ActorCritic, RunningMeanStd, load_policy, normalise, save  # noqa: F401

# (flag, type, default, help) of the plain options; --set, --init, --wrapper, --snapshots follow
OPTIONS = [
    ("--task", str, "hopper", "task name (configs/tasks) or task file"),
    ("--total-steps", int, 600_000, "env steps (all envs together)"),
    ("--num-envs", int, 16, ""), ("--integrator", str, "pbfd", ""),
    ("--dt", float, None, "control step = physics step [s] (None: the task's)"), ("--seed", int, 0, ""),
    ("--threads", int, 1, "torch threads"), ("--sim-threads", int, 1, "bigstep CPU threads (batch.threads; 0 = all)"),
    ("--n-steps", int, 128, "rollout length per env and update"), ("--epochs", int, 10, ""),
    ("--minibatch", int, 64, ""), ("--lr", float, 3e-4, "Adam step, annealed linearly to 0"),
    ("--wall-budget", float, 0.0, "wall-clock budget [s] (0 = none): the rate anneals by max(update, wall-time) "
     "fraction and training stops, saved, when it is spent"),
    ("--gamma", float, 0.99, ""), ("--lam", float, 0.95, "GAE lambda"), ("--clip", float, 0.2, "ratio clip epsilon"),
    ("--vf-coef", float, 0.5, ""), ("--ent-coef", float, 0.0, ""), ("--max-grad-norm", float, 0.5, ""),
    ("--hidden", int, 64, ""),
    ("--obs-noise", float, 0.0, "std of Gaussian noise on the normalised training observations"),
    ("--save-every", int, 10, "write policy.pt and the curve every N updates"),
    ("--out", str, os.path.join("out", "ppo"), "writes <out>/<task>/"),
]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bigstep.examples.ppo", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    for flag, typ, default, text in OPTIONS:
        p.add_argument(flag, type=typ, default=default, help=text or " ")
    p.add_argument("--backend", default="auto", choices=["auto", "cpu", "cuda"])
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="scene / task override as `bigstep run --set` (repeatable)")
    p.add_argument("--init", default=None, metavar="POLICY_PT", help="start from a saved policy.pt (weights, log "
                   "std, observation statistics), e.g. to fine-tune it; optimiser and reward scaling start afresh")
    p.add_argument("--wrapper", action="append", default=[], metavar="MODULE:CALLABLE",
                   help="env wrapper factory (venv, args) -> hook(obs, done) run after every step (repeatable)")
    p.add_argument("--snapshots", action="store_true", help="also keep every saved policy as snapshots/policy_<steps>.pt")
    return p


def parse_args(argv=None, parser=None) -> argparse.Namespace:
    return (parser or build_parser()).parse_args(argv)


def load_wrapper(spec: str):
    """MODULE:CALLABLE -> the callable; MODULE is an importable name or a path to a .py file."""
    mod, _, name = spec.rpartition(":")
    if not mod or not name:
        raise ValueError(f"--wrapper {spec!r}: expected MODULE:CALLABLE")
    if not mod.endswith(".py"):
        return getattr(importlib.import_module(mod), name)
    spec_ = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(mod))[0], mod)
    module = importlib.util.module_from_spec(spec_)
    spec_.loader.exec_module(module)
    return getattr(module, name)


def gae(rew, val, next_val, term, done, gamma, lam):
    """Advantages and returns over a [T, N] rollout. next_val[t] = V(s_{t+1}) of the episode that
    produced r_t (the final observation's value where the episode ended at t)."""
    adv, last = torch.zeros_like(rew), torch.zeros_like(rew[0])
    for t in reversed(range(rew.shape[0])):
        delta = rew[t] + gamma * next_val[t] * (1 - term[t]) - val[t]
        last = delta + gamma * lam * (1 - done[t]) * last
        adv[t] = last
    return adv, adv + val


def save_curve(rows: list[dict], folder: str, title: str) -> None:
    with open(os.path.join(folder, "curve.csv"), "w", newline="") as f:
        (w := csv.DictWriter(f, fieldnames=list(rows[0]))).writeheader()
        w.writerows(rows)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    r = [x for x in rows if x["episodes"] > 0]
    fig, ax = plt.subplots(1, 2, figsize=(10, 3.6), layout="tight")
    for a, key, label in ((ax[0], "return_mean", "episode return (training, stochastic)"),
                          (ax[1], "length_mean", "episode length [steps]")):
        a.plot([x["env_steps"] for x in r], [x[key] for x in r])
        a.set(xlabel="env steps", ylabel=label, title=title if a is ax[0] else "")
        a.grid(alpha=0.3)
    fig.savefig(os.path.join(folder, "curve.png"), dpi=120)
    plt.close(fig)


def train(args: argparse.Namespace, make_env_wrappers=None) -> str:
    """make_env_wrappers: a wrapper factory (module doc), run after --wrapper's."""
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
    disc_ret, folder = np.zeros(N), os.path.join(args.out, os.path.splitext(os.path.basename(args.task))[0])
    os.makedirs(os.path.join(folder, "snapshots") if args.snapshots else folder, exist_ok=True)
    # rollout storage [T, N]
    buf_obs, buf_act = torch.zeros(T, N, obs_dim), torch.zeros(T, N, act_dim)
    buf_logp, buf_val, buf_next_val, buf_rew, buf_term, buf_done = (torch.zeros(T, N) for _ in range(6))

    def norm(x: np.ndarray) -> torch.Tensor:  # raw observations [n, obs_dim] -> normalised float32
        return normalise(torch.from_dlpack(x).float(), net.obs_mean, net.obs_var)

    def sync_obs_stats():  # the running statistics into the network's buffers (saved with it)
        net.obs_mean.copy_(torch.from_numpy(obs_rms.mean))
        net.obs_var.copy_(torch.from_numpy(obs_rms.var))

    obs, _ = venv.reset(seed=args.seed)
    factories = [load_wrapper(w) for w in args.wrapper] + ([make_env_wrappers] if make_env_wrappers else [])
    hooks = [h for m in (make(venv, args) for make in factories) for h in (m if isinstance(m, (list, tuple)) else [m])]
    if not args.init:
        obs_rms.update(obs)
        sync_obs_stats()
    ep_ret, ep_len = np.zeros(N), np.zeros(N, dtype=int)
    rows, t0, steps = [], time.time(), 0
    n_updates = max(1, args.total_steps // (N * T))
    bar = tqdm(total=n_updates * N * T, unit="step", desc=f"ppo {args.task}", dynamic_ncols=True)
    for update in range(n_updates):
        # linear annealing to 0 over the updates, or over the wall budget if that runs out first
        frac = max(update / n_updates, (time.time() - t0) / args.wall_budget if args.wall_budget > 0 else 0.0)
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
            for hook in hooks:  # wrappers may change the ended step's state and obs in place
                hook(obs, done)
            # episode bookkeeping on the raw reward
            ep_ret, ep_len = ep_ret + rew, ep_len + 1
            finished_ret, finished_len = finished_ret + list(ep_ret[done]), finished_len + list(ep_len[done])
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
                    nv[torch.from_numpy(idx)] = net.value(norm(np.stack([info["final_obs"][i] for i in idx])))
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
                ratio = (d.log_prob(b_act[mb]).sum(-1) - b_logp[mb]).exp()
                A = (b_adv[mb] - b_adv[mb].mean()) / (b_adv[mb].std() + 1e-8)
                pg = -torch.min(ratio * A, ratio.clamp(1 - args.clip, 1 + args.clip) * A).mean()
                vf = ((net.value(b_obs[mb]) - b_ret[mb]) ** 2).mean()
                ent = d.entropy().sum(-1).mean()
                opt.zero_grad()
                (pg + args.vf_coef * vf - args.ent_coef * ent).backward()
                nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
                opt.step()
                stats.append([pg.item(), vf.item(), ent.item(), ((ratio - 1) - ratio.log()).mean().item()])
        # the new normalisation applies from the next rollout (the update used the rollout's own)
        sync_obs_stats()
        s = np.mean(stats, 0)
        ep = (lambda f, x: float(f(x)) if x else "")  # statistics of the episodes that ended in this rollout
        rows.append(dict(update=update + 1, env_steps=steps, wall_s=round(time.time() - t0, 2), episodes=len(finished_ret),
                         return_mean=ep(np.mean, finished_ret), return_std=ep(np.std, finished_ret),
                         length_mean=ep(np.mean, finished_len), policy_loss=s[0], value_loss=s[1], entropy=s[2],
                         approx_kl=s[3]))
        bar.update(N * T)
        if finished_ret:
            bar.set_postfix(ret=f"{np.mean(finished_ret):.0f}", len=f"{np.mean(finished_len):.0f}")
        out_of_time = args.wall_budget > 0 and time.time() - t0 >= args.wall_budget
        if (update + 1) % args.save_every == 0 or update + 1 == n_updates or out_of_time:
            save(net, venv, args, os.path.join(folder, "policy.pt"), steps, time.time() - t0)
            if args.snapshots:
                save(net, venv, args, os.path.join(folder, "snapshots", f"policy_{steps:09d}.pt"), steps, time.time() - t0)
            save_curve(rows, folder, f"PPO {args.task}, {args.integrator} dt = {venv.dt:g} s")
        if out_of_time:
            break
    bar.close()
    return folder


def main(argv=None, parser=None, make_env_wrappers=None) -> None:
    folder = train(parse_args(argv, parser), make_env_wrappers)
    print(f"wrote {folder}/policy.pt, curve.csv, curve.png")


if __name__ == "__main__":
    main()
