#!/usr/bin/env bash
# MCP tools/call overhead (issue 22): the same read through POST /mcp and
# through its REST route, under the same load. Prints numbers, never asserts
# them. Target: each tool's p99 within 1.5x of the REST call's p99.
#
# Cases, each `wrk -t2 -c32 -d15s --latency` (bench/mcp_overhead.lua) on one key:
#   rest_get    GET /api/v1/transcriptions/{id}
#   mcp_get     POST /mcp tools/call getTranscription {"id": id}
#   rest_search GET /api/v1/search?q=QUERY
#   mcp_search  POST /mcp tools/call search {"query": QUERY}
# The MCP requests are the 2026-07-28 (stateless) form, so every request
# stands alone: params._meta carries the protocol version and the client
# capabilities, and the headers MCP-Protocol-Version, Mcp-Method and Mcp-Name
# match the body. Every answer is checked in wrk (status 200 and, for MCP,
# "isError":false; for REST, the completed status or a non-empty hit list);
# each case is also checked once with curl first.
# Rounds (MCP_BENCH_ROUNDS, 2) alternate the order: odd rounds run the four
# cases as listed, even rounds in reverse. Before the first round every case
# gets MCP_BENCH_WARMUP (3s) of wrk.
#
# Setup: a private PostgreSQL 15 cluster (scripts/pg.sh; MCP_BENCH_PG_PORT,
# MCP_BENCH_PGDATA; stopped on exit), database scribe_mcp (dropped and made
# again), `scribe migrate`, an enterprise account and a full-access key
# (`scribe admin`). The data is real: a recording of the flite voices slt,
# rms and awb reading 14 lines (about 68 s) uploaded through the presigned flow
# (bench/time_to_result.mjs, one job) to `scribe serve` with one worker slot,
# transcribed by the pipeline; its segments are what search finds. Then the
# measured server: `scribe serve --port 0 --rate-limit 100000000
# --metrics-addr off` with SCRIBE_WORKER_SLOTS=0 (plus MCP_BENCH_SERVE_ARGS),
# its request log in a temporary file at the default level (as in production).
#
# Settings:
#   SCRIBE_BIN            default build/scribe
#   MCP_BENCH_DURATION    wrk duration per case        default 15s
#   MCP_BENCH_CONNECTIONS wrk connections              default 32
#   MCP_BENCH_THREADS     wrk threads                  default 2
#   MCP_BENCH_ROUNDS      rounds                       default 2
#   MCP_BENCH_WARMUP      warm-up per case             default 3s
#   MCP_BENCH_QUERY       the search text              default the
#   MCP_BENCH_SERVE_ARGS  extra `scribe serve` flags, e.g. "--io-threads 2"
#   MCP_BENCH_PG_PORT     private cluster port         default 55660
#   MCP_BENCH_PGDATA      its data directory           default /tmp/scribe-mcp-pg
#   MCP_BENCH_DIAG=1      after the rounds, two more cases for where the time
#                         goes: tools/list (the MCP path without a REST call
#                         and without the database beyond auth) and GET /healthz
#   MCP_BENCH_PERF=1      after that, perf record (DWARF call stacks) of the server
#                         during one more 9 s run of each case, its samples
#                         sorted into stages (HTTP I/O, auth + rate limit, the
#                         REST route, the MCP steps around it, response write);
#                         MCP_BENCH_PERF_KEEP=DIR keeps the perf.data files
# Prints the machine line, a table (req/s, p50, p99, max, server and PostgreSQL
# CPU microseconds per request, database transactions per request, response
# bytes), the MCP/REST p99 ratio per tool and round, and JSON lines
# {"bench":"mcp_overhead",...}.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=bench/bench_lib.sh
. bench/bench_lib.sh
bin=$(realpath "${SCRIBE_BIN:-build/scribe}")
duration=${MCP_BENCH_DURATION:-15s}
conns=${MCP_BENCH_CONNECTIONS:-32}
wrk_threads=${MCP_BENCH_THREADS:-2}
rounds=${MCP_BENCH_ROUNDS:-2}
warmup=${MCP_BENCH_WARMUP:-3s}
query=${MCP_BENCH_QUERY:-the}
serve_args=${MCP_BENCH_SERVE_ARGS:-}
pg_port=${MCP_BENCH_PG_PORT:-55660}
pgdata=${MCP_BENCH_PGDATA:-/tmp/scribe-mcp-pg}
diag=${MCP_BENCH_DIAG:-0}
perf=${MCP_BENCH_PERF:-0}
perf_keep=${MCP_BENCH_PERF_KEEP:-}
lua=$root/bench/mcp_overhead.lua

