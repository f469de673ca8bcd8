#!/usr/bin/env python3
"""Render a bigstep run: OUTDIR/model.xml (written by `bigstep run`, the model as MJCF with
qpos = theta) and OUTDIR/trajectory.csv through MuJoCo's offscreen renderer into OUTDIR/render.gif
and a PNG filmstrip OUTDIR/filmstrip.png.

    python3 tools/render.py OUTDIR [--frames N] [--fps F] [--width W] [--height H] [--strip K]
                            [--rollout K | --grid N]
    bigstep render OUTDIR ...      (the same)

A batch run (`--rollouts K`) also saved its first 16 rollouts (trajectory_rollouts.csv): --rollout K
draws rollout K, --grid N the first N side by side (2 per row from 4 on).

Headless: MUJOCO_GL=egl when unset, osmesa as the fallback (scripts/setup.sh installs libosmesa6).
Bodies are drawn as their geoms plus MuJoCo's equivalent-inertia boxes (YAML links given by `box:`
have no visual geom); the camera tracks the first body."""
import argparse
import csv
import os
import sys


def load_theta(path):
    with open(path) as f:
        rows = list(csv.reader(f))
    return [float(r[0]) for r in rows[1:]], [[float(x) for x in r[1:]] for r in rows[1:]]


def load_rollouts(path, which):
    """t and, per rollout in which, its theta rows from trajectory_rollouts.csv (columns r<k>.<dof>)."""
    with open(path) as f:
        rows = list(csv.reader(f))
    head = rows[0]
    t = [float(r[0]) for r in rows[1:]]
    out = []
    for k in which:
        cols = [i for i, h in enumerate(head) if h.startswith(f"r{k}.")]
        if not cols:
            saved = len({h.split(".")[0] for h in head[1:]})
            sys.exit(f"render: {path} has no rollout {k} (the first {saved} rollouts are saved)")
        out.append([[float(r[i]) for i in cols] for r in rows[1:]])
    return t, out


def make_renderer(mujoco, model, width, height):
    """MuJoCo's offscreen renderer on MUJOCO_GL (chosen before mujoco is imported); when egl fails,
    the script runs again once with osmesa."""
    try:
        return mujoco.Renderer(model, height, width)
    except Exception as e:  # noqa: BLE001 - fall back, then report what failed
        if os.environ.get("MUJOCO_GL") == "egl" and "BIGSTEP_RENDER_RETRY" not in os.environ:
            os.environ.update(MUJOCO_GL="osmesa", PYOPENGL_PLATFORM="osmesa", BIGSTEP_RENDER_RETRY="1")
            os.execv(sys.executable, [sys.executable] + sys.argv)
        sys.exit(f"render: no offscreen OpenGL (MUJOCO_GL={os.environ.get('MUJOCO_GL')}): {e}")


def bounded(kind, lo, hi):
    """An argparse type: a kind (int or float) in [lo, hi]; anything else is a usage error (exit 2)."""
    def parse(text):
        try:
            x = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {'an integer' if kind is int else 'a number'}")
        if not lo <= x <= hi:  # also refuses nan
            raise argparse.ArgumentTypeError(f"{text} is outside [{lo}, {hi}]")
        return x
    return parse


