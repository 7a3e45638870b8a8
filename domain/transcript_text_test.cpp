#include "domain/transcript_text.h"

#include <gtest/gtest.h>

namespace scribe::transcript {
namespace {

std::vector<Segment> sample() {
  return {
      {1, 0, 2000, "SPEAKER_00", "Good morning everyone, welcome."},
      {2, 2100, 4000, "SPEAKER_00", "Today we talk\nabout the library."},
      {3, 4500, 7000, "SPEAKER_01", "Thank you."},
      {4, 7000, 7100, "SPEAKER_01", "  "},
      {5, 3725000, 3727000, std::nullopt, "Inaudible."},
      {6, 3728000, 3729000, "SPEAKER_00", "Bye."},
  };
}

TEST(TranscriptText, ConsecutiveSegmentsOfOneSpeakerFormATurn) {
  auto ts = turns(sample());
  ASSERT_EQ(ts.size(), 4u);
  EXPECT_EQ(ts[0].text, "Good morning everyone, welcome. Today we talk about the library.");
  EXPECT_EQ(ts[0].segment_count, 2u);
  EXPECT_EQ(ts[0].end_ms, 4000);
  EXPECT_EQ(ts[1].segment_count, 1u);  // the blank segment is skipped
  EXPECT_FALSE(ts[2].speaker.has_value());
}

TEST(TranscriptText, TxtHasTimestampAndSpeakerPrefixesByDefault) {
  EXPECT_EQ(render_txt(sample(), {}),
            "[00:00:00] SPEAKER_00: Good morning everyone, welcome. Today we talk about the library.\n\n"
            "[00:00:04] SPEAKER_01: Thank you.\n\n"
            "[01:02:05] Unknown: Inaudible.\n\n"
            "[01:02:08] SPEAKER_00: Bye.\n");
}

TEST(TranscriptText, TheTwoPrefixesAreIndependent) {
  const auto segs = sample();
  EXPECT_EQ(render_txt(segs, {false, true}).substr(0, 20), "[00:00:00] Good morn");
  EXPECT_EQ(render_txt(segs, {true, false}).substr(0, 20), "SPEAKER_00: Good mor");
  const auto bare = render_txt(segs, {false, false});
  EXPECT_EQ(bare.substr(0, 12), "Good morning");
  EXPECT_EQ(bare.find('['), std::string::npos);
}

TEST(TranscriptText, MarkdownHasTitleRuleAndBoldSpeakers) {
  const auto md = render_md("Library *meeting*\nnotes", {}, sample(), {});
  EXPECT_EQ(md.substr(0, md.find("[00:00:04]")),
            "# Library \\*meeting\\* notes\n\n---\n\n"
            "[00:00:00] **SPEAKER_00:** Good morning everyone, welcome. Today we talk about the library.\n\n");
  const auto with_chapters = render_md("T", {{0, "Intro"}, {61000, "Budget"}}, sample(), {true, true});
  EXPECT_NE(with_chapters.find("## Chapters\n\n- [00:00:00] Intro\n- [00:01:01] Budget\n\n---\n\n"), std::string::npos);
  EXPECT_NE(render_md("T", {}, sample(), {false, false}).find("---\n\nGood morning"), std::string::npos);
}

TEST(TranscriptText, NoTextMeansAnEmptyRendering) {
  std::vector<Segment> blank = {{1, 0, 10, std::nullopt, " "}};
  EXPECT_EQ(render_txt(blank, {}), "");
  EXPECT_EQ(render_md("T", {}, blank, {}), "");
  EXPECT_EQ(render_txt({}, {}), "");
}

TEST(TranscriptText, HelpersFormatTimesSlugsAndLengths) {
  EXPECT_EQ(format_hms(0), "00:00:00");
  EXPECT_EQ(format_hms(43199999), "11:59:59");
  EXPECT_EQ(format_hms(-1), "00:00:00");
  EXPECT_EQ(slug(std::string("Library meeting: Q3 budget!"), 7), "library-meeting-q3-budget");
  EXPECT_EQ(slug(std::string("¿Qué?"), 7), "qu");
  EXPECT_EQ(slug(std::string("!!!"), 7), "transcription-7");
  EXPECT_EQ(slug(std::nullopt, 42), "transcription-42");
  EXPECT_EQ(slug(std::string(100, 'a'), 1).size(), 60u);
  EXPECT_EQ(display_length("naïve café"), 10u);
}

}  // namespace
}  // namespace scribe::transcript