[ -x "$bin" ] || { echo "mcp_overhead.sh: no scribe binary at $bin (set SCRIBE_BIN)" >&2; exit 2; }
for tool in wrk curl node psql flite sox jq; do
  command -v "$tool" >/dev/null || { echo "mcp_overhead.sh: $tool is not installed" >&2; exit 2; }
done

machine_line

bench_scratch mcp "$pgdata"

# The recording: bench_lib.sh's three-voice conversation (as time_to_result.sh's).
three_voice_recording "$tmp" "$tmp/speech.wav"
audio=$(soxi -D "$tmp/speech.wav")

bench_database scribe_mcp "$pg_port" "$pgdata"
read -r account key <<<"$(bench_account enterprise 1000)"
export SCRIBE_OBJECT_STORE_DIR=$tmp/objects SCRIBE_WORK_DIR=$tmp/work
mkdir -p "$SCRIBE_OBJECT_STORE_DIR" "$SCRIBE_WORK_DIR"

# Starts `scribe serve` with the given worker slots and waits for its port.
start_server() {
  # shellcheck disable=SC2086
  SCRIBE_WORKER_SLOTS=$1 start_serve $serve_args
}

# The data: one transcription by the real pipeline.
start_server 1
transcribe_recording
stop_server
segments=$(psql "$SCRIBE_DATABASE_URL" -Atqc "select count(*) from search_segments where transcription_id = $tid")
echo "data: transcription $tid completed ($audio s of three flite voices, $segments searchable segments)," \
  "transcribed in $(jq -r '.client_total_s | . * 10 | round / 10' <<<"$job") s"

