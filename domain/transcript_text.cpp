#include "domain/transcript_text.h"

#include <cctype>
#include <cstdio>

namespace scribe::transcript {
namespace {

bool is_blank(const std::string& s) {
  for (char c : s)
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return false;
  return true;
}

// Collapses runs of whitespace (including line breaks, which would split a
// paragraph) into single spaces and trims both ends.
void append_collapsed(std::string& out, const std::string& text) {
  bool pending_space = !out.empty();
  bool wrote = false;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      pending_space = wrote || pending_space;
      continue;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    wrote = true;
    out += c;
  }
}

std::string label_of(const std::optional<std::string>& speaker) { return speaker ? *speaker : "Unknown"; }

// Appends the turns in the shared paragraph form; `bold` wraps the speaker
// label for Markdown.
void append_turns(std::string& out, const std::vector<Turn>& ts, const TextOptions& o, bool bold) {
  bool first = true;
  for (const auto& t : ts) {
    if (!first) out += "\n\n";
    first = false;
    if (o.timestamps) {
      out += '[';
      out += format_hms(t.start_ms);
      out += "] ";
    }
    if (o.speaker_labels) {
      if (bold) out += "**";
      out += label_of(t.speaker);
      out += ':';
      if (bold) out += "**";
      out += ' ';
    }
    out += t.text;
  }
  if (!ts.empty()) out += '\n';
}

// Markdown inline text: characters that would start formatting are escaped,
// and line breaks become spaces so that a title stays one heading.
std::string md_inline(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      if (c == '\\' || c == '*' || c == '_' || c == '`' || c == '[' || c == ']' || c == '#' || c == '<') out += '\\';
      out += c;
    }
  }
  return out;
}

}  // namespace

std::vector<Turn> turns(const std::vector<Segment>& segments) {
  std::vector<Turn> out;
  for (const auto& s : segments) {
    if (is_blank(s.text)) continue;
    if (out.empty() || out.back().speaker != s.speaker) {
      Turn t;
      t.start_ms = s.start_ms;
      t.end_ms = s.end_ms;
      t.speaker = s.speaker;
      out.push_back(std::move(t));
    }
    Turn& t = out.back();
    append_collapsed(t.text, s.text);
    if (s.end_ms > t.end_ms) t.end_ms = s.end_ms;
    ++t.segment_count;
  }
  return out;
}

std::string render_txt(const std::vector<Segment>& segments, const TextOptions& options) {
  std::string out;
  out.reserve(segments.size() * 96);
  append_turns(out, turns(segments), options, false);
  return out;
}

std::string render_md(const std::string& title, const std::vector<Chapter>& chapters,
                      const std::vector<Segment>& segments, const TextOptions& options) {
  auto ts = turns(segments);
  if (ts.empty()) return {};
  std::string out;
  out.reserve(segments.size() * 100 + 256);
  out += "# ";
  out += md_inline(title);
  out += "\n\n";
  if (!chapters.empty()) {
    out += "## Chapters\n\n";
    for (const auto& c : chapters) {
      out += "- ";
      if (options.timestamps) out += "[" + format_hms(c.start_ms) + "] ";
      out += md_inline(c.title);
      out += '\n';
    }
    out += '\n';
  }
  out += "---\n\n";
  append_turns(out, ts, options, true);
  return out;
}

std::string format_hms(int64_t ms) {
  if (ms < 0) ms = 0;
  const int64_t s = ms / 1000;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  return buf;
}

std::string slug(const std::optional<std::string>& title, int64_t id) {
  std::string out;
  if (title) {
    bool hyphen = false;
    for (unsigned char c : *title) {
      if (std::isalnum(c) && c < 0x80) {
        if (hyphen && !out.empty()) out += '-';
        hyphen = false;
        out += static_cast<char>(std::tolower(c));
        if (out.size() >= 60) break;
      } else {
        hyphen = true;
      }
    }
    while (!out.empty() && out.back() == '-') out.pop_back();
  }
  return out.empty() ? "transcription-" + std::to_string(id) : out;
}

std::size_t display_length(std::string_view utf8) {
  std::size_t n = 0;
  for (unsigned char c : utf8)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

}  // namespace scribe::transcript
