"""The hopper's first landing in MuJoCo Hopper-v5, pyramidal (as shipped) vs elliptic cone, for a
policy that survives the shipped cone (rl4_soft) and one that does not (rl5_soft_s6)
(fifth round). A diagnosis only: MuJoCo is the system whose logs we read, never a part of
training or checkpoint selection.

Each policy runs closed loop (deterministic action, held for the 20-ms control period) from
gymnasium's reset(seed) state in Hopper-v5 with frame_skip 10, stepped here 2 ms at a time so the
contact is sampled at every physics step; every 2 ms we record

  * z, pitch (qpos[1], qpos[2]) and the pitch rate qvel[2] of the torso,
  * the foot's contact: total normal force f_n and tangential force f_t over its contacts
    (mj_contactForce in each contact frame), the foot geom's tangential (x) velocity at its lowest
    point and its penetration depth (-min contact dist),
  * the whole hopper's angular momentum about its centre of mass L_y (mj_subtreeVel, the torso's
    subtree) and the centre of mass's velocity: conserved in flight, so its value at lift-off
    decides how far the torso pitches before the next touchdown,
  * per control step the action.

The episode runs past Hopper-v5's health limit (it is not ended) to STEPS control steps, so the
landing after an unhealthy pitch is still logged; `healthy_end` is the control step at which
Hopper-v5 would have ended it.

    PYTHONPATH=build/python nice -n 10 python3 bench/experiments/hopper_landing.py     # ~1 min
    # -> bench/experiments/results/hopper_landing.csv (seed 0, every physics step of control steps 24-46),
    #    hopper_landing_summary.csv (lift-off, flight, touchdown per run), hopper_landing.png
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]  # siblings, bench/common.py
import common  # noqa: E402
from ppo_transfer import mj_edit  # noqa: E402

H = 0.02      # control period [s]
STEPS = 60    # control steps run (the failing policies end at 36-47)
LOG_STEPS = (24, 46)  # control steps written to hopper_landing.csv
POLICIES = {"rl4_soft": "ppo_hopper_rl4_soft_policy.pt", "rl5_soft_s6": "ppo_hopper_rl5_soft_s6_policy.pt"}


def healthy(qpos) -> bool:
    """Hopper-v5's is_healthy on (z, pitch) and the state range of qpos[2:], qvel (defaults)."""
    z, ang = qpos[1], qpos[2]
    return 0.7 < z and -0.2 < ang < 0.2


def foot_contact(m, d, foot: int):
    """Sum of normal / tangential contact force on the foot geom, its penetration depth."""
    import mujoco
    fn = ft = 0.0
    depth = 0.0
    f6 = np.zeros(6)
    for i in range(d.ncon):
        c = d.contact[i]
        if foot not in (c.geom1, c.geom2):
            continue
        mujoco.mj_contactForce(m, d, i, f6)
        fn += f6[0]
        ft += f6[1]  # frame's first tangent: for the planar hopper the x-direction (sign: frame's)
        depth = max(depth, -c.dist)
    return fn, ft, depth


