#include "domain/fair_use.h"

#include <algorithm>

#include "common/error.h"

namespace scribe::fair_use {

void check(const account::State& acc, int64_t more_seconds, TimePoint at) {
  auto limits = plans::limits_of(acc.plan);
  if (!limits.pay_as_you_go || !limits.fair_use_minutes_per_6h || more_seconds <= 0) return;
  const int64_t cap = static_cast<int64_t>(*limits.fair_use_minutes_per_6h) * 60;
  const TimePoint since = at - kWindow;
  const int64_t used = acc.accepted_seconds_since(since);
  if (used + more_seconds <= cap) return;
  // The wait is until enough of the window's oldest jobs have rolled off.
  int64_t need = used + more_seconds - cap, freed = 0, wait = 1;
  for (const auto& a : acc.accepted) {
    if (a.at <= since) continue;
    freed += a.billed_seconds;
    if (freed >= need) {
      wait = std::max<int64_t>(1, std::chrono::duration_cast<std::chrono::seconds>(a.at + kWindow - at).count());
      break;
    }
  }
  throw Error("rate_limited",
              "pay-as-you-go fair use: at most " + std::to_string(*limits.fair_use_minutes_per_6h) +
                  " minutes of audio per rolling 6 hours; " + std::to_string(used / 60) + " used",
              {{"retry_after", wait}});
}

}  // namespace scribe::fair_use
