#pragma once
#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "eventstore/event.h"

namespace scribe::eventstore {

// Delivers every event after `from` in global order: first it catches up by
// reading in batches, then it stays live, woken by LISTEN/NOTIFY on
// `scribe_events` (and by a short poll, because an event can become readable
// when an unrelated transaction that held the xmin bound back finishes).
// Handlers run on the subscription's own thread and its own connection.
class Subscription {
 public:
  using Handler = std::function<void(const RecordedEvent&)>;

  Subscription(std::string database_url, GlobalPosition from, Handler handler, int batch_size = 1000);
  ~Subscription();
  Subscription(const Subscription&) = delete;
  Subscription& operator=(const Subscription&) = delete;

  void start();
  void stop();
  GlobalPosition position() const;

 private:
  void run();

  std::string url_;
  mutable std::mutex mu_;  // guards position_, read by other threads as one pair
  GlobalPosition position_;
  Handler handler_;
  int batch_size_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace scribe::eventstore
