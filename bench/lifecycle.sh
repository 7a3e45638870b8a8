#!/usr/bin/env bash
# The transcription lifecycle over HTTP: how fast transcriptions are created,
# and what 2,000 concurrent /wait long-polls cost and how fast they are answered.
# Prints numbers, never asserts them. Every load is bounded in count and time
# and stays on 127.0.0.1.
#
# Parts (LIFECYCLE_PARTS, default "creates,creates1,waiters"), each on a fresh
# database of the same cluster, against one `scribe serve` started with
# SCRIBE_WORKER_SLOTS=0 (no pipeline worker runs) and --rate-limit 1000000:
#
#   creates   wrk -t2 -c32 -d15s --latency POST /api/v1/transcriptions
#             {source: external_url, url: http://127.0.0.1:9/a.mp3, duration_seconds: 60}
#             (duration given: no probe; SCRIBE_ALLOW_PRIVATE_URLS=1 admits the URL).
#             The requests go round-robin over the keys of 32 enterprise accounts
#             (LIFECYCLE_CREATE_ACCOUNTS). Why enterprise and why 32 accounts: every
#             plan has either the pay-as-you-go fair-use wall (free: 60 audio minutes
#             per 6 h, i.e. 60 creates of 60 s, then 429 rate_limited) or a backlog
#             limit (429 queue_full at max_queued waiting jobs: starter 10, pro 30,
#             business 150, enterprise 500; domain/plans.cpp). Enterprise has the
#             largest backlog and no fair-use wall, and 32 accounts give room for
#             16,000 creates. Prints creates/s, p50/p99, 202s vs errors by code,
#             server and PostgreSQL CPU per create.
#   creates1  the contention of one account: 480 creates (under the backlog of 500)
#             from Node, 32 in flight over the 32 accounts' keys, 32 in flight on
#             one account's key (every create of an account appends to the
#             account's stream with an expected version, so they conflict and
#             retry), and 1 in flight on another account's key.
#   waiters   creates 2,000 transcriptions (LIFECYCLE_WAIT_TRANSCRIPTIONS) over 5
#             enterprise accounts (400 each, under the backlog of 500), opens 2,000
#             concurrent GET /transcriptions/{id}/wait?timeout=45 (LIFECYCLE_WAITERS;
#             one waiter per transcription unless fewer transcriptions are asked for),
#             measures the server while they wait (VmRSS, Threads, connections in
#             pg_stat_activity, CPU), then completes the jobs and measures how long
#             each waiter takes from its completion event (recorded_at of
#             TranscriptionFailed/Deleted) to its answer. Completion
#             (LIFECYCLE_COMPLETE): "worker" (default) starts `scribe worker` with
#             SCRIBE_WORKER_SLOTS=2 (LIFECYCLE_COMPLETER_SLOTS); every job's link is
#             http://127.0.0.1:9/a.mp3, refused at once, so each job fails with
#             source_unavailable and its /wait answers 200 status failed. "delete"
#             deletes the transcriptions over HTTP instead (waiters answer 404).
#             Last, on a fresh server, the same number of idle connections (no
#             request sent): what a connection costs without a waiter.
#
# Settings:
#   SCRIBE_BIN                 the scribe binary                       default build/scribe
#   LIFECYCLE_PG_URL           an existing cluster, as postgresql://user@host:port (no
#                              database); its user needs CREATEDB. Default: a private
#                              cluster (scripts/pg.sh) in LIFECYCLE_PGDATA on
#                              LIFECYCLE_PG_PORT, stopped on exit
#   LIFECYCLE_PGDATA           default /tmp/lbpg/data      LIFECYCLE_PG_PORT   default 55490
#   LIFECYCLE_HTTP_PORT        server port                             default 18190
#   LIFECYCLE_IO_THREADS / LIFECYCLE_DB_POOL                           default 2 / 8
#   LIFECYCLE_DURATION         wrk duration                            default 15s
#   LIFECYCLE_CONNECTIONS      wrk connections (creates, creates1)     default 32
#   LIFECYCLE_CREATE_ACCOUNTS  default 32    LIFECYCLE_CREATES1_COUNT  default 480
#   LIFECYCLE_WAIT_TRANSCRIPTIONS default 2000  LIFECYCLE_WAITERS default 2000
#   LIFECYCLE_WAIT_ACCOUNTS    default 5     LIFECYCLE_WAIT_TIMEOUT    default 45
#   LIFECYCLE_WAIT_DEADLINE_S  the waiters' client stops by then       default 180
#   LIFECYCLE_COMPLETE         worker | delete                         default worker
#   LIFECYCLE_COMPLETER_SLOTS  default 2
#
# Prints a few lines per part and one JSON line per measurement, beginning
# {"bench":"lifecycle". The server's request log goes to a temporary file.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=bench/bench_lib.sh
. bench/bench_lib.sh
bin=${SCRIBE_BIN:-build/scribe}
parts=${LIFECYCLE_PARTS:-creates,creates1,waiters}
pg_url=${LIFECYCLE_PG_URL:-}
pgdata=${LIFECYCLE_PGDATA:-/tmp/lbpg/data}
pg_port=${LIFECYCLE_PG_PORT:-55490}
port=${LIFECYCLE_HTTP_PORT:-18190}
io_threads=${LIFECYCLE_IO_THREADS:-2}
db_pool=${LIFECYCLE_DB_POOL:-8}
duration=${LIFECYCLE_DURATION:-15s}
conns=${LIFECYCLE_CONNECTIONS:-32}
create_accounts=${LIFECYCLE_CREATE_ACCOUNTS:-32}
creates1_count=${LIFECYCLE_CREATES1_COUNT:-480}
wait_transcriptions=${LIFECYCLE_WAIT_TRANSCRIPTIONS:-2000}
waiters=${LIFECYCLE_WAITERS:-2000}
wait_accounts=${LIFECYCLE_WAIT_ACCOUNTS:-5}
wait_timeout=${LIFECYCLE_WAIT_TIMEOUT:-45}
wait_deadline=${LIFECYCLE_WAIT_DEADLINE_S:-180}
complete=${LIFECYCLE_COMPLETE:-worker}
completer_slots=${LIFECYCLE_COMPLETER_SLOTS:-2}
helper=$root/bench/lifecycle_waiters.mjs

