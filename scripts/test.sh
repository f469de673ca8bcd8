#!/usr/bin/env bash
# Installs dependencies, builds, runs every test: Catch2 through ctest, then pytest; then the
# sanitizer build (scripts/sanitize.sh) and the fuzz targets (scripts/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# torch + Stable-Baselines3 (SB3's checks, the PPO example's tests): a ~4 GB download that runs
# beside the C++ build and ctest (network, not CPU); a failed install is reported and those tests
# skip with their reason instead of failing the run
mkdir -p build
bash scripts/install_torch.sh >build/install_torch.log 2>&1 &
torch_pid=$!
bash scripts/build.sh
(cd build && ctest --output-on-failure -j "${BIGSTEP_JOBS:-$(nproc)}")
if ! wait "$torch_pid"; then
  echo "WARNING: scripts/install_torch.sh failed (build/install_torch.log); the torch / SB3 tests will skip:"
  tail -5 build/install_torch.log
fi
PY=${PYTHON:-python3}
$PY -m pytest -q -rs tests/python
# ASan + UBSan over the label `sanitize` (build-asan), then the fuzz targets for 60 s each from
# the same build (clang only: without it scripts/fuzz.sh says why and skips)
bash scripts/sanitize.sh
if command -v clang++ >/dev/null; then
  BIGSTEP_FUZZ_BUILD=build-asan bash scripts/fuzz.sh "${BIGSTEP_FUZZ_SECONDS:-60}"
else
  echo "fuzz: skipped: clang++ not found (the fuzz targets need clang's libFuzzer)"
fi
