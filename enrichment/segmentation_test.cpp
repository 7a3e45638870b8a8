#include "enrichment/segmentation.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "enrichment/synthetic_transcripts.h"

namespace scribe::enrichment {
namespace {

using testing::episode_transcript;
using testing::generated_transcript;
using testing::transcript_of;

// Every true boundary has a found one within `tolerance` segments, and no
// boundary is found far from every true one.
void expect_close(const std::vector<int>& found, const std::vector<int>& truth, int tolerance) {
  for (int t : truth) {
    bool near = false;
    for (int f : found) near = near || std::abs(f - t) <= tolerance;
    EXPECT_TRUE(near) << "no boundary found near segment " << t;
  }
  for (int f : found) {
    bool near = false;
    for (int t : truth) near = near || std::abs(f - t) <= tolerance;
    EXPECT_TRUE(near) << "boundary at segment " << f << " is far from every topic change";
  }
}

TEST(Segmentation, FindsDistinctTopicsWithTheDefaultMethod) {
  std::vector<int> truth;
  const auto t = generated_transcript(4, 20, &truth);  // cooking, astronomy, football, banking
  ASSERT_EQ(truth, (std::vector<int>{20, 40, 60}));
  expect_close(topic_boundaries(t, SegmentationMethod::kDefault), truth, 2);
}

TEST(Segmentation, FindsDistinctTopicsWithPlainTextTiling) {
  std::vector<int> truth;
  const auto t = generated_transcript(4, 20, &truth);
  expect_close(topic_boundaries(t, SegmentationMethod::kPlainTextTiling), truth, 2);
}

TEST(Segmentation, FindsTheTopicsOfAWrittenEpisode) {
  std::vector<int> truth;
  const auto t = episode_transcript(&truth);
  expect_close(topic_boundaries(t, SegmentationMethod::kDefault), truth, 1);
}

TEST(Segmentation, BoundariesAreAscendingInsideTheTranscript) {
  std::vector<int> truth;
  const auto t = generated_transcript(8, 12, &truth, 3);
  for (auto method : {SegmentationMethod::kDefault, SegmentationMethod::kPlainTextTiling}) {
    const auto found = topic_boundaries(t, method);
    for (std::size_t i = 0; i < found.size(); ++i) {
      EXPECT_GE(found[i], 1);
      EXPECT_LT(found[i], static_cast<int>(t.segments.size()));
      if (i > 0) {
        EXPECT_LT(found[i - 1], found[i]);
      }
    }
  }
}

TEST(Segmentation, OneTopicStaysWhole) {
  const auto t = generated_transcript(1, 30, nullptr);
  EXPECT_TRUE(topic_boundaries(t, SegmentationMethod::kDefault).empty());
}

TEST(Segmentation, RespectsMinimumLengthAndMaximumCount) {
  std::vector<int> truth;
  const auto t = generated_transcript(8, 12, &truth, 11);
  SegmentationOptions o;
  o.min_section_seconds = 100;
  const auto found = topic_boundaries(t, SegmentationMethod::kDefault, o);
  double previous = t.segments.front().start;
  for (int b : found) {
    EXPECT_GE(t.segments[b].start - previous, 100);
    previous = t.segments[b].start;
  }
  EXPECT_GE(t.segments.back().end - previous, 100);

  o = SegmentationOptions{};
  o.max_sections = 3;
  EXPECT_LE(topic_boundaries(t, SegmentationMethod::kDefault, o).size(), 2u);
}

TEST(Segmentation, TextWithoutTimesWorksWhenTheMinimumIsOff) {
  std::vector<int> truth;
  auto t = generated_transcript(4, 20, &truth);
  for (auto& s : t.segments) s.start = s.end = 0;
  SegmentationOptions o;
  o.min_section_seconds = 0;
  expect_close(topic_boundaries(t, SegmentationMethod::kDefault, o), truth, 2);
}

TEST(Segmentation, TinyTranscriptsHaveNoBoundaries) {
  for (auto method : {SegmentationMethod::kDefault, SegmentationMethod::kPlainTextTiling}) {
    EXPECT_TRUE(topic_boundaries(transcript::TranscriptArtifact{}, method).empty());
    EXPECT_TRUE(topic_boundaries(transcript_of({"Hello there."}), method).empty());
    EXPECT_TRUE(topic_boundaries(transcript_of({"Hello there.", "", "Bye now."}), method).empty());
    EXPECT_TRUE(topic_boundaries(transcript_of({"...", "?", "!"}), method).empty());
  }
}

}  // namespace
}  // namespace scribe::enrichment
