#include "domain/transcript_revision.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "domain/events.h"
#include "domain/limits.h"
#include "domain/subtitles.h"

namespace scribe::revision {
namespace {

const Bounds kBounds{60'000, {"SPEAKER_00", "Host"}};

Json cue(int64_t s, int64_t e, const std::string& text, Json speaker = nullptr) {
  return {{"start_ms", s}, {"end_ms", e}, {"text", text}, {"speaker", speaker}};
}

Json body(Json cues, Json base = nullptr) { return {{"base_revision", base}, {"cues", cues}}; }

// The field a refused body names (the test fails when it is accepted).
std::string refused_field(const Json& b, const Bounds& bounds = kBounds) {
  try {
    parse_draft(b, bounds);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "invalid_request");
    return e.extras().value("field", std::string("<none>"));
  }
  ADD_FAILURE() << "accepted: " << b.dump();
  return "";
}

TEST(TranscriptRevision, AcceptsAndTrimsAValidDraft) {
  Json b = body(Json::array({cue(0, 1000, "  Hello there. ", "SPEAKER_00"), cue(1000, 2500, "Welcome", "Host"),
                             cue(3000, 4000, "Bye", "SPEAKER_07")}),
                3);
  b["speaker_names"] = {{"SPEAKER_00", " Alice "}};
  const Draft d = parse_draft(b, kBounds);
  EXPECT_EQ(d.base_revision, 3);
  ASSERT_EQ(d.cues.size(), 3u);
  EXPECT_EQ(d.cues[0].text, "Hello there.");
  EXPECT_EQ(d.cues[1].speaker, "Host");
  EXPECT_EQ(d.speaker_names.at("SPEAKER_00"), "Alice");
}

TEST(TranscriptRevision, RefusesBrokenRulesNamingTheField) {
  EXPECT_EQ(refused_field(Json::array()), "body");
  EXPECT_EQ(refused_field({{"cues", Json::array({cue(0, 1, "a")})}}), "base_revision");
  EXPECT_EQ(refused_field(body(Json::array({cue(0, 1, "a")}), "1")), "base_revision");
  EXPECT_EQ(refused_field(body(Json::array({cue(0, 1, "a")}), 0)), "base_revision");
  EXPECT_EQ(refused_field(body(Json::array())), "cues");
  EXPECT_EQ(refused_field(body("x")), "cues");
  EXPECT_EQ(refused_field(body(Json::array({5}))), "cues[0]");
  EXPECT_EQ(refused_field(body(Json::array({cue(10, 10, "a")}))), "cues[0].end_ms");
  EXPECT_EQ(refused_field(body(Json::array({cue(-1, 10, "a")}))), "cues[0].start_ms");
  EXPECT_EQ(refused_field(body(Json::array({cue(0, 60'001, "a")}))), "cues[0].end_ms");
  Json text_ms = cue(0, 10, "a");
  text_ms["start_ms"] = "0";
  EXPECT_EQ(refused_field(body(Json::array({text_ms}))), "cues[0].start_ms");
  Json fraction = cue(0, 10, "a");
  fraction["end_ms"] = 10.5;
  EXPECT_EQ(refused_field(body(Json::array({fraction}))), "cues[0].end_ms");
  // Overlap and order.
  EXPECT_EQ(refused_field(body(Json::array({cue(0, 1000, "a"), cue(999, 2000, "b")}))), "cues[1].start_ms");
  EXPECT_EQ(refused_field(body(Json::array({cue(5000, 6000, "a"), cue(0, 1000, "b")}))), "cues[1].start_ms");
  // Text.
  EXPECT_EQ(refused_field(body(Json::array({cue(0, 10, "   ")}))), "cues[0].text");
  EXPECT_EQ(refused_field(body(Json::array({cue(0, 10, "a\nb")}))), "cues[0].text");
  EXPECT_EQ(refused_field(body(Json::array({cue(0, 10, std::string(1001, 'x'))}))), "cues[0].text");
  Json no_text = cue(0, 10, "a");
  no_text.erase("text");
  EXPECT_EQ(refused_field(body(Json::array({no_text}))), "cues[0].text");
  // Speakers.
  EXPECT_EQ(refused_field(body(Json::array({cue(0, 10, "a", "SPEAKER_1")}))), "cues[0].speaker");
  EXPECT_EQ(refused_field(body(Json::array({cue(0, 10, "a", "Guest")}))), "cues[0].speaker");
  EXPECT_EQ(refused_field(body(Json::array({cue(0, 10, "a", 3)}))), "cues[0].speaker");
  Json names = body(Json::array({cue(0, 10, "a")}));
  names["speaker_names"] = {{"Nobody", "x"}};
  EXPECT_EQ(refused_field(names), "speaker_names.Nobody");
  names["speaker_names"] = {{"SPEAKER_01", std::string(65, 'n')}};
  EXPECT_EQ(refused_field(names), "speaker_names.SPEAKER_01");
  names["speaker_names"] = {{"SPEAKER_01", ""}};
  EXPECT_EQ(refused_field(names), "speaker_names.SPEAKER_01");
  names["speaker_names"] = Json::array();
  EXPECT_EQ(refused_field(names), "speaker_names");
}

TEST(TranscriptRevision, BoundsCueCountAndTextBytes) {
  Json many = Json::array();
  for (int i = 0; i <= limits::kRevisionMaxCues; ++i) many.push_back(cue(i, i + 1, "a"));
  EXPECT_EQ(refused_field(body(many), Bounds{1'000'000, {}}), "cues");
  many.erase(many.size() - 1);
  EXPECT_NO_THROW(parse_draft(body(many), Bounds{1'000'000, {}}));
  Json big = Json::array();
  for (int i = 0; i < 1000; ++i) big.push_back(cue(i, i + 1, std::string(1000, 'b')));
  EXPECT_EQ(refused_field(body(big), Bounds{1'000'000, {}}), "cues");
}

eventstore::RecordedEvent recorded(eventstore::NewEvent e, int64_t version) {
  eventstore::RecordedEvent r;
  r.type = e.type;
  r.data = e.data;
  r.version = version;
  return r;
}

TEST(TranscriptRevision, NumbersNeverRepeatAndUndoRestoresThePrevious) {
  const Draft d = parse_draft(body(Json::array({cue(0, 10, "a")})), kBounds);
  std::vector<eventstore::RecordedEvent> log;
  State s = fold(log);
  EXPECT_EQ(s.latest(), std::nullopt);
  log.push_back(recorded(saved(s, 7, 1, d, TimePoint{}), 1));
  s = fold(log);
  EXPECT_EQ(s.latest(), 1);
  Draft d2 = d;
  d2.base_revision = 1;
  log.push_back(recorded(saved(s, 7, 1, d2, TimePoint{}), 2));
  s = fold(log);
  EXPECT_EQ(s.latest(), 2);
  const auto u = undone(s, 7, 1, TimePoint{});
  EXPECT_EQ(u.data["revision"], 2);
  EXPECT_EQ(u.data["current_revision"], 1);
  log.push_back(recorded(u, 3));
  s = fold(log);
  EXPECT_EQ(s.latest(), 1);
  // The next save is number 3, not 2 again.
  EXPECT_EQ(saved(s, 7, 1, d2, TimePoint{}).data["revision"], 3);
  log.push_back(recorded(undone(s, 7, 1, TimePoint{}), 4));
  s = fold(log);
  EXPECT_EQ(s.latest(), std::nullopt);
  EXPECT_EQ(s.version, 4);
  try {
    undone(s, 7, 1, TimePoint{});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "not_found");
  }
}

TEST(TranscriptRevision, AStaleBaseConflicts) {
  State s;
  s.standing = {1, 4};
  s.last_number = 4;
  EXPECT_NO_THROW(check_base(s, 4));
  for (std::optional<int64_t> stale : {std::optional<int64_t>(), std::optional<int64_t>(1)}) {
    try {
      check_base(s, stale);
      FAIL();
    } catch (const Error& e) {
      EXPECT_EQ(e.http_status(), 409);
      EXPECT_EQ(e.extras()["reason"], "revision_conflict");
      EXPECT_EQ(e.extras()["latest_revision"], 4);
    }
  }
  EXPECT_NO_THROW(check_base(State{}, std::nullopt));
  EXPECT_THROW(check_base(State{}, 1), Error);
}

TEST(TranscriptRevision, UneditedCuesKeepRecognizedWordsEditedOnesAreSpread) {
  using transcript::Segment;
  using transcript::Word;
  const std::vector<Segment> recognized = {{11, 0, 1000, "SPEAKER_00", "Hello world."}};
  const std::vector<Word> words = {{"Hello", std::nullopt, 100, 400, "SPEAKER_00", 11, std::nullopt},
                                   {"world", ".", 500, 900, "SPEAKER_00", 11, std::nullopt}};
  const std::vector<Segment> cues = {{101, 0, 1000, "SPEAKER_00", "Hello world."},
                                     {102, 1000, 2000, "SPEAKER_01", "Good bye, all."}};
  const auto out = cue_words(cues, recognized, words);
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0].start_ms, 100);  // kept
  EXPECT_EQ(out[1].end_ms, 900);
  EXPECT_EQ(out[1].segment_id, 101);
  EXPECT_EQ(out[2].text, "Good");
  EXPECT_EQ(out[2].start_ms, 1000);  // spread from the cue's start
  EXPECT_EQ(out[3].punctuation, ",");
  EXPECT_EQ(out[4].speaker, "SPEAKER_01");
  EXPECT_LE(out[4].end_ms, 2000);
  EXPECT_GT(out[4].start_ms, out[3].start_ms);
}

TEST(TranscriptRevision, MaterializedCuesKeepTheirTimesAndBreakLinesOnly) {
  using transcript::Segment;
  const std::vector<Segment> cues = {
      {1, 500, 9000, "SPEAKER_00",
       "This edited cue is much longer than one line of the preset and still stays one cue."},
      {2, 9000, 9400, "SPEAKER_01", "Short."}};
  const auto set = subtitles::build_from_cues(cues, cue_words(cues, {}, {}), {subtitles::find_preset("youtube"), true});
  ASSERT_EQ(set.cues.size(), 2u);
  EXPECT_EQ(set.cues[0].start_ms, 500);
  EXPECT_EQ(set.cues[0].end_ms, 9000);
  EXPECT_EQ(set.cues[1].end_ms, 9400);
  EXPECT_GE(set.cues[0].lines.size(), 2u);
  for (const auto& line : set.cues[0].lines) EXPECT_LE(transcript::display_length(line), 42u);
  EXPECT_EQ(set.cues[1].lines[0], "[SPEAKER_01] Short.");
  const std::string srt = subtitles::render_srt(set);
  EXPECT_NE(srt.find("00:00:00,500 --> 00:00:09,000"), std::string::npos) << srt;
}

TEST(TranscriptRevision, NamesReplaceLabelsOnlyWhereGiven) {
  std::vector<transcript::Segment> segs = {
      {1, 0, 1, "SPEAKER_00", "a"}, {2, 1, 2, "SPEAKER_01", "b"}, {3, 2, 3, std::nullopt, "c"}};
  apply_names(segs, {{"SPEAKER_00", "Alice"}});
  EXPECT_EQ(segs[0].speaker, "Alice");
  EXPECT_EQ(segs[1].speaker, "SPEAKER_01");
  EXPECT_EQ(segs[2].speaker, std::nullopt);
  EXPECT_NE(transcript::render_txt(segs, {}).find("Alice: a"), std::string::npos);
}

}  // namespace
}  // namespace scribe::revision
