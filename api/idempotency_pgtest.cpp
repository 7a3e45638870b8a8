// Idempotency entries against a real PostgreSQL: purging (entries past their
// 24 h go, younger ones, a request still running included, stay) and the
// fingerprinted claims of bodies streamed to disk.
#include "api/idempotency.h"

#include "tests/pg_fixture.h"

namespace scribe::api {
namespace {

class IdempotencyPurgeTest : public testing::PgTest {
 protected:
  static void insert(pqxx::connection& conn, const std::string& principal, int age_seconds, bool completed) {
    pqxx::nontransaction txn(conn);
    txn.exec_params(
        "insert into idempotency_keys(principal, key, method, path, body_hash, created_at, completed_at) "
        "values ($1, 'k', 'POST', '/api/v1/quotes', 'h', now() - make_interval(secs => $2), "
        "case when $3 then now() end)",
        principal, age_seconds, completed);
  }
  static int64_t count(pqxx::connection& conn, const std::string& principal) {
    pqxx::nontransaction txn(conn);
    return txn.exec_params1("select count(*) from idempotency_keys where principal = $1", principal)[0].as<int64_t>();
  }
};

TEST_F(IdempotencyPurgeTest, PurgesEntriesOlderThanADayAndKeepsTheRest) {
  auto conn = connect();
  const std::string expired_done = unique("idem-expired-done");
  const std::string expired_open = unique("idem-expired-open");
  const std::string fresh_done = unique("idem-fresh-done");
  const std::string fresh_open = unique("idem-fresh-open");
  const std::string almost = unique("idem-almost");
  insert(*conn, expired_done, 24 * 3600 + 60, true);
  insert(*conn, expired_open, 30 * 3600, false);
  insert(*conn, fresh_done, 60, true);
  insert(*conn, fresh_open, 5, false);
  insert(*conn, almost, 24 * 3600 - 60, true);

  int purged = 0;
  for (int n = -1; n != 0;) purged += n = Idempotency::purge_expired(*conn, 1);  // batches of one
  EXPECT_GE(purged, 2);                                                          // other tests' old entries may go too
  EXPECT_EQ(count(*conn, expired_done), 0);
  EXPECT_EQ(count(*conn, expired_open), 0);
  EXPECT_EQ(count(*conn, fresh_done), 1);
  EXPECT_EQ(count(*conn, fresh_open), 1);
  EXPECT_EQ(count(*conn, almost), 1);
  EXPECT_EQ(Idempotency::purge_expired(*conn), 0);
}

// A body that is not in Request::body (the OpenAI route's multipart upload)
// is compared by the caller's fingerprint; forget() deletes a completed entry
// only while it still holds the body the caller saw.
TEST_F(IdempotencyPurgeTest, FingerprintedClaimsReplayAndForgetOnlyWhatWasSeen) {
  auto conn = connect();
  const std::string who = unique("idem-fp");
  const std::string path = "/v1/audio/transcriptions";
  auto first = Idempotency::begin_fingerprinted(*conn, who, "k", "POST", path, "oa1:aaa");
  EXPECT_TRUE(std::holds_alternative<Idempotency::Proceed>(first));
  try {
    Idempotency::begin_fingerprinted(*conn, who, "k", "POST", path, "oa1:aaa");
    ADD_FAILURE() << "a second claim while the first runs";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "not_ready");
  }
  Response stored;
  stored.content_type = "application/x-pointer";
  stored.body = "{\"transcription_id\":7}";
  Idempotency::finish(*conn, who, "k", stored);
  auto again = Idempotency::begin_fingerprinted(*conn, who, "k", "POST", path, "oa1:aaa");
  ASSERT_TRUE(std::holds_alternative<Response>(again));
  EXPECT_EQ(std::get<Response>(again).body, stored.body);
  EXPECT_EQ(std::get<Response>(again).content_type, "application/x-pointer");
  try {
    Idempotency::begin_fingerprinted(*conn, who, "k", "POST", path, "oa1:bbb");
    ADD_FAILURE() << "another fingerprint under the same key";
  } catch (const Error& e) {
    EXPECT_EQ(e.http_status(), 400);
  }
  EXPECT_FALSE(Idempotency::forget(*conn, who, "k", "{\"transcription_id\":8}"));
  EXPECT_TRUE(Idempotency::forget(*conn, who, "k", stored.body));
  EXPECT_EQ(count(*conn, who), 0);
  // A claim in flight is not forgotten, only released.
  EXPECT_TRUE(std::holds_alternative<Idempotency::Proceed>(
      Idempotency::begin_fingerprinted(*conn, who, "k", "POST", path, "oa1:bbb")));
  EXPECT_FALSE(Idempotency::forget(*conn, who, "k", ""));
  Idempotency::release(*conn, who, "k");
  EXPECT_EQ(count(*conn, who), 0);
}

}  // namespace
}  // namespace scribe::api
