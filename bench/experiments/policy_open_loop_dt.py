"""Where does a policy's first motion in MuJoCo part from bigstep's? The policy runs closed loop in
Gymnasium v5 (MuJoCo, frame_skip = control step / 2 ms) for a few control steps; its actions are
then replayed open loop in bigstep from MuJoCo's start state (qpos, qvel), each held for its
control step, with PBFD at the control step and at 2 ms and with NE-LCP at 2 ms. Prints the torso
height and pitch (qpos[1], qpos[2]) after each control step: when PBFD at 2 ms and NE-LCP follow
MuJoCo and PBFD at the control step does not, the gap is the large step's time error, not the model.

    PYTHONPATH=build/python python3 bench/experiments/policy_open_loop_dt.py \
        --policy bench/experiments/results/ppo_default_walker2d_s1_policy.pt
"""
from __future__ import annotations

import argparse

GYM_IDS = {"hopper": "Hopper-v5", "walker2d": "Walker2d-v5"}
MJ_TIMESTEP = 0.002  # hopper.xml, walker2d_v5.xml


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--policy", required=True, help="a policy.pt of python -m bigstep.examples.ppo (hopper or walker2d)")
    p.add_argument("--steps", type=int, default=3, help="control steps")
    p.add_argument("--seed", type=int, default=0, help="Gymnasium's reset seed")
    args = p.parse_args()

    import gymnasium
    import bigstep
    from bigstep.examples.ppo import load_policy
    pol = load_policy(args.policy)
    task, h = pol.config["task"].split("/")[-1].removesuffix(".yaml"), float(pol.config["dt_used"])
    env = gymnasium.make(GYM_IDS[task], frame_skip=int(round(h / MJ_TIMESTEP)))
    obs, _ = env.reset(seed=args.seed)
    q0, v0 = env.unwrapped.data.qpos.copy(), env.unwrapped.data.qvel.copy()
    acts, rows = [], []
    for _ in range(args.steps):
        acts.append(pol.act(obs))
        obs, *_ = env.step(acts[-1])
        rows.append(env.unwrapped.data.qpos[1:3].copy())
    print(f"{'MuJoCo (closed loop)':26s}", " | ".join(f"t{t + 1} z {q[0]:.3f} pitch {q[1]:+.3f}" for t, q in enumerate(rows)))
    for integ, dt in (("pbfd", h), ("pbfd", MJ_TIMESTEP), ("ne_lcp", MJ_TIMESTEP)):
        v = bigstep.make_vec(task, num_envs=1, seed=0, dt=dt, integrator=integ,
                             overrides=["batch.perturb_theta=0", "batch.perturb_theta_dot=0",
                                        "task.terminate_when_unhealthy=false"])
        v.reset(seed=0)
        v.core.set_state(0, q0, v0)
        out = []
        for t, a in enumerate(acts):
            for _ in range(int(round(h / dt))):
                v.step(a[None, :])
            q = v.core.qpos[0]
            out.append(f"t{t + 1} z {q[1]:.3f} pitch {q[2]:+.3f}")
        print(f"{f'bigstep {integ} dt={dt:g}':26s}", " | ".join(out))
        v.close()


if __name__ == "__main__":
    main()
