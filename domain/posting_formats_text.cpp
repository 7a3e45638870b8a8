// The text operations of posting_formats: timestamps, platform character
// counting and word-boundary shortening. Kept apart from the rendering so
// that each is tested on its own.
#include <cstdio>

#include "common/text.h"
#include "domain/posting_formats.h"

namespace scribe::posting {
namespace {

bool is_ascii_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

bool is_ascii_alnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

bool starts_with_ci(std::string_view s, std::size_t at, std::string_view prefix) {
  if (s.size() - at < prefix.size()) return false;
  return to_lower(s.substr(at, prefix.size())) == prefix;
}

// The code point starting at s[i]; advances i past it. A byte that does not
// start a well-formed sequence counts as one code point of its own, so a
// malformed title is measured rather than refused.
char32_t next_code_point(std::string_view s, std::size_t& i) {
  const auto c = static_cast<unsigned char>(s[i]);
  const std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
  if (len == 1 || i + len > s.size()) {
    ++i;
    return c;
  }
  char32_t cp = c & (0xFF >> (len + 1));
  for (std::size_t j = 1; j < len; ++j) {
    const auto cont = static_cast<unsigned char>(s[i + j]);
    if ((cont & 0xC0) != 0x80) {
      ++i;
      return c;
    }
    cp = (cp << 6) | (cont & 0x3F);
  }
  i += len;
  return cp;
}

// The short-post platform counts these code points once and every other one
// twice (its published counting configuration, version 3): Latin, Greek,
// Cyrillic, Hebrew, Arabic and the like are narrow; CJK and emoji are wide.
// An emoji sequence counts 2 there but 2 per code point here, which only
// errs on the safe side.
bool is_narrow(char32_t cp) {
  return cp <= 0x10FF || (cp >= 0x2000 && cp <= 0x200D) || (cp >= 0x2010 && cp <= 0x201F) ||
         (cp >= 0x2032 && cp <= 0x2037);
}

// What shortening removes from the end of a prefix before the ellipsis, so
// that "Budget, staffing" does not become "Budget,…".
std::string_view without_trailing_separators(std::string_view s) {
  for (;;) {
    s = trim(s, " \t,;:.!?-");
    if (s.ends_with("\u2014") || s.ends_with("\u2013")) {
      s.remove_suffix(3);  // both dashes are three bytes in UTF-8
      continue;
    }
    return s;
  }
}

}  // namespace

std::string format_timestamp(int seconds, TimestampStyle style) {
  if (seconds < 0) seconds = 0;
  const int h = seconds / 3600;
  const int m = seconds / 60 % 60;
  const int s = seconds % 60;
  char buf[48];
  switch (style) {
    case TimestampStyle::kShortest:
      if (h > 0) std::snprintf(buf, sizeof buf, "%d:%02d:%02d", h, m, s);
      else std::snprintf(buf, sizeof buf, "%d:%02d", m, s);
      break;
    case TimestampStyle::kTwoDigitMinutes:
      if (h > 0) std::snprintf(buf, sizeof buf, "%d:%02d:%02d", h, m, s);
      else std::snprintf(buf, sizeof buf, "%02d:%02d", m, s);
      break;
    case TimestampStyle::kMinutesOnly:
      std::snprintf(buf, sizeof buf, "%02d:%02d", seconds / 60, s);
      break;
    case TimestampStyle::kAlwaysHours:
      std::snprintf(buf, sizeof buf, "%02d:%02d:%02d", h, m, s);
      break;
  }
  return buf;
}

std::string_view timestamp_style_name(TimestampStyle style) {
  switch (style) {
    case TimestampStyle::kShortest:
      return "M:SS or H:MM:SS";
    case TimestampStyle::kTwoDigitMinutes:
      return "MM:SS or H:MM:SS";
    case TimestampStyle::kMinutesOnly:
      return "MM:SS (minutes may exceed 59)";
    case TimestampStyle::kAlwaysHours:
      return "HH:MM:SS";
  }
  return "";
}

std::size_t weighted_length(std::string_view text, const Weights& w) {
  std::size_t n = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    // A link starts where a word may start (not inside "xhttp://"), and the
    // platform counts it whole up to the next whitespace. Only the links the
    // short-post platform shortens count so (http(s) and www.); what the
    // link-free formats remove (holds_link) is wider on purpose.
    const bool word_start = i == 0 || !is_ascii_alnum(text[i - 1]);
    if (w.url_weight > 0 && word_start &&
        (starts_with_ci(text, i, "http://") || starts_with_ci(text, i, "https://") ||
         starts_with_ci(text, i, "www."))) {
      while (i < text.size() && !is_ascii_space(text[i])) ++i;
      n += static_cast<std::size_t>(w.url_weight);
      continue;
    }
    const char32_t cp = next_code_point(text, i);
    n += w.wide_char_weight > 1 && !is_narrow(cp) ? static_cast<std::size_t>(w.wide_char_weight) : 1;
  }
  return n;
}

std::optional<std::string> shorten_at_word(std::string_view text, std::size_t max, const Weights& w) {
  if (weighted_length(text, w) <= max) return std::string(text);
  std::optional<std::string> best;
  // Every whitespace is a candidate end. Prefixes grow with the position, but
  // dropping trailing separators can make a later candidate shorter than an
  // earlier one, so all are tried (titles and quotes are short).
  for (std::size_t p = 0; p < text.size(); ++p) {
    if (!is_ascii_space(text[p])) continue;
    const std::string_view prefix = without_trailing_separators(text.substr(0, p));
    if (prefix.empty()) continue;
    std::string candidate = std::string(prefix) + "\u2026";
    if (weighted_length(candidate, w) <= max && (!best || candidate.size() > best->size())) best = std::move(candidate);
  }
  return best;
}

std::string collapse_whitespace(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool pending_space = false;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F || c == ' ') {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out.push_back(' ');
    pending_space = false;
    out.push_back(c);
  }
  return out;
}

int strip_hashtags(std::string& text) {
  int removed = 0;
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool word_start = i == 0 || text[i - 1] == ' ';
    // A letter follows: ASCII, or any non-ASCII code point (accented and
    // non-Latin words are hashtags too).
    if (text[i] == '#' && word_start && i + 1 < text.size() &&
        ((text[i + 1] >= 'a' && text[i + 1] <= 'z') || (text[i + 1] >= 'A' && text[i + 1] <= 'Z') ||
         static_cast<unsigned char>(text[i + 1]) >= 0x80)) {
      ++removed;
      continue;
    }
    out.push_back(text[i]);
  }
  if (removed > 0) text = std::move(out);
  return removed;
}

}  // namespace scribe::posting
