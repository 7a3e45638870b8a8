#!/usr/bin/env bash
# Builds the recordings of the ask benchmark that bench/enrichment_eval does
# not already make (bench/ask_eval/README.md). Output goes to a work dir, never
# into the repository:
#
#   WORK/dialogue-NN.wav     a dialogue of dialogues/NN_*.txt, 16 kHz mono 16-bit
#   WORK/dialogue-NN.labels  its reference: one line per turn (below)
#   WORK/passage-NN.wav      passage NN of bench/enrichment_eval/passages alone
#   WORK/passage-NN.labels   its passage and paragraph spans (make_set.sh's format)
#   WORK/parts/              synthesized turns, paragraphs and silences (a cache)
#
# Nothing is transcribed here: bench/ask_quality.sh uploads the recordings to
# `scribe serve`, which transcribes them.
#
# A dialogue file: `# set tune|report`, `# title ...`, then one turn a line,
# `VOICE: words`, VOICE a flite voice (slt, rms, awb, kal16). Each turn is
# synthesized with `flite -voice VOICE -f turn.txt -o out.wav`, converted by sox
# to 16 kHz mono, and the turns are joined with pauses of 0.4-1.0 s (steps of
# 0.1 s, chosen by a checksum of the recording name and turn number, so every
# run makes the same audio). The labels:
#
#   # set tune recording dialogue-01 duration 158.412
#   # dialogue 01_moving_house speakers slt rms awb
#   turn 0.000 6.215 slt 1
#   turn 6.915 12.400 rms 2
#   ...
#
# `turn START END SPEAKER INDEX`: where turn INDEX (from 1) begins and ends,
# SPEAKER its voice. The single-passage recordings are made by
# bench/enrichment_eval/make_set.sh from bench/ask_eval/passages.txt with
# TRANSCRIBE=0 (their labels carry `passage` and `paragraph` lines).
#
# Cached: a turn is synthesized again only when its words or voice changed, a
# recording joined again only when one of its turns is newer than it or its
# length no longer matches; labels are rewritten only when they differ.
#
# Usage: bench/ask_eval/make_dialogues.sh [WORK_DIR] [WHAT ...]
#   WORK_DIR  default /tmp/scribe-ask-eval
#   WHAT      tune, report, dialogues, passages, dialogue-NN or passage-NN; default everything
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${1:-/tmp/scribe-ask-eval}
[ $# -gt 0 ] && shift
only=("$@")
rate=16000

for tool in flite sox soxi cksum awk; do
  command -v "$tool" >/dev/null || { echo "make_dialogues.sh: $tool is missing (apt-get install -y flite sox)" >&2; exit 1; }
done
mkdir -p "$work/parts"
work=$(cd "$work" && pwd)

# wanted KIND SET NAME: whether the command line asks for this recording.
wanted() {
  [ ${#only[@]} -eq 0 ] && return 0
  local w
  for w in "${only[@]}"; do
    [ "$w" = "$1" ] || [ "$w" = "$2" ] || [ "$w" = "$3" ] && return 0
  done
  return 1
}

# 1. Single passages, through make_set.sh (no transcription).
passage_args=()
want_passages=0
if [ ${#only[@]} -eq 0 ]; then
  want_passages=1
else
  for w in "${only[@]}"; do
    case "$w" in
      passages) want_passages=1 ;;
      tune | report | passage-*) want_passages=1; passage_args+=("$w") ;;
    esac
  done
  # "passages" alone (or with dialogue names) means all of them.
  for w in "${only[@]}"; do [ "$w" = passages ] && passage_args=(); done
fi
if [ $want_passages = 1 ]; then
  SCRIBE_EVAL_SETS=$here/passages.txt TRANSCRIBE=0 "$root/bench/enrichment_eval/make_set.sh" "$work" \
    ${passage_args[@]+"${passage_args[@]}"}
fi

# 2. Dialogues.
cd "$work"

pause_for() {  # 0.4-1.0 s for position KEY
  local sum
  sum=$(printf '%s' "$1" | cksum | awk '{print $1}')
  awk -v s="$sum" 'BEGIN {printf "%.1f", 0.4 + (s % 7) / 10}'
}

silence() {
  local f="parts/sil_$1.wav"
  [ -s "$f" ] || sox -n -r $rate -c 1 -b 16 "$f" trim 0 "$1"
  echo "$f"
}

samples() { soxi -s "$1"; }

# parts/dialogue-NN_tK_VOICE.wav: turn K of a dialogue by VOICE, words $4.
turn_wav() {
  local name=$1 k=$2 voice=$3 words=$4 base txt out raw
  base="parts/${name}_t${k}"
  txt="$base.txt"
  out="${base}_${voice}.wav"
  printf '%s\n' "$words" >"$txt.new"
  if ! cmp -s "$txt.new" "$txt"; then
    mv "$txt.new" "$txt"
    rm -f "${base}_"*.wav
  else
    rm -f "$txt.new"
  fi
  if [ ! -s "$out" ]; then
    rm -f "${base}_"*.wav
    raw="${base}_${voice}.raw.wav"
    flite -voice "$voice" -f "$txt" -o "$raw" >&2
    sox "$raw" -r $rate -c 1 -b 16 "$out" >&2
    rm -f "$raw"
  fi
  echo "$out"
}

build_dialogue() {
  local file=$1 num name set title base
  base=$(basename "$file" .txt)
  num=${base%%_*}
  name="dialogue-$num"
  set=$(awk '$1 == "#" && $2 == "set" {print $3; exit}' "$file")
  title=$(awk '$1 == "#" && $2 == "title" {sub(/^# title /, ""); print; exit}' "$file")
  case "$set" in tune | report) ;; *) echo "make_dialogues.sh: $file has no '# set tune|report' line" >&2; exit 1 ;; esac
  wanted dialogues "$set" "$name" || return 0
  local files=() labels=() speakers=() pos=0 k=0 voice words f start newer=0 line
  while IFS= read -r line; do
    case "$line" in '' | '#'*) continue ;; esac
    voice=${line%%:*}
    words=${line#*:}
    words=${words# }
    case "$voice" in slt | rms | awb | kal16) ;; *) echo "make_dialogues.sh: $file: unknown voice '$voice'" >&2; exit 1 ;; esac
    k=$((k + 1))
    if [ $k -gt 1 ]; then
      f=$(silence "$(pause_for "$name:$k")")
      files+=("$f")
      pos=$((pos + $(samples "$f")))
    fi
    start=$pos
    f=$(turn_wav "$name" "$k" "$voice" "$words")
    [ -f "$name.wav" ] && [ "$f" -nt "$name.wav" ] && newer=1
    files+=("$f")
    pos=$((pos + $(samples "$f")))
    labels+=("$(awk -v s="$start" -v e="$pos" -v r=$rate -v v="$voice" -v k="$k" \
      'BEGIN {printf "turn %.3f %.3f %s %d", s / r, e / r, v, k}')")
    case " ${speakers[*]-} " in *" $voice "*) ;; *) speakers+=("$voice") ;; esac
  done <"$file"
  # Turns of a dialogue that lost some are left in parts/; harmless.
  if [ ! -s "$name.wav" ] || [ $newer = 1 ] || [ "$(samples "$name.wav")" != "$pos" ]; then
    sox "${files[@]}" "$name.tmp.wav"
    mv "$name.tmp.wav" "$name.wav"
    echo "$name: $(soxi -d "$name.wav"), $k turns, ${#speakers[@]} speakers ($title)" >&2
  fi
  {
    awk -v s="$set" -v n="$name" -v p="$pos" -v r=$rate \
      'BEGIN {printf "# set %s recording %s duration %.3f\n", s, n, p / r}'
    echo "# dialogue $base speakers ${speakers[*]}"
    printf '%s\n' "${labels[@]}"
  } >"$name.labels.tmp"
  if cmp -s "$name.labels.tmp" "$name.labels"; then rm -f "$name.labels.tmp"; else mv "$name.labels.tmp" "$name.labels"; fi
}

for file in "$here"/dialogues/[0-9][0-9]_*.txt; do
  [ -f "$file" ] || continue
  build_dialogue "$file"
done
echo "work dir: $work" >&2
