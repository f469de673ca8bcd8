"""Transfer of a PPO policy trained in bigstep (python -m bigstep.examples.ppo) to other simulators
: the policy, deterministic (clipped mean action), observation normalisation as
saved, run for N episodes x S seeds in

  (a) bigstep PBFD at the training control step h (one physics step per control step),
  (b) bigstep NE-LCP (Newton-Euler + Lemke LCP) at dt = h / k, the action held for the k physics
      steps of a control period (and, as a diagnostic, the training integrator at such small dt),
  (c) Gymnasium's MuJoCo Hopper-v5 / Walker2d-v5 / Ant-v5 (the same XML, timestep 2 ms / 2 ms / 10 ms)
      with frame_skip = h / timestep, so one gymnasium step is one control period (Gymnasium's
      defaults give 8 ms / 8 ms / 50 ms): as
      shipped (pyramidal friction cone, soft joint limits) and, as diagnostic rows, edits of its
      mjModel (mj_edit: elliptic cone, stiff joint limits).

Rewards: every term of Gymnasium v5's reward is a rate per env step (forward velocity over the step,
healthy_reward per step, ctrl cost of the action), so returns are comparable at equal step length.
(a) and (c) step at h. In (b) the control step's reward is the mean of its k physics steps' rewards:
the forward term's mean is (x_k - x_0) / h, exactly the control step's; the healthy and ctrl terms
are constant over the period. An episode is Gymnasium's 1000 env steps of simulated time (8 s for
the hopper and walker, 50 s for the ant) = that / h control steps; (b) terminates at the first
unhealthy physics step, (c) checks health once per control period as Gymnasium does.
``return_gym_scale`` = return x h / (Gymnasium's env step), the return Gymnasium's default env would
count over the same motion with its own steps (every term scales with the number of steps per second).

    PYTHONPATH=build/python python3 bench/experiments/ppo_transfer.py --policy out/ppo/hopper/policy.pt
    # -> bench/experiments/results/ppo_transfer.csv (episodes), ppo_transfer_summary.csv, ppo_transfer.png
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]  # siblings, bench/common.py
import common  # noqa: E402

GYM_IDS = {"hopper": "Hopper-v5", "walker2d": "Walker2d-v5", "half_cheetah": "HalfCheetah-v5", "ant": "Ant-v5"}
# <option timestep> of each task's XML, Gymnasium v5's env step (timestep x its default frame_skip)
# and its episode (1000 env steps) in simulated seconds
MJ_TIMESTEP = {"hopper": 0.002, "walker2d": 0.002, "half_cheetah": 0.01, "ant": 0.01}
GYM_STEP = {"hopper": 0.008, "walker2d": 0.008, "half_cheetah": 0.05, "ant": 0.05}
EPISODE_S = {k: 1000 * v for k, v in GYM_STEP.items()}


def model_overrides(policy) -> list[str]:
    """The training run's --set keys that define its nominal model (model.*, contact.*: e.g. the
    centre of a contact.c_perp randomisation, model.limit_stiffness); its per-episode draws
    (batch.randomize_*) are left out, so every bigstep row runs the training's nominal model."""
    return [o for o in policy.config.get("overrides", []) if o.split("=")[0].split(".")[0] in ("model", "contact")]


def run_bigstep(policy, task: str, integrator: str, dt: float, k: int, episodes: int, seed: int, steps: int,
                overrides: list[str] | None = None):
    """The first episode of each of `episodes` envs (reset(seed)): returns, lengths in control steps.
    overrides: the --set keys (None: the policy's nominal model, model_overrides)."""
    import bigstep
    keys = model_overrides(policy) if overrides is None else overrides
    venv = bigstep.make_vec(task, num_envs=episodes, backend="cpu", integrator=integrator, dt=dt, seed=seed,
                            episode_steps=steps * k, overrides=["batch.threads=1", *keys])
    obs, _ = venv.reset(seed=seed)
    ret, length = np.zeros(episodes), np.zeros(episodes, dtype=int)
    live = np.ones(episodes, bool)
    flags = 0
    while live.any():
        a = policy.act(obs)
        r_period = np.zeros(episodes)
        ended = np.zeros(episodes, bool)
        for _ in range(k):  # the action held for the control period
            obs, rew, term, trunc, info = venv.step(a)
            r_period += np.where(ended, 0.0, rew)  # after an end: the auto-reset's next episode
            flags |= int(np.bitwise_or.reduce(info["flags"][live & ~ended]) if (live & ~ended).any() else 0)
            ended |= term | trunc
        ret[live] += r_period[live] / k
        length[live] += 1
        live &= ~ended
    venv.close()
    return ret, length, flags


