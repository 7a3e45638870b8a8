#include "domain/measurement.h"

#include <gtest/gtest.h>

#include "domain/events.h"
#include "domain/pricing.h"
#include "domain/wallet.h"

namespace scribe::measurement {
namespace {

constexpr int64_t kTid = 7;

// An account with a balance, and transcription 7 created for `declared`
// seconds at its first attempt with its hold placed, as commands::create does.
struct World {
  account::State acc;
  transcription::State tr;
};

void apply_account(account::State& s, const std::vector<eventstore::NewEvent>& events) {
  for (const auto& e : events) account::apply(s, e.type, e.data);
}
void apply_transcription(transcription::State& s, const std::vector<eventstore::NewEvent>& events) {
  for (const auto& e : events) transcription::apply(s, e.type, e.data);
}

World created(double declared, money::Micros balance, std::optional<money::Micros> max_charge = std::nullopt,
              std::optional<money::Micros> key_cap = std::nullopt, plans::Tier plan = plans::Tier::Free) {
  World w;
  apply_account(w.acc, account::open(1, "m@example.com", plan));
  if (balance > 0) apply_account(w.acc, account::deposit(w.acc, balance, "t"));
  account::NewKey key{11, "k", "hash", "key_live_x", apikey::Permission::Full, key_cap, std::nullopt};
  apply_account(w.acc, account::create_key(w.acc, key, now()));
  transcription::Request r;
  r.source = "external_url";
  r.url = "https://media.example.com/a.mp3";
  r.duration_seconds = declared;
  r.max_charge = max_charge;
  auto price = pricing::quote(declared, plan);
  apply_account(w.acc, {{events::kTranscriptionAccepted,
                         {{"account_id", 1},
                          {"transcription_id", kTid},
                          {"attempt", 1},
                          {"billed_seconds", price.billed_seconds},
                          {"accepted_at", to_iso8601(now())}}}});
  const std::string hold = transcription::hold_id(kTid, 1);
  apply_account(w.acc,
                wallet::place_hold(w.acc, {hold, price.charge, 11, key_cap, "transcription", Json::object()}, now()));
  apply_transcription(w.tr, {transcription::created(kTid, 1, 11, r, price.billed_seconds, price.charge, hold)});
  return w;
}

const eventstore::NewEvent* find(const std::vector<eventstore::NewEvent>& events, const char* type) {
  for (const auto& e : events)
    if (e.type == type) return &e;
  return nullptr;
}

TEST(Measurement, UnderDeclaredLengthReplacesTheHoldWithOneForTheMeasuredLength) {
  auto w = created(1, 1'000'000);
  auto d = decide(w.tr, w.acc, 11.2, now());
  ASSERT_EQ(d.outcome, Outcome::Measured);
  const auto* released = find(d.account_events, events::kWalletHoldReleased);
  const auto* placed = find(d.account_events, events::kWalletHoldPlaced);
  ASSERT_TRUE(released && placed);
  EXPECT_EQ(released->data["hold_id"], transcription::hold_id(kTid, 1));
  EXPECT_EQ(placed->data["hold_id"], measured_hold_id(kTid, 1));
  EXPECT_EQ(placed->data["amount_micros"], pricing::quote(12, plans::Tier::Free).charge);
  EXPECT_EQ(placed->data["key_id"], 11);
  const auto* corrected = find(d.account_events, events::kAcceptedSecondsCorrected);
  ASSERT_TRUE(corrected);
  EXPECT_EQ(corrected->data["billed_seconds"], 12);

  // Applied, the account holds the measured charge once, and the attempt
  // knows its new hold; a second decision for the attempt changes nothing.
  apply_account(w.acc, d.account_events);
  apply_transcription(w.tr, d.transcription_events);
  EXPECT_EQ(w.acc.held(), pricing::quote(12, plans::Tier::Free).charge);
  EXPECT_EQ(w.acc.accepted_seconds_since(now() - std::chrono::hours(1)), 12);
  EXPECT_EQ(*w.tr.hold, measured_hold_id(kTid, 1));
  EXPECT_EQ(w.tr.last_charge, pricing::quote(12, plans::Tier::Free).charge);
  EXPECT_DOUBLE_EQ(*w.tr.measured_seconds, 11.2);
  auto again = decide(w.tr, w.acc, 11.2, now());
  EXPECT_EQ(again.outcome, Outcome::AlreadyMeasured);
  EXPECT_TRUE(again.account_events.empty() && again.transcription_events.empty());
}

TEST(Measurement, OverDeclaredLengthKeepsTheHoldAndCountsTheMeasuredSecondsForFairUse) {
  auto w = created(3600, 5'000'000);
  auto d = decide(w.tr, w.acc, 11.0, now());
  ASSERT_EQ(d.outcome, Outcome::Measured);
  EXPECT_EQ(find(d.account_events, events::kWalletHoldPlaced), nullptr);
  EXPECT_EQ(find(d.account_events, events::kWalletHoldReleased), nullptr);
  apply_account(w.acc, d.account_events);
  apply_transcription(w.tr, d.transcription_events);
  EXPECT_EQ(w.acc.accepted_seconds_since(now() - std::chrono::hours(1)), 11);
  EXPECT_EQ(*w.tr.hold, transcription::hold_id(kTid, 1));
  EXPECT_EQ(w.tr.last_charge, 1'000'000);
}

TEST(Measurement, WithinToleranceNothingMoves) {
  auto w = created(10, 1'000'000);
  auto d = decide(w.tr, w.acc, 10.6, now());  // bills 11 s against 10 held
  ASSERT_EQ(d.outcome, Outcome::Measured);
  EXPECT_EQ(find(d.account_events, events::kWalletHoldPlaced), nullptr);
  ASSERT_EQ(d.transcription_events.size(), 1u);
  EXPECT_EQ(d.transcription_events[0].data["charge_micros"], pricing::quote(10, plans::Tier::Free).charge);
}

// Each refusal fails the attempt with its own code, releases the first
// hold and charges nothing.
void expect_refused(World w, double measured, const std::string& code) {
  auto d = decide(w.tr, w.acc, measured, now());
  ASSERT_EQ(d.outcome, Outcome::Refused) << code;
  EXPECT_EQ(d.code, code);
  const auto* failed = find(d.transcription_events, events::kTranscriptionFailed);
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->data["error"]["code"], code);
  EXPECT_EQ(failed->data["charge_micros"], 0);
  EXPECT_EQ(find(d.account_events, events::kWalletHoldPlaced), nullptr);
  apply_account(w.acc, d.account_events);
  apply_transcription(w.tr, d.transcription_events);
  EXPECT_EQ(w.acc.held(), 0);
  EXPECT_EQ(find(d.account_events, events::kWalletHoldSettled), nullptr);  // nothing charged
  EXPECT_TRUE(w.acc.closed_holds.count(transcription::hold_id(kTid, 1)));
  EXPECT_EQ(w.tr.status, transcription::kFailed);
  EXPECT_EQ(w.acc.accepted_seconds_since(now() - std::chrono::hours(1)), 0);
}

TEST(Measurement, RefusesWhatACreateWouldRefuse) {
  // The wallet holds 1 s worth (278 micro-USD) and has 1,000 micro-USD.
  expect_refused(created(1, 1'000), 600, "insufficient_funds");
  expect_refused(created(1, 1'000'000, /*max_charge=*/5'000), 600, "max_charge_exceeded");
  expect_refused(created(1, 1'000'000, std::nullopt, /*key_cap=*/10'000), 600, "spend_cap_exceeded");
  // Pay-as-you-go: 60 minutes per rolling 6 h.
  expect_refused(created(1, 10'000'000), 61 * 60, "rate_limited");
}

TEST(Measurement, SubscriptionPlansHoldNothingAndAreNeverRefused) {
  auto w = created(1, 0, std::nullopt, std::nullopt, plans::Tier::Pro);
  EXPECT_FALSE(w.tr.hold);
  auto d = decide(w.tr, w.acc, 4 * 3600, now());
  ASSERT_EQ(d.outcome, Outcome::Measured);
  EXPECT_EQ(find(d.account_events, events::kWalletHoldPlaced), nullptr);
}

}  // namespace
}  // namespace scribe::measurement
