#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (plus AddressSanitizer and UBSan) into build-fuzz/ and
# runs each for SECONDS (default 30) on its seed corpus. Prints executions and crashes per target;
# exits non-zero if any target crashed. Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH="${1:-30}"; shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(fuzz_model fuzz_hf_config fuzz_cluster fuzz_plan fuzz_cli_args)
BUILD_DIR="${TESSEL_FUZZ_BUILD_DIR:-build-fuzz}"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
  -DTESSEL_FUZZ=ON -DTESSEL_SANITIZE=ON -DTESSEL_BUILD_TESTS=OFF -DTESSEL_BUILD_BENCH=OFF \
  -DTESSEL_ENABLE_CUDA=OFF > /dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)" --target "${TARGETS[@]}"
status=0
for t in "${TARGETS[@]}"; do
  work="$BUILD_DIR/fuzz-work/$t"; mkdir -p "$work/corpus"
  cp -n fuzz/corpus/"$t"/* "$work/corpus/" 2>/dev/null || true
  log="$work/log.txt"
  quiet=(); [ "$t" != fuzz_cli_args ] || quiet=(-close_fd_mask=2)   # the CLI's own messages, not libFuzzer's
  if (cd "$work" && "../../fuzz/$t" -max_total_time="$SECONDS_EACH" -print_final_stats=1 -max_len=4096 -rss_limit_mb=2048 -timeout=10 "${quiet[@]}" corpus > log.txt 2>&1); then
    crashes=0
  else
    crashes=1; status=1
  fi
  execs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || true)
  [ -n "$execs" ] || execs=$(grep -Eo '#[0-9]+' "$log" | tail -1 | tr -d '#' || true)
  echo "$t: ${SECONDS_EACH}s, executions ${execs:-?}, crashes $crashes"
  [ "$crashes" = 0 ] || tail -40 "$log"
done
exit $status
