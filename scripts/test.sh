#!/usr/bin/env bash
# Installs, builds and runs every test against a throwaway PostgreSQL:
#   1. unit and integration tests (GoogleTest via ctest), release build;
#   2. the same under AddressSanitizer + UndefinedBehaviorSanitizer;
#   3. end-to-end tests: the real server over HTTP with curl and npm clients.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

scripts/install_deps.sh
# Layers only point down (the order is in the script and README).
scripts/check_layers.sh
# One style, .clang-format's.
scripts/check_format.sh
scripts/build.sh release
# The settings table in docs/ is the one the binary prints from its declaration.
scripts/check_settings_doc.sh build/scribe
scripts/build.sh asan

pgdir=$(mktemp -d /tmp/scribe-test-pg.XXXXXX)
# The cluster runs as the postgres user when we are root: it must reach its directory.
chmod 755 "$pgdir"
port=${SCRIBE_TEST_PG_PORT:-55432}
cleanup() { scripts/pg.sh stop "$pgdir/data"; rm -rf "$pgdir"; }
trap cleanup EXIT
scripts/pg.sh start "$pgdir/data" "$port"
export SCRIBE_TEST_DATABASE_URL=$(scripts/pg.sh url "$port")
export SCRIBE_TEST_ADMIN_URL="postgresql://postgres@127.0.0.1:$port/postgres"
export SCRIBE_BIN="$root/build/scribe"

fresh_db() {
  psql "$SCRIBE_TEST_ADMIN_URL" -q -v ON_ERROR_STOP=1 -c "drop database if exists scribe with (force)" \
    -c "create database scribe owner scribe" >/dev/null
}

status=0
echo "== unit and integration tests (release)"
fresh_db
(cd build && ctest --output-on-failure) || status=1

echo "== unit and integration tests (AddressSanitizer + UBSan)"
fresh_db
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  SCRIBE_BIN="$root/build-asan/scribe" ctest --output-on-failure) || status=1

echo "== end-to-end tests"
# The MCP clients need Node 20+: where the system's is older, the one
# scripts/install_deps.sh put in .tools/node runs the end-to-end tests.
if [ "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)" -lt 20 ]; then
  export PATH="$root/.tools/node/node_modules/.bin:$PATH"
fi
fresh_db
(cd tests/e2e && node --test --test-concurrency=1 ./*.test.mjs) || status=1

exit $status
