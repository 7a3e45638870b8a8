#include "workers/media_renditions.h"

#include "commands/transcription_commands.h"
#include "domain/pricing.h"
#include "tests/pg_fixture.h"

namespace scribe::workers::renditions {
namespace {

using namespace std::chrono_literals;

// The rendition queue on a real PostgreSQL: one decision per source, claims
// that skip held leases and deleted transcriptions, outcomes recorded only by
// the lease's owner, and the sweep of rows whose transcription is gone.
class MediaRenditions : public testing::PgTest {
 protected:
  void SetUp() override {
    auto conn = connect();
    pqxx::work txn(*conn);
    txn.exec("delete from media_renditions");  // this suite's table alone
    txn.commit();
  }
  static int64_t transcription() {
    auto conn = connect();
    commands::Meta meta{"test", ""};
    const int64_t acc =
        commands::open_account(store(), *conn, unique("rend") + "@example.com", plans::Tier::Free, meta);
    commands::deposit(store(), *conn, acc, pricing::quote(60, plans::Tier::Free).charge + 1'000'000, "test", meta);
    transcription::Request r;
    r.source = "external_url";
    r.url = "https://media.example.com/talk.mp3";
    r.duration_seconds = 60;
    return commands::create(store(), *conn, commands::Caller{acc, std::nullopt, std::nullopt, meta}, r)
        .transcription_id;
  }
  static Row row(int64_t tid, const std::string& source, const char* state) {
    Row r;
    r.transcription_id = tid;
    r.source = source;
    r.state = state;
    r.kind = "video";
    r.content_type = state == std::string(kOriginal) ? "video/webm" : "video/mp4";
    r.duration_seconds = 12.5;
    return r;
  }
};

TEST_F(MediaRenditions, TheFirstDecisionStands) {
  auto conn = connect();
  const int64_t tid = transcription();
  EXPECT_FALSE(load(*conn, tid, "upload").has_value());
  decide(*conn, row(tid, "upload", kOriginal));
  decide(*conn, row(tid, "upload", kQueued));  // a concurrent probe's, later
  auto got = load(*conn, tid, "upload");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->state, kOriginal);
  EXPECT_EQ(got->content_type, "video/webm");
  EXPECT_EQ(got->kind, "video");
  ASSERT_TRUE(got->duration_seconds.has_value());
  EXPECT_DOUBLE_EQ(*got->duration_seconds, 12.5);
  // Nothing to claim: a source played as it is needs no rendition.
  EXPECT_FALSE(claim(*conn, "w1", 60s).has_value());
  forget(*conn, tid, "upload");
  EXPECT_FALSE(load(*conn, tid, "upload").has_value());
}

TEST_F(MediaRenditions, ALeaseIsHeldByOneWorkerAndOnlyItRecordsTheOutcome) {
  auto conn = connect();
  const int64_t tid = transcription();
  decide(*conn, row(tid, "video", kQueued));
  auto first = claim(*conn, "w1", 60s);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->transcription_id, tid);
  EXPECT_EQ(first->source, "video");
  EXPECT_EQ(first->claims, 1);
  EXPECT_FALSE(claim(*conn, "w2", 60s).has_value());  // held
  EXPECT_TRUE(renew(*conn, tid, "video", "w1", 60s));
  EXPECT_FALSE(renew(*conn, tid, "video", "w2", 60s));
  EXPECT_FALSE(finish(*conn, tid, "video", "w2", kReady, "video/mp4", std::nullopt));

  // Handed back on shutdown: claimable at once, and the claim is not counted.
  release(*conn, tid, "video", "w1");
  auto second = claim(*conn, "w2", 60s);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->claims, 1);
  EXPECT_FALSE(finish(*conn, tid, "video", "w1", kReady, "video/mp4", std::nullopt));  // not w1's any more
  EXPECT_TRUE(finish(*conn, tid, "video", "w2", kReady, "video/mp4", std::nullopt));
  EXPECT_EQ(load(*conn, tid, "video")->state, kReady);
  EXPECT_FALSE(renew(*conn, tid, "video", "w2", 60s));  // not queued any more
  EXPECT_FALSE(claim(*conn, "w3", 60s).has_value());
}

TEST_F(MediaRenditions, AnExpiredLeaseIsClaimedAgainAndCounted) {
  auto conn = connect();
  const int64_t tid = transcription();
  decide(*conn, row(tid, "audio", kQueued));
  ASSERT_TRUE(claim(*conn, "w1", 0s).has_value());  // a lease that runs out at once
  {
    pqxx::work txn(*conn);
    txn.exec("update media_renditions set lease_until = now() - interval '1 second'");
    txn.commit();
  }
  auto again = claim(*conn, "w2", 60s);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->claims, 2);
  EXPECT_TRUE(finish(*conn, tid, "audio", "w2", kFailed, "audio/mp4", std::string("ffmpeg failed")));
  auto got = load(*conn, tid, "audio");
  EXPECT_EQ(got->state, kFailed);
  EXPECT_EQ(got->error.value_or(""), "ffmpeg failed");
}

TEST_F(MediaRenditions, RowsOfDeletedTranscriptionsAreNeverClaimedAndAreSwept) {
  auto conn = connect();
  const int64_t gone = 9'000'000'000 + (std::hash<std::string>{}(unique("gone")) % 1'000'000);
  decide(*conn, row(gone, "upload", kQueued));
  EXPECT_FALSE(claim(*conn, "w1", 60s).has_value());
  const int64_t tid = transcription();
  decide(*conn, row(tid, "upload", kQueued));
  auto claimed = claim(*conn, "w1", 60s);
  ASSERT_TRUE(claimed.has_value());
  EXPECT_EQ(claimed->transcription_id, tid);
  EXPECT_EQ(sweep_deleted(*conn), 1);
  EXPECT_FALSE(load(*conn, gone, "upload").has_value());
  EXPECT_TRUE(load(*conn, tid, "upload").has_value());
}

}  // namespace
}  // namespace scribe::workers::renditions
