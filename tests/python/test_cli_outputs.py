"""`bigstep run`, `export-mjcf` and `render` against a hostile user: writes that fail (a full
device) are errors naming the file, never "wrote"; out-of-range numbers, seeds above 2^53, path
names as scene names and names that are not UTF-8 are refused by key; what an MJCF import
approximates is reported."""
import json
import os
import resource
import signal
import subprocess

import pytest

from conftest import BIN, ROOT

CONFIG = "configs/box_slide.yaml"
SHORT = ["--set", "integrator.duration=0.05", "--quiet"]
FULL = "/dev/full"

needs_dev_full = pytest.mark.skipif(not os.path.exists(FULL), reason="no /dev/full")


def _one_line(p):
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    return lines[0]


@needs_dev_full
@pytest.mark.parametrize("batch", [[], ["--rollouts", "2"]], ids=["single", "batch"])
def test_run_into_a_full_device_fails_naming_the_file(bigstep, tmp_path, batch):
    # BUG: every write was lost into /dev/full, the run printed "wrote .../summary.json", exit 0
    os.symlink(FULL, tmp_path / "summary.json")
    p = bigstep("run", CONFIG, *SHORT, *batch, "--out", tmp_path, check=1)
    line = _one_line(p)
    assert f"cannot write {tmp_path / 'summary.json'}" in line and "No space left on device" in line
    assert "wrote" not in p.stdout
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".")]  # no temporaries left


def test_run_over_the_file_size_limit_leaves_no_partial_file(tmp_path):
    """A write that fails halfway (RLIMIT_FSIZE: EFBIG) on a regular file: the error names it, and
    the earlier complete file stays as it was."""
    out = tmp_path / "run"
    out.mkdir()
    (out / "trajectory.csv").write_text("old\n")

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))

    p = subprocess.run([str(BIN), "run", CONFIG, "--set", "integrator.duration=0.5", "--set",
                        "metrics.stop_at_rest=false", "--quiet", "--out", str(out)],
                       capture_output=True, text=True, cwd=ROOT, preexec_fn=limit)
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert f"cannot write {out / 'trajectory.csv'}" in p.stderr and "wrote" not in p.stdout
    assert (out / "trajectory.csv").read_text() == "old\n"
    assert not (out / "summary.json").exists()
    assert not [f for f in os.listdir(out) if f.startswith(".")]


@needs_dev_full
def test_export_into_a_full_device_fails_naming_the_file(bigstep):
    # BUG: "bigstep export-mjcf: wrote /dev/full", exit 0
    p = bigstep("export-mjcf", CONFIG, "-o", FULL, check=1)
    line = _one_line(p)
    assert f"cannot write {FULL}" in line and "wrote" not in p.stderr + p.stdout


def test_export_usage_errors_exit_2(bigstep, tmp_path):
    for args in (["export-mjcf"], ["export-mjcf", CONFIG, "-o"], ["export-mjcf", CONFIG, "--frobnicate"],
                 ["export-mjcf", tmp_path / "missing.yaml"], ["export-mjcf", CONFIG, "-o", tmp_path / "no" / "m.xml"],
                 ["export-mjcf", CONFIG, "-o", tmp_path]):
        p = bigstep(*args, check=2)
        assert "Traceback" not in p.stderr
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("key", ["randomize_friction", "randomize_stiffness", "randomize_mass",
                                 "randomize_limit_stiffness"])
def test_randomisation_spread_is_bounded(bigstep, tmp_path, key):
    # BUG: randomize_mass = 1000 ran rollouts with mass 0 (status 0) and inf
    line = _one_line(bigstep("run", CONFIG, *SHORT, "--rollouts", 4, "--set", f"batch.{key}=1000",
                             "--out", tmp_path, check=2))
    assert CONFIG in line and f"batch.{key} = 1000" in line and "[0, 5]" in line


def test_compliant_max_contacts_is_bounded(bigstep, tmp_path):
    # BUG: 3 * 1e9 overflowed an int; "out of memory", exit 1
    line = _one_line(bigstep("run", "configs/smd.yaml", *SHORT, "--set", "compliant.max_contacts=1e9",
                             "--out", tmp_path, check=2))
    assert "compliant.max_contacts = 1000000000" in line and "[0, 1024]" in line
    line = _one_line(bigstep("run", "configs/smd.yaml", *SHORT, "--set", "compliant.max_contacts=1024",
                             "--set", "compliant.friction_cone=polyhedral", "--set", "compliant.cone_edges=64",
                             "--out", tmp_path, check=2))
    assert "compliant.max_contacts = 1024" in line and "MiB allowed" in line


