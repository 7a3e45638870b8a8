#include "api/wait_registry.h"

#include <vector>

namespace scribe::api {

WaitRegistry::WaitRegistry() : timer_([this] { run(); }) {}

WaitRegistry::~WaitRegistry() { stop(); }

uint64_t WaitRegistry::add(const std::string& key, Clock::time_point deadline, Callback callback) {
  std::unique_lock lock(mu_);
  if (stopping_) {
    // Shutting down: nobody will wait any more, answer at once.
    lock.unlock();
    callback(true);
    return 0;
  }
  uint64_t id = next_id_++;
  bool earliest = deadlines_.empty() || deadline < deadlines_.begin()->first;
  waiters_.emplace(id, Waiter{key, deadline, std::move(callback)});
  by_key_.emplace(key, id);
  deadlines_.emplace(deadline, id);
  if (earliest) cv_.notify_one();
  return id;
}

std::size_t WaitRegistry::notify(const std::string& key) {
  std::vector<Callback> fire;
  {
    std::lock_guard lock(mu_);
    auto [first, last] = by_key_.equal_range(key);
    for (auto it = first; it != last; ++it) {
      auto w = waiters_.find(it->second);
      deadlines_.erase({w->second.deadline, it->second});
      fire.push_back(std::move(w->second.callback));
      waiters_.erase(w);
    }
    by_key_.erase(first, last);
  }
  for (auto& cb : fire) cb(false);
  return fire.size();
}

bool WaitRegistry::cancel(uint64_t id) {
  std::lock_guard lock(mu_);
  auto w = waiters_.find(id);
  if (w == waiters_.end()) return false;
  deadlines_.erase({w->second.deadline, id});
  auto [first, last] = by_key_.equal_range(w->second.key);
  for (auto it = first; it != last; ++it)
    if (it->second == id) {
      by_key_.erase(it);
      break;
    }
  waiters_.erase(w);
  return true;
}

std::size_t WaitRegistry::size() const {
  std::lock_guard lock(mu_);
  return waiters_.size();
}

void WaitRegistry::run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    if (deadlines_.empty()) {
      cv_.wait(lock);
      continue;
    }
    auto next = deadlines_.begin()->first;
    if (Clock::now() < next) {
      cv_.wait_until(lock, next);
      continue;
    }
    std::vector<Callback> fire;
    auto now = Clock::now();
    while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
      uint64_t id = deadlines_.begin()->second;
      deadlines_.erase(deadlines_.begin());
      auto w = waiters_.find(id);
      auto [first, last] = by_key_.equal_range(w->second.key);
      for (auto it = first; it != last; ++it)
        if (it->second == id) {
          by_key_.erase(it);
          break;
        }
      fire.push_back(std::move(w->second.callback));
      waiters_.erase(w);
    }
    lock.unlock();
    for (auto& cb : fire) cb(true);
    lock.lock();
  }
}

void WaitRegistry::stop() {
  std::vector<Callback> fire;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    for (auto& [id, w] : waiters_) fire.push_back(std::move(w.callback));
    waiters_.clear();
    by_key_.clear();
    deadlines_.clear();
  }
  cv_.notify_all();
  if (timer_.joinable()) timer_.join();
  for (auto& cb : fire) cb(true);
}

}  // namespace scribe::api
