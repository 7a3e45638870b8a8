#!/usr/bin/env bash
# One account's waits against another account's latency (issue 37): GET
# /api/v1/me of tenant B under wrk, first with nothing held (the same-run
# reference), then while tenant A holds K MCP getClip calls with `wait` (the
# clip stays queued: no clip worker runs), K twice the server's request
# threads by default. Prints numbers, never asserts them. Expectation: the two
# p99s are of the same order, since a wait holds no request thread.
#
# Rounds (MCP_WAIT_BENCH_ROUNDS, 2): each measures `reference` then `held`.
# A held case starts K `curl` POST /mcp tools/call getClip {wait: 45}
# (2026-07-28 form) in the background, waits until the K requests are in
# (MCP_WAIT_BENCH_SETTLE, 1 s), runs wrk, then counts how many of the K were
# still open when wrk ended (all of them, unless the server answered a wait
# early) and waits for them to end (each answers _timed_out after 45 s)
# before the next case, so that a reference never runs beside waits.
#
# Setup: a private PostgreSQL 15 cluster (scripts/pg.sh; MCP_WAIT_BENCH_PG_PORT,
# MCP_WAIT_BENCH_PGDATA; stopped on exit), database scribe_mcp_wait (made
# again), two pro accounts with a full-access key each (`scribe admin`), one
# flite sentence (about 4 s) uploaded by A and transcribed by `scribe serve`
# with one worker slot (bench/time_to_result.mjs), a clip of its first 2 s.
# The measured server: `scribe serve --port 0 --rate-limit 100000000
# --metrics-addr off` with SCRIBE_WORKER_SLOTS=0 and SCRIBE_CLIP_SLOTS=0,
# default --io-threads and --db-pool (8 request threads), plus
# MCP_WAIT_BENCH_SERVE_ARGS.
#
# Settings:
#   SCRIBE_BIN                   default build/scribe
#   MCP_WAIT_BENCH_HELD          K, waits A holds                  default 16
#   MCP_WAIT_BENCH_DURATION      wrk duration per case (< 40 s)    default 10s
#   MCP_WAIT_BENCH_CONNECTIONS   wrk connections                   default 16
#   MCP_WAIT_BENCH_THREADS       wrk threads                       default 2
#   MCP_WAIT_BENCH_ROUNDS        rounds                            default 2
#   MCP_WAIT_BENCH_SETTLE        seconds for the K waits to get in default 1
#   MCP_WAIT_BENCH_SERVE_ARGS    extra `scribe serve` flags
#   MCP_WAIT_BENCH_PG_PORT       private cluster port              default 55680
#   MCP_WAIT_BENCH_PGDATA        its data directory                default /tmp/scribe-mcp-wait-pg
# Prints the machine line (CPU model, nproc), a table (case, req/s, p50, p99,
# max, errors, waits still held when wrk ended) and JSON lines
# {"bench":"mcp_wait_fairness",...}.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=bench/bench_lib.sh
. bench/bench_lib.sh
bin=$(realpath "${SCRIBE_BIN:-build/scribe}")
held=${MCP_WAIT_BENCH_HELD:-16}
duration=${MCP_WAIT_BENCH_DURATION:-10s}
conns=${MCP_WAIT_BENCH_CONNECTIONS:-16}
wrk_threads=${MCP_WAIT_BENCH_THREADS:-2}
rounds=${MCP_WAIT_BENCH_ROUNDS:-2}
settle=${MCP_WAIT_BENCH_SETTLE:-1}
serve_args=${MCP_WAIT_BENCH_SERVE_ARGS:-}
pg_port=${MCP_WAIT_BENCH_PG_PORT:-55680}
pgdata=${MCP_WAIT_BENCH_PGDATA:-/tmp/scribe-mcp-wait-pg}
lua=$root/bench/mcp_overhead.lua

[ -x "$bin" ] || { echo "mcp_wait_fairness.sh: no scribe binary at $bin (set SCRIBE_BIN)" >&2; exit 2; }
for tool in wrk curl node psql flite sox jq; do
  command -v "$tool" >/dev/null || { echo "mcp_wait_fairness.sh: $tool is not installed" >&2; exit 2; }
done

machine_line
echo "nproc: $(nproc)"

bench_scratch mcp-wait "$pgdata"
bench_database scribe_mcp_wait "$pg_port" "$pgdata"
read -r _ key_a <<<"$(bench_account pro 100)"
read -r _ key_b <<<"$(bench_account pro 100)"
export SCRIBE_OBJECT_STORE_DIR=$tmp/objects SCRIBE_WORK_DIR=$tmp/work
mkdir -p "$SCRIBE_OBJECT_STORE_DIR" "$SCRIBE_WORK_DIR"

