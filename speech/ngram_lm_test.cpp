// Language models for `scribe lm mix`: ARPA reading and writing, the back-off
// rule, interpolation (exact on listed n-grams, every history normalized),
// and the PocketSphinx trie reader checked against sphinxbase itself.
#include "speech/ngram_lm.h"

#include <gtest/gtest.h>
#include <sphinxbase/logmath.h>
#include <sphinxbase/ngram_model.h>

#include <cmath>
#include <fstream>
#include <set>

#include "speech/pocketsphinx_engine.h"
#include "tests/media_scratch.h"

namespace scribe::speech {
namespace {

// Two small trigram models over different vocabularies. Their unigrams sum
// to one (without <s>, which is never predicted).
constexpr char kCatModel[] = R"(\data\
ngram 1=5
ngram 2=4
ngram 3=2

\1-grams:
-99	<s>	-0.3
-0.69897	</s>
-0.39794	the	-0.2
-0.69897	cat	-0.25
-0.69897	sat	-0.1

\2-grams:
-0.221849	<s>	the	-0.3
-0.30103	the	cat	-0.2
-0.154902	cat	sat	-0.1
-0.09691	sat	</s>	-0.1

\3-grams:
-0.221849	<s>	the	cat
-0.045757	the	cat	sat

\end\
)";

constexpr char kDogModel[] = R"(\data\
ngram 1=5
ngram 2=4
ngram 3=2

\1-grams:
-99	<s>	-0.2
-0.60206	</s>
-0.60206	the	-0.3
-0.60206	dog	-0.2
-0.60206	sat	-0.2

\2-grams:
-0.30103	<s>	the	-0.2
-0.221849	the	dog	-0.2
-0.30103	dog	sat	-0.2
-0.045757	sat	</s>	-0.2

\3-grams:
-0.154902	<s>	the	dog
-0.09691	the	dog	sat

\end\
)";

class NgramLmTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { scratch_ = std::make_unique<testing::MediaScratch>("scribe_ngram_test"); }
  static void TearDownTestSuite() { scratch_.reset(); }
  static std::string file(const std::string& name, const std::string& text) {
    std::ofstream(scratch_->path(name)) << text;
    return scratch_->path(name);
  }
  static std::vector<uint32_t> ids(const NgramLm& lm, const std::vector<const char*>& words) {
    std::vector<uint32_t> out;
    for (const char* w : words) {
      const int64_t id = lm.find(w);
      EXPECT_GE(id, 0) << w;
      out.push_back(uint32_t(std::max<int64_t>(id, 0)));
    }
    return out;
  }
  static double prob(const NgramLm& lm, const std::vector<const char*>& words) {
    auto v = ids(lm, words);
    return lm.log10_prob(v.data(), int(v.size()) - 1, v.back());
  }
  // The probability every word but <s> (never predicted) gets after `history`,
  // summed: one for a normalized model.
  static double mass(const NgramLm& lm, const std::vector<uint32_t>& history) {
    double sum = 0;
    for (uint32_t v = 0; v < lm.vocabulary_size(); ++v)
      if (lm.word(v) != "<s>") sum += std::pow(10.0, lm.log10_prob(history.data(), int(history.size()), v));
    return sum;
  }
  static inline std::unique_ptr<testing::MediaScratch> scratch_;
};

TEST_F(NgramLmTest, ArpaRoundTripKeepsEveryNgram) {
  const NgramLm cat = read_arpa(file("cat.arpa", kCatModel));
  ASSERT_EQ(cat.order(), 3);
  EXPECT_EQ(cat.count(1), 5u);
  EXPECT_EQ(cat.count(2), 4u);
  EXPECT_EQ(cat.count(3), 2u);
  write_arpa(cat, scratch_->path("again.arpa"));
  const NgramLm again = read_arpa(scratch_->path("again.arpa"));
  for (int n = 1; n <= 3; ++n) {
    ASSERT_EQ(again.count(n), cat.count(n));
    for (const auto& [key, score] : cat.grams(n)) {
      std::vector<uint32_t> v = NgramLm::unpack(key, n);
      for (auto& id : v) id = uint32_t(again.find(cat.word(id)));
      const NgramScore* s = again.get(v.data(), n);
      ASSERT_NE(s, nullptr);
      EXPECT_NEAR(s->prob, score.prob, 1e-6);
      EXPECT_NEAR(s->backoff, score.backoff, 1e-6);
    }
  }
}

TEST_F(NgramLmTest, UnlistedNgramsBackOffThroughTheirHistories) {
  const NgramLm cat = read_arpa(file("cat.arpa", kCatModel));
  EXPECT_NEAR(prob(cat, {"the", "cat", "sat"}), -0.045757, 1e-6);         // listed
  EXPECT_NEAR(prob(cat, {"cat", "sat", "</s>"}), -0.1 + -0.09691, 1e-6);  // bow(cat sat) + P(</s> | sat)
  EXPECT_NEAR(prob(cat, {"sat", "the"}), -0.1 + -0.39794, 1e-6);          // bow(sat) + P(the)
  // A history the model never saw adds nothing: P(cat | sat the) = bow(the) + P(cat).
  EXPECT_NEAR(prob(cat, {"sat", "the", "sat"}), -0.2 + -0.69897, 1e-6);
  EXPECT_TRUE(std::isinf(cat.log10_prob(nullptr, 0, 9999)));
}

