#!/usr/bin/env bash
# Each way past the recognizer's errors alone and together (issue 34): runs
# bench/ask_quality.sh once per SCRIBE_ASK_MATCHING value on the same library
# (uploaded and transcribed once, by the first run) and prints one table of
# the answerable hit share and the unanswerable no_answer share per set and
# scope, with the JSON lines of every run kept in ASK_WORK_DIR.
#   bench/ask_components.sh [--set tune|report|all] [CONFIG...]
# CONFIGs default to: none alternates sound meaning alternates,sound,meaning
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
work=${ASK_WORK_DIR:-/tmp/scribe-ask-eval}
set_args=(--set all)
if [ "${1:-}" = --set ]; then set_args=(--set "$2"); shift 2; fi
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(none alternates sound meaning alternates,sound,meaning)
mkdir -p "$work"
for c in "${configs[@]}"; do
  out=$work/components-${c//,/+}.log
  echo "== SCRIBE_ASK_MATCHING=$c" >&2
  ASK_SERVE_ARGS="--ask-matching $c" bench/ask_quality.sh "${set_args[@]}" >"$out" 2>&1 ||
    { echo "ask_quality.sh failed for $c; see $out" >&2; tail -20 "$out" >&2; exit 1; }
done
grep -m1 '"bench":"machine"' "$work/components-${configs[0]//,/+}.log" || true
printf '%-28s %-7s %-10s %-18s %-18s %s\n' matching set scope answerable_hit unanswerable_no_ans "p50/p95 ms"
for c in "${configs[@]}"; do
  grep '"bench":"ask_quality"' "$work/components-${c//,/+}.log" | jq -r --arg c "$c" \
    '[$c, .set, .scope, (.answerable_hit_share|tostring), (.unanswerable_no_answer_share|tostring),
      ((.latency_p50_ms|tostring) + "/" + (.latency_p95_ms|tostring))] | @tsv' |
    awk -F'\t' '{printf "%-28s %-7s %-10s %-18s %-18s %s\n", $1, $2, $3, $4, $5, $6}'
done
