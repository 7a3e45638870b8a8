#!/usr/bin/env bash
# Server memory while clip files are downloaded slowly (issue 37, item 8):
# the resident set (VmRSS, /proc/<pid>/status) of `scribe serve` before and
# during K concurrent slow downloads of one big clip file. A server that
# reads the file into memory per request grows by about K x the file; one
# that streams the range as the socket drains grows by a buffer per download.
# Prints numbers, never asserts them.
#
# Setup (as bench/clip_responsiveness.sh): a private PostgreSQL 15 cluster
# (CLIPDL_BENCH_PG_PORT, CLIPDL_BENCH_PGDATA; stopped on exit), `scribe
# migrate`, an account with 20 USD, a 640x360 noise video (no encoder can
# shrink noise) with two flite sentences as its sound, uploaded and
# transcribed, and one real render of a 1:1 `video` clip of its first
# CLIPDL_BENCH_CLIP_SECONDS (default 4) seconds: some 20-25 MB.
#
# Per binary (SCRIBE_BIN, and CLIPDL_BENCH_REF_BIN when set, e.g. a build of
# the commit before, as the same-run reference; each serves the same
# database and object store in turn):
#   1. VmRSS with the server idle (after one whole download, so the first
#      request's one-time allocations are not counted as growth);
#   2. CLIPDL_BENCH_DOWNLOADS (default 6, the per-file bound) downloads at
#      once, each read by curl at CLIPDL_BENCH_RATE (default 100k) bytes a
#      second, plus two more that the bound should refuse (429);
#   3. VmRSS sampled every 0.2 s for CLIPDL_BENCH_SECONDS (default 6) while
#      they run; the peak, and the growth over idle, are printed, with
#      K x the file size (what holding the file per download would cost).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=bench/bench_lib.sh
. bench/bench_lib.sh
bin=$(realpath "${SCRIBE_BIN:-build/scribe}")
ref_bin=${CLIPDL_BENCH_REF_BIN:+$(realpath "$CLIPDL_BENCH_REF_BIN")}
pg_port=${CLIPDL_BENCH_PG_PORT:-55685}
pgdata=${CLIPDL_BENCH_PGDATA:-/tmp/scribe-clipdl-pg}
downloads=${CLIPDL_BENCH_DOWNLOADS:-6}
rate=${CLIPDL_BENCH_RATE:-100k}
sample_seconds=${CLIPDL_BENCH_SECONDS:-6}
clip_seconds=${CLIPDL_BENCH_CLIP_SECONDS:-4}

[ -x "$bin" ] || { echo "clip_download_memory.sh: no scribe binary at $bin (set SCRIBE_BIN)" >&2; exit 2; }
for tool in curl psql flite sox ffmpeg jq; do
  command -v "$tool" >/dev/null || { echo "clip_download_memory.sh: $tool is not installed" >&2; exit 2; }
done

machine_line
bench_scratch clipdl "$pgdata"

flite -voice slt -t "The harbour opens at six and the ferry leaves at seven every morning." -o "$tmp/a.raw.wav"
flite -voice rms -t "Tickets are sold on board, and children under five travel for free." -o "$tmp/b.raw.wav"
sox "$tmp/a.raw.wav" "$tmp/b.raw.wav" -r 16000 -c 1 -b 16 "$tmp/speech.wav"
ffmpeg -y -loglevel error -f lavfi -i "nullsrc=s=640x360:r=30,geq=lum='random(1)*255':cb=128:cr=128" \
  -i "$tmp/speech.wav" -map 0:v -map 1:a -c:v libx264 -preset ultrafast -crf 20 -pix_fmt yuv420p -c:a aac \
  -shortest "$tmp/noise.mp4"

bench_database scribe_clipdl "$pg_port" "$pgdata"
read -r _account key <<<"$(bench_account free 20)"
export SCRIBE_OBJECT_STORE_DIR=$tmp/objects SCRIBE_WORK_DIR=$tmp/work
mkdir -p "$SCRIBE_OBJECT_STORE_DIR" "$SCRIBE_WORK_DIR"

