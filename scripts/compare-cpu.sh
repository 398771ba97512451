#!/usr/bin/env bash
# Closes tessel's loop on this machine's CPU: calibrate it, then for three two-rank layouts of
# tiny-gpt (PP 2 1F1B, TP 2, DP 2 ZeRO-1; microbatch 2, global batch 16, sequence 128) simulate
# the plan on the calibrated cluster, run it for real under mpirun, and compare the two.
# Writes everything into OUT (default reports/cpu): the calibrated cluster, the raw
# measurements, each layout's simulated and measured JSON, the comparisons (text and JSON), an
# HTML report per layout, and summary.md. Needs an idle machine: anything else running skews
# both the calibration and the runs.
# Usage: scripts/compare-cpu.sh [BUILD_DIR]   (default build; the tessel binary is BUILD_DIR/cli/tessel)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${1:-build}"
TESSEL="$BUILD_DIR/cli/tessel"
OUT="${OUT:-reports/cpu}"
STEPS="${STEPS:-20}"
REPEATS="${REPEATS:-3}"
[ -x "$TESSEL" ] || { echo "no tessel binary at $TESSEL (build first: scripts/build.sh)"; exit 2; }
mkdir -p "$OUT"
MPIRUN=(mpirun --oversubscribe -np 2)

echo "== calibrate (2 ranks)"
"${MPIRUN[@]}" "$TESSEL" calibrate --backend cpu --out "$OUT/cluster.json" --raw "$OUT/calibrate-raw.json" \
  2> "$OUT/calibrate-progress.txt" | tee "$OUT/calibrate.txt"

BATCH=(--microbatch-size 2 --global-batch-size 16 --seq 128 --precision fp32)
declare -A LAYOUT=([pp2-1f1b]="--pp 2 --schedule 1f1b" [tp2]="--tp 2" [dp2-zero1]="--dp 2 --zero-stage 1")
{
  echo "# Simulated against measured on this machine's CPU"
  echo
  echo "tiny-gpt, microbatch 2, global batch 16, sequence 128, fp32, 2 MPI ranks; the cluster is"
  echo "\`cluster.json\` as \`tessel calibrate\` measured it just before. Produced by"
  echo "\`scripts/compare-cpu.sh\` on $(date -u +%Y-%m-%d); each layout run $REPEATS times for $STEPS steps,"
  echo "the run with the median step kept (its step: the median after warm-up)."
  echo "Targets: step time within 15%, peak memory within 10%."
  echo
} > "$OUT/summary.md"
for name in pp2-1f1b tp2 dp2-zero1; do
  read -r -a flags <<< "${LAYOUT[$name]}"
  echo "== $name: simulate, run, compare"
  "$TESSEL" simulate --model tiny-gpt --cluster "$OUT/cluster.json" "${flags[@]}" "${BATCH[@]}" \
    --json "$OUT/$name.simulated.json" --trace "$OUT/$name.trace.json" > "$OUT/$name.simulated.txt"
  # A shared virtual machine's speed drifts by tens of percent from minute to minute: run the
  # layout REPEATS times and keep the run whose median step is the median of theirs.
  : > "$OUT/$name.measured.txt"
  for r in $(seq 1 "$REPEATS"); do
    "${MPIRUN[@]}" "$TESSEL" run --model tiny-gpt "${flags[@]}" "${BATCH[@]}" --steps "$STEPS" \
      --cluster "$OUT/cluster.json" --out "$OUT/$name.measured.$r.json" >> "$OUT/$name.measured.txt"
  done
  steps=$(for r in $(seq 1 "$REPEATS"); do
            echo "$(grep -o '"step_time_s": [0-9.e+-]*' "$OUT/$name.measured.$r.json" | cut -d' ' -f2) $r"
          done)
  pick=$(sort -g <<< "$steps" | awk -v n="$REPEATS" 'NR == int((n + 1) / 2) {print $2}')
  echo "runs' median steps (s): $(cut -d' ' -f1 <<< "$steps" | tr '\n' ' ')-> keeping run $pick" | tee -a "$OUT/$name.measured.txt"
  mv "$OUT/$name.measured.$pick.json" "$OUT/$name.measured.json"
  rm -f "$OUT"/"$name".measured.[0-9]*.json
  "$TESSEL" compare --simulated "$OUT/$name.simulated.json" --measured "$OUT/$name.measured.json" \
    | tee "$OUT/$name.compare.txt"
  "$TESSEL" compare --simulated "$OUT/$name.simulated.json" --measured "$OUT/$name.measured.json" --json \
    > "$OUT/$name.compare.json"
  "$TESSEL" report --simulated "$OUT/$name.simulated.json" --measured "$OUT/$name.measured.json" \
    --out "$OUT/$name.report.html" || echo "(no report: tessel report failed)"
  { echo "- **$name** (\`${LAYOUT[$name]}\`): $(grep '^verdict' "$OUT/$name.compare.txt" | sed 's/^verdict: //')"; } >> "$OUT/summary.md"
done
echo; cat "$OUT/summary.md"
