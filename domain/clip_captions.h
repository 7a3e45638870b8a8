#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/limits.h"

// Captions of a clip (a captioned render of a moment of a transcription, see
// the spec's "Clips"): which words go on which line and when each line shows,
// rendered as the ASS document that FFmpeg's `ass` filter (libass) burns into
// the frame, and as the SRT of the clip's srt_url. Pure: media/clip_render runs
// FFmpeg with the document.
namespace scribe::clips {

// The spec's clip options and their limits. The request handler validates
// them; the functions below clamp what they are given instead of failing, so
// that a render never breaks on an option the handler let through.
inline constexpr int kMinWordsPerLine = limits::kClipWordsPerLineMin;
inline constexpr int kMaxWordsPerLine = limits::kClipWordsPerLineMax;
inline constexpr int kDefaultWordsPerLine = limits::kClipWordsPerLineDefault;
inline constexpr std::size_t kMaxTitleChars = limits::kClipTitleMaxChars;

enum class Aspect { Portrait, Square, Landscape };  // "9:16" (default), "1:1", "16:9"
enum class Style { Captions, Karaoke, Minimal };    // "captions" (default), "karaoke", "minimal"
enum class Position { Upper, Middle, Lower };       // "upper", "middle", "lower" (default)

struct FrameSize {
  int width = 0;
  int height = 0;
};
// 1080x1920, 1080x1080, 1920x1080.
FrameSize frame_size(Aspect aspect);

// The spec's spellings; nullopt for anything else (the handler's 400).
std::optional<Aspect> parse_aspect(std::string_view s);
std::optional<Style> parse_style(std::string_view s);
std::optional<Position> parse_position(std::string_view s);
std::string_view aspect_name(Aspect aspect);
std::string_view style_name(Style style);
std::string_view position_name(Position position);

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb&) const = default;
};
// "#RRGGBB", hex digits of either case; nullopt otherwise.
std::optional<Rgb> parse_color(std::string_view s);
inline constexpr Rgb kDefaultHighlight{0xFF, 0xD4, 0x00};

// One transcribed word, times in seconds from the start of the recording.
struct ClipWord {
  std::string text;
  double start = 0;
  double end = 0;
};

// A caption line: times in milliseconds from the clip's start.
struct LineWord {
  std::string text;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
};
struct CaptionLine {
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  std::vector<LineWord> words;
  std::string text() const;  // the words joined by spaces
};

// A line holds at most words_per_line words and also ends after a word that
// closes a sentence (".", "!", "?", "…") and before a pause of kBreakPauseMs
// or more, so that a line never reads across a sentence or a silence.
inline constexpr int64_t kBreakPauseMs = 1000;
// A line stays up until the next line starts when the gap between them is at
// most kBridgeGapMs (no flicker between lines spoken in one breath); after a
// longer gap, and after the last line, it stays kHoldMs past its last word,
// never past the next line's start or the clip's end.
inline constexpr int64_t kBridgeGapMs = 1000;
inline constexpr int64_t kHoldMs = 600;

// The words of [clip_start, clip_end] (seconds): a word belongs to the clip
// when its midpoint is inside the range, and its times are clamped to it.
// Words are taken in order of start time; blank words are skipped. Lines that
// would last less than 10 ms (words with degenerate times) are dropped.
std::vector<CaptionLine> caption_lines(const std::vector<ClipWord>& words, double clip_start, double clip_end,
                                       int words_per_line = kDefaultWordsPerLine);

struct CaptionOptions {
  FrameSize frame = frame_size(Aspect::Portrait);
  Style style = Style::Captions;
  Position position = Position::Lower;
  int words_per_line = kDefaultWordsPerLine;
  Rgb highlight = kDefaultHighlight;
  std::string title;  // drawn at the top for the whole clip when not blank
  // A family fontconfig can find: libass asks it by name, and a missing font
  // silently falls back to whatever fontconfig offers (Debian's
  // fonts-dejavu-core provides this one).
  std::string font = "DejaVu Sans";
};

// Where the styles put things, in pixels of the frame (PlayResX/Y equal the
// frame size, so ASS coordinates are pixels). Exposed so that the render can
// keep its waveform clear of the captions and tests can find the boxes.
struct CaptionLayout {
  int font_size = 0;
  int title_font_size = 0;
  int box_padding = 0;  // BorderStyle 3 "outline": the box's margin around the text
  int margin_h = 0;     // MarginL and MarginR
  int alignment = 2;    // ASS numpad alignment of the caption style: 8, 5 or 2
  int margin_v = 0;     // from the top (upper) or bottom (lower) edge; 0 for middle
  int title_margin_v = 0;
};
CaptionLayout caption_layout(const CaptionOptions& options);

// The ASS document: [Script Info] with PlayResX/PlayResY, [V4+ Styles] and
// [Events], times relative to the clip's start. Layers: the caption lines on
// 0, the karaoke highlight on 1 (drawn above the line it highlights), the
// title on 2 (a layer of its own, so libass never moves captions for it).
std::string render_ass(const std::vector<ClipWord>& words, double clip_start, double clip_end,
                       const CaptionOptions& options);

// The clip's SRT: one cue per caption line, times relative to the clip's
// start; empty when no word is in range.
std::string render_srt(const std::vector<ClipWord>& words, double clip_start, double clip_end,
                       int words_per_line = kDefaultWordsPerLine);

// Text made safe for an ASS Dialogue: "{" and "}" become libass's escapes
// "\{" and "\}", a backslash is followed by U+2060 WORD JOINER (invisible) so
// it can never start "\N", "\n" or "\h", and CR/LF become spaces.
std::string escape_ass_text(std::string_view text);

// "&HAABBGGRR" (ASS colours are BGR with alpha, 00 opaque).
std::string ass_color(Rgb color, uint8_t alpha = 0);
// "H:MM:SS.CC" (centiseconds, rounded to nearest).
std::string ass_time(int64_t ms);

}  // namespace scribe::clips
