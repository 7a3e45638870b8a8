#include "enrichment/structure.h"

#include <algorithm>
#include <cmath>
#include <queue>
#include <unordered_map>

#include "enrichment/labels.h"

namespace scribe::enrichment {
namespace {

// How much longer than the average merged span a merge may make one before
// its penalty outweighs a perfect similarity.
constexpr double kLengthPenalty = 0.15;

struct Node {
  Span span;
  std::unordered_map<int, double> vec;  // term -> count * idf
  double norm = 0;
  int prev = -1;
  int next = -1;
  int version = 0;
  bool alive = true;
};

double cosine(const Node& a, const Node& b) {
  if (a.norm <= 0 || b.norm <= 0) return 0;
  const Node& small = a.vec.size() <= b.vec.size() ? a : b;
  const Node& large = &small == &a ? b : a;
  double dot = 0;
  for (const auto& [t, x] : small.vec) {
    auto it = large.vec.find(t);
    if (it != large.vec.end()) dot += x * it->second;
  }
  return dot / (a.norm * b.norm);
}

void refresh_norm(Node& n) {
  double sq = 0;
  for (const auto& [t, x] : n.vec) sq += x * x;
  n.norm = std::sqrt(sq);
}

struct PairEntry {
  bool urgent;
  double score;
  int left;
  int right;
  int left_version;
  int right_version;
  bool operator<(const PairEntry& o) const {  // max-heap: "less" is the worse merge
    if (urgent != o.urgent) return !urgent;
    if (score != o.score) return score < o.score;
    return left > o.left;  // the earlier pair first among equals
  }
};

}  // namespace

std::vector<Span> spans_from_boundaries(int segment_count, const std::vector<int>& boundaries) {
  std::vector<Span> out;
  if (segment_count <= 0) return out;
  int first = 0;
  for (int b : boundaries) {
    if (b <= first || b >= segment_count) continue;
    out.push_back({first, b});
    first = b;
  }
  out.push_back({first, segment_count});
  return out;
}

double span_start(const Corpus& corpus, const std::vector<Span>& spans, std::size_t i, Timing timing) {
  if (timing == Timing::kCovering && i == 0) return 0;
  return std::max(0.0, corpus.segment(spans[i].first).start);
}

double span_end(const Corpus& corpus, const std::vector<Span>& spans, std::size_t i, Timing timing) {
  const double start = span_start(corpus, spans, i, timing);
  if (timing == Timing::kCovering) {
    const double end = i + 1 < spans.size() ? corpus.segment(spans[i + 1].first).start : corpus.recording_end();
    return std::max(start, end);
  }
  return std::max(start, corpus.segment(spans[i].end - 1).end);
}

std::vector<Span> merge_spans(const Corpus& corpus, const std::vector<Span>& spans, int max_count, double min_seconds) {
  const int k = static_cast<int>(spans.size());
  if (k <= 1) return spans;
  std::vector<Node> nodes(k);
  for (int i = 0; i < k; ++i) {
    Node& n = nodes[i];
    n.span = spans[i];
    n.prev = i - 1;
    n.next = i + 1 < k ? i + 1 : -1;
    for (int w = corpus.span_word_begin(n.span); w < corpus.span_word_end(n.span); ++w) {
      const int t = corpus.words()[w].term;
      if (t >= 0) n.vec[t] += corpus.idf(t);
    }
    refresh_norm(n);
  }
  // Durations on the covering clock, so that the first span counts from 0.
  auto start_of = [&](int i) { return nodes[i].prev < 0 ? 0.0 : corpus.segment(nodes[i].span.first).start; };
  auto duration = [&](int i) {
    const double end =
        nodes[i].next < 0 ? corpus.recording_end() : corpus.segment(nodes[nodes[i].next].span.first).start;
    return end - start_of(i);
  };
  const double target = corpus.recording_end() / std::max(1, max_count);
  std::priority_queue<PairEntry> heap;
  auto push_pair = [&](int left) {
    const int right = nodes[left].next;
    if (left < 0 || right < 0) return;
    const double da = duration(left), db = duration(right);
    const bool urgent = da < min_seconds || db < min_seconds;
    const double penalty = target > 0 ? kLengthPenalty * (da + db) / target : 0;
    heap.push(
        {urgent, cosine(nodes[left], nodes[right]) - penalty, left, right, nodes[left].version, nodes[right].version});
  };
  for (int i = 0; i + 1 < k; ++i) push_pair(i);
  int alive = k;
  while (alive > 1 && !heap.empty()) {
    const PairEntry e = heap.top();
    heap.pop();
    Node& a = nodes[e.left];
    Node& b = nodes[e.right];
    if (!a.alive || !b.alive || a.next != e.right || a.version != e.left_version || b.version != e.right_version)
      continue;
    if (!e.urgent && alive <= max_count) break;
    a.span.end = b.span.end;
    for (const auto& [t, x] : b.vec) a.vec[t] += x;
    b.vec.clear();
    refresh_norm(a);
    b.alive = false;
    a.next = b.next;
    if (b.next >= 0) nodes[b.next].prev = e.left;
    ++a.version;
    --alive;
    // The version bump retired a's old pairs; its two new ones replace them.
    if (a.prev >= 0) push_pair(a.prev);
    push_pair(e.left);
  }
  std::vector<Span> out;
  for (int i = 0; i >= 0; i = nodes[i].next) out.push_back(nodes[i].span);
  return out;
}

std::vector<LabeledSpan> label_spans(const Corpus& corpus, const std::vector<Span>& spans, Timing timing,
                                     const Steering& steering, const LabelStyle& style) {
  std::vector<LabeledSpan> out(spans.size());
  std::vector<std::vector<Keyphrase>> phrases(spans.size());
  std::vector<int> hints(spans.size());
  for (std::size_t i = 0; i < spans.size(); ++i) {
    LabeledSpan& l = out[i];
    l.span = spans[i];
    l.start = span_start(corpus, spans, i, timing);
    l.end = span_end(corpus, spans, i, timing);
    l.terms = span_terms(corpus, spans[i], steering);
    l.phrases = keyphrases(corpus, spans[i], l.terms, steering);
    l.summary = summarize(corpus, spans[i], l.terms, steering, style.summary_sentences, style.summary_bytes);
    phrases[i] = l.phrases;
    hints[i] = static_cast<int>(i) + 1;
  }
  const std::vector<std::string> titles = make_titles(corpus, phrases, hints, style.titles);
  for (std::size_t i = 0; i < spans.size(); ++i) out[i].title = titles[i];
  return out;
}

}  // namespace scribe::enrichment
