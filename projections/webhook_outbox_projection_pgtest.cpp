// The webhook outbox against a real database: which deliveries each event
// owes (registered webhook, per-request callback, event filters, replaced and
// revoked webhooks, deleted transcriptions), that a rebuild writes the same
// rows and keeps every delivery's state, and that the dispatcher drops what a
// replaced webhook was still owed instead of sending it.
#include <thread>

#include "commands/account_commands.h"
#include "commands/transcription_commands.h"
#include "commands/webhook_commands.h"
#include "common/http_client.h"
#include "domain/webhook.h"
#include "workers/webhook_dispatcher.h"
#include "projections/projection.h"
#include "projections/runner.h"
#include "tests/pg_fixture.h"

namespace scribe::projections {
namespace {

using commands::Meta;

class WebhookOutboxTest : public testing::PgTest {
 protected:
  static Projection& outbox() { return *find("webhook_outbox"); }
  static void catch_up(pqxx::connection& conn) {
    for (int i = 0; i < 100; ++i) {
      ProjectionRunner::catch_up(conn, outbox(), 500);
      pqxx::read_transaction txn(conn);
      if (lag(txn, "webhook_outbox") == 0) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    FAIL() << "webhook_outbox did not catch up";
  }
  static std::vector<std::string> rows(pqxx::connection& conn, const std::string& sql) {
    pqxx::read_transaction txn(conn);
    std::vector<std::string> out;
    for (const auto& r : txn.exec(sql)) out.emplace_back(r[0].c_str());
    return out;
  }
  struct Account {
    int64_t id;
    int64_t key_id;
  };
  static Account account(pqxx::connection& conn) {
    Meta meta{"test", ""};
    int64_t id = commands::open_account(store(), conn, unique("outbox") + "@example.com", plans::Tier::Free, meta);
    commands::deposit(store(), conn, id, 5'000'000, "test", meta);
    auto key = commands::create_key(store(), conn, id, "k", apikey::Permission::Full, std::nullopt, std::nullopt, meta);
    return {id, key.key_id};
  }
  static int64_t create(pqxx::connection& conn, const Account& a, std::optional<std::string> callback) {
    transcription::Request r;
    r.source = "external_url";
    r.url = "https://media.example.com/a.mp3";
    r.duration_seconds = 60;
    r.callback_url = std::move(callback);
    return commands::create(store(), conn, commands::Caller{a.id, a.key_id, std::nullopt, {"test", ""}}, r)
        .transcription_id;
  }
};

TEST_F(WebhookOutboxTest, EachEventOwesItsTargetsOneDeliveryAndARebuildChangesNothing) {
  auto conn = connect();
  const Meta meta{"test", ""};
  const Account a = account(*conn);
  const std::string acc = std::to_string(a.id);
  // Completions only, then a callback on one transcription.
  auto hook = commands::register_webhook(store(), *conn, a.id, a.key_id, "https://hooks.example.com/a",
                                         {webhook::kTranscriptionCompleted}, meta);
  const int64_t with_callback = create(*conn, a, "https://cb.example.com/x");
  const int64_t plain = create(*conn, a, std::nullopt);
  const int64_t deleted = create(*conn, a, "https://cb.example.com/gone");
  commands::Completion done;
  done.duration_seconds = 59;
  done.detected_language = "en";
  ASSERT_TRUE(commands::complete_attempt(store(), *conn, with_callback, 1, done, meta));
  ASSERT_TRUE(commands::fail_attempt(store(), *conn, plain, 1, "no_speech", "nothing said", meta));
  ASSERT_TRUE(commands::complete_attempt(store(), *conn, deleted, 1, done, meta));
  const int64_t test_delivery = commands::request_webhook_test(store(), *conn, a.id, a.key_id, meta);
  catch_up(*conn);

  // completed+callback: webhook and callback; failed: filtered out for the
  // webhook, no callback; the test event: the webhook.
  auto deliveries = rows(*conn,
                         "select event || ':' || coalesce(transcription_id::text, '-') || ':' || "
                         "(webhook_id is not null) from webhook_outbox where account_id = " +
                             acc + " order by id");
  ASSERT_EQ(deliveries.size(), 5u) << ::testing::PrintToString(deliveries);
  EXPECT_EQ(deliveries[0], "transcription.completed:" + std::to_string(with_callback) + ":true");
  EXPECT_EQ(deliveries[1], "transcription.completed:" + std::to_string(with_callback) + ":false");
  EXPECT_EQ(deliveries.back(), "webhook.test:-:true");
  // Both targets of one event share its id and body; the delivery ids differ by the target bit.
  auto pair =
      rows(*conn, "select id || '|' || event_id || '|' || md5(body) from webhook_outbox where transcription_id = " +
                      std::to_string(with_callback) + " order by id");
  ASSERT_EQ(pair.size(), 2u);
  EXPECT_EQ(pair[0].substr(pair[0].find('|')), pair[1].substr(pair[1].find('|')));
  const int64_t even = std::stoll(pair[0]);
  EXPECT_EQ(even % 2, 0);
  EXPECT_EQ(std::stoll(pair[1]), even + 1);
  EXPECT_EQ(rows(*conn, "select count(*) from webhook_outbox where id = " + std::to_string(test_delivery))[0], "1");
  auto body = Json::parse(rows(*conn, "select body from webhook_outbox where id = " + std::to_string(even))[0]);
  EXPECT_EQ(body["event"], "transcription.completed");
  EXPECT_EQ(body["id"], "evt_" + std::to_string(even / 2));
  EXPECT_EQ(body["data"]["transcription"]["id"], with_callback);
  EXPECT_EQ(body["data"]["transcription"]["status"], "completed");
  EXPECT_EQ(body["data"]["transcription"]["detected_language"], "en");
  EXPECT_EQ(rows(*conn,
                 "select count(*) from webhook_deliveries d join webhook_outbox o on o.id = d.delivery_id "
                 "where o.account_id = " +
                     acc + " and d.status = 'pending'")[0],
            "5");

  // Deleting a transcription takes its deliveries with it.
  commands::remove(store(), *conn, commands::Caller{a.id, a.key_id, std::nullopt, meta}, deleted);
  catch_up(*conn);
  EXPECT_EQ(rows(*conn, "select count(*) from webhook_outbox where transcription_id = " + std::to_string(deleted))[0],
            "0");
  EXPECT_EQ(rows(*conn,
                 "select count(*) from webhook_outbox_subjects where transcription_id = " + std::to_string(deleted))[0],
            "0");

  // A delivery that was sent keeps its state through a rebuild, which writes
  // the same outbox rows again.
  {
    pqxx::work txn(*conn);
    txn.exec("update webhook_deliveries set status = 'delivered', attempts = 1 where delivery_id = " +
             std::to_string(even));
    txn.commit();
  }
  const std::string all_rows = "select t::text from webhook_outbox t where account_id = " + acc + " order by id";
  auto before = rows(*conn, all_rows);
  auto subjects_before =
      rows(*conn, "select t::text from webhook_outbox_subjects t where account_id = " + acc + " order by 1");
  rebuild(*conn, outbox());
  EXPECT_EQ(rows(*conn, all_rows), before);
  EXPECT_EQ(rows(*conn, "select t::text from webhook_outbox_subjects t where account_id = " + acc + " order by 1"),
            subjects_before);
  EXPECT_EQ(rows(*conn, "select status from webhook_deliveries where delivery_id = " + std::to_string(even))[0],
            "delivered");
  (void)hook;
}

TEST_F(WebhookOutboxTest, AReplacedWebhookIsOwedNothingMore) {
  auto conn = connect();
  const Meta meta{"test", ""};
  const Account a = account(*conn);
  commands::register_webhook(store(), *conn, a.id, a.key_id, "https://old.example.com/h",
                             {webhook::kTranscriptionFailed}, meta);
  const int64_t old_test = commands::request_webhook_test(store(), *conn, a.id, a.key_id, meta);
  auto replacement = commands::register_webhook(store(), *conn, a.id, a.key_id, "https://new.example.com/h",
                                                webhook::subscribable_kinds(), meta);
  const int64_t failed = create(*conn, a, std::nullopt);
  ASSERT_TRUE(commands::fail_attempt(store(), *conn, failed, 1, "no_speech", "nothing said", meta));
  catch_up(*conn);
  // The failure goes to the new webhook only.
  EXPECT_EQ(rows(*conn, "select string_agg(webhook_id::text, ',') from webhook_outbox where transcription_id = " +
                            std::to_string(failed))[0],
            std::to_string(replacement.webhook_id));

  // The old webhook's test delivery is dropped by the dispatcher without a
  // request: its URL does not resolve here, so a send would fail instead.
  workers::DispatcherOptions options;
  HttpClient client(UrlPolicy{}, "service-webhook/1");
  {
    pqxx::work txn(*conn);
    // Only this delivery is due, so deliver_due takes it and nothing of other tests.
    txn.exec(
        "update webhook_deliveries set next_attempt_at = now() + interval '1 hour' where status = 'pending' "
        "and delivery_id <> " +
        std::to_string(old_test));
    txn.commit();
  }
  EXPECT_EQ(workers::WebhookDispatcher::deliver_due(*conn, client, options, 10), 1);
  EXPECT_EQ(rows(*conn,
                 "select status || ':' || coalesce(last_status::text, '-') from webhook_deliveries "
                 "where delivery_id = " +
                     std::to_string(old_test))[0],
            "dropped:-");
  EXPECT_TRUE(commands::revoke_webhook(store(), *conn, a.id, a.key_id, meta));
  EXPECT_FALSE(commands::revoke_webhook(store(), *conn, a.id, a.key_id, meta));
  EXPECT_EQ(rows(*conn, "select count(*) from webhooks where key_id = " + std::to_string(a.key_id) +
                            " and revoked_at is null")[0],
            "0");
}

}  // namespace
}  // namespace scribe::projections
