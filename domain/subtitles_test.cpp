#include "domain/subtitles.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>

namespace scribe::subtitles {
namespace {

using transcript::Segment;
using transcript::shown_confidence;
using transcript::Word;

// Words of `text` spoken at a steady 3 words per second from `start_ms`, each
// trailing punctuation kept apart as the pipeline stores it.
std::vector<Word> speak(const std::string& text, int64_t start_ms, const std::optional<std::string>& speaker) {
  std::vector<Word> out;
  std::istringstream in(text);
  std::string w;
  int64_t t = start_ms;
  while (in >> w) {
    Word word;
    if (w.back() == '.' || w.back() == ',' || w.back() == '?') {
      word.punctuation = std::string(1, w.back());
      w.pop_back();
    }
    word.text = w;
    word.start_ms = t;
    word.end_ms = t + 280;
    word.speaker = speaker;
    t += 333;
    out.push_back(word);
  }
  return out;
}

const Preset& preset(const char* name) { return *find_preset(name); }

TEST(Subtitles, PresetsAreTheDocumentedSix) {
  std::vector<std::string> names;
  for (const auto& p : presets()) {
    names.push_back(p.name);
    // A full cue can always be read within the maximum duration.
    EXPECT_LE(p.max_lines * p.max_chars_per_line, p.max_cps * p.max_duration_ms / 1000.0) << p.name;
    EXPECT_LT(p.min_duration_ms, p.max_duration_ms);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"youtube", "tiktok-shorts", "instagram-reels", "netflix", "podcast",
                                             "broadcast"}));
  const Preset& n = preset("netflix");
  EXPECT_EQ(n.max_chars_per_line, 42);
  EXPECT_EQ(n.max_lines, 2);
  EXPECT_EQ(n.min_duration_ms, 833);
  EXPECT_EQ(n.max_duration_ms, 7000);
  EXPECT_EQ(n.max_cps, 17.0);
  EXPECT_EQ(n.min_gap_ms, 84);
  // Two frames at 23.976 fps, the slowest rate Netflix delivers at (80 ms,
  // two frames at 25 fps, was 1.7 frames there); broadcast: three at 25 fps.
  EXPECT_GE(n.min_gap_ms / 1000.0, 2 / (24000.0 / 1001));
  EXPECT_GE(preset("broadcast").min_gap_ms / 1000.0, 3 / 25.0);
  EXPECT_EQ(find_preset("custom"), nullptr);
  EXPECT_EQ(find_preset(kDefaultPreset)->name, std::string("youtube"));
}

TEST(Subtitles, TimestampsAndLabels) {
  EXPECT_EQ(format_timestamp(3723004, ','), "01:02:03,004");
  EXPECT_EQ(format_timestamp(0, '.'), "00:00:00.000");
  EXPECT_EQ(format_timestamp(-5, '.'), "00:00:00.000");
  EXPECT_EQ(speaker_label("SPEAKER_01"), "[SPEAKER_01] ");
  EXPECT_EQ(speaker_label(std::nullopt), "[Unknown] ");
  EXPECT_TRUE(is_article("The"));
  EXPECT_TRUE(is_preposition("of"));
  EXPECT_TRUE(is_conjunction("because"));
  EXPECT_FALSE(is_article("then"));
}

TEST(Subtitles, ShortSentencesBecomeOneCueEachInSrt) {
  auto words = speak("Good morning everyone.", 1000, "SPEAKER_00");
  auto more = speak("Thank you.", 3000, "SPEAKER_01");
  words.insert(words.end(), more.begin(), more.end());
  const auto set = build_from_words(words, {&preset("youtube"), false});
  ASSERT_EQ(set.cues.size(), 2u);
  EXPECT_EQ(render_srt(set),
            // 22 characters at 20 per second need 1.1 s on screen.
            "1\n00:00:01,000 --> 00:00:02,100\nGood morning everyone.\n\n"
            "2\n00:00:03,000 --> 00:00:04,000\nThank you.\n");
  const auto labelled = build_from_words(words, {&preset("youtube"), true});
  EXPECT_EQ(labelled.cues[1].lines[0], "[SPEAKER_01] Thank you.");
}

TEST(Subtitles, NetflixBreaksLinesAtPunctuationAndNeverAfterAnArticle) {
  const auto words =
      speak("We walked along the river for an hour, and then we sat down on the old wooden bench near the bridge.", 0,
            "SPEAKER_00");
  const auto set = build_from_words(words, {&preset("netflix"), false});
  for (const auto& c : set.cues) {
    ASSERT_LE(c.lines.size(), 2u);
    for (std::size_t l = 0; l < c.lines.size(); ++l) {
      EXPECT_LE(transcript::display_length(c.lines[l]), 42u) << c.lines[l];
      const auto& line = c.lines[l];
      const auto last = line.substr(line.rfind(' ') + 1);
      EXPECT_FALSE(is_article(last)) << line;
    }
  }
  // The first cue ends at the comma rather than filling up to the limit.
  EXPECT_EQ(set.cues[0].lines.back().back(), ',');
  // Regular speech never needs the no-room exception.
  for (const auto& c : set.cues) EXPECT_GE(c.end_ms - c.start_ms, 833);
  for (std::size_t i = 1; i < set.cues.size(); ++i) EXPECT_GE(set.cues[i].start_ms - set.cues[i - 1].end_ms, 80);
}

