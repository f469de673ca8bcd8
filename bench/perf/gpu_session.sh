#!/usr/bin/env bash
# Everything a lent GPU should run, in ONE device call (the device tool runs
# this in the repository root and returns what lands under $OUT):
#   1. build (or reuse a carried build dir) with CUDA for sm_90: bigstep + the CUDA test executables;
#   2. the CUDA equivalence tests (block kernels, warp kernel, graph env step, library path);
#   3. compute-sanitizer synccheck / racecheck / memcheck / initcheck on the small
#      "[sanitize]" test case (every kernel once, seconds without the tool);
#   4. bench gpu-speedup on the floating chain D = 15 (K up to 65536, FP32 + FP64, block kernels,
#      library path and warp kernel -- one launch per horizon and one CUDA graph per lockstep env
#      step -- vs the CPU batched engine on 16 threads in the same run) and the warp kernel's launch
#      plan (shared memory per trajectory, trajectories per block and SM, registers, spills);
#   5. the static plan: ptxas -v register / spill / shared-memory counts of every kernel.
# Each stage has its own time limit; logs go to $OUT (8 files at most come back). If one 600 s call
# is too short, split the stages over two calls (the build dir stays on the warm machine):
#   STAGES="build tests sanitize" bash bench/perf/gpu_session.sh ; STAGES="bench ptxas" bash bench/perf/gpu_session.sh
# usage (device tool): bash bench/perf/gpu_session.sh   env: STAGES (default all five) BUILD=build JOBS=16
#                                                       STEPS=50 CPU_MAX_S=40 BENCH_S=300 SAN_S=45
# The device image has CUDA, CMake and Python but maybe not Eigen / yaml-cpp / nlohmann_json /
# MuJoCo (no registry there). Then build here and carry the binaries:
#   here:   bash bench/perf/gpu_session.sh pack          (-> .gpucarry/: bigstep, the CUDA tests, their
#                                                     non-CUDA shared libraries; ignored by git)
#   device: run(command='BUILD=.gpucarry STAGES="tests sanitize bench" bash bench/perf/gpu_session.sh',
#               carry=[".gpucarry"])
# (ptxas -v needs no device: the static plan is in cuda/README.md.)
set -uo pipefail
if [ "${1:-}" = pack ]; then  # run on the build machine: binaries + libraries for the device
  B=${BUILD:-build}
  rm -rf .gpucarry && mkdir -p .gpucarry/tests .gpucarry/lib
  X="$(git rev-parse --git-common-dir)/info/exclude" && mkdir -p "$(dirname "$X")" &&
    { grep -qx '/.gpucarry/' "$X" 2>/dev/null || echo '/.gpucarry/' >> "$X"; }
  cp "$B/bigstep" .gpucarry/ && cp "$B"/tests/test_cuda_* .gpucarry/tests/ || exit 1
  ldd "$B/bigstep" "$B"/tests/test_cuda_* | awk '/=> \// {print $3}' | grep -v -E '/cuda|libc\.so|libm\.so|libstdc|libgcc|libdl|libpthread|librt' |
    sort -u | xargs -r -I{} cp -L {} .gpucarry/lib/
  pwd > .gpucarry/source_dir  # BIGSTEP_SOURCE_DIR compiled into the tests (configs/ are read from it)
  du -sh .gpucarry
  exit 0
fi
OUT=${OUT:-bench/results/gpu_session}
BUILD=${BUILD:-build}
JOBS=${JOBS:-$(nproc)}
STEPS=${STEPS:-50}
STAGES=${STAGES:-build tests sanitize bench ptxas}
mkdir -p "$OUT"
[ -d "$BUILD/lib" ] && export LD_LIBRARY_PATH="$PWD/$BUILD/lib:${LD_LIBRARY_PATH:-}"
if [ -f "$BUILD/source_dir" ] && [ ! -e "$(cat "$BUILD/source_dir")" ]; then  # the tests' compiled-in source path
  mkdir -p "$(dirname "$(cat "$BUILD/source_dir")")" && ln -s "$PWD" "$(cat "$BUILD/source_dir")"
