#include "enrichment/structure.h"

#include <algorithm>
#include <cmath>

#include "enrichment/labels.h"

namespace scribe::enrichment {
namespace {

constexpr int kHighlights = 5;
constexpr int kClips = 3;
constexpr double kClipMinSeconds = 15;
constexpr double kClipTargetSeconds = 20;
constexpr double kClipMaxSeconds = 60;
constexpr int kMinQuotes = 8;
constexpr int kMaxQuotes = 12;

std::vector<int> by_salience(const std::vector<LabeledSpan>& spans) {
  std::vector<int> order(spans.size());
  for (std::size_t i = 0; i < spans.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return spans[a].terms.salience > spans[b].terms.salience; });
  return order;
}

// A sentence that opens with a conjunction leans on the one before it.
bool leans_back(const Corpus& corpus, const CorpusSentence& s) {
  if (s.end_word <= s.first_word) return false;
  const std::string& w = corpus.form(corpus.words()[s.first_word].form);
  return w == "and" || w == "but" || w == "so" || w == "because" || w == "or" || w == "then";
}

// Headline phrases for a stretch inside a section: its own keyphrases first,
// then the section's that say something else.
std::vector<Keyphrase> headline_phrases(const Corpus& corpus, const Span& inner, const LabeledSpan& section,
                                        const Steering& steering) {
  const SpanTerms terms = span_terms(corpus, inner, steering);
  std::vector<Keyphrase> out = keyphrases(corpus, inner, terms, steering, 4);
  for (const Keyphrase& p : section.phrases) {
    const bool overlaps = std::any_of(out.begin(), out.end(), [&](const Keyphrase& q) {
      return std::any_of(p.terms.begin(), p.terms.end(),
                         [&](int t) { return std::binary_search(q.terms.begin(), q.terms.end(), t); });
    });
    if (!overlaps) out.push_back(p);
  }
  return out;
}

std::vector<PostingItem> highlights(const std::vector<LabeledSpan>& sections,
                                    const std::vector<LabeledSpan>& chapters) {
  const auto& source = chapters.size() >= kHighlights || sections.size() <= chapters.size() ? chapters : sections;
  std::vector<int> chosen = by_salience(source);
  if (chosen.size() > kHighlights) chosen.resize(kHighlights);
  std::sort(chosen.begin(), chosen.end());
  std::vector<PostingItem> out;
  for (int i : chosen) out.push_back({source[i].start, source[i].title, std::nullopt});
  return out;
}

struct Window {
  int section;
  Span span;
  double score;
};

std::vector<PostingItem> clips(const Corpus& corpus, const std::vector<LabeledSpan>& sections,
                               const std::vector<std::vector<double>>& scores, const Steering& steering) {
  std::vector<Window> windows;
  const bool short_recording = corpus.recording_end() < kClipMinSeconds;
  for (std::size_t si = 0; si < sections.size(); ++si) {
    const Span& sec = sections[si].span;
    const int first_sentence = corpus.span_sentence_begin(sec);
    for (int a = sec.first; a < sec.end; ++a) {
      const double start = corpus.segment(a).start;
      int e = a + 1;
      while (e < sec.end && corpus.segment(e - 1).end - start < kClipTargetSeconds) ++e;
      const double length = corpus.segment(e - 1).end - start;
      if (length > kClipMaxSeconds || (length < kClipMinSeconds && !short_recording)) continue;
      double sum = 0;
      int n = 0;
      for (int s = corpus.segment_sentence_begin(a); s < corpus.segment_sentence_begin(e); ++s, ++n)
        sum += scores[si][s - first_sentence];
      if (n == 0 || sum <= 0) continue;
      double score = sum / std::sqrt(n) * std::sqrt(std::max(sections[si].terms.salience, 1e-9));
      if (leans_back(corpus, corpus.sentences()[corpus.segment_sentence_begin(a)])) score *= 0.8;
      windows.push_back({static_cast<int>(si), {a, e}, score});
    }
  }
  std::stable_sort(windows.begin(), windows.end(), [](const Window& x, const Window& y) { return x.score > y.score; });
  std::vector<Window> chosen;
  // One clip per section while there are sections enough; then any that do not overlap.
  for (int pass = 0; pass < 2; ++pass) {
    for (const Window& w : windows) {
      if (static_cast<int>(chosen.size()) >= (short_recording ? 1 : kClips)) break;
      const bool clash = std::any_of(chosen.begin(), chosen.end(), [&](const Window& c) {
        return (pass == 0 && c.section == w.section) || (w.span.first < c.span.end && c.span.first < w.span.end);
      });
      if (!clash) chosen.push_back(w);
    }
  }
  std::sort(chosen.begin(), chosen.end(), [](const Window& x, const Window& y) { return x.span.first < y.span.first; });
  std::vector<PostingItem> out;
  std::vector<std::string> taken;
  for (const Window& w : chosen) {
    // The clip is named after its most central sentence.
    const int first = corpus.span_sentence_begin(sections[w.section].span);
    int best = -1;
    for (int s = corpus.segment_sentence_begin(w.span.first); s < corpus.segment_sentence_begin(w.span.end); ++s)
      if (best < 0 || scores[w.section][s - first] > scores[w.section][best - first]) best = s;
    std::string title = best >= 0 ? sentence_headline(corpus, best, sections[w.section].terms, taken) : "";
    if (title.empty())
      title =
          unique_title(corpus, headline_phrases(corpus, w.span, sections[w.section], steering), w.section + 1, taken);
    out.push_back({corpus.segment(w.span.first).start, title, std::nullopt});
  }
  return out;
}

double quotability(const Corpus& corpus, const CorpusSentence& s, double centrality) {
  const int n = s.end_word - s.first_word;
  double f = n < 8 ? 0.3 : n <= 30 ? 1.0 : n <= 45 ? 0.8 : 0.5;
  if (s.question) f *= 0.3;
  if (leans_back(corpus, s)) f *= 0.85;
  return centrality * f;
}

std::vector<PostingItem> quotes(const Corpus& corpus, const std::vector<LabeledSpan>& sections,
                                const std::vector<std::vector<double>>& scores, const Steering& steering) {
  const int target = static_cast<int>(sections.size()) >= kMinQuotes
                         ? std::min<int>(kMaxQuotes, static_cast<int>(sections.size()))
                         : kMinQuotes;
  // Each section's sentences, best quote first.
  std::vector<std::vector<int>> ranked(sections.size());
  for (std::size_t si = 0; si < sections.size(); ++si) {
    const int first = corpus.span_sentence_begin(sections[si].span);
    std::vector<std::pair<double, int>> r;
    for (int s = first; s < corpus.span_sentence_end(sections[si].span); ++s) {
      const double q = quotability(corpus, corpus.sentences()[s], scores[si][s - first]);
      if (q > 0) r.emplace_back(q, s);
    }
    std::stable_sort(r.begin(), r.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    for (const auto& [q, s] : r) ranked[si].push_back(s);
  }
  std::vector<std::pair<int, int>> chosen;  // (sentence, section)
  std::vector<std::size_t> next(sections.size(), 0);
  const std::vector<int> order = by_salience(sections);
  bool progress = true;
  while (static_cast<int>(chosen.size()) < target && progress) {
    progress = false;
    for (int si : order) {
      if (static_cast<int>(chosen.size()) >= target) break;
      // The section's next sentence that is neither from a quoted segment nor a near repeat.
      while (next[si] < ranked[si].size()) {
        const int s = ranked[si][next[si]++];
        const bool repeat = std::any_of(chosen.begin(), chosen.end(), [&](const auto& c) {
          return corpus.sentences()[c.first].segment == corpus.sentences()[s].segment ||
                 (c.second == si && sentence_similarity(corpus, c.first, s) > 0.6);
        });
        if (repeat) continue;
        chosen.emplace_back(s, si);
        progress = true;
        break;
      }
    }
  }
  std::sort(chosen.begin(), chosen.end());
  std::vector<PostingItem> out;
  std::vector<std::string> taken;
  for (const auto& [s, si] : chosen) {
    const CorpusSentence& sentence = corpus.sentences()[s];
    std::string title = sentence_headline(corpus, s, sections[si].terms, taken);
    if (title.empty()) {
      const Span own{sentence.segment, sentence.segment + 1};
      title = unique_title(corpus, headline_phrases(corpus, own, sections[si], steering), si + 1, taken);
    }
    out.push_back({corpus.segment(sentence.segment).start, title, std::string(corpus.sentence_text(sentence))});
  }
  return out;
}

}  // namespace

PostingChapters build_posting(const Corpus& corpus, const std::vector<LabeledSpan>& sections,
                              const std::vector<LabeledSpan>& chapters, const Steering& steering) {
  PostingChapters out;
  for (const LabeledSpan& c : chapters) out.standard.push_back({c.start, c.title, std::nullopt});
  out.highlights = highlights(sections, chapters);
  std::vector<std::vector<double>> scores;
  for (const LabeledSpan& s : sections) scores.push_back(sentence_scores(corpus, s.span, s.terms, steering));
  out.clips = clips(corpus, sections, scores, steering);
  out.quoted_sections = quotes(corpus, sections, scores, steering);
  return out;
}

}  // namespace scribe::enrichment