api() { # METHOD PATH [JSON]
  local body=()
  [ $# -ge 3 ] && body=(-d "$3")
  curl -sS -f -X "$1" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' "$base/api/v1$2" "${body[@]}"
}

# The data, made once by SCRIBE_BIN: the transcription and the clip's render.
SCRIBE_WORKER_SLOTS=1 SCRIBE_CLIP_SLOTS=1 start_serve
size=$(stat -c %s "$tmp/noise.mp4")
ticket=$(api POST /uploads "{\"filename\":\"noise.mp4\",\"content_type\":\"video/mp4\",\"file_size\":$size}")
curl -sS -f -X PUT -H 'Content-Type: video/mp4' --data-binary "@$tmp/noise.mp4" "$(jq -r .upload_url <<<"$ticket")" \
  >/dev/null
tid=$(api POST /transcriptions "{\"source\":\"upload\",\"upload_id\":\"$(jq -r .upload_id <<<"$ticket")\",
  \"original_filename\":\"noise.mp4\",\"duration_seconds\":$(soxi -D "$tmp/speech.wav")}" | jq -r .id)
until [ "$(api GET "/transcriptions/$tid/wait?timeout=30" | jq -r ._timed_out)" = false ]; do :; done
[ "$(api GET "/transcriptions/$tid" | jq -r .status)" = completed ] ||
  { echo "clip_download_memory.sh: the transcription did not complete" >&2; exit 1; }
cid=$(api POST "/transcriptions/$tid/clips" \
  "{\"start_seconds\":0,\"end_seconds\":$clip_seconds,\"output\":\"video\",\"aspect\":\"1:1\",\"framing\":\"crop\"}" |
  jq -r .id)
until [ "$(api GET "/transcriptions/$tid/clips/$cid?wait=45" | jq -r .status)" != queued ]; do :; done
[ "$(api GET "/transcriptions/$tid/clips/$cid" | jq -r .status)" = completed ] ||
  { echo "clip_download_memory.sh: the clip did not render" >&2; exit 1; }
file=$SCRIBE_OBJECT_STORE_DIR/transcripts/$tid/clips/$cid/clip.mp4
file_bytes=$(stat -c %s "$file")
stop_server
echo "data: clip $cid, $clip_seconds s of 1080x1080 noise video, $file_bytes bytes ($(awk -v b="$file_bytes" \
  'BEGIN {printf "%.1f", b / 1048576}') MiB); $downloads downloads at $rate/s each, +2 beyond the bound"

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$server_pid/status"; }

echo
echo "| binary | idle RSS MiB | peak RSS MiB during downloads | growth MiB | K x file MiB | served | 429 |"
echo "|---|---:|---:|---:|---:|---:|---:|"
run() { # LABEL BINARY
  local label=$1 pids=() idle peak now i codes ok=0 refused=0 data_bin=$bin
  bin=$2
  start_serve --no-workers
  bin=$data_bin
  # One whole download first: what the first request allocates once is not growth.
  url=$(api GET "/transcriptions/$tid/clips/$cid" | jq -r .file_url)
  curl -sS -o /dev/null "$url"
  idle=$(rss_kib)
  peak=$idle
  for i in $(seq $((downloads + 2))); do
    curl -sS -o /dev/null -w '%{http_code}\n' --limit-rate "$rate" --max-time $((sample_seconds + 30)) "$url" \
      >"$tmp/code.$i" 2>/dev/null &
    pids+=($!)
  done
  for _ in $(seq $((sample_seconds * 5))); do
    now=$(rss_kib)
    [ "$now" -gt "$peak" ] && peak=$now
    sleep 0.2
  done
  kill "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true
  for i in $(seq $((downloads + 2))); do
    codes=$(cat "$tmp/code.$i" 2>/dev/null || true)
    case "$codes" in 429) refused=$((refused + 1)) ;; *) ok=$((ok + 1)) ;; esac
  done
  stop_server
  awk -v l="$label" -v i="$idle" -v p="$peak" -v k="$downloads" -v f="$file_bytes" -v ok="$ok" -v r="$refused" \
    'BEGIN {printf "| %s | %.1f | %.1f | %.1f | %.1f | %d | %d |\n", l, i/1024, p/1024, (p-i)/1024, k*f/1048576, ok, r}'
  printf '{"bench":"clip_download_memory","binary":"%s","file_bytes":%s,"downloads":%s,"idle_rss_kib":%s,' \
    "$label" "$file_bytes" "$((downloads + 2))" "$idle" >&2
  printf '"peak_rss_kib":%s,"answered":%s,"refused_429":%s}\n' "$peak" "$ok" "$refused" >&2
}
run "$(basename "$bin") (SCRIBE_BIN)" "$bin"
[ -n "$ref_bin" ] && run "reference: $ref_bin" "$ref_bin"
machine_line | head -1 | sed 's/^/at the end: /'
