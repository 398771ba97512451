#!/usr/bin/env bash
# Configures the sanitizer build (shared by scripts/sanitize.sh and scripts/fuzz.sh, so the two
# never reconfigure each other): clang, AddressSanitizer + UBSan, libFuzzer targets, tests; CUDA
# and benchmarks off. -O1 with line tables: usable stack traces at a fraction of -g's build time.
# Usage: scripts/configure-asan.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
  -DTESSEL_SANITIZE=ON -DTESSEL_FUZZ=ON -DTESSEL_BUILD_TESTS=ON -DTESSEL_BUILD_BENCH=OFF \
  -DTESSEL_ENABLE_CUDA=OFF > /dev/null
