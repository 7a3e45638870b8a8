#!/usr/bin/env bash
# Clip renders through the real server (issue 21): the wall time of a render
# from POST .../clips to `completed` (and FFmpeg's CPU and peak memory from the
# worker's log), and GET /api/v1/me latency while the render runs. Prints
# numbers, never asserts them. Targets: a 30 s 9:16 audiogram with karaoke
# captions in under 15 s; GET /me p99 under 50 ms during the render.
#
# Setup (as bench/mcp_overhead.sh): a private PostgreSQL 15 cluster
# (CLIP_BENCH_PG_PORT, CLIP_BENCH_PGDATA; stopped on exit), `scribe migrate`,
# an enterprise account with 100 USD and a full-access key, the three-voice
# flite recording of bench_lib.sh (about 68 s) uploaded and transcribed by
# `scribe serve` with one worker slot and one clip slot.
#
# Per case (CLIP_BENCH_CASES, default "30:9:16:karaoke:audiogram
# 60:9:16:karaoke:audiogram 30:16:9:captions:audiogram 30:1:1:minimal:audio"):
#   1. reference: `wrk -t1 -c4 --latency` on GET /me for CLIP_BENCH_WRK_SECONDS
#      (default 8) with nothing rendering;
#   2. POST the clip, start the same wrk at once (the render outlasts it:
#      a shorter render is reported as such), poll the clip until it is
#      completed; render wall = completed_at - created_at.
# Rounds: CLIP_BENCH_ROUNDS (default 3); the table shows each round, then the
# median per case.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=bench/bench_lib.sh
. bench/bench_lib.sh
bin=$(realpath "${SCRIBE_BIN:-build/scribe}")
pg_port=${CLIP_BENCH_PG_PORT:-55670}
pgdata=${CLIP_BENCH_PGDATA:-/tmp/scribe-clip-pg}
wrk_seconds=${CLIP_BENCH_WRK_SECONDS:-8}
rounds=${CLIP_BENCH_ROUNDS:-3}
cases=${CLIP_BENCH_CASES:-"30:9:16:karaoke:audiogram 60:9:16:karaoke:audiogram 30:16:9:captions:audiogram 30:1:1:minimal:audio"}

[ -x "$bin" ] || { echo "clip_responsiveness.sh: no scribe binary at $bin (set SCRIBE_BIN)" >&2; exit 2; }
for tool in wrk curl node psql flite sox jq; do
  command -v "$tool" >/dev/null || { echo "clip_responsiveness.sh: $tool is not installed" >&2; exit 2; }
done

machine_line

bench_scratch clipbench "$pgdata"

three_voice_recording "$tmp" "$tmp/speech.wav"
audio=$(soxi -D "$tmp/speech.wav")

bench_database scribe_clipbench "$pg_port" "$pgdata"
read -r account key <<<"$(bench_account enterprise 100)"
export SCRIBE_OBJECT_STORE_DIR=$tmp/objects SCRIBE_WORK_DIR=$tmp/work
mkdir -p "$SCRIBE_OBJECT_STORE_DIR" "$SCRIBE_WORK_DIR"

SCRIBE_WORKER_SLOTS=1 SCRIBE_CLIP_SLOTS=1 start_serve
transcribe_recording
echo "data: transcription $tid ($audio s of three flite voices)"

# p50 and p99 of wrk --latency output, in ms.
wrk_me() { # SECONDS -> "p50 p99 req/s"
  wrk -t1 -c4 -d"$1"s --latency -H "Authorization: Bearer $key" "$base/api/v1/me" >"$tmp/wrk.txt" 2>&1 || true
  local ms='function ms(v){ if (v ~ /us$/) return v/1000; if (v ~ /ms$/) return v+0; if (v ~ /s$/) return v*1000; return v }'
  awk "$ms"' /^ +50%/ {p50=ms($2)} /^ +99%/ {p99=ms($2)} /^Requests\/sec/ {rps=$2} END {printf "%.2f %.2f %.0f\n", p50, p99, rps}' "$tmp/wrk.txt"
}

