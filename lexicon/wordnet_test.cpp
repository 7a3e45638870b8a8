#include "lexicon/wordnet.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <iostream>

namespace scribe::lexicon {
namespace {

bool has(const std::vector<MeaningAlike>& v, const std::string& w) {
  return std::any_of(v.begin(), v.end(), [&](const MeaningAlike& m) { return m.word == w; });
}
bool has(const std::vector<std::string>& v, const std::string& w) {
  return std::find(v.begin(), v.end(), w) != v.end();
}

// Through Debian's wordnet-base at its default place.
TEST(WordNet, MorphyFindsBaseForms) {
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(wordnet_available());
  std::cout << "[ wordnet ] loaded in "
            << std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() << " ms\n";
  EXPECT_TRUE(has(base_forms("geese", Pos::noun), "goose"));  // an exception
  EXPECT_TRUE(has(base_forms("baked", Pos::verb), "bake"));   // a rule
  EXPECT_TRUE(has(base_forms("running", Pos::verb), "run"));  // an exception
  EXPECT_TRUE(has(base_forms("boxes", Pos::noun), "box"));
  EXPECT_EQ(base_forms("hive", Pos::noun).front(), "hive");
  EXPECT_TRUE(base_forms("qwxzv", Pos::noun).empty());
}

TEST(WordNet, SynonymsAndDerivedFormsBelowTheWord) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto car = meaning_alikes("car", 20);
  std::cout << "[ wordnet ] meaning_alikes(car) in "
            << std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() << " ms\n";
  EXPECT_TRUE(has(car, "automobile"));
  EXPECT_TRUE(has(meaning_alikes("bake", 20), "baker"));     // derived
  EXPECT_TRUE(has(meaning_alikes("calm", 30), "calmness"));  // derived
  for (const auto& m : car) {
    EXPECT_NE(m.word, "car");
    EXPECT_GT(m.weight, 0);
    EXPECT_LT(m.weight, 1);
    EXPECT_TRUE(m.relation == "synonym" || m.relation == "derived");
  }
  EXPECT_LE(meaning_alikes("car", 3).size(), 3u);
  EXPECT_TRUE(meaning_alikes("qwxzv").empty());
  // Multiword lemmas read with spaces.
  EXPECT_TRUE(has(meaning_alikes("dog", 20), "domestic dog"));
}

TEST(WordNet, PartsOfSpeech) {
  EXPECT_TRUE(is_noun("castle"));
  EXPECT_FALSE(is_noun("quickly"));
  EXPECT_GT(pos_share("castle", Pos::noun), 0.5);
  EXPECT_GT(pos_share("quickly", Pos::adverb), 0.9);
  EXPECT_GT(pos_share("run", Pos::verb), pos_share("run", Pos::adjective));
  EXPECT_EQ(pos_share("qwxzv", Pos::noun), 0);
}

}  // namespace
}  // namespace scribe::lexicon
