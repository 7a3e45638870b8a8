#include "enrichment/answering.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include "enrichment/text.h"

namespace scribe::enrichment {
namespace {

// Okapi BM25's usual constants.
constexpr double kK1 = 1.2;
constexpr double kB = 0.75;
// Speech spreads one point over several segments: a segment's score is its
// own plus half of what the segments within this many milliseconds of it in
// the same recording score, and the terms of that window count as covered.
constexpr int64_t kWindowMs = 20'000;
constexpr double kNeighbourWeight = 0.5;
// Further citations come from other moments whose pooled score is at least
// this share of the best one's, and at least this far from every cited one.
constexpr double kFurtherCitationShare = 0.6;
constexpr int64_t kCitationSpacingMs = 30'000;
// A quote longer than this is cut at a word.
constexpr std::size_t kQuoteMaxBytes = 400;
// A word the recognizer almost heard counts as this many occurrences per
// unit of posterior (and covers that share of its term, at most all of it).
constexpr double kHeardGain = 1.0;
// See no_answer_threshold(). 0.4 before issue 34; with alternates and
// sound- and meaning-alikes a window covers more of any question, and on the
// tune set (bench/ask_eval/README.md, "Issue 34") 0.45 kept both no_answer
// shares at or above the old ranking's while answering more (the grid 0.4,
// 0.45, 0.5 x sound factor 0.4, 0.6 x alternate gain 1, 2).
constexpr double kNoAnswerThreshold = 0.45;

// Lexemes (as the English snowball stemmer writes them) of the words a
// question about a recording uses whatever it asks: what the speaker "said",
// "mentioned" or "explained" in the "recording". They say nothing about
// where the answer is.
const std::set<std::string, std::less<>> kQuestionFrame = {
    "accord",   "answer", "ask",   "describ", "discuss", "episod", "explain", "mention", "podcast",
    "question", "record", "said",  "say",     "speaker", "talk",   "tell",    "told",    "transcript",
    "video",    "someon", "anyon", "peopl",   "thing",   "kind",   "lot",     "way",     "els"};

double idf(double segments, double df) { return std::log(1.0 + (segments - df + 0.5) / (df + 0.5)); }

int term_count(const AskSegment& s, const std::string& term) {
  auto it = std::lower_bound(s.terms.begin(), s.terms.end(), term,
                             [](const std::pair<std::string, int>& p, const std::string& t) { return p.first < t; });
  return it != s.terms.end() && it->first == term ? it->second : 0;
}

// The posterior mass of `lexeme` among what the recognizer almost heard in `s`.
double heard_count(const AskSegment& s, const std::string& lexeme) {
  auto it = std::lower_bound(s.heard.begin(), s.heard.end(), lexeme,
                             [](const std::pair<std::string, double>& p, const std::string& t) { return p.first < t; });
  return it != s.heard.end() && it->first == lexeme ? it->second : 0;
}

// The sentences of a segment's text: [begin, end) byte ranges ending after
// '.', '?' or '!' (or at the end).
std::vector<std::pair<std::size_t, std::size_t>> sentences(const std::string& text) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  std::size_t begin = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if ((c == '.' || c == '?' || c == '!') && (i + 1 == text.size() || text[i + 1] == ' ')) {
      out.push_back({begin, i + 1});
      begin = i + 1;
      while (begin < text.size() && text[begin] == ' ') ++begin;
      i = begin == 0 ? 0 : begin - 1;
    }
  }
  if (begin < text.size()) out.push_back({begin, text.size()});
  return out;
}

// The claim a citation supports: the segment's sentence holding the most
// query words (by surface word; the stems already chose the segment), or
// the whole segment when it is one sentence.
std::string claim(const std::string& text, const std::vector<std::string>& terms) {
  auto parts = sentences(text);
  if (parts.size() <= 1) return cut_at_word(text, kQuoteMaxBytes);
  std::size_t best = 0;
  int best_hits = -1;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    int hits = 0;
    for (const auto& w : words(std::string_view(text).substr(parts[i].first, parts[i].second - parts[i].first)))
      for (const auto& t : terms)
        if (w.compare(0, t.size(), t) == 0) {
          ++hits;
          break;
        }
    if (hits > best_hits) best_hits = hits, best = i;
  }
  return cut_at_word(text.substr(parts[best].first, parts[best].second - parts[best].first), kQuoteMaxBytes);
}

}  // namespace

std::vector<std::pair<std::string, int>> parse_tsvector(std::string_view text, int* length) {
  std::map<std::string, int> counts;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    if (i >= text.size() || text[i] != '\'') break;
    ++i;
    std::string lexeme;
    // A quote inside a lexeme is doubled ('it''s').
    while (i < text.size()) {
      if (text[i] == '\'') {
        if (i + 1 < text.size() && text[i + 1] == '\'') {
          lexeme += '\'';
          i += 2;
          continue;
        }
        ++i;
        break;
      }
      if (text[i] == '\\' && i + 1 < text.size()) ++i;
      lexeme += text[i++];
    }
    int n = 1;
    if (i < text.size() && text[i] == ':') {
      n = 0;
      ++i;
      // Positions: 1,4,7 (each may carry a weight letter, 3A).
      while (i < text.size() && text[i] != ' ') {
        if (text[i] == ',') ++n;
        ++i;
      }
      ++n;
    }
    counts[lexeme] += n;
  }
  std::vector<std::pair<std::string, int>> out(counts.begin(), counts.end());
  if (length) {
    *length = 0;
    for (const auto& [_, n] : out) *length += n;
  }
  return out;
}

