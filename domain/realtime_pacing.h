#pragma once
#include <cstddef>

// The realtime stream's flow rules (docs/realtime_protocol.md, "Timers and
// limits"), pure so they are tested without a socket.
namespace scribe::realtime {

// A microphone cannot run ahead of the clock; a client that does is sending
// a file, and the server buffers what it has not recognized yet. Up to
// `warn_ahead` seconds ahead is fine, past it the client is told to slow
// down, past `max_ahead` the connection closes (4009). Measured from the
// connection's start, so a resumed client may resend what was not stored.
struct PaceLimits {
  double warn_ahead_seconds = 5;
  double max_ahead_seconds = 10;
};
enum class Pace { Ok, SlowDown, TooFast };
Pace pace(double audio_seconds_this_connection, double wall_seconds_since_connect, const PaceLimits& limits = {});

// What happens to a partial when the reader is slow: finals and control
// messages are always queued; a partial only while less than `bound` bytes
// wait to be written, else it is skipped (each partial repeats its turn so
// far, so the next one the reader gets stands for those it missed).
inline constexpr std::size_t kSlowReaderBytes = 256 * 1024;
enum class PartialFate { Send, Skip };
PartialFate partial_fate(std::size_t queued_bytes, std::size_t bound = kSlowReaderBytes);

// The cap and idle rules: how many seconds of audio may still be taken, and
// whether the warning that the cap is near is due (once, 60 s before it, or
// at the start when the cap is shorter than that).
double remaining_cap_seconds(int cap_minutes, double audio_seconds);
bool cap_warning_due(int cap_minutes, double audio_seconds, bool already_warned);
bool idle(double seconds_since_last_audio_or_keepalive, double idle_limit_seconds);

}  // namespace scribe::realtime
