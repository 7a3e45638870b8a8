// Scores of a topic segmentation against a reference, for
// bench/enrichment_quality_benchmark.cpp (header only; checked by its
// --self-test mode).
//
// A segmentation of N units (seconds, or transcript segments) is written as a
// label per unit: the index of the topic the unit belongs to, starting at 0
// and growing by one at each boundary ("0 0 0 1 1 2 2 2").
//
//   Boundary precision / recall / F1: predicted and true boundary times are
//   matched one to one, a pair counting as a hit when the two are at most
//   `tolerance` apart; the matching is a maximum one (two-pointer sweep over
//   the sorted times, which is optimal for interval tolerances on a line).
//   P = hits / predicted, R = hits / true, F1 their harmonic mean.
//
//   Pk (Beeferman, Berger and Lafferty 1999): a window of width k slides over
//   the units; at each of the N - k positions i it asks whether units i and
//   i + k are in the same topic, in the reference and in the hypothesis. Pk is
//   the fraction of positions where the two answers differ. 0 is perfect;
//   lower is better.
//
//   WindowDiff (Pevzner and Hearst 2002): the same windows, counting a
//   position as an error when the number of boundaries between i and i + k
//   differs between reference and hypothesis (Pk misses a window that holds
//   two boundaries on one side and one on the other). 0 is perfect.
//
//   k is half the mean true segment length in units, rounded, at least 1.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace scribe::bench::segeval {

struct BoundaryScore {
  int hits = 0;
  int predicted = 0;
  int reference = 0;

  // With nothing predicted, precision is 1 when nothing was to be found and 0
  // otherwise; the same for recall with nothing to find.
  double precision() const { return predicted > 0 ? double(hits) / predicted : (reference == 0 ? 1.0 : 0.0); }
  double recall() const { return reference > 0 ? double(hits) / reference : (predicted == 0 ? 1.0 : 0.0); }
  double f1() const {
    const double p = precision(), r = recall();
    return p + r > 0 ? 2 * p * r / (p + r) : 0.0;
  }
  BoundaryScore& operator+=(const BoundaryScore& o) {
    hits += o.hits;
    predicted += o.predicted;
    reference += o.reference;
    return *this;
  }
};

// Maximum one-to-one matching of `predicted` and `reference` boundary times
// where a pair matches when |p - t| <= tolerance.
inline BoundaryScore match_boundaries(std::vector<double> predicted, std::vector<double> reference, double tolerance) {
  std::sort(predicted.begin(), predicted.end());
  std::sort(reference.begin(), reference.end());
  BoundaryScore s;
  s.predicted = int(predicted.size());
  s.reference = int(reference.size());
  std::size_t i = 0, j = 0;
  while (i < predicted.size() && j < reference.size()) {
    if (std::abs(predicted[i] - reference[j]) <= tolerance) {
      ++s.hits;
      ++i;
      ++j;
    } else if (predicted[i] < reference[j]) {
      ++i;  // too early for this and every later true boundary
    } else {
      ++j;  // this true boundary is too early for every later prediction
    }
  }
  return s;
}

// Labels of `units` units from the indices of the units that start a new
// topic (0 and indices out of range are ignored, duplicates count once).
inline std::vector<int> labels_from_starts(int units, std::vector<int> starts) {
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  std::vector<int> labels(std::max(units, 0), 0);
  int label = 0;
  std::size_t next = 0;
  for (int u = 0; u < units; ++u) {
    while (next < starts.size() && starts[next] <= u) {
      if (starts[next] > 0) ++label;
      ++next;
    }
    labels[u] = label;
  }
  return labels;
}

// Labels over a time grid of `step` seconds covering [0, duration): unit i is
// [i * step, (i + 1) * step) and belongs to the topic in force at its middle.
inline std::vector<int> labels_over_time(double duration, std::vector<double> boundary_times, double step = 1.0) {
  const int units = std::max(1, int(std::ceil(duration / step - 1e-9)));
  std::sort(boundary_times.begin(), boundary_times.end());
  std::vector<int> labels(units, 0);
  std::size_t next = 0;
  int label = 0;
  for (int u = 0; u < units; ++u) {
    const double mid = (u + 0.5) * step;
    while (next < boundary_times.size() && boundary_times[next] <= mid) {
      if (boundary_times[next] > 0) ++label;
      ++next;
    }
    labels[u] = label;
  }
  return labels;
}

// Half the mean length of the reference's segments, rounded, at least 1.
inline int half_mean_segment_length(const std::vector<int>& reference) {
  if (reference.empty()) return 1;
  const int segments = reference.back() - reference.front() + 1;
  return std::max(1, int(std::lround(double(reference.size()) / (2.0 * segments))));
}

// Pk over labels of equal length with window k; 0 when there is no window.
inline double pk(const std::vector<int>& reference, const std::vector<int>& hypothesis, int k) {
  const std::size_t n = std::min(reference.size(), hypothesis.size());
  if (k < 1 || n <= std::size_t(k)) return 0.0;
  std::size_t errors = 0;
  for (std::size_t i = 0; i + k < n; ++i) {
    const bool ref_same = reference[i] == reference[i + k];
    const bool hyp_same = hypothesis[i] == hypothesis[i + k];
    errors += ref_same != hyp_same;
  }
  return double(errors) / double(n - k);
}

// WindowDiff over labels of equal length with window k (labels grow by one at
// each boundary, so the boundaries between i and i + k are the difference).
inline double window_diff(const std::vector<int>& reference, const std::vector<int>& hypothesis, int k) {
  const std::size_t n = std::min(reference.size(), hypothesis.size());
  if (k < 1 || n <= std::size_t(k)) return 0.0;
  std::size_t errors = 0;
  for (std::size_t i = 0; i + k < n; ++i) {
    const int ref_count = reference[i + k] - reference[i];
    const int hyp_count = hypothesis[i + k] - hypothesis[i];
    errors += ref_count != hyp_count;
  }
  return double(errors) / double(n - k);
}

// Uniform random draws for the random baseline, the same on every standard
// library: std::mt19937's sequence is fixed by the standard, the
// distributions of <random> are not, so the mapping to a range is done here
// (Lemire's multiply-and-reject, unbiased).
class Draws {
 public:
  explicit Draws(std::uint32_t seed) : engine_(seed) {}

  // Uniform in [0, n), n >= 1.
  std::uint32_t below(std::uint32_t n) {
    std::uint64_t m = std::uint64_t(std::uint32_t(engine_())) * n;
    if (std::uint32_t(m) < n) {
      const std::uint32_t threshold = std::uint32_t(-n) % n;
      while (std::uint32_t(m) < threshold) m = std::uint64_t(std::uint32_t(engine_())) * n;
    }
    return std::uint32_t(m >> 32);
  }

  // `count` distinct values of [lo, hi), sorted (all of them when the range
  // is smaller): a partial Fisher-Yates shuffle.
  std::vector<int> distinct(int count, int lo, int hi) {
    std::vector<int> pool;
    for (int v = lo; v < hi; ++v) pool.push_back(v);
    const int take = std::min<int>(count, int(pool.size()));
    for (int i = 0; i < take; ++i) std::swap(pool[i], pool[i + below(std::uint32_t(pool.size() - i))]);
    pool.resize(std::max(take, 0));
    std::sort(pool.begin(), pool.end());
    return pool;
  }

 private:
  std::mt19937 engine_;
};

}  // namespace scribe::bench::segeval
