#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "common/time.h"
#include "domain/money.h"
#include "domain/plans.h"
#include "eventstore/event.h"

// Realtime sessions (issue 32): the pure rules. A session's money lives on
// the account stream (RealtimeSessionStarted + WalletHoldPlaced when it
// starts, RealtimeSessionEnded + WalletHoldSettled/Released when it ends, in
// one append each), so "settled exactly once" is the account stream's
// expected-version check plus the fold below seeing the session ended.
// Operational state that changes many times a second (the ticket, the
// connection's generation and heartbeat, the persisted audio) is not an
// event: it lives in `realtime_live` (migrations/062_realtime.sql), written
// by commands/realtime_commands.cpp, like the job leases.
namespace scribe::realtime {

inline constexpr int kSampleRate = 16000;  // 16 kHz mono s16le on the socket
inline constexpr int kBytesPerSample = 2;
inline constexpr int kMinCapMinutes = 1;
inline constexpr int kMaxCapMinutes = 60;
inline constexpr int kDefaultCapMinutes = 60;
inline constexpr int kTicketTtlSeconds = 60;      // the spec: single-use, 60 s
inline constexpr int kDefaultStaleSeconds = 120;  // SCRIBE_REALTIME_STALE_SECONDS
inline constexpr const char* kHoldPurpose = "realtime";
inline constexpr const char* kSource = "realtime";  // transcriptions.source
inline constexpr const char* kLiveStage = "live";   // transcriptions.stage while streaming

// Session statuses (realtime_sessions.status).
inline constexpr const char* kLive = "live";
inline constexpr const char* kEnding = "ending";
inline constexpr const char* kEnded = "ended";

// Why a session ended (RealtimeSessionEnded.reason, the Termination message).
inline constexpr const char* kReasonDeleted = "deleted";        // DELETE .../{id}
inline constexpr const char* kReasonTerminated = "terminated";  // the client's Terminate
inline constexpr const char* kReasonCap = "cap_reached";
inline constexpr const char* kReasonIdle = "idle";
inline constexpr const char* kReasonStale = "stale";  // housekeeping: no connection, no heartbeat

// WebSocket close codes (docs/realtime_protocol.md). The in-band error
// message goes first, then the close.
namespace close_code {
inline constexpr int kNormal = 1000;         // after Termination
inline constexpr int kGoingAway = 1001;      // server shutting down; resumable
inline constexpr int kInvalidTicket = 4001;  // invalid or expired ticket
inline constexpr int kTicketUsed = 4002;
inline constexpr int kNotAllowed = 4003;  // realtime not enabled, session not yours
inline constexpr int kSessionEnded = 4004;
inline constexpr int kBadMessage = 4008;
inline constexpr int kTooFast = 4009;     // client ahead of real time beyond the buffer
inline constexpr int kCapReached = 4010;  // after Termination
inline constexpr int kIdleTimeout = 4011;
inline constexpr int kSuperseded = 4012;  // a resume took the session over
}  // namespace close_code

// "rt_" + 24 lowercase hex characters.
std::string new_session_id();
bool is_session_id(std::string_view s);
std::string hold_id(const std::string& session_id);  // "realtime-<session_id>"
// The object of one persisted piece: realtime/<sid>/<seq 8 digits>.pcm, with
// "-<generation>" before ".pcm" after a resume, so a superseded connection's
// late write can never overwrite the piece its successor persisted.
std::string piece_key(const std::string& session_id, int64_t seq, int generation = 1);

// The realtime language allowlist: a subset of the standard pipeline's
// languages ("auto" included), the ones the streaming recognizer has a model for.
const std::vector<std::string>& languages();

struct Request {
  std::string language = "auto";
  int cap_minutes = kDefaultCapMinutes;  // as requested, clamped to kMaxCapMinutes
};
// Validates POST /realtime/sessions's body (an object, or null for none) in
// the spec's precedence: unsupported_language (field language), then
// unsupported_pipeline when realtime is not enabled for the caller, then
// invalid_request with field cap_minutes (not an integer, or below 1; above
// 60 is clamped). The 402s come later (effective_cap, wallet::place_hold).
Request parse_request(const Json& body, bool realtime_enabled);

// What a minute, and `minutes` minutes, cost on pay-as-you-go at the
// standard per-minute rate (pricing::quote of whole seconds).
money::Micros charge_for_minutes(int minutes);

struct Cap {
  int minutes = 0;
  money::Micros hold = 0;  // 0 on subscription plans: no hold
};
// The effective cap: the request clamped to 60 and, on pay-as-you-go, to the
// whole minutes the available balance covers; none -> 402
// insufficient_funds. Subscription plans include realtime: 0 charged, no hold.
Cap effective_cap(int requested_minutes, plans::Tier tier, money::Micros available);

// Billed seconds of persisted audio: per started second, 0 for none.
int64_t billed_seconds(int64_t samples);
// What a session with `samples` persisted costs: per started second at the
// per-minute rate on pay-as-you-go, never more than `held`; 0 on subscriptions.
money::Micros charge(int64_t samples, plans::Tier tier, money::Micros held);
int64_t cap_samples(int cap_minutes);

// Ticket rules: valid for `ttl_seconds` from issue (kTicketTtlSeconds unless
// SCRIBE_REALTIME_TICKET_TTL_SECONDS shortens it for tests), redeemed once.
enum class TicketRefusal { Invalid, Expired, Used, Ended };
int close_code_of(TicketRefusal r);
std::string error_code_of(TicketRefusal r);  // the in-band error's code
int ticket_ttl_seconds(std::optional<int> setting);

// A live session is stale when neither a connection's heartbeat nor its
// start (or last resume) was seen within the window.
bool is_stale(TimePoint last_seen, TimePoint at, int stale_seconds);

// One session, folded from its events on the account stream.
struct Session {
  bool exists = false;
  std::string id;
  int64_t account_id = 0;
  std::optional<int64_t> key_id;
  int64_t transcription_id = 0;
  std::string language;
  int cap_minutes = 0;
  std::optional<std::string> hold;  // none on subscription plans
  money::Micros held = 0;
  plans::Tier tier = plans::Tier::Free;
  std::string status;  // live | ending | ended
  std::optional<std::string> end_reason;
  int64_t audio_samples = 0;  // persisted audio billed at the end
  money::Micros charge = 0;
};

// The realtime view of an account: its sessions and who may start one.
struct Access {
  std::set<int64_t> keys;        // keys granted realtime
  bool account_enabled = false;  // the first-party console's sign-in
  std::map<std::string, Session> sessions;
  int64_t version = 0;  // the account stream's version this was folded to
};
void apply(Access& a, const std::string& type, const Json& data);
Access fold(const std::vector<eventstore::RecordedEvent>& events);
// Live or ending sessions of the account (they count against the plan's
// concurrent-jobs cap).
int open_sessions(const Access& a);

// Events (account stream). Each returns nothing when there is nothing to do.
eventstore::NewEvent started(const Session& s, TimePoint at);
std::optional<eventstore::NewEvent> end_requested(const Session& s, const std::string& reason);
// The end: only a session not yet ended; `charge` is what the hold settles.
std::optional<eventstore::NewEvent> ended(const Session& s, const std::string& reason, int64_t samples,
                                          money::Micros charge, TimePoint at);
// Grants (admin): `key_id` nullopt is the account's own flag.
std::vector<eventstore::NewEvent> set_access(const Access& a, int64_t account_id, std::optional<int64_t> key_id,
                                             bool enabled);

// The WAV header of `samples` 16 kHz mono s16le samples (44 bytes).
std::string wav_header(int64_t samples);

}  // namespace scribe::realtime
