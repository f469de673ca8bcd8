#!/usr/bin/env python3
"""Failing ant env steps of vec_env_failures.py, replayed one by one (the fixture of
tests/solvers/pbd/pbd_friction_continuation_test.cpp).

Runs bench/perf/vec_env_failures.py's ant configuration (64 envs x 300 steps of uniform random actions,
seed 0) and records every env step flagged ENV_BUDGET_EXCEEDED with the state before it (MuJoCo
qpos, qvel) and its action. Each is then replayed cold (a fresh 1-env VecEnv, set_state, step:
no warm lambda) with integrator.friction_continuation=0 (the solver as before it) and at the
default, and the script prints how many still fail, their iterations, and the first replay that
fails without the continuation as C++ arrays (--print-fixture).

  PYTHONPATH=build/python nice -n 10 python3 bench/experiments/lm_stall_fixture.py [--print-fixture]
"""
from __future__ import annotations

import argparse
import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--num-envs", type=int, default=64)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-replays", type=int, default=60)
    ap.add_argument("--stages", type=int, nargs="*", default=[4], help="friction_continuation values replayed besides 0")
    ap.add_argument("--print-fixture", action="store_true")
    a = ap.parse_args()
    from bigstep import _bigstep as B
    from bigstep.envs import task_path
    K = a.num_envs
    c = B.VecEnvCore(task_path("ant"), K, a.seed, ["integrator.friction_continuation=0"], "cpu", True)
    c.reset(a.seed)
    rng = np.random.default_rng(a.seed)
    lo, hi = np.asarray(c.action_low).ravel(), np.asarray(c.action_high).ravel()
    fails = []
    for s in range(a.steps):
        q0, v0 = np.asarray(c.qpos).copy(), np.asarray(c.qvel).copy()
        act = rng.uniform(lo, hi, (K, c.action_dim))
        c.step(act)
        f = np.asarray(c.flags)
        for k in np.nonzero(f & B.ENV_BUDGET_EXCEEDED)[0]:
            fails.append((s, int(k), q0[k], v0[k], act[k]))
    print(f"{len(fails)} of {K * a.steps} env steps over the budget (friction_continuation=0)")
    envs = {st: B.VecEnvCore(task_path("ant"), 1, 0, [f"integrator.friction_continuation={st}"], "cpu", False)
            for st in [0] + a.stages}
    fixture = None
    n_rep = {st: 0 for st in envs}
    for s, k, q, v, act in fails[: a.max_replays]:
        out = []
        for st, e in envs.items():
            e.reset(0)
            e.set_state(0, q, v)
            e.step(act[None, :])
            bad = bool(np.asarray(e.flags)[0] & B.ENV_BUDGET_EXCEEDED)
            n_rep[st] += bad
            out.append(f"continuation={st}: {'FAIL' if bad else 'ok  '} {int(np.asarray(e.iterations)[0]):5d} it")
            if st == 0 and bad and fixture is None:
                fixture = (s, k, q, v, act)
        print(f"step {s:3d} env {k:2d}  " + "  ".join(out))
    m = min(len(fails), a.max_replays)
    print(f"replayed cold, {m} steps: " + ", ".join(f"continuation={st}: {n} fail" for st, n in n_rep.items()))
    if a.print_fixture and fixture:
        s, k, q, v, act = fixture
        fmt = lambda x: ", ".join(f"{t:.17g}" for t in x)  # noqa: E731
        print(f"// step {s}, env {k}\nconst double kQpos[{len(q)}] = {{{fmt(q)}}};\n"
              f"const double kQvel[{len(v)}] = {{{fmt(v)}}};\nconst double kAction[{len(act)}] = {{{fmt(act)}}};")


if __name__ == "__main__":
    main()
