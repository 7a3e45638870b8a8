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
# clang-format names each file that differs (--dry-run --Werror), in batches
# on every core.
[ ${#files[@]} -eq 0 ] && { echo "format: no files"; exit 0; }
if ! out=$(printf '%s\0' "${files[@]}" | xargs -0 -n 32 -P "$(nproc)" clang-format --style=file --dry-run --Werror 2>&1); then
  printf '%s\n' "$out" | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/format: \1 differs from .clang-format'"'"'s style/p' | sort -u >&2
  echo "format: run scripts/check_format.sh --fix" >&2
  exit 1
fi
echo "format: ${#files[@]} files follow .clang-format"
