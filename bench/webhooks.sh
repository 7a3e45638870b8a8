#!/usr/bin/env bash
# Webhook deliveries to a healthy HTTPS receiver on 127.0.0.1: deliveries per
# second when 1,000 queued events are drained, and the latency from an event's
# append to its arrival at the receiver (p50/p90/p99/max). The work is done by
# bench/webhooks.mjs (see its header); this script gives it a private
# PostgreSQL 15 cluster and a fresh database. Prints numbers, never asserts.
#
# Settings:
#   SCRIBE_BIN             the scribe binary                     default build/scribe
#   WEBHOOK_BENCH_PGDATA   default /tmp/whpg/data   WEBHOOK_BENCH_PG_PORT  default 55495
#   WEBHOOK_BENCH_EVENTS   events per part                       default 1000
#   WEBHOOK_BENCH_SENDERS  SCRIBE_WEBHOOK_SENDERS of the sender   default 8
#   WEBHOOK_BENCH_RATE     events appended per second (latency)  default 100
#   WEBHOOK_BENCH_PARTS    drain,latency
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
pgdata=${WEBHOOK_BENCH_PGDATA:-/tmp/whpg/data}
pg_port=${WEBHOOK_BENCH_PG_PORT:-55495}
mkdir -p "$(dirname "$pgdata")"
chmod 755 "$(dirname "$pgdata")"
scripts/pg.sh start "$pgdata" "$pg_port" >/dev/null
trap 'scripts/pg.sh stop "$pgdata" >/dev/null' EXIT
admin="postgresql://postgres@127.0.0.1:$pg_port/postgres"
psql "$admin" -q -c "drop database if exists scribe_bench_webhooks with (force)" \
  -c "create database scribe_bench_webhooks owner scribe" >/dev/null
export WEBHOOK_BENCH_DB="postgresql://scribe@127.0.0.1:$pg_port/scribe_bench_webhooks"
export SCRIBE_BIN=${SCRIBE_BIN:-build/scribe}
SCRIBE_DATABASE_URL=$WEBHOOK_BENCH_DB "$SCRIBE_BIN" migrate >/dev/null
echo "webhooks: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
node bench/webhooks.mjs