# The measured server: no pipeline worker.
start_server 0
mcp_body() { # TOOL ARGUMENTS_JSON
  jq -cn --arg name "$1" --argjson args "$2" '{jsonrpc: "2.0", id: 1, method: "tools/call",
    params: {name: $name, arguments: $args,
      _meta: {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}}'
}
list_body=$(jq -cn '{jsonrpc: "2.0", id: 1, method: "tools/list",
  params: {_meta: {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}}')
# Transactions of the benchmark's database so far (commits and rollbacks).
xacts() {
  psql "$SCRIBE_DATABASE_URL" -Atqc "select xact_commit + xact_rollback from pg_stat_database where datname = current_database()"
}
qenc=$(jq -rn --arg q "$query" '$q | @uri')

# Each case: name, method, path, body, expected substring, Mcp-Method, Mcp-Name.
declare -A c_method c_path c_body c_expect c_mmethod c_mname
c_method[rest_get]=GET c_path[rest_get]=/api/v1/transcriptions/$tid c_expect[rest_get]='"status":"completed"'
c_method[mcp_get]=POST c_path[mcp_get]=/mcp c_body[mcp_get]=$(mcp_body getTranscription "{\"id\":$tid}")
c_expect[mcp_get]='"isError":false' c_mmethod[mcp_get]=tools/call c_mname[mcp_get]=getTranscription
c_method[rest_search]=GET c_path[rest_search]="/api/v1/search?q=$qenc" c_expect[rest_search]='"hits":[{'
c_method[mcp_search]=POST c_path[mcp_search]=/mcp c_body[mcp_search]=$(mcp_body search "$(jq -cn --arg q "$query" '{query: $q}')")
c_expect[mcp_search]='"isError":false' c_mmethod[mcp_search]=tools/call c_mname[mcp_search]=search
c_method[mcp_list]=POST c_path[mcp_list]=/mcp c_body[mcp_list]=$list_body c_expect[mcp_list]='"tools":[{'
c_mmethod[mcp_list]=tools/list
c_method[healthz]=GET c_path[healthz]=/healthz c_expect[healthz]=''

# The request's headers, one "Name: value" a line.
case_headers() {
  local c=$1
  echo "Authorization: Bearer $key"
  if [ "${c_method[$c]}" = POST ]; then
    echo "Content-Type: application/json"
    echo "Accept: application/json, text/event-stream"
    echo "MCP-Protocol-Version: 2026-07-28"
    echo "Mcp-Method: ${c_mmethod[$c]}"
    [ -n "${c_mname[$c]:-}" ] && echo "Mcp-Name: ${c_mname[$c]}"
  fi
  return 0
}
run_wrk() { # CASE DURATION [--latency]
  local c=$1 d=$2 args=()
  while IFS= read -r h; do args+=(-H "$h"); done < <(case_headers "$c")
  MCP_BENCH_METHOD=${c_method[$c]} MCP_BENCH_BODY=${c_body[$c]:-} MCP_BENCH_EXPECT=${c_expect[$c]} \
    wrk -t"$wrk_threads" -c"$conns" -d"$d" --latency -s "$lua" "${args[@]}" "$base${c_path[$c]}"
}

# Once with curl: a successful answer of the expected shape (not an error being benchmarked).
check_case() {
  local c=$1 args=() status
  while IFS= read -r h; do args+=(-H "$h"); done < <(case_headers "$c")
  [ "${c_method[$c]}" = POST ] && args+=(--data-binary "${c_body[$c]}")
  status=$(curl -s -o "$tmp/$c.body" -w '%{http_code}' -X "${c_method[$c]}" "${args[@]}" "$base${c_path[$c]}")
  bytes[$c]=$(stat -c %s "$tmp/$c.body")
  local ok=false
  case $c in
    rest_get) [ "$status" = 200 ] && [ "$(jq -r .status "$tmp/$c.body")" = completed ] && ok=true ;;
    rest_search) [ "$status" = 200 ] && [ "$(jq '.hits | length' "$tmp/$c.body")" -gt 0 ] && ok=true ;;
    mcp_get) [ "$status" = 200 ] && [ "$(jq -r '.result.isError' "$tmp/$c.body")" = false ] &&
      [ "$(jq -r '.result.structuredContent.status' "$tmp/$c.body")" = completed ] && ok=true ;;
    mcp_search) [ "$status" = 200 ] && [ "$(jq -r '.result.isError' "$tmp/$c.body")" = false ] &&
      [ "$(jq '.result.structuredContent.results | length' "$tmp/$c.body")" -gt 0 ] && ok=true ;;
    mcp_list) [ "$status" = 200 ] && [ "$(jq '.result.tools | length' "$tmp/$c.body")" -gt 0 ] && ok=true ;;
    healthz) [ "$status" = 200 ] && ok=true ;;
  esac
  $ok || { echo "mcp_overhead.sh: $c answered $status: $(head -c 400 "$tmp/$c.body")" >&2; exit 1; }
}
declare -A bytes
for c in rest_get mcp_get rest_search mcp_search; do check_case "$c"; done
echo "checked once with curl: getTranscription completed, isError false; search: $(jq '.total' "$tmp/rest_search.body")" \
  "matches of \"$query\", $(jq '.hits | length' "$tmp/rest_search.body") on the page (REST)," \
  "$(jq '.result.structuredContent.results | length' "$tmp/mcp_search.body") results, isError false (MCP)"
echo "load: wrk -t$wrk_threads -c$conns -d$duration --latency per case, $rounds rounds in alternating order;" \
  "scribe serve --rate-limit 100000000 --metrics-addr off ${serve_args:-(default --io-threads/--db-pool)}," \
  "SCRIBE_WORKER_SLOTS=0"

for c in rest_get mcp_get rest_search mcp_search; do run_wrk "$c" "$warmup" >/dev/null; done

