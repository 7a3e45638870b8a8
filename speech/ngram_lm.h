#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

// Back-off n-gram language models (orders 1 to 3) held whole in memory, for
// building the recognizer's language model (`scribe lm mix`, app/cli_lm.cpp): the
// Debian en-us model is read from PocketSphinx's binary trie, a model of
// another text from ARPA, and the two are interpolated into one ARPA model.
// Probabilities and back-off weights are log10, as in ARPA files.
namespace scribe::speech {

struct NgramScore {
  float prob = 0;     // log10 P(word | history)
  float backoff = 0;  // log10 back-off weight of this n-gram as a history
};

class NgramLm {
 public:
  static constexpr int kMaxOrder = 3;

  explicit NgramLm(int order = 3);
  int order() const { return order_; }

  // The word's id, added to the vocabulary if new.
  uint32_t intern(const std::string& word);
  // The word's id, or -1.
  int64_t find(const std::string& word) const;
  const std::string& word(uint32_t id) const { return words_[id]; }
  size_t vocabulary_size() const { return words_.size(); }

  // Sets an n-gram; `ids` are oldest first, the predicted word last.
  void set(const std::vector<uint32_t>& ids, NgramScore score);
  const NgramScore* get(const uint32_t* ids, int n) const;
  size_t count(int n) const { return n >= 1 && n <= order_ ? grams_[size_t(n - 1)].size() : 0; }
  // Every n-gram of order n (1 to order()) as (packed ids, score); see unpack().
  const std::unordered_map<uint64_t, NgramScore>& grams(int n) const { return grams_.at(size_t(n - 1)); }
  static std::vector<uint32_t> unpack(uint64_t key, int n);
  static uint64_t pack(const uint32_t* ids, int n);

  // log10 P(w | history) with back-off; -infinity when w is not in the model.
  double log10_prob(const uint32_t* history, int n_history, uint32_t w) const;

 private:
  int order_;
  std::vector<std::string> words_;
  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<std::unordered_map<uint64_t, NgramScore>> grams_;
};

// Readers and the writer throw std::runtime_error on malformed files.
NgramLm read_arpa(const std::string& path);
void write_arpa(const NgramLm& lm, const std::string& path);
// PocketSphinx's binary trie format ("Trie Language Model", e.g. Debian's
// en-us.lm.bin), read directly: sphinxbase's own trie-to-ARPA writer aborts
// on en-us.lm.bin (an n-gram count assertion).
NgramLm read_sphinx_trie(const std::string& path);
// Converts an ARPA file into PocketSphinx's binary trie (what the decoder
// loads fastest), through sphinxbase itself.
void write_sphinx_trie(const std::string& arpa_path, const std::string& path);

// Linear interpolation (1 - weight) * P_a + weight * P_b over the union of
// both models' n-grams, with back-off weights recomputed so that every
// history's distribution sums to one. A word only one model knows gets only
// that model's share. The result has a's order; b's may be lower.
NgramLm interpolate(const NgramLm& a, const NgramLm& b, double weight_b);

}  // namespace scribe::speech
