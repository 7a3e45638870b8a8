#!/usr/bin/env bash
# The OpenAI-compatible route against the native flow (issue 33). Prints
# numbers, never asserts them.
#
# 1. Time from request to response for a 60 s recording (three flite voices,
#    bench_lib.sh's three_voice_recording cut to OC_SECONDS) through
#    POST /v1/audio/transcriptions, against the native create-and-wait flow
#    (POST /uploads, PUT, POST /transcriptions, /wait, GET /transcript), the
#    two alternating in one run on one `scribe serve` with one worker slot
#    (bench/openai_compat.mjs). The first job of the process (model load) is
#    a warm-up and not counted; then OC_RUNS jobs of each flow: median, min,
#    max, and the ratio of the medians (target: within 5%).
# 2. Server memory while an OC_BIG_MB upload arrives (silence, 16 kHz 16-bit
#    mono WAV; the account is on the free plan with no credit, so after it is
#    stored and measured it is refused, 400 over the plan's 90 minutes per
#    file, and nothing is transcribed), on a fresh `scribe
#    serve` without workers: VmRSS sampled every 50 ms during the upload, and
#    VmHWM before and after; the same file through the native presigned PUT
#    for comparison (target: bounded, independent of the file size).
#
# Setup: a private PostgreSQL (scripts/pg.sh, port OC_PG_PORT, stopped on
# exit), `scribe migrate`, accounts and keys with `scribe admin`.
#
# Settings:
#   SCRIBE_BIN    default build/scribe
#   OC_RUNS       jobs per flow (after the warm-up)   default 5
#   OC_SECONDS    recording length                     default 60
#   OC_BIG_MB     size of the large upload             default 500
#   OC_PARTS      which parts: time, memory           default "time memory"
#   OC_PG_PORT    private cluster port                 default 55690
#   OC_PGDATA     its data directory                   default /tmp/scribe-oc-pg
# Prints the machine line, a table, and JSON lines {"bench":"openai_compat",...}.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=bench/bench_lib.sh
. bench/bench_lib.sh
bin=$(realpath "${SCRIBE_BIN:-build/scribe}")
runs=${OC_RUNS:-5}
seconds=${OC_SECONDS:-60}
big_mb=${OC_BIG_MB:-500}
parts=${OC_PARTS:-time memory}
pg_port=${OC_PG_PORT:-55690}
pgdata=${OC_PGDATA:-/tmp/scribe-oc-pg}
for tool in node psql flite sox jq curl; do
  command -v "$tool" >/dev/null || { echo "openai_compat.sh: $tool is not installed" >&2; exit 2; }
done

machine_line
echo "nproc: $(nproc)"
bench_scratch oc "$pgdata"
bench_database scribe_oc "$pg_port" "$pgdata"
export SCRIBE_LOG_LEVEL=warn SCRIBE_OBJECT_STORE_DIR=$tmp/objects SCRIBE_WORK_DIR=$tmp/work
mkdir -p "$SCRIBE_OBJECT_STORE_DIR" "$SCRIBE_WORK_DIR"

# --- 1. time from request to response ----------------------------------------
if [[ " $parts " == *" time "* ]]; then
three_voice_recording "$tmp" "$tmp/once.wav"
sox "$tmp/once.wav" "$tmp/once.wav" "$tmp/all.wav"
sox -V1 "$tmp/all.wav" "$tmp/speech.wav" trim 0 "$seconds" pad 0 "$seconds" trim 0 "$seconds"
audio=$(soxi -D "$tmp/speech.wav")
echo "recording: $audio s, three flite voices, $(stat -c %s "$tmp/speech.wav") bytes"
read -r _ key < <(bench_account enterprise 1000)
SCRIBE_WORKER_SLOTS=1 start_serve
OC_BASE=$base OC_KEY=$key OC_FILE=$tmp/speech.wav OC_RUNS=1 node bench/openai_compat.mjs >"$tmp/warmup.jobs"
OC_BASE=$base OC_KEY=$key OC_FILE=$tmp/speech.wav OC_RUNS=$runs node bench/openai_compat.mjs >"$tmp/jobs"
stop_server
node - "$tmp/jobs" "$audio" <<'EOF'
const [file, audio] = process.argv.slice(2);
const jobs = require('fs').readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const stats = (flow) => {
  const xs = jobs.filter((j) => j.flow === flow).map((j) => j.seconds).sort((a, b) => a - b);
  const mid = xs.length / 2;
  return { n: xs.length, median: xs.length % 2 ? xs[Math.floor(mid)] : (xs[mid - 1] + xs[mid]) / 2, min: xs[0], max: xs[xs.length - 1] };
};
const n = stats('native'), o = stats('openai');
const f = (x) => x.toFixed(2);
console.log(`request to response, ${n.n} jobs each (seconds): median / min / max`);
console.log(`  native create-and-wait      ${f(n.median)} / ${f(n.min)} / ${f(n.max)}`);
console.log(`  /v1/audio/transcriptions    ${f(o.median)} / ${f(o.min)} / ${f(o.max)}`);
console.log(`  openai / native (medians)   ${(o.median / n.median).toFixed(3)} (target within 5%)`);
console.log(JSON.stringify({ bench: 'openai_compat', part: 'time_to_response', audio_seconds: Number(audio), runs: n.n,
  native_median_s: n.median, native_min_s: n.min, native_max_s: n.max,
  openai_median_s: o.median, openai_min_s: o.min, openai_max_s: o.max, ratio: o.median / n.median,
  not_completed: jobs.filter((j) => j.status !== 'completed').length }));
