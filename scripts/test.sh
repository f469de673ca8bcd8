#!/usr/bin/env bash
# Installs dependencies, builds, runs every test: Catch2 through ctest, then pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
(cd build && ctest --output-on-failure -j "${BIGSTEP_JOBS:-$(nproc)}")
PY=${PYTHON:-python3}
$PY -m pytest -q tests/python
