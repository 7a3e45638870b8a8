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

// What the API stores for an Idempotency-Key replay of a saved answer
// (api/idempotency.h) is written in the entry's transaction, naming the
// entry's stream; redacting the entry, by DELETE or with the transcription,
// redacts that copy too.
TEST_F(AskCommands, StoredRepliesQuotingAnEntryAreRedactedWithIt) {
  auto conn = connect();
  auto c = testing::completed_transcription(*conn);
  const std::string marker = "xylobees" + unique("x");
  const std::string principal = "test:" + unique("p");
  auto stored_with = [&](const std::string& key) {
    return [&, key](pqxx::work& txn, const RecordedAsk& r) {
      const Json body = {{"answer", marker + " [1]"},
                         {"no_answer", false},
                         {"citations", Json::array({{{"marker", 1}, {"quote", marker}}})},
                         {"qna_id", r.qna_id},
                         {"remaining_per_day", *r.remaining.per_day},
                         {"model", "extractive-bm25"}};
      txn.exec_params(
          "insert into idempotency_keys(principal, key, method, path, body_hash, completed_at, response_status, "
          "response_headers, response_body, reveals) values ($1, $2, 'POST', '/api/v1/ask', 'h', now(), 200, "
          "'{}'::jsonb, $3, $4)",
          principal, key, body.dump(), ask::entry_stream_id(r.qna_id));
    };
  };
  auto body_of = [&](const std::string& key) {
    pqxx::nontransaction txn(*conn);
    return Json::parse(txn.exec_params1("select response_body from idempotency_keys where principal = $1 and key = $2",
                                        principal, key)[0]
                           .c_str());
  };
  const auto deleted = record_answer(store(), *conn, c.caller, entry(std::nullopt, "Deleted?"), stored_with("a"));
  const auto about = record_answer(store(), *conn, c.caller, entry(c.id, "About?"), stored_with("b"));
  auto quoting = entry(std::nullopt, "Quoting?");
  quoting.citations[0]["transcription_id"] = c.id;
  const auto quotes = record_answer(store(), *conn, c.caller, quoting, stored_with("c"));
  const auto kept = record_answer(store(), *conn, c.caller, entry(std::nullopt, "Kept?"), stored_with("d"));
  for (const char* k : {"a", "b", "c", "d"}) EXPECT_EQ(body_of(k).at("answer"), marker + " [1]") << k;

  redact_answer(store(), *conn, c.caller, deleted.qna_id, std::nullopt);
  remove(store(), *conn, c.caller, c.id);
  for (const auto& [k, r] : {std::pair{"a", deleted}, std::pair{"b", about}, std::pair{"c", quotes}}) {
    const Json b = body_of(k);
    EXPECT_EQ(b.dump().find(marker), std::string::npos) << k << ": " << b.dump();
    EXPECT_EQ(b.at("redacted"), true) << k;
    EXPECT_EQ(b.at("qna_id"), r.qna_id) << k;
    EXPECT_EQ(b.at("remaining_per_day"), *r.remaining.per_day) << k;
  }
  EXPECT_EQ(body_of("d").at("answer"), marker + " [1]");  // an entry neither deleted nor quoting it
  EXPECT_EQ(kept.qna_id, body_of("d").at("qna_id"));
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
  // Its entries were redacted with it: DELETE answers as for a repeat, with
  // no new event, and still only for the caller.
  redact_answer(store(), *conn, c.caller, recorded.qna_id, c.id);
  redact_answer(store(), *conn, c.caller, library.qna_id, std::nullopt);
  EXPECT_EQ(scalar(*conn, "select count(*) from events where stream_id = $1 and type = 'QuestionRedacted'",
                   ask::entry_stream_id(recorded.qna_id)),
            0);
  Caller stranger = c.caller;
  stranger.account_id = open_account(store(), *conn, unique("stranger") + "@example.com", plans::Tier::Free, {"t", ""});
  EXPECT_EQ(code_of([&] { redact_answer(store(), *conn, stranger, recorded.qna_id, c.id); }), "not_found");
  EXPECT_EQ(code_of([&] { redact_answer(store(), *conn, stranger, library.qna_id, std::nullopt); }), "not_found");
  EXPECT_EQ(code_of([&] { redact_answer(store(), *conn, c.caller, kept.qna_id, c.id); }), "not_found");
  EXPECT_EQ(scalar(*conn, "select count(*) from asks where id = $1::bigint", std::to_string(recorded.qna_id)), 0);
  EXPECT_EQ(scalar(*conn, "select count(*) from events where data::text like '%' || $1 || '%'", marker), 0);
  // All three still counted.
  EXPECT_EQ(
      scalar(*conn, "select count(*) from events where stream_id = $1", ask::allowance_stream_id(c.caller.account_id)),
      3);
}

}  // namespace
}  // namespace scribe::commands