TEST_F(NgramLmTest, InterpolationIsExactOnListedNgramsAndNormalizesEveryHistory) {
  const NgramLm cat = read_arpa(file("cat.arpa", kCatModel));
  const NgramLm dog = read_arpa(file("dog.arpa", kDogModel));
  const double w = 0.3;
  const NgramLm mixed = interpolate(cat, dog, w);
  EXPECT_EQ(mixed.vocabulary_size(), 6u);  // <s> </s> the cat sat dog

  auto linear = [](double log10p) { return std::isinf(log10p) ? 0.0 : std::pow(10.0, log10p); };
  // Listed n-grams of either model carry the exact mixture. A model that
  // does not know a history word backs off past it (the dog model scores
  // "the cat sat" as P(sat)); one that does not know the word gives it zero.
  EXPECT_NEAR(linear(prob(mixed, {"the", "cat", "sat"})), (1 - w) * linear(-0.045757) + w * 0.25, 1e-5);
  EXPECT_NEAR(linear(prob(mixed, {"<s>", "the", "dog"})), (1 - w) * 0.0 + w * linear(-0.154902), 1e-5);
  EXPECT_NEAR(linear(prob(mixed, {"sat", "</s>"})), (1 - w) * 0.8 + w * 0.9, 1e-5);
  EXPECT_NEAR(linear(prob(mixed, {"cat"})), (1 - w) * 0.2, 1e-5);

  // Every history, seen or not, gives a distribution that sums to one.
  std::vector<std::vector<uint32_t>> histories = {{}};
  for (int n = 1; n <= 2; ++n)
    for (const auto& [key, unused] : mixed.grams(n)) histories.push_back(NgramLm::unpack(key, n));
  histories.push_back(ids(mixed, {"dog", "cat"}));  // never seen together
  for (const auto& h : histories) EXPECT_NEAR(mass(mixed, h), 1.0, 1e-4) << "history of " << h.size() << " words";

  // Weight 0 keeps the first model's listed probabilities.
  const NgramLm none = interpolate(cat, dog, 0);
  for (int n = 1; n <= 3; ++n)
    for (const auto& [key, score] : cat.grams(n)) {
      std::vector<uint32_t> v = NgramLm::unpack(key, n);
      for (auto& id : v) id = uint32_t(none.find(cat.word(id)));
      if (n == 1 && cat.word(v[0]) == "<s>") continue;
      EXPECT_NEAR(none.get(v.data(), n)->prob, score.prob, 1e-5);
    }
  EXPECT_THROW(interpolate(cat, dog, 1.5), std::runtime_error);
}

TEST_F(NgramLmTest, ALowerOrderModelMixesIntoEveryHistory) {
  const NgramLm cat = read_arpa(file("cat.arpa", kCatModel));
  const NgramLm dog = read_arpa(file("unigrams.arpa",
                                     "\\data\\\nngram 1=3\n\n\\1-grams:\n-99\t<s>\n"
                                     "-0.30103\t</s>\n-0.30103\tdog\n\n\\end\\\n"));
  ASSERT_EQ(dog.order(), 1);
  const NgramLm mixed = interpolate(cat, dog, 0.5);
  EXPECT_EQ(mixed.order(), 3);
  EXPECT_NEAR(std::pow(10.0, prob(mixed, {"dog"})), 0.25, 1e-5);
  EXPECT_NEAR(std::pow(10.0, prob(mixed, {"the", "cat", "sat"})), 0.5 * std::pow(10.0, -0.045757), 1e-5);
  for (const auto& history : std::vector<std::vector<const char*>>{{"the", "cat"}, {"sat"}, {"dog", "the"}})
    EXPECT_NEAR(mass(mixed, ids(mixed, history)), 1.0, 1e-4);
  EXPECT_THROW(interpolate(dog, cat, 0.5), std::runtime_error);
}

TEST_F(NgramLmTest, SphinxTrieRoundTripThroughSphinxbase) {
  const NgramLm cat = read_arpa(file("cat.arpa", kCatModel));
  write_sphinx_trie(scratch_->path("cat.arpa"), scratch_->path("cat.lm.bin"));
  const NgramLm back = read_sphinx_trie(scratch_->path("cat.lm.bin"));
  for (const char* w : {"<s>", "</s>", "the", "cat", "sat"}) ASSERT_GE(back.find(w), 0) << w;
  for (const auto& words : std::vector<std::vector<const char*>>{{"the"},
                                                                 {"the", "cat"},
                                                                 {"the", "cat", "sat"},
                                                                 {"cat", "sat", "</s>"},
                                                                 {"sat", "the"},
                                                                 {"<s>", "the", "cat"}})
    EXPECT_NEAR(prob(back, words), prob(cat, words), 1e-3);
}

