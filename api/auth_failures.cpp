#include "api/auth_failures.h"

#include <algorithm>

namespace scribe::api {
namespace {
// Addresses tracked at most; beyond it the ones whose failures are all
// earned back are dropped, and if that is not enough the table starts over
// (an attacker spreading over this many addresses is not stopped by a
// per-address limit anyway).
constexpr std::size_t kMaxAddresses = 100000;
}  // namespace

AuthFailures::AuthFailures(int per_minute)
    : interval_(std::chrono::nanoseconds(std::chrono::minutes(1)) / std::max(1, per_minute)),
      window_(std::chrono::minutes(1)) {}

void AuthFailures::record(const std::string& address, Clock::time_point now) {
  std::lock_guard lock(mu_);
  if (tat_.size() >= kMaxAddresses) {
    std::erase_if(tat_, [&](const auto& entry) { return entry.second <= now; });
    if (tat_.size() >= kMaxAddresses) tat_.clear();
  }
  auto& tat = tat_[address];
  // Never more than one window ahead: a flood earns no longer a wait than a
  // burst does, so Retry-After stays meaningful.
  tat = std::min(std::max(tat, now) + interval_, now + window_ + interval_);
}

int64_t AuthFailures::wait_seconds(const std::string& address, Clock::time_point now) const {
  std::lock_guard lock(mu_);
  auto it = tat_.find(address);
  if (it == tat_.end()) return 0;
  // Another failure would put the arrival time past the window: refused.
  auto over = it->second + interval_ - (now + window_);
  if (over <= Clock::duration::zero()) return 0;
  return std::max<int64_t>(1, (std::chrono::duration_cast<std::chrono::milliseconds>(over).count() + 999) / 1000);
}

}  // namespace scribe::api
