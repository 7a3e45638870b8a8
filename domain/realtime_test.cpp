#include "domain/realtime.h"

#include <gtest/gtest.h>

#include "domain/events.h"
#include "tests/error_of.h"

namespace scribe::realtime {
namespace {

using testing::code_of;

std::string refused_field(const Json& body, bool enabled = true) {
  Json extras;
  code_of([&] { parse_request(body, enabled); }, &extras);
  return extras.value("field", "");
}

TEST(Realtime, RequestDefaultsAndClamps) {
  auto r = parse_request(nullptr, true);
  EXPECT_EQ(r.language, "auto");
  EXPECT_EQ(r.cap_minutes, 60);
  EXPECT_EQ(parse_request({{"cap_minutes", 5}}, true).cap_minutes, 5);
  EXPECT_EQ(parse_request({{"cap_minutes", 1}}, true).cap_minutes, 1);
  EXPECT_EQ(parse_request({{"cap_minutes", 61}}, true).cap_minutes, 60);
  EXPECT_EQ(parse_request({{"cap_minutes", 100000}}, true).cap_minutes, 60);
  EXPECT_EQ(parse_request({{"cap_minutes", 7.0}}, true).cap_minutes, 7);
  EXPECT_EQ(parse_request({{"language", "en"}}, true).language, "en");
}

TEST(Realtime, CapMinutesRefusedWhenNotAnIntegerOrBelowOne) {
  for (const Json& v : {Json(0), Json(-3), Json(1.5), Json("5"), Json(true), Json::array()}) {
    EXPECT_EQ(code_of([&] { parse_request({{"cap_minutes", v}}, true); }), "invalid_request") << v.dump();
    EXPECT_EQ(refused_field({{"cap_minutes", v}}), "cap_minutes") << v.dump();
  }
}

TEST(Realtime, ErrorsInTheSpecsPrecedence) {
  // unsupported_language first, even when realtime is not enabled and the cap is wrong
  EXPECT_EQ(code_of([&] { parse_request({{"language", "fr"}, {"cap_minutes", 0}}, false); }), "unsupported_language");
  EXPECT_EQ(refused_field({{"language", "fr"}}), "language");
  // then unsupported_pipeline (realtime not enabled), before the cap
  EXPECT_EQ(code_of([&] { parse_request({{"language", "en"}, {"cap_minutes", 0}}, false); }), "unsupported_pipeline");
  EXPECT_EQ(code_of([&] { parse_request({{"cap_minutes", 0}}, true); }), "invalid_request");
}

TEST(Realtime, EffectiveCapOnPayAsYouGo) {
  const auto minute = charge_for_minutes(1);
  EXPECT_EQ(minute, 16667);  // 1 USD an hour, per started second, rounded up to the micro-dollar
  EXPECT_EQ(charge_for_minutes(60), 1'000'000);
  auto c = effective_cap(60, plans::Tier::Free, 10'000'000);
  EXPECT_EQ(c.minutes, 60);
  EXPECT_EQ(c.hold, 1'000'000);
  // the wallet covers 3 whole minutes
  c = effective_cap(60, plans::Tier::Free, charge_for_minutes(3) + 100);
  EXPECT_EQ(c.minutes, 3);
  EXPECT_EQ(c.hold, charge_for_minutes(3));
  EXPECT_EQ(effective_cap(2, plans::Tier::Free, 10'000'000).minutes, 2);
  EXPECT_EQ(code_of([&] { effective_cap(60, plans::Tier::Free, minute - 1); }), "insufficient_funds");
  EXPECT_EQ(code_of([&] { effective_cap(60, plans::Tier::Free, 0); }), "insufficient_funds");
}

TEST(Realtime, SubscriptionsPayNothingAndHoldNothing) {
  auto c = effective_cap(30, plans::Tier::Pro, 0);
  EXPECT_EQ(c.minutes, 30);
  EXPECT_EQ(c.hold, 0);
  EXPECT_EQ(charge(16000 * 90, plans::Tier::Pro, 0), 0);
}

TEST(Realtime, ChargePerStartedSecondNeverAboveTheHold) {
  EXPECT_EQ(billed_seconds(0), 0);
  EXPECT_EQ(billed_seconds(1), 1);
  EXPECT_EQ(billed_seconds(16000), 1);
  EXPECT_EQ(billed_seconds(16001), 2);
  EXPECT_EQ(charge(0, plans::Tier::Free, 1'000'000), 0);
  EXPECT_EQ(charge(16000 * 36, plans::Tier::Free, 1'000'000), 10'000);  // 36 s of 1 USD an hour
  EXPECT_EQ(charge(16001, plans::Tier::Free, 1'000'000), 556);          // 2 s
  EXPECT_EQ(charge(16000 * 3600, plans::Tier::Free, 5'000), 5'000);
  EXPECT_EQ(cap_samples(1), 960'000);
}

TEST(Realtime, TicketRules) {
  EXPECT_EQ(ticket_ttl_seconds(std::nullopt), 60);
  EXPECT_EQ(ticket_ttl_seconds(2), 2);
  EXPECT_EQ(ticket_ttl_seconds(600), 60);  // a setting only shortens it
  EXPECT_EQ(close_code_of(TicketRefusal::Invalid), 4001);
  EXPECT_EQ(close_code_of(TicketRefusal::Expired), 4001);
  EXPECT_EQ(close_code_of(TicketRefusal::Used), 4002);
  EXPECT_EQ(close_code_of(TicketRefusal::Ended), 4004);
  const auto t = now();
  EXPECT_FALSE(is_stale(t, t + std::chrono::seconds(119), 120));
  EXPECT_TRUE(is_stale(t, t + std::chrono::seconds(120), 120));
}

TEST(Realtime, SessionIds) {
  const auto id = new_session_id();
  EXPECT_TRUE(is_session_id(id)) << id;
  EXPECT_NE(id, new_session_id());
  EXPECT_FALSE(is_session_id("rt_xyz"));
  EXPECT_FALSE(is_session_id("rt_ABCDEF0123456789abcdef01"));
  EXPECT_EQ(hold_id("rt_1"), "realtime-rt_1");
  EXPECT_EQ(piece_key("rt_1", 7), "realtime/rt_1/00000007.pcm");
  EXPECT_EQ(piece_key("rt_1", 7, 1), "realtime/rt_1/00000007.pcm");
  EXPECT_EQ(piece_key("rt_1", 7, 3), "realtime/rt_1/00000007-3.pcm");
}

TEST(Realtime, SessionFoldEndsOnceAndKeepsTheRequestedReason) {
  Access a;
  Session s;
  s.exists = true;
  s.id = "rt_1";
  s.account_id = 9;
  s.transcription_id = 4;
  s.cap_minutes = 5;
  s.hold = hold_id(s.id);
  s.held = charge_for_minutes(5);
  auto e = started(s, now());
  apply(a, e.type, e.data);
  ASSERT_EQ(a.sessions.at("rt_1").status, kLive);
  EXPECT_EQ(a.sessions.at("rt_1").held, charge_for_minutes(5));
  EXPECT_EQ(open_sessions(a), 1);
  auto req = end_requested(a.sessions.at("rt_1"), kReasonDeleted);
  ASSERT_TRUE(req);
  apply(a, req->type, req->data);
  EXPECT_EQ(a.sessions.at("rt_1").status, kEnding);
  EXPECT_FALSE(end_requested(a.sessions.at("rt_1"), kReasonDeleted));  // once
  auto end = ended(a.sessions.at("rt_1"), kReasonStale, 32000, 556, now());
  ASSERT_TRUE(end);
  EXPECT_EQ(end->data.at("reason"), kReasonDeleted);
  apply(a, end->type, end->data);
  EXPECT_EQ(a.sessions.at("rt_1").status, kEnded);
  EXPECT_EQ(open_sessions(a), 0);
  EXPECT_FALSE(ended(a.sessions.at("rt_1"), kReasonStale, 32000, 556, now()));  // settled once
}

TEST(Realtime, AccessGrants) {
  Access a;
  auto g = set_access(a, 1, 5, true);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].type, events::kApiKeyRealtimeGranted);
  apply(a, g[0].type, g[0].data);
  EXPECT_TRUE(a.keys.count(5));
  EXPECT_TRUE(set_access(a, 1, 5, true).empty());
  auto acc = set_access(a, 1, std::nullopt, true);
  ASSERT_EQ(acc.size(), 1u);
  apply(a, acc[0].type, acc[0].data);
  EXPECT_TRUE(a.account_enabled);
  // a revoked key loses it
  apply(a, events::kApiKeyRevoked, {{"account_id", 1}, {"key_id", 5}});
  EXPECT_FALSE(a.keys.count(5));
}

TEST(Realtime, WavHeader) {
  const auto h = wav_header(16000);
  ASSERT_EQ(h.size(), 44u);
  EXPECT_EQ(h.substr(0, 4), "RIFF");
  EXPECT_EQ(h.substr(8, 8), "WAVEfmt ");
  EXPECT_EQ(static_cast<unsigned char>(h[24]) | (static_cast<unsigned char>(h[25]) << 8), 16000 & 0xffff);
  EXPECT_EQ(static_cast<unsigned char>(h[40]) | (static_cast<unsigned char>(h[41]) << 8), 32000);
}

}  // namespace
}  // namespace scribe::realtime
