#include "api/in_flight.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace scribe::api {
namespace {

TEST(InFlight, RefusesOneMoreThanTheLimitPerKeyAndFreesTheSlotWhenItEnds) {
  InFlight bound(2);
  auto first = bound.try_take("account:1");
  auto second = bound.try_take("account:1");
  ASSERT_TRUE(first && second);
  EXPECT_FALSE(bound.try_take("account:1"));
  EXPECT_EQ(bound.running("account:1"), 2);
  // Another account is not concerned.
  auto other = bound.try_take("account:2");
  EXPECT_TRUE(other);
  // A finished request gives its place back.
  first.reset();
  EXPECT_EQ(bound.running("account:1"), 1);
  auto third = bound.try_take("account:1");
  EXPECT_TRUE(third);
  second.reset();
  third.reset();
  other.reset();
  EXPECT_EQ(bound.running("account:1"), 0);
  EXPECT_EQ(bound.running("account:2"), 0);
}

TEST(InFlight, AMovedSlotIsGivenBackOnce) {
  InFlight bound(1);
  {
    auto slot = bound.try_take("k");
    ASSERT_TRUE(slot);
    std::optional<InFlight::Slot> moved(std::move(*slot));
    slot.reset();
    EXPECT_EQ(bound.running("k"), 1);
  }
  EXPECT_EQ(bound.running("k"), 0);
}

TEST(InFlight, ConcurrentTakersNeverPassTheLimit) {
  InFlight bound(3);
  std::atomic<int> inside{0}, most{0}, refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        auto slot = bound.try_take("k");
        if (!slot) {
          ++refused;
          continue;
        }
        const int now = ++inside;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        --inside;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_LE(most.load(), 3);
  EXPECT_EQ(bound.running("k"), 0);
}

}  // namespace
}  // namespace scribe::api
