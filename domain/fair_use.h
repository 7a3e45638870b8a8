#pragma once
#include <cstdint>

#include "domain/account.h"

// The pay-as-you-go fair-use wall (the spec's per-plan table): at most the
// plan's minutes of audio accepted in any rolling 6 h window. Subscription
// plans only queue at lower priority, so they are never refused here.
namespace scribe::fair_use {

inline constexpr auto kWindow = std::chrono::hours(6);

// Throws 429 rate_limited, with retry_after the seconds until enough of the
// window's oldest jobs have rolled off, when `more_seconds` on top of what
// the window already holds would pass the plan's allowance.
void check(const account::State& acc, int64_t more_seconds, TimePoint at);

}  // namespace scribe::fair_use
