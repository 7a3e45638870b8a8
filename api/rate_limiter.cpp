#include "api/rate_limiter.h"

#include "common/db.h"
#include "domain/limits.h"

namespace scribe::api {
namespace {

// The generic cell rate algorithm in one statement: the bucket's theoretical
// arrival time moves forward by one emission interval ($2 s) unless that would
// put it more than the window ($3 s) ahead of now, in which case no row comes
// back and the request is refused. One round trip on the hot path; the table
// is unlogged, so the commit waits for no WAL flush.
const db::Statement kTake{"rate_limit.take",
                          "insert into rate_limits as r (bucket, tat) "
                          "values ($1, clock_timestamp() + make_interval(secs => $2)) "
                          "on conflict (bucket) do update "
                          "set tat = greatest(r.tat, clock_timestamp()) + make_interval(secs => $2) "
                          "where greatest(r.tat, clock_timestamp()) + make_interval(secs => $2) "
                          "<= clock_timestamp() + make_interval(secs => $3) "
                          "returning 1"};
// Only for a refused request: how long until it would be allowed.
const db::Statement kWait{"rate_limit.wait",
                          "select ceil(extract(epoch from (greatest(tat, clock_timestamp()) + "
                          "make_interval(secs => $2) - clock_timestamp())) * 1000 - $3 * 1000)::bigint "
                          "from rate_limits where bucket = $1"};

}  // namespace

bool RateLimiter::take_leased(const std::string& bucket) const {
  std::lock_guard lock(mu_);
  auto it = leases_.find(bucket);
  if (it == leases_.end()) return false;
  if (it->second.left > 0 && std::chrono::steady_clock::now() < it->second.expires) {
    --it->second.left;
    return true;
  }
  leases_.erase(it);
  return false;
}

int64_t RateLimiter::take(pqxx::connection& conn, const std::string& bucket) const {
  const double interval = limits::kRateWindowMs / 1000.0 / per_minute_;
  const double window = limits::kRateWindowMs / 1000.0;
  pqxx::nontransaction txn(conn);
  if (chunk_ > 1) {
    if (take_leased(bucket)) return 0;
    // Lease a chunk: this request plus chunk - 1 for later ones. Near the limit
    // a whole chunk may no longer fit; then single requests are taken below, so
    // the last of the allowance is not lost to rounding.
    if (!txn.exec_prepared(kTake.name, bucket, interval * chunk_, window).empty()) {
      std::lock_guard lock(mu_);
      if (leases_.size() > 100000) leases_.clear();  // idle buckets; a lease is at most kLeaseLife old
      auto& lease = leases_[bucket];
      lease.left += chunk_ - 1;
      lease.expires = std::chrono::steady_clock::now() + kLeaseLife;
      return 0;
    }
  }
  if (!txn.exec_prepared(kTake.name, bucket, interval, window).empty()) return 0;
  auto res = txn.exec_prepared(kWait.name, bucket, interval, window);
  int64_t wait_ms = res.empty() ? 1000 : res[0][0].as<int64_t>();
  return std::max<int64_t>(1, (wait_ms + 999) / 1000);
}

}  // namespace scribe::api
