#!/usr/bin/env bash
# Runs every benchmark against a private PostgreSQL 15 cluster, stopped at the end:
#   1. pgbench, 32 clients each inserting one row per transaction into a plain table
#      (the database's own commit rate on this machine), beside the 32-writer,
#      single-event result of event_append_benchmark;
#   2. event_append_benchmark (grouped and own-transaction appends, 1/8/32 writers x 1/100
#      events per append);
#   3. projection_rebuild_benchmark (1,000,000 events);
#   4. bench/http_me.sh (GET /api/v1/me under wrk);
#   5. only when asked (SCRIBE_BENCH_ONLY=ttr): bench/time_to_result.sh, create-to-completed
#      of a 60 s upload through `scribe serve` (its own cluster on TTR_PG_PORT, 55497).
# It starts with the machine line (CPU model, cores, load average, kernel; bench_lib.sh).
#
#   SCRIBE_BENCH_BUILD_DIR   build directory with the benchmarks and scribe   default build
#                            (cmake -S . -B build -G Ninja -DSCRIBE_BENCH=ON && ninja -C build)
#   SCRIBE_BENCH_PG_PORT     port of the private cluster                       default 55471
#   SCRIBE_BENCH_ONLY        subset to run, e.g. "append rebuild", or "ttr"   default "append rebuild http"
#   SCRIBE_BENCH_DIAG        1: also the diagnostic runs (pgbench with a NOTIFY trigger, pgbench
#                            inserting one row straight into `events`, pgbench calling
#                            scribe_append_stream, with and without BEGIN/COMMIT around it, and
#                            http_me.sh's SCRIBE_BENCH_HTTP_DIAG)                      default 1
#   PGBENCH_SECONDS          pgbench duration                                  default 10
# and the variables of each benchmark (SCRIBE_BENCH_SECONDS, SCRIBE_BENCH_REBUILD_EVENTS,
# SCRIBE_BENCH_HTTP_DURATION, ...; see their headers).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=bench/bench_lib.sh
. bench/bench_lib.sh
machine_line
build=${SCRIBE_BENCH_BUILD_DIR:-build}
port=${SCRIBE_BENCH_PG_PORT:-55471}
only=${SCRIBE_BENCH_ONLY:-"append rebuild http"}
diag=${SCRIBE_BENCH_DIAG:-1}
pgbench_seconds=${PGBENCH_SECONDS:-10}
PGBIN=/usr/lib/postgresql/15/bin

for exe in event_append_benchmark projection_rebuild_benchmark scribe; do
  [ -x "$build/$exe" ] || {
    echo "run.sh: $build/$exe is missing; build first:" >&2
    echo "  cmake -S . -B $build -G Ninja -DSCRIBE_BENCH=ON && ninja -C $build" >&2
    exit 2
  }
done
build=$(cd "$build" && pwd)

