#!/usr/bin/env bash
# `pip install .` into a fresh virtual environment (VENV, default a temporary one; it sees the
# interpreter's site-packages for numpy / gymnasium / mujoco, so only the wheel is built), then
# imports the installed bigstep from /tmp -- no PYTHONPATH, no source tree -- and resets a hopper.
#   bash scripts/test_pip_install.sh [VENV]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-python3}
VENV=${1:-$(mktemp -d)/venv}
$PY -m venv --system-site-packages "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check "$ROOT"
cd /tmp
env -u PYTHONPATH -u PYTHON "$VENV/bin/python" - <<'PY'
import bigstep, os
assert "site-packages" in bigstep.__file__, bigstep.__file__
env = bigstep.make("hopper")
obs, _ = env.reset(seed=0)
assert os.path.isfile(os.path.join(os.path.dirname(bigstep.__file__), "tasks", "hopper.yaml"))
print("bigstep installed: hopper obs", obs.shape, "from", bigstep.__file__)
PY
