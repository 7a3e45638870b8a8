#!/usr/bin/env bash
# Time to result for a short file (issue 23): how long a 60-second recording
# takes from POST /transcriptions to its completed answer on /wait, through a
# real `scribe serve` with one pipeline worker slot. Prints numbers, never
# asserts them.
#
# Setup: a private PostgreSQL 15 cluster (scripts/pg.sh, TTR_PG_PORT, stopped
# on exit), `scribe migrate`, an enterprise account with credit and a key
# (`scribe admin`), `scribe serve --port 0` with SCRIBE_WORKER_SLOTS=1. The
# recording is made once (cached in TTR_MEDIA_DIR): lines spoken in turn by
# flite's slt, rms and awb with 0.6 s pauses, cut or padded to TTR_SECONDS.
#
# Then TTR_RUNS jobs, one at a time (bench/time_to_result.mjs): presigned
# upload (POST /uploads, PUT; timed apart), POST /transcriptions, long-poll
# /wait until terminal. Per job: the client's create-to-completed time, and
# from the transcription's stream in the events table the server's
# TranscriptionCreated-to-TranscriptionCompleted time split into stages:
#   queued        created until the worker records "decoding" (pickup latency)
#   decoding      FFmpeg decode, voice activity, measuring and the hold
#   transcribing  the per-recording warp choice (VTLN) and recognition; on the
#                 first job of a fresh process also loading the models
#   diarizing     speaker diarization
#   enriching     sentences and labels, then the artifact written and the
#                 completion appended
# The first job is reported apart (the models load on the first job of a fresh
# process); p50/p95 are over the others. The fixed costs the stage events do
# not separate are estimated: model load as the first job's transcribing
# minus the later jobs' p50; the warp choice by a second pass with
# SCRIBE_POCKETSPHINX_VTLN=0 (TTR_VTLN_PASS=1, on by default) whose
# transcribing p50 is subtracted (that pass's words differ, so this is an
# estimate of the choice's cost, not a like-for-like run).
#
# Reference, same run, same file: Debian's pocketsphinx_continuous with its
# defaults (one thread), its CPU seconds (user + system of the child) and wall
# time. The ratio printed first is the server's CPU per job (scribe serve's
# CPU over the later jobs / their count, which includes HTTP, database
# clients and the worker) to the reference's CPU on the file.
#
# Settings:
#   SCRIBE_BIN       default build/scribe
#   TTR_RUNS         jobs per pass                  default 10
#   TTR_SECONDS      recording length               default 60
#   TTR_PG_PORT      private cluster port           default 55497
#   TTR_PGDATA       its data directory             default /tmp/scribe-ttr-pg
#   TTR_MEDIA_DIR    where the recording is cached  default /tmp/scribe-ttr-media
#   TTR_VTLN_PASS    1: the second pass without VTLN   default 1
#   SCRIBE_BENCH_REFERENCE  0 skips the reference
# Prints the machine line, a table, and JSON lines {"bench":"time_to_result",...}.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=bench/bench_lib.sh
. bench/bench_lib.sh
bin=$(realpath "${SCRIBE_BIN:-build/scribe}")
runs=${TTR_RUNS:-10}
seconds=${TTR_SECONDS:-60}
pg_port=${TTR_PG_PORT:-55497}
pgdata=${TTR_PGDATA:-/tmp/scribe-ttr-pg}
media=${TTR_MEDIA_DIR:-/tmp/scribe-ttr-media}
vtln_pass=${TTR_VTLN_PASS:-1}

[ -x "$bin" ] || { echo "time_to_result.sh: no scribe binary at $bin (set SCRIBE_BIN)" >&2; exit 2; }
for tool in node psql flite sox jq; do
  command -v "$tool" >/dev/null || { echo "time_to_result.sh: $tool is not installed" >&2; exit 2; }
done

machine_line

