#!/usr/bin/env bash
# Kills one MPI rank with SIGKILL once the job is stepping, and checks that the job ends within
# MAX_SECONDS with a non-zero exit and leaves no measured-run file (nor a temporary beside it).
#   kill_rank.sh VICTIM_RANK OUT_FILE MAX_SECONDS command... (the mpirun command line)
set -u
victim=$1 out=$2 max_seconds=$3
shift 3
rm -f "$out" "$out".tmp-*
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set -m                      # the job gets its own process group: a hang can be cleaned up whole
"$@" >"$log" 2>&1 &
job=$!
set +m
fail() {
  echo "FAIL: $*"
  kill -9 -- -"$job" 2>/dev/null
  echo "--- job output"; cat "$log"
  exit 1
}

# Wait for the second step, so the victim dies in the middle of training, not at start-up.
start=$SECONDS
until grep -qE '^step +2/' "$log"; do
  kill -0 "$job" 2>/dev/null || fail "the job ended before it started stepping"
  (( SECONDS - start < 180 )) || fail "the job did not start stepping within 180 s"
  sleep 0.1
done

# The victim: the job's descendant whose environment says OMPI_COMM_WORLD_RANK=VICTIM.
# (/proc only: procps may not be installed.)
children() { local s st rest f; for s in /proc/[0-9]*/stat; do
  st=$(cat "$s" 2>/dev/null) || continue
  rest=${st##*) }; read -r -a f <<< "$rest"            # after "pid (comm) ": state ppid ...
  [ "${f[1]:-}" = "$1" ] && { p=${s#/proc/}; echo "${p%/stat}"; }; done; }
descendants() { local c; for c in $(children "$1"); do echo "$c"; descendants "$c"; done; }
pid=""
for p in $(descendants "$job"); do
  if tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$victim"; then pid=$p; break; fi
done
[ -n "$pid" ] || fail "no process of rank $victim among the job's processes"
echo "killing rank $victim (pid $pid, $(tr '\0' ' ' < /proc/$pid/cmdline | cut -c1-80)) with SIGKILL"
kill -9 "$pid"
killed_at=$SECONDS

while kill -0 "$job" 2>/dev/null; do
  (( SECONDS - killed_at <= max_seconds )) || fail "the job still runs $max_seconds s after rank $victim was killed (hang)"
  sleep 0.1
done
wait "$job"
code=$?
took=$(( SECONDS - killed_at ))
echo "--- job output (tail)"; tail -n 15 "$log"
echo "job ended with exit $code, $took s after the kill"
[ "$code" -ne 0 ] || fail "the job exited 0 although rank $victim was killed"
[ ! -e "$out" ] || fail "a measured-run file $out was left behind"
leftover=$(ls "$out".tmp-* 2>/dev/null)
[ -z "$leftover" ] || fail "a temporary was left behind: $leftover"
echo "PASS: no $out, no temporary"
