#!/usr/bin/env bash
# Installs, builds and runs scribe on this machine: a private PostgreSQL under
# the data directory, migrations, a demo account with wallet credit, a
# full-access key and a password for the web console (both printed once),
# the web console's build, then the server on 127.0.0.1:8080 (the console at
# /app).
#   SCRIBE_DATA_DIR (default ./data)  SCRIBE_PG_PORT (default 5433)  SCRIBE_PORT (default 8080)
set -euo pipefail
cd "$(dirname "$0")/.."
data=$(realpath -m "${SCRIBE_DATA_DIR:-data}")
pg_port=${SCRIBE_PG_PORT:-5433}

SCRIBE_SKIP_NPM=1 scripts/install_deps.sh
scripts/build.sh release scribe  # the service; benchmarks: scripts/build.sh release (every target)
scripts/console.sh               # the web console (console/dist), served at /app
mkdir -p "$data"
scripts/pg.sh start "$data/postgres" "$pg_port"
export SCRIBE_DATABASE_URL=${SCRIBE_DATABASE_URL:-$(scripts/pg.sh url "$pg_port")}
# Transcripts and other stored objects live beside the database.
export SCRIBE_OBJECT_STORE_DIR=${SCRIBE_OBJECT_STORE_DIR:-$data/objects}
bin=build/scribe
$bin migrate

if [ ! -f "$data/demo-account" ]; then
  account=$($bin admin account create --email demo@scribe.local --plan free --balance-usd 25 --json \
    | sed -E 's/.*"account_id":([0-9]+).*/\1/')
  created=$($bin admin key create --account "$account" --name demo --permission full --json | tail -1)
  key=$(sed -E 's/.*"api_key":"([^"]+)".*/\1/' <<<"$created")
  key_id=$(sed -E 's/.*"key_id":([0-9]+).*/\1/' <<<"$created")
  # Realtime (internal beta) is granted per key, and per account for the console.
  $bin admin realtime grant --key "$key_id" --json >/dev/null
  $bin admin realtime grant --account "$account" --json >/dev/null
  echo "$account" > "$data/demo-account"
  cat <<MSG

  demo account $account with 25.00 USD of wallet credit
  demo API key (shown once, only its SHA-256 is stored):

      $key

  try:  curl -H "Authorization: Bearer $key" http://127.0.0.1:${SCRIBE_PORT:-8080}/api/v1/me

MSG
else
  account=$(cat "$data/demo-account")
  echo "demo account $account exists; its key was printed on the first run."
  echo "new key: SCRIBE_DATABASE_URL=$SCRIBE_DATABASE_URL $bin admin key create --account $account"
fi
# The web console's sign-in: a generated password, set once (also for a data
# directory made before the console existed) and printed once.
console_url=http://127.0.0.1:${SCRIBE_PORT:-8080}/app
if [ ! -f "$data/demo-password-set" ]; then
  password=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
  $bin admin set-password --email demo@scribe.local <<<"$password" >/dev/null
  touch "$data/demo-password-set"
  cat <<MSG
  web console: $console_url
  sign in as demo@scribe.local with password $password
  (shown once; another: $bin admin set-password --email demo@scribe.local)

MSG
else
  echo "web console: $console_url (sign in as demo@scribe.local; its password was printed on the first run)"
fi
exec $bin serve --host 127.0.0.1 --port "${SCRIBE_PORT:-8080}"
