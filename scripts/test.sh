#!/usr/bin/env bash
# Installs dependencies, builds, runs every test: Catch2 through ctest; the sanitizer label of the C++
# tests under AddressSanitizer + UndefinedBehaviorSanitizer (scripts/sanitize.sh); pytest, beside
# which the libFuzzer targets run for 30 s each when clang is present (scripts/fuzz.sh).
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
bash scripts/sanitize.sh
fuzz_pid=""
if [ -f build-asan/tests/fuzz/targets.txt ]; then
  BIGSTEP_FUZZ_BUILD=build-asan BIGSTEP_JOBS=1 bash scripts/fuzz.sh "${BIGSTEP_FUZZ_SECONDS:-30}" >build-asan/fuzz.log 2>&1 &
  fuzz_pid=$!
else
  echo "fuzz: skipped: the sanitized build has no fuzz targets (they need clang)"
fi
if ! wait "$torch_pid"; then
  echo "WARNING: scripts/install_torch.sh failed (build/install_torch.log); the torch / SB3 tests will skip:"
  tail -5 build/install_torch.log
fi
PY=${PYTHON:-python3}
$PY -m pytest -q -rs tests/python
if [ -n "$fuzz_pid" ]; then
  fuzz_rc=0
  wait "$fuzz_pid" || fuzz_rc=$?
  cat build-asan/fuzz.log
  exit "$fuzz_rc"
fi
