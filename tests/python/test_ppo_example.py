"""python -m bigstep.examples.ppo: GAE against its closed form, the running observation statistics
against numpy over the whole stream, a tiny training run whose saved policy reproduces the network's
clipped mean on normalised observations, the wrapper hook; and the research wrappers it takes
(bench/experiments/ppo_hopper_wrappers.py). Skipped without torch."""
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch not installed (scripts/install_torch.sh)")


EXPERIMENTS = Path(__file__).resolve().parents[2] / "bench" / "experiments"


@pytest.fixture(scope="module")
def ppo(bigstep_py):
    from bigstep.examples import ppo
    return ppo


@pytest.fixture(scope="module")
def wrappers(ppo):
    sys.path.insert(0, str(EXPERIMENTS))
    try:
        import ppo_hopper_wrappers
    finally:
        sys.path.remove(str(EXPERIMENTS))
    return ppo_hopper_wrappers


def test_gae_equals_the_discounted_sum_of_td_errors(ppo):
    """A_t = sum_l (gamma lambda)^l delta_{t+l} within an episode (GAE eq. 16); a termination cuts the
    bootstrap, a truncation keeps V(final obs); the return target is A + V."""
    g = torch.Generator().manual_seed(0)
    T, N, gamma, lam = 7, 3, 0.97, 0.9
    rew, val, nval = (torch.randn(T, N, generator=g) for _ in range(3))
    term, done = torch.zeros(T, N), torch.zeros(T, N)
    term[2, 1] = done[2, 1] = 1.0  # env 1: terminated at t = 2
    done[4, 2] = 1.0               # env 2: truncated at t = 4
    adv, ret = ppo.gae(rew, val, nval, term, done, gamma, lam)
    delta = rew + gamma * nval * (1 - term) - val
    for n in range(N):
        ends = [t for t in range(T) if done[t, n]] + [T - 1]
        start = 0
        for end in ends:
            for t in range(start, end + 1):
                want = sum((gamma * lam) ** (u - t) * delta[u, n] for u in range(t, end + 1))
                assert adv[t, n].item() == pytest.approx(want.item(), abs=1e-5)
            start = end + 1
    torch.testing.assert_close(ret, adv + val)


def test_running_mean_std_equals_the_whole_stream(ppo):
    rng = np.random.default_rng(1)
    batches = [rng.normal(3.0, 2.0, (n, 4)) for n in (1, 5, 17, 64)]
    rms = ppo.RunningMeanStd(4)
    for b in batches:
        rms.update(b)
    x = np.concatenate(batches)
    # the 1e-4 prior count (mean 0, var 1) shifts the statistics by O(1e-4 / len(x))
    np.testing.assert_allclose(rms.mean, x.mean(0), rtol=1e-5)
    np.testing.assert_allclose(rms.var, x.var(0), rtol=1e-5)


def test_tiny_training_run_writes_a_policy_that_loads(ppo, tmp_path):
    ppo.main(["--task", "hopper", "--total-steps", "128", "--num-envs", "2", "--n-steps", "64", "--epochs", "1",
              "--minibatch", "32", "--backend", "cpu", "--out", str(tmp_path)])
    folder = tmp_path / "hopper"
    assert (folder / "policy.pt").is_file() and (folder / "curve.png").stat().st_size > 0
    lines = (folder / "curve.csv").read_text().splitlines()
    assert lines[0].startswith("update,env_steps,wall_s") and len(lines) == 2
    pol = ppo.load_policy(str(folder / "policy.pt"))
    net = pol.net
    # the saved normalisation was fitted (not the identity it starts from)
    assert not torch.equal(net.obs_mean, torch.zeros_like(net.obs_mean))
    obs = np.random.default_rng(2).normal(0, 1, (5, 11))
    x = torch.as_tensor(obs, dtype=torch.float32)
    z = ((x - net.obs_mean) / torch.sqrt(net.obs_var + 1e-8)).clamp(-10, 10)
    want = np.clip(net.actor(z).detach().double().numpy(), -1, 1)
    np.testing.assert_allclose(pol.act(obs), want, rtol=0, atol=1e-12)
    assert pol.config["dt_used"] == pytest.approx(0.02)


