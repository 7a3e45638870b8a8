#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "eventstore/event.h"

// Webhooks: one registration per API key, the signed delivery format, the
// retry schedule and the transcription snapshot that deliveries carry. All
// pure; commands/webhook_commands.cpp, projections/webhook_outbox_projection.cpp
// and workers/webhook_dispatcher.cpp do the I/O.
namespace scribe::webhook {

// Event kinds of the spec, in catalogue order.
inline constexpr const char* kTranscriptionCompleted = "transcription.completed";
inline constexpr const char* kTranscriptionFailed = "transcription.failed";
inline constexpr const char* kClipCompleted = "clip.completed";
inline constexpr const char* kClipFailed = "clip.failed";
inline constexpr const char* kTest = "webhook.test";
const std::vector<std::string>& subscribable_kinds();

// The registration's `events`: absent means all four kinds; unknown names are
// dropped (spec); duplicates collapse; the result is in catalogue order.
// Throws Error::invalid("events", ...) when nothing known is left.
std::vector<std::string> normalize_events(const std::optional<std::vector<std::string>>& requested);
bool subscribes(const Json& events, const std::string& kind);

// The Webhook aggregate: one stream per API key.
std::string stream_id(int64_t key_id);

struct State {
  std::optional<int64_t> active_webhook_id;
  int64_t version = 0;
};
void apply(State& s, const std::string& type, const Json& data);
State fold(const std::vector<eventstore::RecordedEvent>& events);

// WebhookRegistered {account_id, key_id, webhook_id, url, events,
// replaced_webhook_id|null}: the new webhook replaces any active one.
eventstore::NewEvent registered(const State& s, int64_t account_id, int64_t key_id, int64_t webhook_id,
                                const std::string& url, const std::vector<std::string>& events);
// WebhookRevoked {account_id, key_id, webhook_id}; nullopt when none is active.
std::optional<eventstore::NewEvent> revoked(const State& s, int64_t account_id, int64_t key_id);
// WebhookTestRequested {account_id, key_id, webhook_id, message}; throws
// Error::not_found when no webhook is registered on the key.
eventstore::NewEvent test_requested(const State& s, int64_t account_id, int64_t key_id);

// Delivery ids and event ids derive from the event's global position, so a
// replayed outbox names every delivery the same way.
int64_t delivery_id(int64_t event_position, bool callback);
std::string event_id(int64_t event_position);

// The body: {"id","event","created","data"} (spec, Events).
std::string delivery_body(const std::string& event_id, const std::string& kind, int64_t created_unix, const Json& data);
// X-Service-Signature: "t=<unix>,v1=<hex HMAC-SHA256 over "<t>.<body>">",
// keyed by the whole signing secret (including its whsec_ prefix).
std::string signature_header(const std::string& secret, int64_t unix_seconds, const std::string& body);

// Retries. `delays` is the spec's 1 min, 5 min, 30 min, 3 h, 12 h unless an
// operator sets SCRIBE_WEBHOOK_RETRY_DELAYS (tests use seconds).
struct RetryPolicy {
  std::vector<std::chrono::seconds> delays;
  int max_attempts;
  static RetryPolicy spec();
  // Parses "60,300,1800" (seconds; blanks around a number are ignored);
  // nullopt when an item is not a number (empty ones included: "60,,300",
  // "60,") or there is none.
  static std::optional<RetryPolicy> parse(const std::string& delays_csv, int max_attempts);
};
// After attempt `attempts` (1-based) failed: when to try again, or nullopt
// when that was the last allowed attempt.
std::optional<std::chrono::seconds> next_delay(const RetryPolicy& p, int attempts);
bool is_success(long http_status);

// The transcription snapshot of the spec (id, status, stage, pipeline_code,
// language, detected_language, source, title, duration_seconds, charge_usd,
// error, created_at, processing_started_at, completed_at), evolved event by
// event. `recorded_at` is the event's time as ISO 8601 UTC with milliseconds.
// Redacted payloads (deleted transcriptions) are tolerated.
void evolve_snapshot(Json& snapshot, const std::string& type, const Json& data, const std::string& recorded_at);
// The event kind a transcription event triggers, if any.
std::optional<std::string> delivery_kind(const std::string& type);

}  // namespace scribe::webhook