# MuJoCo variants: the XML as shipped, and diagnostic edits of its mjModel
MJ_VARIANTS = ("shipped", "elliptic", "stiff_limits", "elliptic_stiff_limits")


def mj_edit(model, variant: str) -> None:
    """elliptic: opt.cone = elliptic (the pyramid's regulariser grows with the foot's friction 2.0 /
    1.9 and softens its contact); stiff_limits: every joint limit's solref time constant 4 ms (2
    timesteps) and solimp d0 = dmax = 0.99 instead of 20 ms and 0.9 / 0.95 (MuJoCo's default
    limits are soft: the walker's foot stands 0.035 rad past its 45-degree stop)."""
    import mujoco
    if variant not in MJ_VARIANTS:
        raise ValueError(f"MuJoCo variant {variant!r}: expected one of {MJ_VARIANTS}")
    if "elliptic" in variant:
        model.opt.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    if "stiff_limits" in variant:
        model.jnt_solref[:, 0] = 2 * model.opt.timestep
        model.jnt_solimp[:, :2] = 0.99


def run_mujoco(policy, task: str, h: float, episodes: int, seed: int, steps: int, variant: str = "shipped"):
    import gymnasium
    frame_skip = int(round(h / MJ_TIMESTEP[task]))
    env = gymnasium.make(GYM_IDS[task], frame_skip=frame_skip, max_episode_steps=steps)
    mj_edit(env.unwrapped.model, variant)
    ret, length = np.zeros(episodes), np.zeros(episodes, dtype=int)
    for e in range(episodes):
        obs, _ = env.reset(seed=seed * 1000 + e)
        done = False
        while not done:
            obs, r, term, trunc, _ = env.step(policy.act(obs))
            ret[e] += r
            length[e] += 1
            done = term or trunc
    env.close()
    return ret, length, frame_skip


