// The clip commands against a real PostgreSQL: holds placed, settled and
// released exactly once (also when two workers report one clip, and under 16
// concurrent requests at the in-progress limit), the nonce, the checks that
// need the transcription and its words, and the deletion of the transcription.
#include "commands/clip_commands.h"

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

class ClipCommands : public testing::PgTest {
 protected:
  static clip::Request request(int64_t tid, double start = 6, double end = 18) {
    clip::Request r;
    r.transcription_id = tid;
    r.start_seconds = start;
    r.end_seconds = end;
    return r;
  }
  static int64_t scalar(pqxx::connection& conn, const std::string& sql, const std::string& arg) {
    pqxx::nontransaction txn(conn);
    return txn.exec_params1(sql, arg)[0].as<int64_t>();
  }
  static int64_t balance(pqxx::connection& conn, int64_t account_id) {
    pqxx::read_transaction txn(conn);
    return load_account(txn, account_id).balance;
  }
  static int64_t available(pqxx::connection& conn, int64_t account_id) {
    pqxx::read_transaction txn(conn);
    return load_account(txn, account_id).available();
  }
  static int64_t hold_events(pqxx::connection& conn, const std::string& type, int64_t clip_id) {
    pqxx::nontransaction txn(conn);
    return txn
        .exec_params1("select count(*) from events where type = $1 and data->>'hold_id' = $2", type,
                      clip::hold_id(clip_id))[0]
        .as<int64_t>();
  }
  static clip::Rendered rendered(int64_t tid, int64_t clip_id) {
    return {12.0, clip::file_key(tid, clip_id, "clip.mp4"), "clip.mp4", "video/mp4",
            100,  clip::file_key(tid, clip_id, "clip.srt")};
  }
};

