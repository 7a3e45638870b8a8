#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>

namespace scribe::api {

// Holds long-poll requests (/wait) without a thread or a database connection
// each: a waiter is only a key, a deadline and a callback, so thousands cost a
// few hundred kilobytes. One timer thread fires deadlines; notify(key), called
// when the awaited event is appended, fires that key's waiters at once.
// Callbacks run on the timer thread or the notifying thread, outside the lock,
// and must be quick (post real work elsewhere).
class WaitRegistry {
 public:
  using Clock = std::chrono::steady_clock;
  using Callback = std::function<void(bool timed_out)>;

  WaitRegistry();
  ~WaitRegistry();
  WaitRegistry(const WaitRegistry&) = delete;
  WaitRegistry& operator=(const WaitRegistry&) = delete;

  uint64_t add(const std::string& key, Clock::time_point deadline, Callback callback);
  // Fires every waiter on `key` with timed_out = false. Returns how many.
  std::size_t notify(const std::string& key);
  std::size_t size() const;
  // Removes a waiter without firing it; false if it already fired.
  bool cancel(uint64_t id);
  // Fires every remaining waiter with timed_out = true and stops the timer thread.
  void stop();

 private:
  struct Waiter {
    std::string key;
    Clock::time_point deadline;
    Callback callback;
  };
  void run();

  mutable std::mutex mu_;
  std::condition_variable cv_;
  uint64_t next_id_ = 1;
  std::unordered_map<uint64_t, Waiter> waiters_;
  std::unordered_multimap<std::string, uint64_t> by_key_;
  std::set<std::pair<Clock::time_point, uint64_t>> deadlines_;
  bool stopping_ = false;
  std::thread timer_;
};

}  // namespace scribe::api