EOF
fi

# --- 2. memory while a large upload arrives -----------------------------------
[[ " $parts " == *" memory "* ]] || exit 0
big=$tmp/big.wav
sox -n -r 16000 -c 1 -b 16 "$big" trim 0 "$((big_mb * 1000000 / 32000))"
size=$(stat -c %s "$big")
read -r _ poor < <(bench_account free 0)
SCRIBE_WORKER_SLOTS=0 start_serve
kb() { awk -v f="$1" '$1 == f":" {print $2}' "/proc/$server_pid/status"; }
mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }
# upload NAME COMMAND...: runs the upload in the background, samples VmRSS.
upload() {
  local name=$1 peak=0 rss hwm_before out
  out=$tmp/upload-$RANDOM
  shift
  hwm_before=$(kb VmHWM)
  local rss_before
  rss_before=$(kb VmRSS)
  local t0
  t0=$(date +%s.%N)
  "$@" >"$out.out" 2>"$out.err" &
  local up=$!
  while kill -0 "$up" 2>/dev/null; do
    rss=$(kb VmRSS)
    [ "$rss" -gt "$peak" ] && peak=$rss
    sleep 0.05
  done
  wait "$up" || true
  local secs
  secs=$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN {printf "%.2f", a - b}')
  local hwm_after
  hwm_after=$(kb VmHWM)
  printf '  %-26s %8s %8s %8s %8s %8s  %s\n' "$name" "$(mib "$rss_before")" "$(mib "$peak")" \
    "$(mib "$hwm_before")" "$(mib "$hwm_after")" "$secs" "$(head -c 110 "$out.out")"
  printf '{"bench":"openai_compat","part":"upload_memory","route":"%s","file_bytes":%s,"rss_before_kb":%s,"rss_peak_sampled_kb":%s,"hwm_before_kb":%s,"hwm_after_kb":%s,"seconds":%s}\n' \
    "$name" "$size" "$rss_before" "$peak" "$hwm_before" "$hwm_after" "$secs" >>"$tmp/memory.json"
}
echo
echo "server memory while a $((size / 1000000)) MB upload arrives (MiB; the file is over the free plan's length, so the answer is 400):"
printf '  %-26s %8s %8s %8s %8s %8s  %s\n' route "RSS" "RSS peak" "HWM" "HWM" "seconds" "answer"
printf '  %-26s %8s %8s %8s %8s\n' "" before during before after
upload "/v1/audio/transcriptions" curl -sS -H "Authorization: Bearer $poor" -F "file=@$big;type=audio/wav" \
  -F model=whisper-1 "$base/v1/audio/transcriptions"
ticket=$(curl -sS -H "Authorization: Bearer $poor" -H 'Content-Type: application/json' "$base/api/v1/uploads" \
  -d "{\"filename\":\"big.wav\",\"content_type\":\"audio/wav\",\"file_size\":$size}")
upload "presigned PUT (native)" curl -sS -X PUT -H 'Content-Type: audio/wav' -T "$big" "$(jq -r .upload_url <<<"$ticket")"
stop_server
cat "$tmp/memory.json"
