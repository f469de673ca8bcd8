#!/usr/bin/env bash
# On a machine with a CUDA device: device description, the CUDA equivalence
# tests and the Fig. 8 benchmark (CPU batched backend on all cores vs the CUDA engines, same run),
# then the plot and the speedup table. Binaries come from BIN (a build with CUDA: scripts/build.sh).
# usage: scripts/gpu_bench.sh [BIN=build] [OUT=bench/results]   (BENCH_ARGS adds bench options)
set -uo pipefail
BIN=${1:-build}
OUT=${2:-bench/results}
mkdir -p "$OUT"
{
  echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPU cores"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
} | tee "$OUT/gpu_device.txt"
rc=0
: > "$OUT/gpu_tests.txt"
for t in "$BIN"/tests/test_cuda_* "$BIN"/test_cuda_*; do
  [ -x "$t" ] || continue
  "$t" --use-colour no 2>&1 | tee -a "$OUT/gpu_tests.txt" | tail -3
  [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
done
# shellcheck disable=SC2086
"$BIN/bigstep-bench" gpu-speedup --out "$OUT" ${BENCH_ARGS:---steps 50} || rc=1  # CPU: 4 threads and all cores
python3 bench/paper/plot_gpu_speedup.py "$OUT/gpu_speedup.csv" || echo "plot skipped (python3/matplotlib missing)"
exit $rc
