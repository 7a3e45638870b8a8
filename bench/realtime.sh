#!/usr/bin/env bash
# Realtime transcription speed and quality (issue 32, "Speed"): final
# latency, partial cadence, concurrent sessions, CPU and memory per session,
# and the word error rate of the realtime finals beside the offline
# pipeline's on the same audio. Prints numbers, never asserts them. Builds
# nothing: uses $SCRIBE_BIN (build/scribe).
#
# Audio: the 16 sentences below (written for this benchmark; no other
# benchmark's reference text), spoken by flite's slt, rms, awb and kal16 in
# turn, 16 kHz mono. A session streams them in order (session i starts at
# sentence 3i, wrapping) with 1 s of silence first, RT_GAP_S (1.5) s of
# silence after each and 1 s at the end, in RT_FRAME_MS (50) ms binary frames
# at real-time pace (bench/realtime_bench.mjs; frame k is sent no earlier
# than k x 50 ms after the first), then Terminate.
#
# Definitions (bench/realtime_bench.mjs):
#   speech end     of an utterance: the end of the flite wav's last 10 ms
#                  frame with RMS above -40 dBFS (flite pads its output with
#                  near-digital silence, so this is where the last word's
#                  decay ends; the same method finds the speech start).
#   final latency  the wall time the utterance's (last) final Turn arrived
#                  minus the wall time the client sent the frame holding the
#                  speech end (the earliest the server could know the word
#                  had ended). A final belongs to the utterance whose speech
#                  is nearest its words' middle (session ms). p50/p95 over
#                  utterances; utterances with no final are counted apart.
#   partials/s     partials with words that arrived while an utterance's
#                  speech was being sent, over the seconds of speech.
#   lag            per partial: its arrival minus the send time of its last
#                  word's end. The server does not say its clock in a Turn,
#                  so this is an upper bound on how far behind real time a
#                  session runs (the newest word a partial names lags the
#                  audio received by the decoder's own hold-back). A
#                  concurrency level is sustained when every session's p95
#                  lag is under 1 s and every utterance got its final.
#   CPU            utime+stime of the scribe serve process (/proc/PID/stat)
#                  over the level, per second of audio streamed (all
#                  sessions); memory: peak VmRSS (sampled every 200 ms) minus
#                  the server's VmRSS before its first session, per session
#                  (the recognizers' decoders, about 90 MB each, are pooled:
#                  2 are kept idle, so the level's own "before" is printed
#                  too but is not the base).
#
# Server: `scribe serve --port 0` with SCRIBE_WORKER_SLOTS=0 (the offline
# re-transcription queued when a session ends does not run during the
# benchmark), default realtime settings (SCRIBE_REALTIME_THREADS 2), on its
# own database RT_DATABASE (scribe_bench_realtime) of the PostgreSQL at
# RT_PG (postgresql://postgres@127.0.0.1:55440), made afresh and migrated;
# an enterprise account (a subscription: nothing held) whose key is granted
# realtime.
#
# Same-run reference: `scribe transcribe` (the offline pipeline, CLI) on
# session 0's exact audio: its wall time, CPU and real-time factor, and its
# word error rate beside the realtime finals'.
#
# Settings:
#   SCRIBE_BIN       default build/scribe
#   RT_PG            server URL without database   default postgresql://postgres@127.0.0.1:55440
#   RT_DATABASE      database (dropped and made)   default scribe_bench_realtime
#   RT_LEVELS        concurrent sessions           default "1 2 4 8 12"
#   RT_CONC_UTTS     sentences per session in the concurrency levels   default 4
#   RT_THREAD_PASSES SCRIBE_REALTIME_THREADS of each pass of the levels  default "2 12"
#                    (the server's default, then one thread per session: the
#                    sessions' work is queued per session on a pool of that
#                    many threads, see "Findings" in bench/README.md)
#   RT_GAP_S         silence after each sentence   default 1.5
#   RT_FRAME_MS      frame length                  default 50
#   RT_STAGGER_MS    between session starts        default 300
#   RT_PARTS         default "offline latency concurrency" (the offline
#                    reference, parts 1-2, part 3); WER needs the first two
# Prints the machine line, summaries and JSON lines {"bench":"realtime",...}.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=bench/bench_lib.sh
. bench/bench_lib.sh
bin=$(realpath "${SCRIBE_BIN:-build/scribe}")
pg=${RT_PG:-postgresql://postgres@127.0.0.1:55440}
db=${RT_DATABASE:-scribe_bench_realtime}
levels=${RT_LEVELS:-1 2 4 8 12}
conc_utts=${RT_CONC_UTTS:-4}
parts=${RT_PARTS:-offline latency concurrency}
has() { [[ " $parts " == *" $1 "* ]]; }
thread_passes=${RT_THREAD_PASSES:-${SCRIBE_REALTIME_THREADS:-2} 12}
export RT_GAP_S=${RT_GAP_S:-1.5} RT_FRAME_MS=${RT_FRAME_MS:-50} RT_STAGGER_MS=${RT_STAGGER_MS:-300}

[ -x "$bin" ] || { echo "realtime.sh: no scribe binary at $bin (set SCRIBE_BIN)" >&2; exit 2; }
for tool in node psql flite sox jq; do
  command -v "$tool" >/dev/null || { echo "realtime.sh: $tool is not installed" >&2; exit 2; }
done

machine_line
echo "settings: levels [$levels] with SCRIBE_REALTIME_THREADS [$thread_passes], $conc_utts sentences per session at the levels, gap $RT_GAP_S s," \
  "frames $RT_FRAME_MS ms, starts $RT_STAGGER_MS ms apart"

tmp=$(mktemp -d /tmp/scribe-rt-bench.XXXXXX)
server_pid=""
trap 'stop_server; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
# A copy of the binary: others rebuild build/ while this runs (minutes).
for _ in $(seq 60); do [ -x "$bin" ] && cp "$bin" "$tmp/scribe" 2>/dev/null && "$tmp/scribe" --help >/dev/null 2>&1 && break; sleep 2; done
echo "binary: $bin ($(stat -c %y "$bin" | cut -d. -f1)), copied to $tmp/scribe"
bin=$tmp/scribe

# The sentences, each read by the next voice.
sentences=(
  "The ferry leaves the harbor early when the sea is calm."
  "My brother repaired the old bicycle with a borrowed wrench."
  "Please put the blue folder on the shelf beside the window."
  "We walked along the river until the lights of the town appeared."
  "The baker sells fresh bread and warm rolls every morning."
  "A strong wind blew the leaves across the empty parking lot."
  "She wrote a long letter to her grandmother about the journey."
  "The museum will close for repairs at the end of the month."
  "Our team finished the project a week before the deadline."
  "The children built a small boat out of wood and string."
  "He forgot his umbrella on the train and got very wet."
  "The doctor asked the patient to rest for a few days."
  "Farmers in the valley grow apples, pears and sweet cherries."
  "The library opens late on Thursday evenings for students."
  "A quiet road leads through the forest to the lake."
  "The engineer checked every cable before the test began."
)
voices=(slt rms awb kal16)
for i in "${!sentences[@]}"; do
  v=${voices[i % 4]}
  flite -voice "$v" -t "${sentences[i]}" -o "$tmp/s$i.raw.wav"
  sox "$tmp/s$i.raw.wav" -r 16000 -c 1 -b 16 "$tmp/s$i.wav"
  printf '%s\t%s\t%s\n' "$tmp/s$i.wav" "$v" "${sentences[i]}" >>"$tmp/manifest.tsv"
done
export RT_MANIFEST=$tmp/manifest.tsv

# Database, account, key.
psql "$pg/postgres" -Atq -v ON_ERROR_STOP=1 -c "set client_min_messages = warning" \
  -c "drop database if exists $db with (force)" -c "create database $db owner scribe" >/dev/null
export SCRIBE_DATABASE_URL=${pg/postgres@/scribe@}/$db SCRIBE_LOG_LEVEL=warn
"$bin" migrate >/dev/null 2>&1
# A new enterprise account and realtime key in RT_KEY. Each ended session
# leaves its transcription queued (no worker runs here), and queued jobs count
# against the plan's 50 concurrent jobs, so every run gets its own account.
new_key() {
  local account keyjson
  account=$("$bin" admin account create --email "rt-bench-$$-$RANDOM@example.com" --plan enterprise --balance-usd 100 \
    --json | tail -1 | jq -r .account_id)
  keyjson=$("$bin" admin key create --account "$account" --permission full --json | tail -1)
  "$bin" admin realtime grant --key "$(jq -r .key_id <<<"$keyjson")" >/dev/null
  RT_KEY=$(jq -r .api_key <<<"$keyjson")
  export RT_KEY
}
export SCRIBE_OBJECT_STORE_DIR=$tmp/objects SCRIBE_WORK_DIR=$tmp/work
mkdir -p "$SCRIBE_OBJECT_STORE_DIR" "$SCRIBE_WORK_DIR"

# The offline reference on session 0's audio (all sentences), before the server starts.
node bench/realtime_bench.mjs stream-wav "$RT_MANIFEST" "$tmp/stream.wav"
audio=$(soxi -D "$tmp/stream.wav")
TIMEFORMAT='%R %U %S'
off_wall=0 off_user=0 off_sys=0
echo '{"errors":0,"words":0,"wer":0}' >"$tmp/offline.wer"
! has offline || read -r off_wall off_user off_sys < <({ time "$bin" transcribe "$tmp/stream.wav" --language en --text \
  >"$tmp/offline.txt" 2>"$tmp/offline.err"; } 2>&1)
! has offline || node bench/realtime_bench.mjs wer "$tmp/stream.wav.txt" "$tmp/offline.txt" >"$tmp/offline.wer"
off_wer=$(cat "$tmp/offline.wer")
echo "reference: offline pipeline (scribe transcribe, default profile) on session 0's ${audio} s:" \
  "wall ${off_wall} s (real-time factor $(awk -v w="$off_wall" -v a="$audio" 'BEGIN {printf "%.3f", w / a}')), " \
  "CPU $(awk -v u="$off_user" -v s="$off_sys" -v a="$audio" 'BEGIN {printf "%.2f s, %.3f per audio s", u + s, (u + s) / a}');" \
  "WER $(jq -r '"\(.wer * 1000 | round / 10)% (\(.errors)/\(.words))"' <<<"$off_wer")"
printf '{"bench":"realtime","label":"offline_reference","audio_s":%s,"wall_s":%s,"cpu_s":%s,"wer":%s}\n' \
  "$audio" "$off_wall" "$(awk -v u="$off_user" -v s="$off_sys" 'BEGIN {printf "%.2f", u + s}')" "$(jq .wer <<<"$off_wer")"

SCRIBE_WORKER_SLOTS=0 start_serve
# Right away: the registry loads one decoder ahead of the first session.
RT_RSS_BASE=$(awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$server_pid/status")
export RT_API=$base RT_PID=$server_pid RT_RSS_BASE
new_key
echo "server: $base (pid $server_pid), realtime profile \"live\" (speech/streaming_recognizer.h)"

# A warm-up session loads the first decoder (about a second) outside the figures.
RT_SESSIONS=1 RT_UTTERANCES=1 RT_LABEL=warm-up node bench/realtime_bench.mjs run >/dev/null

if has latency; then
echo
echo "== 1-2: final latency and partials, one session, all ${#sentences[@]} sentences (load $(cut -d' ' -f1-3 /proc/loadavg))"
RT_SESSIONS=1 RT_SILENCE_MS=600 RT_LABEL="latency 600" RT_HYP_OUT=$tmp/rt600.txt node bench/realtime_bench.mjs run
echo "(load $(cut -d' ' -f1-3 /proc/loadavg))"
RT_SESSIONS=1 RT_SILENCE_MS=400 RT_LABEL="latency 400" RT_HYP_OUT=$tmp/rt400.txt node bench/realtime_bench.mjs run
fi

has concurrency || thread_passes=""
for threads in $thread_passes; do
  if [ "$threads" != "${SCRIBE_REALTIME_THREADS:-2}" ]; then
    stop_server
    SCRIBE_WORKER_SLOTS=0 SCRIBE_REALTIME_THREADS=$threads start_serve
    RT_RSS_BASE=$(awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$server_pid/status")
    export RT_API=$base RT_PID=$server_pid
    new_key
    RT_SESSIONS=1 RT_UTTERANCES=1 RT_LABEL=warm-up node bench/realtime_bench.mjs run >/dev/null
  fi
  echo
  echo "== 3: concurrent sessions, $conc_utts sentences each, end_of_turn_silence_ms 600, SCRIBE_REALTIME_THREADS $threads"
  for n in $levels; do
    echo "(load $(cut -d' ' -f1-3 /proc/loadavg))"
    new_key
    RT_SESSIONS=$n RT_SILENCE_MS=600 RT_UTTERANCES=$conc_utts RT_LABEL="concurrency $n, threads $threads" \
      node bench/realtime_bench.mjs run
  done
done

has latency || exit 0
echo
echo "== 4: word error rate on session 0's audio (${#sentences[@]} sentences)"
echo "  realtime finals (profile live, 600 ms): $(jq -r '"\(.wer * 1000 | round / 10)% (\(.errors)/\(.words))"' \
  <<<"$(node bench/realtime_bench.mjs wer "$tmp/stream.wav.txt" "$tmp/rt600.txt")")"
echo "  realtime finals (profile live, 400 ms): $(jq -r '"\(.wer * 1000 | round / 10)% (\(.errors)/\(.words))"' \
  <<<"$(node bench/realtime_bench.mjs wer "$tmp/stream.wav.txt" "$tmp/rt400.txt")")"
echo "  offline pipeline (scribe transcribe):   $(jq -r '"\(.wer * 1000 | round / 10)% (\(.errors)/\(.words))"' <<<"$off_wer")"
echo "(load at the end $(cut -d' ' -f1-3 /proc/loadavg))"
