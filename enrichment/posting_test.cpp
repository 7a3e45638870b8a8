#include "enrichment/structure.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "common/text.h"
#include "enrichment/enricher.h"
#include "enrichment/synthetic_transcripts.h"

namespace scribe::enrichment {
namespace {

// The quote is one whole sentence of the segment that starts at the item's time.
bool quoted_verbatim(const transcript::TranscriptArtifact& t, const PostingItem& item) {
  if (!item.quote || item.quote->empty()) return false;
  for (const auto& s : t.segments)
    if (s.start == item.start && s.text.find(*item.quote) != std::string::npos) return true;
  return false;
}

bool is_segment_start(const transcript::TranscriptArtifact& t, double start) {
  for (const auto& s : t.segments)
    if (s.start == start) return true;
  return false;
}

TEST(Posting, VariantsOfAnEpisode) {
  const auto t = testing::episode_transcript();
  const auto a = enrich(t);
  const PostingChapters& p = a.posting;
  ASSERT_EQ(p.standard.size(), a.chapters.size());
  for (std::size_t i = 0; i < p.standard.size(); ++i) {
    EXPECT_EQ(p.standard[i].start, a.chapters[i].start);
    EXPECT_EQ(p.standard[i].title, a.chapters[i].title);
    EXPECT_FALSE(p.standard[i].quote);
  }
  ASSERT_EQ(p.highlights.size(), 5u);
  for (std::size_t i = 1; i < p.highlights.size(); ++i) EXPECT_LT(p.highlights[i - 1].start, p.highlights[i].start);

  ASSERT_EQ(p.clips.size(), 3u);
  std::set<std::string> clip_titles;
  for (std::size_t i = 0; i < p.clips.size(); ++i) {
    EXPECT_TRUE(is_segment_start(t, p.clips[i].start));
    if (i > 0) {
      EXPECT_GE(p.clips[i].start - p.clips[i - 1].start, 15);  // clips do not overlap
    }
    EXPECT_EQ(testing::title_problem(p.clips[i].title), "") << p.clips[i].title;
    EXPECT_TRUE(clip_titles.insert(to_lower(p.clips[i].title)).second);
  }

  ASSERT_GE(p.quoted_sections.size(), 8u);
  ASSERT_LE(p.quoted_sections.size(), 12u);
  std::set<std::string> insight_titles;
  for (std::size_t i = 0; i < p.quoted_sections.size(); ++i) {
    const PostingItem& q = p.quoted_sections[i];
    EXPECT_TRUE(quoted_verbatim(t, q)) << (q.quote ? *q.quote : "(no quote)");
    EXPECT_EQ(testing::title_problem(q.title), "") << q.title;
    EXPECT_TRUE(insight_titles.insert(to_lower(q.title)).second) << "duplicate insight title " << q.title;
    if (i > 0) {
      EXPECT_LT(p.quoted_sections[i - 1].start, q.start);
    }
  }
  EXPECT_FALSE(p.refine_prompt);
}

TEST(Posting, RegenerationWithoutPromptIsTheEnrichedCache) {
  const auto t = testing::episode_transcript();
  const auto a = enrich(t);
  const PostingChapters again = posting_chapters(t, a.sections, std::nullopt);
  EXPECT_EQ(to_json(again), to_json(a.posting));
  // Sections that do not fit the transcript are found again.
  std::vector<Section> broken = a.sections;
  broken.pop_back();
  EXPECT_EQ(to_json(posting_chapters(t, broken, std::nullopt)), to_json(a.posting));
  EXPECT_EQ(to_json(posting_chapters(t, {}, std::nullopt)), to_json(a.posting));
}

TEST(Posting, RefinePromptSteersQuotesAndIsDeterministic) {
  const auto t = testing::episode_transcript();
  const auto a = enrich(t);
  const std::string prompt = "Emphasize retirement and the emergency fund";
  const PostingChapters p = posting_chapters(t, a.sections, prompt);
  EXPECT_EQ(p.refine_prompt, prompt);
  EXPECT_EQ(to_json(p), to_json(posting_chapters(t, a.sections, prompt)));
  auto mentions = [](const PostingChapters& c) {
    int n = 0;
    for (const auto& q : c.quoted_sections) {
      const std::string lower = to_lower(*q.quote);
      n += lower.find("retirement") != std::string::npos || lower.find("fund") != std::string::npos;
    }
    return n;
  };
  EXPECT_GT(mentions(p), mentions(a.posting));
  for (const auto& q : p.quoted_sections) EXPECT_TRUE(quoted_verbatim(t, q));
  // A prompt that names nothing in the transcript changes nothing but itself.
  PostingChapters unrelated = posting_chapters(t, a.sections, std::string("zebra xylophone"));
  EXPECT_EQ(unrelated.refine_prompt, "zebra xylophone");
  unrelated.refine_prompt.reset();
  EXPECT_EQ(to_json(unrelated), to_json(a.posting));
}

TEST(Posting, ShortRecordingsGetFewerItems) {
  const auto t = testing::transcript_of({"The violin needs new strings before the concert tonight.",
                                         "I tune the violin twice because the hall is cold."});
  const auto p = enrich(t).posting;
  EXPECT_EQ(p.standard.size(), 1u);
  EXPECT_EQ(p.highlights.size(), 1u);
  EXPECT_LE(p.clips.size(), 1u);
  EXPECT_LE(p.quoted_sections.size(), 2u);
  for (const auto& q : p.quoted_sections) EXPECT_TRUE(quoted_verbatim(t, q));
  const auto empty = posting_chapters(transcript::TranscriptArtifact{}, {}, std::string("anything"));
  EXPECT_TRUE(empty.standard.empty());
  EXPECT_TRUE(empty.quoted_sections.empty());
  EXPECT_EQ(empty.refine_prompt, "anything");
}

}  // namespace
}  // namespace scribe::enrichment