# A's recording, transcribed by a server with one pipeline worker.
flite -voice slt -t "The museum opens at nine in the morning and closes at six in the evening." -o "$tmp/raw.wav"
sox "$tmp/raw.wav" -r 16000 -c 1 -b 16 "$tmp/speech.wav"
audio=$(soxi -D "$tmp/speech.wav")
key=$key_a
SCRIBE_WORKER_SLOTS=1 SCRIBE_CLIP_SLOTS=0 start_serve $serve_args
transcribe_recording
stop_server

# The measured server: no worker of either kind, so the clip stays queued.
# shellcheck disable=SC2086
SCRIBE_WORKER_SLOTS=0 SCRIBE_CLIP_SLOTS=0 start_serve $serve_args
clip=$(curl -sS -H "Authorization: Bearer $key_a" -H 'Content-Type: application/json' \
  -d '{"start_seconds":0,"end_seconds":2}' "$base/api/v1/transcriptions/$tid/clips")
clip_id=$(jq -r .id <<<"$clip")
[ "$(jq -r .status <<<"$clip")" = queued ] || { echo "mcp_wait_fairness.sh: the clip was not queued: $clip" >&2; exit 1; }
echo "data: transcription $tid of A ($audio s), clip $clip_id queued (no clip worker);" \
  "held: $held MCP getClip {wait: 45} of A; measured: GET /api/v1/me of B," \
  "wrk -t$wrk_threads -c$conns -d$duration --latency; scribe serve ${serve_args:-(default --io-threads/--db-pool)}"

wait_body=$(jq -cn --argjson tid "$tid" --argjson clip "$clip_id" '{jsonrpc: "2.0", id: 1, method: "tools/call",
  params: {name: "getClip", arguments: {id: $tid, clip_id: $clip, wait: 45},
    _meta: {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}}')
start_waits() {
  wait_pids=()
  for i in $(seq "$held"); do
    curl -sS -o "$tmp/wait.$i" -w '%{http_code}\n' --max-time 120 -H "Authorization: Bearer $key_a" \
      -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
      -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: getClip' \
      --data-binary "$wait_body" "$base/mcp" >"$tmp/wait.$i.status" 2>&1 &
    wait_pids+=($!)
  done
}
still_held() {
  local n=0 p
  for p in "${wait_pids[@]}"; do kill -0 "$p" 2>/dev/null && n=$((n + 1)); done
  echo "$n"
}
# Every held wait answered 200 with a result that is not an error.
check_waits() {
  local i bad=0
  for i in $(seq "$held"); do
    [ "$(cat "$tmp/wait.$i.status")" = 200 ] && [ "$(jq -r .result.isError "$tmp/wait.$i")" = false ] || bad=$((bad + 1))
  done
  echo "$bad"
}

results=()
printf '%-5s %-10s %8s %8s %8s %9s %7s %6s\n' round case req/s p50-ms p99-ms max-ms errors held
measure() { # ROUND CASE
  local r=$1 c=$2 result requests secs p50 p99 max non2xx errors checked unexpected rps left=0 bad=0
  if [ "$c" = held ]; then
    start_waits
    sleep "$settle"
  fi
  MCP_BENCH_METHOD=GET MCP_BENCH_BODY='' MCP_BENCH_EXPECT='' \
    wrk -t"$wrk_threads" -c"$conns" -d"$duration" --latency -s "$lua" -H "Authorization: Bearer $key_b" \
    "$base/api/v1/me" >"$tmp/wrk.txt"
  if [ "$c" = held ]; then
    left=$(still_held)
    wait "${wait_pids[@]}" 2>/dev/null || true
    bad=$(check_waits)
  fi
  result=$(grep '^RESULT ' "$tmp/wrk.txt") || { cat "$tmp/wrk.txt" >&2; exit 1; }
  read -r _ requests secs p50 p99 max non2xx errors checked unexpected <<<"$result"
  rps=$(awk -v n="$requests" -v s="$secs" 'BEGIN {printf "%.0f", n / s}')
  printf '%-5s %-10s %8s %8.2f %8.2f %9.2f %7s %6s\n' "$r" "$c" "$rps" "$p50" "$p99" "$max" \
    "$((unexpected + errors))" "$([ "$c" = held ] && echo "$left/$held" || echo -)"
  [ "$bad" = 0 ] || echo "    $bad of the $held held waits did not answer 200 with isError false"
  results+=("{\"bench\":\"mcp_wait_fairness\",\"round\":$r,\"case\":\"$c\",\"held_waits\":$([ "$c" = held ] && echo "$held" || echo 0),\"held_at_end\":$left,\"failed_waits\":$bad,\"connections\":$conns,\"requests\":$requests,\"seconds\":$secs,\"requests_per_s\":$rps,\"p50_ms\":$p50,\"p99_ms\":$p99,\"max_ms\":$max,\"non_2xx\":$non2xx,\"socket_errors\":$errors,\"unexpected_answers\":$unexpected}")
}
for r in $(seq "$rounds"); do
  measure "$r" reference
  measure "$r" held
done

echo
read -r l1 l5 l15 _ </proc/loadavg
echo "load average at the end: $l1 $l5 $l15"
printf '%s\n' "${results[@]}"
