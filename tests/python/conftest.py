import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("BIGSTEP_BIN", ROOT / "build" / "bigstep"))
BENCH_BIN = BIN.parent / "bigstep-bench"  # the benchmark harness, built beside the CLI


def _runner(exe):
    if not exe.exists():
        pytest.fail(f"{exe} not built: run scripts/build.sh first")

    def run(*args, check=None):
        p = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, cwd=ROOT)
        if check is not None:
            assert p.returncode == check, (p.returncode, p.stdout, p.stderr)
        return p

    return run


@pytest.fixture(scope="session")
def bigstep():
    """build/bigstep (BIGSTEP_BIN overrides) run from the repository root."""
    return _runner(BIN)


@pytest.fixture(scope="session")
def bigstep_bench():
    """build/bigstep-bench, the benchmark harness, run from the repository root."""
    return _runner(BENCH_BIN)


@pytest.fixture(scope="session")
def bigstep_py():
    """The Python module from build/python (BIGSTEP_PYTHONPATH overrides); configs resolve from ROOT."""
    import importlib
    import sys
    path = Path(os.environ.get("BIGSTEP_PYTHONPATH", ROOT / "build" / "python"))
    if not (path / "bigstep").is_dir():
        pytest.fail(f"{path}/bigstep not built: run scripts/build.sh (needs pip nanobind)")
    sys.path.insert(0, str(path))
    return importlib.import_module("bigstep")