def test_init_continues_a_saved_policy_and_wall_budget_stops_annealed(ppo, tmp_path):
    tiny = ["--task", "hopper", "--num-envs", "2", "--n-steps", "64", "--epochs", "1", "--minibatch", "32",
            "--backend", "cpu"]
    ppo.main(tiny + ["--total-steps", "128", "--out", str(tmp_path / "a")])
    first = str(tmp_path / "a" / "hopper" / "policy.pt")
    # lr 0: Adam leaves every weight where --init put it; a wall budget of ~0 stops after one update
    # of the 4 asked for
    ppo.main(tiny + ["--total-steps", "512", "--lr", "0", "--wall-budget", "1e-9", "--init", first,
                     "--out", str(tmp_path / "b")])
    a = torch.load(first, weights_only=False)
    b = torch.load(str(tmp_path / "b" / "hopper" / "policy.pt"), weights_only=False)
    assert b["env_steps"] == 128
    for k, v in a["model"].items():
        if not k.startswith("obs_"):
            assert torch.equal(v, b["model"][k]), k
    # the observation statistics continue from the saved ones (weighted by their 128 steps)
    assert not torch.equal(a["model"]["obs_mean"], b["model"]["obs_mean"])
    assert torch.allclose(a["model"]["obs_mean"], b["model"]["obs_mean"], atol=0.5)
    with pytest.raises(ValueError, match="hidden"):
        ppo.main(tiny + ["--total-steps", "128", "--hidden", "32", "--init", first, "--out", str(tmp_path / "c")])


