#!/usr/bin/env bash
# Configures and builds into build/ (Release). CUDA is enabled automatically when nvcc exists.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${BIGSTEP_JOBS:-$(nproc)}
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release ${BIGSTEP_CMAKE_ARGS:-} >/dev/null
cmake --build build -j "$jobs"
