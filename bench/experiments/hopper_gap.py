"""Why the hopper hops higher in MuJoCo than in bigstep (the PPO transfer gap of
bench/experiments/ppo_transfer.py). The trained PPO policy's actions (bench/experiments/results/ppo_hopper_policy.pt, recorded
closed loop in MuJoCo as shipped, frame_skip 10) are replayed open loop, each held for 20 ms, from
qpos0 (qvel = 0, no reset noise) in

  * MuJoCo on gymnasium's hopper.xml as shipped (RK4, 2 ms, pyramidal cone, foot friction 2.0, soft
    contact solref (0.02, 1) / solimp (0.8, 0.8, 0.01), margin 1 mm, soft joint limits) and in
    ablations of that mjModel, one difference removed (or a few together) per row,
  * bigstep NE-LCP at 2 / 0.5 ms, PBFD at 2 ms and at 20 ms (the training step), and PBFD with a
    softer contact.c_perp,

and per row: the first hop's apex (torso height z = qpos[1], max over 0.5-1.0 s), max |z - z_ref| over
0-0.9 s against MuJoCo as shipped and against bigstep NE-LCP 2 ms, the deepest floor penetration (MuJoCo's
collision on the shipped geometry, the same yardstick for every simulator), MuJoCo's contact
regulariser efc_R at a stance state, and for five MuJoCo variants the policy closed loop in gymnasium's
Hopper-v5 (5 episodes, 8 s). A contact- and limit-free check replays 1.5 x a periodic ctrl (so the
ctrlrange clamp acts) in MuJoCo (Euler) and bigstep NE-LCP: the model import and the actuation alone.

    PYTHONPATH=build/python nice -n 10 python3 bench/experiments/hopper_gap.py     # ~2 min
    # -> bench/experiments/results/hopper_gap.csv (one row per simulator / ablation), hopper_gap_traj.csv (qpos
    #    every 20 ms), hopper_gap.png (torso height), .meta.json
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]  # siblings, bench/common.py
import common  # noqa: E402

H = 0.02         # control period [s] (the policy's step)
T = 1.2          # replay length [s]: the first hop and its landing
Q0 = np.array([0, 1.25, 0, 0, 0, 0.0])  # hopper.xml's qpos0
WINDOW = (0.5, 1.0)   # the first hop's apex lies here
COMPARE_T = 0.9       # trajectory error window [0, COMPARE_T]
EPISODES = 5         # closed-loop episodes per MuJoCo variant


def hopper_xml() -> str:
    import gymnasium
    return os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets", "hopper.xml")


def policy_actions(path: Path) -> np.ndarray:
    """The policy's deterministic actions, closed loop in MuJoCo as shipped from qpos0 (Hopper-v5's
    observation qpos[1:], clip(qvel, -10, 10))."""
    import mujoco
    from bigstep.examples.ppo import load_policy
    pol = load_policy(str(path))
    m = mujoco.MjModel.from_xml_path(hopper_xml())
    d = mujoco.MjData(m)
    acts = []
    for _ in range(int(round(T / H))):
        obs = np.concatenate([d.qpos[1:], np.clip(d.qvel, -10, 10)])
        a = pol.act(obs[None])[0]
        acts.append(a)
        d.ctrl[:] = a
        mujoco.mj_step(m, d, nstep=int(round(H / m.opt.timestep)))
    return np.array(acts)


def periodic_actions() -> np.ndarray:
    t = np.arange(int(round(T / H))) * H
    return 0.8 * np.sin(2 * np.pi * 2.0 * t[:, None] + np.array([0.0, 0.8, 1.6])[None, :])


# ---- MuJoCo and its ablations (each edits the compiled mjModel) ----

STIFF_IMP = [0.99, 0.99, 0.001, 0.5, 2]  # solimp: impedance 0.99 at any depth


def mj_edit(**kw):
    """An mjModel edit: integrator, timestep, contact (geom) and limit (jnt) solref / solimp,
    margin, armature / damping of the actuated hinges, friction, cone, contacts off."""
    import mujoco

    def f(m):
        for k, v in kw.items():
            if k == "integrator": m.opt.integrator = v
            elif k == "timestep": m.opt.timestep = v
            elif k == "solref": m.geom_solref[:] = v
            elif k == "solimp": m.geom_solimp[:] = v
            elif k == "jnt_solref": m.jnt_solref[:] = v
            elif k == "jnt_solimp": m.jnt_solimp[:] = v
            elif k == "margin": m.geom_margin[:] = v
            elif k == "armature": m.dof_armature[3:] = v
            elif k == "damping": m.dof_damping[3:] = v
            elif k == "friction": m.geom_friction[:, 0] = v
            elif k == "cone": m.opt.cone = v
            elif k == "nocontact": m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
            else: raise KeyError(k)
    return f


def mj_run(acts: np.ndarray, edit=None, xml: str | None = None) -> np.ndarray:
    """qpos after each control period (row 0: the initial state)."""
    import mujoco
    m = mujoco.MjModel.from_xml_path(xml or hopper_xml())
    if edit:
        edit(m)
    d = mujoco.MjData(m)
    k = int(round(H / m.opt.timestep))
    q = [d.qpos.copy()]
    for a in acts:
        d.ctrl[:] = a
        mujoco.mj_step(m, d, nstep=k)
        q.append(d.qpos.copy())
    return np.array(q)


def bs_run(acts: np.ndarray, integ: str, dt: float, extra=()) -> np.ndarray:
    """bigstep's Hopper-v5 task (its own MJCF import of the same hopper.xml), no termination, no reset
    noise, the action held for the H / dt physics steps of a control period."""
    import bigstep
    from bigstep.envs import task_path
    k = int(round(H / dt))
    core = bigstep._bigstep.VecEnvCore(
        task_path("hopper"), 1, 0,
        [f"integrator.type={integ}", f"integrator.dt={dt}", "batch.perturb_theta=0", "batch.perturb_theta_dot=0",
         "task.episode_steps=100000", "task.terminate_when_unhealthy=false", *extra], "cpu", False)
    core.reset(0)
    core.set_state(0, Q0, np.zeros(6))
    q = [core.qpos[0].copy()]
    for a in acts:
        for _ in range(k):
            core.step(np.asarray(a, np.float64)[None])
        q.append(core.qpos[0].copy())
    return np.array(q)


def penetration(q: np.ndarray) -> float:
    """The deepest floor penetration [m] over the samples of a trajectory, measured by MuJoCo's own
    collision (margin 0) on the shipped geometry: the same yardstick for every simulator."""
    import mujoco
    m = mujoco.MjModel.from_xml_path(hopper_xml())
    m.geom_margin[:] = 0
    d = mujoco.MjData(m)
    deepest = 0.0
    for qp in q:
        d.qpos[:] = qp
        mujoco.mj_kinematics(m, d)
        mujoco.mj_collision(m, d)
        if d.ncon:
            deepest = max(deepest, -float(d.contact.dist[:d.ncon].min()))
    return deepest


def nolimit_xml(folder: Path) -> str:
    """hopper.xml with its joint limits switched off (the <default> joint's limited="true")."""
    txt = Path(hopper_xml()).read_text()
    j = '<joint armature="1" damping="1" limited="true"/>'
    if txt.count(j) != 1:
        raise RuntimeError(f"{hopper_xml()}: expected one {j}")
    p = folder / "hopper_nolimits.xml"
    p.write_text(txt.replace(j, j.replace("true", "false")))
    return str(p)


def closed_loop(path: Path, edit, episodes: int) -> tuple[np.ndarray, np.ndarray]:
    """The policy closed loop in gymnasium's Hopper-v5 (frame_skip 10 = the 20-ms control step,
    400 steps = 8 s, Gymnasium's reset noise, seeds 0 .. episodes-1) on an edited model: returns,
    lengths (as bench/experiments/ppo_transfer.py's MuJoCo rows)."""
    import gymnasium
    from bigstep.examples.ppo import load_policy
    pol = load_policy(str(path))
    R, L = np.zeros(episodes), np.zeros(episodes, dtype=int)
    for e in range(episodes):
        env = gymnasium.make("Hopper-v5", frame_skip=int(round(H / 0.002)), max_episode_steps=int(round(8 / H)))
        if edit:
            edit(env.unwrapped.model)
        obs, _ = env.reset(seed=e)
        done = False
        while not done:
            obs, r, term, trunc, _ = env.step(pol.act(obs[None])[0])
            R[e] += r
            L[e] += 1
            done = term or trunc
        env.close()
    return R, L


def contact_regulariser(q: np.ndarray, edit) -> float:
    """MuJoCo's constraint regulariser efc_R of the first contact row at the state q (the foot on
    the floor): larger R = a softer contact (its force is (1 - d) / d-weighted toward zero)."""
    import mujoco
    m = mujoco.MjModel.from_xml_path(hopper_xml())
    if edit:
        edit(m)
    d = mujoco.MjData(m)
    d.qpos[:] = q
    mujoco.mj_forward(m, d)
    return float(d.efc_R[d.contact.efc_address[0]]) if d.ncon else float("nan")


def main() -> None:
    import tempfile
    import mujoco
    import bigstep
    EUL, ELL = mujoco.mjtIntegrator.mjINT_EULER, mujoco.mjtCone.mjCONE_ELLIPTIC
    # stiff: solref timeconst 2 timesteps (MuJoCo's refsafe floor), impedance 0.99
    SC = dict(solref=[0.004, 1], solimp=STIFF_IMP)
    SL = dict(jnt_solref=[0.004, 1], jnt_solimp=STIFF_IMP)
    mj_rows = [
        ("mujoco as shipped (RK4, 2 ms)", {}),
        ("mujoco Euler", dict(integrator=EUL)),
        ("mujoco dt 0.5 ms", dict(timestep=0.0005)),
        ("mujoco margin 0", dict(margin=0)),
        ("mujoco armature 0", dict(armature=0)),
        ("mujoco damping 0", dict(damping=0)),
        ("mujoco friction 0.9 on every geom (foot 2.0)", dict(friction=0.9)),
        ("mujoco elliptic cone", dict(cone=ELL)),
        ("mujoco stiff limits", SL),
        ("mujoco contact solref (0.004, 1)", dict(solref=SC["solref"])),
        ("mujoco contact solimp 0.99", dict(solimp=STIFF_IMP)),
        ("mujoco stiff contact", SC),
        ("mujoco stiff contact + limits", dict(SC, **SL)),
        ("mujoco elliptic cone, stiff contact + limits", dict(SC, **SL, cone=ELL)),
        ("mujoco stiff contact + limits, Euler, margin 0", dict(SC, **SL, integrator=EUL, margin=0)),
        ("mujoco stiff contact + limits, dt 0.5 ms", dict(timestep=0.0005, solref=[0.001, 1], solimp=STIFF_IMP,
                                                           jnt_solref=[0.001, 1], jnt_solimp=STIFF_IMP)),
    ]
    cp = lambda s: [f"contact.c_perp={s * C_PERP0:.6g}"]  # noqa: E731
    bs_rows = [
        ("bigstep ne_lcp dt 2 ms", "ne_lcp", 0.002, []),
        ("bigstep ne_lcp dt 0.5 ms", "ne_lcp", 0.0005, []),
        ("bigstep ne_lcp dt 2 ms cfm 1e-2", "ne_lcp", 0.002, ["contact.cfm=1e-2"]),
        ("bigstep pbfd dt 2 ms", "pbfd", 0.002, []),
        ("bigstep pbfd dt 20 ms (training)", "pbfd", 0.02, []),
    ] + [(f"bigstep pbfd dt {int(dt * 1000)} ms c_perp x{s:g}", "pbfd", dt, cp(s))
         for dt in (0.002, 0.02) for s in (0.3, 0.1, 0.03)]
    acts = policy_actions(common.EXPERIMENT_RESULTS / "ppo_hopper_policy.pt")
    t = np.arange(len(acts) + 1) * H
    win = (t >= WINDOW[0]) & (t <= WINDOW[1])
    cmp_ = t <= COMPARE_T + 1e-9
    runs = {}
    for name, kw in mj_rows:
        runs[name] = mj_run(acts, mj_edit(**kw) if kw else None)
    # the decisive check: the policy closed loop in each MuJoCo variant
    CLOSED = ["mujoco as shipped (RK4, 2 ms)", "mujoco elliptic cone", "mujoco friction 0.9 on every geom (foot 2.0)",
              "mujoco stiff contact + limits", "mujoco elliptic cone, stiff contact + limits"]
    mj_kw = dict(mj_rows)
    closed = {}
    for name in CLOSED:
        closed[name] = closed_loop(common.EXPERIMENT_RESULTS / "ppo_hopper_policy.pt", mj_edit(**mj_kw[name]) if mj_kw[name] else None,
                                   EPISODES)
        print(f"  closed loop {name}: return {closed[name][0].mean():.1f}, length {closed[name][1].mean():.0f}", flush=True)
    q_stance = runs[mj_rows[0][0]][20]  # t = 0.4 s: the foot on the floor in every variant
    for name, integ, dt, extra in bs_rows:
        runs[name] = bs_run(acts, integ, dt, extra)
        print(f"  {name}", flush=True)
    z_mj, z_ne = runs[mj_rows[0][0]][:, 1], runs[bs_rows[0][0]][:, 1]
    rows, traj = [], []
    for name, q in runs.items():
        z = q[:, 1]
        i = int(np.flatnonzero(win)[np.argmax(z[win])])
        r = dict(simulator=name, apex_z=z[i], apex_t=t[i], apex_pitch=q[i, 2], z_at_0p48=z[24],
                 max_dz_vs_mujoco=np.abs(z - z_mj)[cmp_].max(), max_dz_vs_ne_lcp=np.abs(z - z_ne)[cmp_].max(),
                 max_penetration=penetration(q[cmp_]))
        if name in mj_kw:
            r["contact_R"] = contact_regulariser(q_stance, mj_edit(**mj_kw[name]) if mj_kw[name] else None)
        if name in closed:
            r.update(closed_return=closed[name][0].mean(), closed_length=closed[name][1].mean(),
                     closed_full=int((closed[name][1] == int(round(8 / H))).sum()))
        rows.append({k: float(v) if isinstance(v, (float, np.floating)) else v for k, v in r.items()})
        traj += [dict(actions="policy", simulator=name, t=float(t[j]), **{c: float(q[j, k]) for k, c in enumerate(
            ["x", "z", "pitch", "thigh", "leg", "foot"])}) for j in range(len(t))]
    # contact- and limit-free: the model import and the actuation alone (ctrl 1.5x ctrlrange, so
    # the clamp acts); MuJoCo Euler = NE's semi-implicit Euler at the same dt
    with tempfile.TemporaryDirectory() as tmp:
        xml = nolimit_xml(Path(tmp))
        big = 1.5 * periodic_actions()
        qa = mj_run(big, mj_edit(integrator=EUL, nocontact=True), xml=xml)
        qb = bs_run(big, "ne_lcp", 0.002, ["model.allow=[geoms]", f"model.mjcf={xml}"])
    free_err = float(np.abs(qa - qb).max())
    rows.append(dict(simulator="no contact, no limits: bigstep ne_lcp 2 ms vs mujoco Euler (periodic ctrl 1.5x range)",
                     max_dqpos_free=free_err))
    cols = ["simulator", "apex_z", "apex_t", "apex_pitch", "z_at_0p48", "max_dz_vs_mujoco", "max_dz_vs_ne_lcp",
            "max_penetration", "contact_R", "closed_return", "closed_length", "closed_full", "max_dqpos_free"]
    common.print_table(rows, cols, {c: ".3f" for c in cols[1:7]} | {
        "max_penetration": ".4f", "contact_R": ".4f", "closed_return": ".1f", "closed_length": ".0f",
        "max_dqpos_free": ".1e"})
    info = common.machine_info(Path(bigstep._bigstep.__file__))
    meta = dict(command=common.command_line(), machine=f"{info['cpu']}, {info['cpu_count']} cores", date=info["date"],
                commit=info["git_commit"], git_dirty_files=info["git_dirty_files"],
                mujoco=mujoco.__version__, control_period_s=H, replay_s=T, c_perp_default=C_PERP0,
                note="open-loop replay of the PPO policy's MuJoCo actions from qpos0 (no reset noise); apex = max "
                     f"torso z over {WINDOW[0]}-{WINDOW[1]} s; max_dz_* and max_penetration (MuJoCo collision, "
                     f"margin 0, at the 20-ms samples) over 0-{COMPARE_T} s; max_dqpos_free: contact- and "
                     "limit-free replay of 1.5 x the periodic ctrl over 1.2 s; contact_R: MuJoCo's efc_R of the first "
                     "contact row at the shipped run's t = 0.4 s state; closed_*: the policy closed loop in gymnasium "
                     f"Hopper-v5 with that edit, frame_skip 10, 400 steps, seeds 0-{EPISODES - 1} (mean return, "
                     "mean length, full episodes)")
    out = common.EXPERIMENT_RESULTS / "hopper_gap.csv"
    common.write_csv(out, rows, cols, meta)
    common.write_csv(out.with_name("hopper_gap_traj.csv"), traj,
                     ["actions", "simulator", "t", "x", "z", "pitch", "thigh", "leg", "foot"], meta)
    plot(traj, out.with_suffix(".png"))
    print(f"wrote {out}, hopper_gap_traj.csv, {out.with_suffix('.png').name}")


C_PERP0 = 0.0  # set in __main__: the MJCF default W / (4 (2 mm)^2) (io/mjcf_scene.cpp c_perp_rest_depth)


def plot(traj, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    panels = [["mujoco as shipped (RK4, 2 ms)", "mujoco dt 0.5 ms", "mujoco stiff limits", "bigstep ne_lcp dt 2 ms",
               "bigstep pbfd dt 2 ms", "bigstep pbfd dt 20 ms (training)"],
              ["mujoco as shipped (RK4, 2 ms)", "mujoco elliptic cone", "mujoco friction 0.9 on every geom (foot 2.0)",
               "mujoco stiff contact + limits", "mujoco stiff contact + limits, dt 0.5 ms", "bigstep ne_lcp dt 2 ms",
               "bigstep ne_lcp dt 0.5 ms"]]
    titles = ["as shipped: MuJoCo hops higher (not its dt, not its limits)",
              "MuJoCo without the pyramid's mu-softening, or stiff, meets bigstep"]
    fig, ax = plt.subplots(1, 2, figsize=(12, 4.2), sharey=True)
    for a, names, title in zip(ax, panels, titles):
        for i, name in enumerate(names):
            sel = [r for r in traj if r["simulator"] == name]
            a.plot([r["t"] for r in sel], [r["z"] for r in sel], color=f"C{i}",
                   ls="-" if name.startswith("mujoco") else "--", lw=1.3, label=name)
        a.set_title(title + " (open-loop PPO actions)", fontsize=9)
        a.set_xlabel("t [s]")
        a.grid(alpha=0.3)
        a.legend(fontsize=7)
    ax[0].set_ylabel("torso height qpos[1] [m]")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    import mujoco
    _m = mujoco.MjModel.from_xml_path(hopper_xml())
    C_PERP0 = float(_m.body_mass.sum() * np.linalg.norm(_m.opt.gravity) / (4 * 2e-3 ** 2))
    main()
