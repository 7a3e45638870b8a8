#include "enrichment/heard_terms.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace scribe::enrichment {
namespace {

TEST(HeardMatching, ParsesAnySubsetOrNone) {
  auto all = parse_heard_matching("alternates,sound,meaning");
  EXPECT_TRUE(all.alternates && all.sound_alikes && all.meaning_alikes);
  auto one = parse_heard_matching(" sound ");
  EXPECT_TRUE(one.sound_alikes);
  EXPECT_FALSE(one.alternates || one.meaning_alikes);
  auto none = parse_heard_matching("none");
  EXPECT_FALSE(none.alternates || none.sound_alikes || none.meaning_alikes);
  EXPECT_EQ(heard_matching_text(none), "none");
  EXPECT_EQ(heard_matching_text(parse_heard_matching("meaning,alternates")), "alternates,meaning");
  EXPECT_THROW(parse_heard_matching("alternates,rhymes"), std::invalid_argument);
  EXPECT_THROW(parse_heard_matching("none,sound"), std::invalid_argument);
  EXPECT_THROW(parse_heard_matching(""), std::invalid_argument);
}

bool has(const std::vector<VariantWord>& v, const std::string& word, Match how) {
  return std::any_of(v.begin(), v.end(), [&](const VariantWord& w) { return w.word == word && w.how == how; });
}

// Through the real lexicons (the recognizer's dictionary and WordNet, from
// Debian's packages at their default places).
TEST(VariantWords, SoundAndMeaningAlikesPerTermBelowTheWordItself) {
  const auto v = variant_words({{"coral"}, {"calm"}}, {});
  EXPECT_TRUE(has(v, "carl", Match::sound_alike));
  EXPECT_TRUE(std::any_of(v.begin(), v.end(),
                          [](const VariantWord& w) { return w.term == 1 && w.how == Match::meaning_alike; }));
  for (const auto& w : v) {
    EXPECT_GT(w.factor, 0);
    EXPECT_LT(w.factor, 1);
    EXPECT_NE(w.word, "coral");
    EXPECT_NE(w.word, "calm");
  }
  // Switched off, none of that kind.
  const auto sound_only = variant_words({{"coral"}, {"calm"}}, {false, true, false});
  EXPECT_TRUE(std::none_of(sound_only.begin(), sound_only.end(),
                           [](const VariantWord& w) { return w.how == Match::meaning_alike; }));
  EXPECT_TRUE(variant_words({{"coral"}}, {false, false, false}).empty());
  // "most" sounds like "moat" but is a function word: never a variant.
  const auto moat = variant_words({{"moat"}}, {});
  EXPECT_FALSE(has(moat, "most", Match::sound_alike));
}

TEST(VariantWords, SearchSoundAlikesAreCloseOnes) {
  const auto v = search_sound_alikes("coral");
  EXPECT_TRUE(has(v, "carl", Match::sound_alike));
  for (const auto& w : v) EXPECT_GE(w.factor, 0.5);
  EXPECT_TRUE(search_sound_alikes("of").empty());
}

}  // namespace
}  // namespace scribe::enrichment