fi
stage() { [[ " $STAGES " == *" $1 "* ]]; }
log() { echo "== $(date -u '+%H:%M:%S') $*" | tee -a "$OUT/session.txt"; }
rc=0
{
  echo "# bench/perf/gpu_session.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPU cores, commit $(git rev-parse --short HEAD 2>/dev/null)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1
  nvcc --version 2>&1 | tail -1
} | tee -a "$OUT/session.txt"

# 1. build
if stage build; then
  log "build ($JOBS jobs)"
  timeout "${BUILD_S:-400}" bash -c "cmake -S . -B '$BUILD' -DCMAKE_BUILD_TYPE=Release -DBIGSTEP_CUDA=ON \
      -DCMAKE_EXPORT_COMPILE_COMMANDS=ON && cmake --build '$BUILD' -j$JOBS --target bigstep \
      test_cuda_pbfd_lm_equiv_test test_cuda_pbfd_residual_equiv_test" > "$OUT/build.txt" 2>&1 ||
    { log "build FAILED (tail of build.txt:)"; tail -30 "$OUT/build.txt" | tee -a "$OUT/session.txt"; exit 1; }
fi

# 2. CUDA equivalence tests
stage tests && log "CUDA tests"
stage tests && for t in "$BUILD"/tests/test_cuda_*; do
  [ -x "$t" ] || continue
  timeout 150 "$t" --use-colour no --durations yes > "$OUT/tests_$(basename "$t").txt" 2>&1
  r=$?
  log "$(basename "$t"): rc=$r $(grep -E 'test cases|All tests passed' "$OUT/tests_$(basename "$t").txt" | tail -1)"
  [ $r -eq 0 ] || [ $r -eq 77 ] || rc=1  # 77: skipped, no device
done

# 3. compute-sanitizer on the small test case
if stage sanitize && command -v compute-sanitizer > /dev/null; then
  for tool in synccheck racecheck memcheck initcheck; do
    timeout "${SAN_S:-45}" compute-sanitizer --tool $tool --error-exitcode 9 \
      "$BUILD/tests/test_cuda_pbfd_lm_equiv_test" "[sanitize]" > "$OUT/sanitizer_$tool.txt" 2>&1
    r=$?
    log "compute-sanitizer $tool: rc=$r $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer_$tool.txt" | tail -1)"
    [ $r -eq 0 ] || rc=1
  done
  cat "$OUT"/sanitizer_*.txt > "$OUT/sanitizers.txt" && rm -f "$OUT"/sanitizer_*.txt  # few files come back
elif stage sanitize; then
  log "compute-sanitizer not found"
fi

# 4. the benchmark (chain D = 15), CPU on 16 threads in the same run
if stage bench; then
log "bench gpu-speedup --sweeps vs_K_floating --steps $STEPS"
timeout "${BENCH_S:-300}" "$BUILD/bigstep-bench" gpu-speedup --sweeps vs_K_floating --steps "$STEPS" --threads 16 \
  --iters-per-launch 1 --cpu-max-s "${CPU_MAX_S:-40}" --out "$OUT" > "$OUT/bench.txt" 2>&1 || rc=1
grep -E "warp plan|cuda_warp|cpu_batched" "$OUT/bench.txt" | tee -a "$OUT/session.txt"
fi

# 5. the static plan (ptxas -v) of the kernels
if stage ptxas; then
  log "ptxas -v"
  # the build's own nvcc command for cuda/pbd_step.cu, plus -Xptxas -v
  python3 - "$BUILD" > /tmp/ptxas_cmd.sh <<'PY'
import json, re, sys
for e in json.load(open(sys.argv[1] + "/compile_commands.json")):
    if e["file"].endswith("cuda/pbd_step.cu"):
        c = re.sub(r"^\S*ccache\s+", "", e["command"])
        c = re.sub(r" -o \S+", " -o /tmp/pbfd_lm_ptxas.o", c)
        print("cd " + e["directory"] + " && " + c + " -Xptxas -v")
PY
  timeout 200 bash /tmp/ptxas_cmd.sh > "$OUT/ptxas.txt" 2>&1 || echo "ptxas run failed" >> "$OUT/ptxas.txt"
  grep -A2 "lm_warp_kernel\|lm_iteration_kernel" "$OUT/ptxas.txt" | grep -E "Compiling|registers|spill" | head -24 >> "$OUT/session.txt"
fi
log "done, rc=$rc"
exit $rc