std::vector<std::string> query_terms(const std::vector<std::string>& question_lexemes) {
  std::vector<std::string> out;
  for (const auto& l : question_lexemes) {
    if (l.empty() || kQuestionFrame.count(l)) continue;
    if (std::find(out.begin(), out.end(), l) == out.end()) out.push_back(l);
  }
  return out;
}

double no_answer_threshold() { return kNoAnswerThreshold; }

const AskSegment& cited_segment(const std::vector<AskSegment>& segments, const Cited& cited, std::size_t index) {
  return index < segments.size() ? segments[index] : cited.extra.at(index - segments.size());
}

const char* match_name(Match m) {
  switch (m) {
    case Match::text:
      return "text";
    case Match::alternate:
      return "alternate";
    case Match::sound_alike:
      return "sound_alike";
    case Match::meaning_alike:
      return "meaning_alike";
  }
  return "text";
}

std::vector<QueryTerm> plain_terms(const std::vector<std::string>& lexemes) {
  std::vector<QueryTerm> out;
  for (const auto& l : lexemes) out.push_back({l, {}});
  return out;
}

Answer answer_question(const std::vector<QueryTerm>& terms, const std::vector<AskSegment>& segments,
                       const Collection& collection, const AskOptions& options, const NextSegment& next,
                       Cited* cited_out) {
  Answer out;
  if (terms.empty() || segments.empty()) return out;
  const double n = std::max(collection.segments, static_cast<double>(segments.size()));
  const double avgdl = collection.average_length > 0 ? collection.average_length : 1.0;
  // Document frequencies of the terms and their variants, in one pass over
  // the segments (a question brings hundreds of variant lexemes, a library
  // ask up to kLibraryFetchMaxSegments segments). `segments` holds every
  // segment with any of the lexemes, so counting them is exact; a library
  // ask knows commoner ones' beforehand.
  std::unordered_map<std::string, double> counted;
  for (const auto& t : terms) {
    counted.emplace(t.lexeme, 0);
    for (const auto& v : t.variants) counted.emplace(v.lexeme, 0);
  }
  for (const auto& s : segments)
    for (const auto& [lexeme, _] : s.terms)
      if (auto it = counted.find(lexeme); it != counted.end()) it->second += 1;
  auto frequency = [&](const std::string& lexeme) {
    double df = counted.at(lexeme);
    if (auto known = collection.document_frequency.find(lexeme); known != collection.document_frequency.end())
      df = std::max(df, known->second);
    return df;
  };
  auto saturate = [&](double tf, const AskSegment& s) {
    const double norm = kK1 * (1 - kB + kB * s.length / avgdl);
    return tf * (kK1 + 1) / (tf + norm);
  };

  // Each term scores a segment by the best of its forms there: the term as
  // written; the term among what the recognizer almost heard (weighted by
  // posterior); a variant (sound- or meaning-alike) by the variant's own
  // rarity times its factor, so a common word that merely sounds like a rare
  // one counts little. `cover` is the share of the term a form stands for.
  std::vector<double> weight(terms.size());
  std::vector<std::vector<double>> variant_weight(terms.size());
  double total_weight = 0;
  for (std::size_t t = 0; t < terms.size(); ++t) {
    weight[t] = idf(n, frequency(terms[t].lexeme));
    total_weight += weight[t];
    for (const auto& v : terms[t].variants) variant_weight[t].push_back(idf(n, frequency(v.lexeme)));
  }
  // Which variants each lexeme is, so a segment's own lexemes (about ten) are
  // looked up once instead of every variant (hundreds) being looked up in
  // each segment: 20,000 segments times 300 variants took 100-300 ms.
  std::unordered_map<std::string, std::vector<std::pair<std::size_t, std::size_t>>> variant_of;
  for (std::size_t t = 0; t < terms.size(); ++t)
    for (std::size_t v = 0; v < terms[t].variants.size(); ++v)
      variant_of[terms[t].variants[v].lexeme].push_back({t, v});
  std::vector<double> own(segments.size());
  std::vector<std::vector<double>> cover(segments.size(), std::vector<double>(terms.size()));
  std::vector<std::vector<std::pair<std::size_t, int>>> found(terms.size());  // variant index, count
  for (std::size_t s = 0; s < segments.size(); ++s) {
    const auto& seg = segments[s];
    for (auto& f : found) f.clear();
    for (const auto& [lexeme, tf] : seg.terms)
      if (auto it = variant_of.find(lexeme); it != variant_of.end())
        for (const auto& [t, v] : it->second) found[t].push_back({v, tf});
    for (std::size_t t = 0; t < terms.size(); ++t) {
      double best = 0, share = 0;
      if (const int tf = term_count(seg, terms[t].lexeme); tf > 0) {
        best = weight[t] * saturate(tf, seg);
        share = 1;
      }
      if (const double p = kHeardGain * heard_count(seg, terms[t].lexeme); p > 0 && share < 1) {
        const double score = weight[t] * saturate(p, seg);
        if (score > best) best = score, share = std::min(1.0, p);
      }
      // In the variants' order, as ties keep the first.
      std::sort(found[t].begin(), found[t].end());
      for (std::size_t k = 0; k < found[t].size() && share < 1; ++k) {
        const auto [v, tf] = found[t][k];
        if (tf <= 0) continue;
        const auto& variant = terms[t].variants[v];
        const double factor = variant.factor * std::min(1.0, variant_weight[t][v] / std::max(weight[t], 1e-9));
        const double score = weight[t] * factor * saturate(tf, seg);
        if (score > best) best = score, share = factor;
      }
      own[s] += best;
      cover[s][t] = share;
    }
  }

  // Windows: per recording in time order, the segments within kWindowMs.
  std::vector<std::size_t> order(segments.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (segments[a].transcription_id != segments[b].transcription_id)
      return segments[a].transcription_id < segments[b].transcription_id;
    return segments[a].start_ms < segments[b].start_ms;
  });
  struct Window {
    std::size_t centre;
    std::size_t cite;  // the window's segment with the best own score
    double pooled = 0;
    double coverage = 0;
  };
  std::vector<Window> windows;
  windows.reserve(order.size());
  std::size_t lo = 0;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const auto& c = segments[order[k]];
    while (segments[order[lo]].transcription_id != c.transcription_id ||
           segments[order[lo]].start_ms < c.start_ms - kWindowMs)
      ++lo;
    Window w{order[k], order[k], own[order[k]], 0};
    std::vector<double> covered(terms.size());
    for (std::size_t j = lo; j < order.size(); ++j) {
      const auto& o = segments[order[j]];
      if (o.transcription_id != c.transcription_id || o.start_ms > c.start_ms + kWindowMs) break;
      if (j != k) w.pooled += kNeighbourWeight * own[order[j]];
      if (own[order[j]] > own[w.cite]) w.cite = order[j];
      for (std::size_t t = 0; t < terms.size(); ++t) covered[t] = std::max(covered[t], cover[order[j]][t]);
    }
    double got = 0;
    for (std::size_t t = 0; t < terms.size(); ++t) got += weight[t] * covered[t];
    w.coverage = total_weight > 0 ? got / total_weight : 0;
    windows.push_back(w);
  }
  std::sort(windows.begin(), windows.end(), [](const Window& a, const Window& b) {
    if (a.pooled != b.pooled) return a.pooled > b.pooled;
    return a.centre < b.centre;
  });
  if (static_cast<int>(windows.size()) > options.top_k) windows.resize(options.top_k);

  const Window& best = windows.front();
  out.confidence = best.coverage;
  if (best.pooled <= 0 || out.confidence < kNoAnswerThreshold) return out;

  out.no_answer = false;
  std::vector<std::size_t> cited;
  for (const auto& w : windows) {
    if (static_cast<int>(cited.size()) >= options.max_citations) break;
    if (!cited.empty() && w.pooled < kFurtherCitationShare * best.pooled) break;
    if (w.coverage < kNoAnswerThreshold) continue;
    const auto& s = segments[w.cite];
    bool near = false;
    for (auto c : cited)
      near = near || (segments[c].transcription_id == s.transcription_id &&
                      std::llabs(segments[c].start_ms - s.start_ms) < kCitationSpacingMs);
    if (near) continue;
    cited.push_back(w.cite);
  }
  std::vector<std::string> surface;
  for (const auto& t : terms) {
    surface.push_back(t.lexeme);
    for (const auto& v : t.variants) surface.push_back(v.lexeme);
  }
  Cited moved;
  for (std::size_t i = 0; i < cited.size(); ++i) {
    std::size_t index = cited[i];
    const AskSegment* s = &segments[index];
    const bool question = !s->text.empty() && s->text.find_last_not_of(" ") != std::string::npos &&
                          s->text[s->text.find_last_not_of(" ")] == '?';
    if (question && next) {
      if (auto after = next(*s); after && after->start_ms - s->end_ms <= kAnswerFollowsMs) {
        moved.extra.push_back(std::move(*after));
        index = segments.size() + moved.extra.size() - 1;
        s = &moved.extra.back();
      }
    }
    const int marker = static_cast<int>(i) + 1;
    out.citations.push_back({marker, index, cut_at_word(s->text, kQuoteMaxBytes)});
    if (!out.answer.empty()) out.answer += ' ';
    out.answer += claim(s->text, surface) + " [" + std::to_string(marker) + "]";
  }
  if (cited_out) *cited_out = std::move(moved);
  return out;
}

}  // namespace scribe::enrichment
