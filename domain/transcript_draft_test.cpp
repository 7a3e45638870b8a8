#include "domain/transcript_draft.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

namespace scribe::draft {
namespace {

Piece piece(int index) { return {index, index * 2.0, index * 2.0 + 1.5, "piece " + std::to_string(index)}; }

std::vector<int> indexes(const std::vector<Piece>& pieces) {
  std::vector<int> out;
  for (const auto& p : pieces) out.push_back(p.index);
  return out;
}

TEST(DraftInOrder, InOrderReportsReleaseEachAtOnce) {
  InOrder order(3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(order.done(piece(i)), std::vector<Piece>{piece(i)});
  EXPECT_EQ(order.released(), 3u);
}

TEST(DraftInOrder, ALaterPieceWaitsForEveryPieceBeforeIt) {
  InOrder order(5);
  EXPECT_TRUE(order.done(piece(2)).empty());
  EXPECT_TRUE(order.done(piece(1)).empty());
  EXPECT_TRUE(order.done(piece(4)).empty());
  EXPECT_EQ(order.released(), 0u);
  // The first piece releases the run behind it, up to the gap at 3.
  auto first = order.done(piece(0));
  EXPECT_EQ(indexes(first), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(first[1], piece(1));  // the text and times travel with the piece
  EXPECT_EQ(indexes(order.done(piece(3))), (std::vector<int>{3, 4}));
  EXPECT_EQ(order.released(), 5u);
}

TEST(DraftInOrder, RepeatsAndStrangersReleaseNothing) {
  InOrder order(2);
  EXPECT_TRUE(order.done(piece(1)).empty());
  EXPECT_TRUE(order.done(piece(1)).empty());
  EXPECT_TRUE(order.done(piece(-1)).empty());
  EXPECT_TRUE(order.done(piece(2)).empty());
  EXPECT_EQ(indexes(order.done(piece(0))), (std::vector<int>{0, 1}));
  EXPECT_TRUE(order.done(piece(0)).empty());
  EXPECT_TRUE(InOrder(0).done(piece(0)).empty());
}

TEST(DraftInOrder, AnyOrderOfCompletionPublishesEveryPieceOnceInOrder) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    const int n = 1 + static_cast<int>(rng() % 40);
    std::vector<int> finish(n);
    std::iota(finish.begin(), finish.end(), 0);
    std::shuffle(finish.begin(), finish.end(), rng);
    InOrder order(n);
    std::vector<int> published;
    for (int i : finish) {
      for (const auto& p : order.done(piece(i))) published.push_back(p.index);
      // Never ahead of what is recognized: what is out is a prefix.
      EXPECT_EQ(order.released(), published.size());
    }
    std::vector<int> all(n);
    std::iota(all.begin(), all.end(), 0);
    EXPECT_EQ(published, all);
  }
}

}  // namespace
}  // namespace scribe::draft
