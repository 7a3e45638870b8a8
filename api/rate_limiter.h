#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <pqxx/pqxx>
#include <string>
#include <unordered_map>

namespace scribe::api {

// One limiter for every endpoint, shared by all `scribe serve` processes on the
// database: a generic cell rate algorithm whose state is one row per bucket
// (see migrations/003_operational.sql). `limit` requests per window, with a
// burst of up to `limit`.
//
// With a high limit (operators may raise it), going to the database for every
// request costs more than the request itself, so a process leases allowance
// from the shared row in chunks of a tenth of a second's worth of the limit
// and hands it out locally. Every request still spends allowance taken from
// the shared row, so all processes together never exceed the limit; a
// process's unused allowance expires after kLeaseLife, which bounds how late
// it can be spent. Below 1,200 per minute a chunk is one request, and every
// request goes to the database as before.
class RateLimiter {
 public:
  static constexpr auto kLeaseLife = std::chrono::seconds(1);

  explicit RateLimiter(int per_minute) : per_minute_(per_minute), chunk_(std::max(1, per_minute / 600)) {}
  RateLimiter(const RateLimiter& other) : RateLimiter(other.per_minute_) {}
  // Returns 0 when allowed, else the seconds to wait (rounded up, >= 1).
  int64_t take(pqxx::connection& conn, const std::string& bucket) const;
  int per_minute() const { return per_minute_; }
  int chunk() const { return chunk_; }

 private:
  struct Lease {
    int64_t left = 0;
    std::chrono::steady_clock::time_point expires;
  };
  bool take_leased(const std::string& bucket) const;

  int per_minute_;
  int chunk_;
  mutable std::mutex mu_;
  mutable std::unordered_map<std::string, Lease> leases_;
};

}  // namespace scribe::api
