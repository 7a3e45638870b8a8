#include "domain/ask.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "domain/events.h"
#include "tests/error_of.h"

namespace scribe::ask {
namespace {

using testing::error_of;

const TimePoint kT0 = *parse_iso8601("2026-11-26T10:00:00.000Z");

TimePoint at(int seconds) { return kT0 + std::chrono::seconds(seconds); }

// Applies the decision's event, as a successful append would.
void ask_at(State& s, const Allowance& a, int64_t qna_id, std::optional<int64_t> about, TimePoint when) {
  auto e = asked(s, a, 7, qna_id, about, std::nullopt, when);
  s.version += 1;
  apply(s, e.type, e.data, s.version);
}

TEST(AskAllowance, PlansFollowTheSpec) {
  EXPECT_EQ(allowance_of(plans::Tier::Free).per_day, 10);
  EXPECT_EQ(allowance_of(plans::Tier::Free).per_transcript, 3);
  EXPECT_EQ(allowance_of(plans::Tier::Starter).per_day, 100);
  EXPECT_EQ(allowance_of(plans::Tier::Pro).per_day, 200);
  EXPECT_EQ(allowance_of(plans::Tier::Business).per_day, 1000);
  for (auto t : {plans::Tier::Starter, plans::Tier::Pro, plans::Tier::Business, plans::Tier::Enterprise})
    EXPECT_FALSE(allowance_of(t).per_transcript.has_value());
  EXPECT_FALSE(allowance_of(plans::Tier::Enterprise).per_day.has_value());
}

TEST(AskAllowance, ThreePerTranscriptOnFreeThenScopeTranscriptWithoutRetryAfter) {
  State s;
  const auto free = allowance_of(plans::Tier::Free);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(remaining_after(s, free, 5, at(i)).per_transcript, 2 - i);
    ask_at(s, free, 100 + i, 5, at(i));
  }
  const Error e = error_of([&] { check(s, free, 5, at(10)); });
  EXPECT_EQ(e.code(), "qna_quota_exceeded");
  EXPECT_EQ(e.extras().at("scope"), "transcript");
  EXPECT_FALSE(e.extras().contains("retry_after"));
  // Another transcription and library asks still have room; the
  // per-transcript count never resets with time.
  EXPECT_NO_THROW(check(s, free, 6, at(10)));
  EXPECT_NO_THROW(check(s, free, std::nullopt, at(10)));
  EXPECT_THROW(check(s, free, 5, at(3 * 86400)), Error);
}

TEST(AskAllowance, DailyWindowRollsAndRetryAfterIsWhenTheOldestLeaves) {
  State s;
  const auto free = allowance_of(plans::Tier::Free);
  // Ten library asks, one every 100 s.
  for (int i = 0; i < 10; ++i) ask_at(s, free, 100 + i, std::nullopt, at(100 * i));
  EXPECT_EQ(s.asked_since(at(1000) - std::chrono::hours(24)), 10);
  const Error e = error_of([&] { check(s, free, std::nullopt, at(1000)); });
  EXPECT_EQ(e.extras().at("scope"), "day");
  // The first ask (at 0 s) leaves the window at 86400 s.
  EXPECT_EQ(e.extras().at("retry_after").get<int64_t>(), 86400 - 1000);
  EXPECT_THROW(check(s, free, std::nullopt, at(86399)), Error);
  EXPECT_NO_THROW(check(s, free, std::nullopt, at(86400)));
  EXPECT_EQ(remaining_after(s, free, std::nullopt, at(86400)).per_day, 0);
  EXPECT_EQ(remaining_after(s, free, std::nullopt, at(86400 + 100)).per_day, 1);
  // Sub-second remainders round up, so a client never retries too early.
  const Error late = error_of([&] { check(s, free, std::nullopt, at(86399) + std::chrono::milliseconds(500)); });
  EXPECT_EQ(late.extras().at("retry_after").get<int64_t>(), 1);
}

TEST(AskAllowance, WindowFromIsTheOldestAskStillInsideTheWindow) {
  State s;
  const auto pro = allowance_of(plans::Tier::Pro);
  EXPECT_EQ(s.window_from(at(0)), 1);  // nothing asked: the next event
  ask_at(s, pro, 1, std::nullopt, at(0));
  ask_at(s, pro, 2, std::nullopt, at(3600));
  ask_at(s, pro, 3, std::nullopt, at(7200));
  EXPECT_EQ(s.asked[0].version, 1);
  EXPECT_EQ(s.window_from(at(100)), 1);
  EXPECT_EQ(s.window_from(at(86400 + 1)), 2);
  EXPECT_EQ(s.window_from(at(86400 + 7200)), 4);
  // The decision records it for the next reader.
  EXPECT_EQ(asked(s, pro, 7, 4, std::nullopt, std::nullopt, at(86400 + 3601)).data.at("window_from"), 3);
}

TEST(AskAllowance, TranscriptScopeIsCheckedBeforeTheDay) {
  State s;
  const auto free = allowance_of(plans::Tier::Free);
  for (int i = 0; i < 3; ++i) ask_at(s, free, 100 + i, 5, at(i));
  for (int i = 0; i < 7; ++i) ask_at(s, free, 200 + i, std::nullopt, at(10 + i));
  EXPECT_EQ(error_of([&] { check(s, free, 5, at(60)); }).extras().at("scope"), "transcript");
  EXPECT_EQ(error_of([&] { check(s, free, 6, at(60)); }).extras().at("scope"), "day");
}

TEST(AskAllowance, UnlimitedPlansReportNull) {
  State s;
  const auto ent = allowance_of(plans::Tier::Enterprise);
  for (int i = 0; i < 50; ++i) ask_at(s, ent, i + 1, 5, at(i));
  auto r = remaining_after(s, ent, 5, at(60));
  EXPECT_FALSE(r.per_day.has_value());
  EXPECT_FALSE(r.per_transcript.has_value());
  const auto starter = allowance_of(plans::Tier::Starter);
  r = remaining_after(s, starter, 5, at(60));
  EXPECT_EQ(r.per_day, 100 - 50 - 1);
  EXPECT_FALSE(r.per_transcript.has_value());
}

TEST(AskAllowance, FoldKeepsTimeOrderAndCountsOnlyQuestionAsked) {
  std::vector<eventstore::RecordedEvent> events;
  auto push = [&](const char* type, Json data) {
    eventstore::RecordedEvent e;
    e.type = type;
    e.data = std::move(data);
    e.version = static_cast<int64_t>(events.size()) + 1;
    events.push_back(e);
  };
  push(events::kQuestionAsked, {{"qna_id", 2}, {"transcription_id", 5}, {"asked_at", to_iso8601(at(50))}});
  push(events::kQuestionAsked, {{"qna_id", 1}, {"transcription_id", nullptr}, {"asked_at", to_iso8601(at(10))}});
  push("SomethingElse", {{"qna_id", 9}});
  const State s = fold(events);
  ASSERT_EQ(s.asked.size(), 2u);
  EXPECT_EQ(s.asked[0].qna_id, 1);
  EXPECT_EQ(s.asked[1].qna_id, 2);
  EXPECT_EQ(s.version, 3);
  EXPECT_EQ(s.asked_about(5), 1);
  EXPECT_EQ(s.asked_since(at(20)), 1);
}

TEST(AskEntry, RedactionKeepsIdsAndNoText) {
  Entry e;
  e.qna_id = 1'000'000'000'000'001;
  e.account_id = 7;
  e.transcription_id = 5;
  e.question = "What causes tides?";
  e.answer = "The moon pulls the water [1]";
  e.citations = Json::array({{{"marker", 1}, {"quote", "the moon"}}});
  e.model = "extractive-bm25";
  e.asked_at = at(0);
  const auto ev = answered(e);
  const Json kept = redacted_data(ev.data);
  EXPECT_EQ(kept.at("qna_id"), e.qna_id);
  EXPECT_EQ(kept.at("transcription_id"), 5);
  EXPECT_EQ(kept.dump().find("moon"), std::string::npos);
  EXPECT_EQ(kept.dump().find("tides"), std::string::npos);

  std::vector<eventstore::RecordedEvent> stream(2);
  stream[0].type = ev.type, stream[0].data = ev.data, stream[0].version = 1;
  const auto r = redacted(e);
  stream[1].type = r.type, stream[1].data = r.data, stream[1].version = 2;
  auto folded = fold_entry(stream);
  ASSERT_TRUE(folded.has_value());
  EXPECT_TRUE(folded->redacted);
  EXPECT_EQ(folded->version, 2);
  EXPECT_EQ(folded->entry.account_id, 7);
  EXPECT_FALSE(fold_entry({}).has_value());
}

TEST(AskEntry, RedactedAnswerKeepsIdsAndCountersAndNoText) {
  const Json body = {{"answer", "The moon pulls the water. [1]"},
                     {"no_answer", false},
                     {"citations", Json::array({{{"marker", 1}, {"quote", "The moon pulls the water."}}})},
                     {"qna_id", 1'000'000'000'000'001},
                     {"remaining_per_transcript", 2},
                     {"remaining_per_day", nullptr},
                     {"model", "extractive-bm25"},
                     {"note", "the moon again"}};
  const Json r = redacted_answer(body);
  EXPECT_EQ(r.dump().find("moon"), std::string::npos);
  EXPECT_EQ(r.at("answer"), "");
  EXPECT_EQ(r.at("citations"), Json::array());
  EXPECT_EQ(r.at("redacted"), true);
  EXPECT_EQ(r.at("qna_id"), body.at("qna_id"));
  EXPECT_EQ(r.at("remaining_per_transcript"), 2);
  EXPECT_TRUE(r.at("remaining_per_day").is_null());
  EXPECT_EQ(r.at("no_answer"), false);
  EXPECT_FALSE(r.contains("remaining_today"));
  EXPECT_FALSE(r.contains("note"));  // unknown fields may hold text: dropped
  // The library ask's body; and redacting twice changes nothing.
  const Json lib = {
      {"answer", "x [1]"},  {"citations", Json::array()}, {"qna_id", 9}, {"remaining_today", 8}, {"saved", true},
      {"no_answer", false}, {"model", "extractive-bm25"}};
  EXPECT_EQ(redacted_answer(lib).at("saved"), true);
  EXPECT_EQ(redacted_answer(lib).at("remaining_today"), 8);
  EXPECT_EQ(redacted_answer(redacted_answer(lib)), redacted_answer(lib));
}

}  // namespace
}  // namespace scribe::ask
