#!/usr/bin/env bash
# The web console's speed (issue 36, "Speed"): the JavaScript the first page
# loads (gzipped), the time from navigation to the first segments of a
# 12-hour transcript on screen, and frame times while scrolling it (from a
# Chromium performance trace). Prints numbers, never asserts them. Builds
# nothing: uses $SCRIBE_BIN (build/scribe), build/exports_benchmark (its
# --write-into mode makes the 12-hour transcript) and console/dist.
#
# The 12-hour transcript: a short flite recording is transcribed by the real
# pipeline (so the transcription, its owner and its media are real), then its
# segments and words are replaced by exports_benchmark's synthetic transcript
# (100,000 words, about 8,000 segments, three speakers, 12.05 h) in this
# benchmark's own database. The player plays the short recording.
#
# Same-run references: the library page's first paint (the smallest page);
# GET /result?include=segments&segments_limit=1000 alone with curl (what the
# reader's first rows wait for on the server).
#
# Settings:
#   SCRIBE_BIN    default build/scribe
#   CON_PG        server URL without database     default postgresql://postgres@127.0.0.1:55440
#   CON_DATABASE  database (dropped and made)     default scribe_bench_console
#   CON_RUNS      page loads per figure           default 7
# Prints the machine line, summaries and JSON lines {"bench":"console",...}.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=bench/bench_lib.sh
. bench/bench_lib.sh
bin=$(realpath "${SCRIBE_BIN:-build/scribe}")
seeder=$(realpath "${SCRIBE_EXPORTS_BENCH:-build/exports_benchmark}")
pg=${CON_PG:-postgresql://postgres@127.0.0.1:55440}
db=${CON_DATABASE:-scribe_bench_console}
export CON_RUNS=${CON_RUNS:-7}
[ -x "$bin" ] || { echo "console.sh: no scribe binary at $bin (set SCRIBE_BIN)" >&2; exit 2; }
[ -x "$seeder" ] || { echo "console.sh: no $seeder (scripts/build.sh release exports_benchmark)" >&2; exit 2; }
[ -f console/dist/index.html ] || { echo "console.sh: console/dist is not built (node console/build.mjs)" >&2; exit 2; }

machine_line
tmp=$(mktemp -d /tmp/scribe-console-bench.XXXXXX)
server_pid=""
trap 'stop_server; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
cp "$bin" "$tmp/scribe"
bin=$tmp/scribe

psql "$pg/postgres" -Atq -v ON_ERROR_STOP=1 -c "set client_min_messages = warning" \
  -c "drop database if exists $db with (force)" -c "create database $db owner scribe" >/dev/null
export SCRIBE_DATABASE_URL=${pg/postgres@/scribe@}/$db SCRIBE_LOG_LEVEL=warn
export SCRIBE_OBJECT_STORE_DIR=$tmp/objects SCRIBE_WORK_DIR=$tmp/work SCRIBE_RATE_LIMIT_PER_MINUTE=100000
"$bin" migrate >/dev/null
account=$("$bin" admin account create --email bench-console@example.com --plan pro --balance-usd 50 --json | jq -r .account_id)
key=$("$bin" admin key create --account "$account" --permission full --json | tail -1 | jq -r .api_key)
password=bench-console-password
printf '%s\n' "$password" | "$bin" admin set-password --email bench-console@example.com >/dev/null

"$bin" serve --port 0 --port-file "$tmp/port" >"$tmp/serve.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
base=http://127.0.0.1:$(cat "$tmp/port")

flite -voice slt -t "The garden opens in spring. We plant beans and tomatoes on the roof." -o "$tmp/a.wav"
size=$(stat -c %s "$tmp/a.wav")
dur=$(soxi -D "$tmp/a.wav")
upload=$(curl -sf -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
  -d "{\"filename\":\"a.wav\",\"content_type\":\"audio/wav\",\"file_size\":$size}" "$base/api/v1/uploads")
curl -sf -X PUT -H 'Content-Type: audio/wav' --data-binary @"$tmp/a.wav" "$(jq -r .upload_url <<<"$upload")" >/dev/null
tid=$(curl -sf -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
  -d "{\"source\":\"upload\",\"upload_id\":\"$(jq -r .upload_id <<<"$upload")\",\"duration_seconds\":$dur,\"original_filename\":\"garden.wav\"}" \
  "$base/api/v1/transcriptions" | jq -r .id)
for _ in $(seq 60); do
  status=$(curl -sf -H "Authorization: Bearer $key" "$base/api/v1/transcriptions/$tid/wait?timeout=30" | jq -r .status)
  [ "$status" = completed ] && break
done
[ "$status" = completed ] || { echo "console.sh: the recording did not complete ($status)" >&2; exit 1; }
num=$(psql "$SCRIBE_DATABASE_URL" -Atc "select id from transcriptions where account_id = $account order by id desc limit 1")
"$seeder" --write-into "$SCRIBE_DATABASE_URL" "$num" | tail -1

# The server-side reference: the first page of segments alone.
for _ in $(seq "$CON_RUNS"); do
  curl -s -o /dev/null -w '%{time_total}\n' -H "Authorization: Bearer $key" \
    "$base/api/v1/transcriptions/$tid/result?include=segments&segments_limit=1000"
done | sort -n | awk '{ a[NR] = $1 * 1000 } END { printf "reference: GET /result, 1000 segments: p50 %.1f ms, max %.1f ms over %d runs\n", a[int((NR + 1) / 2)], a[NR], NR }'

CON_BASE=$base CON_TID=$tid CON_EMAIL=bench-console@example.com CON_PASSWORD=$password \
  node --no-warnings bench/console_bench.mjs
