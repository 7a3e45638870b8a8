#!/usr/bin/env bash
# Installs, builds and runs every test against a throwaway PostgreSQL:
#   1. unit and integration tests (GoogleTest) under AddressSanitizer +
#      UndefinedBehaviorSanitizer (every test; the release build is only the
#      server the end-to-end tests run, so its test binaries are not built:
#      they cost a third of the release compile and ran the same tests);
#   3. end-to-end tests: the real server over HTTP with curl and npm clients,
#      the files that share nothing several at a time (each against its own
#      database and server), then the files that kill processes or measure
#      time one at a time.
# Prints a table of every stage's wall time at the end, also when it fails.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
source scripts/stages.sh

# Every stage runs (so one failure does not hide another); the command fails
# at the end if any did. The checks and builds stop it at once: nothing after
# them could run.
status=0
passed=0 failed=0
must() { stage "$@" || { echo "stage '$1' failed" >&2; exit 1; }; }

# ccache's hits and misses over this run (its counters are machine-wide).
ccache_counts() {
  command -v ccache >/dev/null || { echo "0 0"; return; }
  ccache --print-stats 2>/dev/null | awk '$1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" { h += $2 }
    $1 == "cache_miss" { m += $2 } END { print h + 0, m + 0 }'
}
read -r ccache_hits0 ccache_misses0 < <(ccache_counts)

pgdir=""
cleanup() {
  [ -n "$pgdir" ] && { scripts/pg.sh stop "$pgdir/data"; scripts/pg.sh stop "$pgdir/data2"; rm -rf "$pgdir"; }
  read -r h m < <(ccache_counts)
  # Kept beside the compiler cache, outside the clone, so the figures of a CI
  # run (whose output is not kept when it passes) can be read afterwards.
  local log=${SCRIBE_STAGE_LOG:-${XDG_CACHE_HOME:-$HOME/.cache}/scribe/stage-tables.log}
  mkdir -p "$(dirname "$log")" 2>/dev/null
  {
    stage_table
    echo "ccache this run: $((h - ccache_hits0)) hits, $((m - ccache_misses0)) misses; load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "tests: $passed passed, $failed failed"
  } | { tee -a "$log" 2>/dev/null || cat; }
  { echo "-- $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null) $(pwd) nproc=$(nproc)"; echo; } >>"$log" 2>/dev/null
}
trap cleanup EXIT

must install scripts/install_deps.sh
# Layers only point down (the order is in the script and README).
must "check layers" scripts/check_layers.sh
# One style, .clang-format's.
must "check format" scripts/check_format.sh
# Only what the tests run: the release server for the end-to-end tests, and
# the server, the unit and the database tests under the sanitizers (the
# benchmarks are built by `scripts/build.sh release` with no target).
test_targets=(scribe unit_tests pg_tests)
must "build release" scripts/build.sh release scribe
# The web console the server hosts at /app (skipped when dist/ is up to date).
must "build console" scripts/console.sh
# The settings table in docs/ is the one the binary prints from its declaration.
must "check settings doc" scripts/check_settings_doc.sh build/scribe

pgdir=$(mktemp -d /tmp/scribe-test-pg.XXXXXX)
# The cluster runs as the postgres user when we are root: it must reach its directory.
chmod 755 "$pgdir"
port=${SCRIBE_TEST_PG_PORT:-55432}
must "postgres start" scripts/pg.sh start "$pgdir/data" "$port"
# A second cluster for the second shard of the database tests: readers of the
# event log read below the cluster-wide oldest running transaction, so a shard
# on the same cluster would hold back what the other's tests read.
must "postgres start (second)" scripts/pg.sh start "$pgdir/data2" "$((port + 1))"
export SCRIBE_TEST_ADMIN_URL="postgresql://postgres@127.0.0.1:$port/postgres"
# db_url NAME [PORT], fresh_db NAME [PORT]: a database on the first cluster
# unless another port is named.
db_url() { echo "postgresql://scribe@127.0.0.1:${2:-$port}/$1"; }
fresh_db() {
  PGOPTIONS='-c client_min_messages=warning' psql "postgresql://postgres@127.0.0.1:${2:-$port}/postgres" -q \
    -v ON_ERROR_STOP=1 -c "drop database if exists $1 with (force)" -c "create database $1 owner scribe" >/dev/null
}

