#include "domain/account.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "domain/events.h"

namespace scribe::account {
namespace {

State opened() {
  State s;
  for (auto& e : open(7, "a@example.com", plans::Tier::Free)) apply(s, e.type, e.data);
  return s;
}

NewKey key(int64_t id) {
  NewKey k;
  k.key_id = id;
  k.name = "k";
  k.key_hash = "h" + std::to_string(id);
  k.key_prefix = "key_live_abcd";
  return k;
}

TEST(Account, DepositsAddUp) {
  State s = opened();
  for (auto& e : deposit(s, 2'500'000, "t")) apply(s, e.type, e.data);
  for (auto& e : deposit(s, 500'000, "t")) apply(s, e.type, e.data);
  EXPECT_EQ(s.balance, 3'000'000);
}

TEST(Account, RefusesNonPositiveDeposit) {
  State s = opened();
  EXPECT_THROW(deposit(s, 0, "t"), Error);
  EXPECT_THROW(deposit(s, -5, "t"), Error);
}

TEST(Account, AtMostTwentyActiveKeys) {
  State s = opened();
  for (int i = 1; i <= 20; ++i)
    for (auto& e : create_key(s, key(i), now())) apply(s, e.type, e.data);
  EXPECT_EQ(s.active_keys(now()), 20);
  try {
    create_key(s, key(21), now());
    FAIL() << "a 21st key was allowed";
  } catch (const Error& err) {
    EXPECT_EQ(err.code(), "invalid_request");
  }
  for (auto& e : revoke_key(s, 3)) apply(s, e.type, e.data);
  EXPECT_EQ(s.active_keys(now()), 19);
  EXPECT_NO_THROW(create_key(s, key(21), now()));
}

TEST(Account, ExpiredKeysDoNotCountAsActive) {
  State s = opened();
  NewKey k = key(1);
  k.expires_at = now() + std::chrono::hours(1);
  for (auto& e : create_key(s, k, now())) apply(s, e.type, e.data);
  EXPECT_EQ(s.active_keys(now()), 1);
  EXPECT_EQ(s.active_keys(now() + std::chrono::hours(2)), 0);
}

TEST(Account, AgentPresetNeedsCapAndExpiry) {
  State s = opened();
  NewKey k = key(1);
  k.permission = apikey::Permission::Agent;
  EXPECT_THROW(create_key(s, k, now()), Error);
  k.monthly_cap = 5'000'000;
  k.expires_at = now() + std::chrono::hours(24);
  EXPECT_NO_THROW(create_key(s, k, now()));
}

TEST(Account, RevokingTwiceIsANoOpAndUnknownKeyIsNotFound) {
  State s = opened();
  for (auto& e : create_key(s, key(1), now())) apply(s, e.type, e.data);
  auto first = revoke_key(s, 1);
  ASSERT_EQ(first.size(), 1u);
  apply(s, first[0].type, first[0].data);
  EXPECT_TRUE(revoke_key(s, 1).empty());
  EXPECT_THROW(revoke_key(s, 99), Error);
}

TEST(Account, PlanChangeToSamePlanEmitsNothing) {
  State s = opened();
  EXPECT_TRUE(change_plan(s, plans::Tier::Free).empty());
  auto ev = change_plan(s, plans::Tier::Pro);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].type, events::kPlanChanged);
}

}  // namespace
}  // namespace scribe::account
