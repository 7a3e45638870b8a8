// The realtime session commands against a real PostgreSQL: the start holds
// the cap (reserved against the key's monthly cap) with the live
// transcription in one transaction; the spec's refusals in its order; the
// ticket is single use under concurrent redeems; the end settles the
// persisted seconds and releases the rest exactly once (twice in a row,
// concurrently from two connections, and by the stale sweep); no audio
// cancels the transcription and releases everything; a resume after the end
// is 410; and `scribe audit wallet` finds the account clean.
#include "commands/realtime_commands.h"

#include <cstdio>
#include <sys/wait.h>
#include <thread>

#include "common/object_store.h"
#include "domain/clip.h"
#include "domain/events.h"
#include "domain/pricing.h"
#include "projections/projection.h"
#include "projections/runner.h"
#include "tests/error_of.h"
#include "tests/pg_fixture.h"

namespace scribe::commands {
namespace {

using testing::code_of;

const Meta kMeta{"test", ""};

class RealtimeCommands : public testing::PgTest {
 protected:
  // An account on `plan` with `deposit` micros and a key granted realtime
  // (unless `grant` is false).
  static Caller account(pqxx::connection& conn, plans::Tier plan, money::Micros deposit, bool grant = true,
                        std::optional<money::Micros> key_cap = std::nullopt) {
    Caller c;
    c.account_id = open_account(store(), conn, unique("rt") + "@example.com", plan, kMeta);
    if (deposit > 0) commands::deposit(store(), conn, c.account_id, deposit, "t", kMeta);
    auto key = create_key(store(), conn, c.account_id, "rt", apikey::Permission::Full, key_cap, std::nullopt, kMeta);
    c.key_id = key.key_id;
    c.key_monthly_cap = key_cap;
    c.meta = kMeta;
    if (grant) {
      EXPECT_TRUE(set_realtime_access(store(), conn, c.account_id, key.key_id, true, kMeta));
    }
    return c;
  }
  static money::Micros available(pqxx::connection& conn, int64_t account_id) {
    pqxx::read_transaction txn(conn);
    return load_account(txn, account_id).available();
  }
  static money::Micros balance(pqxx::connection& conn, int64_t account_id) {
    pqxx::read_transaction txn(conn);
    return load_account(txn, account_id).balance;
  }
  static int64_t count(pqxx::connection& conn, const std::string& sql, const std::string& arg) {
    pqxx::nontransaction txn(conn);
    return txn.exec_params1(sql, arg)[0].as<int64_t>();
  }
  static std::string text(pqxx::connection& conn, const std::string& sql, const std::string& arg) {
    pqxx::nontransaction txn(conn);
    return txn.exec_params1(sql, arg)[0].as<std::string>();
  }
  static int64_t hold_events(pqxx::connection& conn, const std::string& type, const std::string& session_id) {
    return count(conn, "select count(*) from events where type = '" + type + "' and data->>'hold_id' = $1",
                 realtime::hold_id(session_id));
  }
  static std::string pcm(int64_t samples) { return std::string(static_cast<std::size_t>(samples) * 2, '\x01'); }
  // Connects the session (redeem + claim) and persists pieces of these sizes.
  static int stream(pqxx::connection& conn, const SessionTicket& t, const std::vector<int64_t>& pieces) {
    auto r = redeem_ticket(conn, t.ticket);
    EXPECT_TRUE(r.session);
    auto gen = claim_connection(conn, t.session_id, "test-owner");
    EXPECT_TRUE(gen);
    int64_t at = 0, seq = 0;
    for (int64_t n : pieces) {
      EXPECT_TRUE(persist_piece(conn, t.session_id, *gen, seq++, at, pcm(n)));
      at += n;
    }
    return *gen;
  }
  static void expect_audit_clean(pqxx::connection& conn, int64_t account_id) {
    auto* ledger = projections::find("wallet_ledger");
    ASSERT_TRUE(ledger);
    for (int i = 0; i < 100; ++i) {
      projections::ProjectionRunner::catch_up(conn, *ledger, 500);
      pqxx::read_transaction txn(conn);
      if (projections::lag(txn, ledger->name()) == 0) break;
    }
    const char* bin = std::getenv("SCRIBE_BIN");
    if (!bin) GTEST_SKIP() << "SCRIBE_BIN is not set";
    const std::string cmd = "SCRIBE_DATABASE_URL='" + testing::database_url() + "' '" + bin +
                            "' audit wallet --account " + std::to_string(account_id) + " 2>&1";
    FILE* p = ::popen(cmd.c_str(), "r");
    ASSERT_TRUE(p);
    std::string out;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    const int status = ::pclose(p);
    EXPECT_EQ(WEXITSTATUS(status), 0) << out;
    EXPECT_NE(out.find("0 difference(s)"), std::string::npos) << out;
  }
};

TEST_F(RealtimeCommands, StartHoldsTheCapAndCreatesALiveTranscriptionWithoutAJob) {
  auto conn = connect();
  auto c = account(*conn, plans::Tier::Free, 10'000'000);
  const auto before = available(*conn, c.account_id);
  auto t = start_session(store(), *conn, c, {{"cap_minutes", 5}}, false);
  EXPECT_TRUE(realtime::is_session_id(t.session_id));
  EXPECT_EQ(t.cap_minutes, 5);
  EXPECT_EQ(t.held, realtime::charge_for_minutes(5));
  EXPECT_FALSE(t.ticket.empty());
  EXPECT_GT(t.ticket_expires_at, now());
  EXPECT_EQ(available(*conn, c.account_id), before - realtime::charge_for_minutes(5));
  EXPECT_EQ(hold_events(*conn, events::kWalletHoldPlaced, t.session_id), 1);
  const std::string tid = std::to_string(t.transcription_id);
  EXPECT_EQ(
      text(*conn, "select status || '/' || stage || '/' || source from transcriptions where id = $1::bigint", tid),
      "processing/live/realtime");
  EXPECT_EQ(count(*conn, "select count(*) from jobs where transcription_id = $1::bigint", tid), 0);
  EXPECT_EQ(text(*conn, "select status from realtime_sessions where id = $1", t.session_id), "live");
  // Only the ticket's hash is stored.
  EXPECT_EQ(count(*conn, "select count(*) from realtime_live where session_id = $1 and ticket_hash is not null",
                  t.session_id),
            1);
  EXPECT_EQ(count(*conn, "select count(*) from realtime_live where encode(ticket_hash, 'escape') = $1", t.ticket), 0);
  // Default and clamp: 60 minutes, 1 USD held.
  auto d = start_session(store(), *conn, c, nullptr, false);
  EXPECT_EQ(d.cap_minutes, 60);
  EXPECT_EQ(d.held, 1'000'000);
}

TEST_F(RealtimeCommands, RefusalsInTheSpecsOrder) {
  auto conn = connect();
  auto off = account(*conn, plans::Tier::Free, 10'000'000, false);
  EXPECT_EQ(code_of([&] {
              start_session(store(), *conn, off, {{"language", "fr"}, {"cap_minutes", 0}}, false);
            }),
            "unsupported_language");
  EXPECT_EQ(code_of([&] { start_session(store(), *conn, off, {{"cap_minutes", 0}}, false); }), "unsupported_pipeline");
  // A console sign-in (no key) follows the account's flag.
  Caller console = off;
  console.key_id.reset();
  EXPECT_EQ(code_of([&] { start_session(store(), *conn, console, nullptr, true); }), "unsupported_pipeline");
  EXPECT_TRUE(set_realtime_access(store(), *conn, off.account_id, std::nullopt, true, kMeta));
  EXPECT_EQ(code_of([&] { start_session(store(), *conn, console, nullptr, false); }), "unsupported_pipeline");
  EXPECT_EQ(start_session(store(), *conn, console, {{"cap_minutes", 2}}, true).cap_minutes, 2);

  auto on = account(*conn, plans::Tier::Free, 10'000'000);
  EXPECT_EQ(code_of([&] { start_session(store(), *conn, on, {{"cap_minutes", 1.5}}, false); }), "invalid_request");

  auto poor = account(*conn, plans::Tier::Free, realtime::charge_for_minutes(1) - 1);
  EXPECT_EQ(code_of([&] { start_session(store(), *conn, poor, nullptr, false); }), "insufficient_funds");
  EXPECT_EQ(count(*conn, "select count(*) from realtime_sessions where account_id = $1::bigint",
                  std::to_string(poor.account_id)),
            0);
  // The wallet covers 3 whole minutes: the cap is clamped to them.
  auto three = account(*conn, plans::Tier::Free, realtime::charge_for_minutes(3) + 10);
  EXPECT_EQ(start_session(store(), *conn, three, nullptr, false).cap_minutes, 3);

  // The full cap is reserved against the key's monthly cap.
  auto capped = account(*conn, plans::Tier::Free, 10'000'000, true, 500'000);
  EXPECT_EQ(code_of([&] { start_session(store(), *conn, capped, nullptr, false); }), "spend_cap_exceeded");
  EXPECT_EQ(start_session(store(), *conn, capped, {{"cap_minutes", 30}}, false).cap_minutes, 30);
  EXPECT_EQ(code_of([&] { start_session(store(), *conn, capped, {{"cap_minutes", 1}}, false); }), "spend_cap_exceeded");
}

TEST_F(RealtimeCommands, SubscriptionsHoldNothingAndLiveSessionsCountAgainstTheConcurrencyCap) {
  auto conn = connect();
  auto c = account(*conn, plans::Tier::Starter, 0);  // one concurrent job
  auto t = start_session(store(), *conn, c, nullptr, false);
  EXPECT_EQ(t.cap_minutes, 60);
  EXPECT_EQ(t.held, 0);
  Json extras;
  EXPECT_EQ(code_of([&] { start_session(store(), *conn, c, nullptr, false); }, &extras), "rate_limited");
  EXPECT_EQ(extras.value("reason", ""), "concurrent_jobs");
  stream(*conn, t, {16000});
  auto end = end_session(store(), *conn, t.session_id, realtime::kReasonTerminated, kMeta);
  EXPECT_TRUE(end.ended_now);
  EXPECT_EQ(end.charge, 0);
  // The ended session's job (its transcription) still counts until it finishes.
  EXPECT_EQ(code_of([&] { start_session(store(), *conn, c, nullptr, false); }), "rate_limited");
}

TEST_F(RealtimeCommands, TicketIsSingleUseUnderConcurrentRedeems) {
  auto conn = connect();
  auto c = account(*conn, plans::Tier::Free, 10'000'000);
  auto t = start_session(store(), *conn, c, {{"cap_minutes", 1}}, false);
  std::atomic<int> won{0}, used{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      auto own = connect();
      auto r = redeem_ticket(*own, t.ticket);
      if (r.session) {
        ++won;
        EXPECT_EQ(r.session->session_id, t.session_id);
        EXPECT_EQ(r.session->transcription_id, t.transcription_id);
        EXPECT_EQ(r.session->cap_minutes, 1);
        EXPECT_FALSE(r.session->resumed);
      } else if (r.refusal == realtime::TicketRefusal::Used) {
        ++used;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(won.load(), 1);
  EXPECT_EQ(used.load(), 3);
  EXPECT_EQ(redeem_ticket(*conn, "not-a-ticket").refusal, realtime::TicketRefusal::Invalid);
  // Expired: a resume's ticket moved past its expiry.
  auto fresh = resume_session(*conn, c, t.session_id, 120);
  {
    pqxx::work txn(*conn);
    txn.exec_params("update realtime_live set ticket_expires_at = now() - interval '1 second' where session_id = $1",
                    t.session_id);
    txn.commit();
  }
  EXPECT_EQ(redeem_ticket(*conn, fresh.ticket).refusal, realtime::TicketRefusal::Expired);
}

TEST_F(RealtimeCommands, ResumeReplacesTheConnectionAndReplaysFinals) {
  auto conn = connect();
  auto c = account(*conn, plans::Tier::Free, 10'000'000);
  auto t = start_session(store(), *conn, c, {{"cap_minutes", 2}}, false);
  const int g1 = stream(*conn, t, {16000});
  EXPECT_TRUE(record_turn(*conn, t.session_id, g1, 1, {{"turn_order", 1}, {"transcript", "one"}}));
  EXPECT_TRUE(record_turn(*conn, t.session_id, g1, 2, {{"turn_order", 2}, {"transcript", "two"}}));
  // Another account: 404.
  auto other = account(*conn, plans::Tier::Free, 10'000'000);
  EXPECT_EQ(code_of([&] { resume_session(*conn, other, t.session_id, 120); }), "not_found");
  auto r = resume_session(*conn, c, t.session_id, 120);
  EXPECT_EQ(r.transcription_id, t.transcription_id);
  auto redeemed = redeem_ticket(*conn, r.ticket);
  ASSERT_TRUE(redeemed.session);
  EXPECT_TRUE(redeemed.session->resumed);
  EXPECT_EQ(redeemed.session->samples_persisted, 16000);
  EXPECT_EQ(redeemed.session->last_turn_order, 2);
  const int g2 = *claim_connection(*conn, t.session_id, "second-process");
  EXPECT_GT(g2, g1);
  // The old connection is superseded: its heartbeat says so and its audio is refused.
  EXPECT_EQ(heartbeat(*conn, t.session_id, g1), Heartbeat::Superseded);
  EXPECT_FALSE(persist_piece(*conn, t.session_id, g1, 1, 16000, pcm(100)));
  EXPECT_EQ(heartbeat(*conn, t.session_id, g2), Heartbeat::Live);
  EXPECT_TRUE(persist_piece(*conn, t.session_id, g2, 1, 16000, pcm(100)));
  EXPECT_FALSE(persist_piece(*conn, t.session_id, g2, 2, 99, pcm(100)));  // not contiguous
  auto replay = turns_after(*conn, t.session_id, 1);
  ASSERT_EQ(replay.size(), 1u);
  EXPECT_EQ(replay[0].at("transcript"), "two");
  // Another account's DELETE: 404.
  EXPECT_EQ(
      code_of([&] { request_end(store(), *conn, t.session_id, other.account_id, realtime::kReasonDeleted, kMeta); }),
      "not_found");
}

TEST_F(RealtimeCommands, EndSettlesThePersistedSecondsOnceAndQueuesTheJob) {
  auto conn = connect();
  auto c = account(*conn, plans::Tier::Free, 10'000'000);
  const auto before = balance(*conn, c.account_id);
  auto t = start_session(store(), *conn, c, {{"cap_minutes", 3}}, false);
  const int gen = stream(*conn, t, {16000, 8000});  // 1.5 s: 2 billed seconds
  EXPECT_EQ(request_end(store(), *conn, t.session_id, c.account_id, realtime::kReasonDeleted, kMeta), "ending");
  EXPECT_EQ(text(*conn, "select status from realtime_sessions where id = $1", t.session_id), "ending");
  EXPECT_EQ(heartbeat(*conn, t.session_id, gen), Heartbeat::EndRequested);
  auto end = end_session(store(), *conn, t.session_id, realtime::kReasonTerminated, kMeta);
  EXPECT_TRUE(end.ended_now);
  EXPECT_EQ(end.reason, realtime::kReasonDeleted);  // the requested end's reason
  EXPECT_EQ(end.samples, 24000);
  EXPECT_EQ(end.billed_seconds, 2);
  EXPECT_EQ(end.charge, pricing::quote(2, plans::Tier::Free).charge);
  EXPECT_EQ(balance(*conn, c.account_id), before - end.charge);
  EXPECT_EQ(available(*conn, c.account_id), before - end.charge);
  // Twice: nothing more.
  auto again = end_session(store(), *conn, t.session_id, realtime::kReasonStale, kMeta);
  EXPECT_FALSE(again.ended_now);
  EXPECT_EQ(again.charge, end.charge);
  EXPECT_EQ(hold_events(*conn, events::kWalletHoldSettled, t.session_id), 1);
  EXPECT_EQ(hold_events(*conn, events::kWalletHoldReleased, t.session_id), 0);
  EXPECT_EQ(balance(*conn, c.account_id), before - end.charge);
  // After the end: no audio, no resume, no heartbeat.
  EXPECT_FALSE(persist_piece(*conn, t.session_id, gen, 2, 24000, pcm(100)));
  EXPECT_EQ(heartbeat(*conn, t.session_id, gen), Heartbeat::Ended);
  EXPECT_EQ(code_of([&] { resume_session(*conn, c, t.session_id, 120); }), "session_ended");
  // The transcription gets the joined recording and a job; the pieces go.
  const std::string tid = std::to_string(t.transcription_id);
  EXPECT_EQ(text(*conn, "select status || '/' || stage from transcriptions where id = $1::bigint", tid),
            "processing/queued");
  EXPECT_EQ(count(*conn, "select count(*) from jobs where transcription_id = $1::bigint", tid), 1);
  auto wav = object_store().get(clip::source_audio_key(t.transcription_id));
  ASSERT_TRUE(wav);
  EXPECT_EQ(wav->size(), 44u + 24000u * 2u);
  EXPECT_EQ(wav->substr(0, 4), "RIFF");
  EXPECT_FALSE(object_store().exists(realtime::piece_key(t.session_id, 0)));
  EXPECT_EQ(text(*conn,
                 "select status || '/' || audio_seconds || '/' || charge_micros from realtime_sessions "
                 "where id = $1",
                 t.session_id),
            "ended/2/" + std::to_string(end.charge));
  // The worker's measurement moves no money for it: already measured, prepaid.
  EXPECT_EQ(measure_attempt(store(), *conn, t.transcription_id, 1, 1.5, kMeta), Measurement::Go);
  EXPECT_TRUE(complete_attempt(store(), *conn, t.transcription_id, 1, Completion{1.5, "en", std::nullopt, {}}, kMeta));
  EXPECT_EQ(balance(*conn, c.account_id), before - end.charge);
  EXPECT_EQ(available(*conn, c.account_id), before - end.charge);
  EXPECT_EQ(text(*conn, "select status || '/' || charge_micros from transcriptions where id = $1::bigint", tid),
            "completed/" + std::to_string(end.charge));
  expect_audit_clean(*conn, c.account_id);
}

TEST_F(RealtimeCommands, ConcurrentEndsFromTwoConnectionsSettleOnce) {
  auto conn = connect();
  auto c = account(*conn, plans::Tier::Free, 10'000'000);
  const auto before = balance(*conn, c.account_id);
  for (int round = 0; round < 3; ++round) {
    auto t = start_session(store(), *conn, c, {{"cap_minutes", 1}}, false);
    stream(*conn, t, {16000 * 3});
    std::atomic<int> ended{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 2; ++i)
      threads.emplace_back([&, i] {
        auto own = connect();
        auto e =
            end_session(store(), *own, t.session_id, i ? realtime::kReasonTerminated : realtime::kReasonStale, kMeta);
        if (e.ended_now) ++ended;
      });
    for (auto& th : threads) th.join();
    EXPECT_EQ(ended.load(), 1);
    EXPECT_EQ(hold_events(*conn, events::kWalletHoldSettled, t.session_id), 1);
    EXPECT_EQ(
        count(*conn, "select count(*) from events where type = 'RealtimeSessionEnded' and data->>'session_id' = $1",
              t.session_id),
        1);
  }
  EXPECT_EQ(balance(*conn, c.account_id), before - 3 * pricing::quote(3, plans::Tier::Free).charge);
  EXPECT_EQ(available(*conn, c.account_id), balance(*conn, c.account_id));
  expect_audit_clean(*conn, c.account_id);
}

TEST_F(RealtimeCommands, StaleSweepEndsAndSettlesOnce) {
  auto conn = connect();
  auto c = account(*conn, plans::Tier::Free, 10'000'000);
  const auto before = balance(*conn, c.account_id);
  auto t = start_session(store(), *conn, c, {{"cap_minutes", 1}}, false);
  stream(*conn, t, {16000});
  // Not stale yet: nothing happens to it.
  end_stale_sessions(store(), *conn, 120, kMeta);
  EXPECT_EQ(text(*conn, "select status from realtime_sessions where id = $1", t.session_id), "live");
  // A server killed mid-session: no heartbeat for the window.
  {
    pqxx::work txn(*conn);
    txn.exec_params("update realtime_live set heartbeat_at = now() - interval '10 minutes' where session_id = $1",
                    t.session_id);
    txn.commit();
  }
  EXPECT_EQ(code_of([&] { resume_session(*conn, c, t.session_id, 120); }), "session_ended");  // 410 stale
  EXPECT_GE(end_stale_sessions(store(), *conn, 120, kMeta), 1);
  EXPECT_EQ(end_stale_sessions(store(), *conn, 120, kMeta), 0);
  EXPECT_EQ(text(*conn, "select end_reason from realtime_sessions where id = $1", t.session_id), "stale");
  EXPECT_EQ(hold_events(*conn, events::kWalletHoldSettled, t.session_id), 1);
  EXPECT_EQ(balance(*conn, c.account_id), before - pricing::quote(1, plans::Tier::Free).charge);
  EXPECT_EQ(available(*conn, c.account_id), balance(*conn, c.account_id));
}

TEST_F(RealtimeCommands, DeleteEndsAtOnceWhatNoConnectionOwns) {
  auto conn = connect();
  auto c = account(*conn, plans::Tier::Free, 10'000'000);
  const auto before = balance(*conn, c.account_id);
  // Never connected: released at once.
  auto t = start_session(store(), *conn, c, {{"cap_minutes", 1}}, false);
  EXPECT_EQ(request_end(store(), *conn, t.session_id, c.account_id, realtime::kReasonDeleted, kMeta), "ending");
  EXPECT_EQ(text(*conn, "select status || '/' || end_reason from realtime_sessions where id = $1", t.session_id),
            "ended/deleted");
  EXPECT_EQ(hold_events(*conn, events::kWalletHoldReleased, t.session_id), 1);
  EXPECT_EQ(request_end(store(), *conn, t.session_id, c.account_id, realtime::kReasonDeleted, kMeta), "ended");
  EXPECT_EQ(redeem_ticket(*conn, t.ticket).refusal, realtime::TicketRefusal::Invalid);
  // Its owner went silent (a killed process): settled at once for its audio.
  auto u = start_session(store(), *conn, c, {{"cap_minutes", 1}}, false);
  stream(*conn, u, {16000 * 2});
  {
    pqxx::work txn(*conn);
    txn.exec_params("update realtime_live set heartbeat_at = now() - interval '1 minute' where session_id = $1",
                    u.session_id);
    txn.commit();
  }
  EXPECT_EQ(request_end(store(), *conn, u.session_id, c.account_id, realtime::kReasonDeleted, kMeta), "ending");
  EXPECT_EQ(text(*conn, "select status from realtime_sessions where id = $1", u.session_id), "ended");
  EXPECT_EQ(hold_events(*conn, events::kWalletHoldSettled, u.session_id), 1);
  EXPECT_EQ(balance(*conn, c.account_id), before - pricing::quote(2, plans::Tier::Free).charge);
  EXPECT_EQ(available(*conn, c.account_id), balance(*conn, c.account_id));
}

TEST_F(RealtimeCommands, NoAudioCancelsTheTranscriptionAndReleasesTheHold) {
  auto conn = connect();
  auto c = account(*conn, plans::Tier::Free, 10'000'000);
  const auto before = balance(*conn, c.account_id);
  auto t = start_session(store(), *conn, c, nullptr, false);
  auto end = end_session(store(), *conn, t.session_id, realtime::kReasonIdle, kMeta);
  EXPECT_TRUE(end.ended_now);
  EXPECT_EQ(end.charge, 0);
  EXPECT_EQ(hold_events(*conn, events::kWalletHoldReleased, t.session_id), 1);
  EXPECT_EQ(hold_events(*conn, events::kWalletHoldSettled, t.session_id), 0);
  EXPECT_EQ(balance(*conn, c.account_id), before);
  EXPECT_EQ(available(*conn, c.account_id), before);
  EXPECT_EQ(text(*conn, "select status from transcriptions where id = $1::bigint", std::to_string(t.transcription_id)),
            "cancelled");
  EXPECT_EQ(
      count(*conn, "select count(*) from jobs where transcription_id = $1::bigint", std::to_string(t.transcription_id)),
      0);
  EXPECT_EQ(code_of([&] { resume_session(*conn, c, t.session_id, 120); }), "session_ended");
  EXPECT_EQ(redeem_ticket(*conn, t.ticket).refusal, realtime::TicketRefusal::Invalid);  // its hash is gone
  expect_audit_clean(*conn, c.account_id);
}

}  // namespace
}  // namespace scribe::commands
