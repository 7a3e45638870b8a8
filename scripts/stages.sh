# Stage timing for the test and run commands (sourced, not run).
#   stage NAME COMMAND...   runs COMMAND, records its wall time (and whether it failed) under NAME
#   stage_table             prints every recorded stage, one line each, and the total
# A failed stage is recorded and its status returned, so callers decide
# whether to go on (the test command runs every test stage and fails at the end).
_stage_names=()
_stage_secs=()
_stage_status=()
_stage_start=$(date +%s)

stage() {
  local name=$1
  shift
  local t0 rc=0
  t0=$(date +%s.%N)
  "$@" || rc=$?
  _stage_names+=("$name")
  _stage_secs+=("$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')")
  _stage_status+=("$rc")
  return "$rc"
}

# Records a stage measured elsewhere (an e2e file timed by its runner).
stage_record() { _stage_names+=("$1"); _stage_secs+=("$2"); _stage_status+=("${3:-0}"); }

stage_table() {
  local i total
  total=$(($(date +%s) - _stage_start))
  echo
  echo "== stage times (wall seconds)"
  printf '%-44s %9s  %s\n' stage seconds result
  for i in "${!_stage_names[@]}"; do
    printf '%-44s %9.1f  %s\n' "${_stage_names[$i]}" "${_stage_secs[$i]}" \
      "$([ "${_stage_status[$i]}" = 0 ] && echo ok || echo "FAILED (${_stage_status[$i]})")"
  done
  printf '%-44s %9d\n' "whole command" "$total"
}
