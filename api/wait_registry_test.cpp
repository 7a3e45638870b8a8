#include "api/wait_registry.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace scribe::api {
namespace {

using namespace std::chrono_literals;

template <typename Pred>
bool eventually(Pred pred, std::chrono::milliseconds limit = 5000ms) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (pred()) return true;
    std::this_thread::sleep_for(2ms);
  }
  return pred();
}

TEST(WaitRegistry, NotifyFiresOnlyThatKeysWaiters) {
  // Before the registry: its destructor releases the waiter still on "b",
  // whose callback counts into these.
  std::atomic<int> woken{0}, timed_out{0};
  WaitRegistry reg;
  auto cb = [&](bool t) { (t ? timed_out : woken)++; };
  auto far = WaitRegistry::Clock::now() + 60s;
  reg.add("a", far, cb);
  reg.add("a", far, cb);
  reg.add("b", far, cb);
  EXPECT_EQ(reg.notify("a"), 2u);
  EXPECT_EQ(woken.load(), 2);
  EXPECT_EQ(reg.size(), 1u);
  EXPECT_EQ(reg.notify("a"), 0u);  // a waiter fires once
  EXPECT_EQ(timed_out.load(), 0);
}

TEST(WaitRegistry, DeadlinesFireInOrderWithTimedOut) {
  std::mutex mu;
  std::vector<int> order;
  WaitRegistry reg;
  auto now = WaitRegistry::Clock::now();
  for (int i : {3, 1, 2})
    reg.add("k" + std::to_string(i), now + std::chrono::milliseconds(20 * i), [&, i](bool t) {
      ASSERT_TRUE(t);
      std::lock_guard lock(mu);
      order.push_back(i);
    });
  ASSERT_TRUE(eventually([&] { return reg.size() == 0; }));
  std::lock_guard lock(mu);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

TEST(WaitRegistry, TenThousandWaitersNeedNoThreadEach) {
  std::atomic<int> woken{0}, timed_out{0};
  WaitRegistry reg;
  auto far = WaitRegistry::Clock::now() + 60s;
  for (int i = 0; i < 10000; ++i)
    reg.add("t" + std::to_string(i % 100), far, [&](bool t) { (t ? timed_out : woken)++; });
  EXPECT_EQ(reg.size(), 10000u);
  for (int i = 0; i < 50; ++i) reg.notify("t" + std::to_string(i));
  EXPECT_EQ(woken.load(), 5000);
  reg.stop();  // the rest are released as timed out, none lost
  EXPECT_EQ(timed_out.load(), 5000);
  EXPECT_EQ(reg.size(), 0u);
}

}  // namespace
}  // namespace scribe::api
