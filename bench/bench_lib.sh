# Shell helpers shared by the benchmark scripts in bench/ (sourced, not run).

# CPU seconds (user + system) of a process; with "reaped", plus its waited-for children.
cpu_of() {
  local pid=$1 reaped=${2:-} stat
  stat=$(cat "/proc/$pid/stat" 2>/dev/null) || { echo 0; return; }
  stat=${stat##*) }
  # shellcheck disable=SC2086
  set -- $stat
  local ticks=$((${12} + ${13}))
  [ -n "$reaped" ] && ticks=$((ticks + ${14} + ${15}))
  echo "$ticks $(getconf CLK_TCK)" | awk '{printf "%.2f", $1 / $2}'
}

# CPU seconds of a local PostgreSQL cluster under data directory $1: the
# postmaster (with its reaped children) and its live children.
cluster_cpu() {
  local pm total child
  pm=$(head -1 "$1/postmaster.pid")
  total=$(cpu_of "$pm" reaped)
  for child in $(pgrep -P "$pm"); do total=$(echo "$total $(cpu_of "$child")" | awk '{printf "%.2f", $1 + $2}'); done
  echo "$total"
}

# What the run ran on (issue 23), the same two lines as the C++ benchmarks'
# scribe::bench::machine_info: CPU model, cores, load average now, kernel;
# one human line and one JSON line {"bench":"machine",...}.
machine_line() {
  local model cores l1 l5 l15 kernel
  model=$(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo)
  cores=$(getconf _NPROCESSORS_ONLN)
  read -r l1 l5 l15 _ </proc/loadavg
  kernel="$(uname -s) $(uname -r)"
  echo "machine: ${model:-unknown}, $cores cores, load average $l1 $l5 $l15, $kernel"
  printf '{"bench":"machine","cpu_model":"%s","cores":%s,"load_average":[%s,%s,%s],"kernel":"%s"}\n' \
    "${model//\"/}" "$cores" "$l1" "$l5" "$l15" "$kernel"
}

# to_ms LATENCY: a latency as wrk prints it ("1.23ms", "850.00us", "1.02s",
# "1.50m") in milliseconds, two decimals.
to_ms() {
  awk -v v="$1" 'BEGIN {
    n = v + 0
    if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n = n; else if (v ~ /m$/) n *= 60000; else if (v ~ /s$/) n *= 1000
    printf "%.2f", n }'
}

