"""Research wrappers for the hopper PPO experiments (bench/experiments/README.md): take-off kicks and a
push-off friction gain, plugged into the plain PPO example through its wrapper hook.

    PYTHONPATH=build/python python3 bench/experiments/ppo_hopper_wrappers.py --task hopper \
        --pushoff-gain-max 4 --init bench/experiments/results/ppo_hopper_dr2_lim_policy.pt ...

takes every option of ``python -m bigstep.examples.ppo`` plus the ones below (the same as
``python -m bigstep.examples.ppo --wrapper bench/experiments/ppo_hopper_wrappers.py:make_wrappers``
with the defaults of these options).

Take-off kicks (--takeoff-prob > 0, planar hopper / walker2d: qpos[1] the root height, qpos[2] its
pitch): at the step whose end has the root's vertical velocity qvel[1] rise through --takeoff-speed
(the push-off of a hop), with probability --takeoff-prob the env's pitch rate gets a backward kick
qvel[2] -= U(0, --takeoff-spin) and its vertical velocity qvel[1] += U(0, --takeoff-lift)
(VecEnv.set_state, the rest of the state unchanged). Why: MuJoCo Hopper-v5's soft pyramidal cone with
the foot's friction 2 lengthens the stance by 40-60 ms and sends the hopper off with 2-4x the
backward angular momentum of its elliptic cone or of bigstep (hopper_landing.py); a policy that
cannot recover from that spin in flight pitches past the health limit before it lands.

Push-off friction gain (--pushoff-gain-max G > 1, hopper): each episode draws g ~ U(1, G) from the
run's seeded stream; after every control step that ends with the foot on the ground and pushed the
hopper forward, the step's tangential ground impulse P_x > 0 (the change of the hopper's horizontal
momentum over the step: the ground is the only horizontal external force) is scaled by g, by adding
(g - 1) P_x at the foot's contact point: Delta qvel = (g - 1) M^-1 J_c^T e_x P_x (VecEnv.set_state;
M, J_c and the contact point from MuJoCo's kinematics of the same XML, mj_fwdPosition / mj_jac /
mj_solveM: no MuJoCo dynamics). Why: the shipped pyramid lets the push-off's tangential force reach
~1.5 f_n, ~2x the elliptic cone's or bigstep's, so the extra backward spin scales with how hard the
policy itself pushes (hopper_landing.py); a fixed take-off kick does not. Why forward only: the added
impulse also slides the foot, PBFD's sticky friction takes that back in the next step with a backward
impulse of up to (g - 1) P_x, and scaling that one as well is an explicit loop of gain g - 1 (it
diverges, alternating in sign, from g ~ 2).
"""
from __future__ import annotations

import os

import numpy as np


def add_options(p) -> None:
    """The wrappers' options on the PPO example's parser."""
    p.add_argument("--takeoff-prob", type=float, default=0.0,
                   help="probability of a take-off kick per hop (planar tasks; 0 = off)")
    p.add_argument("--takeoff-speed", type=float, default=1.8,
                   help="a hop's push-off: the step whose end has qvel[1] rise through this [m/s]")
    p.add_argument("--takeoff-spin", type=float, default=2.5, help="backward pitch-rate kick U(0, spin) [rad/s]")
    p.add_argument("--takeoff-lift", type=float, default=0.3, help="upward velocity kick U(0, lift) [m/s]")
    p.add_argument("--pushoff-gain-max", type=float, default=1.0,
                   help="push-off friction gain g ~ U(1, this) per episode (hopper; 1 = off)")


def check_options(p, a) -> None:
    if not 0.0 <= a.takeoff_prob <= 1.0:
        p.error(f"--takeoff-prob = {a.takeoff_prob}: must be in [0, 1]")
    if a.takeoff_spin < 0 or a.takeoff_lift < 0:
        p.error(f"--takeoff-spin = {a.takeoff_spin}, --takeoff-lift = {a.takeoff_lift}: must be >= 0")
    if not a.pushoff_gain_max >= 1.0:
        p.error(f"--pushoff-gain-max = {a.pushoff_gain_max}: must be >= 1 (1 = off)")


def parse_args(argv=None):
    from bigstep.examples import ppo
    p = ppo.build_parser()
    p.prog = "bench/experiments/ppo_hopper_wrappers.py"
    add_options(p)
    a = p.parse_args(argv)
    check_options(p, a)
    return a


def make_wrappers(venv, args) -> list:
    """The PPO wrapper factory: the kicks and the gain the options ask for, each on its own seeded stream
    (missing options: off)."""
    hooks = []
    if getattr(args, "takeoff_prob", 0.0) > 0:
        hooks.append(TakeoffKick(venv, args.takeoff_prob, args.takeoff_speed, args.takeoff_spin, args.takeoff_lift,
                                 np.random.default_rng([args.seed, 0x6B69636B])))
    if getattr(args, "pushoff_gain_max", 1.0) > 1:
        hooks.append(PushoffGain(venv, args.pushoff_gain_max, np.random.default_rng([args.seed, 0x67616964])))
    return hooks


def main(argv=None) -> None:
    from bigstep.examples import ppo
    folder = ppo.train(parse_args(argv), make_wrappers)
    print(f"wrote {folder}/policy.pt, curve.csv, curve.png")


class TakeoffKick:
    """Take-off kicks on a bigstep VectorEnv (the module doc): call after each step with its obs and done.
    rng: the kicks' own stream, so a run is reproducible from its seed. fixed: every kick is exactly
    (spin, lift) instead of U(0, spin), U(0, lift) (evaluation, bench/experiments/hopper_takeoff.py)."""

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
    """Push-off friction gain on a bigstep hopper VectorEnv (the module doc): call after each step with its
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


if __name__ == "__main__":
    main()
