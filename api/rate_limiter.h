#pragma once
#include <cstdint>
#include <pqxx/pqxx>
#include <string>

namespace scribe::api {

// One limiter for every endpoint, shared by all `scribe serve` processes on the
// database: a generic cell rate algorithm whose state is one row per bucket
// (see migrations/003_operational.sql). `limit` requests per window, with a
// burst of up to `limit`.
class RateLimiter {
 public:
  explicit RateLimiter(int per_minute) : per_minute_(per_minute) {}
  // Returns 0 when allowed, else the seconds to wait (rounded up, >= 1).
  int64_t take(pqxx::connection& conn, const std::string& bucket) const;
  int per_minute() const { return per_minute_; }

 private:
  int per_minute_;
};

}  // namespace scribe::api
