#!/usr/bin/env bash
# Closes tessel's loop on this machine's CPU: calibrate it, then for four two-rank layouts of
# tiny-gpt (PP 2 1F1B, TP 2, DP 2 ZeRO-1, CP 2; microbatch 2, global batch 16, sequence 128)
# simulate the plan on the calibrated cluster, run it for real under mpirun, and compare the two.
# CP 2 is simulated the way tessel run computes it (--all-gather-context-parallel).
#
# A shared virtual machine's speed drifts by tens of percent from one minute to the next (its
# memory bandwidth most), so one calibration followed by runs minutes later can disagree for
# reasons that are not the simulator's. The script therefore runs ROUNDS rounds, each a fresh
# calibration followed at once by one run of every layout against it; summary.md lists every
# round's errors, and OUT keeps the files of the round whose worst error is the median of the
# rounds' (the calibrated cluster, the raw measurements, each layout's simulated and measured
# JSON, the comparisons as text and JSON, and an HTML report per layout).
# Needs an idle machine: anything else running skews both the calibration and the runs.
# Usage: scripts/compare-cpu.sh [BUILD_DIR]   (default build; the tessel binary is BUILD_DIR/cli/tessel)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${1:-build}"
TESSEL="$BUILD_DIR/cli/tessel"
OUT="${OUT:-reports/cpu}"
STEPS="${STEPS:-20}"
ROUNDS="${ROUNDS:-3}"
[ -x "$TESSEL" ] || { echo "no tessel binary at $TESSEL (build first: scripts/build.sh)"; exit 2; }
mkdir -p "$OUT"
# The rounds' files, beside OUT and relative to the checkout, so that the paths the tools print
# into the kept files are the checkout's, not this machine's.
WORK="$OUT/.rounds"
rm -rf "$WORK"
trap 'rm -rf "$WORK"' EXIT
MPIRUN=(mpirun --oversubscribe -np 2)
BATCH=(--microbatch-size 2 --global-batch-size 16 --seq 128 --precision fp32)
NAMES=(pp2-1f1b tp2 dp2-zero1 cp2)
declare -A LAYOUT=([pp2-1f1b]="--pp 2 --schedule 1f1b" [tp2]="--tp 2" [dp2-zero1]="--dp 2 --zero-stage 1" [cp2]="--cp 2")
# How tessel run computes a layout, where the simulator's default is another framework's way.
declare -A SIMULATE_AS=([cp2]="--all-gather-context-parallel")

# The step-time error (percent) of a compare --json file.
step_error() {
  python3 -c 'import json,sys; print(100 * next(r["error"] for r in json.load(open(sys.argv[1]))["rows"] if r["key"] == "step_time_s"))' "$1"
}

for r in $(seq 1 "$ROUNDS"); do
  R="$WORK/round$r"
  mkdir -p "$R"
  echo "== round $r/$ROUNDS: calibrate (2 ranks)"
  "${MPIRUN[@]}" "$TESSEL" calibrate --backend cpu --name cpu --out "$R/cluster.json" --raw "$R/calibrate-raw.json" \
    2> "$R/calibrate-progress.txt" > "$R/calibrate.txt"
  grep -E "^sustained fraction|^peak fp32|^memory bandwidth" "$R/calibrate.txt"
  for name in "${NAMES[@]}"; do
    read -r -a flags <<< "${LAYOUT[$name]}"
    read -r -a as_run <<< "${SIMULATE_AS[$name]:-}"
    "$TESSEL" simulate --model tiny-gpt --cluster "$R/cluster.json" "${flags[@]}" "${as_run[@]}" "${BATCH[@]}" \
      --json "$R/$name.simulated.json" --trace "$R/$name.trace.json" > "$R/$name.simulated.txt"
    "${MPIRUN[@]}" "$TESSEL" run --model tiny-gpt "${flags[@]}" "${BATCH[@]}" --steps "$STEPS" \
      --cluster "$R/cluster.json" --out "$R/$name.measured.json" > "$R/$name.measured.txt"
    "$TESSEL" compare --simulated "$R/$name.simulated.json" --measured "$R/$name.measured.json" > "$R/$name.compare.txt"
    "$TESSEL" compare --simulated "$R/$name.simulated.json" --measured "$R/$name.measured.json" --json \
      > "$R/$name.compare.json"
    echo "   $name: $(grep '^verdict' "$R/$name.compare.txt" | sed 's/^verdict: //')"
  done
