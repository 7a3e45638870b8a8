#include "domain/clip_captions.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/text.h"
#include "domain/subtitles.h"

namespace scribe::clips {
namespace {

// The style names of the document; tests and renders refer to them.
constexpr const char* kCaptionStyle = "Caption";
constexpr const char* kTitleStyle = "Title";

int64_t to_ms(double seconds) { return static_cast<int64_t>(std::llround(seconds * 1000.0)); }

// Centiseconds, the resolution of ASS times. Every boundary goes through this
// one rounding, so a line that ends where the next starts still does so.
int64_t to_cs(int64_t ms) { return ms < 0 ? 0 : (ms + 5) / 10; }

std::string cs_time(int64_t cs) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld.%02lld", static_cast<long long>(cs / 360000),
                static_cast<long long>(cs / 6000 % 60), static_cast<long long>(cs / 100 % 60),
                static_cast<long long>(cs % 100));
  return buf;
}

// "&HBBGGRR&", the colour form of override tags (\1c, \3c).
std::string tag_color(Rgb c) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "&H%02X%02X%02X&", c.b, c.g, c.r);
  return buf;
}

// Text on the highlight box: black on light colours, white on dark ones
// (Rec. 709 luma; 140 keeps white on the saturated reds and blues).
Rgb text_on(Rgb box) {
  const double luma = 0.2126 * box.r + 0.7152 * box.g + 0.0722 * box.b;
  return luma > 140 ? Rgb{0, 0, 0} : Rgb{0xFF, 0xFF, 0xFF};
}

bool ends_sentence(std::string_view w) {
  while (!w.empty() && (w.back() == '"' || w.back() == '\'' || w.back() == ')' || w.back() == ']')) w.remove_suffix(1);
  if (w.ends_with("\xE2\x80\x9D") || w.ends_with("\xE2\x80\x99")) w.remove_suffix(3);  // closing curly quotes
  if (w.empty()) return false;
  return w.back() == '.' || w.back() == '!' || w.back() == '?' || w.ends_with("\xE2\x80\xA6");
}

// CR and LF as spaces: neither ASS events nor SRT cues may hold a line break
// that the caption layout did not put there.
std::string one_line(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c == '\r' || c == '\n') c = ' ';
  return out;
}

std::string clean_title(std::string_view title) {
  std::string t = one_line(trim(title));
  if (utf8_length(t) <= kMaxTitleChars) return t;
  // Cut after kMaxTitleChars code points (continuation bytes are 10xxxxxx).
  std::size_t points = 0, i = 0;
  for (; i < t.size(); ++i) {
    if ((static_cast<unsigned char>(t[i]) & 0xC0) != 0x80 && points++ == kMaxTitleChars) break;
  }
  return std::string(trim(std::string_view(t).substr(0, i)));
}

}  // namespace

FrameSize frame_size(Aspect aspect) {
  switch (aspect) {
    case Aspect::Square:
      return {1080, 1080};
    case Aspect::Landscape:
      return {1920, 1080};
    case Aspect::Portrait:
      break;
  }
  return {1080, 1920};
}

std::optional<Aspect> parse_aspect(std::string_view s) {
  if (s == "9:16") return Aspect::Portrait;
  if (s == "1:1") return Aspect::Square;
  if (s == "16:9") return Aspect::Landscape;
  return std::nullopt;
}

std::optional<Style> parse_style(std::string_view s) {
  if (s == "captions") return Style::Captions;
  if (s == "karaoke") return Style::Karaoke;
  if (s == "minimal") return Style::Minimal;
  return std::nullopt;
}

std::optional<Position> parse_position(std::string_view s) {
  if (s == "upper") return Position::Upper;
  if (s == "middle") return Position::Middle;
  if (s == "lower") return Position::Lower;
  return std::nullopt;
}

std::string_view aspect_name(Aspect a) {
  return a == Aspect::Square ? "1:1" : a == Aspect::Landscape ? "16:9" : "9:16";
}
std::string_view style_name(Style s) {
  return s == Style::Karaoke ? "karaoke" : s == Style::Minimal ? "minimal" : "captions";
}
std::string_view position_name(Position p) {
  return p == Position::Upper ? "upper" : p == Position::Middle ? "middle" : "lower";
}

std::optional<Rgb> parse_color(std::string_view s) {
  if (s.size() != 7 || s[0] != '#') return std::nullopt;
  uint8_t v[3];
  for (int i = 0; i < 3; ++i) {
    int byte = 0;
    for (char c : s.substr(1 + 2 * i, 2)) {
      int d = c >= '0' && c <= '9'   ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                     : -1;
      if (d < 0) return std::nullopt;
      byte = byte * 16 + d;
    }
    v[i] = static_cast<uint8_t>(byte);
  }
  return Rgb{v[0], v[1], v[2]};
}

std::string CaptionLine::text() const {
  std::string out;
  for (const auto& w : words) {
    if (!out.empty()) out += ' ';
    out += w.text;
  }
  return out;
}

