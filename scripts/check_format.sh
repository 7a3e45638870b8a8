#!/usr/bin/env bash
# One style: every tracked C++ file is as clang-format (with .clang-format)
# writes it. Fails naming each file that differs and how to fix it.
#   scripts/check_format.sh          check
#   scripts/check_format.sh --fix    rewrite the files in place
set -euo pipefail
cd "$(dirname "$0")/.."
fix=${1:-}
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.hpp' '*.cc')
if [ "$fix" = --fix ]; then
  clang-format -i --style=file "${files[@]}"
  exit 0
fi
bad=0
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  if ! clang-format --style=file "$f" | cmp -s - "$f"; then
    echo "format: $f differs from .clang-format's style" >&2
    bad=1
  fi
done
if [ $bad -ne 0 ]; then
  echo "format: run scripts/check_format.sh --fix" >&2
  exit 1
fi
echo "format: ${#files[@]} files follow .clang-format"
