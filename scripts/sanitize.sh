#!/usr/bin/env bash
# The second configuration: builds everything with AddressSanitizer + UndefinedBehaviorSanitizer
# (clang; CUDA and benchmarks off; the libFuzzer targets too) into build-asan/ and runs the whole
# test suite under it. Any sanitizer report in a test fails that test (halt_on_error). Extra
# arguments go to ctest, e.g. scripts/sanitize.sh -L mpi.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${TESSEL_ASAN_BUILD_DIR:-build-asan}"
scripts/configure-asan.sh "$BUILD_DIR"
cmake --build "$BUILD_DIR" -j "$(nproc)"
source scripts/sanitizer-env.sh
ctest --test-dir "$BUILD_DIR" --output-on-failure -j2 "$@"
