#!/usr/bin/env bash
# Installs the Debian 12 packages scribe builds, runs and tests with, and the
# npm clients the end-to-end tests use. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config git curl ca-certificates openssl
  libpqxx-dev libpq-dev nlohmann-json3-dev libboost-dev libboost-system-dev libssl-dev
  libspdlog-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev uuid-dev libcurl4-openssl-dev
  ffmpeg yt-dlp flite sox jq
  fonts-dejavu-core  # the clips' captions: libass draws "DejaVu Sans" (domain/clip_captions.h)
  libavformat-dev libavcodec-dev libswresample-dev libavutil-dev
  libpocketsphinx-dev libsphinxbase-dev pocketsphinx-en-us pocketsphinx-testdata
  pocketsphinx  # pocketsphinx_continuous: the same-run speech reference of the benchmarks
  postgresql-15 postgresql-client-15
  wordnet-base  # synonyms, derived forms and parts of speech: ask's meaning-alike matching and section titles (lexicon/wordnet.h)
  wrk
  ccache  # compiles cached outside the clone (scripts/build.sh)
  lld  # the linker of both build directories: links in a fraction of GNU ld's time (CMakeLists.txt)
  clang-format  # the style check of the test command (scripts/check_format.sh)
  chromium  # the OAuth sign-in and consent pages in a real browser (tests/e2e/oauth_browser.test.mjs, via playwright-core)
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "installing: ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Node.js and npm run the end-to-end tests; the machine image may already carry
# a newer Node than Debian's, which is kept.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  missing_node=(nodejs npm)
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing_node[@]}"
fi

# The MCP client @modelcontextprotocol/client 2.x needs Node 20 or newer;
# Debian 12's is 18. Then Node 20 comes from the npm registry's `node` package
# (its install step fetches the platform's binary package, node-<os>-<arch>,
# from the same registry) into .tools/node, and scripts/test.sh puts it first
# on PATH. Nothing happens where the node found is 20 or newer.
node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
if [ "$(node_major)" -lt 20 ]; then
  if [ ! -x .tools/node/node_modules/.bin/node ]; then
    echo "node $(node --version) is older than 20: installing node@20.20.2 from the npm registry into .tools/node"
    npm install --prefix .tools/node --no-save --no-audit --no-fund --loglevel=error node@20.20.2
  fi
  export PATH="$(pwd)/.tools/node/node_modules/.bin:$PATH"
fi

if [ "${SCRIBE_SKIP_NPM:-0}" != 1 ] && [ -f tests/e2e/package.json ]; then
  (cd tests/e2e && if [ -f package-lock.json ]; then npm ci --no-audit --no-fund --loglevel=error; else npm install --no-audit --no-fund --loglevel=error; fi)
fi
