#!/usr/bin/env bash
# Configures and builds one build directory.
#   scripts/build.sh [release|asan] [TARGET...]
# With no targets it builds everything of that kind (the benchmarks too, in
# release); the test command names only the targets its tests run. Compiles
# go through ccache when it is installed: its cache lives outside the clone
# (CCACHE_DIR, by default under the home directory), so a second clone or a
# CI run on the same machine starts warm, and CCACHE_BASEDIR makes the clone's
# own path not part of the key.
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-release}
shift || true
jobs=${SCRIBE_BUILD_JOBS:-$(nproc)}
case "$kind" in
  release) dir=build;      flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DSCRIBE_BENCH=ON) ;;
  asan)    dir=build-asan; flags=(-DCMAKE_BUILD_TYPE=Debug -DSCRIBE_SANITIZE=ON -DSCRIBE_BENCH=OFF) ;;
  *) echo "unknown build kind $kind" >&2; exit 2 ;;
esac
if command -v ccache >/dev/null; then
  flags+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(pwd)}
  # Precompiled headers: ccache needs these to cache what includes them.
  export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}
  export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
  # With debug info ccache keys every object by the directory it is compiled
  # in, so another clone (CI's) would miss everything. The line tables then
  # name the first clone's build directory, which nothing reads.
  export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
fi
cmake -S . -B "$dir" -G Ninja "${flags[@]}" >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$dir" -j "$jobs" "${targets[@]}"
