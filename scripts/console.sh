#!/usr/bin/env bash
# Builds the web console that `scribe serve` hosts at /app (console/: Preact
# pages bundled by esbuild; api/console/ serves console/dist). Cheap to run
# again: `npm ci` only when console/node_modules is missing or does not match
# package.json, and `node build.mjs` only when a file of console/ (outside
# node_modules/ and dist/) is newer than the last build's dist/index.html.
#   scripts/console.sh [--force]
set -euo pipefail
cd "$(dirname "$0")/.."
force=0
[ "${1:-}" = --force ] && force=1
if [ ! -f console/package.json ]; then
  echo "console: no console/package.json, nothing to build"
  exit 0
fi
# esbuild needs a recent Node: the one scripts/install_deps.sh put in
# .tools/node where the system's is older than 20.
if [ "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)" -lt 20 ] &&
  [ -x .tools/node/node_modules/.bin/node ]; then
  export PATH="$(pwd)/.tools/node/node_modules/.bin:$PATH"
fi
cd console
# Installed packages are kept while they satisfy package.json and the lock
# (`npm ls` finds none missing or invalid): npm ci removes node_modules first.
if [ "$force" = 1 ] || [ ! -d node_modules ] || ! npm ls --all >/dev/null 2>&1; then
  npm ci --no-audit --no-fund --loglevel=error
fi
if [ "$force" = 0 ] && [ -f dist/index.html ] &&
  [ -z "$(find . \( -path ./node_modules -o -path ./dist \) -prune -o -type f -newer dist/index.html -print -quit)" ]; then
  echo "console: dist/ is newer than its sources, not rebuilt"
  exit 0
fi
node build.mjs
