#!/usr/bin/env bash
# Builds the recordings of the topic segmentation benchmark (sets.txt) and
# transcribes them with the real speech pipeline. Output goes to a work dir,
# never into the repository:
#
#   WORK/NAME.wav     the recording, 16 kHz mono 16-bit
#   WORK/NAME.labels  the reference: one line per passage and per paragraph (see below)
#   WORK/NAME.json    `scribe transcribe NAME.wav` (the transcript artifact)
#   WORK/NAME.spec    the sets.txt line the three were made from
#   WORK/parts/       synthesized paragraphs and silences (a cache)
#
# For each passage of a recording, each of its two paragraphs is synthesized
# with flite (`flite -voice V -f paragraph.txt -o out.wav`) and converted with
# sox to 16 kHz mono; the paragraphs and passages are joined with pauses of
# 0.5-1.5 s (in steps of 0.1 s, the same range inside a passage as between
# passages, chosen by a checksum of the recording name and position so every
# run makes the same audio). The label file:
#
#   # set tune recording tune-1 duration 372.184
#   passage 0.000 61.375 01_beekeeping slt
#   paragraph 0.000 29.870 01_beekeeping 1
#   paragraph 30.970 61.375 01_beekeeping 2
#   passage 62.475 120.731 02_volcanoes slt
#   ...
#
# `passage START END NAME VOICES`: START is where the passage's audio begins
# (after the pause before it), END where its last paragraph's audio ends. The
# true topic boundaries are the STARTs of every passage after the first.
# `paragraph START END NAME P` (P = 1 or 2): where each paragraph's audio
# begins and ends (the pause between the two is in neither); the ask benchmark
# (bench/ask_eval) judges its questions on these. Readers skip lines they do
# not know (enrichment_quality_benchmark reads only `#` and `passage`).
#
# Steps whose outputs exist are skipped; a recording whose sets.txt line
# changed is rebuilt, and so is the audio of a passage whose text changed
# (delete NAME.wav to rebuild a recording that uses it). The labels are worked
# out from the cached parts on every run and rewritten when they differ, which
# touches neither NAME.wav nor NAME.json: a labels-only change (such as the
# paragraph lines) costs no synthesis and no transcription. A NAME.wav whose
# length no longer matches its parts is joined again (and its transcript
# dropped). Transcription runs under `nice -n 10`.
#
# Usage: bench/enrichment_eval/make_set.sh [WORK_DIR] [SET_OR_RECORDING ...]
#   WORK_DIR   default /tmp/scribe-enrich-eval
#   then which sets (tune, report) or recordings (tune-2) to build; default all
# Settings:
#   SCRIBE_BIN        default build/scribe (of the repository)
#   SCRIBE_EVAL_SETS  the manifest, default bench/enrichment_eval/sets.txt
#   TRANSCRIBE=0      only synthesize (no transcripts)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${1:-/tmp/scribe-enrich-eval}
[ $# -gt 0 ] && shift
only=("$@")
manifest=${SCRIBE_EVAL_SETS:-$here/sets.txt}
bin=${SCRIBE_BIN:-$root/build/scribe}
transcribe=${TRANSCRIBE:-1}
rate=16000

for tool in flite sox soxi cksum awk; do
  command -v "$tool" >/dev/null || { echo "make_set.sh: $tool is missing (apt-get install -y flite sox)" >&2; exit 1; }
done
mkdir -p "$work/parts"
cd "$work"

# A pause of 0.5-1.5 s for position KEY, from its checksum.
pause_for() {
  local sum
  sum=$(printf '%s' "$1" | cksum | awk '{print $1}')
  awk -v s="$sum" 'BEGIN {printf "%.1f", 0.5 + (s % 11) / 10}'
}

# parts/sil_X.wav: X seconds of silence.
silence() {
  local f="parts/sil_$1.wav"
  [ -s "$f" ] || sox -n -r $rate -c 1 -b 16 "$f" trim 0 "$1"
  echo "$f"
}

# parts/NN_pP_VOICE.wav: paragraph P of passage file $1 by flite voice $3.
paragraph_wav() {
  local passage=$1 para=$2 voice=$3 base out txt raw
  base=$(basename "$passage" .txt)
  out="parts/${base}_p${para}_${voice}.wav"
  txt="parts/${base}_p${para}.txt"
  awk -v want="$para" 'BEGIN {RS = ""} NR == want {print}' "$passage" >"$txt.new"
  [ -s "$txt.new" ] || { echo "make_set.sh: $passage has no paragraph $para" >&2; exit 1; }
  if ! cmp -s "$txt.new" "$txt"; then  # the passage was edited: its audio is stale
    mv "$txt.new" "$txt"
    rm -f "parts/${base}_p${para}_"*.wav
  else
    rm -f "$txt.new"
  fi
  if [ ! -s "$out" ]; then
    raw="parts/${base}_p${para}_${voice}.raw.wav"
    flite -voice "$voice" -f "$txt" -o "$raw" >&2
    sox "$raw" -r $rate -c 1 -b 16 "$out" >&2
    rm -f "$raw"
  fi
  echo "$out"
}

samples() { soxi -s "$1"; }

wanted() {  # set name
  [ ${#only[@]} -eq 0 ] && return 0
  local w
  for w in "${only[@]}"; do [ "$w" = "$1" ] || [ "$w" = "$2" ] && return 0; done
  return 1
}

build_recording() {
  local set=$1 name=$2
  shift 2
  local spec="$set $name $*"
  if [ -f "$name.spec" ] && [ "$(cat "$name.spec")" != "$spec" ]; then
    echo "$name: sets.txt changed, rebuilding" >&2
    rm -f "$name.wav" "$name.labels" "$name.json"
  fi
  # The parts and the labels are worked out every run (cheap: the parts are
  # cached); the recording is joined only when it is missing or no longer
  # matches them, and only then is its transcript dropped. A change of the
  # labels alone (a new kind of line) rewrites NAME.labels and nothing else.
  local files=() labels=() matches=() pos=0 index=0 item num voices v1 v2 passage base f start end pause p1end p2start
  for item in "$@"; do
    num=${item%%:*}
    voices=${item#*:}
    v1=${voices%%/*}
    v2=${voices#*/}
    matches=("$here"/passages/"${num}"_*.txt)
    passage=${matches[0]}
    [ -f "$passage" ] || { echo "make_set.sh: no passage $num" >&2; exit 1; }
    base=$(basename "$passage" .txt)
    if [ $index -gt 0 ]; then
      pause=$(pause_for "$name:$index:between")
      files+=("$(silence "$pause")")
      pos=$((pos + $(samples "parts/sil_$pause.wav")))
    fi
    start=$pos
    f=$(paragraph_wav "$passage" 1 "$v1")
    files+=("$f")
    pos=$((pos + $(samples "$f")))
    p1end=$pos
    pause=$(pause_for "$name:$index:within")
    files+=("$(silence "$pause")")
    pos=$((pos + $(samples "parts/sil_$pause.wav")))
    p2start=$pos
    f=$(paragraph_wav "$passage" 2 "$v2")
    files+=("$f")
    pos=$((pos + $(samples "$f")))
    end=$pos
    labels+=("$(awk -v s="$start" -v e="$end" -v r=$rate -v n="$base" -v v="$voices" \
      'BEGIN {printf "passage %.3f %.3f %s %s", s / r, e / r, n, v}')")
    labels+=("$(awk -v s="$start" -v e="$p1end" -v r=$rate -v n="$base" \
      'BEGIN {printf "paragraph %.3f %.3f %s 1", s / r, e / r, n}')")
    labels+=("$(awk -v s="$p2start" -v e="$end" -v r=$rate -v n="$base" \
      'BEGIN {printf "paragraph %.3f %.3f %s 2", s / r, e / r, n}')")
    index=$((index + 1))
  done
  if [ ! -s "$name.wav" ] || [ "$(samples "$name.wav")" != "$pos" ]; then
    sox "${files[@]}" "$name.tmp.wav"
    mv "$name.tmp.wav" "$name.wav"
    rm -f "$name.json"
    echo "$name: $(soxi -d "$name.wav"), $index passages" >&2
  fi
  {
    awk -v s="$set" -v n="$name" -v p="$pos" -v r=$rate \
      'BEGIN {printf "# set %s recording %s duration %.3f\n", s, n, p / r}'
    printf '%s\n' "${labels[@]}"
  } >"$name.labels.tmp"
  if cmp -s "$name.labels.tmp" "$name.labels"; then
    rm -f "$name.labels.tmp"
  else
    mv "$name.labels.tmp" "$name.labels"
    echo "$name: labels written" >&2
  fi
  echo "$spec" >"$name.spec"
  if [ "$transcribe" = 1 ] && [ ! -s "$name.json" ]; then
    [ -x "$bin" ] || { echo "make_set.sh: $bin not found (set SCRIBE_BIN, or TRANSCRIBE=0)" >&2; exit 1; }
    local t0=$SECONDS
    nice -n 10 "$bin" transcribe "$name.wav" >"$name.json.tmp"
    mv "$name.json.tmp" "$name.json"
    echo "$name: transcribed in $((SECONDS - t0)) s" >&2
  fi
}

while read -r set name rest; do
  case "$set" in '' | '#'*) continue ;; esac
  wanted "$set" "$name" || continue
  # shellcheck disable=SC2086
  build_recording "$set" "$name" $rest
done <"$manifest"
echo "work dir: $work" >&2
