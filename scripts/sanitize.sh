#!/usr/bin/env bash
# The second configuration: builds everything with AddressSanitizer + UndefinedBehaviorSanitizer
# (the default compiler, GCC on Debian; CUDA and benchmarks off) into build-asan/ and runs the
# whole test suite under it. Any sanitizer report in a test fails that test (halt_on_error).
# -O1 with line tables: usable stack traces at a fraction of -g's build time. Extra arguments go
# to ctest, e.g. scripts/sanitize.sh -L mpi. (The libFuzzer targets, which need clang, build in
# build-fuzz/: scripts/fuzz.sh.)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${TESSEL_ASAN_BUILD_DIR:-build-asan}"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" \
  -DTESSEL_SANITIZE=ON -DTESSEL_BUILD_BENCH=OFF -DTESSEL_ENABLE_CUDA=OFF > /dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)"
source scripts/sanitizer-env.sh
ctest --test-dir "$BUILD_DIR" --output-on-failure -j2 "$@"