# Stops the `scribe serve` whose pid is in $server_pid (TERM, then KILL
# after 10 s) and clears it; nothing when none runs.
stop_server() {
  [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null || { server_pid=""; return 0; }
  kill -TERM "$server_pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}

# three_voice_recording DIR OUT: 14 lines of a radio conversation read in
# turn by flite's slt, rms and awb, each 16 kHz mono followed by 0.6 s of
# silence (parts in DIR), joined into OUT (about 70 s).
three_voice_recording() {
  local dir=$1 out=$2 i
  local lines=(
    "Good evening and welcome to the program. Tonight we talk about gardens in the city."
    "Thank you for having me. I have been growing vegetables on my roof for ten years."
    "That is remarkable. What did you plant in the first season?"
    "We started with tomatoes and beans, because they grow quickly and need little care."
    "In my neighbourhood the council gave us an empty lot behind the school."
    "How did the children react when the garden opened?"
    "They loved it. Every class has a small bed and they water it every morning."
    "Water is a real problem in summer. We collect rain in large barrels."
    "Do you worry about the soil being polluted near busy roads?"
    "Yes, so we test the soil every spring and we build raised beds with clean earth."
    "The cost of a test is small compared with the value of safe food."
    "Let us talk about bees. Many listeners asked about keeping bees on a balcony."
    "Bees are easier than people think, but you must tell your neighbours first."
    "I kept two hives for a while and the honey was wonderful."
  )
  local voices=(slt rms awb) parts=()
  for i in "${!lines[@]}"; do
    flite -voice "${voices[i % 3]}" -t "${lines[i]}" -o "$dir/l$i.raw.wav"
    sox "$dir/l$i.raw.wav" -r 16000 -c 1 -b 16 "$dir/l$i.wav" pad 0 0.6
    parts+=("$dir/l$i.wav")
  done
  sox "${parts[@]}" "$out"
}

# bench_scratch NAME PGDATA: makes $tmp (a new temporary directory) and, on
# exit, stops the server in $server_pid and the private cluster under PGDATA
# and removes $tmp.
bench_scratch() {
  tmp=$(mktemp -d "/tmp/scribe-$1.XXXXXX")
  server_pid=""
  bench_pgdata=$2
  trap 'stop_server; bash scripts/pg.sh stop "$bench_pgdata" || true; rm -rf "$tmp"' EXIT
  trap 'exit 130' INT TERM
}

# bench_database DB PORT PGDATA: starts a private PostgreSQL cluster
# (scripts/pg.sh), makes database DB afresh, migrates it with $bin and
# exports SCRIBE_DATABASE_URL.
bench_database() {
  local db=$1 port=$2 data=$3 url
  mkdir -p "$(dirname "$data")"
  chmod 755 "$(dirname "$data")" 2>/dev/null || true
  bash scripts/pg.sh start "$data" "$port"
  url=$(bash scripts/pg.sh url "$port")
  psql "${url%/*}/postgres" -Atq -v ON_ERROR_STOP=1 -c "set client_min_messages = warning" \
    -c "drop database if exists $db with (force)" -c "create database $db" >/dev/null
  export SCRIBE_DATABASE_URL=${url%/*}/$db
  "$bin" migrate >/dev/null 2>&1
}

# bench_account PLAN BALANCE_USD: a new account with a full-access key (`scribe
# admin`); prints "<account_id> <api_key>".
bench_account() {
  local account key
  account=$("$bin" admin account create --email "bench-$$-$RANDOM@example.com" --plan "$1" --balance-usd "$2" --json |
    tail -1 | jq -r .account_id)
  key=$("$bin" admin key create --account "$account" --permission full --json | tail -1 | jq -r .api_key)
  echo "$account $key"
}

# start_serve [SERVE_ARGS...]: starts `$bin serve` on a free port with the
# rate limit lifted and metrics off (the environment as the caller sets it,
# e.g. SCRIBE_WORKER_SLOTS=1 start_serve), its log in $tmp/serve.log; waits
# for its port and sets server_pid and base.
start_serve() {
  rm -f "$tmp/port"
  SCRIBE_METRICS_ADDR=off "$bin" serve --port 0 --port-file "$tmp/port" --rate-limit 100000000 "$@" \
    >"$tmp/serve.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 300); do [ -s "$tmp/port" ] && break; kill -0 "$server_pid" 2>/dev/null || break; sleep 0.05; done
  [ -s "$tmp/port" ] || { echo "$(basename "$0"): scribe serve did not start:" >&2; tail -20 "$tmp/serve.log" >&2; exit 1; }
  base="http://127.0.0.1:$(cat "$tmp/port")"
}

# transcribe_recording: one transcription of $tmp/speech.wav ($audio seconds)
# by the pipeline of the server at $base, for $key (bench/time_to_result.mjs,
# one run); sets job (its JSON line) and tid, and stops the script unless it
# completed.
transcribe_recording() {
  job=$(TTR_API="$base/api/v1" TTR_KEY=$key TTR_FILE=$tmp/speech.wav TTR_AUDIO_SECONDS=$audio TTR_RUNS=1 \
    TTR_DB_URL=$SCRIBE_DATABASE_URL node bench/time_to_result.mjs)
  tid=$(jq -r .id <<<"$job")
  [ "$(jq -r .status <<<"$job")" = completed ] ||
    { echo "$(basename "$0"): the transcription did not complete: $job" >&2; exit 1; }
}
