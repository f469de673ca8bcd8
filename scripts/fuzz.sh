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
# libFuzzer's and the sanitizers' runtimes (Debian packages them apart from clang)
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' >"$probe/p.cpp"
if ! "$cxx" -fsanitize=fuzzer,address,undefined "$probe/p.cpp" -o "$probe/p" 2>/dev/null; then
  v=$("$cxx" -dumpversion | cut -d. -f1)
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "fuzz: installing libclang-rt-$v-dev (libFuzzer / sanitizer runtimes)"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "libclang-rt-$v-dev" >/dev/null
fi
jobs=${BIGSTEP_JOBS:-$(nproc)}
# (the configuration of scripts/sanitize.sh: -O1, unity build; a directory it made is reused as is)
if [ ! -f "$dir/tests/fuzz/targets.txt" ]; then
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG" -DCMAKE_UNITY_BUILD=ON \
    -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 -DCMAKE_CXX_COMPILER="$cxx" -DBIGSTEP_FUZZ=ON -DBIGSTEP_SANITIZE=address,undefined \
    -DBIGSTEP_CUDA=OFF -DBIGSTEP_PYTHON=OFF ${BIGSTEP_CMAKE_ARGS:-} >/dev/null
fi
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
