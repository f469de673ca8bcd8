#!/usr/bin/env bash
# Builds the C++ tests with AddressSanitizer + UndefinedBehaviorSanitizer (BIGSTEP_SANITIZE) into
# build-asan, without CUDA or the Python module, and runs them through ctest: by default the label
# `sanitize` (a representative subset: tests/CMakeLists.txt BIGSTEP_SANITIZE_TESTS), with --all
# every test. Any ASan / UBSan report fails its test (UBSan does not recover).
#   bash scripts/sanitize.sh [--all]
# The configuration (scripts/sanitized_build.sh): -O1 and a unity build, which keep this stage
# inside CI's budget (scripts/test.sh runs it).
# Compiler: clang++ when present, else g++ (BIGSTEP_SANITIZE_CXX overrides). With clang the build
# also carries the fuzzers' instrumentation (BIGSTEP_FUZZ) and builds the fuzz targets, so
# scripts/fuzz.sh can reuse it:
#   BIGSTEP_FUZZ_BUILD=build-asan bash scripts/fuzz.sh 60
set -euo pipefail
cd "$(dirname "$0")/.."
all=0
[ "${1:-}" = "--all" ] && all=1
dir=${BIGSTEP_SANITIZE_BUILD:-build-asan}
cxx=${BIGSTEP_SANITIZE_CXX:-}
if [ -z "$cxx" ]; then
  if command -v clang++ >/dev/null; then cxx=clang++; else cxx=g++; fi
fi
fuzz=OFF
source scripts/sanitized_build.sh
if [[ "$("$cxx" --version)" == *clang* ]]; then
  # without clang's runtimes, g++ builds the sanitized tests and there are no fuzz targets
  if clang_runtimes_link "$cxx"; then
    [ -z "${BIGSTEP_SANITIZE_NO_FUZZ:-}" ] && fuzz=ON
  else
    echo "sanitize: $cxx cannot link the sanitizer runtimes; using g++"
    cxx=g++
  fi
fi
jobs=${BIGSTEP_JOBS:-$(nproc)}
configure_sanitized "$dir" "$cxx" $fuzz
extra=()
[ $fuzz = ON ] && read -r -a fz <"$dir/tests/fuzz/targets.txt" && extra=("${fz[@]/#/bigstep_fuzz_}")
echo "sanitize: $cxx, address,undefined, $([ $all = 1 ] && echo 'every test' || echo 'label sanitize') in $dir"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
if [ $all = 1 ]; then
  cmake --build "$dir" -j "$jobs"
  (cd "$dir" && ctest --output-on-failure -j "$jobs")
else
  cmake --build "$dir" -j "$jobs" --target bigstep_sanitize_tests "${extra[@]}"
  (cd "$dir" && ctest --output-on-failure -j "$jobs" -L sanitize)
fi
