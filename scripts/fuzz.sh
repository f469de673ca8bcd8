#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (the scene loader with --set overrides, the MJCF
# converter) with clang, AddressSanitizer and UndefinedBehaviorSanitizer into build-fuzz, and runs
# each for SECONDS (default 60) from its seed corpus (tests/fuzz/corpus/<name>).
#   bash scripts/fuzz.sh [SECONDS]
# A finding (crash, sanitizer report, leak, uncaught exception, an input slower than 10 s) stops
# that target with its reproducer written to build-fuzz/findings/<name>/ and this script exits 1;
# replay one with build-fuzz/tests/fuzz/bigstep_fuzz_<name> FILE. New coverage-increasing inputs
# go to build-fuzz/corpus/<name>, never into the seed corpus. Without clang it prints why and exits 0.
# BIGSTEP_FUZZ_BUILD: another build directory configured the same way (scripts/sanitize.sh's
# build-asan: BIGSTEP_FUZZ_BUILD=build-asan after scripts/sanitize.sh with clang).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
dir=${BIGSTEP_FUZZ_BUILD:-build-fuzz}
cxx=${BIGSTEP_FUZZ_CXX:-clang++}
if ! command -v "$cxx" >/dev/null; then
  echo "fuzz: skipped: $cxx not found (the fuzz targets need clang's libFuzzer)"
  exit 0
fi
source scripts/sanitized_build.sh
clang_runtimes_link "$cxx" || { echo "fuzz: $cxx cannot link libFuzzer / the sanitizer runtimes"; exit 1; }
jobs=${BIGSTEP_JOBS:-$(nproc)}
# (a directory scripts/sanitize.sh made is reused as is)
[ -f "$dir/tests/fuzz/targets.txt" ] || configure_sanitized "$dir" "$cxx" ON
read -r -a targets <"$dir/tests/fuzz/targets.txt"  # (mjcf needs MuJoCo: pip install mujoco)
[[ " ${targets[*]} " == *" mjcf "* ]] || echo "fuzz: the MJCF target skipped: no MuJoCo (pip install mujoco)"
cmake --build "$dir" -j "$jobs" --target "${targets[@]/#/bigstep_fuzz_}"
rc=0
for t in "${targets[@]}"; do
  mkdir -p "$dir/corpus/$t" "$dir/findings/$t"
  echo "fuzz: $t for ${secs} s"
  # -rss_limit_mb: the loader's own byte budget is far below it; -timeout: one input, seconds
  if ! ASAN_OPTIONS=detect_leaks=1 "$dir/tests/fuzz/bigstep_fuzz_$t" "$dir/corpus/$t" "tests/fuzz/corpus/$t" \
      -max_total_time="$secs" -timeout=10 -rss_limit_mb=4096 -artifact_prefix="$dir/findings/$t/" \
      -print_final_stats=1 >"$dir/fuzz_$t.log" 2>&1; then
    echo "fuzz: $t FOUND something (log: $dir/fuzz_$t.log, input: $dir/findings/$t/):"
    tail -40 "$dir/fuzz_$t.log"
    rc=1
  else
    grep -E "^stat::number_of_executed_units|^Done" "$dir/fuzz_$t.log" | sed "s/^/fuzz: $t: /"
  fi
done
exit $rc
