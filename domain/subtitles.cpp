// Cue building: which tokens form a cue, how a cue breaks into lines, and
// when it is shown. The timing rules and the exceptions they allow are
// spelled out above `time_cues`; subtitles_test.cpp checks them on random
// transcripts.
#include "domain/subtitles.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>

namespace scribe::subtitles {
namespace {

constexpr int64_t kNoLimit = std::numeric_limits<int64_t>::max() / 4;

// Case-insensitive (ASCII) membership, without allocating: it runs several
// times per word of a 100,000-word transcript.
template <std::size_t N>
bool in_list(std::string_view word, const std::array<std::string_view, N>& list) {
  for (std::string_view entry : list) {
    if (entry.size() != word.size()) continue;
    bool same = true;
    for (std::size_t i = 0; same && i < word.size(); ++i) {
      char c = word[i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      same = c == entry[i];
    }
    if (same) return true;
  }
  return false;
}

bool ends_sentence(const Token& t) {
  const std::string& p = t.punctuation ? *t.punctuation : t.text;
  return !p.empty() && (p.back() == '.' || p.back() == '?' || p.back() == '!');
}

bool soft_stop(const Token& t) {
  if (!t.punctuation || t.punctuation->empty()) return false;
  const char c = t.punctuation->back();
  return c == ',' || c == ';' || c == ':';
}

Token make_token(std::string text, std::optional<std::string> punctuation, int64_t start, int64_t end,
                 const std::optional<std::string>& speaker) {
  Token t;
  t.display_chars = transcript::display_length(text) + (punctuation ? transcript::display_length(*punctuation) : 0);
  t.text = std::move(text);
  t.punctuation = std::move(punctuation);
  t.start_ms = start;
  t.end_ms = end;
  t.speaker = speaker;
  t.article = is_article(t.text);
  t.preposition = is_preposition(t.text);
  t.conjunction = is_conjunction(t.text);
  return t;
}

// Appends the tokens of a cue joined by spaces, from `begin` for `count` tokens.
void append_joined(std::string& out, const std::vector<Token>& tokens, std::size_t begin, std::size_t count) {
  for (std::size_t k = begin; k < begin + count; ++k) {
    if (k > begin) out += ' ';
    out += tokens[k].text;
    if (tokens[k].punctuation) out += *tokens[k].punctuation;
  }
}

bool is_bare_article(const Token& t) { return !t.punctuation && t.article; }

// An article and the word after it stay on one line when they fit on one.
bool glued(const Token& article, const Token& next, int cap) {
  return is_bare_article(article) &&
         static_cast<int64_t>(article.display_chars + 1 + next.display_chars) <= static_cast<int64_t>(cap);
}

// Greedy first-fit packing of tokens into lines, one token at a time; used
// to count the lines a cue needs. A token wider than a line sits alone on its
// line. When a word does not fit, an article ending the line (and not
// opening it) moves down with it, so a line never ends between article and
// noun when the two fit on one line.
struct Packer {
  Packer(int first_line_cap, int line_cap) : first_cap(first_line_cap), cap(line_cap) {}
  int first_cap;
  int cap;
  int lines = 1;
  int64_t cur = -1;  // characters on the current line; -1 before the first token
  std::size_t line_start = 0;
  std::vector<std::size_t> starts;  // first token of each line after the first

  // False (and unchanged) when token k would need more than max_lines lines.
  bool place(const std::vector<Token>& t, std::size_t k, int max_lines) {
    const auto w = static_cast<int64_t>(t[k].display_chars);
    const int line_cap = lines == 1 ? first_cap : cap;
    if (cur < 0) {
      cur = w;
      line_start = k;
      return true;
    }
    if (cur + 1 + w <= line_cap) {
      cur += 1 + w;
      return true;
    }
    if (lines >= max_lines) return false;
    ++lines;
    if (k - 1 > line_start && glued(t[k - 1], t[k], cap)) {
      cur = static_cast<int64_t>(t[k - 1].display_chars) + 1 + w;
      line_start = k - 1;
    } else {
      cur = w;
      line_start = k;
    }
    starts.push_back(line_start);
    return true;
  }
};

// Cost of a line break after token `a` (and before token `b`): low after
// punctuation and before a conjunction, high after an article, raised after
// a preposition.
double break_cost(const Token& a, const Token& b) {
  if (ends_sentence(a)) return -0.8;
  if (soft_stop(a)) return -0.5;
  double c = 0;
  if (is_bare_article(a)) c += 5.0;
  else if (a.preposition) c += 1.0;
  if (b.conjunction) c -= 0.4;
  return c;
}

// Buffers of layout_lines, kept by the caller across cues: a transcript has
// thousands of cues, and allocating them per cue was a large part of the
// building time.
struct LayoutScratch {
  std::vector<int64_t> prefix;
  std::vector<double> cost;       // break cost before each token position
  std::vector<char> glue;         // whether that break parts article and word
  std::vector<double> best;       // (lines + 1) x (count + 1), row-major
  std::vector<std::size_t> from;  // same shape
};

// Breaks tokens [begin, begin+count) into the fewest lines that fit, choosing
// among the layouts with that many lines the one with the most even lines and
// the best break points. A token wider than a line sits alone on its line.
std::vector<std::size_t> layout_lines(const std::vector<Token>& tokens, std::size_t begin, std::size_t count,
                                      int first_cap, int cap, LayoutScratch& scratch) {
  Packer packer{first_cap, cap};
  for (std::size_t k = begin; k < begin + count; ++k) packer.place(tokens, k, std::numeric_limits<int>::max());
  const int lines = packer.lines;
  if (lines == 1) return {count};
  // prefix[k]: characters of the first k tokens without spaces.
  std::vector<int64_t>& prefix = scratch.prefix;
  prefix.assign(count + 1, 0);
  for (std::size_t k = 0; k < count; ++k)
    prefix[k + 1] = prefix[k] + static_cast<int64_t>(tokens[begin + k].display_chars);
  auto width = [&](std::size_t a, std::size_t b) { return prefix[b] - prefix[a] + static_cast<int64_t>(b - a - 1); };
  // cost[p]: break_cost of a line break before token p (0 < p < count);
  // glue[p]: that break would part an article from its word.
  std::vector<double>& cost = scratch.cost;
  std::vector<char>& glue = scratch.glue;
  cost.assign(count + 1, 0);
  glue.assign(count + 1, 0);
  for (std::size_t p = 1; p < count; ++p) {
    cost[p] = break_cost(tokens[begin + p - 1], tokens[begin + p]);
    glue[p] = glued(tokens[begin + p - 1], tokens[begin + p], cap);
  }
  const double target = static_cast<double>(width(0, count)) / lines;
  const double inf = std::numeric_limits<double>::infinity();
  // best[l][p]: least cost of l lines holding the first p tokens.
  const std::size_t row = count + 1;
  scratch.best.assign(static_cast<std::size_t>(lines + 1) * row, inf);
  scratch.from.assign(static_cast<std::size_t>(lines + 1) * row, 0);
  auto best = [&](int l, std::size_t p) -> double& { return scratch.best[static_cast<std::size_t>(l) * row + p]; };
  auto from = [&](int l, std::size_t p) -> std::size_t& { return scratch.from[static_cast<std::size_t>(l) * row + p]; };
  best(0, 0) = 0;
  for (int l = 1; l <= lines; ++l) {
    const int line_cap = l == 1 ? first_cap : cap;
    for (std::size_t p = 1; p <= count; ++p) {
      if (l == lines && p != count) continue;
      for (std::size_t q = p; q-- > 0;) {
        const int64_t w = width(q, p);
        if (w > line_cap && p - q > 1) break;
        if (best(l - 1, q) == inf) continue;
        const double d = (static_cast<double>(w) - target) / std::max(1, cap);
        double c = best(l - 1, q) + d * d;
        if (p < count) {
          if (p - q > 1 && glue[p]) continue;
          c += cost[p];
        }
        // A slight preference for a shorter top line (the "pyramid").
        if (l == 1 && lines == 2 && w > width(p, count)) c += 0.05;
        if (c < best(l, p)) {
          best(l, p) = c;
          from(l, p) = q;
        }
      }
    }
  }
  std::vector<std::size_t> sizes(lines);
  if (best(lines, count) == inf) {
    // Only an odd run such as "a the" defeats the rules; keep the packing.
    std::size_t prev = begin;
    for (int l = 0; l < lines - 1; ++l) {
      sizes[l] = packer.starts[l] - prev;
      prev = packer.starts[l];
    }
    sizes[lines - 1] = begin + count - prev;
    return sizes;
  }
  std::size_t p = count;
  for (int l = lines; l >= 1; --l) {
    sizes[l - 1] = p - from(l, p);
    p = from(l, p);
  }
  return sizes;
}

struct Block {
  std::size_t begin;
  std::size_t end;
};

// Splits each block into cues (token ranges) and lays out their lines.
std::vector<Cue> group_cues(const std::vector<Token>& tokens, const std::vector<Block>& blocks, const BuildOptions& o) {
  const Preset& p = *o.preset;
  const int cap = p.max_chars_per_line;
  std::vector<int64_t> prefix(tokens.size() + 1, 0);
  for (std::size_t k = 0; k < tokens.size(); ++k)
    prefix[k + 1] = prefix[k] + static_cast<int64_t>(tokens[k].display_chars);
  auto width = [&](std::size_t a, std::size_t b) { return prefix[b] - prefix[a] + static_cast<int64_t>(b - a - 1); };

  LayoutScratch scratch;
  std::vector<Cue> cues;
  for (const auto& block : blocks) {
    const auto& speaker = tokens[block.begin].speaker;
    const std::string label = o.speaker_labels ? speaker_label(speaker) : std::string();
    const int label_chars = static_cast<int>(transcript::display_length(label));
    const int first_cap = cap - label_chars;
    const double capacity = std::max(1, p.max_lines * cap - label_chars);
    std::size_t i = block.begin;
    while (i < block.end) {
      Packer packer{first_cap, cap};
      std::size_t best_end = i + 1;
      double best_score = -std::numeric_limits<double>::infinity();
      for (std::size_t j = i; j < block.end; ++j) {
        if (j > i && tokens[j].end_ms - tokens[i].start_ms > p.max_duration_ms) break;
        if (!packer.place(tokens, j, p.max_lines)) break;
        // A cue of several words never ends on an article inside a block.
        if (j > i && j + 1 < block.end && is_bare_article(tokens[j])) continue;
        // Score of ending the cue after token j.
        double score = static_cast<double>(width(i, j + 1)) / capacity;
        if (j + 1 == block.end) {
          score += 1.0;
        } else {
          const Token& last = tokens[j];
          const Token& next = tokens[j + 1];
          if (ends_sentence(last)) score += 0.6;
          else if (soft_stop(last)) score += 0.3;
          else if (last.preposition) score -= 0.4;
          if (next.conjunction) score += 0.2;
          // Avoid leaving a short orphan at the end of the block.
          if (static_cast<double>(width(j + 1, block.end)) < 0.25 * capacity) score -= 0.4;
        }
        if (score >= best_score) {
          best_score = score;
          best_end = j + 1;
        }
      }
      Cue c;
      c.speaker = speaker;
      c.label = label;
      c.first_token = i;
      c.token_count = best_end - i;
      c.line_tokens = layout_lines(tokens, i, c.token_count, first_cap, cap, scratch);
      c.lines.reserve(c.line_tokens.size());
      std::size_t k = i;
      for (std::size_t n : c.line_tokens) {
        std::string line = c.lines.empty() ? label : std::string();
        append_joined(line, tokens, k, n);
        c.chars += transcript::display_length(line);
        c.lines.push_back(std::move(line));
        k += n;
      }
      cues.push_back(std::move(c));
      i = best_end;
    }
  }
  return cues;
}

// Timing. With s and e the first word's start and the last word's end of a
// cue, gap the preset's minimum gap, and target = min(max_duration,
// max(min_duration, ceil(chars * 1000 / max_cps))):
//   lo = previous cue's end + gap (0 for the first cue), the earliest start;
//   hi = next cue's s - gap (unbounded for the last cue), the latest end that
//        lets the next cue start on its speech;
//   start = max(s, lo); end = min(max(e, start + target), start + max_duration, hi);
//   if that leaves no time, the cue is squeezed into [max(lo, hi - target), hi]
//   or, when hi <= lo, shown for 1 ms (the next cue then starts late);
//   a cue still shorter than target borrows room before it, down to lo.
// So every cue lasts at most max_duration, and one shorter than target (the
// minimum duration or the reading time) has no room left on either side:
// it starts at lo and the next cue starts exactly gap after it ends.
void time_cues(std::vector<Cue>& cues, const std::vector<Token>& tokens, const Preset& p) {
  int64_t prev_end = 0;
  for (std::size_t i = 0; i < cues.size(); ++i) {
    Cue& c = cues[i];
    const int64_t s = tokens[c.first_token].start_ms;
    int64_t e = s;
    for (std::size_t k = c.first_token; k < c.first_token + c.token_count; ++k) e = std::max(e, tokens[k].end_ms);
    const auto reading = static_cast<int64_t>(std::ceil(static_cast<double>(c.chars) * 1000.0 / p.max_cps));
    const int64_t target = std::min<int64_t>(p.max_duration_ms, std::max<int64_t>(p.min_duration_ms, reading));
    const int64_t lo = i == 0 ? 0 : prev_end + p.min_gap_ms;
    const int64_t hi = i + 1 < cues.size() ? tokens[cues[i + 1].first_token].start_ms - p.min_gap_ms : kNoLimit;
    int64_t start = std::max(s, lo);
    int64_t end = std::min({std::max(e, start + target), start + p.max_duration_ms, hi});
    if (end <= start) {
      if (hi > lo) {
        start = std::max(lo, hi - target);
        end = hi;
      } else {
        end = start + 1;
      }
    }
    if (end - start < target) start = std::max(lo, std::min(start, end - target));
    c.start_ms = start;
    c.end_ms = end;
    prev_end = end;
  }
}

CueSet finish(CueSet set, const std::vector<Block>& blocks, const BuildOptions& o) {
  set.cues = group_cues(set.tokens, blocks, o);
  time_cues(set.cues, set.tokens, *o.preset);
  return set;
}

// Times never run backwards: each token starts no earlier than the one before
// and ends no earlier than it starts.
void normalize_times(std::vector<Token>& tokens) {
  for (std::size_t k = 0; k < tokens.size(); ++k) {
    if (tokens[k].start_ms < 0) tokens[k].start_ms = 0;
    if (k > 0) tokens[k].start_ms = std::max(tokens[k].start_ms, tokens[k - 1].start_ms);
    tokens[k].end_ms = std::max(tokens[k].end_ms, tokens[k].start_ms);
  }
}

bool is_stop_char(char c) { return c == '.' || c == ',' || c == '?' || c == '!' || c == ';' || c == ':'; }

}  // namespace

const std::vector<Preset>& presets() {
  // name, chars per line, lines, min ms, max ms, chars per second, gap ms.
  // Gaps stated in frames hold at the slowest frame rate the preset serves
  // (a frame lasts longest there): netflix's two frames at 23.976 fps are
  // 83.4 ms, so 84 (80 was two frames at 25 fps only); broadcast's three
  // frames at 25 fps (PAL/EBU, its slowest) are 120 ms. The web and podcast
  // presets' 40 ms is a plain minimum blank, not a frame count: their
  // players draw captions on their own clock.
  static const std::vector<Preset> table = {
      {"youtube", 42, 2, 1000, 7000, 20.0, 40},        {"tiktok-shorts", 22, 2, 600, 3000, 20.0, 40},
      {"instagram-reels", 26, 2, 600, 3500, 20.0, 40}, {"netflix", 42, 2, 833, 7000, 17.0, 84},
      {"podcast", 50, 2, 1000, 8000, 20.0, 40},        {"broadcast", 37, 2, 1000, 6000, 15.0, 120},
  };
  return table;
}

const Preset* find_preset(std::string_view name) {
  for (const auto& p : presets())
    if (name == p.name) return &p;
  return nullptr;
}

std::string speaker_label(const std::optional<std::string>& speaker) {
  return "[" + (speaker ? *speaker : std::string("Unknown")) + "] ";
}

bool is_article(std::string_view word) {
  static constexpr std::array<std::string_view, 3> list = {"a", "an", "the"};
  return in_list(word, list);
}

bool is_preposition(std::string_view word) {
  static constexpr std::array<std::string_view, 32> list = {
      "of",    "to",     "in",      "on",      "at",      "for",    "with",    "from",   "by",   "about",  "into",
      "onto",  "over",   "under",   "between", "through", "during", "without", "within", "upon", "across", "against",
      "among", "toward", "towards", "behind",  "beyond",  "near",   "per",     "via",    "like", "off"};
  return in_list(word, list);
}

bool is_conjunction(std::string_view word) {
  static constexpr std::array<std::string_view, 19> list = {
      "and",     "but",    "or", "nor",  "so",      "yet",   "because", "although", "though", "while",
      "whereas", "unless", "if", "when", "whether", "which", "who",     "where",    "than"};
  return in_list(word, list);
}

CueSet build_from_words(const std::vector<transcript::Word>& words, const BuildOptions& o) {
  CueSet set;
  set.mode = Mode::Word;
  set.tokens.reserve(words.size());
  for (const auto& w : words) {
    Token t = make_token(w.text, w.punctuation, w.start_ms, w.end_ms, w.speaker);
    t.confidence = w.confidence;
    if (t.display_chars > 0) set.tokens.push_back(std::move(t));
  }
  normalize_times(set.tokens);
  std::vector<Block> blocks;
  for (std::size_t k = 0; k < set.tokens.size(); ++k) {
    const bool split = k == 0 || set.tokens[k].speaker != set.tokens[k - 1].speaker ||
                       set.tokens[k].start_ms - set.tokens[k - 1].end_ms > kMaxPauseInCueMs;
    if (split) blocks.push_back({k, k + 1});
    else blocks.back().end = k + 1;
  }
  return finish(std::move(set), blocks, o);
}

CueSet build_from_segments(const std::vector<transcript::Segment>& segments, const BuildOptions& o) {
  CueSet set;
  set.mode = Mode::Sentence;
  std::vector<Block> blocks;
  for (const auto& seg : segments) {
    // Words of the segment text, trailing punctuation kept apart.
    std::vector<Token> words;
    std::size_t pos = 0;
    while (pos < seg.text.size()) {
      while (pos < seg.text.size() && std::isspace(static_cast<unsigned char>(seg.text[pos]))) ++pos;
      std::size_t end = pos;
      while (end < seg.text.size() && !std::isspace(static_cast<unsigned char>(seg.text[end]))) ++end;
      if (end == pos) break;
      std::string piece = seg.text.substr(pos, end - pos);
      std::size_t cut = piece.size();
      while (cut > 0 && is_stop_char(piece[cut - 1])) --cut;
      std::optional<std::string> punct;
      if (cut < piece.size()) punct = piece.substr(cut);
      words.push_back(make_token(piece.substr(0, cut), punct, 0, 0, seg.speaker));
      pos = end;
    }
    if (words.empty()) continue;
    // Interpolate word times across the segment by character count.
    int64_t total = 0;
    for (const auto& w : words) total += static_cast<int64_t>(w.display_chars) + 1;
    const int64_t span = std::max<int64_t>(0, seg.end_ms - seg.start_ms);
    int64_t cum = 0;
    for (auto& w : words) {
      w.start_ms = seg.start_ms + span * cum / total;
      cum += static_cast<int64_t>(w.display_chars);
      w.end_ms = seg.start_ms + span * cum / total;
      cum += 1;
    }
    blocks.push_back({set.tokens.size(), set.tokens.size() + words.size()});
    for (auto& w : words) set.tokens.push_back(std::move(w));
  }
  normalize_times(set.tokens);
  return finish(std::move(set), blocks, o);
}

CueSet build_from_cues(const std::vector<transcript::Segment>& cues, const std::vector<transcript::Word>& words,
                       const BuildOptions& o) {
  // Words of each segment from `words`, or from its text when it has none.
  CueSet set;
  set.mode = Mode::Sentence;
  std::map<int64_t, std::vector<Token>> timed;
  for (const auto& w : words) {
    Token t = make_token(w.text, w.punctuation, w.start_ms, w.end_ms, w.speaker);
    t.confidence = w.confidence;
    if (t.display_chars > 0) timed[w.segment_id].push_back(std::move(t));
  }
  std::vector<std::pair<std::size_t, std::size_t>> ranges;  // tokens of each segment
  for (const auto& seg : cues) {
    const std::size_t first = set.tokens.size();
    if (auto it = timed.find(seg.id); it != timed.end()) {
      for (auto& t : it->second) set.tokens.push_back(std::move(t));
    } else {
      CueSet one = build_from_segments({seg}, o);
      for (auto& t : one.tokens) set.tokens.push_back(std::move(t));
    }
    ranges.emplace_back(first, set.tokens.size() - first);
  }
  normalize_times(set.tokens);
  const Preset& p = *o.preset;
  LayoutScratch scratch;
  for (std::size_t i = 0; i < cues.size(); ++i) {
    const auto& seg = cues[i];
    const auto [first, count] = ranges[i];
    if (count == 0) continue;
    Cue c;
    c.speaker = seg.speaker;
    c.label = o.speaker_labels ? speaker_label(seg.speaker) : std::string();
    const int first_cap = p.max_chars_per_line - static_cast<int>(transcript::display_length(c.label));
    c.first_token = first;
    c.token_count = count;
    c.line_tokens = layout_lines(set.tokens, first, count, first_cap, p.max_chars_per_line, scratch);
    std::size_t k = first;
    for (std::size_t n : c.line_tokens) {
      std::string line = c.lines.empty() ? c.label : std::string();
      append_joined(line, set.tokens, k, n);
      c.chars += transcript::display_length(line);
      c.lines.push_back(std::move(line));
      k += n;
    }
    c.start_ms = seg.start_ms;
    c.end_ms = seg.end_ms;
    // Karaoke tags stay strictly inside the cue.
    for (std::size_t t = first; t < first + count; ++t) {
      set.tokens[t].start_ms = std::clamp(set.tokens[t].start_ms, seg.start_ms, seg.end_ms);
      set.tokens[t].end_ms = std::clamp(set.tokens[t].end_ms, set.tokens[t].start_ms, seg.end_ms);
    }
    set.cues.push_back(std::move(c));
  }
  return set;
}

}  // namespace scribe::subtitles
