#!/usr/bin/env bash
# GET /api/v1/me under load: starts `scribe serve` once per server setting,
# drives it with wrk and prints requests/s, p50 and p99 latency.
# Target on the 2-core reference machine: >= 3000 req/s with p99 < 20 ms.
#
#   SCRIBE_BENCH_DATABASE_URL (or SCRIBE_DATABASE_URL)  the database        required
#   SCRIBE_BIN                      the scribe binary             default build/scribe
#   SCRIBE_BENCH_HTTP_PORT          server port                   default 18099
#   SCRIBE_BENCH_HTTP_DURATION      wrk duration per setting      default 15s
#   SCRIBE_BENCH_HTTP_CONFIGS       settings "IO_THREADS:DB_POOL ..."
#                                                                 default "1:8 2:8 1:16 2:16"
#   SCRIBE_BENCH_WRK_THREADS / SCRIBE_BENCH_WRK_CONNECTIONS       default 2 / 64
#   SCRIBE_BENCH_SERVE_ARGS         extra `scribe serve` flags, e.g. "--log-level warn"
#   SCRIBE_BENCH_PGDATA             data directory of the (local) cluster: adds
#                                   PostgreSQL's CPU to the report
#   SCRIBE_BENCH_HTTP_DIAG=1        afterwards, where a request's time goes (with the best
#                                   setting): /healthz (HTTP stack without the database),
#                                   /me with --log-level warn (cost of the request log), and
#                                   pgbench replaying the request's SQL (16 clients, prepared):
#                                   as the server sends it (auth SELECT, rate-limit call,
#                                   BEGIN + 2 SELECTs + COMMIT) and merged into fewer round trips
#   PGBENCH                         pgbench binary   default /usr/lib/postgresql/15/bin/pgbench
#
# Prints a table and one JSON line per setting, beginning {"bench":"http_me".
# The server's request log goes to a temporary file (as it would in production).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=bench/bench_lib.sh
. bench/bench_lib.sh
bin=${SCRIBE_BIN:-build/scribe}
url=${SCRIBE_BENCH_DATABASE_URL:-${SCRIBE_DATABASE_URL:?set SCRIBE_BENCH_DATABASE_URL}}
port=${SCRIBE_BENCH_HTTP_PORT:-18099}
duration=${SCRIBE_BENCH_HTTP_DURATION:-15s}
configs=${SCRIBE_BENCH_HTTP_CONFIGS:-"1:8 2:8 1:16 2:16"}
wrk_threads=${SCRIBE_BENCH_WRK_THREADS:-2}
wrk_conns=${SCRIBE_BENCH_WRK_CONNECTIONS:-64}
serve_args=${SCRIBE_BENCH_SERVE_ARGS:-}
pgdata=${SCRIBE_BENCH_PGDATA:-}
http_diag=${SCRIBE_BENCH_HTTP_DIAG:-0}
pgbench=${PGBENCH:-/usr/lib/postgresql/15/bin/pgbench}
export SCRIBE_DATABASE_URL=$url

[ -x "$bin" ] || { echo "http_me.sh: no scribe binary at $bin (set SCRIBE_BIN)" >&2; exit 2; }
command -v wrk >/dev/null || { echo "http_me.sh: wrk is not installed" >&2; exit 2; }

