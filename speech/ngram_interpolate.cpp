// Static linear interpolation of two back-off n-gram models into one, as
// SRILM's "ngram -mix-lm -write-lm" does. sphinxbase's own model sets
// interpolate at decoding time, but after the language weight is applied:
// they mix P^lw rather than P, so the larger of the two probabilities all
// but wins and even a 0.01 share of a second model changes the decoding.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "speech/ngram_lm.h"

namespace scribe::speech {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();
// Floors for back-off weights: the left-over mass of a history whose listed
// words take (almost) all of it, after quantization in the source models.
constexpr double kMinMass = 1e-7;

double to_linear(double log10p) { return log10p == kNegInf ? 0.0 : std::pow(10.0, log10p); }

// P_source(w | h) for ids in the mixed model's vocabulary. History words the
// source does not know end the history there (a model can only back off past
// them); a predicted word it does not know has probability zero.
double source_prob(const NgramLm& source, const std::vector<int64_t>& to_source, const uint32_t* ids, int n) {
  const int64_t w = to_source[ids[n - 1]];
  if (w < 0) return 0.0;
  uint32_t history[NgramLm::kMaxOrder];
  int known = 0;
  for (int i = n - 2; i >= 0 && to_source[ids[i]] >= 0; --i) ++known;
  for (int i = 0; i < known; ++i) history[i] = uint32_t(to_source[ids[n - 1 - known + i]]);
  return to_linear(source.log10_prob(history, known, uint32_t(w)));
}

}  // namespace

NgramLm interpolate(const NgramLm& a, const NgramLm& b, double weight_b) {
  if (b.order() > a.order()) throw std::runtime_error("the second model's order is above the first's");
  if (!(weight_b >= 0 && weight_b <= 1)) throw std::runtime_error("interpolation weight must be within 0 to 1");
  const int order = a.order();
  NgramLm out(order);
  for (size_t i = 0; i < a.vocabulary_size(); ++i) out.intern(a.word(uint32_t(i)));
  for (size_t i = 0; i < b.vocabulary_size(); ++i) out.intern(b.word(uint32_t(i)));
  std::vector<int64_t> to_a(out.vocabulary_size()), to_b(out.vocabulary_size());
  for (size_t i = 0; i < out.vocabulary_size(); ++i) {
    to_a[i] = a.find(out.word(uint32_t(i)));
    to_b[i] = b.find(out.word(uint32_t(i)));
  }
  auto to_out = [&](const NgramLm& m, uint64_t key, int n) {
    std::vector<uint32_t> ids = NgramLm::unpack(key, n);
    for (auto& id : ids) id = uint32_t(out.find(m.word(id)));
    return ids;
  };

  auto add = [&](const uint32_t* ids, int n) {
    if (out.get(ids, n)) return;
    const double p = (1 - weight_b) * source_prob(a, to_a, ids, n) + weight_b * source_prob(b, to_b, ids, n);
    // The sentence start is never predicted; ARPA writes -99 for it.
    out.set(std::vector<uint32_t>(ids, ids + n), {p > 0 ? float(std::log10(p)) : -99.0f, 0});
  };
  // Probabilities of every n-gram either model lists, and of its history
  // (ARPA may leave a history out, but its back-off weight needs an entry).
  for (int n = 1; n <= order; ++n) {
    for (const NgramLm* m : {&a, &b}) {
      if (n > m->order()) continue;
      for (const auto& [key, unused] : m->grams(n)) {
        std::vector<uint32_t> ids = to_out(*m, key, n);
        for (int k = 1; k <= n; ++k) add(ids.data(), k);
      }
    }
  }

  // Back-off weights, lowest order first: a history's weight scales the
  // next-lower distribution so that it fills exactly the mass its listed
  // successors leave.
  for (int n = 1; n < order; ++n) {
    struct Mass {
      double listed = 0;  // sum of P(w | h) over listed successors
      double lower = 0;   // the same words under the shorter history
    };
    std::unordered_map<uint64_t, Mass> mass;
    for (const auto& [key, score] : out.grams(n + 1)) {
      std::vector<uint32_t> ids = NgramLm::unpack(key, n + 1);
      Mass& m = mass[NgramLm::pack(ids.data(), n)];
      m.listed += to_linear(score.prob);
      m.lower += to_linear(out.log10_prob(ids.data() + 1, n - 1, ids[size_t(n)]));
    }
    for (const auto& [history_key, m] : mass) {
      std::vector<uint32_t> ids = NgramLm::unpack(history_key, n);
      const NgramScore* h = out.get(ids.data(), n);
      if (!h) throw std::logic_error("n-gram history missing after interpolation");
      const double left = std::max(1 - m.listed, kMinMass);
      const double lower_left = std::max(1 - m.lower, kMinMass);
      out.set(ids, {h->prob, float(std::log10(left / lower_left))});
    }
  }
  return out;
}

}  // namespace scribe::speech