std::vector<CaptionLine> caption_lines(const std::vector<ClipWord>& words, double clip_start, double clip_end,
                                       int words_per_line) {
  words_per_line = std::clamp(words_per_line, kMinWordsPerLine, kMaxWordsPerLine);
  const int64_t length_ms = std::max<int64_t>(0, to_ms(clip_end - clip_start));
  std::vector<LineWord> in_range;
  for (const auto& w : words) {
    const double mid = (w.start + w.end) / 2;
    if (mid < clip_start || mid >= clip_end) continue;
    std::string text = one_line(trim(w.text));
    if (text.empty()) continue;
    const int64_t s = std::clamp<int64_t>(to_ms(w.start - clip_start), 0, length_ms);
    const int64_t e = std::clamp<int64_t>(to_ms(w.end - clip_start), s, length_ms);
    in_range.push_back({std::move(text), s, e});
  }
  std::stable_sort(in_range.begin(), in_range.end(),
                   [](const LineWord& a, const LineWord& b) { return a.start_ms < b.start_ms; });

  std::vector<CaptionLine> lines;
  for (auto& w : in_range) {
    const bool full = !lines.empty() && static_cast<int>(lines.back().words.size()) >= words_per_line;
    const LineWord* prev = lines.empty() ? nullptr : &lines.back().words.back();
    if (lines.empty() || full || ends_sentence(prev->text) || w.start_ms - prev->end_ms >= kBreakPauseMs) {
      lines.emplace_back();
    }
    lines.back().words.push_back(std::move(w));
  }
  for (std::size_t i = 0; i < lines.size(); ++i) {
    CaptionLine& line = lines[i];
    line.start_ms = line.words.front().start_ms;
    const int64_t last_end = line.words.back().end_ms;
    if (i + 1 < lines.size()) {
      const int64_t next = lines[i + 1].words.front().start_ms;
      line.end_ms = next - last_end <= kBridgeGapMs ? next : std::min(last_end + kHoldMs, next);
    } else {
      line.end_ms = std::min(last_end + kHoldMs, length_ms);
    }
  }
  std::erase_if(lines, [](const CaptionLine& l) { return l.end_ms - l.start_ms < 10; });
  return lines;
}

CaptionLayout caption_layout(const CaptionOptions& o) {
  const int w = o.frame.width, h = o.frame.height;
  const bool portrait = h > w;
  const double base = std::min(w, h);
  CaptionLayout l;
  l.font_size = static_cast<int>(std::lround(base * 0.066));
  l.title_font_size = static_cast<int>(std::lround(base * 0.052));
  l.box_padding = static_cast<int>(std::lround(base * 0.013));
  l.margin_h = static_cast<int>(std::lround(w * 0.07));
  // Vertical video players cover the bottom and top of the frame with their
  // own controls and text, hence the wider margins there.
  l.title_margin_v = static_cast<int>(std::lround(h * (portrait ? 0.06 : 0.05)));
  switch (o.position) {
    case Position::Lower:
      l.alignment = 2;
      l.margin_v = static_cast<int>(std::lround(h * (portrait ? 0.18 : 0.09)));
      break;
    case Position::Middle:
      l.alignment = 5;
      l.margin_v = 0;
      break;
    case Position::Upper: {
      l.alignment = 8;
      l.margin_v = static_cast<int>(std::lround(h * (portrait ? 0.12 : 0.08)));
      const std::string title = clean_title(o.title);
      if (!title.empty()) {
        // Below the title. libass wraps the title itself, so its line count is
        // estimated from DejaVu Sans Bold's average advance (about 0.62 em),
        // rounded up, which errs towards a larger gap rather than an overlap.
        const double per_line = (w - 2.0 * l.margin_h) / (0.62 * l.title_font_size);
        const int title_lines = std::max(1, static_cast<int>(std::ceil(utf8_length(title) / per_line)));
        const int below_title = l.title_margin_v + static_cast<int>(title_lines * l.title_font_size * 1.25) +
                                l.box_padding + l.font_size / 2;
        l.margin_v = std::max(l.margin_v, below_title);
      }
      break;
    }
  }
  return l;
}

std::string ass_color(Rgb c, uint8_t alpha) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "&H%02X%02X%02X%02X", alpha, c.b, c.g, c.r);
  return buf;
}

std::string ass_time(int64_t ms) { return cs_time(to_cs(ms)); }