def write_atomically(path, save):
    """save(tmp) writes the file under a temporary name beside path; it is renamed into place only
    when complete, so that a failed write never leaves a partial image."""
    tmp = os.path.join(os.path.dirname(path) or ".", f".{os.path.basename(path)}.tmp-{os.getpid()}")
    try:
        save(tmp)
        os.replace(tmp, path)
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        sys.exit(f"render: cannot write {path}: {e.strerror or e}")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="bigstep render", description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--frames", type=bounded(int, 1, 10000), default=60, help="frames in the GIF (spread over the run), 1 to 10000")
    ap.add_argument("--fps", type=bounded(float, 0.1, 1000), default=20, help="GIF frame rate, 0.1 to 1000")
    ap.add_argument("--width", type=bounded(int, 16, 4096), default=480, help="pixels, 16 to 4096")
    ap.add_argument("--height", type=bounded(int, 16, 4096), default=360, help="pixels, 16 to 4096")
    ap.add_argument("--strip", type=bounded(int, 1, 64), default=6, help="frames in the filmstrip PNG, 1 to 64")
    pick = ap.add_mutually_exclusive_group()
    pick.add_argument("--rollout", type=bounded(int, 0, 15), help="batch runs: draw rollout K (0 to 15)")
    pick.add_argument("--grid", type=bounded(int, 1, 16), help="batch runs: draw the first N rollouts side by side (1 to 16)")
    a = ap.parse_args(argv)
    xml, traj = os.path.join(a.outdir, "model.xml"), os.path.join(a.outdir, "trajectory.csv")
    for p in (xml, traj):
        if not os.path.exists(p):
            why = os.path.join(a.outdir, "model_export_error.txt")
            extra = f" ({open(why).read().strip()})" if os.path.exists(why) else ""
            ap.error(f"{p} not found{extra}: run `bigstep run CONFIG --out {a.outdir}` first")
    os.environ.setdefault("MUJOCO_GL", "egl")  # before mujoco is imported: it picks its GL then
    os.environ.setdefault("PYOPENGL_PLATFORM", os.environ["MUJOCO_GL"])
    import mujoco
    import numpy as np
    from PIL import Image

    model = mujoco.MjModel.from_xml_path(xml)
    # the offscreen framebuffer (640 x 480 unless the model says more) must hold the image
    model.vis.global_.offwidth = max(model.vis.global_.offwidth, a.width)
    model.vis.global_.offheight = max(model.vis.global_.offheight, a.height)
    data = mujoco.MjData(model)
    if a.rollout is not None or a.grid:
        many = os.path.join(a.outdir, "trajectory_rollouts.csv")
        if not os.path.exists(many):
            ap.error(f"{many} not found: --rollout / --grid need a batch run (--rollouts K)")
        t, runs = load_rollouts(many, [a.rollout] if a.rollout is not None else range(a.grid))
    else:
        t, theta = load_theta(traj)
        runs = [theta]
    theta = runs[0]
    if not theta or len(theta[0]) != model.nq:
        sys.exit(f"render: {traj} has {len(theta[0]) if theta else 0} coordinates, model.xml {model.nq}")
    renderer = make_renderer(mujoco, model, a.width, a.height)
    opt = mujoco.MjvOption()
    opt.flags[mujoco.mjtVisFlag.mjVIS_INERTIA] = True
    # a fixed camera aimed at the first body's mean position over the run, far enough to see its
    # whole path (a tracking camera over a plain floor would hide the motion)
    path = []
    for q in theta[:: max(1, len(theta) // 50)]:
        data.qpos[:] = q
        mujoco.mj_kinematics(model, data)
        path.append(data.xpos[1 if model.nbody > 1 else 0].copy())
    path = np.array(path)
    cam = mujoco.MjvCamera()
    cam.type = mujoco.mjtCamera.mjCAMERA_FREE
    cam.lookat[:] = path.mean(axis=0)
    cam.distance = max(1.0, 3.0 * model.stat.extent, 1.5 * float(np.ptp(path, axis=0).max()))
    cam.elevation, cam.azimuth = -20.0, 90.0

    def one(q):
        data.qpos[:] = q
        mujoco.mj_kinematics(model, data)
        mujoco.mj_comPos(model, data)
        mujoco.mj_camlight(model, data)
        renderer.update_scene(data, camera=cam, scene_option=opt)
        return renderer.render().copy()

    def frame(i):  # one rollout, or the grid of several (2 per row from 4 on)
        tiles = [one(run[i]) for run in runs]
        if len(tiles) == 1:
            return tiles[0]
        per_row = 2 if len(tiles) >= 4 else len(tiles)
        while len(tiles) % per_row:
            tiles.append(np.zeros_like(tiles[0]))
        return np.concatenate([np.concatenate(tiles[r:r + per_row], axis=1) for r in range(0, len(tiles), per_row)],
                              axis=0)

    n = len(theta)
    pick = sorted(set(np.linspace(0, n - 1, min(a.frames, n)).round().astype(int)))
    images = [Image.fromarray(frame(i)) for i in pick]
    gif = os.path.join(a.outdir, "render.gif")
    write_atomically(gif, lambda p: images[0].save(p, format="GIF", save_all=True, append_images=images[1:],
                                                   duration=max(1, int(1000 / a.fps)), loop=0))
    strip_idx = sorted(set(np.linspace(0, n - 1, min(a.strip, n)).round().astype(int)))
    strip = np.concatenate([frame(i) for i in strip_idx], axis=1)
    png = os.path.join(a.outdir, "filmstrip.png")
    write_atomically(png, lambda p: Image.fromarray(strip).save(p, format="PNG"))
    renderer.close()
    what = f"rollout {a.rollout}" if a.rollout is not None else f"{len(runs)} rollouts" if len(runs) > 1 else "the run"
    print(f"render: wrote {gif} ({what}, {len(images)} frames, t = {t[0]:g} .. {t[-1]:g} s) and {png}")


if __name__ == "__main__":
    main()
