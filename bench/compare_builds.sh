#!/usr/bin/env bash
# Before/after: runs the same benchmarks from two build directories, one
# right after the other on the same private PostgreSQL, so that a change is
# judged against a reference measured in the same run (a refactoring must
# not make any figure worse). Each round runs A then B; several rounds show
# the noise of a shared machine.
#   bench/compare_builds.sh BUILD_A BUILD_B [ROUNDS]
# Per round and build: bench/run.sh (pgbench, appends, rebuild, GET /me),
# exports_benchmark and search_benchmark (both against the cluster).
# Build each directory with -DSCRIBE_BENCH=ON first (for an older commit:
# git worktree add /tmp/before REV && cmake -S /tmp/before -B /tmp/before/build
# -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo && ninja -C /tmp/before/build).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=bench/bench_lib.sh
. bench/bench_lib.sh
[ $# -ge 2 ] || { echo "usage: $0 BUILD_A BUILD_B [ROUNDS]" >&2; exit 2; }
a=$(cd "$1" && pwd); b=$(cd "$2" && pwd); rounds=${3:-1}
port=${SCRIBE_BENCH_PG_PORT:-55473}
machine_line
tmp=$(mktemp -d /tmp/scribe-compare.XXXXXX)
chmod 755 "$tmp"
cleanup() { scripts/pg.sh stop "$tmp/pg" || true; rm -rf "$tmp"; }
trap cleanup EXIT
scripts/pg.sh start "$tmp/pg" "$port" >/dev/null
url=$(scripts/pg.sh url "$port")
for round in $(seq 1 "$rounds"); do
  for build in "$a" "$b"; do
    printf '\n######## round %s: %s (load %s)\n' "$round" "$build" "$(cut -d' ' -f1-3 /proc/loadavg)"
    SCRIBE_BENCH_BUILD_DIR=$build SCRIBE_BENCH_DIAG=0 SCRIBE_BENCH_REBUILD_DIAG=0 \
      SCRIBE_BENCH_PG_PORT=$((port + 1)) bench/run.sh
    SCRIBE_BENCH_DATABASE_URL=$url "$build/exports_benchmark"
    SCRIBE_BENCH_DATABASE_URL=$url SCRIBE_BENCH_SEARCH_RUNS=20 "$build/search_benchmark"
  done
done
