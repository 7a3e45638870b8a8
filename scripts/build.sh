#!/usr/bin/env bash
# Configures and builds one build directory.
#   scripts/build.sh [release|asan]
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-release}
jobs=${SCRIBE_BUILD_JOBS:-$(nproc)}
case "$kind" in
  release) dir=build;      flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DSCRIBE_BENCH=ON) ;;
  asan)    dir=build-asan; flags=(-DCMAKE_BUILD_TYPE=Debug -DSCRIBE_SANITIZE=ON -DSCRIBE_BENCH=OFF) ;;
  *) echo "unknown build kind $kind" >&2; exit 2 ;;
esac
cmake -S . -B "$dir" -G Ninja "${flags[@]}" >/dev/null
cmake --build "$dir" -j "$jobs"
