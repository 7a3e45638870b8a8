#include "enrichment/segmentation.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

namespace scribe::enrichment {
namespace {

// Two bags of terms compared by cosine while words move in and out of them,
// each change in O(1): the dot product and the squared norms are updated
// rather than recomputed.
class SlidingPair {
 public:
  explicit SlidingPair(const std::vector<double>& weights)
      : weights_(weights), left_(weights.size()), right_(weights.size()) {}

  void add_left(int term) { change(left_, right_, term, +1, left_norm_); }
  void remove_left(int term) { change(left_, right_, term, -1, left_norm_); }
  void add_right(int term) { change(right_, left_, term, +1, right_norm_); }
  void remove_right(int term) { change(right_, left_, term, -1, right_norm_); }

  double cosine() const {
    if (left_norm_ <= 1e-12 || right_norm_ <= 1e-12) return 0;
    return std::clamp(dot_ / std::sqrt(left_norm_ * right_norm_), 0.0, 1.0);
  }

 private:
  void change(std::vector<int>& mine, const std::vector<int>& other, int term, int delta, double& norm) {
    const double w2 = weights_[term] * weights_[term];
    dot_ += delta * other[term] * w2;
    norm += (2.0 * mine[term] + delta) * delta * w2;
    mine[term] += delta;
  }

  const std::vector<double>& weights_;
  std::vector<int> left_;
  std::vector<int> right_;
  double dot_ = 0;
  double left_norm_ = 0;
  double right_norm_ = 0;
};

std::vector<double> smooth(const std::vector<double>& v, int radius) {
  if (radius <= 0 || v.empty()) return v;
  const int n = static_cast<int>(v.size());
  std::vector<double> prefix(n + 1, 0);
  for (int i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + v[i];
  std::vector<double> out(n);
  for (int i = 0; i < n; ++i) {
    const int lo = std::max(0, i - radius);
    const int hi = std::min(n, i + radius + 1);
    out[i] = (prefix[hi] - prefix[lo]) / (hi - lo);
  }
  return out;
}

// Hearst's depth score at every gap: how far the curve rises from the gap to
// the nearest peak on either side, climbing while it keeps rising. The peak
// reached from gap i is the one reached from i - 1 (or i + 1) when the curve
// rises that way, so both sides take one pass.
std::vector<double> depth_scores(const std::vector<double>& s, bool relative) {
  const int n = static_cast<int>(s.size());
  std::vector<int> left(n), right(n);
  for (int i = 0; i < n; ++i) left[i] = i > 0 && s[i - 1] >= s[i] ? left[i - 1] : i;
  for (int i = n - 1; i >= 0; --i) right[i] = i + 1 < n && s[i + 1] >= s[i] ? right[i + 1] : i;
  std::vector<double> depth(n);
  for (int i = 0; i < n; ++i) {
    const double peaks = s[left[i]] + s[right[i]];
    depth[i] = peaks - 2 * s[i];
    if (relative) depth[i] = peaks > 0 ? depth[i] / peaks : 0;
  }
  return depth;
}

// A valley: the curve falls into gap i and does not fall after it. The first
// and last gaps are never valleys; a window cut short by the edge of the
// transcript says nothing there.
bool is_minimum(const std::vector<double>& s, int i) {
  const int n = static_cast<int>(s.size());
  return i > 0 && i + 1 < n && s[i - 1] > s[i] && s[i + 1] >= s[i];
}

void mean_sd(const std::vector<double>& v, double& mean, double& sd) {
  mean = 0;
  sd = 0;
  if (v.empty()) return;
  mean = std::accumulate(v.begin(), v.end(), 0.0) / v.size();
  double sq = 0;
  for (double x : v) sq += (x - mean) * (x - mean);
  sd = std::sqrt(sq / v.size());
}

// The cosine similarity at every gap between segments (gap g lies before
// segment g + 1) of the `window` content words before it and after it.
std::vector<double> window_similarity(const std::vector<int>& tokens, const std::vector<int>& seg_pos,
                                      const std::vector<double>& weights, int window) {
  const int n = static_cast<int>(seg_pos.size()) - 1;
  const int total = static_cast<int>(tokens.size());
  std::vector<double> sim(std::max(0, n - 1), 0);
  SlidingPair pair(weights);
  int left_begin = 0, split = 0, right_end = 0;  // left = [left_begin, split), right = [split, right_end)
  for (int g = 0; g + 1 < n; ++g) {
    const int p = seg_pos[g + 1];
    const int new_right_end = std::min(total, p + window);
    for (; right_end < new_right_end; ++right_end) pair.add_right(tokens[right_end]);
    for (; split < p; ++split) {
      pair.remove_right(tokens[split]);
      pair.add_left(tokens[split]);
    }
    for (; left_begin < std::max(0, p - window); ++left_begin) pair.remove_left(tokens[left_begin]);
    sim[g] = pair.cosine();
  }
  return sim;
}

std::vector<TopicBoundary> tile_default(const Corpus& corpus, const SegmentationOptions& o) {
  const int n = corpus.segment_count();
  // The content words in order, and where each segment starts among them.
  std::vector<int> tokens;
  std::vector<int> seg_pos(n + 1, 0);
  for (int i = 0; i < n; ++i) {
    seg_pos[i] = static_cast<int>(tokens.size());
    for (int w = corpus.segment_word_begin(i); w < corpus.segment_word_begin(i + 1); ++w)
      if (corpus.words()[w].term >= 0) tokens.push_back(corpus.words()[w].term);
  }
  seg_pos[n] = static_cast<int>(tokens.size());
  const int window = std::max(1, o.window_tokens);
  std::vector<double> weights(corpus.term_count());
  for (int t = 0; t < corpus.term_count(); ++t) weights[t] = corpus.idf(t);

  const std::vector<double> sim = window_similarity(tokens, seg_pos, weights, window);
  const std::vector<double> s = smooth(sim, o.smoothing_radius);

  struct Candidate {
    int segment;
    double depth;
  };
  std::vector<Candidate> candidates;
  std::vector<double> depths;
  const std::vector<double> depth = depth_scores(s, o.relative_depth);
  for (int g = 0; g + 1 < n; ++g) {
    if (!is_minimum(s, g)) continue;
    candidates.push_back({g + 1, depth[g]});
    depths.push_back(depth[g]);
  }
  double mean = 0, sd = 0;
  mean_sd(depths, mean, sd);
  const double cutoff = std::max(o.min_depth, mean - o.depth_cutoff_sd * sd);
  std::erase_if(candidates, [&](const Candidate& c) { return c.depth <= cutoff; });
  // Deepest first; ties go to the earlier segment so the result is deterministic.
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.depth > b.depth; });

