#include "enrichment/answering.h"

#include <gtest/gtest.h>

#include <regex>

namespace scribe::enrichment {
namespace {

// A segment with the lexemes given (as the database's stemmer would write
// them), so these tests need no database.
AskSegment seg(int64_t id, int64_t tid, int64_t start_s, std::string text, std::vector<std::string> lexemes) {
  AskSegment s;
  s.segment_id = id;
  s.transcription_id = tid;
  s.start_ms = start_s * 1000;
  s.end_ms = s.start_ms + 5000;
  s.text = std::move(text);
  std::map<std::string, int> counts;
  for (auto& l : lexemes) counts[l] += 1;
  s.terms.assign(counts.begin(), counts.end());
  s.length = static_cast<int>(lexemes.size());
  return s;
}

Collection coll(double segments, double average_length) {
  Collection c;
  c.segments = segments;
  c.average_length = average_length;
  return c;
}

TEST(ParseTsvector, CountsPositionsAndUnquotes) {
  int length = 0;
  auto t = parse_tsvector("'bee':1,4,9 'hive':2 'it''s':3A 'queen'", &length);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0], (std::pair<std::string, int>{"bee", 3}));
  EXPECT_EQ(t[1], (std::pair<std::string, int>{"hive", 1}));
  EXPECT_EQ(t[2], (std::pair<std::string, int>{"it's", 1}));
  EXPECT_EQ(t[3], (std::pair<std::string, int>{"queen", 1}));
  EXPECT_EQ(length, 6);
  EXPECT_TRUE(parse_tsvector("", &length).empty());
  EXPECT_EQ(length, 0);
}

TEST(QueryTerms, DropsTheQuestionFrameAndRepeats) {
  EXPECT_EQ(query_terms({"say", "tide", "moon", "tide", "speaker", "mention"}),
            (std::vector<std::string>{"tide", "moon"}));
  EXPECT_TRUE(query_terms({"say", "talk"}).empty());
}

std::vector<AskSegment> recording() {
  return {
      seg(1, 1, 0, "Baking bread starts with flour and water.", {"bake", "bread", "start", "flour", "water"}),
      seg(2, 1, 6, "Bake the loaf for forty minutes until golden.", {"bake", "loaf", "forti", "minut", "golden"}),
      seg(3, 1, 60, "The moon pulls the ocean. That causes the tides.", {"moon", "pull", "ocean", "caus", "tide"}),
      seg(4, 1, 66, "Spring tides are stronger.", {"spring", "tide", "stronger"}),
      seg(5, 1, 120, "The striker scored a goal.", {"striker", "score", "goal"}),
  };
}

TEST(AnswerQuestion, CitesTheSegmentThatAnswersWithMatchingMarkers) {
  auto segs = recording();
  // "What causes the tides?" -> caus, tide (segments holding them: 3, 4).
  std::vector<AskSegment> found = {segs[2], segs[3]};
  auto a = answer_question(plain_terms({"caus", "tide"}), found, coll(5, 5), {});
  ASSERT_FALSE(a.no_answer);
  ASSERT_FALSE(a.citations.empty());
  EXPECT_EQ(found[a.citations[0].segment].segment_id, 3);
  EXPECT_EQ(a.citations[0].marker, 1);
  EXPECT_EQ(a.citations[0].quote, segs[2].text);
  // The claim is the sentence with the question's words, verbatim.
  EXPECT_NE(a.answer.find("That causes the tides. [1]"), std::string::npos) << a.answer;
  // Every marker in the answer has its citation and the other way round.
  std::regex marker("\\[(\\d+)\\]");
  std::set<int> in_text;
  for (std::sregex_iterator it(a.answer.begin(), a.answer.end(), marker), end; it != end; ++it)
    in_text.insert(std::stoi((*it)[1]));
  std::set<int> cited;
  for (const auto& c : a.citations) cited.insert(c.marker);
  EXPECT_EQ(in_text, cited);
  EXPECT_GE(a.confidence, no_answer_threshold());
}

TEST(AnswerQuestion, NothingFoundOrTooLittleCoveredIsNoAnswer) {
  auto segs = recording();
  EXPECT_TRUE(answer_question(plain_terms({"gold", "price"}), {}, coll(5, 5), {}).no_answer);
  EXPECT_TRUE(answer_question(plain_terms({}), segs, coll(5, 5), {}).no_answer);
  // "What is the price of bread in Tokyo?": only "bread" is in the
  // recording, and the two rarer words weigh more.
  auto a = answer_question(plain_terms({"price", "bread", "tokyo"}), {segs[0]}, coll(5, 5), {});
  EXPECT_TRUE(a.no_answer);
  EXPECT_LT(a.confidence, no_answer_threshold());
  EXPECT_TRUE(a.citations.empty());
  EXPECT_TRUE(a.answer.empty());
}

TEST(AnswerQuestion, NeighboursPoolIntoOneMomentAndFurtherCitationsAreApart) {
  // "How long do you bake the bread?" -> bake, bread, long: segments 1 and 2
  // are 6 s apart and together cover the question; one citation, not two.
  auto segs = recording();
  std::vector<AskSegment> found = {segs[0], segs[1]};
  auto a = answer_question(plain_terms({"bake", "bread"}), found, coll(5, 5), {});
  ASSERT_FALSE(a.no_answer);
  EXPECT_EQ(a.citations.size(), 1u);
}