tmp=$(mktemp -d /tmp/scribe-ttr.XXXXXX)
server_pid=""
cleanup() {
  stop_server
  bash scripts/pg.sh stop "$pgdata" || true
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The recording, made once.
wav=$media/speech-${seconds}s.wav
if [ ! -s "$wav" ]; then
  mkdir -p "$media"
  three_voice_recording "$tmp" "$tmp/once.wav"
  # Repeat the lines if they are short of the length, then cut to it.
  sox "$tmp/once.wav" "$tmp/once.wav" "$tmp/all.wav"
  sox -V1 "$tmp/all.wav" "$tmp/cut.wav" trim 0 "$seconds" pad 0 "$seconds" trim 0 "$seconds"
  mv "$tmp/cut.wav" "$wav"
fi
audio=$(soxi -D "$wav")
echo "recording: $wav ($audio s, three flite voices)"

mkdir -p "$(dirname "$pgdata")"
chmod 755 "$(dirname "$pgdata")" 2>/dev/null || true
bash scripts/pg.sh start "$pgdata" "$pg_port"
url=$(bash scripts/pg.sh url "$pg_port")
export SCRIBE_DATABASE_URL=$url SCRIBE_LOG_LEVEL=warn
psql "${url%/*}/postgres" -Atq -v ON_ERROR_STOP=1 -c "set client_min_messages = warning" \
  -c "drop database if exists scribe_ttr with (force)" -c "create database scribe_ttr" >/dev/null
export SCRIBE_DATABASE_URL=${url%/*}/scribe_ttr
"$bin" migrate >/dev/null 2>&1
account=$("$bin" admin account create --email "ttr-$$@example.com" --plan enterprise --balance-usd 1000 --json |
  tail -1 | jq -r .account_id)
key=$("$bin" admin key create --account "$account" --permission full --json | tail -1 | jq -r .api_key)
export SCRIBE_OBJECT_STORE_DIR=$tmp/objects SCRIBE_WORK_DIR=$tmp/work
mkdir -p "$SCRIBE_OBJECT_STORE_DIR" "$SCRIBE_WORK_DIR"

# Starts `scribe serve` (extra environment as arguments) and waits for its port.
start_server() {
  rm -f "$tmp/port"
  env "$@" SCRIBE_WORKER_SLOTS=1 "$bin" serve --port 0 --port-file "$tmp/port" >"$tmp/serve.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 300); do [ -s "$tmp/port" ] && break; sleep 0.05; done
  [ -s "$tmp/port" ] || { echo "scribe serve did not start:" >&2; cat "$tmp/serve.log" >&2; exit 1; }
}

# One pass: $1 its name, the rest the server's extra environment. Leaves the
# jobs' JSON lines in $tmp/$1.jobs and the server's CPU after the first job.
pass() {
  local name=$1
  shift
  start_server "$@"
  TTR_API="http://127.0.0.1:$(cat "$tmp/port")/api/v1" TTR_KEY=$key TTR_FILE=$wav TTR_AUDIO_SECONDS=$audio \
    TTR_RUNS=1 TTR_DB_URL=$SCRIBE_DATABASE_URL node bench/time_to_result.mjs >"$tmp/$name.jobs"
  local cpu_first
  cpu_first=$(cpu_of "$server_pid")
  TTR_API="http://127.0.0.1:$(cat "$tmp/port")/api/v1" TTR_KEY=$key TTR_FILE=$wav TTR_AUDIO_SECONDS=$audio \
    TTR_RUNS=$((runs - 1)) TTR_DB_URL=$SCRIBE_DATABASE_URL node bench/time_to_result.mjs |
    awk '{sub(/"job":[0-9]+/, "\"job\":" NR + 1); print}' >>"$tmp/$name.jobs"
  echo "$(awk -v a="$(cpu_of "$server_pid")" -v b="$cpu_first" 'BEGIN {printf "%.2f", a - b}')" >"$tmp/$name.cpu"
  stop_server
}

# Summary of a pass's jobs: p50 and p95 (nearest rank) of the later jobs.
summarize() {
  node - "$tmp/$1.jobs" "$1" "$audio" "$(cat "$tmp/$1.cpu")" "$runs" <<'EOF'
const [file, name, audio, cpuLater, runs] = process.argv.slice(2);
const jobs = require('fs').readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const bad = jobs.filter((j) => j.status !== 'completed');
const first = jobs[0], later = jobs.slice(1);
const q = (xs, p) => { const s = xs.filter((x) => typeof x === 'number').sort((a, b) => a - b); return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : null; };
const names = ['queued', 'decoding', 'transcribing', 'diarizing', 'enriching'];
const f = (x) => (x === null || x === undefined ? '-' : x.toFixed(3));
const row = (label, xs, firstV) => console.log(`  ${label.padEnd(30)} ${f(q(xs, 0.5)).padStart(8)} ${f(q(xs, 0.95)).padStart(8)} ${f(firstV).padStart(8)}`);
console.log(`${name}: ${jobs.length} jobs (${bad.length} not completed), seconds; p50/p95 over jobs 2-${jobs.length}`);
console.log(`  ${''.padEnd(30)} ${'p50'.padStart(8)} ${'p95'.padStart(8)} ${'first'.padStart(8)}`);
row('create to completed (client)', later.map((j) => j.client_total_s), first.client_total_s);
row('created to completed (events)', later.map((j) => j.server_total_s), first.server_total_s);
for (const s of names) row(`  ${s}`, later.map((j) => j.stages[s]), first.stages[s]);
row('upload (POST + PUT, apart)', later.map((j) => j.upload_s), first.upload_s);
const p50 = q(later.map((j) => j.client_total_s), 0.5), p95 = q(later.map((j) => j.client_total_s), 0.95);
console.log(`  time to result / audio length: p50 ${f(p50 / audio)}, p95 ${f(p95 / audio)}, first ${f(first.client_total_s / audio)} (target <= 0.15)`);
const out = { bench: 'time_to_result', pass: name, audio_seconds: Number(audio), jobs: jobs.length, not_completed: bad.length,
  total_p50_s: p50, total_p95_s: p95, first_total_s: first.client_total_s,
  ratio_to_audio_p50: p50 / audio, ratio_to_audio_p95: p95 / audio, first_ratio_to_audio: first.client_total_s / audio,
  server_total_p50_s: q(later.map((j) => j.server_total_s), 0.5), server_cpu_per_job_s: later.length ? Number(cpuLater) / later.length : null,
  upload_p50_s: q(later.map((j) => j.upload_s), 0.5), stages_p50_s: {}, stages_p95_s: {}, first_stages_s: first.stages };
for (const s of names) { out.stages_p50_s[s] = q(later.map((j) => j.stages[s]), 0.5); out.stages_p95_s[s] = q(later.map((j) => j.stages[s]), 0.95); }
console.log(JSON.stringify(out));
EOF
}

[ "$runs" -ge 2 ] || { echo "time_to_result.sh: TTR_RUNS must be at least 2 (the first job is reported apart)" >&2; exit 2; }

# The reference first, on a quiet server-less machine state.
ref_cpu=null ref_wall=null ref_load=null
if [ "${SCRIBE_BENCH_REFERENCE:-1}" != 0 ] && command -v pocketsphinx_continuous >/dev/null; then
  TIMEFORMAT='%R %U %S'
  # bash's `time` reports the child's user and system CPU (getrusage of children).
  read -r ref_wall ref_user ref_sys < <({ time pocketsphinx_continuous -infile "$wav" >"$tmp/ref.txt" 2>/dev/null; } 2>&1)
  ref_cpu=$(awk -v u="$ref_user" -v s="$ref_sys" 'BEGIN {printf "%.2f", u + s}')
  # Its fixed cost: the same on 1 s of silence (loading the model and dictionary).
  sox -n -r 16000 -c 1 -b 16 "$tmp/silence.wav" trim 0 1
  read -r _ ref_load_user ref_load_sys < <({ time pocketsphinx_continuous -infile "$tmp/silence.wav" >/dev/null 2>&1; } 2>&1)
  ref_load=$(awk -v u="$ref_load_user" -v s="$ref_load_sys" 'BEGIN {printf "%.2f", u + s}')
fi

pass vtln
summarize vtln | tee "$tmp/vtln.summary"
if [ "$vtln_pass" = 1 ]; then
  echo
  pass novtln SCRIBE_POCKETSPHINX_VTLN=0
  summarize novtln | tee "$tmp/novtln.summary"
fi

echo
# Fixed costs and the reference, ratio first.
node - "$tmp/vtln.summary" "$tmp/novtln.summary" "$audio" "$ref_cpu" "$ref_wall" "$ref_load" <<'EOF'
const fs = require('fs');
const [withFile, withoutFile, audioS, refCpuS, refWallS, refLoadS] = process.argv.slice(2);
const refLoad = refLoadS === 'null' ? null : Number(refLoadS);
const last = (f) => (fs.existsSync(f) ? JSON.parse(fs.readFileSync(f, 'utf8').trim().split('\n').filter((l) => l.startsWith('{')).pop()) : null);
const on = last(withFile), off = last(withoutFile);
const audio = Number(audioS), refCpu = refCpuS === 'null' ? null : Number(refCpuS), refWall = refWallS === 'null' ? null : Number(refWallS);
const f = (x, d = 3) => (x === null || x === undefined || Number.isNaN(x) ? '-' : x.toFixed(d));
const cpuJob = on.server_cpu_per_job_s;
const ratio = refCpu ? cpuJob / refCpu : null;
if (refCpu)
  console.log(`Reference: server CPU per job ${f(ratio, 2)}x pocketsphinx_continuous's on the same file (server ${f(cpuJob, 2)} CPU s per job, ` +
    `${f(cpuJob / audio)} per audio s; pocketsphinx_continuous ${f(refCpu, 2)} CPU s, ${f(refWall, 2)} s wall, ${f(refCpu / audio)} per audio s, ` +
    `${f(refLoad, 2)} CPU s of it loading the model (measured on 1 s of silence); ` +
    `time to result p50 ${f(on.total_p50_s, 2)} s = ${f(on.total_p50_s / refWall, 2)}x the reference's wall)`);
else console.log(`Reference: not run; server ${f(cpuJob, 2)} CPU s per job, ${f(cpuJob / audio)} per audio s`);
const modelLoad = on.first_stages_s.transcribing - on.stages_p50_s.transcribing;
const vtln = off ? on.stages_p50_s.transcribing - off.stages_p50_s.transcribing : null;
// Differences of a few tenths of a second are within the run-to-run spread
// of one job (compare p50 and p95).
console.log('Fixed per-job costs (estimates by difference, s; within the spread of p50-p95 they are noise):');
console.log(`  model load (first job's transcribing - later jobs' p50)     ${f(modelLoad)}`);
console.log(`  VTLN choice (transcribing p50, with - without VTLN)        ${f(vtln)}`);
console.log(`  diarization (diarizing p50)                                 ${f(on.stages_p50_s.diarizing)}`);
console.log(`  enrichment (enriching p50: sentences, artifact, completion) ${f(on.stages_p50_s.enriching)}`);
console.log(`  pickup (queued p50)                                         ${f(on.stages_p50_s.queued)}`);
console.log(JSON.stringify({ bench: 'time_to_result', part: 'summary', audio_seconds: audio, cpu_ratio_to_reference: ratio,
  server_cpu_per_job_s: cpuJob, cpu_per_audio_second: cpuJob / audio, reference_cpu_s: refCpu, reference_wall_s: refWall, reference_model_load_cpu_s: refLoad,
  reference_cpu_per_audio_second: refCpu ? refCpu / audio : null, total_p50_s: on.total_p50_s, total_p95_s: on.total_p95_s,
  ratio_to_audio_p50: on.ratio_to_audio_p50, ratio_to_audio_p95: on.ratio_to_audio_p95, first_total_s: on.first_total_s,
  model_load_s: modelLoad, vtln_choice_s: vtln, diarization_s: on.stages_p50_s.diarizing, enrichment_s: on.stages_p50_s.enriching }));
EOF
