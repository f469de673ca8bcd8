#!/usr/bin/env bash
# Builds the C++ tests with AddressSanitizer + UndefinedBehaviorSanitizer (BIGSTEP_SANITIZE) into
# build-asan, without CUDA or the Python module, and runs them through ctest: by default the label
# `sanitize` (a representative, fast subset: tests/CMakeLists.txt BIGSTEP_SANITIZE_TESTS), with
# --all every test. Any ASan / UBSan report fails its test (UBSan does not recover).
#   bash scripts/sanitize.sh [--all]
# Compiler: clang++ when present, else g++ (BIGSTEP_SANITIZE_CXX overrides). With clang the build
# also carries the fuzzers' instrumentation (BIGSTEP_FUZZ), so scripts/fuzz.sh can reuse it:
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
[[ "$("$cxx" --version)" == *clang* ]] && [ -z "${BIGSTEP_SANITIZE_NO_FUZZ:-}" ] && fuzz=ON
jobs=${BIGSTEP_JOBS:-$(nproc)}
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" -DBIGSTEP_SANITIZE=address,undefined \
  -DBIGSTEP_FUZZ=$fuzz -DBIGSTEP_CUDA=OFF -DBIGSTEP_PYTHON=OFF ${BIGSTEP_CMAKE_ARGS:-} >/dev/null
echo "sanitize: $cxx, address,undefined, $([ $all = 1 ] && echo 'every test' || echo 'label sanitize') in $dir"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
if [ $all = 1 ]; then
  cmake --build "$dir" -j "$jobs"
  (cd "$dir" && ctest --output-on-failure -j "$jobs")
else
  cmake --build "$dir" -j "$jobs" --target bigstep_sanitize_tests
  (cd "$dir" && ctest --output-on-failure -j "$jobs" -L sanitize)
fi
