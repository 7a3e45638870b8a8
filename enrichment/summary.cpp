#include "enrichment/labels.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "enrichment/text.h"

namespace scribe::enrichment {
namespace {

constexpr std::string_view kEllipsis = "\xE2\x80\xA6";  // "…"

// The idf-weighted terms of one sentence, sorted by term.
std::vector<std::pair<int, double>> sentence_vector(const Corpus& corpus, int sentence) {
  const CorpusSentence& s = corpus.sentences()[sentence];
  std::vector<std::pair<int, double>> v;
  for (int w = s.first_word; w < s.end_word; ++w) {
    const int term = corpus.words()[w].term;
    if (term >= 0) v.emplace_back(term, corpus.idf(term));
  }
  std::sort(v.begin(), v.end());
  // Repeated terms add up.
  std::vector<std::pair<int, double>> out;
  for (const auto& [t, x] : v) {
    if (!out.empty() && out.back().first == t) {
      out.back().second += x;
    } else {
      out.emplace_back(t, x);
    }
  }
  return out;
}

double norm(const std::vector<std::pair<int, double>>& v) {
  double sq = 0;
  for (const auto& [t, x] : v) sq += x * x;
  return std::sqrt(sq);
}

double length_factor(int words, int content) {
  double f = words < 5 ? 0.3 : words < 8 ? 0.7 : words <= 40 ? 1.0 : words <= 60 ? 0.85 : 0.7;
  // A sentence of fillers around one keyword ("Yeah, black holes, right?")
  // points the right way but says little.
  return f * std::sqrt(std::min(1.0, content / 6.0));
}

}  // namespace

std::vector<double> sentence_scores(const Corpus& corpus, const Span& span, const SpanTerms& terms,
                                    const Steering& steering) {
  std::vector<double> out;
  if (span.empty()) return out;
  for (int si = corpus.span_sentence_begin(span); si < corpus.span_sentence_end(span); ++si) {
    const CorpusSentence& s = corpus.sentences()[si];
    const auto v = sentence_vector(corpus, si);
    double dot = 0;
    int content = 0;
    bool steered = false;
    for (const auto& [t, x] : v) {
      auto it = terms.weight.find(t);
      if (it != terms.weight.end()) dot += x * it->second;
      steered = steered || steering.has(t);
    }
    for (int w = s.first_word; w < s.end_word; ++w) content += corpus.words()[w].term >= 0;
    const double n = norm(v);
    double score = n > 0 && terms.norm > 0 ? dot / (n * terms.norm) : 0;
    score *= length_factor(s.end_word - s.first_word, content);
    if (s.question) score *= 0.6;  // a question rarely summarizes; its answer does
    if (steered) score *= 1 + steering.boost;
    out.push_back(score);
  }
  return out;
}

double sentence_similarity(const Corpus& corpus, int a, const int b) {
  const auto va = sentence_vector(corpus, a);
  const auto vb = sentence_vector(corpus, b);
  double dot = 0;
  for (std::size_t i = 0, j = 0; i < va.size() && j < vb.size();) {
    if (va[i].first == vb[j].first) {
      dot += va[i++].second * vb[j++].second;
    } else if (va[i].first < vb[j].first) {
      ++i;
    } else {
      ++j;
    }
  }
  const double n = norm(va) * norm(vb);
  return n > 0 ? dot / n : 0;
}

std::vector<int> pick_sentences(const Corpus& corpus, int first_sentence, const std::vector<double>& scores,
                                int count) {
  std::vector<int> picked;
  // Only the best few dozen are worth comparing with each other.
  std::vector<int> order(scores.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  const std::size_t keep = std::min<std::size_t>(order.size(), 40);
  std::partial_sort(order.begin(), order.begin() + keep, order.end(),
                    [&](int a, int b) { return scores[a] != scores[b] ? scores[a] > scores[b] : a < b; });
  order.resize(keep);
  while (static_cast<int>(picked.size()) < count) {
    int best = -1;
    double best_value = 0;
    for (int i : order) {
      if (scores[i] <= 0) continue;
      const int s = first_sentence + i;
      if (std::find(picked.begin(), picked.end(), s) != picked.end()) continue;
      double redundancy = 0;
      for (int p : picked) redundancy = std::max(redundancy, sentence_similarity(corpus, s, p));
      const double value = scores[i] * (1 - 0.7 * redundancy);
      if (value > best_value) {
        best_value = value;
        best = s;
      }
    }
    if (best < 0) break;
    picked.push_back(best);
  }
  return picked;
}

std::string join_sentences(const Corpus& corpus, const std::vector<int>& by_importance, std::size_t max_bytes) {
  if (by_importance.empty()) return {};
  const std::string_view first = corpus.sentence_text(corpus.sentences()[by_importance.front()]);
  if (first.size() > max_bytes) {
    return cut_at_word(first, max_bytes > kEllipsis.size() + 1 ? max_bytes - kEllipsis.size() - 1 : 1) +
           std::string(kEllipsis);
  }
  std::vector<int> chosen = {by_importance.front()};
  std::size_t length = first.size();
  for (std::size_t i = 1; i < by_importance.size(); ++i) {
    const std::size_t more = corpus.sentence_text(corpus.sentences()[by_importance[i]]).size() + 1;
    if (length + more > max_bytes) continue;
    length += more;
    chosen.push_back(by_importance[i]);
  }
  std::sort(chosen.begin(), chosen.end());
  std::string out;
  for (int s : chosen) {
    if (!out.empty()) out += ' ';
    out += corpus.sentence_text(corpus.sentences()[s]);
  }
  return out;
}

std::string summarize(const Corpus& corpus, const Span& span, const SpanTerms& terms, const Steering& steering,
                      int count, std::size_t max_bytes) {
  if (span.empty()) return {};
  const auto scores = sentence_scores(corpus, span, terms, steering);
  std::vector<int> picked = pick_sentences(corpus, corpus.span_sentence_begin(span), scores, count);
  // A span of fillers and greetings has no central sentence; its first one is still what it says.
  if (picked.empty() && corpus.span_sentence_end(span) > corpus.span_sentence_begin(span))
    picked.push_back(corpus.span_sentence_begin(span));
  return join_sentences(corpus, picked, max_bytes);
}

}  // namespace scribe::enrichment