def test_seed_above_2_53_is_kept_exactly(bigstep, tmp_path):
    # BUG: read as a double, 2^53 + 1 ran as 2^53
    seed = 2**53 + 1
    bigstep("run", CONFIG, *SHORT, "--rollouts", 2, "--seed", seed, "--out", tmp_path, check=0)
    assert json.loads((tmp_path / "summary.json").read_text())["seed"] == seed
    line = _one_line(bigstep("run", CONFIG, *SHORT, "--rollouts", 2, "--seed", 2**64, "--out", tmp_path, check=2))
    assert f"batch.seed = {2**64}" in line


def test_scene_name_cannot_leave_the_output_folder(bigstep, tmp_path):
    # BUG: scene: ../../x wrote to ../../x/ beside out/
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    cfg = tmp_path / "escape.yaml"
    cfg.write_text((ROOT / CONFIG).read_text().replace("scene: ", "scene: ../../x  # was ", 1))
    p = subprocess.run([str(BIN), "run", str(cfg), *SHORT], capture_output=True, text=True, cwd=work)
    assert p.returncode == 2, p.stderr
    assert "scene = ../../x" in _one_line(p) and "plain folder name" in p.stderr
    assert not (tmp_path / "x").exists() and not (work / "out").exists()


@pytest.mark.parametrize("args", [["--frames", "0"], ["--width", "-5"], ["--height", "100000"], ["--fps", "0"],
                                  ["--fps", "nan"], ["--strip", "0"], ["--grid", "0"]])
def test_render_bad_arguments_are_usage_errors(bigstep, tmp_path, args):
    # BUG: --frames 0 / --width -5 ended in a Python traceback (exit 1)
    p = bigstep("render", tmp_path, *args, check=2)
    assert "Traceback" not in p.stderr and args[0] in p.stderr


MJCF_APPROX = """<mujoco model="approx">
  <worldbody>
    <geom name="floor" type="plane" size="5 5 .1"/>
    <body name="drum" pos="0 0 0.3">
      <freejoint/>
      <geom name="can" type="cylinder" size="0.05 0.2"/>
      <geom name="egg" type="ellipsoid" size="0.03 0.04 0.05" pos="0 0 0.25"/>
      <geom name="look" type="box" size="0.01 0.01 0.01" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
</mujoco>
"""


def test_import_approximations_are_reported_once(bigstep, tmp_path):
    # BUG: the cylinder became a capsule, the ellipsoid a sphere, the box was left out, silently
    xml = tmp_path / "approx.xml"
    xml.write_text(MJCF_APPROX)
    p = bigstep("run", xml, "--set", "integrator.duration=0.02", "--quiet", "--out", tmp_path / "o", check=0)
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    approx = s["import_approximations"]
    assert any("cylinder" in a and "(can)" in a for a in approx)
    assert any("ellipsoid" in a and "(egg)" in a for a in approx)
    assert any("visual-only" in a and "(look)" in a for a in approx)
    for a in approx:
        assert p.stderr.count(a) == 1, (a, p.stderr)
    # a batch run reports them too
    bigstep("run", xml, "--set", "integrator.duration=0.02", "--rollouts", 2, "--quiet", "--out", tmp_path / "b",
            check=0)
    assert json.loads((tmp_path / "b" / "summary.json").read_text())["import_approximations"] == approx


def test_mjcf_name_that_is_not_utf8_is_refused(bigstep, tmp_path):
    # BUG: inspect exited 1 with a JSON library message; run left an empty summary.json
    xml = tmp_path / "bad_name.xml"
    xml.write_bytes(MJCF_APPROX.encode().replace(b'name="drum"', b'name="dr\xffum"'))
    for cmd in ("run", "inspect"):
        p = subprocess.run([str(BIN), cmd, str(xml), *(["--quiet", "--out", str(tmp_path / "o")] if cmd == "run" else [])],
                           capture_output=True, cwd=ROOT)
        assert p.returncode == 2, p.stderr
        err = p.stderr.decode()
        assert "body 1.name" in err and "dr\\xffum" in err and "not valid UTF-8" in err
    assert not (tmp_path / "o" / "summary.json").exists()
