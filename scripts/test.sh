#!/usr/bin/env bash
# Runs every test: the C++ suite (GoogleTest through ctest, built with AddressSanitizer and
# UndefinedBehaviorSanitizer, so every C++ test also checks for memory errors and undefined
# behaviour) and the Python suite (pytest against the package installed in .venv, which is an
# optimised build). Run scripts/setup.sh once first.
#   scripts/test.sh              C++ (ASan+UBSan) + Python tests
#   scripts/test.sh sanitizers   the threaded C++ tests under ThreadSanitizer
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

run_ctest() {  # build dir, ctest name filter (regex, "" = all), extra cmake args...
  local dir=$1 filter=$2
  shift 2
  cmake -S . -B "$dir" -G Ninja -DPYPTO_WERROR=ON -DPYPTO_BUILD_BENCH=OFF "$@" >/dev/null
  cmake --build "$dir" -j"$jobs"
  (cd "$dir" && ctest --output-on-failure -j"$jobs" ${filter:+-R "$filter"})
}

if [ "${1:-}" = "sanitizers" ]; then
  echo "==> Threaded C++ tests (profiler, runtime, codegen) under ThreadSanitizer"
  # Only the test files of those tests are built (PYPTO_TEST_FILES); line tables only (-g1),
  # which is what a report prints.
  TSAN_OPTIONS="halt_on_error=1" run_ctest build/tsan "Profil|Runtime|Thread|Codegen|Syncall|ClusterPipes" \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DPYPTO_SANITIZE=thread \
    "-DPYPTO_TEST_FILES=/(profiler(_[a-z_]*)?|codegen_[a-z_]*|runtime_(core_memory|dfx|tasks|tracker|syncall|cluster_pipes))_test\.cpp$"
  exit 0
fi

echo "==> C++ tests (under AddressSanitizer + UndefinedBehaviorSanitizer)"
# Without thread-local storage in LeakSanitizer's scan: every program library has a
# thread_local (device/pto_tile.h), and after such libraries are loaded and unloaded, LSan
# read a stale record of dynamic TLS ("DTLS 6 at 0x000000001655-0x001800002757") and its tracer
# crashed at the exit of a passing test ("Tracer caught signal 11"), every time in one
# environment and never with TMPDIR set elsewhere. Scanning less can only report more leaks,
# not fewer; the whole suite reports none.
LSAN_OPTIONS="use_tls=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}" \
  run_ctest build/test "" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 \
    -DPYPTO_SANITIZE=address,undefined

echo "==> Python tests"
.venv/bin/python -m pytest -q tests/python tests/conformance
