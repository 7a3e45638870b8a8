#include "domain/wallet.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "tests/error_of.h"

namespace scribe::wallet {
namespace {

using testing::code_of;

account::State funded(money::Micros balance) {
  account::State s;
  for (auto& e : account::open(1, "w@example.com", plans::Tier::Free)) account::apply(s, e.type, e.data);
  if (balance > 0)
    for (auto& e : account::deposit(s, balance, "t")) account::apply(s, e.type, e.data);
  return s;
}

void apply_all(account::State& s, const std::vector<eventstore::NewEvent>& events) {
  for (const auto& e : events) account::apply(s, e.type, e.data);
}

HoldRequest hold(const std::string& id, money::Micros amount, std::optional<int64_t> key = std::nullopt,
                 std::optional<money::Micros> cap = std::nullopt) {
  return HoldRequest{id, amount, key, cap, "transcription", Json::object()};
}

TEST(Wallet, HoldsReduceAvailableNotBalance) {
  auto s = funded(1'000'000);
  apply_all(s, place_hold(s, hold("a", 400'000), now()));
  EXPECT_EQ(s.balance, 1'000'000);
  EXPECT_EQ(s.available(), 600'000);
  EXPECT_EQ(code_of([&] { place_hold(s, hold("b", 600'001), now()); }), "insufficient_funds");
  EXPECT_EQ(code_of([&] { place_hold(s, hold("b", 600'000), now()); }), "");
}

TEST(Wallet, SettleChargesAtMostTheHoldAndReleasesTheRest) {
  auto s = funded(1'000'000);
  apply_all(s, place_hold(s, hold("a", 400'000), now()));
  auto ev = settle_hold(s, "a", 900'000, now());
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].data["charged_micros"], 400'000);
  EXPECT_EQ(ev[0].data["released_micros"], 0);
  apply_all(s, settle_hold(s, "a", 250'000, now()));
  EXPECT_EQ(s.balance, 750'000);
  EXPECT_EQ(s.available(), 750'000);
}

TEST(Wallet, AHoldClosesExactlyOnce) {
  auto s = funded(1'000'000);
  apply_all(s, place_hold(s, hold("a", 100'000), now()));
  apply_all(s, release_hold(s, "a"));
  EXPECT_TRUE(settle_hold(s, "a", 100'000, now()).empty());
  EXPECT_TRUE(release_hold(s, "a").empty());
  EXPECT_EQ(s.balance, 1'000'000);
  EXPECT_EQ(code_of([&] { place_hold(s, hold("a", 1), now()); }), "internal_error");  // ids are never reused
}

TEST(Wallet, KeyCapCountsSettledSpendAndHoldsInFlight) {
  auto s = funded(10'000'000);
  apply_all(s, place_hold(s, hold("a", 300'000, 5, 1'000'000), now()));
  apply_all(s, settle_hold(s, "a", 300'000, now()));
  apply_all(s, place_hold(s, hold("b", 500'000, 5, 1'000'000), now()));
  EXPECT_EQ(key_month_to_date(s, 5, now()), 800'000);
  EXPECT_EQ(code_of([&] { place_hold(s, hold("c", 200'001, 5, 1'000'000), now()); }), "spend_cap_exceeded");
  EXPECT_EQ(code_of([&] { place_hold(s, hold("c", 200'000, 5, 1'000'000), now()); }), "");
  // Another key is not limited by this key's spend.
  EXPECT_EQ(code_of([&] { place_hold(s, hold("d", 900'000, 6, 1'000'000), now()); }), "");
}

TEST(Wallet, ZeroChargePlacesNoHold) {
  auto s = funded(0);
  EXPECT_TRUE(place_hold(s, hold("a", 0), now()).empty());
}

TEST(Wallet, MonthIsUtcCalendarMonth) {
  EXPECT_EQ(month_of(*parse_iso8601("2026-11-30T23:59:59Z")), "2026-11");
  EXPECT_EQ(month_of(*parse_iso8601("2026-12-01T00:30:00+01:00")), "2026-11");
}

}  // namespace
}  // namespace scribe::wallet
