#include "speech/confusion_network.h"

#include <algorithm>
#include <map>

namespace scribe::speech {
namespace {

double overlap(double a0, double a1, double b0, double b1) {
  return std::max(0.0, std::min(a1, b1) - std::max(a0, b0));
}

// Overlap as a share of the shorter of the two stretches.
double overlap_share(double a0, double a1, double b0, double b1) {
  const double shorter = std::min(a1 - a0, b1 - b0);
  return shorter > 0 ? overlap(a0, a1, b0, b1) / shorter : 0;
}

struct Cluster {
  std::string word;
  double start = 0;
  double end = 0;
  double posterior = 0;
  double weighted_start = 0;  // posterior-weighted, for the cluster's time
  double weighted_end = 0;
};

}  // namespace

std::vector<Alternate> competing_words(const std::vector<LatticeArc>& arcs, const std::vector<RecognizedWord>& best,
                                       const AlternateOptions& options) {
  // Merge arcs of a word that cover the same stretch.
  std::map<std::string, std::vector<Cluster>> by_word;
  std::vector<const LatticeArc*> sorted;
  for (const auto& a : arcs)
    if (!a.word.empty() && a.end > a.start && a.posterior > 0) sorted.push_back(&a);
  std::sort(sorted.begin(), sorted.end(), [](const LatticeArc* a, const LatticeArc* b) {
    return a->start != b->start ? a->start < b->start : a->end < b->end;
  });
  for (const auto* a : sorted) {
    auto& clusters = by_word[a->word];
    Cluster* into = nullptr;
    for (auto& c : clusters)
      if (overlap_share(c.start, c.end, a->start, a->end) >= options.same_overlap) into = &c;
    if (!into) {
      clusters.push_back({a->word, a->start, a->end, 0, 0, 0});
      into = &clusters.back();
    }
    into->start = std::min(into->start, a->start);
    into->end = std::max(into->end, a->end);
    into->posterior += a->posterior;
    into->weighted_start += a->posterior * a->start;
    into->weighted_end += a->posterior * a->end;
  }

  // Slot of each cluster: the 1-best word it overlaps most (-1 for none).
  struct Candidate {
    Alternate alt;
    int slot;
  };
  std::vector<Candidate> candidates;
  for (auto& [word, clusters] : by_word)
    for (const auto& c : clusters) {
      const double p = std::min(1.0, c.posterior);
      if (p < options.min_posterior) continue;
      const double start = c.weighted_start / c.posterior, end = c.weighted_end / c.posterior;
      int slot = -1;
      double most = 0;
      bool is_best = false;
      for (std::size_t i = 0; i < best.size(); ++i) {
        const double o = overlap(start, end, best[i].start, best[i].end);
        if (o > most) most = o, slot = static_cast<int>(i);
        if (best[i].text == word && overlap_share(start, end, best[i].start, best[i].end) >= options.same_overlap)
          is_best = true;
      }
      if (is_best) continue;
      candidates.push_back({{word, start, end, p}, slot});
    }
  // At most max_per_slot per slot (gaps between 1-best words: per word's
  // own stretch, as slot -1 holds few).
  std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return a.slot != b.slot ? a.slot < b.slot : a.alt.posterior > b.alt.posterior;
  });
  std::vector<Alternate> out;
  int slot = -2, kept = 0;
  for (auto& c : candidates) {
    if (c.slot != slot) slot = c.slot, kept = 0;
    if (c.slot >= 0 && kept >= options.max_per_slot) continue;
    ++kept;
    out.push_back(std::move(c.alt));
  }
  std::sort(out.begin(), out.end(), [](const Alternate& a, const Alternate& b) {
    return a.start != b.start ? a.start < b.start : a.posterior > b.posterior;
  });
  return out;
}

}  // namespace scribe::speech
