#pragma once
#include <cstdint>

#include "domain/money.h"
#include "domain/plans.h"

// What a transcription costs. Decisions (documented in the OpenAPI document):
//  - the rate is exactly 1 USD per hour of audio; 0.0167 USD per minute is that
//    rate rounded for display;
//  - billed time is the duration rounded up to the whole second (at least 1 s),
//    and the charge is rounded up to the whole micro-dollar;
//  - billed_minutes is billed seconds / 60, rounded to 2 decimals for display;
//  - subscription plans pay 0 (and no wallet hold is placed).
namespace scribe::pricing {

inline constexpr money::Micros kMicrosPerHour = 1'000'000;
inline constexpr double kDisplayUsdPerMinute = 0.0167;
inline constexpr double kDisplayUsdPerHour = 1.0;

struct Quote {
  int64_t billed_seconds = 0;
  double billed_minutes = 0;
  money::Micros charge = 0;
};

int64_t billed_seconds(double duration_seconds);
// Billed seconds as the API shows them: minutes rounded to 2 decimals.
double billed_minutes(int64_t billed_seconds);
Quote quote(double duration_seconds, plans::Tier tier);

}  // namespace scribe::pricing
