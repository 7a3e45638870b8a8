#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

// Keeps a work lease alive while the work runs (transcription jobs and clip
// renders): a thread renews it a third of the way through the lease, on a
// database connection of its own (the work's connection is busy). Losing the
// lease (`renew` answers false: the work was reclaimed, retried or deleted)
// or the process stopping sets cancelled(), which the work polls. The
// destructor stops the thread before the work's outcome is recorded.
namespace scribe::workers {

class Heartbeat {
 public:
  // `renew` opens its own connection as needed and throws on database
  // failures (logged, retried at the next tick).
  Heartbeat(std::function<bool()> renew, std::chrono::seconds lease, const std::atomic<bool>& stopping);
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

  bool cancelled() const { return cancelled_; }
  const std::atomic<bool>& cancelled_flag() const { return cancelled_; }

 private:
  void run();

  std::function<bool()> renew_;
  std::chrono::seconds lease_;
  const std::atomic<bool>& stopping_;
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> done_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
};

}  // namespace scribe::workers