def run(policy_path: Path, variant: str, seed: int, label: str) -> list[dict]:
    import gymnasium
    import mujoco
    from bigstep.examples.ppo import load_policy
    pol = load_policy(str(policy_path))
    env = gymnasium.make("Hopper-v5", frame_skip=10)
    obs, _ = env.reset(seed=seed)
    u = env.unwrapped
    m, d = u.model, u.data
    mj_edit(m, variant)
    foot = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "foot_geom")
    body = 1  # the torso: its subtree is the whole hopper
    k_sub = int(round(H / m.opt.timestep))
    rows, healthy_end = [], None
    vel6 = np.zeros(6)
    for step in range(STEPS):
        obs = np.concatenate([d.qpos[1:], np.clip(d.qvel, -10, 10)])
        a = pol.act(obs[None])[0]
        d.ctrl[:] = np.clip(a, -1, 1)
        for s in range(k_sub):
            mujoco.mj_step(m, d)
            fn, ft, depth = foot_contact(m, d, foot)
            # the foot's velocity at its centre, world frame (linear part: vel6[3:])
            mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_GEOM, foot, vel6, 0)
            mujoco.mj_subtreeVel(m, d)
            rows.append(dict(policy=label, variant=variant, seed=seed, step=step, sub=s, contact=int(fn > 0),
                             t=round(d.time, 6), z=d.qpos[1], pitch=d.qpos[2], pitch_rate=d.qvel[2],
                             x_dot=d.qvel[0], z_dot=d.qvel[1], foot_vx=vel6[3], foot_vz=vel6[5],
                             f_n=fn, f_t=ft, depth=depth, L_y=d.subtree_angmom[body][1],
                             com_vx=d.subtree_linvel[body][0], com_vz=d.subtree_linvel[body][2],
                             a0=a[0], a1=a[1], a2=a[2]))
        if healthy_end is None and not healthy(d.qpos):
            healthy_end = step + 1
    env.close()
    for r in rows:
        r["healthy_end"] = healthy_end if healthy_end is not None else STEPS
    return rows


def run_bigstep(policy_path: Path, integrator: str, dt: float, seed: int, label: str, gain: float = 1.0) -> list[dict]:
    """The same closed loop in bigstep (the policy's nominal training model, ppo_transfer.model_overrides)
    from gymnasium's reset(seed) state, the action held for the control period; every physics step's
    state is read into MuJoCo's model for its kinematics only (mj_forward: the foot's penetration by
    MuJoCo's collision, contact = within its 1-mm margin; mj_subtreeVel: L_y and the centre of mass's velocity).
    Contact forces are not available: f_n, f_t are NaN. gain != 1: every physics step's tangential
    ground impulse is scaled by exactly gain (ppo_hopper_wrappers.PushoffGain, fixed; sixth round)."""
    import bigstep
    import gymnasium
    import mujoco
    from bigstep.examples.ppo import load_policy
    from ppo_hopper_wrappers import PushoffGain
    from ppo_transfer import model_overrides
    pol = load_policy(str(policy_path))
    env = gymnasium.make("Hopper-v5", frame_skip=10)
    env.reset(seed=seed)
    m, d = env.unwrapped.model, env.unwrapped.data
    foot = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "foot_geom")
    venv = bigstep.make_vec("hopper", num_envs=1, backend="cpu", integrator=integrator, dt=dt, seed=seed,
                            episode_steps=10 * STEPS * int(round(H / dt)),
                            overrides=["batch.threads=1", "task.terminate_when_unhealthy=false", *model_overrides(pol)])
    venv.reset(seed=seed)
    c = venv.core
    c.set_state(0, d.qpos.copy(), d.qvel.copy())
    push = PushoffGain(venv, gain, np.random.default_rng(seed), fixed=gain) if gain != 1.0 else None
    k_sub = int(round(H / dt))
    variant = f"bigstep {integrator} {dt * 1e3:g} ms" + (f" g {gain:g}" if gain != 1.0 else "")
    rows, healthy_end, vel6, t = [], None, np.zeros(6), 0.0
    for step in range(STEPS):
        a = pol.act(c.obs.copy())[0]
        for s in range(k_sub):
            obs, _, term, trunc, _ = venv.step(a[None])
            if push is not None:
                push(obs, term | trunc)
            t += dt
            d.qpos[:], d.qvel[:] = c.qpos[0], c.qvel[0]
            mujoco.mj_forward(m, d)
            # MuJoCo's collision lists the foot's pairs within its margin (1 mm): contact = dist < 1 mm,
            # since NE-LCP's hard contact leaves ~0 penetration
            depth = max([-d.contact[i].dist for i in range(d.ncon) if foot in (d.contact[i].geom1, d.contact[i].geom2)],
                        default=-1.0)
            mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_GEOM, foot, vel6, 0)
            mujoco.mj_subtreeVel(m, d)
            rows.append(dict(policy=label, variant=variant, seed=seed, step=step, sub=s, contact=int(depth > -1e-3),
                             t=round(t, 6), z=d.qpos[1], pitch=d.qpos[2], pitch_rate=d.qvel[2],
                             x_dot=d.qvel[0], z_dot=d.qvel[1], foot_vx=vel6[3], foot_vz=vel6[5],
                             f_n=float("nan"), f_t=float("nan"), depth=max(depth, 0.0), L_y=d.subtree_angmom[1][1],
                             com_vx=d.subtree_linvel[1][0], com_vz=d.subtree_linvel[1][2],
                             a0=a[0], a1=a[1], a2=a[2]))
        if healthy_end is None and not healthy(d.qpos):
            healthy_end = step + 1
    venv.close()
    env.close()
    for r in rows:
        r["healthy_end"] = healthy_end if healthy_end is not None else STEPS
    return rows