done

# Each round's worst absolute step error; keep the round whose worst is the median.
worst=$(for r in $(seq 1 "$ROUNDS"); do
          w=0
          for name in "${NAMES[@]}"; do
            e=$(step_error "$WORK/round$r/$name.compare.json")
            w=$(python3 -c "print(max($w, abs($e)))")
          done
          echo "$w $r"
        done)
keep=$(sort -g <<< "$worst" | awk -v n="$ROUNDS" 'NR == int((n + 1) / 2) {print $2}')
echo "== keeping round $keep (worst step errors by round: $(sort -k2 -n <<< "$worst" | cut -d' ' -f1 | tr '\n' ' '))"
K="$WORK/round$keep"
for f in cluster.json calibrate-raw.json calibrate.txt calibrate-progress.txt; do cp "$K/$f" "$OUT/$f"; done
sed -i "s#$K/#$OUT/#g" "$OUT/calibrate.txt"
for name in "${NAMES[@]}"; do
  for kind in simulated.json simulated.txt trace.json measured.json measured.txt compare.txt compare.json; do
    cp "$K/$name.$kind" "$OUT/$name.$kind"
  done
  # The files name each other where they now are.
  sed -i "s#$K/#$OUT/#g" "$OUT/$name".*.txt "$OUT/$name.compare.json"
  "$TESSEL" report --simulated "$OUT/$name.simulated.json" --measured "$OUT/$name.measured.json" \
    --out "$OUT/$name.report.html" || echo "(no report: tessel report failed)"
done

{
  echo "# Simulated against measured on this machine's CPU"
  echo
  echo "tiny-gpt, microbatch 2, global batch 16, sequence 128, fp32, 2 MPI ranks. Produced by"
  echo "\`scripts/compare-cpu.sh\` on $(date -u +%Y-%m-%d): $ROUNDS rounds, each a fresh \`tessel calibrate\`"
  echo "followed at once by one $STEPS-step run of each layout simulated on that calibration (the"
  echo "measured step: the median after warm-up). Targets: step time within 15%, peak memory within 10%."
  echo
  echo "Step-time error (simulated against measured) by round:"
  echo
  echo "| round | sustained fraction |$(printf ' %s |' "${NAMES[@]}")"
  echo "|---|---|$(printf -- '---|%.0s' "${NAMES[@]}")"
  for r in $(seq 1 "$ROUNDS"); do
    s=$(grep -o '^sustained fraction *[0-9.]*' "$WORK/round$r/calibrate.txt" | awk '{print $3}')
    mark=""
    if [ "$r" = "$keep" ]; then mark=" (kept)"; fi
    row="| $r$mark | $s |"
    for name in "${NAMES[@]}"; do row="$row $(printf '%+.1f%%' "$(step_error "$WORK/round$r/$name.compare.json")") |"; done
    echo "$row"
  done
  echo
  echo "The kept round (its files are in this folder; \`cluster.json\` is its calibration):"
  echo
  for name in "${NAMES[@]}"; do
    echo "- **$name** (\`${LAYOUT[$name]}\`$([ -n "${SIMULATE_AS[$name]:-}" ] && echo ", simulated with \`${SIMULATE_AS[$name]}\`")): $(grep '^verdict' "$OUT/$name.compare.txt" | sed 's/^verdict: //')"
  done
} > "$OUT/summary.md"
echo; cat "$OUT/summary.md"
