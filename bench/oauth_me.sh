#!/usr/bin/env bash
# GET /api/v1/me with an OAuth access token against an API key (issue 31):
# one `scribe serve`, one account, the two credentials driven by wrk at the
# same connection count, alternating in one run so a drift in the machine's
# load is shared. Prints throughput and p99 latency of each run, the medians
# of each credential and their ratios (target: the token within 10% of the
# key's throughput and p99). Prints numbers, never asserts them.
#
# The token is obtained as an app obtains one (bench/oauth_me.mjs: Dynamic
# Client Registration, /oauth/authorize with PKCE and the sign-in and consent
# forms, /oauth/token), for the resource {base}.
#
# Setup: a private PostgreSQL (scripts/pg.sh, port OM_PG_PORT, stopped on
# exit), `scribe migrate`, the account with `scribe admin` (a key, a password).
#
# Settings:
#   SCRIBE_BIN     default build/scribe
#   OM_ROUNDS      runs of each credential          default 3
#   OM_DURATION    wrk duration of one run          default 10s
#   OM_CONNECTIONS wrk connections                  default 64
#   OM_THREADS     wrk threads                      default 2
#   OM_SERVE_ARGS  extra `scribe serve` flags       default "--io-threads 2 --db-pool 8"
#   OM_PG_PORT     private cluster port             default 55691
#   OM_PGDATA      its data directory               default /tmp/scribe-om-pg
# Prints the machine line, a table, and JSON lines {"bench":"oauth_me",...}.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=bench/bench_lib.sh
. bench/bench_lib.sh
bin=$(realpath "${SCRIBE_BIN:-build/scribe}")
rounds=${OM_ROUNDS:-3}
duration=${OM_DURATION:-10s}
conns=${OM_CONNECTIONS:-64}
threads=${OM_THREADS:-2}
serve_args=${OM_SERVE_ARGS:---io-threads 2 --db-pool 8}
pg_port=${OM_PG_PORT:-55691}
pgdata=${OM_PGDATA:-/tmp/scribe-om-pg}
for tool in node psql jq curl wrk; do
  command -v "$tool" >/dev/null || { echo "oauth_me.sh: $tool is not installed" >&2; exit 2; }
done

machine_line
bench_scratch om "$pgdata"
bench_database scribe_om "$pg_port" "$pgdata"
export SCRIBE_LOG_LEVEL=warn SCRIBE_OBJECT_STORE_DIR=$tmp/objects SCRIBE_WORK_DIR=$tmp/work
mkdir -p "$SCRIBE_OBJECT_STORE_DIR" "$SCRIBE_WORK_DIR"

read -r account key < <(bench_account free 10)
email=$("$bin" admin account show --account "$account" --json | tail -1 | jq -r .email)
password="bench-$(head -c 12 /dev/urandom | base64 | tr -d '/+=')"
echo "$password" | "$bin" admin set-password --email "$email" >/dev/null
# shellcheck disable=SC2086
start_serve $serve_args
token=$(OM_BASE=$base OM_EMAIL=$email OM_PASSWORD=$password SCRIBE_TEST_DATABASE_URL=$SCRIBE_DATABASE_URL \
  node bench/oauth_me.mjs)
for credential in "$key" "$token"; do
  status=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $credential" "$base/api/v1/me")
  [ "$status" = 200 ] || { echo "oauth_me.sh: GET /api/v1/me answered $status" >&2; exit 1; }
done

# One wrk run of LABEL with CREDENTIAL; prints a table row and a JSON line.
measure() {
  local label=$1 credential=$2 round=$3 rps p50 p99 non2xx
  wrk -t"$threads" -c"$conns" -d"$duration" --latency -H "Authorization: Bearer $credential" "$base/api/v1/me" \
    >"$tmp/wrk.txt"
  rps=$(awk '/^Requests\/sec:/ {print $2}' "$tmp/wrk.txt")
  p50=$(to_ms "$(awk '$1 == "50%" {print $2}' "$tmp/wrk.txt")")
  p99=$(to_ms "$(awk '$1 == "99%" {print $2}' "$tmp/wrk.txt")")
  non2xx=$(awk '/Non-2xx/ {print $NF}' "$tmp/wrk.txt")
  printf '%-8s %5s %10s %8s %8s %8s  load %s\n' "$label" "$round" "$rps" "$p50" "$p99" "${non2xx:-0}" \
    "$(cut -d' ' -f1 /proc/loadavg)"
  printf '{"bench":"oauth_me","credential":"%s","round":%s,"requests_per_s":%s,"p50_ms":%s,"p99_ms":%s,"non_2xx":%s}\n' \
    "$label" "$round" "$rps" "$p50" "$p99" "${non2xx:-0}" >>"$tmp/results.jsonl"
}

echo "GET /api/v1/me: wrk -t$threads -c$conns -d$duration --latency, $rounds rounds alternating; scribe serve $serve_args"
# Warm-up: both credentials, discarded (connections, the token cache, the plans).
for credential in "$key" "$token"; do
  wrk -t"$threads" -c"$conns" -d3s -H "Authorization: Bearer $credential" "$base/api/v1/me" >/dev/null
done
printf '%-8s %5s %10s %8s %8s %8s\n' credential round req/s p50-ms p99-ms non-2xx
for round in $(seq "$rounds"); do
  if ((round % 2)); then
    measure api_key "$key" "$round"
    measure oauth "$token" "$round"
  else
    measure oauth "$token" "$round"
    measure api_key "$key" "$round"
  fi
done
cat "$tmp/results.jsonl"
jq -rs '
  def median: sort | if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  (map(select(.credential == "api_key"))) as $k | (map(select(.credential == "oauth"))) as $o |
  ($k | map(.requests_per_s) | median) as $krps | ($o | map(.requests_per_s) | median) as $orps |
  ($k | map(.p99_ms) | median) as $kp99 | ($o | map(.p99_ms) | median) as $op99 |
  "medians: api_key \($krps) req/s, p99 \($kp99) ms; oauth \($orps) req/s, p99 \($op99) ms",
  "ratios (oauth / api_key): throughput \($orps / $krps * 1000 | round / 1000), p99 \($op99 / $kp99 * 1000 | round / 1000)" +
    " (target: throughput >= 0.9, p99 <= 1.1)",
  ({bench: "oauth_me", summary: true, api_key_rps: $krps, oauth_rps: $orps, api_key_p99_ms: $kp99, oauth_p99_ms: $op99,
    throughput_ratio: ($orps / $krps), p99_ratio: ($op99 / $kp99),
    meets_target: (($orps / $krps) >= 0.9 and ($op99 / $kp99) <= 1.1)} | tojson)' "$tmp/results.jsonl"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
