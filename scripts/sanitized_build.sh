# Sourced by scripts/sanitize.sh and scripts/fuzz.sh: the one configuration of a sanitized build.
#   clang_runtimes_link CXX   true when CXX links libFuzzer + ASan + UBSan; installs Debian's
#                             libclang-rt-<version>-dev (they are packaged apart from clang) when not
#   configure_sanitized DIR CXX FUZZ(ON|OFF)
#                             ASan + UBSan, -O1 (ASan's recommended level) and a unity build of 16
#                             sources (about half the CPU time of a Release build), no CUDA or Python
clang_runtimes_link() {
  local cxx=$1 probe ok=1
  probe=$(mktemp -d)
  echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' >"$probe/p.cpp"
  if ! "$cxx" -fsanitize=fuzzer,address,undefined "$probe/p.cpp" -o "$probe/p" 2>/dev/null; then
    local v sudo=""
    v=$("$cxx" -dumpversion | cut -d. -f1)
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "installing libclang-rt-$v-dev (libFuzzer / sanitizer runtimes)"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "libclang-rt-$v-dev" >/dev/null 2>&1 || true
    "$cxx" -fsanitize=fuzzer,address,undefined "$probe/p.cpp" -o "$probe/p" 2>/dev/null || ok=0
  fi
  rm -rf "$probe"
  [ $ok = 1 ]
}

configure_sanitized() {
  cmake -S . -B "$1" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG" -DCMAKE_UNITY_BUILD=ON \
    -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 -DCMAKE_CXX_COMPILER="$2" -DBIGSTEP_SANITIZE=address,undefined \
    -DBIGSTEP_FUZZ="$3" -DBIGSTEP_CUDA=OFF -DBIGSTEP_PYTHON=OFF ${BIGSTEP_CMAKE_ARGS:-} >/dev/null
}
