#!/usr/bin/env bash
# Quality of the ask feature (POST /api/v1/transcriptions/{id}/ask and
# POST /api/v1/ask): does the answer cite the right place, and does the service
# say `no_answer` when nothing answers? Questions and scoring:
# bench/ask_eval/README.md. Prints numbers, never asserts them.
#
# Setup: a private PostgreSQL 15 cluster (scripts/pg.sh) whose data directory
# is kept between runs (ASK_STATE_DIR/pg), database scribe_ask, `scribe
# migrate`, an enterprise account and a key (`scribe admin`), `scribe serve
# --port 0` with ASK_WORKER_SLOTS pipeline slots and a high rate limit. Every
# recording of the library (56: the eight multi-topic recordings of
# bench/enrichment_eval in ASK_ENRICH_DIR, the dialogues and single passages of
# bench/ask_eval/make_dialogues.sh in ASK_WORK_DIR) is uploaded through the
# presigned flow and waited for (/wait). The name -> transcription id map
# (ASK_WORK_DIR/ids.tsv, tied to the cluster's system identifier), the key and
# the object store (ASK_STATE_DIR/objects) persist, so a second run on the same
# data directory uploads only what is new or changed and goes straight to the
# questions. Then bench/ask_quality.mjs asks and scores.
#
# Usage: bench/ask_quality.sh [--set tune|report|all] [--verbose] [--upload-only]
#                             [--keep-cluster] [--fresh] [--top-k N]
#   --set           which questions (default all); uploads always cover the whole library
#   --verbose       print every miss: question, answer, first citation
#   --upload-only   set up and transcribe, ask nothing
#   --keep-cluster  leave PostgreSQL running on exit (the server is always stopped);
#                   without it the cluster is stopped, its data directory kept
#   --fresh         delete the data directory, object store, key and id map first
#   --top-k N       send top_k N with per-transcript asks (default: not sent)
# Settings:
#   SCRIBE_BIN        default build/scribe
#   ASK_PG_PORT       default 55498
#   ASK_STATE_DIR     default /tmp/scribe-ask-state (pg/, objects/, work/, serve.log)
#   ASK_WORK_DIR      default /tmp/scribe-ask-eval (dialogues, passages, ids.tsv, key)
#   ASK_ENRICH_DIR    default /tmp/scribe-enrich-eval (tune-N, report-N)
#   ASK_WORKER_SLOTS  default 1 (transcription jobs at once; each decodes on every core)
#   ASK_SERVE_ARGS    extra `scribe serve` arguments
# Missing recordings are made first (make_dialogues.sh; make_set.sh with
# TRANSCRIBE=0 for the multi-topic ones).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=bench/bench_lib.sh
. bench/bench_lib.sh
bin=$(realpath "${SCRIBE_BIN:-build/scribe}")
pg_port=${ASK_PG_PORT:-55498}
state=${ASK_STATE_DIR:-/tmp/scribe-ask-state}
work=${ASK_WORK_DIR:-/tmp/scribe-ask-eval}
enrich=${ASK_ENRICH_DIR:-/tmp/scribe-enrich-eval}
slots=${ASK_WORKER_SLOTS:-1}

mjs_args=()
upload_only=0 keep_cluster=0 fresh=0
while [ $# -gt 0 ]; do
  case "$1" in
    --set) mjs_args+=(--set "$2"); shift 2 ;;
    --top-k) mjs_args+=(--top-k "$2"); shift 2 ;;
    --verbose) mjs_args+=(--verbose); shift ;;
    --upload-only) upload_only=1; shift ;;
    --keep-cluster) keep_cluster=1; shift ;;
    --fresh) fresh=1; shift ;;
    -h | --help) sed -n '2,40p' "$0"; exit 0 ;;
    *) echo "ask_quality.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

[ -x "$bin" ] || { echo "ask_quality.sh: no scribe binary at $bin (set SCRIBE_BIN)" >&2; exit 2; }
for tool in node psql flite sox soxi jq; do
  command -v "$tool" >/dev/null || { echo "ask_quality.sh: $tool is not installed" >&2; exit 2; }