def summarise(rows: list[dict]) -> list[dict]:
    """Per (policy, variant, seed): the first lift-off after 0.2 s (L_y, centre-of-mass velocity, the
    push-off's friction use and depth), the flight (apex, lowest pitch), the touchdown after it and its
    first 60 ms (impulses, peak force and depth, pitch / pitch rate 60 ms later)."""
    out = []
    keys = sorted({(r["policy"], r["variant"], r["seed"]) for r in rows})
    for pk in keys:
        rr = [r for r in rows if (r["policy"], r["variant"], r["seed"]) == pk]
        fn = np.array([r["f_n"] for r in rr])
        t = np.array([r["t"] for r in rr])
        # first flight: contact lost after t > 0.2 s for >= 40 ms (not a 2-ms bounce); touchdown: the
        # first contact after it
        in_c = np.array([r["contact"] for r in rr], bool)
        n40 = max(1, int(round(0.04 / (t[1] - t[0]))))
        lift = next(i for i in range(len(rr) - n40) if t[i] > 0.2 and in_c[i - 1] and not in_c[i:i + n40].any())
        td = next((i for i in range(lift, len(rr)) if in_c[i]), None)
        if td is None:
            td = len(rr) - 1  # still in the air at the log's end (it pitched past the limit)
        h = t[1] - t[0]  # the log's step: 2 ms (MuJoCo, NE-LCP) or 20 ms (PBFD)
        n60 = max(1, int(round(0.06 / h)))
        w, a60 = slice(td, min(td + n60, len(rr) - 1)), min(td + n60, len(rr) - 1)  # 60 ms after touchdown
        push = rr[max(0, lift - n40):lift]  # the push-off's last 40 ms
        ft_fn = [abs(r["f_t"]) / r["f_n"] for r in push if r["f_n"] > 0]
        out.append(dict(policy=pk[0], variant=pk[1], seed=pk[2], healthy_end=rr[0]["healthy_end"],
                        liftoff_t=t[lift], liftoff_step=rr[lift]["step"], L_y_liftoff=rr[lift]["L_y"],
                        com_vx_liftoff=rr[lift]["com_vx"], com_vz_liftoff=rr[lift]["com_vz"],
                        min_pitch_flight=min(r["pitch"] for r in rr[lift:td + 1]),
                        # friction use over the push-off's last 40 ms: |f_t| / f_n (the pyramid's edge at mu = 2)
                        ft_over_fn_pushoff=float(np.mean(ft_fn)) if ft_fn else float("nan"),
                        depth_pushoff=max(r["depth"] for r in push),
                        touchdown_t=t[td], touchdown_step=rr[td]["step"], apex=max(r["z"] for r in rr[lift:td + 1]),
                        pitch_td=rr[td]["pitch"], pitch_rate_td=rr[td]["pitch_rate"],
                        x_dot_td=rr[td]["x_dot"], z_dot_td=rr[td - 1]["z_dot"], foot_vx_td=rr[td - 1]["foot_vx"],
                        impulse_n_60ms=float(fn[w].sum() * h), max_depth=max((r["depth"] for r in rr[w]), default=0.0),
                        pitch_60ms=rr[a60]["pitch"], pitch_rate_60ms=rr[a60]["pitch_rate"]))
    return out


