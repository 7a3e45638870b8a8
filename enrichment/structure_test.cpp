#include "enrichment/structure.h"

#include <gtest/gtest.h>

#include <vector>

#include "enrichment/synthetic_transcripts.h"

namespace scribe::enrichment {
namespace {

void expect_tiling(const std::vector<Span>& spans, int segments) {
  ASSERT_FALSE(spans.empty());
  EXPECT_EQ(spans.front().first, 0);
  EXPECT_EQ(spans.back().end, segments);
  for (std::size_t i = 0; i < spans.size(); ++i) {
    EXPECT_LT(spans[i].first, spans[i].end);
    if (i > 0) {
      EXPECT_EQ(spans[i - 1].end, spans[i].first);
    }
  }
}

TEST(Structure, SpansFromBoundariesTileTheSegments) {
  EXPECT_TRUE(spans_from_boundaries(0, {}).empty());
  const auto spans = spans_from_boundaries(10, {0, 3, 3, 7, 10, 12});  // bad ones are skipped
  ASSERT_EQ(spans.size(), 3u);
  expect_tiling(spans, 10);
  EXPECT_EQ(spans[1].first, 3);
  EXPECT_EQ(spans[2].first, 7);
}

TEST(Structure, MergesTheMostAlikeNeighboursFirst) {
  // Cooking, cooking, astronomy, astronomy: merging to two joins like with like.
  testing::Lcg rng(3);
  std::vector<std::string> sentences;
  for (int k : {0, 0, 1, 1})
    for (int i = 0; i < 10; ++i) sentences.push_back(testing::topic_sentence(testing::topic_vocabularies()[k], rng));
  const auto t = testing::transcript_of(sentences);
  const Corpus corpus(t);
  const auto merged = merge_spans(corpus, spans_from_boundaries(40, {10, 20, 30}), 2, 0);
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[1].first, 20);
}

TEST(Structure, MergesShortSpansAndCapsTheCount) {
  std::vector<int> truth;
  const auto t = testing::generated_transcript(8, 12, &truth);
  const Corpus corpus(t);
  std::vector<int> every;  // a span per segment: far too many, far too short
  for (int i = 1; i < corpus.segment_count(); ++i) every.push_back(i);
  const auto spans = spans_from_boundaries(corpus.segment_count(), every);
  const auto merged = merge_spans(corpus, spans, 30, 30);
  expect_tiling(merged, corpus.segment_count());
  EXPECT_LE(merged.size(), 30u);
  for (std::size_t i = 0; i < merged.size(); ++i) {
    EXPECT_GE(span_end(corpus, merged, i, Timing::kCovering) - span_start(corpus, merged, i, Timing::kCovering), 30)
        << "span " << i;
  }
  // Nothing to merge, or one span: unchanged.
  EXPECT_EQ(merge_spans(corpus, {{0, corpus.segment_count()}}, 5, 30).size(), 1u);
  EXPECT_EQ(merge_spans(corpus, spans_from_boundaries(corpus.segment_count(), truth), 30, 0).size(), 8u);
}

TEST(Structure, CoveringTimesStartAtZeroAndMeet) {
  std::vector<int> truth;
  const auto t = testing::generated_transcript(3, 10, &truth);
  const Corpus corpus(t);
  const auto spans = spans_from_boundaries(corpus.segment_count(), truth);
  EXPECT_EQ(span_start(corpus, spans, 0, Timing::kCovering), 0);
  EXPECT_EQ(span_start(corpus, spans, 0, Timing::kSegments), t.segments[0].start);
  for (std::size_t i = 0; i + 1 < spans.size(); ++i)
    EXPECT_EQ(span_end(corpus, spans, i, Timing::kCovering), span_start(corpus, spans, i + 1, Timing::kCovering));
  EXPECT_EQ(span_end(corpus, spans, spans.size() - 1, Timing::kCovering), t.duration_seconds);
  EXPECT_EQ(span_end(corpus, spans, 1, Timing::kSegments), t.segments[truth[1] - 1].end);
}

TEST(Structure, LabelsEverySpan) {
  std::vector<int> truth;
  const auto t = testing::episode_transcript(&truth);
  const Corpus corpus(t);
  const auto labels =
      label_spans(corpus, spans_from_boundaries(corpus.segment_count(), truth), Timing::kCovering, Steering{}, {});
  ASSERT_EQ(labels.size(), 6u);
  for (const auto& l : labels) {
    EXPECT_EQ(testing::title_problem(l.title), "") << l.title;
    EXPECT_FALSE(l.summary.empty());
    EXPECT_GT(l.terms.salience, 0);
    EXPECT_FALSE(l.phrases.empty());
  }
}

}  // namespace
}  // namespace scribe::enrichment
