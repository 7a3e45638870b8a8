#include "api/keyed_slots.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace scribe::api {
namespace {

TEST(KeyedSlots, AtMostMaxHoldsPerKeyAndEachKeyApart) {
  KeyedSlots slots(2);
  auto a1 = slots.take("a");
  auto a2 = slots.take("a");
  ASSERT_NE(a1, nullptr);
  ASSERT_NE(a2, nullptr);
  EXPECT_EQ(slots.take("a"), nullptr);
  EXPECT_EQ(slots.in_use("a"), 2);
  auto b = slots.take("b");
  EXPECT_NE(b, nullptr);
  EXPECT_EQ(slots.in_use("b"), 1);
  EXPECT_EQ(slots.in_use("c"), 0);
}

TEST(KeyedSlots, ASlotIsFreeWhenItsHoldsLastCopyGoes) {
  KeyedSlots slots(1);
  auto held = slots.take("k");
  ASSERT_NE(held, nullptr);
  auto copy = held;
  held.reset();
  EXPECT_EQ(slots.take("k"), nullptr) << "a copy still holds the slot";
  copy.reset();
  EXPECT_EQ(slots.in_use("k"), 0);
  EXPECT_NE(slots.take("k"), nullptr);
}

TEST(KeyedSlots, AHoldMayOutliveTheSlots) {
  std::shared_ptr<void> held;
  {
    KeyedSlots slots(1);
    held = slots.take("k");
  }
  held.reset();  // no use of the gone KeyedSlots (the sanitizer build checks)
}

TEST(KeyedSlots, ConcurrentTakersNeverExceedTheBound) {
  KeyedSlots slots(3);
  std::atomic<int> peak{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        if (auto h = slots.take("k")) {
          const int now = slots.in_use("k");
          for (int p = peak.load(); now > p && !peak.compare_exchange_weak(p, now);) {
          }
        }
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_LE(peak.load(), 3);
  EXPECT_GE(peak.load(), 1);
  EXPECT_EQ(slots.in_use("k"), 0);
}

}  // namespace
}  // namespace scribe::api
