#!/usr/bin/env bash
# Layers only point down. Fails (exit 1) naming every #include that runs from
# a folder to one above it or beside it. The order, lowest first:
#   common       plumbing: configuration, database, HTTP client, crypto, logging
#   eventstore   the append-only log and its subscriptions
#   domain       pure decisions and shared contracts (events, artifacts)
#   commands     load, decide in domain/, append      } peers: neither
#   projections  read models built from the log       } includes the other
#   media        media intake: fetching links, probing and decoding with FFmpeg } peers: neither
#   lexicon      lexical resources from Debian's packages: the recognizer's     } includes the other
#                pronunciations (sound-alikes) and WordNet (meaning-alikes, parts of speech)
#   speech       the speech engine: voice activity, recognizers, diarization, sentences } peers: neither
#   enrichment   what is made of a transcript: sections, chapters, acts, Q&A        } includes the other
#   workers      processes that consume queues and issue commands (transcription
#                jobs, webhook delivery)
#   api          the HTTP layer (reads projections, issues commands)
#   app          the scribe binary
# Tests (*_test.cpp, *_pgtest.cpp) may include what they test and any lower
# layer, plus tests/; bench/ and tests/ may include anything.
set -euo pipefail
cd "$(dirname "$0")/.."
rank() {
  case "$1" in
    common) echo 0 ;; eventstore) echo 1 ;; domain) echo 2 ;;
    commands|projections) echo 3 ;; media|lexicon) echo 4 ;; speech|enrichment) echo 5 ;;
    workers) echo 6 ;; api) echo 7 ;; app) echo 8 ;;
    *) echo "" ;;
  esac
}
bad=0
while IFS= read -r file; do
  from=${file%%/*}
  from_rank=$(rank "$from")
  [ -n "$from_rank" ] || continue
  while IFS= read -r inc; do
    to=${inc%%/*}
    [ "$to" = "$from" ] && continue
    [ "$to" = tests ] && [[ "$file" == *_pgtest.cpp || "$file" == *_test.cpp ]] && continue
    to_rank=$(rank "$to")
    [ -n "$to_rank" ] || continue
    if [ "$to_rank" -ge "$from_rank" ]; then
      # A test may reach sideways or up only to build its fixtures' data.
      if [[ "$file" == *_pgtest.cpp || "$file" == *_test.cpp ]] && [ "$to_rank" -lt 8 ]; then continue; fi
      echo "layering: $file includes \"$inc\" ($from may not include $to)"
      bad=1
    fi
  done < <(sed -nE 's/^#include "([a-z_]+\/[^"]+)".*/\1/p' "$file")
done < <(git ls-files '*.cpp' '*.h')
if [ "$bad" -ne 0 ]; then exit 1; fi
echo "layering: every include points down"