tmp=$(mktemp -d /tmp/scribe-bench.XXXXXX)
chmod 755 "$tmp" # the cluster runs as 'postgres' when we are root
cleanup() {
  scripts/pg.sh stop "$tmp/pg" || true
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

has() { [[ " $only " == *" $1 "* ]]; }
section() { printf '\n==== %s ====\n\n' "$*"; }

scripts/pg.sh start "$tmp/pg" "$port"
url=$(scripts/pg.sh url "$port")
admin_psql() { psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 -Atq "$@"; }
echo "PostgreSQL $(admin_psql -c 'show server_version') at $url (data $tmp/pg); $(nproc) CPUs;" \
  "load average $(cut -d' ' -f1-3 /proc/loadavg)"

# pgbench: tps of the 1-row-insert transaction script given as $1, in database $2.
pgbench_tps() {
  "$PGBIN/pgbench" -h 127.0.0.1 -p "$port" -U scribe -n -c 32 -j 2 -T "$pgbench_seconds" -f "$1" "$2" \
    >"$tmp/pgbench.out" 2>&1 || { cat "$tmp/pgbench.out" >&2; return 1; }
  awk '/^tps = / {printf "%.0f", $3}' "$tmp/pgbench.out"
  awk '/^latency average/ {printf " %s\n", $4}' "$tmp/pgbench.out"
}

if has append; then
  section "pgbench: 32 clients, one 1-row INSERT per transaction"
  admin_psql -c "create database pgbench_insert owner scribe"
  psql "${url%/*}/pgbench_insert" -v ON_ERROR_STOP=1 -q <<'SQL'
create table plain_insert (id bigserial primary key, stream text not null, payload jsonb not null,
                           created_at timestamptz not null default now());
create table notify_insert (like plain_insert including all);
create function bench_notify() returns trigger language plpgsql as
  $$ begin perform pg_notify('bench_events', ''); return null; end; $$;
create trigger notify_insert_notify after insert on notify_insert
  for each statement execute function bench_notify();
SQL
  cat >"$tmp/plain.sql" <<'SQL'
insert into plain_insert(stream, payload) values ('s-' || :client_id, '{"account_id": 1, "amount_micros": 1000000, "reference": "pgbench"}');
SQL
  sed 's/plain_insert/notify_insert/' "$tmp/plain.sql" >"$tmp/notify.sql"
  read -r pg_plain pg_plain_lat < <(pgbench_tps "$tmp/plain.sql" pgbench_insert)
  echo "plain INSERT:                       $pg_plain tps (latency average $pg_plain_lat ms)"
  if [ "$diag" = 1 ]; then
    read -r pg_notify pg_notify_lat < <(pgbench_tps "$tmp/notify.sql" pgbench_insert)
    echo "INSERT + statement NOTIFY trigger:  $pg_notify tps (latency average $pg_notify_lat ms)   [diagnostic]"
  fi

  section "event_append_benchmark"
  SCRIBE_BENCH_DATABASE_URL=$url "$build/event_append_benchmark" 2> >(grep -v '"migration applied"' >&2) |
    tee "$tmp/append.out"
  row32() { grep '^{"appends"' "$tmp/append.out" | grep '"events_per_append":1,' | grep -E '"writers":32[,}]' |
    grep "\"path\":\"$1\"" || true; }
  append32=$(row32 grouped | sed -E 's/.*"appends_per_s":([0-9.]+).*/\1/' | awk '{printf "%.0f", $1}')
  append32_p99=$(row32 grouped | sed -E 's/.*"p99_ms":([0-9.]+).*/\1/' | awk '{printf "%.1f", $1}')
  append32_tx=$(row32 transaction | sed -E 's/.*"appends_per_s":([0-9.]+).*/\1/' | awk '{printf "%.0f", $1}')

  if [ "$diag" = 1 ]; then
    section "diagnostics: where an append's time goes (32 writers, 1 event)"
    # Where an append's time goes: the events table itself (its three indexes),
    # then the append function (advisory lock, version check, insert) in one
    # autocommit round trip, then with the BEGIN and COMMIT round trips that
    # EventStore::append in a pqxx::work adds.
    cat >"$tmp/raw.sql" <<'SQL'
\set v random(1, 1000000000000000)
insert into events (stream_id, version, type, data, metadata) values ('pgbench-raw-' || :client_id || '-' || :v, 1, 'WalletDeposited', '{"account_id": 1, "amount_micros": 1000000, "reference": "pgbench"}', '{}');
SQL
    cat >"$tmp/append.sql" <<'SQL'
select * from scribe_append_stream('pgbench-' || :client_id, -2, '[{"type": "WalletDeposited", "data": {"account_id": 1, "amount_micros": 1000000, "reference": "pgbench"}, "metadata": {}}]');
SQL
    { echo 'begin;'; sed 's/pgbench-/pgbench-tx-/' "$tmp/append.sql"; echo 'commit;'; } >"$tmp/append_tx.sql"
    read -r pg_raw pg_raw_lat < <(pgbench_tps "$tmp/raw.sql" scribe)
    echo "pgbench, 1-row INSERT into events:                 $pg_raw tps (latency average $pg_raw_lat ms)"
    read -r pg_append pg_append_lat < <(pgbench_tps "$tmp/append.sql" scribe)
    echo "pgbench calling scribe_append_stream (no C++ client):  $pg_append tps (latency average $pg_append_lat ms)"
    read -r pg_append_tx pg_append_tx_lat < <(pgbench_tps "$tmp/append_tx.sql" scribe)
    echo "pgbench, same inside BEGIN/COMMIT:                 $pg_append_tx tps (latency average $pg_append_tx_lat ms)"
    read -r pg_plain2 pg_plain2_lat < <(pgbench_tps "$tmp/plain.sql" pgbench_insert)
    echo "plain INSERT again:                                $pg_plain2 tps (latency average $pg_plain2_lat ms)"
  fi

  section "side by side: 32 concurrent writers, one row/event per transaction"
  printf '%-58s %10s\n' "pgbench, plain INSERT" "$pg_plain tps"
  [ "$diag" = 1 ] && printf '%-58s %10s\n' "pgbench, INSERT + NOTIFY trigger (diagnostic)" "$pg_notify tps"
  [ "$diag" = 1 ] && printf '%-58s %10s\n' "pgbench, 1-row INSERT into events (diagnostic)" "$pg_raw tps"
  [ "$diag" = 1 ] && printf '%-58s %10s\n' "pgbench, select scribe_append_stream(...) (diagnostic)" "$pg_append tps"
  [ "$diag" = 1 ] && printf '%-58s %10s\n' "pgbench, same in BEGIN/COMMIT (diagnostic)" "$pg_append_tx tps"
  [ "$diag" = 1 ] && printf '%-58s %10s\n' "pgbench, plain INSERT again, after the diagnostics" "$pg_plain2 tps"
  printf '%-58s %10s\n' "event_append_benchmark, 32 writers x 1 event, grouped (p99 ${append32_p99} ms)" "$append32 appends/s"
  printf '%-58s %10s\n' "event_append_benchmark, 32 writers x 1 event, own transaction" "${append32_tx:-?} appends/s"
  ratio=$(awk -v a="$append32" -v p="$pg_plain" 'BEGIN {printf "%.0f", 100 * a / p}')
  ratio_tx=$(awk -v a="${append32_tx:-0}" -v p="$pg_plain" 'BEGIN {printf "%.0f", 100 * a / p}')
  echo "32 x 1 appends / plain INSERT: grouped $ratio% (target 70%), own transaction $ratio_tx%"
  if [ "$diag" = 1 ]; then
    # The plain INSERT's own rate moves by 10-25% between its two runs; the
    # ratio to their mean is the one least at the mercy of that.
    ratio_mean=$(awk -v a="$append32" -v p="$pg_plain" -v q="$pg_plain2" 'BEGIN {printf "%.0f", 200 * a / (p + q)}')
    echo "grouped / mean of the two plain INSERT runs ($pg_plain, $pg_plain2 tps): $ratio_mean%"
  fi
  echo "{\"bench\":\"pgbench_compare\",\"pgbench_insert_tps\":$pg_plain,\"pgbench_insert_notify_tps\":${pg_notify:-null},\"pgbench_scribe_append_tps\":${pg_append:-null},\"pgbench_events_insert_tps\":${pg_raw:-null},\"pgbench_scribe_append_tx_tps\":${pg_append_tx:-null},\"append_32x1_appends_per_s\":$append32,\"append_vs_insert_percent\":$ratio,\"append_32x1_own_transaction_appends_per_s\":${append32_tx:-null},\"own_transaction_vs_insert_percent\":$ratio_tx,\"append_vs_mean_insert_percent\":${ratio_mean:-null}}"
fi

if has rebuild; then
  section "projection_rebuild_benchmark"
  SCRIBE_BENCH_DATABASE_URL=$url "$build/projection_rebuild_benchmark" 2> >(grep -v '"migration applied"' >&2)
fi

if has http; then
  section "http_me.sh"
  SCRIBE_BIN=$build/scribe SCRIBE_BENCH_DATABASE_URL=$url SCRIBE_BENCH_PGDATA=$tmp/pg \
    SCRIBE_BENCH_HTTP_DIAG=${SCRIBE_BENCH_HTTP_DIAG:-$diag} bench/http_me.sh
fi

if has ttr; then
  section "time_to_result.sh"
  SCRIBE_BIN=$build/scribe bench/time_to_result.sh
fi