results=()
declare -A p99_of p50_of
header() {
  printf '%-5s %-12s %8s %8s %8s %8s %8s %8s %8s %9s %7s\n' round case req/s p50-ms p99-ms max-ms srv-us pg-us \
    xact/req resp-bytes errors
}
measure() { # ROUND CASE
  local r=$1 c=$2 srv0 srv1 pg0 pg1 x0 x1 result
  sleep 1  # PostgreSQL flushes its transaction counts about once a second
  x0=$(xacts)
  srv0=$(cpu_of "$server_pid")
  pg0=$(cluster_cpu "$pgdata")
  run_wrk "$c" "$duration" >"$tmp/wrk.txt"
  srv1=$(cpu_of "$server_pid")
  pg1=$(cluster_cpu "$pgdata")
  sleep 1
  x1=$(xacts)
  result=$(grep '^RESULT ' "$tmp/wrk.txt") || { cat "$tmp/wrk.txt" >&2; exit 1; }
  local requests secs p50 p99 max non2xx errors checked unexpected rps srv_us pg_us xpr
  read -r _ requests secs p50 p99 max non2xx errors checked unexpected <<<"$result"
  rps=$(awk -v n="$requests" -v s="$secs" 'BEGIN {printf "%.0f", n / s}')
  srv_us=$(awk -v a="$srv0" -v b="$srv1" -v n="$requests" 'BEGIN {printf "%.0f", 1e6 * (b - a) / n}')
  pg_us=$(awk -v a="$pg0" -v b="$pg1" -v n="$requests" 'BEGIN {printf "%.0f", 1e6 * (b - a) / n}')
  xpr=$(awk -v a="$x0" -v b="$x1" -v n="$requests" 'BEGIN {printf "%.2f", (b - a) / n}')
  printf '%-5s %-12s %8s %8.2f %8.2f %8.2f %8s %8s %8s %9s %7s\n' "$r" "$c" "$rps" "$p50" "$p99" "$max" "$srv_us" \
    "$pg_us" "$xpr" "${bytes[$c]}" "$((unexpected + errors))"
  [ "$unexpected" = 0 ] && [ "$errors" = 0 ] ||
    echo "    $unexpected of $checked answers not 200 with ${c_expect[$c]:-anything}; $errors socket errors"
  p99_of[$r.$c]=$p99
  p50_of[$r.$c]=$p50
  results+=("{\"bench\":\"mcp_overhead\",\"round\":\"$r\",\"case\":\"$c\",\"method\":\"${c_method[$c]}\",\"path\":\"${c_path[$c]}\",\"connections\":$conns,\"requests\":$requests,\"seconds\":$secs,\"requests_per_s\":$rps,\"p50_ms\":$p50,\"p99_ms\":$p99,\"max_ms\":$max,\"non_2xx\":$non2xx,\"socket_errors\":$errors,\"unexpected_answers\":$unexpected,\"response_bytes\":${bytes[$c]},\"server_cpu_us_per_request\":$srv_us,\"pg_cpu_us_per_request\":$pg_us,\"db_transactions_per_request\":$xpr}")
}

echo
header
order=(rest_get mcp_get rest_search mcp_search)
for r in $(seq "$rounds"); do
  if [ $((r % 2)) = 1 ]; then cases=("${order[@]}"); else cases=(mcp_search rest_search mcp_get rest_get); fi
  for c in "${cases[@]}"; do measure "$r" "$c"; done
done

echo
echo "MCP p99 / REST p99 (target <= 1.5; per round, the ratio of the rounds' mean p99s, and the median of the"
echo "rounds' ratios):"
for tool in get search; do
  name=getTranscription
  [ "$tool" = search ] && name=search
  line="  $name:"
  pairs="" p50_pairs=""
  for r in $(seq "$rounds"); do
    m=${p99_of[$r.mcp_$tool]} s=${p99_of[$r.rest_$tool]}
    line+=" $(awk -v a="$m" -v b="$s" 'BEGIN {printf "%.2f", a / b}') ($m/$s ms);"
    pairs+="$m $s"$'\n'
    p50_pairs+="${p50_of[$r.mcp_$tool]} ${p50_of[$r.rest_$tool]}"$'\n'
  done
  p50_ratio=$(printf '%s' "$p50_pairs" | awk '{ m += $1; s += $2 } END { printf "%.2f", m / s }')
  read -r mcp_mean rest_mean ratio median meets < <(printf '%s' "$pairs" | awk '
    { m += $1; s += $2; q[NR] = $1 / $2 }
    END {
      for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++) if (q[j] < q[i]) { t = q[i]; q[i] = q[j]; q[j] = t }
      med = NR % 2 ? q[(NR + 1) / 2] : (q[NR / 2] + q[NR / 2 + 1]) / 2
      printf "%.3f %.3f %.2f %.2f %s\n", m / NR, s / NR, m / s, med, (m / s <= 1.5) ? "true" : "false" }')
  echo "$line"
  echo "    mean p99 $mcp_mean / $rest_mean ms = $ratio, median of rounds $median:" \
    "$([ "$meets" = true ] && echo "meets" || echo "misses") the target (p50 ratio $p50_ratio)"
  results+=("{\"bench\":\"mcp_overhead\",\"part\":\"ratio\",\"tool\":\"$name\",\"rounds\":$rounds,\"mcp_p99_ms_mean\":$mcp_mean,\"rest_p99_ms_mean\":$rest_mean,\"p99_ratio\":$ratio,\"p99_ratio_median_of_rounds\":$median,\"p50_ratio\":$p50_ratio,\"target_ratio\":1.5,\"meets_target\":$meets}")
