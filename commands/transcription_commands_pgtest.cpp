#include "commands/transcription_commands.h"

#include <atomic>
#include <thread>

#include "common/error.h"
#include "domain/events.h"
#include "domain/pricing.h"
#include "eventstore/event_store.h"
#include "tests/pg_fixture.h"
#include "tests/error_of.h"

namespace scribe::commands {
namespace {

using testing::code_of;

class TranscriptionCommands : public testing::PgTest {
 protected:
  // A pay-as-you-go account holding `balance` micro-dollars.
  static int64_t account(money::Micros balance) {
    auto conn = connect();
    Meta meta{"test", ""};
    int64_t id = open_account(store(), *conn, unique("tc") + "@example.com", plans::Tier::Free, meta);
    if (balance > 0) deposit(store(), *conn, id, balance, "test", meta);
    return id;
  }
  static transcription::Request request(double seconds) {
    transcription::Request r;
    r.source = "external_url";
    r.url = "https://media.example.com/a.mp3";
    r.duration_seconds = seconds;
    return r;
  }
  static int64_t scalar(pqxx::connection& conn, const std::string& sql) {
    pqxx::nontransaction txn(conn);
    return txn.exec(sql)[0][0].as<int64_t>();
  }
  static int audit(int64_t account_id) {
    std::string cmd = std::string(getenv("SCRIBE_BIN")) + " audit wallet --account " + std::to_string(account_id) +
                      " > /dev/null 2>&1";
    setenv("SCRIBE_DATABASE_URL", testing::database_url().c_str(), 1);
    return std::system(cmd.c_str());
  }
};

TEST_F(TranscriptionCommands, FiftyConcurrentCreatesAgainstAWalletForTenOnlyTenSucceed) {
  const money::Micros per_job = pricing::quote(60, plans::Tier::Free).charge;
  const int64_t acc = account(per_job * 10);
  std::atomic<int> ok{0}, refused{0}, other{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 50; ++i)
    threads.emplace_back([&] {
      auto conn = connect();
      try {
        create(store(), *conn, Caller{acc, std::nullopt, std::nullopt, {"test", ""}}, request(60));
        ++ok;
      } catch (const Error& e) {
        (e.code() == "insufficient_funds" ? refused : other)++;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 10);
  EXPECT_EQ(refused.load(), 40);
  EXPECT_EQ(other.load(), 0);
  auto conn = connect();
  EXPECT_EQ(scalar(*conn, "select count(*) from transcriptions where account_id = " + std::to_string(acc)), 10);
  EXPECT_EQ(scalar(*conn, "select count(*) from jobs where account_id = " + std::to_string(acc)), 10);
  pqxx::read_transaction txn(*conn);
  auto state = load_account(txn, acc);
  EXPECT_EQ(state.open_holds.size(), 10u);
  EXPECT_GE(state.available(), 0);
  EXPECT_EQ(state.available(), 0);
  EXPECT_EQ(audit(acc), 0);
}

TEST_F(TranscriptionCommands, CompletionChargesMeasuredDurationAtMostTheHold) {
  const int64_t acc = account(1'000'000);
  auto conn = connect();
  Caller caller{acc, std::nullopt, std::nullopt, {"test", ""}};
  auto p = create(store(), *conn, caller, request(600));
  Completion done;
  done.duration_seconds = 300;
  EXPECT_TRUE(complete_attempt(store(), *conn, p.transcription_id, 1, done, {"worker", ""}));
  EXPECT_FALSE(complete_attempt(store(), *conn, p.transcription_id, 1, done, {"worker", ""}));  // never twice
  EXPECT_FALSE(fail_attempt(store(), *conn, p.transcription_id, 1, "x", "y", {"worker", ""}));
  pqxx::read_transaction txn(*conn);
  auto state = load_account(txn, acc);
  EXPECT_EQ(state.balance, 1'000'000 - pricing::quote(300, plans::Tier::Free).charge);
  EXPECT_TRUE(state.open_holds.empty());
  txn.commit();
  // A longer measured duration is still capped at the hold.
  auto q = create(store(), *conn, caller, request(60));
  done.duration_seconds = 6000;
  EXPECT_TRUE(complete_attempt(store(), *conn, q.transcription_id, 1, done, {"worker", ""}));
  pqxx::read_transaction txn2(*conn);
  EXPECT_EQ(load_account(txn2, acc).balance,
            1'000'000 - pricing::quote(300, plans::Tier::Free).charge - pricing::quote(60, plans::Tier::Free).charge);
  txn2.commit();
  EXPECT_EQ(audit(acc), 0);
}

TEST_F(TranscriptionCommands, RetryIsANewPaidAttemptOnlyAfterFailure) {
  const int64_t acc = account(1'000'000);
  auto conn = connect();
  Caller caller{acc, std::nullopt, std::nullopt, {"test", ""}};
  auto p = create(store(), *conn, caller, request(600));
  const money::Micros charge = pricing::quote(600, plans::Tier::Free).charge;
  EXPECT_EQ(code_of([&] { retry(store(), *conn, caller, p.transcription_id, std::nullopt); }), "invalid_request");
  EXPECT_TRUE(fail_attempt(store(), *conn, p.transcription_id, 1, "media_undecodable", "bad file", {"worker", ""}));
  EXPECT_EQ(code_of([&] { retry(store(), *conn, caller, p.transcription_id, money::Micros{1}); }),
            "max_charge_exceeded");
  auto r = retry(store(), *conn, caller, p.transcription_id, std::nullopt);
  EXPECT_EQ(r.charge, charge);
  pqxx::read_transaction txn(*conn);
  auto state = load_account(txn, acc);
  EXPECT_EQ(state.balance, 1'000'000 - charge);  // the failed attempt's hold was charged, not refunded
  EXPECT_EQ(state.open_holds.count(transcription::hold_id(p.transcription_id, 2)), 1u);
  txn.commit();
  EXPECT_FALSE(complete_attempt(store(), *conn, p.transcription_id, 1, Completion{}, {"worker", ""}));  // stale attempt
  const Caller stranger{acc + 1000000, {}, {}, {}};
  EXPECT_EQ(code_of([&] { retry(store(), *conn, stranger, p.transcription_id, std::nullopt); }), "not_found");
  EXPECT_EQ(audit(acc), 0);
}

TEST_F(TranscriptionCommands, DeleteReleasesTheHoldAndLeavesNoContentInTheEvents) {
  const int64_t acc = account(1'000'000);
  auto conn = connect();
  Caller caller{acc, std::nullopt, std::nullopt, {"test", ""}};
  auto req = request(120);
  req.client_reference = "secret-reference";
  req.callback_url = "https://hooks.example.com/very-private";
  auto p = create(store(), *conn, caller, req);
  remove(store(), *conn, caller, p.transcription_id);
  EXPECT_EQ(code_of([&] { remove(store(), *conn, caller, p.transcription_id); }), "not_found");
  const std::string id = std::to_string(p.transcription_id);
  EXPECT_EQ(scalar(*conn, "select count(*) from transcriptions where id = " + id), 0);
  EXPECT_EQ(scalar(*conn, "select count(*) from jobs where transcription_id = " + id), 0);
  EXPECT_EQ(scalar(*conn, "select count(*) from events where stream_id = 'transcription-" + id +
                              "' and (data::text like '%secret-reference%' or data::text like '%very-private%' "
                              "or data::text like '%media.example.com%')"),
            0);
  EXPECT_GT(scalar(*conn, "select count(*) from events where stream_id = 'transcription-" + id + "'"), 0);
  pqxx::read_transaction txn(*conn);
  auto state = load_account(txn, acc);
  EXPECT_EQ(state.balance, 1'000'000);
  EXPECT_TRUE(state.open_holds.empty());
  txn.commit();
  EXPECT_EQ(audit(acc), 0);
}

TEST_F(TranscriptionCommands, KeyCapAndPlanLengthAndFairUse) {
  auto conn = connect();
  const int64_t acc = account(100'000'000);
  Meta meta{"test", ""};
  auto key =
      create_key(store(), *conn, acc, "capped", apikey::Permission::Full, money::Micros{200'000}, std::nullopt, meta);
  Caller caller{acc, key.key_id, money::Micros{200'000}, meta};
  create(store(), *conn, caller, request(600));  // 0.1667 USD
  EXPECT_EQ(code_of([&] { create(store(), *conn, caller, request(600)); }), "spend_cap_exceeded");
  // Pay-as-you-go: 90 min.
  EXPECT_EQ(code_of([&] { create(store(), *conn, caller, request(91 * 60)); }), "invalid_request");
  Caller plain{acc, std::nullopt, std::nullopt, meta};
  // Fair use: 60 minutes per rolling 6 h on pay-as-you-go; 10 are used.
  create(store(), *conn, plain, request(50 * 60));
  EXPECT_EQ(code_of([&] { create(store(), *conn, plain, request(60)); }), "rate_limited");
  EXPECT_EQ(audit(acc), 0);
}

}  // namespace
}  // namespace scribe::commands