printf '%-28s %5s %10s %10s %10s %10s %10s %8s %9s\n' case round render_s x_realtime ffmpeg_cpu peak_mib \
  me_p99_idle me_p99 me_p50
results=()
for round in $(seq "$rounds"); do
  for c in $cases; do
    IFS=: read -r secs a1 a2 style output <<<"$c"
    aspect="$a1:$a2"
    start=5
    end=$(awk -v s="$start" -v d="$secs" 'BEGIN{print s+d}')
    read -r _ idle_p99 _ <<<"$(wrk_me "$wrk_seconds")"
    body=$(jq -cn --argjson s "$start" --argjson e "$end" --arg a "$aspect" --arg st "$style" --arg o "$output" \
      '{start_seconds: $s, end_seconds: $e, aspect: $a, style: $st, output: $o, title: "Benchmark clip"}')
    created=$(curl -sS -X POST -H "Authorization: Bearer $key" -H 'Content-Type: application/json' -d "$body" \
      "$base/api/v1/transcriptions/$tid/clips")
    cid=$(jq -r .id <<<"$created")
    [ "$cid" != null ] || { echo "clip_responsiveness.sh: POST clip failed: $created" >&2; exit 1; }
    read -r p50 p99 _ <<<"$(wrk_me "$wrk_seconds")"
    clip=$(curl -sS -H "Authorization: Bearer $key" "$base/api/v1/transcriptions/$tid/clips/$cid?wait=45")
    for _ in 1 2 3; do
      [ "$(jq -r .status <<<"$clip")" = queued ] || break
      clip=$(curl -sS -H "Authorization: Bearer $key" "$base/api/v1/transcriptions/$tid/clips/$cid?wait=45")
    done
    [ "$(jq -r .status <<<"$clip")" = completed ] || { echo "clip_responsiveness.sh: clip $cid: $clip" >&2; exit 1; }
    render=$(jq -r '((.completed_at | sub("\\.[0-9]+Z$"; "Z") | fromdate) + (.completed_at | capture("\\.(?<f>[0-9]+)Z$").f | "0." + . | tonumber))
      - ((.created_at | sub("\\.[0-9]+Z$"; "Z") | fromdate) + (.created_at | capture("\\.(?<f>[0-9]+)Z$").f | "0." + . | tonumber))' <<<"$clip")
    logline=$(grep '"clip completed"' "$tmp/serve.log" | grep "\"clip_id\":$cid[,}]" | tail -1)
    cpu=$(jq -r '.cpu_seconds // 0' <<<"$logline" 2>/dev/null || echo 0)
    rss=$(jq -r '.peak_rss_mib // 0' <<<"$logline" 2>/dev/null || echo 0)
    xrt=$(awk -v d="$secs" -v r="$render" 'BEGIN{printf "%.2f", d/r}')
    printf '%-28s %5s %10.2f %10s %10.2f %10.0f %10s %10s %8s\n' "$c" "$round" "$render" "$xrt" "$cpu" "$rss" \
      "$idle_p99" "$p99" "$p50"
    results+=("$c $render $cpu $rss $idle_p99 $p99")
    echo "{\"bench\":\"clip_responsiveness\",\"case\":\"$c\",\"round\":$round,\"render_s\":$render,\"ffmpeg_cpu_s\":$cpu,\"peak_rss_mib\":$rss,\"me_p99_idle_ms\":$idle_p99,\"me_p99_ms\":$p99,\"me_p50_ms\":$p50}" >>"$tmp/json"
  done
done
echo
echo "median per case (render_s, ffmpeg_cpu_s, peak_mib, me_p99_idle_ms, me_p99_ms):"
for c in $cases; do
  printf '%s\n' "${results[@]}" | awk -v c="$c" '$1 == c' | sort -k2 -n | awk -v c="$c" '{r[NR]=$2; cpu[NR]=$3; m[NR]=$4; i[NR]=$5; p[NR]=$6}
    END {k=int((NR+1)/2); printf "  %-28s %8.2f %8.2f %6.0f %8s %8s\n", c, r[k], cpu[k], m[k], i[k], p[k]}'
done
cat "$tmp/json"
