// Refusals the authenticator decides in memory, before any database
// connection exists: Authenticator::screen takes none, so whatever it refuses
// costs no lookup (authenticator_pgtest.cpp has the paths that do read).
#include "api/authenticator.h"

#include <gtest/gtest.h>

#include <chrono>

#include "common/error.h"
#include "domain/limits.h"
#include "tests/bearer_request.h"

namespace scribe::api {
namespace {

using testing::bearer_request;

std::string code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  return "passed";
}

TEST(AuthenticatorScreen, MalformedKeysAreRefusedWithoutALookup) {
  Authenticator auth;
  for (const char* bad : {"key_live_short", "key_live_0123456789012345678901234567890123456789!",
                          "key_test_0123456789012345678901234567890123456789"})
    EXPECT_EQ(code_of([&] { auth.screen(bearer_request(bad)); }), "invalid_api_key") << bad;
  EXPECT_EQ(auth.lookups(), 0u);
  // A well-formed key it knows nothing about must go on to the database.
  EXPECT_EQ(code_of([&] { auth.screen(bearer_request("key_live_0123456789012345678901234567890123456789")); }),
            "passed");
}

TEST(AuthenticatorScreen, AnAddressOverItsFailureBudgetIsRateLimitedOthersAreNot) {
  Authenticator auth;
  const auto token = "key_live_0123456789012345678901234567890123456789";
  for (int i = 0; i < limits::kAuthFailuresPerMinute; ++i) {
    EXPECT_EQ(code_of([&] { auth.screen(bearer_request(token)); }), "passed") << i;
    auth.record_failure(bearer_request(token));
  }
  try {
    auth.screen(bearer_request(token));
    FAIL() << "not refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "rate_limited");
    EXPECT_EQ(e.http_status(), 429);
    EXPECT_GE(e.extras().at("retry_after").get<int64_t>(), 1);
  }
  EXPECT_EQ(code_of([&] { auth.screen(bearer_request(token, "192.0.2.2")); }), "passed");
  EXPECT_EQ(auth.lookups(), 0u);
}

TEST(AuthenticatorScreen, RequestsWithoutCredentialsAreNotCountedAsFailures) {
  Authenticator auth;
  Request anonymous;
  anonymous.remote = "192.0.2.3";
  for (int i = 0; i < 3 * limits::kAuthFailuresPerMinute; ++i) auth.record_failure(anonymous);
  EXPECT_EQ(
      code_of([&] { auth.screen(bearer_request("key_live_0123456789012345678901234567890123456789", "192.0.2.3")); }),
      "passed");
}

TEST(AuthFailures, BudgetIsEarnedBackOneIntervalAtATime) {
  AuthFailures f(20);
  auto t0 = AuthFailures::Clock::now();
  for (int i = 0; i < 19; ++i) f.record("a", t0);
  EXPECT_EQ(f.wait_seconds("a", t0), 0);
  f.record("a", t0);
  EXPECT_EQ(f.wait_seconds("a", t0), 3);  // one failure earned back every 60/20 s
  EXPECT_EQ(f.wait_seconds("a", t0 + std::chrono::seconds(3)), 0);
  // A flood earns no longer a wait than a burst does.
  for (int i = 0; i < 1000; ++i) f.record("a", t0);
  EXPECT_LE(f.wait_seconds("a", t0), 6);
  EXPECT_EQ(f.wait_seconds("b", t0), 0);
}

}  // namespace
}  // namespace scribe::api