TEST(AnswerQuestion, LibraryCitationsMayComeFromSeveralRecordings) {
  std::vector<AskSegment> found = {
      seg(1, 1, 10, "Tides follow the moon.", {"tide", "follow", "moon"}),
      seg(2, 2, 10, "The moon moves the tides every day.", {"moon", "move", "tide", "everi", "day"}),
      seg(3, 3, 10, "A chess opening.", {"chess", "open"}),
  };
  auto a = answer_question(plain_terms({"moon", "tide"}), {found[0], found[1]}, coll(100, 5), {});
  ASSERT_FALSE(a.no_answer);
  ASSERT_EQ(a.citations.size(), 2u);
  EXPECT_NE(a.citations[0].segment, a.citations[1].segment);
  EXPECT_NE(a.answer.find("[2]"), std::string::npos);
}

TEST(AnswerQuestion, KnownDocumentFrequenciesWeighCommonTermsDown) {
  // "moon" is in every one of a million segments; "tide" in two. The
  // segment with "tide" wins even though the other has "moon" twice.
  std::vector<AskSegment> found = {
      seg(1, 1, 10, "Moon moon.", {"moon", "moon"}),
      seg(2, 2, 10, "Tide tables.", {"tide", "tabl"}),
  };
  Collection c = coll(1e6, 5);
  c.document_frequency = {{"moon", 1e6 - 1}, {"tide", 2}};
  auto a = answer_question(plain_terms({"moon", "tide"}), found, c, {10, 1});
  ASSERT_FALSE(a.citations.empty());
  EXPECT_EQ(found[a.citations[0].segment].segment_id, 2);
}

TEST(AnswerQuestion, AQuestionInTheRecordingIsAnsweredByWhatFollowsIt) {
  // "Where can we get drinking water?" matches the speaker's own question;
  // the citation moves to the reply that follows within 15 s.
  std::vector<AskSegment> found = {
      seg(1, 1, 10, "What about drinking water?", {"drink", "water"}),
      seg(3, 1, 40, "Rain is water too.", {"rain", "water"}),
  };
  const AskSegment reply =
      seg(2, 1, 14, "Bring a filter and drink from the lake.", {"bring", "filter", "drink", "lake"});
  int asked = 0;
  NextSegment next = [&](const AskSegment& s) -> std::optional<AskSegment> {
    ++asked;
    if (s.segment_id == 1) return reply;
    return std::nullopt;
  };
  Cited moved;
  auto a = answer_question(plain_terms({"drink", "water"}), found, coll(50, 5), {10, 1}, next, &moved);
  ASSERT_FALSE(a.no_answer);
  ASSERT_EQ(a.citations.size(), 1u);
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(cited_segment(found, moved, a.citations[0].segment).segment_id, 2);
  EXPECT_EQ(a.citations[0].quote, reply.text);
  // Too far after the question: the question stays cited.
  const AskSegment late = seg(9, 1, 60, "Later.", {"later"});
  a = answer_question(
      plain_terms({"drink", "water"}), found, coll(50, 5), {10, 1},
      [&](const AskSegment&) -> std::optional<AskSegment> { return late; }, &moved);
  EXPECT_EQ(cited_segment(found, moved, a.citations[0].segment).segment_id, 1);
}

// "How deep is the moat?" asked of a recording whose 1-best says "most":
// the moment where the recognizer almost heard "moat" is found through its
// alternates, and through the sound-alike "most" only as weakly as a common
// word deserves.
TEST(AnswerQuestion, WhatTheRecognizerAlmostHeardCounts) {
  std::vector<AskSegment> found = {
      seg(1, 1, 10, "The most was very deep.", {"most", "deep"}),
      seg(2, 1, 60, "Most people like it deep.", {"most", "peopl", "like", "deep"}),
  };
  found[0].heard = {{"moat", 0.6}};
  auto as_written = answer_question(plain_terms({"moat", "deep"}), found, coll(40, 5), {10, 1});
  ASSERT_FALSE(as_written.no_answer);
  EXPECT_EQ(found[as_written.citations[0].segment].segment_id, 1);
  // Without the alternate, "deep" alone is too little of the question.
  auto without = found;
  without[0].heard.clear();
  auto a = answer_question(plain_terms({"moat", "deep"}), without, coll(40, 5), {10, 1});
  EXPECT_TRUE(a.no_answer);
  EXPECT_LT(a.confidence, as_written.confidence);
}

TEST(AnswerQuestion, VariantsCountByTheirOwnRarityAndFactor) {
  // "coral" never written; "carl" (a sound-alike) is rare and in segment 1,
  // "reef" a synonym-ish variant of nothing. The variant brings segment 1.
  std::vector<AskSegment> found = {
      seg(1, 1, 10, "Carl reefs grow slowly.", {"carl", "reef", "grow", "slowli"}),
      seg(2, 1, 80, "Trees grow slowly.", {"tree", "grow", "slowli"}),
  };
  std::vector<QueryTerm> q = {{"coral", {{"carl", 0.6, Match::sound_alike}}}, {"grow", {}}};
  auto a = answer_question(q, found, coll(40, 5), {10, 1});
  ASSERT_FALSE(a.citations.empty());
  EXPECT_EQ(found[a.citations[0].segment].segment_id, 1);
  // The same question without the variant scores segment 1 no higher than 2.
  std::vector<QueryTerm> plain = {{"coral", {}}, {"grow", {}}};
  auto b = answer_question(plain, found, coll(40, 5), {10, 1});
  EXPECT_LT(b.confidence, a.confidence);
  // A variant as common as every segment adds (almost) nothing.
  Collection common = coll(40, 5);
  common.document_frequency = {{"carl", 39}};
  auto c = answer_question(q, found, common, {10, 1});
  EXPECT_LT(c.confidence, a.confidence);
  EXPECT_STREQ(match_name(Match::meaning_alike), "meaning_alike");
}

}  // namespace
}  // namespace scribe::enrichment