  const auto& segs = corpus.transcript().segments;
  const double first_start = segs.front().start;
  const double last_end = std::max(segs.back().end, segs.back().start);
  const int min_segments = std::max(1, o.min_section_segments);
  std::set<int> accepted;
  std::vector<TopicBoundary> out;
  const int max_boundaries = std::max(0, o.max_sections - 1);
  for (const Candidate& c : candidates) {
    if (static_cast<int>(out.size()) >= max_boundaries) break;
    const int i = c.segment;
    const double start = segs[i].start;
    if (i < min_segments || n - i < min_segments) continue;
    if (start - first_start < o.min_section_seconds || last_end - start < o.min_section_seconds) continue;
    auto next = accepted.lower_bound(i);
    if (next != accepted.end() && (*next - i < min_segments || segs[*next].start - start < o.min_section_seconds))
      continue;
    if (next != accepted.begin()) {
      const int prev = *std::prev(next);
      if (i - prev < min_segments || start - segs[prev].start < o.min_section_seconds) continue;
    }
    accepted.insert(i);
    out.push_back({i, c.depth});
  }
  std::sort(out.begin(), out.end(),
            [](const TopicBoundary& a, const TopicBoundary& b) { return a.segment < b.segment; });
  // Smoothing finds changes of topic more reliably but blurs where they are:
  // each boundary moves to the nearby gap where the unsmoothed similarity is
  // lowest, as long as the sections stay long enough.
  if (o.refine_radius > 0 && !out.empty()) {
    const std::vector<double>& fine = sim;
    auto spaced = [&](int a, int b) {  // segments a < b may both start sections
      return b - a >= min_segments && segs[b].start - segs[a].start >= o.min_section_seconds;
    };
    for (std::size_t k = 0; k < out.size(); ++k) {
      const int prev = k == 0 ? 0 : out[k - 1].segment;
      const bool last = k + 1 == out.size();
      const int next = last ? n : out[k + 1].segment;
      int best = out[k].segment;
      for (int i = std::max(1, best - o.refine_radius); i <= std::min(n - 1, out[k].segment + o.refine_radius); ++i) {
        if (!spaced(prev, i) || fine[i - 1] >= fine[best - 1]) continue;
        if (last ? (n - i < min_segments || last_end - segs[i].start < o.min_section_seconds) : !spaced(i, next))
          continue;
        best = i;
      }
      out[k].segment = best;
    }
  }
  return out;
}

std::vector<TopicBoundary> tile_plain(const Corpus& corpus, const SegmentationOptions& o) {
  const int n = corpus.segment_count();
  const auto& words = corpus.words();
  const int total = static_cast<int>(words.size());
  const int w = std::max(1, o.tt_sequence_tokens);
  const int k = std::max(1, o.tt_block_sequences);
  const int sequences = (total + w - 1) / w;
  if (sequences < 2) return {};
  // Raw counts per sequence are summed over k sequences on either side of each
  // gap; the sliding pair keeps that linear.
  std::vector<double> ones(corpus.term_count(), 1.0);
  SlidingPair pair(ones);
  auto seq_terms = [&](int seq, auto&& fn) {
    for (int i = seq * w; i < std::min(total, (seq + 1) * w); ++i)
      if (words[i].term >= 0) fn(words[i].term);
  };
  std::vector<double> sim(sequences - 1, 0);
  int left_begin = 0, split = 0, right_end = 0;  // in sequences
  for (int g = 0; g + 1 < sequences; ++g) {
    const int p = g + 1;
    for (; right_end < std::min(sequences, p + k); ++right_end) seq_terms(right_end, [&](int t) { pair.add_right(t); });
    for (; split < p; ++split)
      seq_terms(split, [&](int t) {
        pair.remove_right(t);
        pair.add_left(t);
      });
    for (; left_begin < std::max(0, p - k); ++left_begin) seq_terms(left_begin, [&](int t) { pair.remove_left(t); });
    sim[g] = pair.cosine();
  }
  const std::vector<double> s = smooth(sim, 1);
  const std::vector<double> depth = depth_scores(s, false);
  double mean = 0, sd = 0;
  mean_sd(depth, mean, sd);
  const double cutoff = mean - o.tt_cutoff_sd * sd;
  std::vector<int> gaps;
  for (std::size_t g = 0; g < s.size(); ++g)
    if (depth[g] > cutoff && depth[g] > 0 && is_minimum(s, static_cast<int>(g))) gaps.push_back(static_cast<int>(g));
  std::stable_sort(gaps.begin(), gaps.end(), [&](int a, int b) { return depth[a] > depth[b]; });
  std::set<int> kept;
  std::vector<TopicBoundary> out;
  for (int g : gaps) {
    auto next = kept.lower_bound(g);
    if (next != kept.end() && *next - g < o.tt_min_gap_sequences) continue;
    if (next != kept.begin() && g - *std::prev(next) < o.tt_min_gap_sequences) continue;
    kept.insert(g);
    // The gap sits before word (g + 1) * w; move it to the nearest segment start.
    const int word = std::min(total - 1, (g + 1) * w);
    const int seg = words[word].segment;
    const int before = corpus.segment_word_begin(seg);
    const int after = seg + 1 < n ? corpus.segment_word_begin(seg + 1) : total;
    const int boundary = (word - before <= after - word || seg + 1 >= n) ? seg : seg + 1;
    if (boundary >= 1 && boundary < n) out.push_back({boundary, depth[g]});
  }
  std::sort(out.begin(), out.end(), [](const TopicBoundary& a, const TopicBoundary& b) {
    return a.segment != b.segment ? a.segment < b.segment : a.depth > b.depth;
  });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const TopicBoundary& a, const TopicBoundary& b) { return a.segment == b.segment; }),
            out.end());
  return out;
}

}  // namespace

std::vector<TopicBoundary> find_boundaries(const Corpus& corpus, SegmentationMethod method,
                                           const SegmentationOptions& options) {
  if (corpus.segment_count() < 2) return {};
  return method == SegmentationMethod::kPlainTextTiling ? tile_plain(corpus, options) : tile_default(corpus, options);
}

std::vector<int> topic_boundaries(const transcript::TranscriptArtifact& t, SegmentationMethod method,
                                  const SegmentationOptions& options) {
  const Corpus corpus(t);
  std::vector<int> out;
  for (const TopicBoundary& b : find_boundaries(corpus, method, options)) out.push_back(b.segment);
  return out;
}

}  // namespace scribe::enrichment
