#include "speech/confusion_network.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace scribe::speech {
namespace {

RecognizedWord best(std::string w, double s, double e) { return {std::move(w), s, e, 0.5}; }

TEST(CompetingWords, MergesArcsOfAWordOverOneStretchAndDropsThe1Best) {
  // "deep smoke" was decided; the lattice also held "moat" over the second
  // word, on two arcs (two predecessors), and "smoke" itself.
  std::vector<RecognizedWord> b = {best("deep", 1.0, 1.3), best("smoke", 1.3, 1.7)};
  std::vector<LatticeArc> arcs = {
      {"deep", 1.0, 1.3, 0.9},   {"smoke", 1.3, 1.7, 0.5}, {"moat", 1.32, 1.7, 0.2},
      {"moat", 1.3, 1.68, 0.14}, {"most", 1.3, 1.6, 0.06}, {"", 1.0, 1.7, 0.9},  // a filler
  };
  auto alts = competing_words(arcs, b);
  ASSERT_EQ(alts.size(), 2u);
  // In time order: "most" starts at 1.3, "moat" (posterior-weighted) later.
  EXPECT_EQ(alts[0].word, "most");
  EXPECT_EQ(alts[1].word, "moat");
  EXPECT_NEAR(alts[1].posterior, 0.34, 1e-9);
  EXPECT_GE(alts[1].start, 1.3);
  EXPECT_LE(alts[1].end, 1.7);
  for (const auto& a : alts) EXPECT_NE(a.word, "smoke");
}

TEST(CompetingWords, TheSameWordElsewhereIsAnotherHypothesis) {
  // "smoke" over the first word's time is a competitor of "deep", not the
  // 1-best "smoke" that comes after it.
  std::vector<RecognizedWord> b = {best("deep", 1.0, 1.3), best("smoke", 1.3, 1.7)};
  std::vector<LatticeArc> arcs = {{"smoke", 1.0, 1.28, 0.3}, {"smoke", 1.3, 1.7, 0.6}};
  auto alts = competing_words(arcs, b);
  ASSERT_EQ(alts.size(), 1u);
  EXPECT_DOUBLE_EQ(alts[0].start, 1.0);
}

TEST(CompetingWords, FloorCapPerSlotAndPosteriorsAtMostOne) {
  std::vector<RecognizedWord> b = {best("cat", 0.0, 0.5)};
  std::vector<LatticeArc> arcs;
  const char* words[] = {"bat", "hat", "mat", "rat", "sat", "vat"};
  double p = 0.3;
  for (const char* w : words) arcs.push_back({w, 0.0, 0.5, p}), p -= 0.04;
  arcs.push_back({"gnat", 0.0, 0.5, 0.01});  // under the floor
  arcs.push_back({"pat", 0.0, 0.5, 0.9});
  arcs.push_back({"pat", 0.05, 0.5, 0.9});  // merged: 1.8, clamped to 1
  AlternateOptions o;
  o.max_per_slot = 3;
  auto alts = competing_words(arcs, b, o);
  ASSERT_EQ(alts.size(), 3u);
  auto pat = std::find_if(alts.begin(), alts.end(), [](const Alternate& a) { return a.word == "pat"; });
  ASSERT_NE(pat, alts.end());
  EXPECT_DOUBLE_EQ(pat->posterior, 1.0);
  // The two most probable of the rest: bat (0.3) and hat (0.26).
  EXPECT_TRUE(std::any_of(alts.begin(), alts.end(), [](const Alternate& a) { return a.word == "bat"; }));
  EXPECT_TRUE(std::any_of(alts.begin(), alts.end(), [](const Alternate& a) { return a.word == "hat"; }));
  for (const auto& a : alts) {
    EXPECT_NE(a.word, "gnat");
    EXPECT_GT(a.posterior, 0);
    EXPECT_LE(a.posterior, 1);
  }
  EXPECT_TRUE(competing_words({}, b).empty());
}

}  // namespace
}  // namespace scribe::speech
