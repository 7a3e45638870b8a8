#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace scribe {

using Clock = std::chrono::system_clock;
using TimePoint = std::chrono::time_point<Clock, std::chrono::microseconds>;

TimePoint now();
// ISO 8601 in UTC with millisecond precision, e.g. 2026-11-22T10:00:00.000Z.
std::string to_iso8601(TimePoint t);
// Accepts what PostgreSQL and our own to_iso8601 produce (UTC offsets, 'T' or ' ').
std::optional<TimePoint> parse_iso8601(const std::string& text);
int64_t to_unix_micros(TimePoint t);
TimePoint from_unix_micros(int64_t micros);

}  // namespace scribe
