#pragma once
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

namespace scribe::api {

// Failed authentications per client address, in this process's memory: a
// generic cell rate algorithm like the request limiter (rate_limiter.h), but
// keyed by address and never on the database, since what it protects is the
// database (every unknown key would otherwise cost a lookup). `per_minute`
// failures are allowed per minute, in a burst of up to as many.
class AuthFailures {
 public:
  using Clock = std::chrono::steady_clock;

  explicit AuthFailures(int per_minute);
  // Counts one failure from `address`.
  void record(const std::string& address, Clock::time_point now = Clock::now());
  // 0 while `address` may still fail, else the whole seconds (>= 1) until it may.
  int64_t wait_seconds(const std::string& address, Clock::time_point now = Clock::now()) const;

 private:
  std::chrono::nanoseconds interval_;
  std::chrono::nanoseconds window_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Clock::time_point> tat_;  // theoretical arrival time by address
};

}  // namespace scribe::api
