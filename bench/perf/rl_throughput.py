"""RL throughput: env-steps per wall second of a vector env's step() with random actions
, bigstep against Gymnasium's MuJoCo vector env and mujoco.rollout, on the same
machine in the same run.

    PYTHONPATH=build/python nice -n 10 python3 bench/perf/rl_throughput.py            # ~10 min on 2 cores
    PYTHONPATH=build/python python3 bench/perf/rl_throughput.py --ks 1,64 --budget 0.3 # a quick look

Rows (task in {hopper, ant}, K envs):
  bigstep           bigstep.make_vec(task, K, backend="cpu"): PBFD at the task file's dt (hopper
                    20 ms, ant 50 ms), one physics step per env step; engine reference
                    (cpu_batched) and team (cpu_team_emulation), batch.threads 1 and 2;
                    observations, rewards, terminations and SAME_STEP auto-reset included
  gymnasium_sync    gymnasium.make_vec("Hopper-v5" | "Ant-v5", K, vectorization_mode="sync"):
                    frame_skip MuJoCo steps per env step (hopper 4 x 2 ms, ant 5 x 10 ms), one thread
  gymnasium_async   the same, vectorization_mode="async" (one process per env: K = 1 only here)
  mujoco_rollout    mujoco.rollout.rollout on the same XML, frame_skip physics steps per env step,
                    1 and 2 threads: physics only (no observation, reward or reset), an upper bound
                    for MuJoCo
Each row: warm-up, then steps until `--budget` seconds have passed (at least 2 steps of all K
envs); actions pre-drawn uniformly from the action space (drawing is not timed).
sim_s_per_wall_s = env_steps_per_s * env dt (bigstep's dt is larger than Gymnasium's hopper dt).
Output: bench/results/rl_throughput.{csv,meta.json,png}.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]  # siblings, bench/common.py
import common  # noqa: E402

GYM_IDS = {"hopper": "Hopper-v5", "ant": "Ant-v5"}
FIELDS = ["sim", "task", "engine", "threads", "K", "env_steps_per_s", "sim_s_per_wall_s", "dt_env",
          "physics_steps_per_env_step", "steps_timed", "wall_s", "note"]


def timed_steps(step, actions: np.ndarray, budget: float) -> tuple[int, float]:
    """Calls step(actions[i % n]) after one warm-up call until budget seconds (>= 2 calls)."""
    step(actions[0])
    n, t0 = 0, time.perf_counter()
    while True:
        step(actions[n % len(actions)])
        n += 1
        el = time.perf_counter() - t0
        if n >= 2 and el >= budget:
            return n, el


def draw_actions(low: np.ndarray, high: np.ndarray, K: int, rng: np.random.Generator, n: int = 8) -> np.ndarray:
    lo = np.where(np.isfinite(low), low, -1.0)
    hi = np.where(np.isfinite(high), high, 1.0)
    return rng.uniform(lo, hi, size=(n, K) + lo.shape)


def bench_bigstep(task: str, K: int, engine: str, threads: int, budget: float, rng) -> dict:
    import bigstep
    env = bigstep.make_vec(task, num_envs=K, backend="cpu", seed=0,
                           overrides=[f"batch.engine={engine}", f"batch.threads={threads}"])
    env.reset(seed=0)
    a = draw_actions(env.single_action_space.low, env.single_action_space.high, K, rng)
    n, el = timed_steps(env.step, a, budget)
    row = dict(sim="bigstep", task=task, engine=env.core.engine, threads=threads, K=K, dt_env=env.dt,
               physics_steps_per_env_step=1, steps_timed=n, wall_s=el)
    env.close()
    return row


def bench_gym(task: str, K: int, mode: str, budget: float, rng) -> dict:
    import gymnasium as gym
    env = gym.make_vec(GYM_IDS[task], num_envs=K, vectorization_mode=mode)
    env.reset(seed=0)
    a = draw_actions(env.single_action_space.low, env.single_action_space.high, K, rng)
    n, el = timed_steps(env.step, a, budget)
    u = gym.make(GYM_IDS[task]).unwrapped
    row = dict(sim=f"gymnasium_{mode}", task=task, engine="mujoco", threads=1, K=K, dt_env=u.dt,
               physics_steps_per_env_step=u.frame_skip, steps_timed=n, wall_s=el)
    env.close()
    return row


def bench_rollout(task: str, K: int, threads: int, budget: float, rng) -> dict:
    import gymnasium as gym
    import mujoco
    from mujoco import rollout
    u = gym.make(GYM_IDS[task]).unwrapped
    m = mujoco.MjModel.from_xml_path(u.fullpath)
    fs = u.frame_skip
    datas = [mujoco.MjData(m) for _ in range(threads)]
    d0 = mujoco.MjData(m)
    mujoco.mj_resetData(m, d0)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    x0 = np.zeros(mujoco.mj_stateSize(m, spec))
    mujoco.mj_getState(m, d0, x0, spec)
    # env steps per call: enough that one call is ~budget/4 at a guessed 2e5 physics steps/s/thread
    env_steps = max(2, min(200, int(0.25 * budget * 2e5 * threads / (K * fs))))
    lo, hi = m.actuator_ctrlrange[:, 0], m.actuator_ctrlrange[:, 1]
    ctrl = rng.uniform(lo, hi, size=(K, env_steps, m.nu)).repeat(fs, axis=1)  # held for frame_skip steps
    x = np.tile(x0, (K, 1))
    state = np.empty((K, env_steps * fs, x0.size))
    with rollout.Rollout(nthread=threads) as r:
        call = lambda _: r.rollout([m] * K, datas, x, ctrl, state=state)  # noqa: E731
        n, el = timed_steps(call, [None], budget)
    return dict(sim="mujoco_rollout", task=task, engine="mujoco", threads=threads, K=K, dt_env=u.dt,
                physics_steps_per_env_step=fs, steps_timed=n * env_steps, wall_s=el)


def plot(rows: list, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    tasks = sorted({r["task"] for r in rows}, key=lambda t: list(GYM_IDS).index(t))
    fig, axes = plt.subplots(1, len(tasks), figsize=(6.5 * len(tasks), 4.6), squeeze=False)
    for ax, task in zip(axes[0], tasks):
        series: dict = {}
        for r in rows:
            if r["task"] == task and r.get("env_steps_per_s"):
                series.setdefault(f"{r['sim']} {r['engine']} x{r['threads']}", []).append((r["K"], r["env_steps_per_s"]))
        for name, pts in sorted(series.items()):
            pts.sort()
            ls = "-" if name.startswith("bigstep") else "--"
            ax.plot([p[0] for p in pts], [p[1] for p in pts], ls, marker="o", label=name)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("K (envs)")
        ax.set_ylabel("env steps / wall s")
        ax.set_title(f"{task}: step() with random actions")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ks", default="1,64,1024,8192", help="comma-separated K")
    ap.add_argument("--tasks", default="hopper,ant")
    ap.add_argument("--budget", type=float, default=1.5, help="timed seconds per row")
    ap.add_argument("--gym-max-k", type=int, default=1024,
                    help="largest K for gymnasium's sync vector env (K Python env objects)")
    ap.add_argument("--out", default=str(common.RESULTS / "rl_throughput.csv"))
    args = ap.parse_args()
    ks = [int(k) for k in args.ks.split(",")]
    tasks = args.tasks.split(",")
    jobs = []
    for task in tasks:
        for K in ks:
            for engine in ("reference", "team"):
                for th in (1, 2):
                    jobs.append(("bigstep", task, K, engine, th))
            if K <= args.gym_max_k:
                jobs.append(("gymnasium_sync", task, K, "", 1))
            if K == 1:
                jobs.append(("gymnasium_async", task, K, "", 1))
            for th in (1, 2):
                jobs.append(("mujoco_rollout", task, K, "", th))
    rng = np.random.default_rng(0)
    rows, t_start = [], time.perf_counter()
    for i, (sim, task, K, engine, th) in enumerate(jobs):
        label = f"{sim} {task} K={K} {engine} x{th}"
        print(f"\r[{i + 1}/{len(jobs)}] {time.perf_counter() - t_start:6.0f} s  {label:<48}", end="", file=sys.stderr,
              flush=True)
        try:
            if sim == "bigstep":
                r = bench_bigstep(task, K, engine, th, args.budget, rng)
            elif sim.startswith("gymnasium"):
                r = bench_gym(task, K, sim.split("_")[1], args.budget, rng)
            else:
                r = bench_rollout(task, K, th, args.budget, rng)
            r["env_steps_per_s"] = K * r["steps_timed"] / r["wall_s"]
            r["sim_s_per_wall_s"] = r["env_steps_per_s"] * r["dt_env"]
            r["note"] = ""
        except Exception as e:  # an unsupported combination is a row with its reason
            r = dict(sim=sim, task=task, engine=engine, threads=th, K=K, note=f"{type(e).__name__}: {e}"[:200])
        rows.append(r)
    print(file=sys.stderr)
    common.print_table(rows, ["sim", "task", "engine", "threads", "K", "env_steps_per_s", "sim_s_per_wall_s", "note"],
                       {"env_steps_per_s": ".0f", "sim_s_per_wall_s": ".2f"})
    import bigstep
    import gymnasium
    import mujoco
    meta = {"command": common.command_line(), **common.machine_info(Path(bigstep._bigstep.__file__)),
            "bigstep_module": bigstep._bigstep.__file__, "gymnasium": gymnasium.__version__,
            "mujoco": mujoco.__version__, "budget_s_per_row": args.budget, "total_wall_s": time.perf_counter() - t_start,
            "omp_num_threads_env": os.environ.get("OMP_NUM_THREADS", "")}
    out = Path(args.out)
    common.write_csv(out, rows, FIELDS, meta)
    plot(rows, out.with_suffix(".png"))
    print(f"wrote {out}, {out.with_suffix('.meta.json').name}, {out.with_suffix('.png').name}")


if __name__ == "__main__":
    main()
