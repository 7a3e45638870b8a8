#!/usr/bin/env bash
# Fails when docs/configuration.md's table differs from what `scribe config
# --markdown` prints from the settings' one declaration (app/settings.cpp).
# With --write, regenerates the table instead.
#   scripts/check_settings_doc.sh [--write] BINARY
set -euo pipefail
cd "$(dirname "$0")/.."
write=0
if [ "${1:-}" = --write ]; then write=1; shift; fi
bin=${1:?usage: check_settings_doc.sh [--write] BINARY}
doc=docs/configuration.md
marker='<!-- generated: scribe config --markdown -->'
head=$(sed "/^$marker\$/q" "$doc")
grep -qxF "$marker" "$doc" || { echo "settings doc: $doc lacks the line $marker" >&2; exit 1; }
want=$(printf '%s\n' "$head"; "$bin" config --markdown)
if [ "$write" -eq 1 ]; then printf '%s\n' "$want" >"$doc"; exit 0; fi
if ! diff -u "$doc" <(printf '%s\n' "$want"); then
  echo "settings doc: $doc is out of date; run scripts/check_settings_doc.sh --write $bin" >&2
  exit 1
fi
echo "settings doc: docs/configuration.md matches the declaration"