std::string escape_ass_text(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 8);
  for (char c : text) {
    if (c == '{' || c == '}') {
      out += '\\';
      out += c;
    } else if (c == '\\') {
      out += "\\\xE2\x81\xA0";
    } else if (c == '\r' || c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string render_ass(const std::vector<ClipWord>& words, double clip_start, double clip_end,
                       const CaptionOptions& o) {
  const CaptionLayout l = caption_layout(o);
  const Rgb white{0xFF, 0xFF, 0xFF}, black{0, 0, 0};
  // Captions and karaoke: BorderStyle 3 draws an opaque box in OutlineColour
  // behind the text, "Outline" pixels beyond it; alpha 0x60 lets the
  // background show through. Minimal: BorderStyle 1, a thin black outline.
  const bool boxed = o.style != Style::Minimal;
  const int border_style = boxed ? 3 : 1;
  const int outline = boxed ? l.box_padding : std::max(2, l.font_size / 18);
  const std::string outline_color = boxed ? ass_color(black, 0x60) : ass_color(black);

  std::string out;
  out.reserve(4096);
  out += "[Script Info]\n; scribe clip captions\nScriptType: v4.00+\n";
  out += "PlayResX: " + std::to_string(o.frame.width) + "\nPlayResY: " + std::to_string(o.frame.height) + "\n";
  // WrapStyle 0: libass wraps a line too wide for the margins into lines of
  // even length; ScaledBorderAndShadow keeps box padding in frame pixels.
  out += "WrapStyle: 0\nScaledBorderAndShadow: yes\n\n";
  out += "[V4+ Styles]\n";
  out +=
      "Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, "
      "Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, "
      "MarginR, MarginV, Encoding\n";
  auto style = [&](const char* name, int size, const std::string& outline_c, int border, int outline_px, int align,
                   int margin_v) {
    out += "Style: " + std::string(name) + "," + o.font + "," + std::to_string(size) + "," + ass_color(white) + "," +
           ass_color(white) + "," + outline_c + "," + ass_color(black, 0x80) + ",-1,0,0,0,100,100,0,0," +
           std::to_string(border) + "," + std::to_string(outline_px) + ",0," + std::to_string(align) + "," +
           std::to_string(l.margin_h) + "," + std::to_string(l.margin_h) + "," + std::to_string(margin_v) + ",1\n";
  };
  style(kCaptionStyle, l.font_size, outline_color, border_style, outline, l.alignment, l.margin_v);
  style(kTitleStyle, l.title_font_size, ass_color(black), 1, std::max(2, l.title_font_size / 16), 8, l.title_margin_v);

  out += "\n[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n";
  auto event = [&](int layer, int64_t start_cs, int64_t end_cs, const char* style_name, const std::string& text) {
    out += "Dialogue: " + std::to_string(layer) + "," + cs_time(start_cs) + "," + cs_time(end_cs) + "," + style_name +
           ",,0,0,0,," + text + "\n";
  };

  const int64_t clip_cs = to_cs(std::max<int64_t>(0, to_ms(clip_end - clip_start)));
  const std::string title = clean_title(o.title);
  if (!title.empty()) event(2, 0, clip_cs, kTitleStyle, escape_ass_text(title));

  const std::string highlight_on =
      "{\\1c" + tag_color(text_on(o.highlight)) + "\\3c" + tag_color(o.highlight) + "\\1a&H00&\\3a&H00&}";
  for (const auto& line : caption_lines(words, clip_start, clip_end, o.words_per_line)) {
    std::vector<std::string> escaped;
    std::string plain;
    for (const auto& w : line.words) {
      escaped.push_back(escape_ass_text(w.text));
      plain += (plain.empty() ? "" : " ") + escaped.back();
    }
    const int64_t line_start = to_cs(line.start_ms), line_end = to_cs(line.end_ms);
    if (line_end <= line_start) continue;
    event(0, line_start, line_end, kCaptionStyle, plain);
    if (o.style != Style::Karaoke) continue;
    // The highlight: the same line in the same style on the layer above, all
    // of it transparent but the spoken word and its box. Laid out exactly like
    // the line below, the box lands behind that word and covers the line's
    // translucent box there with a clean edge.
    for (std::size_t k = 0; k < line.words.size(); ++k) {
      const int64_t s = k == 0 ? line_start : to_cs(line.words[k].start_ms);
      const int64_t e = k + 1 < line.words.size() ? to_cs(line.words[k + 1].start_ms) : line_end;
      if (e <= s) continue;
      std::string text = "{\\alpha&HFF&}";
      for (std::size_t j = 0; j < escaped.size(); ++j) {
        if (j > 0) text += ' ';
        text += j == k ? highlight_on + escaped[j] + "{\\alpha&HFF&}" : escaped[j];
      }
      event(1, s, std::min(e, line_end), kCaptionStyle, text);
    }
  }
  return out;
}

std::string render_srt(const std::vector<ClipWord>& words, double clip_start, double clip_end, int words_per_line) {
  std::string out;
  int n = 0;
  for (const auto& line : caption_lines(words, clip_start, clip_end, words_per_line)) {
    if (n > 0) out += '\n';
    out += std::to_string(++n) + "\n" + subtitles::format_timestamp(line.start_ms, ',') + " --> " +
           subtitles::format_timestamp(line.end_ms, ',') + "\n" + line.text() + "\n";
  }
  return out;
}

}  // namespace scribe::clips