# GoogleTest binaries: the unit tests in three shards and the database tests
# in two, all five at once on the two cores. One binary after the other left
# a core idle while the slower shard finished (one unit test, enrich of a
# 12-hour transcript, is a third of its shard); five at once keep both busy
# until the end. Database shard i uses cluster i.
gtests() {
  local dir=$root/$1 db=$2 bin=$3 rc=0 pids=() logs=() i name shards log
  for name in unit_tests pg_tests; do
    shards=2
    [ "$name" = unit_tests ] && shards=3
    for ((i = 0; i < shards; i++)); do
      log="$dir/$name.shard$i.log"
      [ "$name" = pg_tests ] && fresh_db "$db" $((port + i))
      (cd "$dir" && GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i \
        SCRIBE_TEST_DATABASE_URL=$(db_url "$db" $((port + i % 2))) SCRIBE_BIN="$bin" "./$name" --gtest_brief=1 \
        >"$log" 2>&1) &
      pids+=($!) logs+=("$log")
    done
  done
  for i in "${!pids[@]}"; do
    if wait "${pids[$i]}"; then tail -n 2 "${logs[$i]}"; else rc=1; cat "${logs[$i]}"; fi
    count_gtest "${logs[$i]}"
  done
  return $rc
}

count_gtest() {
  local p f
  p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\?\..*/\1/p' "$1" | tail -1)
  f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) tests\?, listed below.*/\1/p' "$1" | tail -1)
  # A shard that crashed before its summary counts as one failure.
  [ -z "$p" ] && [ -z "$f" ] && f=1
  passed=$((passed + ${p:-0})) failed=$((failed + ${f:-0}))
}

must "build asan" scripts/build.sh asan "${test_targets[@]}"

echo "== unit and integration tests (AddressSanitizer + UBSan)"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
stage "unit+database tests (asan)" gtests build-asan scribe_asan "$root/build-asan/scribe" || status=1
unset ASAN_OPTIONS UBSAN_OPTIONS

echo "== end-to-end tests"
# The MCP clients need Node 20+: where the system's is older, the one
# scripts/install_deps.sh put in .tools/node runs the end-to-end tests.
if [ "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)" -lt 20 ]; then
  export PATH="$root/.tools/node/node_modules/.bin:$PATH"
fi
export SCRIBE_BIN="$root/build/scribe"
# Every e2e file copies its own database from this migrated template.
fresh_db scribe_template
must "migrate template" env SCRIBE_DATABASE_URL="$(db_url scribe_template)" SCRIBE_LOG_LEVEL=warn build/scribe migrate
export SCRIBE_TEST_DATABASE_URL=$(db_url scribe) SCRIBE_TEST_TEMPLATE_DB=scribe_template
export SCRIBE_E2E_MEDIA_CACHE=$(mktemp -d /tmp/scribe-e2e-media.XXXXXX)
export SCRIBE_E2E_TIMES="$pgdir/e2e-times"

# Files that kill processes, depend on timing (ratelimit: a refilling window;
# realtime: streams paced at real time, heartbeats, idle and stale windows)
# or render CPU-heavy video run alone; every other file runs with others.
serial=()
for name in clips_kill realtime_kill reliability clips hardening_outputs ratelimit realtime realtime_backpressure \
  realtime_assemblyai; do
  [ -f "tests/e2e/$name.test.mjs" ] && serial+=("$name")
done
# The longest files start first, so the stage is not left waiting on one of
# them at its end (measured: ask and pipeline take the longest).
slow_first=(ask pipeline billing mcp outputs openai_compat enrichment webhooks)
concurrent=()
for name in "${slow_first[@]}"; do [ -f "tests/e2e/$name.test.mjs" ] && concurrent+=("$name.test.mjs"); done
for f in tests/e2e/*.test.mjs; do
  name=$(basename "$f" .test.mjs)
  [[ " ${serial[*]} ${slow_first[*]} " == *" $name "* ]] || concurrent+=("$name.test.mjs")
done
stage "e2e, ${SCRIBE_E2E_JOBS:-3} files at a time" bash scripts/e2e.sh "${SCRIBE_E2E_JOBS:-3}" "${concurrent[@]}" || status=1
stage "e2e, one file at a time" bash scripts/e2e.sh 1 "${serial[@]/%/.test.mjs}" || status=1
while read -r name secs rc p f; do
  stage_record "  e2e $name" "$secs" "$rc"
  passed=$((passed + p)) failed=$((failed + f))
done < <(cat "$SCRIBE_E2E_TIMES" 2>/dev/null)
rm -rf "$SCRIBE_E2E_MEDIA_CACHE"

exit $status
