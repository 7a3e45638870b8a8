// The four renderings of a CueSet: SRT, WebVTT, karaoke WebVTT and the
// camelCase JSON of the spec. Written by hand rather than through a JSON
// library because a 12-hour transcript has 100,000 words and the export
// must stay well under a second (bench/exports_benchmark.cpp).
#include <algorithm>
#include <charconv>
#include <cstdio>

#include "domain/subtitles.h"

namespace scribe::subtitles {
namespace {

// WebVTT cue text: &, < and > are character references, so text can never
// open a tag or spell "-->".
void append_vtt_escaped(std::string& out, std::string_view s) {
  std::size_t from = 0;  // first character not yet copied
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c != '&' && c != '<' && c != '>') continue;
    out.append(s.data() + from, i - from);
    out += c == '&' ? "&amp;" : c == '<' ? "&lt;" : "&gt;";
    from = i + 1;
  }
  out.append(s.data() + from, s.size() - from);
}

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  std::size_t from = 0;  // first character not yet copied
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const auto u = static_cast<unsigned char>(c);
    if (c != '"' && c != '\\' && u >= 0x20) continue;
    out.append(s.data() + from, i - from);
    from = i + 1;
    if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    }
  }
  out.append(s.data() + from, s.size() - from);
  out += '"';
}

void append_optional_json(std::string& out, const std::optional<std::string>& s) {
  if (s) append_json_string(out, *s);
  else out += "null";
}

void append_int(std::string& out, int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// What format_timestamp returns, appended without a temporary string or
// printf (a 12-hour transcript has tens of thousands of timestamps).
void append_timestamp(std::string& out, int64_t ms, char separator) {
  if (ms < 0) ms = 0;
  const int64_t hours = ms / 3600000;
  if (hours < 10) out += '0';
  append_int(out, hours);
  const int64_t parts[3] = {ms / 60000 % 60, ms / 1000 % 60, ms % 1000};
  const char digits[4] = {':', ':', separator, 0};
  for (int i = 0; i < 3; ++i) {
    out += digits[i];
    const auto v = static_cast<int>(parts[i]);
    if (i == 2) out += static_cast<char>('0' + v / 100);
    out += static_cast<char>('0' + v / 10 % 10);
    out += static_cast<char>('0' + v % 10);
  }
}

void append_timing(std::string& out, const Cue& c, char sep) {
  append_timestamp(out, c.start_ms, sep);
  out += " --> ";
  append_timestamp(out, c.end_ms, sep);
  out += '\n';
}

}  // namespace

std::string format_timestamp(int64_t ms, char separator) {
  std::string out;
  append_timestamp(out, ms, separator);
  return out;
}

std::string render_srt(const CueSet& set) {
  std::string out;
  out.reserve(set.cues.size() * 120);
  std::size_t n = 0;
  for (const auto& c : set.cues) {
    if (n > 0) out += '\n';
    append_int(out, static_cast<int64_t>(++n));
    out += '\n';
    append_timing(out, c, ',');
    for (const auto& line : c.lines) {
      out += line;
      out += '\n';
    }
  }
  return out;
}

std::string render_vtt(const CueSet& set) {
  std::string out = "WEBVTT\n";
  out.reserve(set.cues.size() * 120 + 8);
  for (const auto& c : set.cues) {
    out += '\n';
    append_timing(out, c, '.');
    for (const auto& line : c.lines) {
      append_vtt_escaped(out, line);
      out += '\n';
    }
  }
  return out;
}

std::string render_vtt_karaoke(const CueSet& set) {
  std::string out = "WEBVTT\n";
  out.reserve(set.cues.size() * 200 + 8);
  for (const auto& c : set.cues) {
    out += '\n';
    append_timing(out, c, '.');
    std::size_t k = c.first_token;
    int64_t last_tag = c.start_ms;
    for (std::size_t line = 0; line < c.line_tokens.size(); ++line) {
      if (line == 0) append_vtt_escaped(out, c.label);
      for (std::size_t n = 0; n < c.line_tokens[line]; ++n, ++k) {
        const Token& t = set.tokens[k];
        if (n > 0) out += ' ';
        // A tag must lie strictly inside the cue and after the previous tag;
        // a word whose time cannot satisfy that joins the previous word.
        if (k > c.first_token) {
          const int64_t at = std::max(t.start_ms, last_tag + 1);
          if (at < c.end_ms) {
            out += '<';
            append_timestamp(out, at, '.');
            out += '>';
            last_tag = at;
          }
        }
        append_vtt_escaped(out, t.text);
        if (t.punctuation) append_vtt_escaped(out, *t.punctuation);
      }
      out += '\n';
    }
  }
  return out;
}

std::string render_json(const CueSet& set) {
  std::string out = "{\"cues\":[";
  out.reserve(set.cues.size() * 160 + (set.mode == Mode::Word ? set.tokens.size() * 110 : 0));
  bool first_cue = true;
  std::string text;  // a cue's lines joined, reused across cues
  for (const auto& c : set.cues) {
    if (!first_cue) out += ',';
    first_cue = false;
    out += "{\"startMs\":";
    append_int(out, c.start_ms);
    out += ",\"endMs\":";
    append_int(out, c.end_ms);
    out += ",\"text\":";
    text.clear();
    for (const auto& line : c.lines) {
      if (!text.empty()) text += '\n';
      text += line;
    }
    append_json_string(out, text);
    if (c.speaker) {
      out += ",\"speaker\":";
      append_json_string(out, *c.speaker);
    }
    if (set.mode == Mode::Word) {
      out += ",\"words\":[";
      for (std::size_t k = c.first_token; k < c.first_token + c.token_count; ++k) {
        const Token& t = set.tokens[k];
        if (k > c.first_token) out += ',';
        out += "{\"text\":";
        append_json_string(out, t.text);
        out += ",\"startMs\":";
        append_int(out, t.start_ms);
        out += ",\"endMs\":";
        append_int(out, t.end_ms);
        out += ",\"punctuationAfter\":";
        append_optional_json(out, t.punctuation);
        out += ",\"speaker\":";
        append_optional_json(out, t.speaker);
        // The recognizer's posterior to 3 decimals; null for edited words.
        out += ",\"confidence\":";
        if (t.confidence) {
          char buf[16];
          std::snprintf(buf, sizeof buf, "%.3f", transcript::shown_confidence(*t.confidence));
          out += buf;
        } else {
          out += "null";
        }
        out += '}';
      }
      out += ']';
    }
    out += '}';
  }
  out += "]}\n";
  return out;
}

}  // namespace scribe::subtitles
