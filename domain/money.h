#pragma once
#include <cmath>
#include <cstdint>
#include <optional>

// Money is integer micro-dollars everywhere inside the service; only the API
// renders USD numbers.
namespace scribe::money {

using Micros = int64_t;
inline constexpr Micros kMicrosPerUsd = 1'000'000;

inline double to_usd(Micros m) { return static_cast<double>(m) / kMicrosPerUsd; }

// Rounds to the nearest micro-dollar; refuses what is not a finite amount
// inside +-1e12 USD.
inline std::optional<Micros> from_usd(double usd) {
  if (!std::isfinite(usd) || std::fabs(usd) > 1e12) return std::nullopt;
  return static_cast<Micros>(std::llround(usd * kMicrosPerUsd));
}

}  // namespace scribe::money
