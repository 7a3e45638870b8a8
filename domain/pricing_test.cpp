#include "domain/pricing.h"

#include <gtest/gtest.h>

namespace scribe::pricing {
namespace {

TEST(Pricing, OneHourCostsOneDollar) {
  auto q = quote(3600, plans::Tier::Free);
  EXPECT_EQ(q.billed_seconds, 3600);
  EXPECT_EQ(q.charge, 1'000'000);
  EXPECT_DOUBLE_EQ(q.billed_minutes, 60.0);
}

TEST(Pricing, RoundsUpToTheSecondAndTheMicroDollar) {
  EXPECT_EQ(quote(59.2, plans::Tier::Free).billed_seconds, 60);
  EXPECT_EQ(quote(60.0000001, plans::Tier::Free).billed_seconds, 60);
  EXPECT_EQ(quote(0, plans::Tier::Free).billed_seconds, 1);
  // 1 s = 277.77... micro-dollars, rounded up.
  EXPECT_EQ(quote(1, plans::Tier::Free).charge, 278);
  EXPECT_EQ(quote(90, plans::Tier::Free).charge, 25'000);
  EXPECT_DOUBLE_EQ(quote(90, plans::Tier::Free).billed_minutes, 1.5);
}

TEST(Pricing, BilledMinutesAreShownToTwoDecimals) {
  EXPECT_DOUBLE_EQ(billed_minutes(61), 1.02);  // 1.01666...
  EXPECT_DOUBLE_EQ(billed_minutes(1), 0.02);
  EXPECT_DOUBLE_EQ(billed_minutes(3600), 60.0);
  const Quote q = quote(90, plans::Tier::Pro);
  EXPECT_DOUBLE_EQ(billed_minutes(q.billed_seconds), q.billed_minutes);
}

TEST(Pricing, SubscriptionPlansPayNothing) {
  for (auto t : {plans::Tier::Starter, plans::Tier::Pro, plans::Tier::Business, plans::Tier::Enterprise})
    EXPECT_EQ(quote(7200, t).charge, 0);
}

}  // namespace
}  // namespace scribe::pricing
