#include "eventstore/subscription.h"

#include "common/db.h"
#include "common/log.h"
#include "eventstore/event_store.h"
#include "eventstore/wakeup.h"

namespace scribe::eventstore {

Subscription::Subscription(std::string database_url, GlobalPosition from, Handler handler, int batch_size)
    : url_(std::move(database_url)), position_(from), handler_(std::move(handler)), batch_size_(batch_size) {}

Subscription::~Subscription() { stop(); }

void Subscription::start() {
  thread_ = std::thread([this] { run(); });
}

void Subscription::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

GlobalPosition Subscription::position() const {
  std::lock_guard lock(mu_);
  return position_;
}

void Subscription::run() {
  while (!stop_) {
    try {
      auto conn = db::open_connection(url_);
      eventstore::EventsWakeup wakeup(*conn);
      while (!stop_) {
        std::vector<RecordedEvent> batch;
        {
          pqxx::read_transaction txn(*conn);
          batch = EventStore::read_all(txn, position(), batch_size_);
        }
        for (const auto& e : batch) {
          handler_(e);
          std::lock_guard lock(mu_);
          position_ = e.global;
        }
        if (static_cast<int>(batch.size()) == batch_size_) continue;  // still catching up
        conn->await_notification(0, 200000);
      }
    } catch (const std::exception& err) {
      log::warn("subscription error; reconnecting", {{"error", err.what()}});
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  }
}

}  // namespace scribe::eventstore