[ -x "$bin" ] || { echo "lifecycle.sh: no scribe binary at $bin (set SCRIBE_BIN)" >&2; exit 2; }
command -v wrk >/dev/null || { echo "lifecycle.sh: wrk is not installed" >&2; exit 2; }
command -v node >/dev/null || { echo "lifecycle.sh: node is not installed" >&2; exit 2; }
# 2,000 client sockets plus 2,000 server sockets on one machine.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

tmp=$(mktemp -d /tmp/scribe-lifecycle.XXXXXX)
server_pid="" completer_pid="" waiter_pid="" idle_pid="" started_pg=""
stop_pid() {
  local pid=$1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
cleanup() {
  stop_pid "$waiter_pid"
  stop_pid "$idle_pid"
  stop_pid "$completer_pid"
  stop_pid "$server_pid"
  if [ -n "$started_pg" ]; then bash "$root/scripts/pg.sh" stop "$pgdata" || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -z "$pg_url" ]; then
  mkdir -p "$(dirname "$pgdata")" && chmod 755 "$(dirname "$pgdata")"
  bash "$root/scripts/pg.sh" start "$pgdata" "$pg_port"
  started_pg=1
  pg_url=$(bash "$root/scripts/pg.sh" url "$pg_port")
  pg_url=${pg_url%/*}
fi

# Every process of the local cluster (-1 when the cluster is not local).
pg_cpu() {
  if [ -n "$started_pg" ] && [ -r "$pgdata/postmaster.pid" ]; then
    cluster_cpu "$pgdata"
  else
    echo -1
  fi
}
status_kb() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }
# Connections to database $1, not counting this query's own.
db_conns() { psql "$pg_url/$1" -Atqc "select count(*) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()"; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a - b}'; }

fresh_db() {
  psql "$pg_url/postgres" -Atq -v ON_ERROR_STOP=1 -c "set client_min_messages = warning" -c "drop database if exists $1 with (force)" -c "create database $1" >/dev/null
  SCRIBE_DATABASE_URL="$pg_url/$1" "$bin" migrate >/dev/null 2>&1
}
# make_keys DB N FILE: N enterprise accounts with one full key each, keys into FILE.
make_keys() {
  local db=$1 n=$2 file=$3 i account key
  : >"$file"
  for i in $(seq "$n"); do
    account=$(SCRIBE_DATABASE_URL="$pg_url/$db" "$bin" admin account create --email "lc-$i-$$@bench.invalid" \
      --plan enterprise --balance-usd 100000 --json 2>/dev/null | sed -E 's/.*"account_id":([0-9]+).*/\1/')
    key=$(SCRIBE_DATABASE_URL="$pg_url/$db" "$bin" admin key create --account "$account" --name lifecycle --json \
      2>/dev/null | sed -E 's/.*"api_key":"([^"]+)".*/\1/')
    [ -n "$key" ] || { echo "lifecycle.sh: could not create an API key" >&2; exit 1; }
    echo "$key" >>"$file"
  done
}
start_server() {
  local db=$1
  rm -f "$tmp/port"
  SCRIBE_DATABASE_URL="$pg_url/$db" SCRIBE_WORKER_SLOTS=0 SCRIBE_ALLOW_PRIVATE_URLS=1 \
    "$bin" serve --port "$port" --rate-limit 1000000 --io-threads "$io_threads" --db-pool "$db_pool" \
    --no-migrate --port-file "$tmp/port" >"$tmp/server-$db.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 300); do [ -f "$tmp/port" ] && break; kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
  if [ ! -f "$tmp/port" ]; then
    echo "lifecycle.sh: the server did not start; its log:" >&2
    tail -20 "$tmp/server-$db.log" >&2
    exit 1
  fi
}
base="http://127.0.0.1:$port"
created_in_db() { psql "$pg_url/$1" -Atqc "select count(*) from events where type = 'TranscriptionCreated'"; }
json() { echo "{\"bench\":\"lifecycle\",$1}"; }

echo "scribe lifecycle benchmark: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)," \
  "serve --io-threads $io_threads --db-pool $db_pool --rate-limit 1000000, SCRIBE_WORKER_SLOTS=0"

# ---- creates: wrk ----------------------------------------------------------
if [[ ",$parts," == *,creates,* ]]; then
  db=scribe_lc_creates
  fresh_db "$db"
  make_keys "$db" "$create_accounts" "$tmp/keys-creates"
  start_server "$db"
  cat >"$tmp/create.lua" <<'LUA'
-- POST /api/v1/transcriptions, keys round-robin per request; each wrk thread
-- takes every nth key. Counts statuses and error codes per thread.
local threads, counter = {}, 0
function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
  table.insert(threads, thread)
end
function init(args)
  local all = {}
  for line in io.lines(os.getenv("LIFECYCLE_KEYS_FILE")) do
    if #line > 0 then all[#all + 1] = line end
  end
  local nthreads = tonumber(os.getenv("LIFECYCLE_WRK_THREADS"))
  keys = {}
  for i, k in ipairs(all) do
    if (i - 1) % nthreads == tid then keys[#keys + 1] = k end
  end
  if #keys == 0 then keys = all end
  n = 0
  statuses, codes = {}, {}
  body = '{"source":"external_url","url":"http://127.0.0.1:9/a.mp3","duration_seconds":60}'
end
function request()
  n = n + 1
  local key = keys[(n - 1) % #keys + 1]
  return wrk.format("POST", "/api/v1/transcriptions",
                    {["Authorization"] = "Bearer " .. key, ["Content-Type"] = "application/json"}, body)
end
function response(status, headers, resp)
  local s = tostring(status)
  statuses[s] = (statuses[s] or 0) + 1
  if status ~= 202 then
    local c = string.match(resp or "", '"code":"([^"]+)"') or ("http_" .. s)
    codes[c] = (codes[c] or 0) + 1
  end
end
local function obj(t)
  local parts = {}
  for k, v in pairs(t) do parts[#parts + 1] = string.format('"%s":%d', k, v) end
  return "{" .. table.concat(parts, ",") .. "}"
end
function done(summary, latency, requests)
  local st, cd = {}, {}
  for _, t in ipairs(threads) do
    for k, v in pairs(t:get("statuses")) do st[k] = (st[k] or 0) + v end
    for k, v in pairs(t:get("codes")) do cd[k] = (cd[k] or 0) + v end
  end
  local e = summary.errors
  io.write(string.format(
    'LIFECYCLE_WRK {"requests":%d,"seconds":%.2f,"p50_ms":%.2f,"p90_ms":%.2f,"p99_ms":%.2f,"max_ms":%.2f,' ..
    '"statuses":%s,"error_codes":%s,"socket_errors":%d}\n',
    summary.requests, summary.duration / 1e6, latency:percentile(50) / 1000, latency:percentile(90) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000, obj(st), obj(cd),
    e.connect + e.read + e.write + e.timeout))
end
LUA
  cpu0=$(cpu_of "$server_pid"); pg0=$(pg_cpu)
  LIFECYCLE_KEYS_FILE=$tmp/keys-creates LIFECYCLE_WRK_THREADS=2 \
    wrk -t2 -c"$conns" -d"$duration" --latency -s "$tmp/create.lua" "$base/api/v1/transcriptions" >"$tmp/wrk.out" 2>&1 || true
  cpu1=$(cpu_of "$server_pid"); pg1=$(pg_cpu)
  line=$(sed -n 's/^LIFECYCLE_WRK //p' "$tmp/wrk.out")
  [ -n "$line" ] || { echo "lifecycle.sh: wrk printed no result:" >&2; cat "$tmp/wrk.out" >&2; exit 1; }
  in_db=$(created_in_db "$db")
  stop_pid "$server_pid"; server_pid=
  out=$(node -e '
    const w = JSON.parse(process.argv[1]); const inDb = +process.argv[2];
    const srv = +process.argv[3], pg = +process.argv[4];
    const ok = w.statuses["202"] || 0;
    const r = { measure: "creates", plan: "enterprise", accounts: +process.argv[5], connections: +process.argv[6],
      requests: w.requests, seconds: w.seconds, creates_per_s: +(ok / w.seconds).toFixed(1),
      accepted_202: ok, errors: w.requests - ok, created_in_db: inDb, p50_ms: w.p50_ms, p90_ms: w.p90_ms,
      p99_ms: w.p99_ms, max_ms: w.max_ms, statuses: w.statuses, error_codes: w.error_codes,
      socket_errors: w.socket_errors,
      server_cpu_ms_per_create: ok ? +(srv * 1000 / ok).toFixed(2) : null,
      pg_cpu_ms_per_create: ok && pg >= 0 ? +(pg * 1000 / ok).toFixed(2) : null };
    console.log(JSON.stringify(r).slice(1, -1));' "$line" "$in_db" "$(sub "$cpu1" "$cpu0")" "$(sub "$pg1" "$pg0")" \
    "$create_accounts" "$conns")
  echo
  echo "creates (wrk -t2 -c$conns -d$duration, $create_accounts enterprise accounts):"
  grep -E '^\s+(Latency|Req/Sec|[0-9]+%)|requests in|Requests/sec|Non-2xx' "$tmp/wrk.out" | sed 's/^/  /'
  json "$out"
fi

# ---- creates1: one account against 32 accounts -----------------------------
if [[ ",$parts," == *,creates1,* ]]; then
  db=scribe_lc_creates1
  fresh_db "$db"
  make_keys "$db" "$create_accounts" "$tmp/keys-creates1"
  head -1 "$tmp/keys-creates1" >"$tmp/key-one"
  start_server "$db"
  echo
  echo "creates1 ($creates1_count creates per line, Node keep-alive agent):"
  # many: all keys, 32 in flight; one: one account's key, 32 in flight; one_serial:
  # a second account's key, 1 in flight (the stream fold without the contention).
  sed -n 2p "$tmp/keys-creates1" >"$tmp/key-two"
  for variant in many one one_serial; do
    case $variant in
      many) kf=$tmp/keys-creates1; na=$create_accounts; c=$conns; m=many_accounts ;;
      one) kf=$tmp/key-one; na=1; c=$conns; m=one_account ;;
      one_serial) kf=$tmp/key-two; na=1; c=1; m=one_account_serial ;;
    esac
    cpu0=$(cpu_of "$server_pid"); pg0=$(pg_cpu)
    r=$(node "$helper" create --base "$base" --keys "$kf" --count "$creates1_count" --concurrency "$c")
    cpu1=$(cpu_of "$server_pid"); pg1=$(pg_cpu)
    per=$(awk -v s="$(sub "$cpu1" "$cpu0")" -v p="$(sub "$pg1" "$pg0")" -v n="$creates1_count" \
      'BEGIN {printf "\"server_cpu_ms_per_create\":%.2f,\"pg_cpu_ms_per_create\":%.2f", s * 1000 / n, p * 1000 / n}')
    echo "  $na account(s), $c in flight: $r"
    json "\"measure\":\"creates_$m\",\"plan\":\"enterprise\",\"accounts\":$na,$per,${r:1:-1}"
  done
  stop_pid "$server_pid"; server_pid=
fi

# ---- waiters ----------------------------------------------------------------
if [[ ",$parts," == *,waiters,* ]]; then
  db=scribe_lc_waiters
  fresh_db "$db"
  make_keys "$db" "$wait_accounts" "$tmp/keys-wait"
  start_server "$db"
  echo
  echo "waiters: $waiters concurrent /wait?timeout=$wait_timeout on $wait_transcriptions transcriptions" \
    "($wait_accounts enterprise accounts), completion by $complete"
  idle_rss=$(status_kb "$server_pid" VmRSS); idle_threads=$(status_kb "$server_pid" Threads); idle_conns=$(db_conns "$db")
  r=$(node "$helper" create --base "$base" --keys "$tmp/keys-wait" --count "$wait_transcriptions" --concurrency 16 \
    --out "$tmp/ids")
  echo "  setup creates: $r"
  json "\"measure\":\"waiters_setup_creates\",\"plan\":\"enterprise\",\"accounts\":$wait_accounts,${r:1:-1}"
  sleep 2
  before_rss=$(status_kb "$server_pid" VmRSS); before_threads=$(status_kb "$server_pid" Threads)
  before_conns=$(db_conns "$db")

  node "$helper" wait --base "$base" --ids "$tmp/ids" --waiters "$waiters" --timeout "$wait_timeout" \
    --ready "$tmp/ready" --out "$tmp/answers.json" --deadline-s "$wait_deadline" >"$tmp/wait.out" 2>&1 &
  waiter_pid=$!
  t_start=$(date +%s.%N)
  for _ in $(seq 600); do [ -f "$tmp/ready" ] && break; kill -0 "$waiter_pid" 2>/dev/null || break; sleep 0.1; done
  [ -f "$tmp/ready" ] || { echo "lifecycle.sh: the waiters were not all sent:" >&2; cat "$tmp/wait.out" >&2; exit 1; }
  t_sent=$(date +%s.%N)
  # Registered = the server has gone quiet: under 20 ms of CPU in 500 ms (at most 30 s).
  prev=$(cpu_of "$server_pid")
  for _ in $(seq 60); do
    sleep 0.5
    cur=$(cpu_of "$server_pid")
    awk -v a="$cur" -v b="$prev" 'BEGIN {exit !(a - b < 0.02)}' && break
    prev=$cur
  done
  t_quiet=$(date +%s.%N)
  c0=$(cpu_of "$server_pid"); sleep 3; c1=$(cpu_of "$server_pid")
  wait_rss=$(status_kb "$server_pid" VmRSS); wait_threads=$(status_kb "$server_pid" Threads); wait_conns=$(db_conns "$db")
  tcp_est=$(ss -Htn state established "( sport = :$port )" 2>/dev/null | wc -l)
  echo "  idle server:            VmRSS ${idle_rss} kB, Threads $idle_threads, db connections $idle_conns"
  echo "  after the creates:      VmRSS ${before_rss} kB, Threads $before_threads, db connections $before_conns"
  echo "  $waiters waiting:        VmRSS ${wait_rss} kB, Threads $wait_threads, db connections $wait_conns," \
    "server sockets $tcp_est, server CPU $(sub "$c1" "$c0") s in 3 s"
  json "\"measure\":\"waiters_held\",\"waiters\":$waiters,\"transcriptions\":$wait_transcriptions,\"idle_vmrss_kb\":$idle_rss,\"before_vmrss_kb\":$before_rss,\"waiting_vmrss_kb\":$wait_rss,\"vmrss_kb_per_waiter\":$(awk -v a="$wait_rss" -v b="$before_rss" -v n="$waiters" 'BEGIN {printf "%.2f", (a - b) / n}'),\"idle_threads\":$idle_threads,\"waiting_threads\":$wait_threads,\"idle_db_connections\":$idle_conns,\"before_db_connections\":$before_conns,\"waiting_db_connections\":$wait_conns,\"server_sockets\":$tcp_est,\"send_s\":$(sub "$t_sent" "$t_start"),\"sent_to_quiet_s\":$(sub "$t_quiet" "$t_sent"),\"server_cpu_s_in_3s_waiting\":$(sub "$c1" "$c0")"

  t_complete=$(date +%s.%N)
  if [ "$complete" = delete ]; then
    node "$helper" delete --base "$base" --ids "$tmp/ids" --concurrency 8 >"$tmp/completer.out" 2>&1 &
  else
    SCRIBE_DATABASE_URL="$pg_url/$db" SCRIBE_WORKER_SLOTS=$completer_slots SCRIBE_ALLOW_PRIVATE_URLS=1 \
      SCRIBE_WORK_DIR=$tmp/work SCRIBE_OBJECT_STORE_DIR=$tmp/objects \
      "$bin" worker --no-projectors --no-migrate >"$tmp/completer.out" 2>&1 &
  fi
  completer_pid=$!
  max_rss=$wait_rss max_threads=$wait_threads max_conns=0
  while kill -0 "$waiter_pid" 2>/dev/null; do
    v=$(status_kb "$server_pid" VmRSS); [ "$v" -gt "$max_rss" ] && max_rss=$v
    v=$(status_kb "$server_pid" Threads); [ "$v" -gt "$max_threads" ] && max_threads=$v
    v=$(db_conns "$db"); [ "$v" -gt "$max_conns" ] && max_conns=$v
    sleep 0.5
  done
  wait "$waiter_pid" 2>/dev/null || true
  waiter_pid=
  t_done=$(date +%s.%N)
  stop_pid "$completer_pid"; completer_pid=
  hwm=$(status_kb "$server_pid" VmHWM)
  psql "$pg_url/$db" -AtqF $'\t' -c "select data->>'transcription_id', round(extract(epoch from recorded_at) * 1000, 3)
      from events where type in ('TranscriptionFailed', 'TranscriptionCompleted', 'TranscriptionDeleted')" >"$tmp/events"
  failed_codes=$(psql "$pg_url/$db" -Atqc "select coalesce(json_object_agg(c, n), '{}') from (select data->'error'->>'code' c,
      count(*) n from events where type = 'TranscriptionFailed' group by 1) x")
  summary=$(cat "$tmp/wait.out")
  rep=$(node "$helper" report --answers "$tmp/answers.json" --events "$tmp/events")
  echo "  waiters' answers:       $summary"
  echo "  event to answer:        $rep"
  echo "  during completion (max, sampled every 0.5 s): VmRSS $max_rss kB (VmHWM $hwm kB), Threads $max_threads," \
    "db connections $max_conns (the completer's included)"
  json "\"measure\":\"waiters_answered\",\"complete_by\":\"$complete\",\"completer_slots\":$completer_slots,\"completer_start_to_all_answered_s\":$(sub "$t_done" "$t_complete"),\"failed_codes\":$failed_codes,\"answers\":$summary,${rep:1:-1},\"max_vmrss_kb\":$max_rss,\"vmhwm_kb\":$hwm,\"max_threads\":$max_threads,\"max_db_connections\":$max_conns"
  # The same number of connections without a request, on a fresh server (freed
  # memory is not always given back): what a connection costs by itself.
  stop_pid "$server_pid"; server_pid=""
  start_server "$db"
  sleep 2
  before_rss=$(status_kb "$server_pid" VmRSS)
  node "$helper" idle --base "$base" --connections "$waiters" --ready "$tmp/idle-ready" --hold-s 60 >"$tmp/idle.out" 2>&1 &
  idle_pid=$!
  for _ in $(seq 300); do [ -f "$tmp/idle-ready" ] && break; kill -0 "$idle_pid" 2>/dev/null || break; sleep 0.1; done
  sleep 2
  conn_rss=$(status_kb "$server_pid" VmRSS); conn_sockets=$(ss -Htn state established "( sport = :$port )" 2>/dev/null | wc -l)
  stop_pid "$idle_pid"
  for _ in $(seq 50); do [ "$(ss -Htn state established "( sport = :$port )" 2>/dev/null | wc -l)" -eq 0 ] && break; sleep 0.1; done
  sleep 1
  after_idle_rss=$(status_kb "$server_pid" VmRSS)
  echo "  $waiters idle connections: VmRSS ${conn_rss} kB (server sockets $conn_sockets); after they closed: VmRSS ${after_idle_rss} kB"
  json "\"measure\":\"idle_connections\",\"connections\":$waiters,\"server_sockets\":$conn_sockets,\"before_vmrss_kb\":$before_rss,\"connected_vmrss_kb\":$conn_rss,\"vmrss_kb_per_connection\":$(awk -v a="$conn_rss" -v b="$before_rss" -v n="$waiters" 'BEGIN {printf "%.2f", (a - b) / n}'),\"after_close_vmrss_kb\":$after_idle_rss"
  stop_pid "$server_pid"; server_pid=
fi
