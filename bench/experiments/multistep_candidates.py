#!/usr/bin/env python3
"""Candidates for the second-order position-based step, compared on small ODEs (docs/methods/pbfd.md §3.1).

Every candidate keeps the unknowns and the structure of the position-based step: a backward
difference D(theta)_{n+1} / dt^2 of the configuration equals the acceleration at theta_{n+1}
(forces at the end of the step), with velocity-dependent terms at t_{n+1} from a backward formula.
Only the weights differ, so in the simulator a candidate changes the inertia anchor and two scalars.

  order1  (1, -2, 1)                       the papers' form, velocity (theta - theta_n)/dt
  bd4     (2, -5, 4, -1)                   four-point backward difference, BDF2 velocity
  bdf2x2  (9/4, -6, 11/2, -2, 1/4)         BDF2 applied to (theta, theta_dot): five points, BDF2 velocity

Measured here (prototype in NumPy, no simulator code):
  - a double pendulum released from 60 / 30 degrees, 2 s, largest angle error against RK4 at 1e-4 s
    (each step solved by Newton's method), dt = 5 ... 100 ms;
  - a ball dropped on a stiff penalty floor (k = 1e5 N/m for 1 kg, contact period 20 ms) at
    dt = 10 ... 100 ms: whether it stays stable and the largest rebound height (energy gained);
  - the amplification factor |z| on theta'' = -w^2 theta.
Writes bench/experiments/results/multistep_candidates.csv and .png.

    python3 bench/experiments/multistep_candidates.py
"""
import csv
import json
import os
import platform
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "results")

# backward-difference weights c_0.. (theta_{n+1}, theta_n, ...) of theta'' and b_0.. of theta'
CANDIDATES = {
    "order1": ([1.0, -2.0, 1.0], [1.0, -1.0]),
    "bd4": ([2.0, -5.0, 4.0, -1.0], [1.5, -2.0, 0.5]),
    "bdf2x2": ([9 / 4, -6.0, 11 / 2, -2.0, 1 / 4], [1.5, -2.0, 0.5]),
}


# ---- double pendulum (point masses m at the ends of massless rods l), angles from the vertical
G, L1, L2, M1, M2 = 9.81, 1.0, 1.0, 1.0, 1.0


def dp_accel(q, v):
    a, b = q
    da, db = v
    d = a - b
    M = np.array([[(M1 + M2) * L1 * L1, M2 * L1 * L2 * np.cos(d)], [M2 * L1 * L2 * np.cos(d), M2 * L2 * L2]])
    f = np.array([-M2 * L1 * L2 * db * db * np.sin(d) - (M1 + M2) * G * L1 * np.sin(a),
                  M2 * L1 * L2 * da * da * np.sin(d) - M2 * G * L2 * np.sin(b)])
    return np.linalg.solve(M, f)


def rk4(q0, T, h, every):
    q, v = np.array(q0, float), np.zeros(2)
    out = [q.copy()]
    n = int(round(T / h))
    for i in range(1, n + 1):
        k1q, k1v = v, dp_accel(q, v)
        k2q, k2v = v + h / 2 * k1v, dp_accel(q + h / 2 * k1q, v + h / 2 * k1v)
        k3q, k3v = v + h / 2 * k2v, dp_accel(q + h / 2 * k2q, v + h / 2 * k2v)
        k4q, k4v = v + h * k3v, dp_accel(q + h * k3q, v + h * k3v)
        q = q + h / 6 * (k1q + 2 * k2q + 2 * k3q + k4q)
        v = v + h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
        if i % every == 0:
            out.append(q.copy())
    return np.array(out)


def newton(res, x, tol=1e-12, it_max=100):
    """Newton's method with a central-difference Jacobian (dim <= 2), halving the step when |r| grows."""
    r = res(x)
    for _ in range(it_max):
        if np.max(np.abs(r)) * 1e-6 < tol:
            break
        J = np.empty((len(x), len(x)))
        for j in range(len(x)):
            e = np.zeros(len(x))
            e[j] = 1e-7 * max(1.0, abs(x[j]))
            J[:, j] = (res(x + e) - res(x - e)) / (2 * e[j])
        dx = np.linalg.solve(J, -r)
        t = 1.0
        while t > 1e-6:
            xn = x + t * dx
            rn = res(xn)
            if np.linalg.norm(rn) < np.linalg.norm(r):
                break
            t *= 0.5
        x, r = xn, rn
    return x


