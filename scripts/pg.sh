#!/usr/bin/env bash
# A private PostgreSQL 15 cluster under a data directory, on a local port.
#   scripts/pg.sh start DIR PORT   initdb if needed, start, create role and database 'scribe'
#   scripts/pg.sh stop DIR
#   scripts/pg.sh url PORT          prints the connection URL
# PostgreSQL refuses to run as root, so as root the cluster belongs to the
# 'postgres' system user (created by the Debian package).
set -euo pipefail
PGBIN=/usr/lib/postgresql/15/bin
cmd=${1:?usage: pg.sh start|stop|url ...}

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$cmd" in
  start)
    dir=$(realpath -m "${2:?data directory}"); port=${3:?port}
    mkdir -p "$dir"
    [ "$(id -u)" -eq 0 ] && chown postgres: "$dir" && chmod 700 "$dir"
    if [ ! -f "$dir/PG_VERSION" ]; then
      as_owner "$PGBIN/initdb" -D "$dir" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >/dev/null
    fi
    if ! as_owner "$PGBIN/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
      as_owner "$PGBIN/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 60 \
        -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=300 -c shared_buffers=256MB -c fsync=on" start >/dev/null
    fi
    psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 -q <<SQL >/dev/null
select 'create role scribe login createdb' where not exists (select 1 from pg_roles where rolname = 'scribe') \gexec
select 'create database scribe owner scribe' where not exists (select 1 from pg_database where datname = 'scribe') \gexec
SQL
    ;;
  stop)
    dir=$(realpath -m "${2:?data directory}")
    [ -f "$dir/PG_VERSION" ] && as_owner "$PGBIN/pg_ctl" -D "$dir" -m fast -w stop >/dev/null 2>&1 || true
    ;;
  url)
    echo "postgresql://scribe@127.0.0.1:${2:?port}/scribe"
    ;;
  *) echo "unknown command $cmd" >&2; exit 2 ;;
esac