def plot(rows, path: Path, meta) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fields = [("z", "torso z [m]"), ("pitch", "pitch [rad]"), ("pitch_rate", "pitch rate [rad/s]"),
              ("L_y", "L_y about COM [kg m^2/s]"), ("f_t", "foot tangential force [N]"),
              ("f_n", "foot normal force [N]"), ("foot_vx", "foot x velocity [m/s]"), ("depth", "penetration [m]")]
    if not any(r["policy"] in ("rl4_soft", "rl5_soft_s6") for r in rows):
        return  # the figure compares those two (other --policy runs: CSVs only)
    fig, axs = plt.subplots(len(fields), 1, figsize=(9, 14), sharex=True)
    styles = {("rl4_soft", "shipped"): "C0-", ("rl4_soft", "elliptic"): "C0:",
              ("rl5_soft_s6", "shipped"): "C3-", ("rl5_soft_s6", "elliptic"): "C3:",
              ("rl4_soft", "bigstep pbfd 20 ms"): "C0--", ("rl5_soft_s6", "bigstep pbfd 20 ms"): "C3--"}
    for (pol, var), st in styles.items():
        rr = [r for r in rows if r["policy"] == pol and r["variant"] == var and r["seed"] == 0]
        if not rr:
            continue
        t = np.array([r["t"] for r in rr]) / H
        for ax, (f, lab) in zip(axs, fields):
            if var.startswith("bigstep") and f in ("f_n", "f_t"):
                continue
            ax.plot(t, [r[f] for r in rr], st, lw=1, label=f"{pol} {var}")
            ax.set_ylabel(lab, fontsize=8)
    for ax in axs:
        ax.axvspan(25, 45, color="0.9", zorder=-1)
        ax.grid(alpha=0.3)
    axs[0].legend(fontsize=7)
    axs[-1].set_xlabel("control step (20 ms)")
    fig.suptitle("Hopper-v5 first hop, closed loop (seed 0): MuJoCo pyramidal (solid) vs elliptic (dotted), "
                 "bigstep PBFD 20 ms (dashed)\n"
                 + common.plot_stamp(meta), fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--policy", nargs="*", default=None, metavar="LABEL=FILE",
                   help="policies to run (default: rl4_soft and rl5_soft_s6 from bench/results)")
    p.add_argument("--out", default=str(common.EXPERIMENT_RESULTS / "hopper_landing.csv"))
    args = p.parse_args()
    policies = dict(x.split("=", 1) for x in args.policy) if args.policy else POLICIES
    rows = []
    for label, f in policies.items():
        for seed in args.seeds:
            for variant in ("shipped", "elliptic"):
                rows += run(common.EXPERIMENT_RESULTS / f, variant, seed, label)
            rows += run_bigstep(common.EXPERIMENT_RESULTS / f, "pbfd", H, seed, label)
            rows += run_bigstep(common.EXPERIMENT_RESULTS / f, "ne_lcp", 0.002, seed, label)
    meta = dict(command=common.command_line(), **common.machine_info())
    out = Path(args.out)
    # the log file: the first seed's control steps 24-46 (the push-off, flight and the failing
    # policy's end), 6 digits; every seed is in the summary
    logged = [{k: (float(f"{v:.6g}") if isinstance(v, float) else v) for k, v in r.items()}
              for r in rows if LOG_STEPS[0] <= r["step"] <= LOG_STEPS[1] and r["seed"] == args.seeds[0]]
    common.write_csv(out, logged, list(rows[0]), meta)
    summ = summarise(rows)
    common.write_csv(out.with_name(out.stem + "_summary.csv"), summ, list(summ[0]), meta)
    common.print_table(summ, list(summ[0]), {k: ".3f" for k in summ[0]})
    plot(rows, out.with_suffix(".png"), meta)


if __name__ == "__main__":
    main()
