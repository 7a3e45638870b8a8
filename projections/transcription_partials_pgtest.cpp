// The draft text table of running transcriptions: written in order while a
// transcription processes, read after a piece, announced by NOTIFY to any
// process, gone with the transcription (deleted, retried) and swept once it
// has been finished for a while.
#include "projections/transcription_partials.h"

#include <chrono>
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "commands/account_commands.h"
#include "commands/transcription_commands.h"
#include "common/db.h"
#include "domain/pricing.h"
#include "tests/pg_fixture.h"

namespace scribe::projections {
namespace {

using draft::Piece;

class Partials : public testing::PgTest {
 protected:
  // A processing transcription of a new account.
  static std::pair<commands::Caller, int64_t> running(pqxx::connection& conn) {
    commands::Meta meta{"test", ""};
    int64_t acc = commands::open_account(store(), conn, unique("partials") + "@example.com", plans::Tier::Free, meta);
    commands::deposit(store(), conn, acc, 10'000'000, "test", meta);
    commands::Caller caller{acc, std::nullopt, std::nullopt, meta};
    transcription::Request r;
    r.source = "external_url";
    r.url = "https://media.example.com/partials.mp3";
    r.duration_seconds = 60;
    return {caller, commands::create(store(), conn, caller, r).transcription_id};
  }
  static std::vector<Piece> all(pqxx::connection& conn, int64_t id, int after = -1) {
    pqxx::read_transaction txn(conn);
    return partials::read_after(txn, id, after);
  }
  static bool fail(pqxx::connection& conn, int64_t id) {
    return commands::fail_attempt(store(), conn, id, 1, "media_undecodable", "test", {"worker", ""});
  }
};

TEST_F(Partials, PiecesAreReadInOrderAfterAGivenPiece) {
  auto conn = connect();
  auto [caller, id] = running(*conn);
  EXPECT_TRUE(all(*conn, id).empty());
  partials::record(*conn, id, {{0, 0.1, 2.5, "Good evening."}, {1, 3.0, 4.2, ""}, {2, 4.4, 7.0, "Welcome to"}});
  partials::record(*conn, id, {{3, 7.1, 9.0, "the program."}});
  // The piece without text is not stored; the others come back as written.
  EXPECT_EQ(
      all(*conn, id),
      (std::vector<Piece>{{0, 0.1, 2.5, "Good evening."}, {2, 4.4, 7.0, "Welcome to"}, {3, 7.1, 9.0, "the program."}}));
  EXPECT_EQ(all(*conn, id, 0).size(), 2u);
  EXPECT_EQ(all(*conn, id, 2), (std::vector<Piece>{{3, 7.1, 9.0, "the program."}}));
  EXPECT_TRUE(all(*conn, id, 3).empty());
  // Decoded again after a crash: the row is replaced, not doubled.
  partials::record(*conn, id, {{2, 4.4, 7.0, "Welcome to,"}});
  EXPECT_EQ(all(*conn, id, 1).front().text, "Welcome to,");
  EXPECT_EQ(all(*conn, id).size(), 3u);
}

TEST_F(Partials, ARecordIsAnnouncedToListenersWithTheTranscriptionsId) {
  auto conn = connect();
  auto [caller, id] = running(*conn);
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> heard;
  std::atomic<bool> stop{false};
  std::thread listener([&] {
    db::listen_payloads_until(testing::database_url(), partials::kChannel, "test listener", stop,
                              [&](const std::string& payload) {
                                std::lock_guard lock(mu);
                                heard.push_back(payload);
                                cv.notify_all();
                              });
  });
  // LISTEN takes effect once the listener's connection is up: record until heard.
  const std::string mine = std::to_string(id);
  auto has = [&] { return std::find(heard.begin(), heard.end(), mine) != heard.end(); };
  bool got = false;
  for (int i = 0; i < 50 && !got; ++i) {
    partials::record(*conn, id, {{i, 0.0, 1.0, "Hello."}});
    std::unique_lock lock(mu);
    got = cv.wait_for(lock, std::chrono::milliseconds(200), has);
  }
  // A record that writes nothing (no text) announces nothing.
  {
    std::lock_guard lock(mu);
    heard.clear();
  }
  partials::record(*conn, id, {{99, 0.0, 1.0, ""}});
  partials::record(*conn, id, {{100, 0.0, 1.0, "Again."}});
  {
    std::unique_lock lock(mu);
    EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), has));
    EXPECT_EQ(std::count(heard.begin(), heard.end(), mine), 1);
  }
  stop = true;
  listener.join();
  EXPECT_TRUE(got);
}

TEST_F(Partials, NothingIsWrittenOnceTheTranscriptionStopsProcessing) {
  auto conn = connect();
  auto [caller, id] = running(*conn);
  ASSERT_TRUE(fail(*conn, id));
  partials::record(*conn, id, {{0, 0.0, 1.0, "Too late."}});
  EXPECT_TRUE(all(*conn, id).empty());
}

TEST_F(Partials, GoneWithTheTranscriptionDeletedOrRetried) {
  auto conn = connect();
  auto [caller, id] = running(*conn);
  partials::record(*conn, id, {{0, 0.0, 1.0, "First try."}});
  ASSERT_TRUE(fail(*conn, id));
  EXPECT_EQ(all(*conn, id).size(), 1u);  // kept a while after it failed
  commands::retry(store(), *conn, caller, id, std::nullopt);
  EXPECT_TRUE(all(*conn, id).empty());  // the new attempt starts with no draft

  auto [other_caller, other] = running(*conn);
  partials::record(*conn, other, {{0, 0.0, 1.0, "Private words."}});
  commands::remove(store(), *conn, other_caller, other);
  EXPECT_TRUE(all(*conn, other).empty());
}

TEST_F(Partials, SweptOnceFinishedLongEnoughOrOrphaned) {
  auto conn = connect();
  auto [caller, finished] = running(*conn);
  auto [caller2, processing] = running(*conn);
  partials::record(*conn, finished, {{0, 0.0, 1.0, "Done."}});
  partials::record(*conn, processing, {{0, 0.0, 1.0, "Still going."}});
  ASSERT_TRUE(fail(*conn, finished));
  // Rows whose transcription is gone (written before the table had a check).
  const int64_t orphan = 9'000'000'000'000 + (std::chrono::steady_clock::now().time_since_epoch().count() % 1'000'000);
  {
    pqxx::work txn(*conn);
    txn.exec_params("insert into transcription_partials values ($1, 0, 0, 1, 'orphan')", orphan);
    txn.commit();
  }
  partials::sweep(*conn, 3600);
  EXPECT_EQ(all(*conn, finished).size(), 1u);  // finished a moment ago
  EXPECT_TRUE(all(*conn, orphan).empty());
  partials::sweep(*conn, 0);
  EXPECT_TRUE(all(*conn, finished).empty());
  EXPECT_EQ(all(*conn, processing).size(), 1u);  // running: never swept
}

}  // namespace
}  // namespace scribe::projections
