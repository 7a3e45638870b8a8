// Reads PocketSphinx's binary trie language model ("Trie Language Model",
// sphinxbase's lm_trie.c) into an NgramLm. The layout, all little-endian:
//   the header text, the order (one byte), the n-gram counts (uint32 each);
//   with order > 1, a quantizer: an int32 then float tables of 2^16 values,
//     a probability and a back-off table per middle order, then a
//     probability table for the highest order;
//   the unigrams, count + 1 records {float prob, float backoff, uint32 next};
//   the middle orders' and the highest order's bit-packed arrays;
//   the vocabulary: an int32 byte count, then the words, each NUL-ended.
// The trie is reversed (KenLM's layout): a unigram's record points at the
// histories that precede it; a bigram entry holds the previous word, its
// quantized probability and back-off, and a pointer into the trigram array.
// Scores are stored in sphinxbase's log base 1.0001.
#include <sphinxbase/bitarr.h>
#include <sphinxbase/logmath.h>
#include <sphinxbase/ngram_model.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>

#include "speech/ngram_lm.h"
#include "speech/pocketsphinx_engine.h"

namespace scribe::speech {
namespace {

constexpr char kTrieHeader[] = "Trie Language Model";
constexpr uint32_t kQuantBins = 1u << 16;

struct Unigram {
  float prob;
  float backoff;
  uint32_t next;
};
static_assert(sizeof(Unigram) == 12);

// One bit-packed array of the trie: each entry is a word id, quantized
// scores and (for middle orders) the start of its children's range.
struct PackedLevel {
  const uint8_t* base = nullptr;
  uint8_t word_bits = 0;
  uint8_t quant_bits = 0;
  uint8_t next_bits = 0;
  uint32_t total_bits() const { return uint32_t(word_bits) + quant_bits + next_bits; }
  static size_t bytes(uint32_t entries, uint32_t total_bits) {
    // As lm_trie.c sizes it: one entry more for the last end pointer, and
    // eight bytes of slack for its 64-bit reads.
    return (size_t(1 + entries) * total_bits + 7) / 8 + sizeof(uint64_t);
  }
  uint32_t read(uint32_t bit_offset, uint8_t bits) const {
    bitarr_address_t a{const_cast<uint8_t*>(base), bit_offset};
    return bitarr_read_int25(a, bits, bits >= 32 ? ~0u : (1u << bits) - 1);
  }
  uint32_t word(uint32_t i) const { return read(i * total_bits(), word_bits); }
  uint32_t code(uint32_t i, uint32_t skip) const { return read(i * total_bits() + word_bits + skip, 16); }
  uint32_t next(uint32_t i) const { return read(i * total_bits() + word_bits + quant_bits, next_bits); }
};

template <typename T>
T take(const std::string& data, size_t& at, const std::string& path) {
  if (at + sizeof(T) > data.size()) throw std::runtime_error(path + ": truncated trie language model");
  T v;
  std::memcpy(&v, data.data() + at, sizeof(T));
  at += sizeof(T);
  return v;
}

}  // namespace

NgramLm read_sphinx_trie(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t header = sizeof(kTrieHeader) - 1;
  if (data.compare(0, header, kTrieHeader) != 0) throw std::runtime_error(path + ": not a trie language model");
  size_t at = header;
  const int order = take<uint8_t>(data, at, path);
  if (order < 1 || order > NgramLm::kMaxOrder) throw std::runtime_error(path + ": order above 3");
  std::vector<uint32_t> counts(size_t(order), 0);
  for (auto& c : counts) c = take<uint32_t>(data, at, path);
  // sphinxbase's own limit (25-bit word ids and pointers), which also keeps
  // every bit offset below within 32 bits.
  for (uint32_t c : counts)
    if (c >= (1u << 25)) throw std::runtime_error(path + ": more n-grams of one order than sphinxbase supports");

  std::vector<float> quant;
  if (order > 1) {
    take<int32_t>(data, at, path);
    quant.resize(size_t(order - 2) * 2 * kQuantBins + kQuantBins);
    if (at + quant.size() * sizeof(float) > data.size()) throw std::runtime_error(path + ": truncated quantizer");
    std::memcpy(quant.data(), data.data() + at, quant.size() * sizeof(float));
    at += quant.size() * sizeof(float);
  }
  std::vector<Unigram> unigrams(size_t(counts[0]) + 1);
  if (at + unigrams.size() * sizeof(Unigram) > data.size()) throw std::runtime_error(path + ": truncated unigrams");
  std::memcpy(unigrams.data(), data.data() + at, unigrams.size() * sizeof(Unigram));
  at += unigrams.size() * sizeof(Unigram);

  // levels[0] holds bigrams, levels[order - 2] the highest order.
  std::vector<PackedLevel> levels(size_t(std::max(order - 1, 0)));
  const uint8_t word_bits = bitarr_required_bits(counts[0]);
  for (int n = 2; n <= order; ++n) {
    PackedLevel& level = levels[size_t(n - 2)];
    level.base = reinterpret_cast<const uint8_t*>(data.data() + at);
    level.word_bits = word_bits;
    level.quant_bits = n < order ? 32 : 16;
    level.next_bits = n < order ? bitarr_required_bits(counts[size_t(n)]) : 0;
    at += PackedLevel::bytes(counts[size_t(n - 1)], level.total_bits());
    if (at > data.size()) throw std::runtime_error(path + ": truncated n-gram arrays");
  }
  const auto vocabulary_bytes = size_t(take<int32_t>(data, at, path));
  if (at + vocabulary_bytes != data.size()) throw std::runtime_error(path + ": unexpected trie layout");

  NgramLm lm(order);
  for (size_t i = 0, start = at; i < counts[0]; ++i) {
    const size_t end = data.find('\0', start);
    if (end == std::string::npos || end >= data.size()) throw std::runtime_error(path + ": truncated vocabulary");
    if (lm.intern(data.substr(start, end - start)) != i) throw std::runtime_error(path + ": repeated word");
    start = end + 1;
  }

  // Scores are kept in sphinxbase's log base, 1.0001 for every Debian model.
  std::unique_ptr<logmath_t, decltype(&logmath_free)> lmath(logmath_init(1.0001, 0, FALSE), &logmath_free);
  auto log10 = [&](float v) { return float(logmath_log_float_to_log10(lmath.get(), v)); };
  auto table = [&](int n, bool backoff) {
    return quant.data() + size_t(n - 2) * 2 * kQuantBins + (backoff ? kQuantBins : 0);
  };

  // A corrupt file must not send the walk outside the arrays: every word id
  // and child range is checked against the counts.
  auto check = [&](bool ok) {
    if (!ok) throw std::runtime_error(path + ": inconsistent trie language model");
  };
  for (uint32_t w = 0; w < counts[0]; ++w) {
    lm.set({w}, {log10(unigrams[w].prob), log10(unigrams[w].backoff)});
    if (order == 1) continue;
    const PackedLevel& bigrams = levels[0];
    check(unigrams[w].next <= unigrams[w + 1].next && unigrams[w + 1].next <= counts[1]);
    for (uint32_t b = unigrams[w].next; b < unigrams[w + 1].next; ++b) {
      const uint32_t h1 = bigrams.word(b);
      check(h1 < counts[0]);
      if (order == 2) {
        lm.set({h1, w}, {log10(table(2, false)[bigrams.code(b, 0)]), 0});
        continue;
      }
      // Middle entries hold the back-off code, then the probability code.
      lm.set({h1, w}, {log10(table(2, false)[bigrams.code(b, 16)]), log10(table(2, true)[bigrams.code(b, 0)])});
      const PackedLevel& trigrams = levels[1];
      const uint32_t begin = bigrams.next(b), end = bigrams.next(b + 1);
      check(begin <= end && end <= counts[2]);
      for (uint32_t t = begin; t < end; ++t) {
        const uint32_t h2 = trigrams.word(t);
        check(h2 < counts[0]);
        lm.set({h2, h1, w}, {log10(table(3, false)[trigrams.code(t, 0)]), 0});
      }
    }
  }
  return lm;
}

void write_sphinx_trie(const std::string& arpa_path, const std::string& path) {
  auto lock = sphinx_setup_lock();
  // The model retains the log table it is given (LeakSanitizer shows it, the
  // header's "ownership is assumed" notwithstanding): this reference is ours
  // to drop.
  logmath_t* lmath = logmath_init(1.0001, 0, FALSE);
  ngram_model_t* model = ngram_model_read(nullptr, arpa_path.c_str(), NGRAM_ARPA, lmath);
  logmath_free(lmath);
  if (!model) throw std::runtime_error(arpa_path + ": sphinxbase could not read this ARPA model");
  const int rc = ngram_model_write(model, path.c_str(), NGRAM_BIN);
  ngram_model_free(model);
  if (rc != 0) throw std::runtime_error("cannot write " + path);
}

}  // namespace scribe::speech
