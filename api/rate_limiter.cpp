#include "api/rate_limiter.h"

#include "common/db.h"
#include "domain/limits.h"

namespace scribe::api {
namespace {
const db::Statement kTake{"rate_limit.take", "select scribe_rate_limit_take($1, $2, $3)"};
}

int64_t RateLimiter::take(pqxx::connection& conn, const std::string& bucket) const {
  pqxx::nontransaction txn(conn);
  int64_t wait_ms = txn.exec_prepared1(kTake.name, bucket, per_minute_, limits::kRateWindowMs)[0].as<int64_t>();
  if (wait_ms <= 0) return 0;
  return (wait_ms + 999) / 1000;
}

}  // namespace scribe::api