tmp=$(mktemp -d /tmp/scribe-http-me.XXXXXX)
server_pid=
stop_server() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  server_pid=
}
cleanup() { stop_server; rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# Every process of the local cluster: the postmaster (with reaped children) and its live children.
pg_cpu() {
  if [ -z "$pgdata" ] || [ ! -r "$pgdata/postmaster.pid" ]; then
    echo -1
    return
  fi
  cluster_cpu "$pgdata"
}
xacts() { psql "$url" -Atqc "select xact_commit + xact_rollback from pg_stat_database where datname = current_database()"; }

"$bin" migrate >/dev/null 2>&1
email="bench-$(date +%s)-$$@bench.invalid"
account=$("$bin" admin account create --email "$email" --json 2>/dev/null | sed -E 's/.*"account_id":([0-9]+).*/\1/')
key=$("$bin" admin key create --account "$account" --name http-bench --json 2>/dev/null |
  sed -E 's/.*"api_key":"([^"]+)".*/\1/')
[ -n "$key" ] || { echo "http_me.sh: could not create an API key" >&2; exit 1; }

echo "GET /api/v1/me: wrk -t$wrk_threads -c$wrk_conns -d$duration --latency; account $account; $(nproc) CPUs," \
  "load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
# Starts the server with the given io-threads, db-pool and extra flags. Metrics
# are off: nothing here scrapes them, and a running server may hold port 9464.
start_server() {
  local io=$1 pool=$2 extra=$3
  rm -f "$tmp/port"
  # shellcheck disable=SC2086
  "$bin" serve --port "$port" --rate-limit 100000000 --io-threads "$io" --db-pool "$pool" \
    --port-file "$tmp/port" --metrics-addr off $extra >"$tmp/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 300); do [ -f "$tmp/port" ] && break; kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
  if [ ! -f "$tmp/port" ]; then
    echo "http_me.sh: the server did not start; its log:" >&2
    tail -20 "$tmp/server.log" >&2
    exit 1
  fi
}

# One wrk run against a running server; prints a table row and appends a JSON line.
# usage: measure LABEL IO POOL PATH
measure() {
  local label=$1 io=$2 pool=$3 path=$4
  local target="http://127.0.0.1:$port$path" status
  status=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $key" "$target")
  [ "$status" = 200 ] || { echo "http_me.sh: GET $path answered $status" >&2; exit 1; }
  wrk -t"$wrk_threads" -c"$wrk_conns" -d3s -H "Authorization: Bearer $key" "$target" >/dev/null # warm-up

  local srv0 srv1 pg0 pg1 x0 x1
  srv0=$(cpu_of "$server_pid")
  pg0=$(pg_cpu)
  x0=$(xacts)
  wrk -t"$wrk_threads" -c"$wrk_conns" -d"$duration" --latency -H "Authorization: Bearer $key" "$target" \
    >"$tmp/wrk.txt"
  srv1=$(cpu_of "$server_pid")
  pg1=$(pg_cpu)
  x1=$(xacts)

  local rps requests secs p50 p99 non2xx errors srv_cpu pg_pct pg_us srv_us xpr meets
  rps=$(awk '/^Requests\/sec:/ {print $2}' "$tmp/wrk.txt")
  requests=$(awk '/requests in/ {print $1}' "$tmp/wrk.txt")
  secs=$(awk '/requests in/ {v=$4; sub(/s,?$/, "", v); print v}' "$tmp/wrk.txt")
  p50=$(to_ms "$(awk '$1 == "50%" {print $2}' "$tmp/wrk.txt")")
  p99=$(to_ms "$(awk '$1 == "99%" {print $2}' "$tmp/wrk.txt")")
  non2xx=$(awk '/Non-2xx/ {print $NF}' "$tmp/wrk.txt")
  non2xx=${non2xx:-0}
  errors=$(awk '/Socket errors/ {print $0}' "$tmp/wrk.txt")
  srv_cpu=$(awk -v a="$srv0" -v b="$srv1" -v s="$secs" 'BEGIN {printf "%.0f%%", 100 * (b - a) / s}')
  srv_us=$(awk -v a="$srv0" -v b="$srv1" -v n="$requests" 'BEGIN {printf "%.0f", 1e6 * (b - a) / n}')
  if [ "$pg0" = -1 ]; then
    pg_pct=n/a
    pg_us=-1
  else
    pg_pct=$(awk -v a="$pg0" -v b="$pg1" -v s="$secs" 'BEGIN {printf "%.0f%%", 100 * (b - a) / s}')
    pg_us=$(awk -v a="$pg0" -v b="$pg1" -v n="$requests" 'BEGIN {printf "%.0f", 1e6 * (b - a) / n}')
  fi
  xpr=$(awk -v a="$x0" -v b="$x1" -v n="$requests" 'BEGIN {printf "%.2f", (b - a) / n}')
  printf '%-30s %9s %7s %7s %7s %7s %7s %7s %7s %8s\n' "$label" "$rps" "$p50" "$p99" "$non2xx" "$srv_cpu" \
    "$pg_pct" "$srv_us" "$pg_us" "$xpr"
  [ -n "$errors" ] && echo "    wrk: $errors"
  meets=false
  awk -v r="$rps" -v p="$p99" 'BEGIN {exit !(r >= 3000 && p < 20)}' && meets=true
  results+=("{\"bench\":\"http_me\",\"label\":\"$label\",\"path\":\"$path\",\"io_threads\":$io,\"db_pool\":$pool,\"requests\":$requests,\"seconds\":$secs,\"requests_per_s\":$rps,\"p50_ms\":$p50,\"p99_ms\":$p99,\"non_2xx\":$non2xx,\"server_cpu_us_per_request\":$srv_us,\"pg_cpu_us_per_request\":$pg_us,\"db_transactions_per_request\":$xpr,\"meets_target\":$meets}")
  last_rps=$rps
}

header() {
  printf '%-30s %9s %7s %7s %7s %7s %7s %7s %7s %8s\n' setting req/s p50-ms p99-ms non-2xx srv-cpu pg-cpu srv-us \
    pg-us xact/req
}

results=()
best=
best_io=
best_pool=
best_rps=0
header
for cfg in $configs; do
  io=${cfg%%:*}
  pool=${cfg##*:}
  start_server "$io" "$pool" "$serve_args"
  measure "--io-threads $io --db-pool $pool" "$io" "$pool" /api/v1/me
  stop_server
  if awk -v r="$last_rps" -v b="$best_rps" 'BEGIN {exit !(r > b)}'; then
    best_rps=$last_rps
    best="--io-threads $io --db-pool $pool"
    best_io=$io
    best_pool=$pool
  fi
done
echo
echo "best: $best ($best_rps req/s); target >= 3000 req/s with p99 < 20 ms"
echo "(srv-cpu / pg-cpu: CPU used by scribe serve / the PostgreSQL cluster, 100% = one core;"
echo " srv-us / pg-us: CPU microseconds per"
echo " request of scribe serve / of the whole PostgreSQL cluster; xact/req: database transactions"
echo " per request, from pg_stat_database)"

if [ "$http_diag" = 1 ]; then
  echo
  echo "diagnostics, with $best:"
  header
  start_server "$best_io" "$best_pool" "$serve_args"
  measure "/healthz (no database)" "$best_io" "$best_pool" /healthz
  stop_server
  start_server "$best_io" "$best_pool" "$serve_args --log-level warn"
  measure "/me, --log-level warn" "$best_io" "$best_pool" /api/v1/me
  stop_server

  # The request's SQL without HTTP, replayed by pgbench. (pgbench reads ":name" as a
  # variable, so the to_char formats here avoid colons; the cost is the same.)
  key_id=$(psql "$url" -Atqc "select id from api_keys where account_id = $account order by id desc limit 1")
  hash=$(psql "$url" -Atqc "select key_hash from api_keys where id = $key_id")
  auth="select id, account_id, key_hash, permission, monthly_cap_micros, to_char(expires_at at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24\"h\"MI\"m\"SS.US\"Z\"'), revoked_at is not null, expires_at is not null and expires_at <= now(), key_prefix from api_keys where key_hash = :hash;"
  limit="select scribe_rate_limit_take('key:' || :kid, 100000000, 60000);"
  me_account="select email, plan, balance_micros from accounts where id = :acc;"
  me_key="select k.name, coalesce(s.settled_micros, 0) + coalesce(s.held_micros, 0), to_char(k.created_at at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24\"h\"MI\"m\"SS.MS\"Z\"') from api_keys k left join key_monthly_spend s on s.key_id = k.id and s.month = date_trunc('month', now() at time zone 'UTC')::date where k.id = :kid;"
  me_joined="select a.email, a.plan, a.balance_micros, k.name, coalesce(s.settled_micros, 0) + coalesce(s.held_micros, 0), to_char(k.created_at at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24\"h\"MI\"m\"SS.MS\"Z\"') from accounts a join api_keys k on k.account_id = a.id left join key_monthly_spend s on s.key_id = k.id and s.month = date_trunc('month', now() at time zone 'UTC')::date where a.id = :acc and k.id = :kid;"
  one="select k.id, k.account_id, k.key_hash, k.permission, k.monthly_cap_micros, to_char(k.expires_at at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24\"h\"MI\"m\"SS.US\"Z\"'), k.revoked_at is not null, k.expires_at is not null and k.expires_at <= now(), k.key_prefix, a.email, a.plan, a.balance_micros, k.name, coalesce(s.settled_micros, 0) + coalesce(s.held_micros, 0), to_char(k.created_at at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24\"h\"MI\"m\"SS.MS\"Z\"'), scribe_rate_limit_take('key:' || k.id, 100000000, 60000) from api_keys k join accounts a on a.id = k.account_id left join key_monthly_spend s on s.key_id = k.id and s.month = date_trunc('month', now() at time zone 'UTC')::date where k.key_hash = :hash;"
  printf '%s\n' "$auth" >"$tmp/q-auth.sql"
  printf '%s\n' "$limit" >"$tmp/q-limit.sql"
  printf '%s\n' "begin;" "set transaction read only;" "$me_account" "$me_key" "commit;" >"$tmp/q-me.sql"
  printf '%s\n' "$auth" "$limit" "begin;" "set transaction read only;" "$me_account" "$me_key" "commit;" \
    >"$tmp/q-request.sql"
  printf '%s\n' "$auth" "$limit" "$me_joined" >"$tmp/q-three.sql"
  printf '%s\n' "$one" >"$tmp/q-one.sql"
  # The limiter's allowed path as one statement instead of a PL/pgSQL function running three
  # (same table, same bucket, same GCRA arithmetic; a refusal would return no row).
  step="make_interval(secs => 60.0 / 100000000)"
  printf '%s\n' "insert into rate_limits as r (bucket, tat) values ('key:' || :kid, clock_timestamp() + $step) on conflict (bucket) do update set tat = greatest(r.tat, clock_timestamp()) + $step where greatest(r.tat, clock_timestamp()) + $step - clock_timestamp() <= make_interval(secs => 60.0) returning 0;" \
    >"$tmp/q-limit1.sql"
  echo
  printf '%-62s %8s %10s %12s\n' "pgbench, 16 clients, -M prepared" tps latency pg-us/txn
  for q in "auth SELECT only:q-auth:1" "rate-limit call only:q-limit:1" "/me transaction only (4 round trips):q-me:4" \
    "whole request as sent (6 round trips):q-request:6" "auth + limit + one joined /me SELECT (3 round trips):q-three:3" \
    "all in one statement (1 round trip):q-one:1" "rate limit as one upsert statement:q-limit1:1"; do
    IFS=: read -r what file trips <<<"$q"
    pg0=$(pg_cpu)
    "$pgbench" -n -M prepared -c 16 -j 2 -T 8 -D hash="$hash" -D kid="$key_id" -D acc="$account" \
      -f "$tmp/$file.sql" "$url" >"$tmp/pgbench.out" 2>&1 || { cat "$tmp/pgbench.out" >&2; exit 1; }
    pg1=$(pg_cpu)
    tps=$(awk '/^tps = / {printf "%.0f", $3}' "$tmp/pgbench.out")
    lat=$(awk '/^latency average/ {print $4 " ms"}' "$tmp/pgbench.out")
    txns=$(awk '/number of transactions actually processed/ {print $NF}' "$tmp/pgbench.out")
    us=-1
    [ "$pg0" != -1 ] && us=$(awk -v a="$pg0" -v b="$pg1" -v n="$txns" 'BEGIN {printf "%.0f", 1e6 * (b - a) / n}')
    printf '%-62s %8s %10s %12s\n' "$what" "$tps" "$lat" "$us"
    results+=("{\"bench\":\"http_me_sql\",\"script\":\"$file\",\"round_trips\":$trips,\"tps\":$tps,\"pg_cpu_us_per_txn\":$us}")
  done
fi

echo
printf '%s\n' "${results[@]}"