def multistep(accel, c, b, q0, v0, T, h, dim):
    """theta_{n+1} from sum c_k theta_{n+1-k} / h^2 = accel(theta_{n+1}, sum b_k theta_{n+1-k} / h).
    Start: the history is the quadratic through (q0, v0, a0) -- the exact start the simulator's
    first step reproduces (docs/methods/pbfd.md §3.1)."""
    a0 = accel(q0, v0)
    hist = [q0 - k * h * v0 + 0.5 * (k * h) ** 2 * a0 for k in range(len(c) - 1)]  # theta_n, theta_{n-1}, ...
    out = [q0.copy()]
    for _ in range(int(round(T / h))):
        rest = sum(c[k + 1] * hist[k] for k in range(len(c) - 1))
        vrest = sum(b[k + 1] * hist[k] for k in range(len(b) - 1))

        def res(x):
            return (c[0] * x + rest) / (h * h) - accel(x, (b[0] * x + vrest) / h)

        x = newton(res, 2 * hist[0] - hist[1])
        hist = [x] + hist[:-1]
        out.append(x.copy())
    return np.array(out)


# ---- ball on a penalty floor: z'' = -g + k max(0, -z)^1 / m, k = 1e5 (contact period ~20 ms)
K_FLOOR = 1e5


def ball_accel(q, v):
    z = q[0]
    return np.array([-G + (K_FLOOR * -z if z < 0 else 0.0)])


def amplification(c, wh):
    p = np.array(c, float)
    p[0] += wh * wh
    return max(abs(np.roots(p)))


def main():
    os.makedirs(OUT, exist_ok=True)
    rows = []
    t0 = time.process_time()
    ref = rk4([np.pi / 3, np.pi / 6], 2.0, 1e-4, 50)  # every 5 ms
    for name, (c, b) in CANDIDATES.items():
        for dt in [0.005, 0.01, 0.02, 0.05, 0.1]:
            sim = multistep(dp_accel, c, b, np.array([np.pi / 3, np.pi / 6]), np.zeros(2), 2.0, dt, 2)
            stride = int(round(dt / 0.005))
            err = float(np.max(np.abs(sim - ref[::stride][: len(sim)])))
            rows.append({"test": "double_pendulum", "candidate": name, "dt": dt, "value": err,
                         "what": "largest angle error over 2 s vs RK4 [rad]"})
            print(f"double pendulum {name:7s} dt {dt:5.3f}: max angle error {err:.3e}", file=sys.stderr)
        for dt in [0.01, 0.02, 0.05, 0.1]:
            sim = multistep(ball_accel, c, b, np.array([0.5]), np.zeros(1), 3.0, dt, 1)
            first_contact = int(np.argmax(sim[:, 0] < 0))
            rebound = float(np.max(sim[first_contact:, 0])) if first_contact > 0 else float("nan")
            ok = bool(np.all(np.isfinite(sim)) and np.max(np.abs(sim)) < 10)
            rows.append({"test": "ball_drop_rebound", "candidate": name, "dt": dt,
                         "value": rebound if ok else float("inf"),
                         "what": "largest height after the first contact, dropped from 0.5 m [m]"})
            print(f"ball drop       {name:7s} dt {dt:5.3f}: stable {ok}, rebound {rebound:.3e} m", file=sys.stderr)
        for wh in [0.1, 0.3, 1, 3, 10, 100]:
            rows.append({"test": "amplification", "candidate": name, "dt": wh, "value": amplification(c, wh),
                         "what": "|z| per step on theta'' = -w^2 theta; dt column = w dt"})
    path = os.path.join(OUT, "multistep_candidates.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["test", "candidate", "dt", "value", "what"])
        w.writeheader()
        w.writerows(rows)
    with open(path.replace(".csv", ".meta.json"), "w") as f:
        json.dump({"command": "python3 bench/experiments/multistep_candidates.py",
                   "machine": platform.processor() or platform.machine(), "date": time.strftime("%Y-%m-%d"),
                   "cpu_s": round(time.process_time() - t0, 1)}, f, indent=1)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(1, 2, figsize=(10, 4))
        for name in CANDIDATES:
            dp = [r for r in rows if r["test"] == "double_pendulum" and r["candidate"] == name]
            ax[0].loglog([r["dt"] for r in dp], [r["value"] for r in dp], "o-", label=name)
            am = [r for r in rows if r["test"] == "amplification" and r["candidate"] == name]
            ax[1].semilogx([r["dt"] for r in am], [r["value"] for r in am], "o-", label=name)
        ax[0].set_xlabel("dt [s]")
        ax[0].set_ylabel("double pendulum: max angle error over 2 s [rad]")
        ax[1].set_xlabel("w dt")
        ax[1].set_ylabel("|z| per step on theta'' = -w^2 theta")
        for a in ax:
            a.grid(True, which="both", alpha=0.3)
            a.legend()
        fig.tight_layout()
        fig.savefig(path.replace(".csv", ".png"), dpi=110)
    except ImportError:
        print("matplotlib missing: no PNG", file=sys.stderr)
    print(path)


if __name__ == "__main__":
    main()