def evaluate(path: str, label: str, args, rows: list, timing: dict) -> None:
    """Appends one row per episode of the policy at `path` in the three simulators to `rows`."""
    from bigstep.examples.ppo import load_policy
    policy = load_policy(path)
    cfg = policy.config
    task, h = Path(cfg["task"]).stem, float(cfg["dt_used"])
    steps = int(round((args.seconds or EPISODE_S[task]) / h))
    def hold(dt):  # physics steps per control step
        k = int(round(h / dt))
        if abs(k * dt - h) > 1e-9 * h:
            raise ValueError(f"physics dt = {dt}: must divide the control step h = {h}")
        return k
    # (training-time randomisation, --set batch.randomize_*, is not applied: bigstep runs the training's
    # nominal model, model_overrides; MuJoCo its XML as shipped)
    sims = [(cfg["integrator"], h, 1)] + [(cfg["integrator"], dt, hold(dt)) for dt in args.small_dt]
    if args.ne_dt > 0:
        sims.append(("ne_lcp", args.ne_dt, hold(args.ne_dt)))
    common_cols = dict(policy=label, task=task, control_dt=h, episode_steps=steps)
    for seed in args.seeds:
        for integ, dt, kk in sims:
            t0 = time.time()
            ret, length, flags = run_bigstep(policy, task, integ, dt, kk, args.episodes, seed, steps)
            timing[f"{label}_{integ}_dt{dt:g}_seed{seed}_s"] = round(time.time() - t0, 1)
            rows += [dict(common_cols, simulator=f"bigstep {integ} dt={dt:g}", physics_dt=dt, hold=kk, seed=seed,
                          episode=e, ret=float(ret[e]), length=int(length[e]), flags=flags)
                     for e in range(args.episodes)]
            print(f"{label} seed {seed} bigstep {integ} dt={dt:g}: return {ret.mean():.1f} +- {ret.std():.1f}, "
                  f"length {length.mean():.0f}", flush=True)
        for variant in args.mujoco:
            t0 = time.time()
            ret, length, fs = run_mujoco(policy, task, h, args.episodes, seed, steps, variant)
            timing[f"{label}_mujoco_{variant}_seed{seed}_s"] = round(time.time() - t0, 1)
            sim = f"mujoco {GYM_IDS[task]} dt={MJ_TIMESTEP[task]:g}" + ("" if variant == "shipped" else f" {variant}")
            rows += [dict(common_cols, simulator=sim, physics_dt=MJ_TIMESTEP[task], hold=fs, seed=seed, episode=e,
                          ret=float(ret[e]), length=int(length[e]), flags=0) for e in range(args.episodes)]
            print(f"{label} seed {seed} mujoco {variant} frame_skip={fs}: return {ret.mean():.1f} +- {ret.std():.1f}, "
                  f"length {length.mean():.0f}", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--policy", nargs="+", default=["out/ppo/hopper/policy.pt"], help="policy.pt files")
    p.add_argument("--label", nargs="+", default=None, help="one name per policy (default: its folder)")
    p.add_argument("--episodes", type=int, default=10, help="episodes per seed and simulator")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--ne-dt", type=float, default=0.002, help="NE-LCP physics step [s] (h / k; 0: no NE-LCP rows)")
    p.add_argument("--small-dt", type=float, nargs="*", default=[0.005],
                   help="also the training integrator at these physics steps, the action held (diagnostic rows)")
    p.add_argument("--mujoco", nargs="+", default=["shipped", "elliptic", "elliptic_stiff_limits"], choices=MJ_VARIANTS,
                   help="MuJoCo rows: the XML as shipped, and diagnostic edits (mj_edit)")
    p.add_argument("--seconds", type=float, default=None,
                   help="episode length in simulated seconds (default: Gymnasium's 1000 env steps, EPISODE_S)")
    p.add_argument("--out", default=str(common.EXPERIMENT_RESULTS / "ppo_transfer.csv"))
    p.add_argument("--training-note", default="wall time on the shared 2-core box under nice -n 10, 1 torch "
                   "thread, 1 bigstep thread, other jobs running", help="--keep: the curves' note (the training's load)")
    p.add_argument("--keep", action="store_true",
                   help="copy each policy.pt and its curve.{csv,png} beside --out as ppo_<label>_*")
    args = p.parse_args()
    labels = args.label or [Path(x).parent.parent.name + "/" + Path(x).parent.name for x in args.policy]
    if len(labels) != len(args.policy):
        raise ValueError(f"--label: {len(labels)} names for {len(args.policy)} policies")

    import torch
    torch.set_num_threads(1)
    import bigstep
    rows, timing, training = [], {}, {}
    for path, label in zip(args.policy, labels):
        evaluate(path, label, args, rows, timing)
        ck = torch.load(path, weights_only=False)
        training[label] = dict(ck["config"], env_steps=ck["env_steps"], training_wall_s=round(ck["wall_s"], 1))
    for r in rows:
        r["return_gym_scale"] = r["ret"] * r["control_dt"] / GYM_STEP[r["task"]]

    # summary: per policy and simulator over all seeds and episodes; kept = return / the policy's
    # return in its training simulator (the first)
    summary = []
    for label in labels:
        mine = [r for r in rows if r["policy"] == label]
        ref = None
        for sim in dict.fromkeys(r["simulator"] for r in mine):
            sel = [r for r in mine if r["simulator"] == sim]
            R, L = np.array([r["ret"] for r in sel]), np.array([r["length"] for r in sel])
            ref = R.mean() if ref is None else ref
            summary.append(dict(policy=label, simulator=sim, physics_dt=sel[0]["physics_dt"],
                                control_dt=sel[0]["control_dt"], episodes=len(sel), seeds=len(args.seeds),
                                return_mean=float(R.mean()), return_std=float(R.std()),
                                return_gym_scale_mean=float(R.mean() * sel[0]["control_dt"] / GYM_STEP[sel[0]["task"]]),
                                length_mean=float(L.mean()), length_min=int(L.min()),
                                full_episodes=int((L == sel[0]["episode_steps"]).sum()),
                                kept_fraction=float(R.mean() / ref)))
    cols = ["policy", "simulator", "physics_dt", "control_dt", "episodes", "seeds", "return_mean", "return_std",
            "return_gym_scale_mean", "length_mean", "length_min", "full_episodes", "kept_fraction"]
    common.print_table(summary, cols, {"return_mean": ".1f", "return_std": ".1f", "return_gym_scale_mean": ".0f",
                                       "length_mean": ".1f", "kept_fraction": ".3f", "physics_dt": "g"})

    info = common.machine_info(Path(bigstep._bigstep.__file__))
    meta = dict(command=common.command_line(), machine=f"{info['cpu']}, {info['cpu_count']} cores", date=info["date"],
                commit=info["git_commit"], git_dirty_files=info["git_dirty_files"],
                policies=dict(zip(labels, args.policy)),
                training=training, wall_s=timing, loadavg_1_5_15=info["loadavg_1_5_15"],
                note="ret: sum of per-control-step rewards (control step h, episodes of 8 s); "
                     "return_gym_scale = ret * h / 0.008 s; kept_fraction = mean return / the policy's mean "
                     "return in its training simulator")
    out = Path(args.out)
    if args.keep:
        keep(args.policy, labels, training, meta, out.parent, args.training_note)
    common.write_csv(out, rows, ["policy", "simulator", "physics_dt", "hold", "seed", "episode", "ret",
                                 "return_gym_scale", "length", "flags"], meta)
    common.write_csv(out.with_name(out.stem + "_summary.csv"), summary, cols, meta)
    plot(summary, rows, out.with_suffix(".png"))
    print(f"wrote {out}, {out.stem}_summary.csv, {out.with_suffix('.png').name}")


def keep(paths, labels, training, meta, folder: Path, note: str) -> None:
    """The trained artefacts next to the table: policy.pt (to re-run this script on) and the
    training curve (CSV with a .meta.json naming the training command, steps and wall time)."""
    import shutil
    for path, label in zip(paths, labels):
        src, stem = Path(path).parent, f"ppo_{label.replace('/', '_')}"
        if src.resolve() == folder.resolve():  # an already kept policy (re-evaluated): its files are here
            continue
        shutil.copyfile(path, folder / f"{stem}_policy.pt")
        shutil.copyfile(src / "curve.png", folder / f"{stem}_curve.png")
        shutil.copyfile(src / "curve.csv", folder / f"{stem}_curve.csv")
        cfg = training[label]
        sets = "".join(f" --set {o}" for o in cfg.get("overrides", []))
        sets += f" --obs-noise {cfg['obs_noise']:g}" if cfg.get("obs_noise") else ""
        for opt in ("seed", "lr", "wall_budget", "init"):  # the run's non-default options (older runs lack some)
            if cfg.get(opt) not in (None, 0, 0.0, 3e-4):
                sets += f" --{opt.replace('_', '-')} {cfg[opt]}"
        if cfg.get("takeoff_prob"):  # take-off kicks (fifth round)
            sets += "".join(f" --takeoff-{o} {cfg['takeoff_' + o]}" for o in ("prob", "spin", "lift", "speed"))
        if cfg.get("pushoff_gain_max", 1.0) > 1.0:  # push-off friction gain (sixth round)
            sets += f" --pushoff-gain-max {cfg['pushoff_gain_max']:g}"
        sets += f" --out {cfg['out']}" + (" --snapshots" if cfg.get("snapshots") else "")
        wrapped = cfg.get("takeoff_prob") or cfg.get("pushoff_gain_max", 1.0) > 1.0
        trainer = "bench/experiments/ppo_hopper_wrappers.py" if wrapped else "-m bigstep.examples.ppo"
        (folder / f"{stem}_curve.meta.json").write_text(json.dumps(dict(
            file=f"{stem}_curve.csv", command=f"PYTHONPATH=build/python nice -n 10 python3 {trainer} "
                                             f"--task {cfg['task']} --total-steps {cfg['total_steps']}{sets}",
            machine=meta["machine"], date_evaluated=meta["date"], commit=meta["commit"], env_steps=cfg["env_steps"],
            training_wall_s=cfg["training_wall_s"], config=cfg,
            note=note), indent=2) + "\n")


def plot(summary, rows, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    # one x position per kind of simulator, whatever the task (Hopper-v5 and Walker2d-v5 share one)
    kind = lambda sim: sim.replace("Hopper-v5", "v5").replace("Walker2d-v5", "v5").replace("Ant-v5", "v5")  # noqa: E731
    sims = list(dict.fromkeys(kind(s["simulator"]) for s in summary))
    pols = list(dict.fromkeys(s["policy"] for s in summary))
    w = 0.8 / len(pols)
    seen = set()  # policies already in the legend (each at its first bar: tasks differ in simulators)
    for j, pol in enumerate(pols):
        for i, sim in enumerate(sims):
            s = next((x for x in summary if x["policy"] == pol and kind(x["simulator"]) == sim), None)
            if s is None:
                continue
            sel = [r for r in rows if r["policy"] == pol and kind(r["simulator"]) == sim]
            x = i - 0.4 + w * (j + 0.5)
            for a, key, val in ((ax[0], "ret", s["return_mean"]), (ax[1], "length", s["length_mean"])):
                first = a is ax[0] and pol not in seen
                a.bar(x, val, w * 0.9, color=f"C{j}", alpha=0.6, label=pol if first else None)
                if first:
                    seen.add(pol)
                a.plot(np.full(len(sel), x) + np.linspace(-w / 3, w / 3, len(sel)), [r[key] for r in sel], "k.",
                       ms=2)
    for a, yl in zip(ax, ["episode return (per control step)", "episode length [control steps]"]):
        a.set_xticks(range(len(sims)), [s.replace(" dt=", "\ndt=").replace(" elliptic", "\nelliptic") for s in sims], fontsize=8)
        a.set_ylabel(yl)
        a.grid(alpha=0.3, axis="y")
    ax[0].legend(fontsize=8)
    ax[0].set_title("PPO policies trained in bigstep PBFD, deterministic, in bigstep and MuJoCo", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
