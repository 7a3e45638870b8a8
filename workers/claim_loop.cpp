#include "workers/claim_loop.h"

#include <unistd.h>

#include "common/db.h"
#include "common/log.h"

namespace scribe::workers {

std::string process_owner() {
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  return std::string(host) + ":" + std::to_string(::getpid());
}

ClaimLoop::ClaimLoop(std::string database_url, std::string owner, std::string what, std::chrono::milliseconds poll)
    : url_(std::move(database_url)), owner_(std::move(owner)), what_(std::move(what)), poll_(poll) {}

ClaimLoop::~ClaimLoop() { stop(); }

void ClaimLoop::start(int slots, Claim claim) {
  claim_ = std::move(claim);
  for (int i = 0; i < slots; ++i) threads_.emplace_back([this, i] { run(i); });
  if (slots > 0) threads_.emplace_back([this] { listen(); });
}

void ClaimLoop::request_stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
}

void ClaimLoop::stop() {
  request_stop();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

void ClaimLoop::listen() {
  db::listen_until(url_, "scribe_events", what_ + " wakeup listener", stopping_, [this] {
    std::lock_guard lock(mu_);
    ++wakeups_;
    cv_.notify_all();
  });
}

void ClaimLoop::run(int slot) {
  std::unique_ptr<pqxx::connection> conn;
  const std::string slot_owner = owner_ + ":" + std::to_string(slot);
  while (!stopping_) {
    Work work;
    uint64_t seen;
    {
      std::lock_guard lock(mu_);
      seen = wakeups_;
    }
    const auto claimed_at = std::chrono::steady_clock::now();
    try {
      if (!conn || !conn->is_open()) conn = db::open_connection(url_);
      work = claim_(*conn, slot_owner);
    } catch (const std::exception& e) {
      log::warn(what_ + " claim failed", {{"error", e.what()}});
      conn.reset();
    }
    if (!work) {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, poll_, [&] { return stopping_.load() || wakeups_ != seen; });
      cv_.wait_until(lock, claimed_at + kMinClaimGap, [&] { return stopping_.load(); });
      continue;
    }
    try {
      work();
    } catch (const std::exception& e) {
      // The database went away mid-work: the lease runs out and another
      // worker (or this one, later) takes it again.
      log::error(what_ + " processing failed", {{"error", e.what()}});
      conn.reset();
    }
  }
}

}  // namespace scribe::workers
