#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/transcript_text.h"

// Subtitle cues for GET /transcriptions/{id}/subtitles: the presets, cue
// building (which words go into which cue, line breaking, timing) and the
// four renderings. Pure functions; the handler only reads rows and sends.
namespace scribe::subtitles {

// A platform's reading rules. Every preset satisfies
// max_lines * max_chars_per_line <= max_cps * max_duration_ms / 1000, so a
// full cue can always be shown long enough to be read when there is room.
struct Preset {
  const char* name;
  int max_chars_per_line;  // Unicode code points, speaker label included
  int max_lines;
  int min_duration_ms;
  int max_duration_ms;
  double max_cps;  // reading speed: characters (spaces included) per second
  int min_gap_ms;  // blank time between consecutive cues
};

const std::vector<Preset>& presets();
const Preset* find_preset(std::string_view name);
inline constexpr const char* kDefaultPreset = "youtube";

// A cue never spans a pause between words longer than this (word mode).
inline constexpr int64_t kMaxPauseInCueMs = 1500;

// One word as shown: `text` plus the punctuation that follows it.
struct Token {
  std::string text;
  std::optional<std::string> punctuation;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  std::optional<std::string> speaker;
  std::optional<double> confidence;  // the recognizer's, for the JSON words
  std::size_t display_chars = 0;     // code points of text + punctuation
  // The word classes of `text` (is_article and so on below), found once per
  // token: the cue and line breaking rules ask for them many times a word.
  bool article = false;
  bool preposition = false;
  bool conjunction = false;
};

struct Cue {
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  std::optional<std::string> speaker;
  std::string label;            // "[SPEAKER_00] " when labelled, else empty
  std::size_t first_token = 0;  // into CueSet::tokens
  std::size_t token_count = 0;
  std::vector<std::size_t> line_tokens;  // tokens per line, in order
  std::vector<std::string> lines;        // rendered lines; the label opens the first
  std::size_t chars = 0;                 // code points of all lines together, label included
};

enum class Mode { Word, Sentence };

struct CueSet {
  Mode mode = Mode::Sentence;
  std::vector<Token> tokens;
  std::vector<Cue> cues;
};

struct BuildOptions {
  const Preset* preset = nullptr;
  bool speaker_labels = false;
};

// Word mode: cues from word timings. Cues never span a speaker change or a
// pause over kMaxPauseInCueMs; they end preferably at sentence ends, then
// after commas or before conjunctions, never right after an article.
CueSet build_from_words(const std::vector<transcript::Word>& words, const BuildOptions& options);
// Sentence mode: one cue per segment when it fits the preset, otherwise the
// segment is split by the same rules. Word times inside a segment are
// interpolated by character count.
CueSet build_from_segments(const std::vector<transcript::Segment>& segments, const BuildOptions& options);
// Materialized cues (a transcript revision, domain/transcript_revision.h):
// one cue per segment, shown exactly at the segment's times; only the
// preset's line breaking applies (a cue is never split, merged or retimed,
// and may hold more lines than the preset's max_lines when its editor wrote
// that much). Mode::Sentence. `words` (segment_id naming their segment, in
// order) time the tokens of the karaoke rendering; a segment without words
// has its text's words spread over it by character count.
CueSet build_from_cues(const std::vector<transcript::Segment>& cues, const std::vector<transcript::Word>& words,
                       const BuildOptions& options);

// The speaker label form: "[SPEAKER_00] ", "[Unknown] " for a null speaker.
std::string speaker_label(const std::optional<std::string>& speaker);

// Renderings. Every text format ends with a newline.
std::string render_srt(const CueSet& set);
std::string render_vtt(const CueSet& set);
// WebVTT with an absolute <hh:mm:ss.mmm> tag before every word after the
// first of a cue, kept strictly inside the cue and increasing.
std::string render_vtt_karaoke(const CueSet& set);
// {"cues":[{"startMs","endMs","text","speaker"?,"words"?}]}; `words` only in
// word mode, `speaker` only when known.
std::string render_json(const CueSet& set);

// "hh:mm:ss,mmm" (SRT) or "hh:mm:ss.mmm" (WebVTT).
std::string format_timestamp(int64_t ms, char separator);

// Word classes used by the line and cue breaking rules (lower-case ASCII).
bool is_article(std::string_view word);
bool is_preposition(std::string_view word);
bool is_conjunction(std::string_view word);

}  // namespace scribe::subtitles