TEST_F(ClipCommands, CompletionSettlesTheHoldOnceWhoeverReportsIt) {
  auto conn = connect();
  auto c = testing::completed_transcription(*conn);
  const int64_t before = balance(*conn, c.caller.account_id);
  auto created = create_clip(store(), *conn, c.caller, request(c.id), false);
  EXPECT_EQ(created.charge, 50'000);
  EXPECT_FALSE(created.repeated);
  EXPECT_EQ(available(*conn, c.caller.account_id), before - 50'000);
  EXPECT_EQ(scalar(*conn, "select count(*) from clips where id = $1::bigint and status = 'queued'",
                   std::to_string(created.clip_id)),
            1);
  Meta meta{"worker:test", ""};
  EXPECT_TRUE(complete_clip(store(), *conn, created.clip_id, rendered(c.id, created.clip_id), meta));
  // A second worker that rendered it too, or one that failed it late, changes nothing.
  EXPECT_FALSE(complete_clip(store(), *conn, created.clip_id, rendered(c.id, created.clip_id), meta));
  EXPECT_FALSE(fail_clip(store(), *conn, created.clip_id, "render_failed", "late", meta));
  EXPECT_EQ(balance(*conn, c.caller.account_id), before - 50'000);
  EXPECT_EQ(available(*conn, c.caller.account_id), before - 50'000);
  EXPECT_EQ(hold_events(*conn, events::kWalletHoldSettled, created.clip_id), 1);
  EXPECT_EQ(hold_events(*conn, events::kWalletHoldReleased, created.clip_id), 0);
  pqxx::nontransaction txn(*conn);
  auto view =
      Json::parse(txn.exec_params1("select view::text from clips where id = $1", created.clip_id)[0].as<std::string>());
  EXPECT_EQ(view.at("status"), "completed");
  EXPECT_EQ(view.at("charge_micros"), 50'000);
}

TEST_F(ClipCommands, FailureReleasesTheHold) {
  auto conn = connect();
  auto c = testing::completed_transcription(*conn);
  const int64_t before = balance(*conn, c.caller.account_id);
  auto created = create_clip(store(), *conn, c.caller, request(c.id), false);
  Meta meta{"worker:test", ""};
  EXPECT_TRUE(fail_clip(store(), *conn, created.clip_id, "render_failed", "ffmpeg exited 1", meta));
  EXPECT_FALSE(complete_clip(store(), *conn, created.clip_id, rendered(c.id, created.clip_id), meta));
  EXPECT_EQ(balance(*conn, c.caller.account_id), before);
  EXPECT_EQ(available(*conn, c.caller.account_id), before);
  EXPECT_EQ(hold_events(*conn, events::kWalletHoldReleased, created.clip_id), 1);
  EXPECT_EQ(hold_events(*conn, events::kWalletHoldSettled, created.clip_id), 0);
}

TEST_F(ClipCommands, SixteenConcurrentRequestsAtTheLimitLetExactlyTenIn) {
  auto conn = connect();
  auto c = testing::completed_transcription(*conn);
  std::atomic<int> ok{0}, limited{0}, other{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 16; ++i)
    threads.emplace_back([&] {
      auto own = connect();
      Json extras;
      auto code = code_of([&] { create_clip(store(), *own, c.caller, request(c.id), false); }, &extras);
      if (code.empty()) ++ok;
      else if (code == "rate_limited" && extras.value("reason", "") == "clips_in_progress") ++limited;
      else ++other;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok, 10);
  EXPECT_EQ(limited, 6);
  EXPECT_EQ(other, 0);
  EXPECT_EQ(scalar(*conn,
                   "select count(*) from events where stream_id = $1 and type = 'WalletHoldPlaced' "
                   "and data->>'purpose' = 'clip'",
                   account::stream_id(c.caller.account_id)),
            10);
  EXPECT_EQ(
      scalar(*conn, "select count(*) from clips where account_id = $1::bigint", std::to_string(c.caller.account_id)),
      10);
}

TEST_F(ClipCommands, ANonceNamesTheFirstClipAndHoldsOnce) {
  auto conn = connect();
  auto c = testing::completed_transcription(*conn);
  auto r = request(c.id);
  r.client_nonce = "0f8fad5b-d9cb-469f-a165-70867728950e";
  auto first = create_clip(store(), *conn, c.caller, r, false);
  r.end_seconds = 30;  // another range: still the first clip
  auto again = create_clip(store(), *conn, c.caller, r, false);
  EXPECT_EQ(again.clip_id, first.clip_id);
  EXPECT_TRUE(again.repeated);
  EXPECT_EQ(scalar(*conn,
                   "select count(*) from events where stream_id = $1 and type = 'WalletHoldPlaced' "
                   "and data->>'purpose' = 'clip'",
                   account::stream_id(c.caller.account_id)),
            1);
}

TEST_F(ClipCommands, ChecksThatNeedTheTranscriptionComeBeforeAnyHold) {
  auto conn = connect();
  auto c = testing::completed_transcription(*conn);
  const int64_t before = available(*conn, c.caller.account_id);
  Json extras;
  // Past the end of the 120 s recording.
  EXPECT_EQ(code_of([&] { create_clip(store(), *conn, c.caller, request(c.id, 115, 125), false); }), "invalid_request");
  // The ceiling below the charge.
  auto r = request(c.id);
  r.max_charge = 49'999;
  EXPECT_EQ(code_of([&] { create_clip(store(), *conn, c.caller, r, false); }, &extras), "max_charge_exceeded");
  // Another account's transcription.
  auto other = testing::completed_transcription(*conn);
  EXPECT_EQ(code_of([&] { create_clip(store(), *conn, other.caller, request(c.id), false); }), "not_found");
  // The quote prices without holding.
  EXPECT_EQ(quote_clip(*conn, c.caller, request(c.id), false), 50'000);
  EXPECT_EQ(available(*conn, c.caller.account_id), before);
  EXPECT_EQ(scalar(*conn, "select count(*) from clips where transcription_id = $1::bigint", std::to_string(c.id)), 0);
}

TEST_F(ClipCommands, NoWordsInTheRangeIsRefused) {
  auto conn = connect();
  auto c = testing::completed_transcription(*conn);
  {
    // A stretch without words (the fixture speaks throughout): 30-42 s. The
    // words come back at the end, so rebuilt projections still equal these.
    pqxx::work txn(*conn);
    txn.exec_params(
        "create temp table saved_words as select * from words where transcription_id = $1 "
        "and start_ms >= 30000 and end_ms <= 42000",
        c.id);
    txn.exec_params("delete from words where transcription_id = $1 and start_ms >= 30000 and end_ms <= 42000", c.id);
    txn.commit();
  }
  struct Restore {
    pqxx::connection& conn;
    ~Restore() {
      pqxx::work txn(conn);
      txn.exec("insert into words select * from saved_words");
      txn.exec("drop table saved_words");
      txn.commit();
    }
  } restore{*conn};
  Json extras;
  EXPECT_EQ(code_of([&] { create_clip(store(), *conn, c.caller, request(c.id, 31, 41), false); }, &extras),
            "invalid_request");
  EXPECT_EQ(extras.value("reason", ""), "no_words_in_range");
  // A word whose midpoint is inside counts, however little of it is.
  EXPECT_EQ(code_of([&] { create_clip(store(), *conn, c.caller, request(c.id, 28, 31), false); }), "");
}

TEST_F(ClipCommands, DeletingTheTranscriptionFailsQueuedClipsAndReleasesTheirHolds) {
  auto conn = connect();
  auto c = testing::completed_transcription(*conn);
  const int64_t before = balance(*conn, c.caller.account_id);
  auto queued = create_clip(store(), *conn, c.caller, request(c.id), false);
  auto done = create_clip(store(), *conn, c.caller, request(c.id, 30, 40), false);
  Meta meta{"worker:test", ""};
  ASSERT_TRUE(complete_clip(store(), *conn, done.clip_id, rendered(c.id, done.clip_id), meta));
  remove(store(), *conn, c.caller, c.id);
  EXPECT_EQ(hold_events(*conn, events::kWalletHoldReleased, queued.clip_id), 1);
  EXPECT_EQ(hold_events(*conn, events::kWalletHoldSettled, done.clip_id), 1);
  EXPECT_EQ(balance(*conn, c.caller.account_id), before - 50'000);
  EXPECT_EQ(available(*conn, c.caller.account_id), before - 50'000);
  EXPECT_EQ(scalar(*conn, "select count(*) from clips where transcription_id = $1::bigint", std::to_string(c.id)), 0);
  // The worker that later reports the queued clip records nothing.
  EXPECT_FALSE(complete_clip(store(), *conn, queued.clip_id, rendered(c.id, queued.clip_id), meta));
  // The clips' streams keep ids and billing facts only.
  EXPECT_EQ(
      scalar(*conn, "select count(*) from events where stream_id = $1 and (data ? 'start_seconds' or data ? 'clip')",
             clip::stream_id(queued.clip_id)),
      0);
}

}  // namespace
}  // namespace scribe::commands