TEST_F(NgramLmTest, DebianModelReadsAsSphinxbaseScoresIt) {
  const std::string path = PocketSphinxOptions{}.language_model_path();
  const NgramLm lm = read_sphinx_trie(path);
  EXPECT_EQ(lm.order(), 3);
  EXPECT_GT(lm.count(1), 50000u);
  EXPECT_GT(lm.count(2), 1000000u);
  EXPECT_GT(lm.count(3), 1000000u);

  auto lock = sphinx_setup_lock();
  logmath_t* lmath = logmath_init(1.0001, 0, FALSE);
  ngram_model_t* ref = ngram_model_read(nullptr, path.c_str(), NGRAM_BIN, lmath);
  ASSERT_NE(ref, nullptr);
  // A spread of listed bigrams and trigrams, and the same words in an order
  // the model may not list (scored by back-off).
  int checked = 0;
  for (int n = 2; n <= 3; ++n) {
    size_t i = 0;
    for (const auto& [key, unused] : lm.grams(n)) {
      if (i++ % 40009 != 0) continue;
      std::vector<uint32_t> v = NgramLm::unpack(key, n);
      for (bool shuffled : {false, true}) {
        if (shuffled) std::swap(v[0], v[size_t(n - 1)]);
        int32 history[2], used = 0;
        for (int k = 0; k < n - 1; ++k) history[k] = int32(ngram_wid(ref, lm.word(v[size_t(n - 2 - k)]).c_str()));
        const int32 w = ngram_wid(ref, lm.word(v[size_t(n - 1)]).c_str());
        const double expected = logmath_log_to_log10(lmath, ngram_ng_prob(ref, w, history, n - 1, &used));
        EXPECT_NEAR(lm.log10_prob(v.data(), n - 1, v[size_t(n - 1)]), expected, 2e-3)
            << lm.word(v[0]) << " " << lm.word(v[1]);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 100);
  ngram_model_free(ref);
  logmath_free(lmath);
}

TEST_F(NgramLmTest, MalformedModelsAreRefused) {
  EXPECT_THROW(read_sphinx_trie(file("text.lm.bin", kCatModel)), std::runtime_error);
  std::ifstream in(PocketSphinxOptions{}.language_model_path(), std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), std::streamsize(head.size()));
  EXPECT_THROW(read_sphinx_trie(file("truncated.lm.bin", head)), std::runtime_error);
  EXPECT_THROW(read_arpa(file("empty.arpa", "")), std::runtime_error);
  std::string short_count = kCatModel;
  short_count.replace(short_count.find("ngram 2=4"), 9, "ngram 2=5");
  EXPECT_THROW(read_arpa(file("miscounted.arpa", short_count)), std::runtime_error);
  EXPECT_THROW(read_arpa(scratch_->path("missing.arpa")), std::runtime_error);
  std::string stranger = kCatModel;
  stranger.replace(stranger.find("the\tcat\tsat"), 11, "the\tcow\tsat");
  EXPECT_THROW(read_arpa(file("stranger.arpa", stranger)), std::runtime_error);

  // A trie whose first bigram names a word beyond the vocabulary (all ones
  // in its 3-bit word field) is refused, not walked.
  write_sphinx_trie(file("cat.arpa", kCatModel), scratch_->path("cat.lm.bin"));
  std::fstream bin(scratch_->path("cat.lm.bin"), std::ios::in | std::ios::out | std::ios::binary);
  // Header and order (20 bytes), three counts, the quantizer's int32 and its
  // three tables of 2^16 floats, six unigram records.
  bin.seekp(20 + 12 + 4 + 3 * 65536 * 4 + 6 * 12);
  bin.put(char(0xff));
  bin.close();
  EXPECT_THROW(read_sphinx_trie(scratch_->path("cat.lm.bin")), std::runtime_error);
}

TEST_F(NgramLmTest, AHistoryTheArpaFileLeavesOutIsAddedAndNormalized) {
  // "the dog sat" is listed but its history "the dog" is not.
  std::string gap = kDogModel;
  gap.replace(gap.find("-0.221849\tthe\tdog\t-0.2\n"), 26, "");
  gap.replace(gap.find("ngram 2=4"), 9, "ngram 2=3");
  const NgramLm dog = read_arpa(file("gap.arpa", gap));
  ASSERT_EQ(dog.count(2), 3u);
  const NgramLm mixed = interpolate(read_arpa(file("cat.arpa", kCatModel)), dog, 0.5);
  auto h = ids(mixed, {"the", "dog"});
  ASSERT_NE(mixed.get(h.data(), 2), nullptr);
  EXPECT_NEAR(mass(mixed, h), 1.0, 1e-4);
}

}  // namespace
}  // namespace scribe::speech
