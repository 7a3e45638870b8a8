#!/usr/bin/env bash
# Runs end-to-end test files with Node's test runner, JOBS files at a time,
# each file a `node --test` process of its own (so each gets its own database
# from the template, see tests/e2e/harness.mjs). Prints each file's output as
# it finishes, then one line per file with its wall time, and appends
# "NAME SECONDS STATUS PASSED FAILED" lines to $SCRIBE_E2E_TIMES when set.
#   scripts/e2e.sh JOBS FILE...        (files relative to tests/e2e)
# Exits non-zero when any file failed.
set -uo pipefail
cd "$(dirname "$0")/../tests/e2e"
jobs=${1:?usage: e2e.sh JOBS FILE...}
shift
[ $# -gt 0 ] || exit 0
logs=$(mktemp -d /tmp/scribe-e2e-logs.XXXXXX)
export logs

run_one() {
  local file=$1 name t0 rc passed failed secs
  name=$(basename "$file" .test.mjs)
  t0=$(date +%s.%N)
  node --test --test-reporter=spec "$file" >"$logs/$name.log" 2>&1
  rc=$?
  secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  # The spec reporter's closing counts ("ℹ pass 12", "ℹ fail 0").
  passed=$(sed -n 's/^ℹ pass \([0-9]*\)$/\1/p' "$logs/$name.log" | tail -1)
  failed=$(sed -n 's/^ℹ fail \([0-9]*\)$/\1/p' "$logs/$name.log" | tail -1)
  # A file that crashed before reporting counts as one failure.
  [ "$rc" -ne 0 ] && [ "${failed:-0}" -eq 0 ] && failed=1
  {
    flock 9
    echo "---- $name ($secs s, exit $rc)"
    if [ "$rc" -eq 0 ]; then grep -E '^(✔|ℹ)' "$logs/$name.log" | grep -v '^ℹ \(cancelled\|skipped\|todo\|duration_ms\|suites\|tests\)' ; else cat "$logs/$name.log"; fi
    echo "$name $secs $rc ${passed:-0} ${failed:-0}" >>"$logs/times"
  } 9>"$logs/lock"
  return "$rc"
}
export -f run_one

printf '%s\n' "$@" | xargs -P "$jobs" -I{} bash -c 'run_one "$1"' _ {}
status=$?
[ -n "${SCRIBE_E2E_TIMES:-}" ] && cat "$logs/times" >>"$SCRIBE_E2E_TIMES"
total_passed=$(awk '{ s += $4 } END { print s + 0 }' "$logs/times")
total_failed=$(awk '{ s += $5 } END { print s + 0 }' "$logs/times")
echo "e2e ($# files): $total_passed passed, $total_failed failed"
rm -rf "$logs"
[ "$status" -eq 0 ] && [ "$total_failed" -eq 0 ]