done

if [ "$diag" = 1 ]; then
  echo
  echo "diagnostics: tools/list (MCP without a REST call) and /healthz (no database)"
  header
  for c in mcp_list healthz; do
    check_case "$c"
    run_wrk "$c" "$warmup" >/dev/null
    measure diag "$c"
  done
fi

if [ "$perf" = 1 ]; then
  command -v perf >/dev/null || { echo "mcp_overhead.sh: perf is not installed" >&2; exit 2; }
  # Sorts each sample by the stage its stack is in (frames leaf first, samples
  # separated by blank lines, as `perf script -F ip,sym` prints them).
  cat >"$tmp/stages.awk" <<'AWK'
function stage(s) {
  if (s ~ /ApiApp::finish/) return "response write + request log (ApiApp::finish)"
  if (s ~ /ApiApp::call/) return "REST route (handler, its SQL, its JSON)"
  if (s ~ /McpHandler::post/) {
    if (s ~ /mcp::classify/) return "MCP: parse and check the JSON-RPC request"
    if (s ~ /Response::json/) return "MCP: serialize the answer"
    if (s ~ /parser<|lexer</) return "MCP: parse the REST reply"
    if (s ~ /run_search|result_of|success|compact|guarded/) return "MCP: build the tool result (structured + text)"
    return "MCP: other (headers, envelope)"
  }
  if (s ~ /Handler::handle/) return "REST route (handler, its SQL, its JSON)"
  if (s ~ /Authenticator::|RateLimiter::/) return "auth + rate limit"
  if (s ~ /HttpServer::run/) return "HTTP I/O thread (read, parse, write)"
  return "other (thread pool, kernel)"
}
function flush() { if (st != "") { n[stage(st)]++; total++ }; st = "" }
/^[[:space:]]*$/ { flush(); next }
{ st = st "\n" $0 }
END { flush(); for (k in n) printf "%s\t%d\t%d\n", k, n[k], total }
AWK
  echo
  echo "perf: where the server's CPU goes, per stage (perf record -F 499 --call-graph dwarf -p SERVER during one"
  echo "more 9 s run per case; a sample's stage is the innermost of the listed ones on its stack); share of the"
  echo "case's samples and CPU microseconds per request (share x the server CPU per request of that run):"
  for c in rest_search mcp_search rest_get mcp_get; do
    perf record -q -F 499 --call-graph dwarf,32768 -p "$server_pid" -o "$tmp/perf.$c.data" -- sleep 10 >/dev/null 2>&1 &
    perf_pid=$!
    sleep 0.5
    srv0=$(cpu_of "$server_pid")
    run_wrk "$c" 9s >"$tmp/wrk.txt"
    srv1=$(cpu_of "$server_pid")
    wait "$perf_pid" || true
    read -r _ requests _ <<<"$(grep '^RESULT ' "$tmp/wrk.txt")"
    us=$(awk -v a="$srv0" -v b="$srv1" -v n="$requests" 'BEGIN {printf "%.0f", 1e6 * (b - a) / n}')
    echo "  $c: $requests requests, server $us CPU us per request (under perf)"
    perf script -i "$tmp/perf.$c.data" -F ip,sym 2>/dev/null | awk -f "$tmp/stages.awk" | sort -t$'\t' -k2,2nr |
      awk -F'\t' -v us="$us" -v c="$c" '{ printf "    %5.1f%% %5.0f us  %s\n", 100 * $2 / $3, us * $2 / $3, $1
        printf "{\"bench\":\"mcp_overhead\",\"part\":\"perf\",\"case\":\"%s\",\"stage\":\"%s\",\"share\":%.4f,\"cpu_us_per_request\":%.1f}\n", c, $1, $2 / $3, us * $2 / $3 >"/dev/stderr" }' \
      2>>"$tmp/perf.json"
    [ -n "$perf_keep" ] && cp "$tmp/perf.$c.data" "$perf_keep/perf.$c.data"
  done
  mapfile -t -O "${#results[@]}" results <"$tmp/perf.json"
fi

echo
read -r l1 l5 l15 _ </proc/loadavg
echo "load average at the end: $l1 $l5 $l15"
printf '%s\n' "${results[@]}"
