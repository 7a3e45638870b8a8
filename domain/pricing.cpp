#include "domain/pricing.h"

#include <cmath>

namespace scribe::pricing {

int64_t billed_seconds(double duration_seconds) {
  if (!(duration_seconds > 0)) return 1;
  // A float duration such as 60.0000001 from a probe should not bill 61 s.
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(duration_seconds - 1e-6)));
}

double billed_minutes(int64_t billed_seconds) {
  return std::round(static_cast<double>(billed_seconds) / 60.0 * 100.0) / 100.0;
}

Quote quote(double duration_seconds, plans::Tier tier) {
  Quote q;
  q.billed_seconds = billed_seconds(duration_seconds);
  q.billed_minutes = billed_minutes(q.billed_seconds);
  if (plans::limits_of(tier).pay_as_you_go) q.charge = (q.billed_seconds * kMicrosPerHour + 3599) / 3600;
  return q;
}

}  // namespace scribe::pricing