done

machine_line

pgdata=$state/pg
if [ $fresh = 1 ]; then
  bash scripts/pg.sh stop "$pgdata" || true
  rm -rf "$pgdata" "$state/objects" "$state/work" "$work/ids.tsv" "$work/api-key"
fi

# Recordings (cached; a no-op when they exist).
TRANSCRIBE=0 nice -n 10 bench/enrichment_eval/make_set.sh "$enrich" >&2
nice -n 10 bench/ask_eval/make_dialogues.sh "$work" >&2

server_pid=""
cleanup() {
  stop_server
  [ $keep_cluster = 1 ] || bash scripts/pg.sh stop "$pgdata" || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$state" "$state/objects" "$state/work" "$work"
chmod 755 "$state" 2>/dev/null || true
bash scripts/pg.sh start "$pgdata" "$pg_port"
url=$(bash scripts/pg.sh url "$pg_port")
psql "${url%/*}/postgres" -Atq -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
select 'create database scribe_ask' where not exists (select 1 from pg_database where datname = 'scribe_ask') \gexec
SQL
export SCRIBE_DATABASE_URL=${url%/*}/scribe_ask SCRIBE_LOG_LEVEL=warn
"$bin" migrate >/dev/null 2>&1 || { echo "ask_quality.sh: scribe migrate failed:" >&2; "$bin" migrate >&2; exit 1; }
db_id=$(psql "$SCRIBE_DATABASE_URL" -Atq -c "select system_identifier from pg_control_system()")

# The account and key: kept in the work dir with the cluster they belong to.
key=""
if [ -s "$work/api-key" ] && [ "$(sed -n 1p "$work/api-key")" = "$db_id" ]; then
  key=$(sed -n 2p "$work/api-key")
fi
export SCRIBE_OBJECT_STORE_DIR=$state/objects SCRIBE_WORK_DIR=$state/work

# start_server NICE SLOTS: `scribe serve` on a free port; sets server_pid and api.
start_server() {
  rm -f "$state/port"
  # shellcheck disable=SC2086
  SCRIBE_WORKER_SLOTS=$2 nice -n "$1" "$bin" serve --port 0 --port-file "$state/port" --rate-limit 100000000 \
    ${ASK_SERVE_ARGS:-} >>"$state/serve.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 600); do [ -s "$state/port" ] && break; sleep 0.05; done
  [ -s "$state/port" ] || { echo "scribe serve did not start:" >&2; tail -20 "$state/serve.log" >&2; exit 1; }
  api="http://127.0.0.1:$(cat "$state/port")/api/v1"
}
# Transcription runs niced (the machine is shared); the asks are timed on a
# server of normal priority without pipeline slots.
: >"$state/serve.log"
start_server 10 "$slots"

if [ -n "$key" ] && [ "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $key" "$api/me")" != 200 ]; then
  key=""
fi
if [ -z "$key" ]; then
  account=$("$bin" admin account create --email "ask-quality-$db_id@example.com" --plan enterprise --balance-usd 100000 --json |
    tail -1 | jq -r .account_id)
  key=$("$bin" admin key create --account "$account" --name ask-quality --permission full --json | tail -1 | jq -r .api_key)
  printf '%s\n%s\n' "$db_id" "$key" >"$work/api-key"
  chmod 600 "$work/api-key"
  rm -f "$work/ids.tsv"
fi

export ASK_API=$api ASK_KEY=$key ASK_DB_ID=$db_id ASK_WORK_DIR=$work ASK_ENRICH_DIR=$enrich \
  ASK_QUESTIONS=${ASK_QUESTIONS:-$root/bench/ask_eval/questions.tsv}
node bench/ask_quality.mjs upload
[ $upload_only = 1 ] && exit 0
stop_server
start_server 0 0
export ASK_API=$api
node bench/ask_quality.mjs ask ${mjs_args[@]+"${mjs_args[@]}"}
