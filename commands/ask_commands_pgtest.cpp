// The ask commands against a real PostgreSQL: the allowance decided on the
// account's ask stream (also under 20 concurrent asks at an account with 3
// left), the entry's projection row, redaction of the entry's stream, and
// the deletion of the transcription asked about.
#include "commands/ask_commands.h"

#include <atomic>
#include <thread>

#include "common/error.h"
#include "domain/events.h"
#include "tests/completed_transcription.h"
#include "tests/pg_fixture.h"
#include "tests/error_of.h"

namespace scribe::commands {
namespace {

using testing::code_of;

class AskCommands : public testing::PgTest {
 protected:
  static ask::Entry entry(std::optional<int64_t> about, const std::string& question) {
    ask::Entry e;
    e.transcription_id = about;
    e.question = question;
    e.answer = "Bees are calmed with smoke [1]";
    e.citations = Json::array({{{"marker", 1}, {"start_ms", 12000}, {"title", "Bees"}, {"quote", "smoke"}}});
    e.model = "extractive-bm25";
    return e;
  }
  static int64_t scalar(pqxx::connection& conn, const std::string& sql, const std::string& arg) {
    pqxx::nontransaction txn(conn);
    return txn.exec_params1(sql, arg)[0].as<int64_t>();
  }
};

TEST_F(AskCommands, AnswersAreCountedSavedAndStopAtThePerTranscriptLimit) {
  auto conn = connect();
  auto c = testing::completed_transcription(*conn);
  for (int i = 0; i < 3; ++i) {
    auto checked = check_ask(*conn, c.caller, c.id);
    EXPECT_EQ(checked.remaining.per_transcript, 2 - i);
    auto recorded = record_answer(store(), *conn, c.caller, entry(c.id, "How are bees calmed " + std::to_string(i)));
    EXPECT_EQ(recorded.remaining.per_transcript, 2 - i);
    EXPECT_EQ(recorded.remaining.per_day, 9 - i);
    EXPECT_GE(recorded.qna_id, 1'000'000'000'000'000);
  }
  Json extras;
  EXPECT_EQ(code_of([&] { check_ask(*conn, c.caller, c.id); }, &extras), "qna_quota_exceeded");
  EXPECT_EQ(extras.at("scope"), "transcript");
  EXPECT_EQ(code_of([&] { record_answer(store(), *conn, c.caller, entry(c.id, "once more")); }), "qna_quota_exceeded");
  EXPECT_EQ(scalar(*conn, "select count(*) from asks where transcription_id = $1::bigint", std::to_string(c.id)), 3);
  EXPECT_EQ(
      scalar(*conn, "select count(*) from events where stream_id = $1", ask::allowance_stream_id(c.caller.account_id)),
      3);
  // Library asks count toward the day only.
  EXPECT_NO_THROW(check_ask(*conn, c.caller, std::nullopt));
}

TEST_F(AskCommands, PaidPlansReadOnlyTheWindowAndCountTheSame) {
  auto conn = connect();
  auto c = testing::completed_transcription(*conn, "real", plans::Tier::Starter);
  for (int i = 0; i < 5; ++i) {
    auto recorded = record_answer(store(), *conn, c.caller, entry(c.id, "starter " + std::to_string(i)));
    EXPECT_EQ(recorded.remaining.per_day, 100 - i - 1);
    EXPECT_FALSE(recorded.remaining.per_transcript.has_value());
  }
  EXPECT_EQ(check_ask(*conn, c.caller, c.id).remaining.per_day, 94);
  // Every QuestionAsked names the first version still inside its window.
  pqxx::nontransaction txn(*conn);
  auto r = txn.exec_params1("select (data->>'window_from')::bigint from events where stream_id = $1 and version = 5",
                            ask::allowance_stream_id(c.caller.account_id));
  EXPECT_EQ(r[0].as<int64_t>(), 1);
}

TEST_F(AskCommands, TwentyConcurrentAsksWithThreeLeftSucceedExactlyThreeTimes) {
  auto conn = connect();
  auto c = testing::completed_transcription(*conn);
  for (int i = 0; i < 7; ++i)
    record_answer(store(), *conn, c.caller, entry(std::nullopt, "library " + std::to_string(i)));
  std::atomic<int> ok{0}, limited{0}, other{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 20; ++i)
    threads.emplace_back([&, i] {
      auto mine = connect();
      try {
        record_answer(store(), *mine, c.caller, entry(std::nullopt, "concurrent " + std::to_string(i)));
        ++ok;
      } catch (const Error& e) {
        (e.code() == "qna_quota_exceeded" && e.extras().value("scope", "") == "day" ? limited : other)++;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 3);
  EXPECT_EQ(limited.load(), 17);
  EXPECT_EQ(other.load(), 0);
  EXPECT_EQ(scalar(*conn, "select count(*) from events where stream_id = $1 and type = 'QuestionAsked'",
                   ask::allowance_stream_id(c.caller.account_id)),
            10);
  EXPECT_EQ(
      scalar(*conn, "select count(*) from asks where account_id = $1::bigint", std::to_string(c.caller.account_id)),
      10);
}

TEST_F(AskCommands, RedactionRemovesTheTextButKeepsTheCount) {
  auto conn = connect();
  auto c = testing::completed_transcription(*conn);
  auto recorded = record_answer(store(), *conn, c.caller, entry(c.id, "What calms the zanzibarbees?"));
  // The wrong route (library) and the wrong transcription are 404.
  EXPECT_EQ(code_of([&] { redact_answer(store(), *conn, c.caller, recorded.qna_id, std::nullopt); }), "not_found");
  EXPECT_EQ(code_of([&] { redact_answer(store(), *conn, c.caller, recorded.qna_id, c.id + 1); }), "not_found");
  Caller stranger = c.caller;
  stranger.account_id = open_account(store(), *conn, unique("stranger") + "@example.com", plans::Tier::Free, {"t", ""});
  EXPECT_EQ(code_of([&] { redact_answer(store(), *conn, stranger, recorded.qna_id, c.id); }), "not_found");

  redact_answer(store(), *conn, c.caller, recorded.qna_id, c.id);
  redact_answer(store(), *conn, c.caller, recorded.qna_id, c.id);  // the same again, no new event
  const std::string sid = ask::entry_stream_id(recorded.qna_id);
  EXPECT_EQ(scalar(*conn, "select count(*) from events where stream_id = $1", sid), 2);
  EXPECT_EQ(scalar(*conn, "select count(*) from events where stream_id = $1 and data::text like '%zanzibarbees%'", sid),
            0);
  EXPECT_EQ(scalar(*conn, "select count(*) from events where data::text like '%' || $1 || '%'", "zanzibarbees"), 0);
  EXPECT_EQ(scalar(*conn, "select count(*) from asks where id = $1::bigint", std::to_string(recorded.qna_id)), 0);
  EXPECT_EQ(check_ask(*conn, c.caller, c.id).remaining.per_transcript, 1);
}

TEST_F(AskCommands, SystemQnaIsForbiddenAndUnknownIdsAreNotFound) {
  auto conn = connect();
  auto c = testing::completed_transcription(*conn);
  ASSERT_FALSE(c.enrichment.qna.empty());
  EXPECT_EQ(code_of([&] { redact_answer(store(), *conn, c.caller, c.id * 100, c.id); }), "forbidden");
  EXPECT_EQ(code_of([&] { redact_answer(store(), *conn, c.caller, c.id * 100, std::nullopt); }), "forbidden");
  EXPECT_EQ(code_of([&] { redact_answer(store(), *conn, c.caller, c.id * 100 + 99, c.id); }), "not_found");
  EXPECT_EQ(code_of([&] { redact_answer(store(), *conn, c.caller, 1'000'000'000'999'999, c.id); }), "not_found");
}

TEST_F(AskCommands, AskingNeedsACompletedTranscriptionOfYourOwn) {
  auto conn = connect();
  auto c = testing::completed_transcription(*conn);
  Caller stranger = c.caller;
  stranger.account_id = open_account(store(), *conn, unique("other") + "@example.com", plans::Tier::Free, {"t", ""});
  EXPECT_EQ(code_of([&] { check_ask(*conn, stranger, c.id); }), "not_found");
  transcription::Request r;
  r.source = "upload";
  r.upload_id = "upl_" + unique("p");
  r.duration_seconds = 30;
  const int64_t processing = create(store(), *conn, c.caller, r).transcription_id;
  EXPECT_EQ(code_of([&] { check_ask(*conn, c.caller, processing); }), "not_ready");
  EXPECT_EQ(code_of([&] { record_answer(store(), *conn, c.caller, entry(processing, "early")); }), "not_ready");
}

TEST_F(AskCommands, DeletingTheTranscriptionRedactsWhatWasAskedAboutIt) {
  auto conn = connect();
  auto c = testing::completed_transcription(*conn);
  // A word no other run of this test leaves in the shared database.
  const std::string marker = "quetzalhives" + unique("q");
  auto recorded = record_answer(store(), *conn, c.caller, entry(c.id, "Where do " + marker + " grow?"));
  // A library entry quoting it goes too; one citing something else stays.
  auto quoting = entry(std::nullopt, "Which library entry mentions " + marker + "?");
  quoting.citations[0]["transcription_id"] = c.id;
  const auto library = record_answer(store(), *conn, c.caller, quoting);
  auto elsewhere = entry(std::nullopt, "Unrelated library question");
  elsewhere.citations[0].erase("transcription_id");
  const auto kept = record_answer(store(), *conn, c.caller, elsewhere);
  remove(store(), *conn, c.caller, c.id);
  EXPECT_EQ(scalar(*conn, "select count(*) from asks where id = $1::bigint", std::to_string(library.qna_id)), 0);
  EXPECT_EQ(scalar(*conn, "select count(*) from asks where id = $1::bigint", std::to_string(kept.qna_id)), 1);
  // An answer quoting it is refused now (the ask and the deletion take the
  // transcription's lock, so one of them goes first).
  EXPECT_EQ(code_of([&] { record_answer(store(), *conn, c.caller, quoting); }), "not_found");
  // Its entries are not found under it any more.
  EXPECT_EQ(code_of([&] { redact_answer(store(), *conn, c.caller, recorded.qna_id, c.id); }), "not_found");
  EXPECT_EQ(scalar(*conn, "select count(*) from asks where id = $1::bigint", std::to_string(recorded.qna_id)), 0);
  EXPECT_EQ(scalar(*conn, "select count(*) from events where data::text like '%' || $1 || '%'", marker), 0);
  // All three still counted.
  EXPECT_EQ(
      scalar(*conn, "select count(*) from events where stream_id = $1", ask::allowance_stream_id(c.caller.account_id)),
      3);
}

}  // namespace
}  // namespace scribe::commands
