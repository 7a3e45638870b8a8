#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// The transcript read models as plain values, and the raw text exports of
// GET /transcriptions/{id}/transcript. Everything here is pure: the API layer
// reads rows, calls these functions and sends the result, so the rendering is
// tested and benchmarked without a database.
namespace scribe::transcript {

// One row of `segments` (sentence-level; text already cased and punctuated).
struct Segment {
  int64_t id = 0;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  std::optional<std::string> speaker;  // null: the pipeline could not attribute it
  std::string text;
};

// One row of `words` (text cased, punctuation kept apart).
struct Word {
  std::string text;
  std::optional<std::string> punctuation;  // ".", ",", "?" or null
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  std::optional<std::string> speaker;  // that of the owning segment
  int64_t segment_id = 0;
  // The recognizer's posterior for the word (0-1), where the reader asked
  // for it (the subtitles' JSON words); absent for edited words.
  std::optional<double> confidence;
};

// A confidence as the API shows it: clamped to 0-1 and rounded to 3 decimals.
// /words and the subtitles' JSON words both print this value, so one word
// never reads 0.93 in one and 0.929 in the other (printf's "%.3f" rounds the
// binary value, 0.92949..., down, where round(x * 1000) rounds 929.5 up).
inline double shown_confidence(double c) {
  const double clamped = c < 0 ? 0 : (c > 1 ? 1 : c);
  return static_cast<double>(static_cast<int64_t>(clamped * 1000 + 0.5)) / 1000;
}

// Chapters are not produced yet; the Markdown export lists them once they are.
struct Chapter {
  int64_t start_ms = 0;
  std::string title;
};

// A turn is a maximal run of consecutive segments with the same speaker (two
// null speakers count as the same), merged into one paragraph. Segments whose
// text is blank are skipped and do not break a turn.
struct Turn {
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  std::optional<std::string> speaker;
  std::string text;  // segment texts joined with single spaces
  std::size_t segment_count = 0;
};

struct TextOptions {
  bool speaker_labels = true;  // "SPEAKER_00: " or "Unknown: "
  bool timestamps = true;      // "[hh:mm:ss] "
};

std::vector<Turn> turns(const std::vector<Segment>& segments);

// Plain text: one paragraph per turn, paragraphs separated by a blank line,
// each "[hh:mm:ss] SPEAKER_00: text" with the prefixes the options ask for.
// Empty when no segment has text (the caller answers artifact_missing then).
std::string render_txt(const std::vector<Segment>& segments, const TextOptions& options);

// Markdown: "# <title>", the chapter list when there are chapters, a "---"
// rule, then the turns as in render_txt with the speaker label in bold.
std::string render_md(const std::string& title, const std::vector<Chapter>& chapters,
                      const std::vector<Segment>& segments, const TextOptions& options);

// "hh:mm:ss" (hours are at least two digits; negative times count as 0).
std::string format_hms(int64_t ms);

// A file-name-safe slug of a title: lower-case ASCII letters and digits
// joined by single hyphens, at most 60 characters; "transcription-<id>" when
// the title is absent or has no such characters.
std::string slug(const std::optional<std::string>& title, int64_t id);

// Number of Unicode code points in UTF-8 text (what a subtitle line counts).
std::size_t display_length(std::string_view utf8);

}  // namespace scribe::transcript
