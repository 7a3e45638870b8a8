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