def test_takeoff_kick_fires_once_per_push_off_and_kicks_only_pitch_rate_and_lift(wrappers, bigstep_py):
    """TakeoffKick: an env whose qvel[1] rises through the speed gets qvel[2] -= spin, qvel[1] += lift
    (fixed mode), its qpos and other velocities kept and its observation recomputed; an env that ended
    this step (auto-reset) or did not rise is untouched; staying above the speed does not fire again."""
    venv = bigstep_py.make_vec("hopper", num_envs=3, backend="cpu", seed=3)
    obs, _ = venv.reset(seed=3)
    c = venv.core
    kick = wrappers.TakeoffKick(venv, 1.0, 1.0, 0.8, 0.25, np.random.default_rng(0), fixed=True)
    for k in (0, 1):  # both rise through 1 m/s; env 1's episode "ended"
        qv = c.qvel[k].copy()
        qv[1] = 1.5
        c.set_state(k, c.qpos[k].copy(), qv)
    q0, v0, o0 = c.qpos.copy(), c.qvel.copy(), c.obs.copy()
    done = np.array([False, True, False])
    assert kick(obs, done) == 1
    np.testing.assert_array_equal(c.qpos, q0)
    want = v0.copy()
    want[0, 2] -= 0.8
    want[0, 1] += 0.25
    np.testing.assert_allclose(c.qvel, want, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(c.obs[1:], o0[1:])
    # the observation is qpos[1:], clip(qvel, -10, 10): the pitch rate entry moved by the kick
    assert obs[0, 5 + 2] == pytest.approx(o0[0, 5 + 2] - 0.8, abs=1e-12)
    assert kick(obs, np.zeros(3, bool)) == 0  # still above the speed: no new push-off
    # random mode: the kick is U(0, spin) and prob 0 never fires
    never = wrappers.TakeoffKick(venv, 0.0, 1.0, 0.8, 0.25, np.random.default_rng(0))
    qv = c.qvel[2].copy()
    qv[1] = 1.5
    c.set_state(2, c.qpos[2].copy(), qv)
    assert never(obs, np.zeros(3, bool)) == 0
    with pytest.raises(SystemExit):
        wrappers.parse_args(["--takeoff-prob", "1.5"])


def _momentum(m, d, qpos, qvel):
    """Oracle, independent of PushoffGain's (M v)_0: the hopper's linear momentum (x, z) and its angular
    momentum about its centre of mass L_y, from MuJoCo's subtree quantities of the torso (body 1)."""
    import mujoco
    d.qpos[:], d.qvel[:] = qpos, qvel
    mujoco.mj_forward(m, d)
    mujoco.mj_subtreeVel(m, d)
    p = m.body_subtreemass[1] * d.subtree_linvel[1]
    return p[0], p[2], d.subtree_angmom[1][1], d.subtree_com[1].copy()


def test_pushoff_gain_scales_the_steps_horizontal_ground_impulse(wrappers, bigstep_py):
    """PushoffGain (--pushoff-gain-max): from one stance state and action, the env at g = 2 ends the step
    with twice the horizontal momentum change of the env at g = 1 (the ground impulse doubled), the same
    vertical momentum and positions, and L_y about the centre of mass larger by (z_c - z_com) P_x: the
    extra impulse acts at the foot's contact point. A backward impulse (P_x < 0) and g = 1 change
    nothing, bit for bit."""
    import mujoco
    venv = bigstep_py.make_vec("hopper", num_envs=2, backend="cpu", seed=4)
    obs, _ = venv.reset(seed=4)
    c = venv.core
    gain = wrappers.PushoffGain(venv, 2.0, np.random.default_rng(0), fixed=1.0)
    m, d = gain.m, mujoco.MjData(gain.m)
    rng = np.random.default_rng(2)
    no = np.zeros(2, bool)
    tested = backward = 0
    for _ in range(120):
        q0, v0 = c.qpos[0].copy(), c.qvel[0].copy()
        for k in (0, 1):
            c.set_state(k, q0, v0)
        a = np.tile(rng.uniform(-1, 1, 3), (2, 1))
        gain.g[:] = 1.0
        gain.p_x[:] = gain._load(q0, v0)
        obs, _, term, trunc, _ = venv.step(a)
        if (term | trunc).any():  # fell: both envs auto-reset (to their own initial states)
            continue
        q1, v1 = c.qpos.copy(), c.qvel.copy()
        np.testing.assert_array_equal(q1[0], q1[1])
        np.testing.assert_array_equal(v1[0], v1[1])
        # g = 1: untouched, bit for bit
        assert gain(obs, no) == 0
        np.testing.assert_array_equal(c.qvel, v1)
        gain._load(q1[0], v1[0])
        point = gain.foot_point()
        px0, pz0, L0, _ = _momentum(m, d, q0, v0)
        pxA, pzA, LA, com = _momentum(m, d, q1[0], v1[0])
        P = pxA - px0
        if point is None or abs(P) < 0.2:  # off the ground, or too small an impulse to compare
            continue
        # the same step again from the same state, env 1 at g = 2
        for k in (0, 1):
            c.set_state(k, q0, v0)
        gain.g[:] = (1.0, 2.0)
        gain.p_x[:] = gain._load(q0, v0)
        obs, *_ = venv.step(a)
        np.testing.assert_array_equal(c.qvel[0], v1[0])  # set_state restarts the step exactly
        if P < 0:  # a backward (braking) impulse: not scaled
            assert gain(obs, no) == 0
            np.testing.assert_array_equal(c.qvel[1], v1[1])
            backward += 1
            continue
        assert gain(obs, no) == 1
        np.testing.assert_array_equal(c.qpos[1], q1[1])
        np.testing.assert_array_equal(c.qvel[0], v1[0])
        assert obs[1, 5:] == pytest.approx(np.clip(c.qvel[1], -10, 10), abs=1e-12)
        pxB, pzB, LB, _ = _momentum(m, d, c.qpos[1], c.qvel[1])
        assert pxB - px0 == pytest.approx(2.0 * P, rel=1e-9, abs=1e-9)
        assert pzB == pytest.approx(pzA, abs=1e-9 * (1 + abs(pzA)))
        assert LB - LA == pytest.approx((point[2] - com[2]) * P, rel=1e-6, abs=1e-9)
        tested += 1
        # continue from env 0's g = 1 state
        for k in (0, 1):
            c.set_state(k, q1[0], v1[0])
    assert tested >= 5 and backward >= 3, f"{tested} forward, {backward} backward stance steps with |P_x| >= 0.2 N s"


def test_pushoff_gain_draws_are_reproducible_and_only_for_the_hopper(wrappers, bigstep_py):
    """g ~ U(1, g_max) per env at the start and per ended episode, from the given stream only."""
    venv = bigstep_py.make_vec("hopper", num_envs=3, backend="cpu", seed=1)
    obs, _ = venv.reset(seed=1)
    a, b = (wrappers.PushoffGain(venv, 3.0, np.random.default_rng(5)) for _ in range(2))
    np.testing.assert_array_equal(a.g, b.g)
    assert np.all((a.g >= 1.0) & (a.g < 3.0)) and len(set(a.g)) == 3
    g0 = a.g.copy()
    done = np.array([True, False, True])
    a(obs, done)
    b(obs, done)
    np.testing.assert_array_equal(a.g, b.g)
    assert a.g[1] == g0[1] and a.g[0] != g0[0] and a.g[2] != g0[2]
    other = wrappers.PushoffGain(venv, 3.0, np.random.default_rng(6))
    assert not np.array_equal(other.g, g0)
    walker = bigstep_py.make_vec("walker2d", num_envs=1, backend="cpu", seed=1)
    with pytest.raises(ValueError, match="hopper"):
        wrappers.PushoffGain(walker, 2.0, np.random.default_rng(0))
    with pytest.raises(SystemExit):
        wrappers.parse_args(["--pushoff-gain-max", "0.5"])


def test_tiny_training_run_with_pushoff_gain_is_reproducible(wrappers, tmp_path):
    tiny = ["--task", "hopper", "--total-steps", "128", "--num-envs", "2", "--n-steps", "64", "--epochs", "1",
            "--minibatch", "32", "--backend", "cpu", "--pushoff-gain-max", "2.5", "--seed", "3"]
    wrappers.main(tiny + ["--out", str(tmp_path / "a")])
    wrappers.main(tiny + ["--out", str(tmp_path / "b")])
    a, b = (torch.load(tmp_path / x / "hopper" / "policy.pt", weights_only=False) for x in ("a", "b"))
    for k in a["model"]:
        assert torch.equal(a["model"][k], b["model"][k]), k


def test_wrapper_hook_runs_after_every_step_and_may_change_the_state(ppo, tmp_path):
    """--wrapper MODULE:CALLABLE (a .py path) and train(make_env_wrappers=...): every hook is built once
    after the reset and called after each of the 64 steps with that step's obs and done; a hook
    that zeroes env 0's velocities changes the trained weights (its state reaches the rollout)."""
    module = tmp_path / "hooks.py"
    module.write_text(
        "import numpy as np\n"
        "CALLS = []\n"
        "def count(venv, args):\n"
        "    def hook(obs, done):\n"
        "        CALLS.append((obs.shape, done.shape))\n"
        "    return hook\n"
        "def still(venv, args):\n"
        "    def hook(obs, done):\n"
        "        c = venv.core\n"
        "        c.set_state(0, c.qpos[0].copy(), np.zeros_like(c.qvel[0]))\n"
        "        obs[0] = c.obs[0]\n"
        "    return [hook]\n")
    tiny = ["--task", "hopper", "--total-steps", "128", "--num-envs", "2", "--n-steps", "64", "--epochs", "1",
            "--minibatch", "32", "--backend", "cpu", "--seed", "5"]
    count = ppo.load_wrapper(f"{module}:count")
    calls = []
    ppo.main(tiny + ["--out", str(tmp_path / "a")],
             make_env_wrappers=lambda venv, args: (lambda obs, done: calls.append((obs.shape, done.shape))))
    assert calls == [((2, 11), (2,))] * 64  # one update of 64 steps
    assert count.__module__ == "hooks"
    ppo.main(tiny + ["--out", str(tmp_path / "b")])
    ppo.main(tiny + ["--out", str(tmp_path / "c"), "--wrapper", f"{module}:still"])
    a, b, c = (torch.load(tmp_path / x / "hopper" / "policy.pt", weights_only=False)["model"] for x in "abc")
    assert all(torch.equal(a[k], b[k]) for k in a)  # a hook that only reads changes nothing
    assert not all(torch.equal(b[k], c[k]) for k in b)
    with pytest.raises(ValueError, match="MODULE:CALLABLE"):
        ppo.load_wrapper("no_colon")