TEST(Subtitles, ShortCueIsExtendedToTheMinimumWhenThereIsRoom) {
  auto words = speak("Yes.", 500, "SPEAKER_00");
  auto more = speak("Right.", 5000, "SPEAKER_01");
  words.insert(words.end(), more.begin(), more.end());
  const auto set = build_from_words(words, {&preset("netflix"), false});
  ASSERT_EQ(set.cues.size(), 2u);
  EXPECT_EQ(set.cues[0].start_ms, 500);
  EXPECT_EQ(set.cues[0].end_ms, 500 + 833);
}

TEST(Subtitles, SentenceModeKeepsShortSegmentsWholeAndSplitsLongOnes) {
  std::vector<Segment> segs = {
      {1, 0, 1500, "SPEAKER_00", "Good morning everyone, welcome."},
      {2, 2000, 14000, "SPEAKER_01",
       "Thank you, I would like to talk about the budget for next year because the library needs new books and a "
       "bigger building for the children of the town."},
  };
  const auto set = build_from_segments(segs, {&preset("netflix"), false});
  ASSERT_GE(set.cues.size(), 3u);
  EXPECT_EQ(set.cues[0].lines, (std::vector<std::string>{"Good morning everyone, welcome."}));
  EXPECT_EQ(set.cues[0].start_ms, 0);
  EXPECT_EQ(set.cues[1].start_ms, 2000);
  EXPECT_EQ(set.mode, Mode::Sentence);
  for (const auto& c : set.cues) EXPECT_LE(c.end_ms - c.start_ms, 7000);
}

TEST(Subtitles, VttEscapesAndKaraokeTagsStayInsideTheirCue) {
  auto words = speak("Fish & chips <cheap> today.", 61000, std::nullopt);
  const auto set = build_from_words(words, {&preset("youtube"), true});
  const auto vtt = render_vtt(set);
  EXPECT_EQ(vtt.rfind("WEBVTT\n\n00:01:01.000 --> ", 0), 0u) << vtt;
  EXPECT_NE(vtt.find("[Unknown] Fish &amp; chips &lt;cheap&gt; today."), std::string::npos) << vtt;
  const auto karaoke = render_vtt_karaoke(set);
  EXPECT_NE(karaoke.find("[Unknown] Fish <00:01:01.333>&amp; <00:01:01.666>chips"), std::string::npos) << karaoke;
  // Words timed before the cue's start or after its end get no tag.
  words[1].start_ms = 60000;
  words[3].start_ms = 90000;
  words[3].end_ms = 90001;
  const auto odd = render_vtt_karaoke(build_from_words(words, {&preset("youtube"), false}));
  EXPECT_EQ(odd.find("<00:00:"), std::string::npos) << odd;
}

TEST(Subtitles, JsonIsCamelCaseWithWordsInWordModeOnly) {
  auto words = speak("Hello there, my friend.", 0, "SPEAKER_00");
  const auto j = nlohmann::json::parse(render_json(build_from_words(words, {&preset("tiktok-shorts"), false})));
  ASSERT_EQ(j["cues"].size(), 1u);
  const auto& cue = j["cues"][0];
  EXPECT_EQ(cue["startMs"], 0);
  EXPECT_EQ(cue["text"], "Hello there,\nmy friend.");
  EXPECT_EQ(cue["speaker"], "SPEAKER_00");
  ASSERT_EQ(cue["words"].size(), 4u);
  EXPECT_EQ(cue["words"][1], (nlohmann::json{{"text", "there"},
                                             {"startMs", 333},
                                             {"endMs", 613},
                                             {"punctuationAfter", ","},
                                             {"speaker", "SPEAKER_00"},
                                             {"confidence", nullptr}}));
  // A word with the recognizer's confidence carries it, to 3 decimals.
  auto sure = words;
  for (auto& w : sure) w.confidence = 0.87654;
  const auto k = nlohmann::json::parse(render_json(build_from_words(sure, {&preset("tiktok-shorts"), false})));
  EXPECT_EQ(k["cues"][0]["words"][0]["confidence"], 0.877);
  // A value half-way between two thousandths reads as /words shows it (the
  // JSON number of shown_confidence), whatever its binary digits: 0.9295 is
  // 0.92949999... in binary, which "%.3f" alone printed as 0.929.
  for (const double c : {0.9295, 0.0005, 0.1235, 0.5, 1.2, -0.1}) {
    for (auto& w : sure) w.confidence = c;
    const auto j = nlohmann::json::parse(render_json(build_from_words(sure, {&preset("tiktok-shorts"), false})));
    EXPECT_EQ(j["cues"][0]["words"][0]["confidence"].dump(), nlohmann::json(shown_confidence(c)).dump()) << c;
  }
  EXPECT_EQ(shown_confidence(0.9295), 0.93);
  EXPECT_EQ(shown_confidence(1.2), 1.0);
  EXPECT_EQ(shown_confidence(-0.1), 0.0);
  EXPECT_TRUE(cue["words"][0]["punctuationAfter"].is_null());
  const auto s = nlohmann::json::parse(
      render_json(build_from_segments({{1, 0, 900, std::nullopt, "Quote \"me\"\\."}}, {&preset("youtube"), false})));
  EXPECT_FALSE(s["cues"][0].contains("words"));
  EXPECT_FALSE(s["cues"][0].contains("speaker"));
  EXPECT_EQ(s["cues"][0]["text"], "Quote \"me\"\\.");
}

TEST(Subtitles, NothingToShowGivesNoCues) {
  EXPECT_TRUE(build_from_words({}, {&preset("youtube"), false}).cues.empty());
  EXPECT_TRUE(build_from_segments({{1, 0, 10, std::nullopt, "   "}}, {&preset("youtube"), false}).cues.empty());
  EXPECT_EQ(render_vtt(CueSet{}), "WEBVTT\n");
}

}  // namespace
}  // namespace scribe::subtitles
