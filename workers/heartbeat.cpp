#include "workers/heartbeat.h"

#include "common/log.h"

namespace scribe::workers {

Heartbeat::Heartbeat(std::function<bool()> renew, std::chrono::seconds lease, const std::atomic<bool>& stopping)
    : renew_(std::move(renew)), lease_(lease), stopping_(stopping) {
  thread_ = std::thread([this] { run(); });
}

Heartbeat::~Heartbeat() {
  done_ = true;
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Heartbeat::run() {
  std::unique_lock lock(mu_);
  auto next_renewal = std::chrono::steady_clock::now() + lease_ / 3;
  // Wakes often enough to pass a shutdown on at once, renews a third of the
  // way through the lease.
  while (!done_) {
    cv_.wait_for(lock, std::chrono::milliseconds(250));
    if (stopping_) {
      cancelled_ = true;
      return;
    }
    if (done_ || std::chrono::steady_clock::now() < next_renewal) continue;
    try {
      if (!renew_()) {
        cancelled_ = true;
        return;
      }
      next_renewal = std::chrono::steady_clock::now() + lease_ / 3;
    } catch (const std::exception& e) {
      log::warn("lease renewal failed", {{"error", e.what()}});
    }
  }
}

}  // namespace scribe::workers
