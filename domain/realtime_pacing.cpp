#include "domain/realtime_pacing.h"

#include <algorithm>

namespace scribe::realtime {

Pace pace(double audio_seconds_this_connection, double wall_seconds_since_connect, const PaceLimits& limits) {
  double ahead = audio_seconds_this_connection - wall_seconds_since_connect;
  if (ahead > limits.max_ahead_seconds) return Pace::TooFast;
  if (ahead > limits.warn_ahead_seconds) return Pace::SlowDown;
  return Pace::Ok;
}

PartialFate partial_fate(std::size_t queued_bytes, std::size_t bound) {
  return queued_bytes < bound ? PartialFate::Send : PartialFate::Skip;
}

double remaining_cap_seconds(int cap_minutes, double audio_seconds) {
  return std::max(0.0, cap_minutes * 60.0 - audio_seconds);
}

bool cap_warning_due(int cap_minutes, double audio_seconds, bool already_warned) {
  return !already_warned && remaining_cap_seconds(cap_minutes, audio_seconds) <= 60.0;
}

bool idle(double seconds_since_last_audio_or_keepalive, double idle_limit_seconds) {
  return seconds_since_last_audio_or_keepalive >= idle_limit_seconds;
}

}  // namespace scribe::realtime
