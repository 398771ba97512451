#!/usr/bin/env bash
# The whole test suite, as CI runs it (README.md's quick start):
#   1. the Release build (build/) and every test;
#   2. the AddressSanitizer + UBSan build (build-asan/) and every test under it;
#   3. the libFuzzer targets (clang, ASan + UBSan, build-fuzz/), each for FUZZ_SECONDS (default 20)
#      on its seed corpus.
# Prints how long each part took. Exits non-zero at the first part that fails.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZ_SECONDS="${FUZZ_SECONDS:-20}"
t0=$SECONDS
phase() { echo; echo "=== $* ($(( SECONDS - t0 )) s so far)"; }
phase "1/3 Release build and tests"
scripts/build.sh
ctest --test-dir build --output-on-failure -j2
t1=$SECONDS
phase "2/3 AddressSanitizer + UBSan build and tests"
scripts/sanitize.sh
t2=$SECONDS
phase "3/3 libFuzzer targets, ${FUZZ_SECONDS} s each"
scripts/fuzz.sh "$FUZZ_SECONDS"
t3=$SECONDS
echo
echo "test.sh: all passed. Release $(( t1 - t0 )) s, sanitizers $(( t2 - t1 )) s, fuzzing $(( t3 - t2 )) s, total $(( t3 - t0 )) s"
