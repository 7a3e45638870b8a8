#include "api/in_flight.h"

namespace scribe::api {

std::optional<InFlight::Slot> InFlight::try_take(const std::string& key) {
  std::lock_guard lock(mu_);
  int& n = running_[key];
  if (n >= limit_) return std::nullopt;
  ++n;
  return Slot(this, key);
}

int InFlight::running(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = running_.find(key);
  return it == running_.end() ? 0 : it->second;
}

void InFlight::release(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = running_.find(key);
  if (it != running_.end() && --it->second <= 0) running_.erase(it);
}

}  // namespace scribe::api
